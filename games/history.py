"""A game's log read back: the positions it went through and the result it proves.

The log (GameEvent rows, or the dicts of an export) is the truth about a game: the board is rebuilt by applying, with
the game's engine, the action that made each entry, and the winner follows from the last entries. The platform's own
entries (created, started, left, ran out of time, ended by an administrator) are read here; every other entry is the
engine's.
"""

import random
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .rules import IllegalAction, Outcome, Played, find_engine

PLATFORM_KINDS = frozenset({"create", "start", "leave", "timeout", "end", "draw-offer", "draw-cancel", "remove"})
# Entries that end a game without a move: who left or ran out of time loses; an administrator names the winner.
FORFEITS = ("leave", "timeout")


class LogError(ValueError):
    """A log that the rules cannot replay."""


def _seat_of(entry: Mapping[str, Any], seats: list[int]) -> int:
    try:
        return seats.index(entry["player"])
    except ValueError:
        raise LogError(f"entry {entry['seq']}: {entry['player']!r} is not a player of the game") from None


def replay(
    kind: str, options: Mapping[str, Any], seats: list[int], entries: Iterable[Mapping[str, Any]]
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
        elif state is not None and (entry["kind"] == "remove" or entry["kind"] not in PLATFORM_KINDS):
            try:
                if entry["kind"] == "remove":
                    if engine.remove(state, _seat_of(entry, seats)) is None:
                        raise IllegalAction(f"a player of {engine.title} is never removed from a game")
                else:
                    action = engine.logged_action(Played(entry["kind"], entry["data"]))
                    engine.apply(state, _seat_of(entry, seats), action, rng)
            except (IllegalAction, KeyError, TypeError) as error:
                raise LogError(f"entry {entry['seq']} ({entry['kind']}): {error}") from None
        if state is not None:
            yield entry, state


def forfeit_ranks(seats: int, loser: int) -> tuple[int, ...]:
    """Return the ranks of a game that `loser` forfeited: last place to them, first shared by the others (in a game
    for two, the opponent wins)."""
    return tuple(2 if seat == loser else 1 for seat in range(seats))


def end_data(seats: int, loser: int | None) -> dict[str, int | None]:
    """Return the log details of an administrator's end: the losing seat (None: no result), and in a game for two
    the winning one, as logs before seats were generic name it."""
    data: dict[str, int | None] = {"loser": loser}
    if seats == 2:
        data["winner"] = None if loser is None else 1 - loser
    return data


def final_outcome(
    kind: str, options: Mapping[str, Any], seats: list[int], entries: list[Mapping[str, Any]]
) -> Outcome | None:
    """Return how a finished game's log proves it ended (each seat's rank, and points where the game scores), or
    None when it ended with no result."""
    last_state = None
    for _, state in replay(kind, options, seats, entries):
        last_state = state
    if last_state is None:
        # Never started: it ended while waiting for players.
        return None
    last = entries[-1]
    if last["kind"] in FORFEITS:
        return Outcome(forfeit_ranks(len(seats), _seat_of(last, seats)), last["kind"])
    if last["kind"] == "draw-offer":
        # The last offer of a draw made every seat's stand: drawn by agreement.
        return Outcome.draw(len(seats), "agreed")
    if last["kind"] == "end":
        loser = last["data"].get("loser")
        if loser is None and last["data"].get("winner") is not None and len(seats) == 2:
            loser = 1 - last["data"]["winner"]
        return None if loser is None else Outcome(forfeit_ranks(len(seats), loser), "ended")
    outcome = find_engine(kind).outcome(last_state)
    if outcome is None and last["kind"] == "remove":
        # The last player still in was removed: nobody wins.
        return None
    if outcome is None:
        raise LogError(f"the log of a finished game ends with {last['kind']!r}, and the game goes on")
    return outcome
