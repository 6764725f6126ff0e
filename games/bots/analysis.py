"""A finished game looked at again by the computer player: each position's chances, and the turns that cost most.

For every position of the log, each seat's chance of winning (a draw counts half) as the engine's search estimates it:
expectimax over the dice or sticks where they decide, minimax where nothing is left to chance, and for a game of more
than two (Fish) random playouts to the end. A turn is what a seat decides alone (games/bots: Plakoto's steps of one
roll, a Tâb move with the selection before it); where a seat could end its turn in several ways, what its choice cost:
its chance after the best turn found, less its chance after the turn it took. The three costliest turns are marked,
each with the better turn, written as the game's log writes actions, so that a replay shows it on the board.

The curve follows the game turn by turn: after each, the position it left as the search judges it. The search of
each turn stops at its share of the game's budget, in positions looked at and in seconds, so that the work a game
costs is bounded whatever its length; it goes one turn deeper while its share lasts. Nothing here knows of Django.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from games.history import PLATFORM_KINDS, replay
from games.rules import Engine, find_engine

from . import CANDIDATES, Budget, OutOfBudget, chance_actions, playout, position_value, turn_length, turn_paths

# The deepest search, in turns, of a position: a deeper one would rarely change what the curve shows.
MAX_DEPTH = {True: 3, False: 5}  # by whether chance decides part of the game
# Ends of a turn played out where playouts judge (the best by the heuristic): more would leave each too few.
PLAYED_OUT = 8
# Choices marked at most, and the least a choice must cost to be marked (in chance of winning).
MARKED = 3
LEAST_COST = 0.02


@dataclass(frozen=True)
class Mark:
    """A costly turn: its first and last log entries, its seat, the chance it had before and kept after, and the
    better turn, as the log writes actions ([{"kind": …, "data": …}, …])."""

    seq: int
    last: int
    seat: int
    before: float
    after: float
    better: list[dict[str, Any]]

    @property
    def cost(self) -> float:
        return self.before - self.after


@dataclass
class Review:
    """The analysis of one game: each position's chances (by the entry that led to it, None for the start), the
    marked choices, and what it cost to make."""

    chances: list[tuple[int | None, list[float]]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    positions: int = 0  # positions looked at, in all
    depths: list[int] = field(default_factory=list)  # how deep each position was searched, in turns

    def to_json(self) -> dict[str, Any]:
        return {
            "chances": [{"seq": seq, "seats": [round(chance, 4) for chance in seats]} for seq, seats in self.chances],
            "marks": [
                {
                    "seq": mark.seq,
                    "last": mark.last,
                    "seat": mark.seat,
                    "before": round(mark.before, 4),
                    "after": round(mark.after, 4),
                    "better": mark.better,
                }
                for mark in self.marks
            ],
            "positions": self.positions,
            "depth": max(self.depths, default=0),
        }


def review(
    kind: str,
    options: Mapping[str, Any],
    seats: list[int],
    entries: Iterable[Mapping[str, Any]],
    positions: int = 200_000,
    seconds: float = math.inf,
    seed: int = 0,
) -> Review:
    """Return the analysis of a game from its log ({seq, kind, player, data}; `seats` holds the user id in each seat),
    looking at about `positions` positions in all, for `seconds` at most (each turn's share of both; a turn looked at
    one turn deep always is)."""
    engine = find_engine(kind)
    rng = random.Random(seed)
    line = [(entry, engine.copy(state)) for entry, state in replay(kind, options, seats, entries)]
    chooses = [_chooser(engine, state) for _, state in line]
    # A turn begins where a seat has a choice that it did not have a moment before (within a turn, a selection or
    # the steps of one roll follow each other), or, in a game whose turns are one action, after each action.
    keys = [_key(engine, state) for _, state in line]
    single = turn_length(engine) == 1
    starts = [
        index
        for index, actor in enumerate(chooses)
        if actor is not None
        and (
            index == 0
            or chooses[index - 1] != actor
            or _after_platform(line, index)
            or (single and keys[index] != keys[index - 1])
        )
    ]
    result = Review()
    share = Budget(seconds=seconds / max(1, len(starts)), positions=max(1, positions // max(1, len(starts))))
    # The curve shows each turn's end as the search judges the position it left, the same whoever moved (the best a
    # player could make of a turn is the mover's hope, not the position's worth): `ended`. A turn that did not end
    # on the board (left, timed out) leaves its start's value (`began`), as does the first before any has ended.
    began: dict[int, list[float]] = {}
    ended: dict[int, list[float]] = {}
    for index in starts:
        began[index] = _turn(engine, line, chooses, index, seats, share, rng, result, ended)
    last = began[starts[0]] if starts else None
    for index, (entry, state) in enumerate(line):
        last = ended.get(index, last)
        outcome = engine.outcome(state)
        if outcome is not None:
            winners = outcome.winners
            last = [1 / len(winners) if seat in winners else 0.0 for seat in range(engine.seats(state))]
        if last is not None:
            result.chances.append((None if entry["kind"] == "start" else entry["seq"], last))
    # The costliest choices, the most costly first.
    result.marks = sorted((mark for mark in result.marks if mark.cost >= LEAST_COST), key=lambda mark: -mark.cost)[
        :MARKED
    ]
    return result


def _chooser(engine: Engine[Any, Any], state: Any) -> int | None:
    """Return the seat that chooses now among actions that chance has no part in, or None (the game is over, or a
    throw is due)."""
    if engine.outcome(state) is not None:
        return None
    actor = engine.to_act(state)
    if actor is None:
        return None
    actions = engine.legal_actions(state, actor)
    return actor if actions and not chance_actions(engine, state, actor, actions) else None


def _after_platform(line: list[tuple[Mapping[str, Any], Any]], index: int) -> bool:
    """Return whether the entry that led to `line[index]` was the platform's (a new start, as after a removal)."""
    return line[index][0]["kind"] in PLATFORM_KINDS


