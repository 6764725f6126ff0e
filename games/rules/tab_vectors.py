"""Test vectors that pin the JavaScript rules engine (static/js/rules/tab.js) to games/rules/tab.py.

Random games on every board size give the positions; for each one and every throw value, the vectors hold what
the Python module says: the legal moves in its order, the state after each move, `must_pass` and `can_throw`.
Click-by-click flows (throws, passes, selections, moves, refusals with their exact messages) complete them.

States are written compactly by `encode_state`: seven fields separated by spaces,
`board turn winner dice step cell selected`, for example `bbbbbbb..............rrrrrrr B - - from - -`.
The board has one character per cell in the API's order (see `PIECE_CODES`), colors are their initial,
the dice is its four sticks as a hexadecimal digit (stick i light = bit i), and `-` stands for None.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any, Final

from .tab import BLUE, COLORS, RED, THROW_VALUES, IllegalMove, Move, Piece, State, Throw, check_size, own_row

VERSION: Final = 1
SIZES: Final = (7, 9, 11, 13, 15)
# Enough distinct (board, turn) positions per size for the promised 10,000 in all.
POSITIONS_PER_SIZE: Final = 2_100
# Positions are sampled at this rate among the throws of random games, so that they come from many games.
SAMPLE_RATE: Final = 0.4
# Complete games per size recorded action by action, with stray actions mixed in at PROBE_RATE.
GAMES_PER_SIZE: Final = 2
PROBE_RATE: Final = 0.3
# Rates at which a (position, throw) becomes a flow of clicks: on a piece at the fork, or on any cells.
FORK_FLOW_RATE: Final = 0.3
CLICK_FLOW_RATE: Final = 0.05
# Rate at which a throw that no piece can use becomes a flow of a pass, a throw and a click, in random order.
STUCK_FLOW_RATE: Final = 0.5
# One flow in so many gives its first and last state as Python's JSON too.
JSON_SAMPLE_STEP: Final = 25
# Arguments of `select` that are not cells at all (2.0 is left out: JSON cannot tell it from 2).
NOT_CELLS: Final[tuple[object, ...]] = (True, False, "3", None, 2.5)

PIECE_CODES: Final[dict[Piece | None, str]] = {
    None: ".",
    Piece(BLUE): "b",
    Piece(BLUE, in_motion=True): "B",
    Piece(BLUE, in_motion=True, reached_last_row=True): "c",
    Piece(RED): "r",
    Piece(RED, in_motion=True): "R",
    Piece(RED, in_motion=True, reached_last_row=True): "s",
}
PIECES: Final[dict[str, Piece | None]] = {code: piece for piece, code in PIECE_CODES.items()}
# The same codes by the pieces' fields: a tuple hashes and compares in C, a dataclass in Python (twenty times slower).
CODES_BY_FIELDS: Final[dict[tuple[str, bool, bool], str]] = {
    (piece.color, piece.in_motion, piece.reached_last_row): code for piece, code in PIECE_CODES.items() if piece
}
COLOR_CODES: Final[dict[str | None, str]] = {BLUE: "B", RED: "R", None: "-"}
COLORS_BY_CODE: Final[dict[str, str | None]] = {code: color for color, code in COLOR_CODES.items()}

type Json = Any


def encode_throw(throw: Throw) -> str:
    """Return the four sticks of `throw` as one hexadecimal digit, stick i being bit i."""
    return format(sum(1 << index for index, light in enumerate(throw.sticks) if light), "x")


def decode_throw(code: str) -> Throw:
    """Rebuild a throw from `encode_throw`'s digit."""
    return Throw.of_bits(int(code, 16))


def encode_board(pieces: list[Piece | None]) -> str:
    """Return the board's one character per cell."""
    return "".join(
        [
            "." if piece is None else CODES_BY_FIELDS[piece.color, piece.in_motion, piece.reached_last_row]
            for piece in pieces
        ]
    )


def encode_state(state: State) -> str:
    """Return every field of `state` in the vectors' compact notation."""
    return " ".join(
        (
            encode_board(state.pieces),
            COLOR_CODES[state.turn],
            COLOR_CODES[state.winner],
            "-" if state.dice is None else encode_throw(state.dice),
            state.step,
            "-" if state.cell is None else str(state.cell),
            "-" if state.selected is None else ",".join(map(str, state.selected)),
        )
    )


