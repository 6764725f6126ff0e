"""The rules of each game, in pure Python: no Django, no I/O, so the server, the computer player and the tests share
them. Each game is a module with an engine (games/rules/base.py); this registry is how the platform finds it.

Adding a game: write its module with an `ENGINE`, and add that engine to `ENGINES` below.
"""

from typing import Any

from .base import Engine, IllegalAction, Outcome, Played
from .draughts import ENGINE as DRAUGHTS
from .fish import ENGINE as FISH
from .plakoto import ENGINE as PLAKOTO
from .tab import ENGINE as TAB

ENGINES: dict[str, Engine[Any, Any]] = {engine.kind: engine for engine in (TAB, DRAUGHTS, PLAKOTO, FISH)}


class UnknownGame(LookupError):
    """No engine is registered under this kind."""


def find_engine(kind: str) -> Engine[Any, Any]:
    """Return the engine of the game `kind` ("tab"), or raise UnknownGame."""
    try:
        return ENGINES[kind]
    except KeyError:
        raise UnknownGame(f"No game of kind {kind!r}") from None


def labels(kind: str, variant: str) -> tuple[str, str]:
    """Return a game's name and its variant's label, for people ("Tâb", "9 columns"); the stored words themselves
    for a game no engine is registered for any more."""
    try:
        engine = find_engine(kind)
    except UnknownGame:
        return kind, variant
    return engine.title, engine.variant_label(variant)


__all__ = ["ENGINES", "Engine", "IllegalAction", "Outcome", "Played", "UnknownGame", "find_engine", "labels"]
