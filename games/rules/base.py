"""The interface between the platform and a game's rules: what every engine offers, whatever its game.

An engine is a small object (one per game, registered in `games.rules`) that works on the game's own state and
action types: it creates a position for some seats, lists a seat's legal actions, applies one, says whose turn it
is and how the game ended, and turns states and actions into JSON and back. Services, history and replay, the
computer player, the sweeper and the benchmarks reach a game's rules only through it, so a new game is a new module
behind the same interface, never a branch inside another. Nothing here knows of Django, a protocol or a clock.

Seats are numbered from 0 in the order the game gives them (Tâb: 0 is Blue, the initial player).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol


class IllegalAction(ValueError):
    """An action the rules refuse; `str(error)` is the message a player's client is shown."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended on the board: a rank for each seat (1 is first; equal ranks share a place) and
    the reason, in the game's words ("win", "draw", "no-move", …).

    Endings that are not the rules' business (a player left, ran out of time, a draw agreed on, an administrator's
    decision) are the platform's, and are recorded beside the outcome, not in it.
    """

    ranks: tuple[int, ...]
    reason: str
    # The points each seat scores in the game's rankings, in a game that scores its wins (Plakoto: 1 for a single,
    # 2 for a double); None: a victory is one point.
    points: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if not 2 <= len(self.ranks) <= 4 or min(self.ranks) != 1:
            raise ValueError(f"an outcome ranks 2 to 4 seats from 1: {self.ranks!r}")
        if self.points is not None and len(self.points) != len(self.ranks):
            raise ValueError(f"an outcome scores every seat it ranks: {self.points!r}")

    @classmethod
    def win(cls, seat: int, seats: int, reason: str = "win", points: int | None = None) -> Outcome:
        """Return the outcome where `seat` wins (scoring `points`, if the game scores) and every other seat shares
        second place."""
        scored = None if points is None else tuple(points if index == seat else 0 for index in range(seats))
        return cls(tuple(1 if index == seat else 2 for index in range(seats)), reason, scored)

    @classmethod
    def draw(cls, seats: int, reason: str = "draw") -> Outcome:
        """Return the outcome where every seat shares first place."""
        return cls((1,) * seats, reason)

    @classmethod
    def by_score(cls, scores: Sequence[float], reason: str = "score") -> Outcome:
        """Return the outcome ranking seats by score, highest first, equal scores sharing a place."""
        return cls(tuple(1 + sum(other > score for other in scores) for score in scores), reason)

    @property
    def winners(self) -> tuple[int, ...]:
        """Return the seats in first place."""
        return tuple(seat for seat, rank in enumerate(self.ranks) if rank == 1)

    @property
    def winner(self) -> int | None:
        """Return the one seat in first place, or None when several share it."""
        winners = self.winners
        return winners[0] if len(winners) == 1 else None

    @property
    def is_draw(self) -> bool:
        """Return whether every seat shares first place."""
        return len(self.winners) == len(self.ranks)


@dataclass(frozen=True, slots=True)
class Played:
    """What an applied action did, for the game's log: a kind in the game's words and its JSON details."""

    kind: str
    data: Mapping[str, Any]


class Engine[StateT, ActionT](Protocol):
    """The rules of one game, as the platform uses them."""

    kind: str  # the registry's key and the stored kind of a match: "tab"
    title: str  # the game's name, for people: "Tâb"
    min_seats: int
    max_seats: int
    chance: bool  # whether dice, sticks or the like decide part of the game (see `chances`)
    scored: bool  # whether its outcomes score points (`Outcome.points`): its rankings then count and order by them
    # What each kind of log entry the engine writes (`Played.kind`) means, for people: {"throw": "threw the sticks"}.
    action_labels: Mapping[str, str]

    def options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Return the game's options from `raw` with defaults filled in, or raise ValueError naming the bad one."""
        ...

    def variant(self, options: Mapping[str, Any]) -> str:
        """Return the short label of the options that make a different game (Tâb: the board size, "9"), or "" when
        every match of the game is alike: players are paired and rated within a variant."""
        ...

    def variant_label(self, variant: str) -> str:
        """Return `variant()`'s label for people ("9 columns"), or "" for the game's only variant."""
        ...

    def new(self, seats: int, options: Mapping[str, Any], rng: random.Random) -> StateT:
        """Return the starting position for `seats` players (`options` as `options()` returns them)."""
        ...

    def seats(self, state: StateT) -> int:
        """Return how many seats the game in `state` has."""
        ...

    def to_act(self, state: StateT) -> int | None:
        """Return the seat that must act now, or None once the game is over."""
        ...

    def automatic(self, state: StateT) -> ActionT | None:
        """Return the action the server makes by itself now for the seat on turn (Plakoto's roll of the dice that
        begins a turn), or None. The platform applies it, and logs it, as soon as a change leaves it due."""
        ...

    def legal_actions(self, state: StateT, seat: int) -> list[ActionT]:
        """Return every action `seat` may take now (none when it is not that seat's turn)."""
        ...

    def apply(self, state: StateT, seat: int, action: ActionT, rng: random.Random) -> Played:
        """Make `seat`'s action on `state` and return what it did; a random action (dice, sticks) draws from `rng`.
        Raise IllegalAction with the message for the client, leaving `state` unchanged, if the rules refuse it."""
        ...

    def chances(self, state: StateT, seat: int, action: ActionT) -> list[tuple[Fraction, ActionT]] | None:
        """Return the possible results of a random action as (probability, the action with its result fixed),
        or None if the action decides its result alone. Searches weigh the results; replays apply them."""
        ...

    def heuristic(self, state: StateT, seat: int) -> float:
        """Return a quick estimate, from -1 (lost) to 1 (won), of how well `seat` stands: what a search weighs the
        positions it cannot look past by."""
        ...

    def logged_action(self, played: Played) -> ActionT:
        """Return the action, its random result fixed, that made the log entry `played`: a replay applies it again.
        Raise IllegalAction if the entry is not one this engine writes."""
        ...

    def outcome(self, state: StateT) -> Outcome | None:
        """Return how the game ended on the board, or None while it goes on (or when it ended with every seat
        removed: `remove`)."""
        ...

    def remove(self, state: StateT, seat: int) -> Played | None:
        """Take `seat` out of a game that goes on without it and return what that did, for the log; None in a game
        that cannot go on without a seat (the platform then ends it). Fish removes a player who errs or runs out of
        time: its pieces leave the board, it is skipped from then on, ranks after every seat still in, and the turn
        passes on if it was its own. Once every seat is removed, nobody is on turn and there is no outcome."""
        ...

    def copy(self, state: StateT) -> StateT:
        """Return an independent copy of `state`."""
        ...

    def state_to_json(self, state: StateT) -> dict[str, Any]:
        """Return `state` as JSON-compatible data (what the platform stores), in containers of its own: what it
        returns must not change when the state changes afterwards (the platform keeps both, games/positions.py)."""
        ...

    def state_from_json(self, data: Mapping[str, Any]) -> StateT:
        """Rebuild a state from `state_to_json`'s output, or raise ValueError."""
        ...

    def action_to_json(self, action: ActionT) -> dict[str, Any]:
        """Return `action` as JSON-compatible data (what the move log stores)."""
        ...

    def action_from_json(self, data: Mapping[str, Any]) -> ActionT:
        """Rebuild an action from `action_to_json`'s output; raise IllegalAction if it is not one of this game's."""
        ...
