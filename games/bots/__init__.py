"""The computer player, for any game behind the engine interface (games/rules/base.py): it sees only what the interface
shows (legal actions, their random results and odds, outcomes, a heuristic), so every registered game gets it.

Levels: 1 plays at random; 2 greedily, one action ahead; 3 searches as far as its budget allows: expectimax where dice
or sticks decide (the engine gives the odds of each result), Monte Carlo tree search where nothing is left to chance.
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
    if len(actions) == 1 or level == RANDOM:
        return rng.choice(actions)
    if level == GREEDY:
        return _best(actions, [_greedy_value(engine, state, seat, action, rng) for action in actions], rng)
    budget = (budget or Budget()).start()
    if engine.chance:
        return _expectimax(engine, state, seat, actions, rng, budget)
    return _mcts(engine, state, seat, actions, rng, budget)


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


def _after(engine: Engine[Any, Any], state: Any, seat: int, action: Any, rng: random.Random) -> Any:
    after = engine.copy(state)
    engine.apply(after, seat, action, rng)
    return after


def _static(engine: Engine[Any, Any], state: Any, seat: int) -> float:
    outcome = engine.outcome(state)
    return _value_of(outcome, seat) if outcome is not None else engine.heuristic(state, seat)


def _greedy_value(engine: Engine[Any, Any], state: Any, seat: int, action: Any, rng: random.Random) -> float:
    return sum(
        p * _static(engine, _after(engine, state, seat, result, rng), seat)
        for p, result in _results(engine, state, seat, action)
    )


# --- Expectimax: where dice decide -------------------------------------------------------------------------------


def _expectimax(
    engine: Engine[Any, Any], state: Any, seat: int, actions: list[Any], rng: random.Random, budget: Budget
) -> Any:
    """Search deeper and deeper while the budget lasts; play the best action of the deepest search completed."""
    chosen = _best(actions, [_greedy_value(engine, state, seat, action, rng) for action in actions], rng)
    for depth in range(2, 64):
        try:
            values = [_chance_value(engine, state, seat, seat, action, depth - 1, rng, budget) for action in actions]
        except OutOfBudget:
            break
        chosen = _best(actions, values, rng)
        if max(abs(value) for value in values) >= 1.0:
            break  # forced either way: looking deeper changes nothing
    return chosen


def _chance_value(
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
        total += probability * _node_value(engine, _after(engine, state, actor, result, rng), me, depth, rng, budget)
    return total


def _node_value(engine: Engine[Any, Any], state: Any, me: int, depth: int, rng: random.Random, budget: Budget) -> float:
    outcome = engine.outcome(state)
    if outcome is not None:
        return _value_of(outcome, me)
    if depth <= 0:
        return engine.heuristic(state, me)
    actor = _on_turn(engine, state)
    values = [
        _chance_value(engine, state, me, actor, action, depth - 1, rng, budget)
        for action in engine.legal_actions(state, actor)
    ]
    # Every other seat plays against this one (with more than two, the cautious view).
    return max(values) if actor == me else min(values)


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
        value = _playout(engine, position, rng)  # by seat
        root.visits += 1
        for actor, visited in path:
            visited.visits += 1
            visited.total += value[actor]
    if not root.children:
        return rng.choice(actions)
    most = max(child.visits for _, child in root.children)
    return rng.choice([action for action, child in root.children if child.visits == most])


def _playout(engine: Engine[Any, Any], state: Any, rng: random.Random) -> list[float]:
    """Play at random to the end (or a while); return each seat's value of where it led."""
    for _ in range(PLAYOUT_LIMIT):
        if engine.outcome(state) is not None:
            break
        actor = _on_turn(engine, state)
        engine.apply(state, actor, rng.choice(engine.legal_actions(state, actor)), rng)
    outcome = engine.outcome(state)
    seats = range(engine.seats(state))
    if outcome is not None:
        return [_value_of(outcome, seat) for seat in seats]
    return [engine.heuristic(state, seat) for seat in seats]
