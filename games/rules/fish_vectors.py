"""Test vectors that pin the JavaScript rules engine (static/js/rules/fish.js) to games/rules/fish.py.

Positions come from random games of 2, 3 and 4 players (seeded, so that the file is the same on every run), on the
boards that seeds make and on boards with many more holes, where penguins get stuck, players are skipped and games
end early (right after placement too). A random seat is removed now and then. Each vector holds a position, what the
Python module says there (the legal actions of the seat on turn, every seat's moves, the moves from one tile, a few
refused actions with their error and message), one action or removal, and the state after it with its ranks.

Moves and tiles are written compactly: a placement or a tile `[row, col]`, a move `[start row, start col, end row, end
col]`; states and actions are the module's own JSON.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any, Final

from .base import IllegalAction
from .fish import (
    COLUMNS,
    ENGINE,
    LINES,
    MOVEMENT,
    OVER,
    PLACEMENT,
    ROWS,
    Move,
    Place,
    Remove,
    State,
    board_from_seed,
    penguins_each,
)

VERSION: Final = 1
POSITIONS: Final = 2_500
SAMPLE_RATE: Final = 0.3
REMOVAL_RATE: Final = 0.02
REFUSALS_PER_POSITION: Final = 2
# One game in two is played on a board with extra holes, up to leaving a free tile for each penguin only.
EXTRA_HOLES_RATE: Final = 0.5

type Json = Any


def _move(move: Move) -> list[int]:
    return [*move.start, *move.end]


def _actions(state: State, seat: int) -> list[list[int]]:
    return [[action.row, action.col] if isinstance(action, Place) else _move(action) for action in _legal(state, seat)]


def _legal(state: State, seat: int) -> list[Place | Move]:
    return [action for action in ENGINE.legal_actions(state, seat) if isinstance(action, Place | Move)]


def _board(rng: random.Random, players: int) -> list[list[int]]:
    board = board_from_seed(rng.randrange(2**63))
    if rng.random() < EXTRA_HOLES_RATE:
        tiles = [row * COLUMNS + col for row in range(ROWS) for col in range(COLUMNS) if board[row][col]]
        for tile in rng.sample(tiles, rng.randint(0, len(tiles) - players * penguins_each(players))):
            board[tile // COLUMNS][tile % COLUMNS] = 0
    return board


def _stray(state: State, rng: random.Random) -> tuple[int, Place | Move]:
    """Return a seat and an action that may well be refused: mostly the seat on turn and the phase's kind of action,
    on tiles off the board, holes, penguins, and along the lines from a penguin, past what blocks them."""

    def near_board() -> tuple[int, int]:
        return rng.randint(-1, ROWS), rng.randint(-1, COLUMNS)

    seat = state.turn if state.turn is not None and rng.random() < 0.7 else rng.randrange(state.players)
    penguins = [tile for places in state.penguins for tile in places]
    placing = (state.phase == PLACEMENT) == (rng.random() < 0.85)
    if placing:
        if penguins and rng.random() < 0.3:
            return seat, Place(*rng.choice(penguins))
        return seat, Place(*near_board())
    own = state.penguins[seat]
    start = rng.choice(own) if own and rng.random() < 0.8 else rng.choice(penguins or [near_board()])
    if start in LINES and rng.random() < 0.6:
        tiles = [tile for tiles in LINES[start] for tile in tiles]
        return seat, Move(start, rng.choice(tiles))
    return seat, Move(start, rng.choice(penguins) if penguins and rng.random() < 0.3 else near_board())


def _refusals(state: State, rng: random.Random) -> list[dict[str, Json]]:
    refusals: list[dict[str, Json]] = []
    for _ in range(40):
        if len(refusals) == REFUSALS_PER_POSITION:
            break
        seat, action = _stray(state, rng)
        try:
            ENGINE.apply(state.copy(), seat, action, rng)
        except IllegalAction as error:
            refusals.append(
                {
                    "seat": seat,
                    "action": ENGINE.action_to_json(action),
                    "error": type(error).__name__,
                    "message": str(error),
                }
            )
    return refusals


def _from_tile(state: State, rng: random.Random) -> dict[str, Json]:
    row, col = rng.randint(-1, ROWS), rng.randint(-1, COLUMNS)
    if rng.random() < 0.6:
        row, col = rng.randrange(ROWS), rng.randrange(COLUMNS)
    penguins = [tile for places in state.penguins for tile in places]
    if penguins and rng.random() < 0.3:
        row, col = rng.choice(penguins)
    try:
        return {"tile": [row, col], "moves": [_move(move) for move in state.moves_from(row, col)]}
    except IllegalAction as error:
        return {"tile": [row, col], "error": type(error).__name__, "message": str(error)}


def generate(seed: int = 1) -> dict[str, Json]:
    rng = random.Random(seed)
    positions: list[dict[str, Json]] = []
    games = 0
    while len(positions) < POSITIONS:
        games += 1
        players = 2 + games % 3
        state = State.new(_board(rng, players), players)
        while state.turn is not None:
            if rng.random() < REMOVAL_RATE:
                seat = rng.choice([seat for seat in range(players) if not state.removed[seat]])
                action: Place | Move | Remove = Remove()
            else:
                seat = state.turn
                action = rng.choice(_legal(state, seat))
            before = state.copy()
            ENGINE.apply(state, seat, action, rng)
            # Every removal, every end and every turn that skips a seat or ends the placement phase, and a sample of the
            # other positions.
            turned = before.turn is not None and state.turn is not None
            skipped = turned and state.turn != next(
                other for other in (*range(seat + 1, players), *range(seat + 1)) if not state.removed[other]
            )
            notable = isinstance(action, Remove) or state.phase != before.phase or skipped
            if not notable and rng.random() >= SAMPLE_RATE:
                continue
            positions.append(
                {
                    "state": before.to_json(),
                    "legal": _actions(before, before.turn) if before.turn is not None else [],
                    "moves": [[_move(move) for move in before.moves_of(other)] for other in range(players)],
                    "from": _from_tile(before, rng),
                    "refused": _refusals(before, rng),
                    "seat": seat,
                    "action": ENGINE.action_to_json(action),
                    "after": state.to_json(),
                    "ranks": state.ranks(),
                }
            )
    return {"version": VERSION, "positions": positions}


def render(vectors: dict[str, Json]) -> bytes:
    return json.dumps(vectors, separators=(",", ":"), sort_keys=True).encode()


def summary(vectors: dict[str, Json]) -> dict[str, int]:
    positions = vectors["positions"]
    counts: Counter[str] = Counter()
    for vector in positions:
        state, after, kind = vector["state"], vector["after"], vector["action"]["kind"]
        counts["positions"] += 1
        counts[f"players {len(state['players'])}"] += 1
        counts[f"{kind}s"] += 1
        counts["removals of the seat on turn"] += (
            kind == "remove" and state["turn"] == state["players"][vector["seat"]]["color"]
        )
        counts["placement ends"] += state["phase"] == PLACEMENT and after["phase"] != PLACEMENT
        counts["ends right after placement"] += state["phase"] == PLACEMENT and after["phase"] == OVER
        counts["ends"] += after["phase"] == OVER
        counts["ends with every seat removed"] += after["phase"] == OVER and vector["ranks"] is None
        counts["same seat again"] += (
            state["phase"] == MOVEMENT and after["phase"] == MOVEMENT and after["turn"] == state["turn"]
        )
        counts["tiles refused"] += "error" in vector["from"]
        for refusal in vector["refused"]:
            counts[f"refused: {refusal['error']}"] += 1
    return dict(counts)
