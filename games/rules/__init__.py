"""The rules of each game, in pure Python: no Django, no I/O, so the server, the CPU player and the tests share them.

Each game is a sibling module (`tab` today) whose state object follows `GameState`.
"""

from collections.abc import Mapping
from typing import Any, Protocol, Self


class GameState[MoveT](Protocol):
    """What the server and a CPU player need from the state of any game."""

    turn: str

    def legal_moves(self) -> list[MoveT]:
        """Return the moves the player on turn may make now."""
        ...

    def apply(self, move: MoveT) -> None:
        """Make a legal move, or raise the game's IllegalMove leaving the state unchanged."""
        ...

    def outcome(self) -> str | None:
        """Return the winner's color, or None while the game goes on."""
        ...

    def copy(self) -> Self:
        """Return an independent copy."""
        ...

    def to_json(self) -> dict[str, Any]:
        """Return the state as a JSON-compatible dict."""
        ...

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild a state from `to_json`'s output."""
        ...
