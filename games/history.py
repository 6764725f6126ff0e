"""A game's log read back: the positions it went through and the result it proves.

The log (GameEvent rows, or the dicts of an export) is the truth about a game: the board is rebuilt by applying, with
the game's engine, the action that made each entry, and the winner follows from the last entries. The platform's own
entries (created, started, left, ran out of time, ended by an administrator) are read here; every other entry is the
engine's.
"""

import random
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .rules import IllegalAction, Played, find_engine

PLATFORM_KINDS = frozenset({"create", "start", "leave", "timeout", "end"})
# Entries that end a game without a move: who left or ran out of time loses; an administrator names the winner.
FORFEITS = ("leave", "timeout")


class LogError(ValueError):
    """A log that the rules cannot replay."""


def _seat_of(entry: Mapping[str, Any], seats: list[int | None]) -> int:
    try:
        return seats.index(entry["player"])
    except ValueError:
        raise LogError(f"entry {entry['seq']}: {entry['player']!r} is not a player of the game") from None


def replay(
    kind: str, options: Mapping[str, Any], seats: list[int | None], entries: Iterable[Mapping[str, Any]]
) -> Iterator[tuple[Mapping[str, Any], Any]]:
    """Yield each entry of a log ({seq, kind, player, data}) with the position right after it, from the start.
    `seats` holds the user id in each seat, seat 0 first."""
    engine = find_engine(kind)
    # Whatever chance decided was logged: a replay draws nothing (a fixed source keeps it repeatable all the same).
    rng = random.Random(0)
    state = None
    for entry in entries:
        if entry["kind"] == "start":
            state = engine.new(len(seats), options, rng)
        elif state is not None and entry["kind"] not in PLATFORM_KINDS:
            try:
                action = engine.logged_action(Played(entry["kind"], entry["data"]))
                engine.apply(state, _seat_of(entry, seats), action, rng)
            except (IllegalAction, KeyError, TypeError) as error:
                raise LogError(f"entry {entry['seq']} ({entry['kind']}): {error}") from None
        if state is not None:
            yield entry, state


def winner_seat(
    kind: str, options: Mapping[str, Any], seats: list[int | None], entries: list[Mapping[str, Any]]
) -> int | None:
    """Return the seat of the winner that a finished game's log proves, or None when no one won."""
    last_state = None
    for _, state in replay(kind, options, seats, entries):
        last_state = state
    if last_state is None:
        # Never started: it ended while waiting for an opponent.
        return None
    last = entries[-1]
    if last["kind"] in FORFEITS:
        return 1 - _seat_of(last, seats)
    if last["kind"] == "end":
        return last["data"].get("winner")
    outcome = find_engine(kind).outcome(last_state)
    if outcome is None:
        raise LogError(f"the log of a finished game ends with {last['kind']!r}, and the game goes on")
    return outcome.winner
