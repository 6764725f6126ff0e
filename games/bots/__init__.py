"""The computer player, for any game behind the engine interface (games/rules/base.py): it sees only what the interface
shows (legal actions, their random results and odds, outcomes, a heuristic), so every registered game gets it.

Levels: 1 plays at random; 2 greedily, the best position its own turn can reach (and, where nothing is left to
chance, the others' best answers to it); 3 searches turn after turn as far as its budget allows: expectimax where
dice or sticks decide (the engine gives the odds of each result), minimax with alpha-beta pruning in a game for two
where nothing is left to chance, Monte Carlo tree search for more players.
A search stops at its budget, in time and in positions looked at, whichever comes first; tests and benchmarks give
positions only, so that their results do not depend on the machine's speed.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

from games.rules import Engine, Outcome

RANDOM, GREEDY, SEARCH = 1, 2, 3
LEVELS = {RANDOM: "random", GREEDY: "greedy", SEARCH: "search"}
# A game offers only levels that truly differ (each measurably stronger than the one below: BENCHMARKS.md). In
# Plakoto the search, two turns deep within its second, wins no more than greedy play does: it offers two levels,
# and a player of level 3 already seated there plays as level 2.
GAME_LEVELS = {"plakoto": (RANDOM, GREEDY)}


def levels_of(kind: str) -> tuple[int, ...]:
    """Return the levels a game offers, easiest first."""
    return GAME_LEVELS.get(kind, tuple(LEVELS))


def is_offered(kind: str, level: object) -> bool:
    """Return whether a client's `level` (any JSON value) names a level the game offers."""
    return not isinstance(level, bool) and level in levels_of(kind)


def offered_text(kind: str) -> str:
    """Return the levels a game offers as a refusal names them: "1, 2, 3"."""
    return ", ".join(map(str, levels_of(kind)))


# The course groups where a Tâb join is practice against the computer: group 900 + its level.
PRACTICE_GROUPS = {900 + level: level for level in LEVELS}


@dataclass
class Budget:
    """How long a search may think: seconds of the clock and positions looked at, whichever runs out first."""

    seconds: float = 1.0
    positions: int = 1_000_000
    clock: Any = time.monotonic
    started: float = field(default=0.0, init=False)
    used: int = field(default=0, init=False)

    def start(self) -> Budget:
        self.started, self.used = self.clock(), 0
        return self

    def spend(self) -> bool:
        """Count one position; return whether the budget allows it."""
        self.used += 1
        if self.used > self.positions:
            return False
        return (self.used & 63) != 0 or self.clock() - self.started < self.seconds


class OutOfBudget(Exception):
    pass


def choose(
    engine: Engine[Any, Any], state: Any, seat: int, level: int, rng: random.Random, budget: Budget | None = None
) -> Any:
    """Return the action `seat` takes in `state` at `level` (one of `engine.legal_actions(state, seat)`)."""
    actions = engine.legal_actions(state, seat)
    if not actions:
        raise ValueError("the seat has no action to take")
    level = min(level, levels_of(engine.kind)[-1])
    if len(actions) == 1 or level == RANDOM:
        return rng.choice(actions)
    budget = (budget or Budget()).start()
    if level == GREEDY:
        depth = GREEDY_TURNS[engine.chance]
        return _best(actions, action_values(engine, state, seat, actions, depth, rng, Budget(math.inf).start()), rng)
    if engine.max_seats > 2:
        return _mcts(engine, state, seat, actions, rng, budget)
    return _deepening(engine, state, seat, actions, rng, budget)


def _best(actions: list[Any], values: list[float], rng: random.Random) -> Any:
    top = max(values)
    return rng.choice([action for action, value in zip(actions, values, strict=True) if value >= top - 1e-9])


def _value_of(outcome: Outcome, seat: int) -> float:
    """A finished game, from `seat`'s side: 1 won alone, -1 lost, between for shared places."""
    if outcome.is_draw:
        return 0.0
    rank, places = outcome.ranks[seat], len(outcome.ranks)
    if rank == 1:
        return 1.0 if outcome.winner == seat else 0.5
    return -1.0 + (places - rank) / places


def _results(engine: Engine[Any, Any], state: Any, seat: int, action: Any) -> list[tuple[float, Any]]:
    chances = engine.chances(state, seat, action)
    return [(1.0, action)] if chances is None else [(float(p), result) for p, result in chances]


def after(engine: Engine[Any, Any], state: Any, seat: int, action: Any, rng: random.Random) -> Any:
    after = engine.copy(state)
    engine.apply(after, seat, action, rng)
    return after


# --- Search by turns: what a player can make of its turn, then the others' best answers --------------------------
#
# A turn is what one seat decides alone: the actions it takes one after another until another seat is on turn or
# chance has its say (Plakoto: the two to four steps a roll allows; Tâb: one move; draughts: one move, jumps and
# all). Searches count their depth in turns, so that a game whose turn is several actions is not seen shallower
# than one whose turn is one. Chance (dice, sticks) is weighed by its odds; the other seats answer with what is
# worst for the searching one, which for two is exact (minimax, with alpha-beta pruning).

