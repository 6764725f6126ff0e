"""A game's log read back: the positions it went through and the result it proves.

The log (GameEvent rows, or the dicts of an export) is the truth about a game: the board is rebuilt by applying
each throw, selection, move and pass with the rules, and the winner follows from the last entries.
"""

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .rules import tab

# Entries that end a game without a move: who left or ran out of time loses; an administrator names the winner.
FORFEITS = ("leave", "timeout")


class LogError(ValueError):
    """A log that the rules cannot replay."""


def _color_of(entry: Mapping[str, Any], players: Mapping[int, str]) -> str:
    try:
        return players[entry["player"]]
    except KeyError:
        raise LogError(f"entry {entry['seq']}: {entry['player']!r} is not a player of the game") from None


def replay(size: int, entries: Iterable[Mapping[str, Any]]) -> Iterator[tuple[Mapping[str, Any], tab.State]]:
    """Yield each entry of a log ({seq, kind, data}) with the position right after it, from the start."""
    state: tab.State | None = None
    for entry in entries:
        kind, data = entry["kind"], entry["data"]
        if kind == "start":
            state = tab.State.new(size)
        elif state is not None:
            try:
                if kind == "throw":
                    state.throw(tab.Throw(tuple(bool(stick) for stick in data["sticks"])))
                elif kind in ("select", "deselect"):
                    state.select(data["cell"])
                elif kind == "move":
                    state.apply(tab.Move(data["from"], data["to"], bool(data["captures"])))
                elif kind == "pass":
                    state.pass_turn()
            except (tab.IllegalMove, KeyError, TypeError, ValueError) as error:
                raise LogError(f"entry {entry['seq']} ({kind}): {error}") from None
        if state is not None:
            yield entry, state


def winner_color(size: int, entries: list[Mapping[str, Any]], players: Mapping[int, str]) -> str | None:
    """Return the colour of the winner that a finished game's log proves, or None when no one won.

    `players` maps each player's user id to their colour; entries carry `player` (a user id or None).
    """
    last_state = None
    for _, state in replay(size, entries):
        last_state = state
    if last_state is None:
        # Never started: it ended while waiting for an opponent.
        return None
    last = entries[-1]
    if last["kind"] == "move":
        return last_state.winner
    if last["kind"] in FORFEITS:
        return tab.opponent(_color_of(last, players))
    if last["kind"] == "end":
        return last["data"].get("winner")
    raise LogError(f"the log of a finished game ends with {last['kind']!r}")
