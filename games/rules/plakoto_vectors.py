"""Test vectors that pin the JavaScript rules engine (static/js/rules/plakoto.js) to games/rules/plakoto.py.

Positions come from random games (seeded, so that the file is the same on every run), each with its dice: the
vectors hold what the Python module says there, the allowed moves with the die each uses, and the state after one
of them; and, for the positions where a turn begins, the state after a roll (a pass, or a draw by deadlock).
"""

from __future__ import annotations

import json
import random
from typing import Any, Final

from .plakoto import State

POSITIONS: Final = 2_500
SAMPLE_RATE: Final = 0.35


def _plan(state: State) -> list[list[int]]:
    return [[origin, destination, die] for (origin, destination), die in sorted(state.plan().items())]


def generate(seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    moves: list[dict[str, Any]] = []
    rolls: list[dict[str, Any]] = []
    while len(moves) < POSITIONS:
        state = State.new()
        for _ in range(2000):
            if state.result is not None:
                break
            if state.roll_due:
                dice = (rng.randint(1, 6), rng.randint(1, 6))
                after = state.copy()
                # Every roll that makes a player pass, and a sample of the others.
                if not after.roll(dice) or rng.random() < SAMPLE_RATE / 4:
                    rolls.append({"state": state.to_json(), "dice": list(dice), "after": after.to_json()})
                state.roll(dice)
                continue
            plan = sorted(state.plan())
            origin, destination = rng.choice(plan)
            after = state.copy()
            after.move(origin, destination)
            # Every move that ends a game, and a sample of the others.
            if after.result is not None or rng.random() < SAMPLE_RATE:
                moves.append(
                    {
                        "state": state.to_json(),
                        "plan": _plan(state),
                        "move": [origin, destination],
                        "after": after.to_json(),
                    }
                )
            state.move(origin, destination)
    return {"version": 1, "moves": moves, "rolls": rolls}


def render(vectors: dict[str, Any]) -> bytes:
    return json.dumps(vectors, separators=(",", ":"), sort_keys=True).encode()


def summary(vectors: dict[str, Any]) -> dict[str, int]:
    moves = vectors["moves"]
    return {
        "positions": len(moves),
        "rolls": len(vectors["rolls"]),
        "passes": sum(1 for roll in vectors["rolls"] if roll["after"]["passes"] != roll["state"]["passes"]),
        "pins": sum(
            1
            for move in moves
            if any(len(stack) > 1 and len({p[0] for p in stack}) == 2 for stack in move["after"]["points"])
        ),
        "bearing off": sum(1 for move in moves if move["move"][1] in (0, 25)),
        "ends": sum(1 for move in moves if move["after"]["result"] is not None),
        "doubles": sum(
            1 for move in moves if move["state"]["dice"] and move["state"]["dice"][0] == move["state"]["dice"][1]
        ),
        # Positions at the start of a turn of two different dice where the moves use one die only.
        "one die of two": sum(
            1 for move in moves if len(move["state"]["dice_left"]) == 2 and len({die for *_, die in move["plan"]}) == 1
        ),
    }
