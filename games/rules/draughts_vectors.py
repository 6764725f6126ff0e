"""Test vectors that pin the JavaScript rules engine (static/js/rules/draughts.js) to games/rules/draughts.py.

Positions come from random games (seeded, so that the file is the same on every run) and from positions built to
hold kings, long captures and crownings. For each, the vectors hold what the Python module says: the side to move,
every legal move in its order (its squares, what it captures, whether it crowns), the board after it, and the
winner if the game is over. Refused sequences complete them, with the exact message.
"""

from __future__ import annotations

import json
import random
from typing import Any, Final

from .draughts import BLACK, WHITE, IllegalMove, State, is_dark, square_name

POSITIONS: Final = 3_000
# Random games played to make positions: a position is kept at this rate.
SAMPLE_RATE: Final = 0.3
# Crowded positions of random pieces (kings among them), beside the games' positions.
RANDOM_POSITIONS: Final = 600
REFUSALS_PER_POSITION: Final = 2


def _move_vector(state: State, move: Any) -> dict[str, Any]:
    after = state.copy()
    after.apply(move)
    return {
        "path": " ".join(move.names),
        "captured": " ".join(square_name(square) for square in move.captured),
        "crowned": move.crowned,
        "after": after.text,
    }


def _position_vector(state: State, rng: random.Random) -> dict[str, Any]:
    moves = state.legal_moves()
    vector: dict[str, Any] = {
        "board": state.text,
        "turn": state.turn,
        "moves": [_move_vector(state, move) for move in moves],
        "winner": state.winner(),
    }
    refusals = []
    dark = [square for square in range(64) if is_dark(square)]
    for _ in range(REFUSALS_PER_POSITION):
        path = tuple(rng.choice(dark) for _ in range(rng.choice((1, 2, 2, 3))))
        if moves and rng.random() < 0.5:
            # Part of a legal move, or one square more: the messages of a capture stopped short.
            legal = rng.choice(moves).path
            path = legal[: rng.randint(1, len(legal))] if rng.random() < 0.5 else (*legal, rng.choice(dark))
        try:
            state.find(path)
        except IllegalMove as refusal:
            refusals.append({"path": " ".join(square_name(square) for square in path), "message": str(refusal)})
    vector["refusals"] = refusals
    return vector


def _random_position(rng: random.Random) -> State:
    board = ["0"] * 64
    for square in range(64):
        if is_dark(square) and rng.random() < 0.35:
            board[square] = rng.choice("wwWbbB")
    return State(board, rng.choice((WHITE, BLACK)))


def generate(seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    positions: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()

    def keep(state: State) -> None:
        if (state.text, state.turn) not in seen:
            seen.add((state.text, state.turn))
            positions.append(_position_vector(state, rng))

    while len(positions) < POSITIONS:
        state = State()
        for _ in range(300):
            if rng.random() < SAMPLE_RATE:
                keep(state)
            moves = state.legal_moves()
            if not moves:
                keep(state)
                break
            state.apply(rng.choice(moves))
    for _ in range(RANDOM_POSITIONS):
        keep(_random_position(rng))
    return {"version": 1, "positions": positions}


def render(vectors: dict[str, Any]) -> bytes:
    return json.dumps(vectors, separators=(",", ":"), sort_keys=True).encode()


def summary(vectors: dict[str, Any]) -> dict[str, int]:
    positions = vectors["positions"]
    moves = [move for position in positions for move in position["moves"]]
    return {
        "positions": len(positions),
        "moves": len(moves),
        "captures": sum(bool(move["captured"]) for move in moves),
        "multi-jumps": sum(len(move["path"].split()) > 2 for move in moves),
        "crownings": sum(move["crowned"] for move in moves),
        "kings": sum(any(piece in "WB" for piece in position["board"]) for position in positions),
        "over": sum(position["winner"] is not None for position in positions),
        "refusals": sum(len(position["refusals"]) for position in positions),
    }