def decode_state(code: str) -> State:
    """Rebuild a state from `encode_state`'s output."""
    board, turn, winner, dice, step, cell, selected = code.split(" ")
    turn_color = COLORS_BY_CODE[turn]
    if turn_color not in COLORS or step not in ("from", "to"):
        raise ValueError(f"invalid state code {code!r}")
    return State(
        size=check_size(len(board) // 4),
        pieces=[PIECES[symbol] for symbol in board],
        turn=turn_color,
        dice=None if dice == "-" else decode_throw(dice),
        step=step,
        cell=None if cell == "-" else int(cell),
        selected=None if selected == "-" else [int(item) for item in selected.split(",")],
        winner=COLORS_BY_CODE[winner],
    )


def encode_move(move: Move) -> list[Json]:
    """Return `move` as `[origin, destination, captures]`."""
    return [move.origin, move.destination, move.captures]


def perform(state: State, action: list[Json]) -> list[Json]:
    """Do `action` on `state` and return `[action, outcome, state after]`; a refusal's outcome is its message."""
    kind, *arguments = action
    outcome: Json = None
    try:
        if kind == "throw":
            state.throw(decode_throw(arguments[0]))
        elif kind == "pass":
            state.pass_turn()
        elif kind == "select":
            made = state.select(arguments[0])
            outcome = None if made is None else encode_move(made)
        elif kind == "apply":
            state.apply(Move(*arguments))
        else:
            raise ValueError(f"unknown action {kind!r}")
    except IllegalMove as refusal:
        outcome = str(refusal)
    return [action, outcome, encode_state(state)]


def playing_action(state: State, rng: random.Random) -> list[Json]:
    """Return an action a player could take now, through the interface a browser uses (clicks) or a CPU (apply)."""
    if state.can_throw:
        return ["throw", encode_throw(Throw.random(rng))]
    if state.must_pass:
        return ["pass"]
    if state.step == "to":
        assert state.selected is not None and state.cell is not None
        return ["select", rng.choice([*state.selected, state.cell])]
    move = rng.choice(state.legal_moves())
    if rng.random() < 0.5:
        return ["apply", *encode_move(move)]
    return ["select", move.origin]


def any_cell(state: State, rng: random.Random) -> object:
    """Return a click target: mostly a cell with a piece of either color, sometimes an empty cell or no cell at all."""
    mine = [cell for cell, piece in enumerate(state.pieces) if piece is not None and piece.color == state.turn]
    theirs = [cell for cell, piece in enumerate(state.pieces) if piece is not None and piece.color != state.turn]
    empty = [cell for cell, piece in enumerate(state.pieces) if piece is None]
    roll = rng.random()
    if roll < 0.6 and mine:
        return rng.choice(mine)
    if roll < 0.75 and theirs:
        return rng.choice(theirs)
    if roll < 0.9 and empty:
        return rng.choice(empty)
    if roll < 0.95:
        return rng.choice((-2, -1, len(state.pieces), len(state.pieces) + 1))
    return rng.choice(NOT_CELLS)


def stray_action(state: State, rng: random.Random) -> list[Json]:
    """Return an action taken at random, legal or not, to check the refusals."""
    roll = rng.random()
    if roll < 0.5:
        return ["select", any_cell(state, rng)]
    if roll < 0.65:
        return ["throw", encode_throw(Throw.random(rng))]
    if roll < 0.8:
        return ["pass"]
    moves = state.legal_moves()
    if moves and rng.random() < 0.5:
        move = rng.choice(moves)
        return ["apply", move.origin, move.destination, not move.captures]
    cells = len(state.pieces)
    return ["apply", rng.randrange(cells), rng.randrange(cells), rng.random() < 0.5]


def game_flow(size: int, rng: random.Random) -> list[Json]:
    """Return a whole random game as a flow, with stray actions mixed in and a few after its end."""
    state = State.new(size)
    start = encode_state(state)
    steps: list[Json] = []
    while state.winner is None:
        if rng.random() < PROBE_RATE:
            steps.append(perform(state, stray_action(state, rng)))
            if state.winner is not None:
                break
        steps.append(perform(state, playing_action(state, rng)))
    for _ in range(3):
        steps.append(perform(state, stray_action(state, rng)))
    return [start, steps]


def click_flow(state: State, moves: list[Move], rng: random.Random) -> list[Json] | None:
    """Return a flow of actions from `state` (dice thrown, `moves` legal), or None if it is not sampled."""
    # Moves come by origin, so a piece at the fork shows as two moves in a row.
    forks = [move.origin for move, following in zip(moves, moves[1:], strict=False) if move.origin == following.origin]
    if forks and rng.random() < FORK_FLOW_RATE:
        start = encode_state(state)
        origin = rng.choice(forks)
        steps = [perform(state, ["select", origin])]
        assert state.step == "to" and state.selected is not None
        second = rng.choice([origin, *state.selected, any_cell(state, rng)])
        steps.append(perform(state, ["select", second]))
        if state.step == "to" or second == origin:
            steps.append(perform(state, ["select", any_cell(state, rng)]))
    elif not moves and rng.random() < STUCK_FLOW_RATE:
        start = encode_state(state)
        actions: list[list[Json]] = [
            ["pass"],
            ["throw", encode_throw(Throw.random(rng))],
            ["select", any_cell(state, rng)],
        ]
        rng.shuffle(actions)
        steps = [perform(state, action) for action in actions]
    elif rng.random() < CLICK_FLOW_RATE:
        start = encode_state(state)
        steps = [perform(state, ["select", any_cell(state, rng)])]
        while state.dice is not None and len(steps) < 3:
            steps.append(perform(state, ["select", any_cell(state, rng)]))
    else:
        return None
    return [start, steps]


def position_vector(state: State, rng: random.Random, flows: list[Json]) -> list[Json]:
    """Return `[position, results by throw value]` for `state` (no dice thrown), adding sampled flows."""
    results = []
    for value in THROW_VALUES:
        thrown = state.copy()
        thrown.throw(Throw.of_value(value))
        legal = thrown.legal_moves()
        moves = []
        for move in legal:
            after = thrown.copy()
            after.apply(move)
            moves.append([*encode_move(move), encode_state(after)])
        results.append([thrown.must_pass, thrown.can_throw, moves])
        flow = click_flow(thrown, legal, rng)
        if flow is not None:
            flows.append(flow)
    return [encode_state(state), results]


def size_vectors(size: int) -> tuple[list[Json], list[Json]]:
    """Return the positions and flows of one board size, from random games seeded by the size."""
    rng = random.Random(size)
    seen: set[tuple[str, str]] = set()
    positions: list[Json] = []
    flows: list[Json] = [game_flow(size, rng) for _ in range(GAMES_PER_SIZE)]
    while len(positions) < POSITIONS_PER_SIZE:
        state = State.new(size)
        while state.winner is None and len(positions) < POSITIONS_PER_SIZE:
            if state.can_throw and state.dice is None and rng.random() < SAMPLE_RATE:
                key = (encode_board(state.pieces), state.turn)
                if key not in seen:
                    seen.add(key)
                    positions.append(position_vector(state, rng, flows))
            if state.can_throw:
                state.throw(Throw.random(rng))
            elif state.must_pass:
                state.pass_turn()
            else:
                state.apply(rng.choice(state.legal_moves()))
    return positions, flows


def generate() -> dict[str, Json]:
    """Return the whole set of vectors, the same on every run."""
    positions: list[Json] = []
    flows: list[Json] = []
    for size in SIZES:
        size_positions, size_flows = size_vectors(size)
        positions += size_positions
        flows += size_flows
    # Some starts and ends of flows, for the JSON that the server stores: forks, thrown dice, finished games.
    json_samples = [code for start, steps in flows[::JSON_SAMPLE_STEP] for code in (start, steps[-1][2])]
    return {
        "about": "Written by `python manage.py rules_vectors tab` from games/rules/tab.py; "
        "format: games/rules/tab_vectors.py.",
        "version": VERSION,
        "pieces": {code: None if piece is None else piece.to_json() for code, piece in PIECES.items()},
        "values": list(THROW_VALUES),
        "positions": positions,
        "flows": flows,
        "json": [[code, json.dumps(decode_state(code).to_json(), separators=(",", ":"))] for code in json_samples],
    }


def render(vectors: dict[str, Json]) -> bytes:
    """Return the vectors as the JSON text stored (compressed) in the repository, one item of a list a line."""
    lines = ["{"]
    for index, (key, value) in enumerate(vectors.items()):
        comma = "," if index < len(vectors) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], list):
            lines.append(f"{json.dumps(key)}:[")
            lines += [json.dumps(item, separators=(",", ":")) + "," for item in value[:-1]]
            lines.append(json.dumps(value[-1], separators=(",", ":")))
            lines.append(f"]{comma}")
        else:
            lines.append(f"{json.dumps(key)}:{json.dumps(value, separators=(',', ':'))}{comma}")
    lines.append("}")
    return ("\n".join(lines) + "\n").encode()