# How far the greedy level looks, in turns: its own where dice decide what follows; where nothing is left to chance,
# the answers to it too (what a move leaves hanging), which a game like draughts, where taking is compulsory, needs.
GREEDY_TURNS = {True: 1, False: 2}

# Candidate turns kept for a search deeper than one turn, the best by the shallower search: dice multiply every
# turn looked at by their results, and a full width would leave no budget for depth.
CANDIDATES = 6


def turn_length(engine: Engine[Any, Any]) -> int:
    """Return the most actions a turn has: where dice decide, the steps one roll allows (four, of a double);
    elsewhere one (a seat that acts again, when the others cannot move, begins another turn)."""
    return 4 if engine.chance else 1


def chance_actions(engine: Engine[Any, Any], state: Any, seat: int, actions: list[Any]) -> bool:
    """Return whether `actions` (a seat's, all of them) are chance's to decide: a throw of dice or sticks."""
    return engine.chances(state, seat, actions[0]) is not None


def turn_paths(
    engine: Engine[Any, Any], state: Any, seat: int, rng: random.Random, budget: Budget
) -> list[tuple[list[Any], Any]]:
    """Return the positions where `seat`'s turn, begun in `state`, can end (`state` itself when it already has), each
    with the actions that lead there; the same position reached in another order is counted once."""
    ends: list[tuple[list[Any], Any]] = []
    stack: list[tuple[list[Any], Any]] = [([], state)]
    seen = set()
    longest = turn_length(engine)
    while stack:
        path, position = stack.pop()
        if len(path) < longest and engine.outcome(position) is None and engine.to_act(position) == seat:
            actions = engine.legal_actions(position, seat)
            if actions and not chance_actions(engine, position, seat, actions):
                for action in actions:
                    if not budget.spend():
                        raise OutOfBudget
                    following = after(engine, position, seat, action, rng)
                    if engine.to_act(following) == seat and engine.outcome(following) is None:
                        # The turn goes on: orders of the same steps meet again.
                        key = repr(engine.state_to_json(following))
                        if key in seen:
                            continue
                        seen.add(key)
                    stack.append(([*path, action], following))
                continue
        ends.append((path, position))
    return ends


def _turn_ends(engine: Engine[Any, Any], state: Any, seat: int, rng: random.Random, budget: Budget) -> list[Any]:
    return [end for _, end in turn_paths(engine, state, seat, rng, budget)]


def position_value(
    engine: Engine[Any, Any],
    state: Any,
    me: int,
    depth: int,
    rng: random.Random,
    budget: Budget,
    alpha: float = -1.0,
    beta: float = 1.0,
    thrown: bool = False,
) -> float:
    """Return how `state` stands for `me` (-1 lost, 1 won), searched `depth` turns deep, the heuristic beyond. Within
    (alpha, beta) the value is exact; outside, only its side of the window is. `thrown`: chance had the last say
    (a throw that leads straight to another counts as a turn, or sticks thrown again and again would never end)."""
    outcome = engine.outcome(state)
    if outcome is not None:
        return _value_of(outcome, me)
    if depth <= 0:
        return engine.heuristic(state, me)
    actor = _on_turn(engine, state)
    actions = engine.legal_actions(state, actor)
    if not actions:
        return engine.heuristic(state, me)
    mine = actor == me
    if chance_actions(engine, state, actor, actions):
        # A throw begins the turn: weigh what each result leads to by its odds.
        if thrown:
            depth -= 1
            if depth <= 0:
                return engine.heuristic(state, me)
        values = [_expected(engine, state, me, actor, action, depth, rng, budget) for action in actions]
        return max(values) if mine else min(values)
    best = -math.inf if mine else math.inf
    for end in _turn_ends(engine, state, actor, rng, budget):
        value = position_value(engine, end, me, depth - 1, rng, budget, alpha, beta)
        if mine:
            best, alpha = max(best, value), max(alpha, value)
        else:
            best, beta = min(best, value), min(beta, value)
        if alpha >= beta:
            break
    return best


def _expected(
    engine: Engine[Any, Any],
    state: Any,
    me: int,
    actor: int,
    action: Any,
    depth: int,
    rng: random.Random,
    budget: Budget,
) -> float:
    total = 0.0
    for probability, result in _results(engine, state, actor, action):
        if not budget.spend():
            raise OutOfBudget
        following = after(engine, state, actor, result, rng)
        total += probability * position_value(engine, following, me, depth, rng, budget, thrown=True)
    # An average of values in [-1, 1] stays there, but its float sum may not: Plakoto's 21 rolls, each a win, add up to
    # 1.0000000000000002, and an analysis's chance (value + 1) / 2 then passed 1.
    return max(-1.0, min(1.0, total))


