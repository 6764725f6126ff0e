"""What the lobby lists under each game: the matches that wait for players, who waits, and the link that joins.

A game's matches wait in its own terms (a Tâb player in a course group, a Fish tournament with seats free, a
Plakoto table with one seat taken), so each game's app registers the function that lists them (`register_seeks`);
the lobby only shows them.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Seek:
    who: str  # who waits, or the match's name ("alice", "tournament 7")
    what: str  # what they wait for ("group 8 · 9 columns")
    url: str  # the page that joins it
    action: str  # the link's words ("Play alice")
    since: datetime | None = None


# How many seeks a game shows at most.
SHOWN = 20

_seeks: dict[str, Callable[[], list[Seek]]] = {}


def register_seeks(kind: str, function: Callable[[], list[Seek]]) -> None:
    _seeks[kind] = function


def seeks_of(kind: str) -> list[Seek]:
    function = _seeks.get(kind)
    return [] if function is None else function()[:SHOWN]