def summary(vectors: dict[str, Json]) -> dict[str, int]:
    """Return counts that show how varied the vectors are."""
    positions, flows = vectors["positions"], vectors["flows"]
    counts: Counter[str] = Counter(positions=len(positions), flows=len(flows))
    for code, results in positions:
        state = decode_state(code)
        counts["reached last row"] += any(piece is not None and piece.reached_last_row for piece in state.pieces)
        # A piece of the player on turn in its last row, frozen by another one in its first row.
        rows = {
            own_row(cell, piece.color, state.size)
            for cell, piece in enumerate(state.pieces)
            if piece is not None and piece.color == state.turn
        }
        counts["row 3 frozen"] += {0, 3} <= rows
        for must_pass, can_throw, moves in results:
            counts["throws"] += 1
            counts["moves"] += len(moves)
            counts["must pass"] += must_pass
            counts["throw again"] += can_throw
            counts["captures"] += sum(1 for move in moves if move[2])
            counts["wins"] += sum(1 for move in moves if move[3].split(" ")[2] != "-")
            origins = Counter(move[0] for move in moves)
            counts["forks"] += sum(1 for count in origins.values() if count > 1)
    for _, steps in flows:
        counts["actions"] += len(steps)
        for _, outcome, _ in steps:
            if isinstance(outcome, str):
                counts[f"refused: {outcome}"] += 1
    return dict(counts)