def _key(engine: Engine[Any, Any], state: Any) -> str:
    return repr(engine.state_to_json(state))


def _turn(
    engine: Engine[Any, Any],
    line: list[tuple[Mapping[str, Any], Any]],
    chooses: list[int | None],
    index: int,
    seats: list[int],
    share: Budget,
    rng: random.Random,
    result: Review,
    ended: dict[int, list[float]],
) -> list[float]:
    """Look at the turn that begins at `line[index]`: return each seat's chance there; if the turn ended on the board,
    note in `ended` the chances in the position it left, by its index in `line`, and mark what it cost."""
    state = line[index][1]
    actor = chooses[index]
    assert actor is not None
    count = engine.seats(state)
    first = Budget(seconds=math.inf).start()
    paths = turn_paths(engine, state, actor, rng, first)
    result.positions += first.used
    keys = [_key(engine, end) for _, end in paths]
    taken = _taken(engine, line, chooses, index, seats, actor)
    played = keys.index(taken[1]) if taken is not None and taken[1] in keys else None
    budget = Budget(seconds=share.seconds, positions=share.positions).start()
    if engine.max_seats > 2:
        worth = _playouts(engine, [end for _, end in paths], actor, played, rng, budget)
        result.depths.append(0)
    else:
        found = _searched(engine, [end for _, end in paths], actor, played, rng, budget, result)
        worth = [[(value + 1) / 2 if seat == actor else (1 - value) / 2 for seat in range(count)] for value in found]
    result.positions += budget.used
    best = max(range(len(paths)), key=lambda at: worth[at][actor])
    chances = worth[best]
    if played is not None and taken is not None:
        ended[taken[0][2]] = worth[played]
    if played is not None and played != best and len(paths) > 1 and taken is not None:
        better, position = [], engine.copy(state)
        for action in paths[best][0]:
            done = engine.apply(position, actor, action, rng)
            better.append({"kind": done.kind, "data": dict(done.data)})
        first_seq, last_seq, _ = taken[0]
        result.marks.append(Mark(first_seq, last_seq, actor, chances[actor], worth[played][actor], better))
    return chances


def _taken(
    engine: Engine[Any, Any],
    line: list[tuple[Mapping[str, Any], Any]],
    chooses: list[int | None],
    index: int,
    seats: list[int],
    actor: int,
) -> tuple[tuple[int, int, int], str] | None:
    """Return the log entries (first and last seq) of the turn `actor` took from `line[index]`, the index in `line`
    of the position it ended in, and that position's key; None if it did not end on the board (the player left or
    ran out of time)."""
    first = None
    for later in range(index + 1, len(line)):
        entry = line[later][0]
        if entry["kind"] in PLATFORM_KINDS or entry.get("player") != seats[actor]:
            return None
        first = entry["seq"] if first is None else first
        if chooses[later] != actor or turn_length(engine) == 1:
            return (first, entry["seq"], later), _key(engine, line[later][1])
    return None


def _searched(
    engine: Engine[Any, Any],
    ends: list[Any],
    actor: int,
    played: int | None,
    rng: random.Random,
    budget: Budget,
    result: Review,
) -> list[float]:
    """Return the value of each end of a turn to `actor`, from the deepest search its budget allowed (the turn
    itself at least: the heuristic of each end). Deeper, the best ends and the one played are searched."""
    values = [position_value(engine, end, actor, 0, rng, budget) for end in ends]
    depth = 1
    for deeper in range(2, MAX_DEPTH[engine.chance] + 1):
        ranked = sorted(range(len(ends)), key=lambda at: -values[at])
        kept = set(ranked[:CANDIDATES]) | ({played} if played is not None else set())
        try:
            searched = {at: position_value(engine, ends[at], actor, deeper - 1, rng, budget) for at in kept}
        except OutOfBudget:
            break
        values = [searched.get(at, -1.0) for at in range(len(ends))]
        depth = deeper
    result.depths.append(depth)
    return values


def _playouts(
    engine: Engine[Any, Any], ends: list[Any], actor: int, played: int | None, rng: random.Random, budget: Budget
) -> list[list[float]]:
    """Return, for each end of a turn, each seat's share of the wins in random playouts from it (at least two
    playouts an end; more while the budget lasts). Only the ends the heuristic ranks best, and the one played, are
    played out; the others count for nothing."""
    count = engine.seats(ends[0])
    ranked = sorted(range(len(ends)), key=lambda at: -engine.heuristic(ends[at], actor))
    kept = sorted(set(ranked[:PLAYED_OUT]) | ({played} if played is not None else set()))
    totals = [[0.0] * count for _ in ends]
    rounds = 0
    while rounds < 2 or budget.spend():
        for at in kept:
            values = playout(engine, engine.copy(ends[at]), rng, budget)
            # First place, shared among the seats that end level there.
            winners = [seat for seat in range(count) if values[seat] >= max(values) - 1e-9]
            for seat in winners:
                totals[at][seat] += 1 / len(winners)
        rounds += 1
    return [[total / rounds for total in each] for each in totals]
