"""A game of the tests' own, for 2 to 4 seats, to show that the platform takes any engine (games/rules/base.py):
registered, it is joined, played, ended with a rank per seat, ranked, rated, replayed and listed, and nothing of the
platform names it.

Take-away: a pile of tokens; on their turn a seat takes one or two; when the pile is empty, most tokens ranks first
(equal counts share a place).
"""

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from games.rules import IllegalAction, Outcome, Played


@dataclass
class Pile:
    left: int
    taken: list[int] = field(default_factory=list)
    turn: int = 0


class TakeAwayEngine:
    kind = "takeaway"
    title = "Take-away"
    min_seats = 2
    scored = False
    max_seats = 4
    chance = False
    action_labels: Mapping[str, str] = {"take": "took tokens"}

    def options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        pile = raw.get("pile", 7)
        if not isinstance(pile, int) or not 1 <= pile <= 99:
            raise ValueError(f"invalid pile {pile!r}")
        return {"pile": pile}

    def variant(self, options: Mapping[str, Any]) -> str:
        return str(self.options(options)["pile"])

    def variant_label(self, variant: str) -> str:
        return f"a pile of {variant}"

    def new(self, seats: int, options: Mapping[str, Any], rng: random.Random) -> Pile:
        return Pile(self.options(options)["pile"], [0] * seats)

    def seats(self, state: Pile) -> int:
        return len(state.taken)

    def to_act(self, state: Pile) -> int | None:
        return state.turn if state.left else None

    def automatic(self, state: Pile) -> int | None:
        return None

    def legal_actions(self, state: Pile, seat: int) -> list[int]:
        return [n for n in (1, 2) if n <= state.left] if seat == self.to_act(state) else []

    def apply(self, state: Pile, seat: int, action: int, rng: random.Random) -> Played:
        if seat != self.to_act(state):
            raise IllegalAction("Not your turn")
        if action not in self.legal_actions(state, seat):
            raise IllegalAction(f"Cannot take {action}")
        state.left -= action
        state.taken[seat] += action
        state.turn = (state.turn + 1) % len(state.taken)
        return Played("take", {"tokens": action})

    def chances(self, state: Pile, seat: int, action: int) -> list[tuple[Fraction, int]] | None:
        return None

    def heuristic(self, state: Pile, seat: int) -> float:
        return 0.0

    def logged_action(self, played: Played) -> int:
        if played.kind != "take":
            raise IllegalAction(f"not an entry of take-away: {played.kind}")
        return int(played.data["tokens"])

    def remove(self, state: Pile, seat: int) -> Played | None:
        return None

    def outcome(self, state: Pile) -> Outcome | None:
        return None if state.left else Outcome.by_score(state.taken)

    def copy(self, state: Pile) -> Pile:
        return Pile(state.left, list(state.taken), state.turn)

    def state_to_json(self, state: Pile) -> dict[str, Any]:
        return {"left": state.left, "taken": state.taken, "turn": state.turn}

    def state_from_json(self, data: Mapping[str, Any]) -> Pile:
        return Pile(data["left"], list(data["taken"]), data["turn"])

    def action_to_json(self, action: int) -> dict[str, Any]:
        return {"tokens": action}

    def action_from_json(self, data: Mapping[str, Any]) -> int:
        return int(data["tokens"])


ENGINE = TakeAwayEngine()
