"""The course's update message read back into Tâb's rules state: what a client of the API knows of a game. Pure Python
(no Django), so that the tests' and the benchmark's clients use this one reading of it; the browser's client has its
JavaScript twin (static/js/games.js)."""

from typing import Any

from games.rules import tab


def state_of(message: dict[str, Any]) -> tab.State:
    """Rebuild the rules state from an update message."""
    pieces = [tab.Piece.from_json(piece) if piece else None for piece in message["pieces"]]
    return tab.State(
        size=len(pieces) // 4,
        pieces=pieces,
        turn=message["players"][message["turn"]],
        dice=tab.Throw.from_json(message["dice"]) if message["dice"] else None,
        step=message["step"],
        cell=message.get("cell"),
        selected=message.get("selected"),
    )