def action_values(
    engine: Engine[Any, Any],
    state: Any,
    seat: int,
    actions: list[Any],
    depth: int,
    rng: random.Random,
    budget: Budget,
    candidates: int | None = None,
) -> list[float]:
    """Return what each of `seat`'s `actions` is worth to it, searched `depth` turns deep (the turn it begins
    included). With `candidates`, only that many of the turn's best ends one turn deep are searched deeper, with the
    best end of each action. Raise OutOfBudget when the budget runs out first."""
    if chance_actions(engine, state, seat, actions):
        return [_expected(engine, state, seat, seat, action, depth, rng, budget) for action in actions]
    ends = [_turn_ends(engine, after(engine, state, seat, action, rng), seat, rng, budget) for action in actions]
    if candidates is not None and depth > 1:
        # Deeper, only the turn's best ends one turn deep, and each action's own best: every action keeps a value.
        shallow = [[(position_value(engine, end, seat, 0, rng, budget), id(end)) for end in each] for each in ends]
        kept = {key for _, key in sorted((pair for each in shallow for pair in each), reverse=True)[:candidates]}
        kept.update(max(each)[1] for each in shallow if each)
        ends = [[end for end in each if id(end) in kept] for each in ends]
    # Each action's exact value (a full window at the root): ties are told apart by nothing but chance.
    return [
        max((position_value(engine, end, seat, depth - 1, rng, budget) for end in each), default=-1.0) for each in ends
    ]


def _deepening(
    engine: Engine[Any, Any], state: Any, seat: int, actions: list[Any], rng: random.Random, budget: Budget
) -> Any:
    """Search one turn deeper each time while the budget lasts; play the best action of the deepest search done."""
    chosen = _best(actions, action_values(engine, state, seat, actions, 1, rng, Budget(math.inf).start()), rng)
    for depth in range(2, 64):
        try:
            values = action_values(
                engine, state, seat, actions, depth, rng, budget, CANDIDATES if engine.chance else None
            )
        except OutOfBudget:
            break
        chosen = _best(actions, values, rng)
        if max(values) >= 1.0 or (engine.chance and depth >= 3):
            break  # a forced win; or dice three turns out, which a deeper look would only blur
    return chosen


def _on_turn(engine: Engine[Any, Any], state: Any) -> int:
    """Return the seat on turn in a game that goes on."""
    actor = engine.to_act(state)
    assert actor is not None, "a game that goes on has a seat on turn"
    return actor


# --- Monte Carlo tree search: where nothing is left to chance ----------------------------------------------------

EXPLORATION = 1.4
PLAYOUT_LIMIT = 400  # actions of a random playout before it is judged by the heuristic


class _Node:
    __slots__ = ("actor", "children", "untried", "visits", "total")

    def __init__(self, engine: Engine[Any, Any], state: Any):
        over = engine.outcome(state) is not None
        self.actor = 0 if over else _on_turn(engine, state)  # nobody acts in a finished game: it has no child
        self.untried = [] if over else list(engine.legal_actions(state, self.actor))
        self.children: list[tuple[Any, _Node]] = []
        self.visits = 0
        self.total = 0.0  # summed values, from the side of the seat that chose the action leading here


def _mcts(
    engine: Engine[Any, Any], state: Any, seat: int, actions: list[Any], rng: random.Random, budget: Budget
) -> Any:
    root = _Node(engine, state)
    rng.shuffle(root.untried)
    while budget.spend():
        node, position, path = root, engine.copy(state), []
        # Down the tree by the upper confidence bound, then one new child.
        while not node.untried and node.children:
            parent = node
            action, node = max(
                node.children,
                key=lambda pair: (
                    pair[1].total / pair[1].visits + EXPLORATION * math.sqrt(math.log(parent.visits) / pair[1].visits)
                ),
            )
            engine.apply(position, parent.actor, action, rng)
            path.append((parent.actor, node))
        if node.untried:
            action = node.untried.pop()
            actor = node.actor
            engine.apply(position, actor, action, rng)
            child = _Node(engine, position)
            node.children.append((action, child))
            path.append((actor, child))
        value = playout(engine, position, rng)  # by seat
        root.visits += 1
        for actor, visited in path:
            visited.visits += 1
            visited.total += value[actor]
    if not root.children:
        return rng.choice(actions)
    most = max(child.visits for _, child in root.children)
    return rng.choice([action for action, child in root.children if child.visits == most])


def playout(engine: Engine[Any, Any], state: Any, rng: random.Random, budget: Budget | None = None) -> list[float]:
    """Play at random to the end (or a while); return each seat's value of where it led. Each action counts as a
    position looked at in `budget`, if given (it never stops a playout)."""
    for _ in range(PLAYOUT_LIMIT):
        if engine.outcome(state) is not None:
            break
        actor = _on_turn(engine, state)
        engine.apply(state, actor, rng.choice(engine.legal_actions(state, actor)), rng)
        if budget is not None:
            budget.used += 1
    outcome = engine.outcome(state)
    seats = range(engine.seats(state))
    if outcome is not None:
        return [_value_of(outcome, seat) for seat in seats]
    return [engine.heuristic(state, seat) for seat in seats]
