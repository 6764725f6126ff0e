"""English draughts (American checkers): the board, the men and kings and their legal moves, as the room server's
protocol page of the README describes them.

The 64 squares are numbered as the protocol writes its board: row 8 first, column a first in each row, so square
`(8 - row) * 8 + column` (column a = 0). Play is on the 32 dark squares (a1, c1, …, h8). White's men start on rows
1–3 and move up; black's start on rows 6–8 and move down; white moves first.

A move is the sequence of squares its piece stops on, start first: one step, or a capture and every landing square of
it. Capturing is mandatory, a capture goes on while the piece can jump, and a man crowned by a jump ends its move
there. A side with no legal move on its turn has lost.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from .base import Engine, IllegalAction, Outcome, Played

WHITE: Final = "w"
BLACK: Final = "b"
EMPTY: Final = "0"
SIDES: Final = (WHITE, BLACK)  # seat 0 is white, who moves first
NAMES: Final = {WHITE: "WHITE", BLACK: "BLACK"}

START: Final = "0b0b0b0bb0b0b0b00b0b0b0b0000000000000000w0w0w0w00w0w0w0ww0w0w0w0"
COLUMNS: Final = "abcdefgh"

# Diagonal steps as (column, row) changes; a man goes only towards the far row (white up, black down: DIRECTIONS).
KING_STEPS: Final = ((1, 1), (-1, 1), (1, -1), (-1, -1))


class IllegalMove(IllegalAction):
    """A move the rules refuse; the message says why, for the player."""


def square_name(square: int) -> str:
    """Return the protocol's name of a square index: 0 is "a8", 63 is "h1"."""
    return f"{COLUMNS[square % 8]}{8 - square // 8}"


def square_index(name: str) -> int:
    """Return the index of a square named like "c3" (lower case), or raise IllegalMove."""
    if len(name) != 2 or name[0] not in COLUMNS or name[1] not in "12345678":
        raise IllegalMove(f"{name[:8]!r} is not a square")
    return (8 - int(name[1])) * 8 + COLUMNS.index(name[0])


def _coordinates(square: int) -> tuple[int, int]:
    """Return (column 0–7, row 1–8)."""
    return square % 8, 8 - square // 8


def _square(column: int, row: int) -> int | None:
    if 0 <= column < 8 and 1 <= row <= 8:
        return (8 - row) * 8 + column
    return None


def _tables() -> tuple[tuple[tuple[tuple[int, int], ...], ...], tuple[tuple[tuple[int, int, int], ...], ...]]:
    """Return, for each square, its diagonal steps (direction, target) and jumps (direction, square jumped, landing),
    directions numbered as in KING_STEPS: the move generator looks them up instead of computing coordinates."""
    steps, jumps = [], []
    for square in range(64):
        column, row = _coordinates(square)
        square_steps, square_jumps = [], []
        for direction, (dc, dr) in enumerate(KING_STEPS):
            target = _square(column + dc, row + dr)
            landing = _square(column + 2 * dc, row + 2 * dr)
            if target is not None:
                square_steps.append((direction, target))
                if landing is not None:
                    square_jumps.append((direction, target, landing))
        steps.append(tuple(square_steps))
        jumps.append(tuple(square_jumps))
    return tuple(steps), tuple(jumps)


STEPS, JUMPS = _tables()
# The directions a piece may take, numbered as in KING_STEPS.
DIRECTIONS: Final = {"W": (0, 1, 2, 3), "B": (0, 1, 2, 3), WHITE: (0, 1), BLACK: (2, 3)}
# The squares of the far row of each side, where its men are crowned.
CROWNING: Final = {WHITE: frozenset(range(8)), BLACK: frozenset(range(56, 64))}


def is_dark(square: int) -> bool:
    column, row = _coordinates(square)
    return (column + 1 + row) % 2 == 0


def side_of(piece: str) -> str | None:
    return None if piece == EMPTY else piece.lower()


def opponent(side: str) -> str:
    return BLACK if side == WHITE else WHITE


@dataclass(frozen=True, slots=True)
class Move:
    """A move: the squares its piece stops on (start first), what it captured and whether it was crowned."""

    path: tuple[int, ...]
    # What the path implies in a position: a move is its path (a log or a client gives only the path).
    captured: tuple[int, ...] = field(default=(), compare=False)
    crowned: bool = field(default=False, compare=False)

    @property
    def names(self) -> list[str]:
        return [square_name(square) for square in self.path]

    def __str__(self) -> str:
        return " ".join(self.names)


@dataclass(slots=True)
class State:
    """A position: the 64 squares as the protocol's board string, and the side to move."""

    board: list[str] = field(default_factory=lambda: list(START))
    turn: str = WHITE
    _moves: list[Move] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_board(cls, board: str, turn: str = WHITE) -> State:
        """Return the position of a board string (row 8 first) with `turn` to move; raise ValueError if malformed."""
        if len(board) != 64 or any(piece not in "0wWbB" for piece in board):
            raise ValueError("a board is 64 characters of 0, w, W, b and B")
        if any(piece != EMPTY and not is_dark(square) for square, piece in enumerate(board)):
            raise ValueError("pieces stand on dark squares only")
        if turn not in SIDES:
            raise ValueError("the side to move is w or b")
        return cls(list(board), turn)

    @property
    def text(self) -> str:
        return "".join(self.board)

    def legal_moves(self) -> list[Move]:
        """Return every legal move of the side to move: its captures if it has any, else its steps."""
        if self._moves is None:
            turn = self.turn
            own = [square for square, piece in enumerate(self.board) if piece == turn or piece == turn.upper()]
            captures = [move for square in own for move in self._captures_from(square)]
            self._moves = captures or [move for square in own for move in self._steps_from(square)]
        return self._moves

    def _steps_from(self, square: int) -> Iterator[Move]:
        board = self.board
        piece = board[square]
        directions = DIRECTIONS[piece]
        crowning = CROWNING[piece] if piece.islower() else ()
        for direction, target in STEPS[square]:
            if direction in directions and board[target] == EMPTY:
                yield Move((square, target), (), target in crowning)

    def _captures_from(self, start: int) -> list[Move]:
        board = self.board
        piece = board[start]
        enemies = (BLACK, "B") if piece.lower() == WHITE else (WHITE, "W")
        directions = DIRECTIONS[piece]
        crowning = CROWNING[piece] if piece.islower() else ()
        # Most pieces have nothing to take: a look at their neighbours first.
        if not any(direction in directions and board[over] in enemies for direction, over, _ in JUMPS[start]):
            return []
        moves: list[Move] = []
        _extend_capture(board, start, directions, enemies, crowning, moves, start, (start,), ())
        return moves

    def find(self, path: tuple[int, ...]) -> Move:
        """Return the legal move with these squares, or raise IllegalMove saying why there is none."""
        if len(path) < 2:
            raise IllegalMove("a move names at least two squares")
        if any(a == b for a, b in zip(path, path[1:], strict=False)):
            raise IllegalMove("a square twice in a row")
        if side_of(self.board[path[0]]) != self.turn:
            raise IllegalMove(f"no piece of yours on {square_name(path[0])}")
        legal = self.legal_moves()
        for move in legal:
            if move.path == path:
                return move
        if legal and legal[0].captured and not any(move.path[0] == path[0] for move in legal):
            raise IllegalMove("capture is mandatory")
        if legal and legal[0].captured and any(move.path[: len(path)] == path for move in legal):
            raise IllegalMove("the capture must go on while the piece can jump")
        if legal and legal[0].captured and len(path) == 2 and abs(path[1] - path[0]) in (7, 9):
            raise IllegalMove("capture is mandatory")
        raise IllegalMove("not a legal move")

    def apply(self, move: Move) -> None:
        """Make a legal move (from `legal_moves` or `find`) and pass the turn."""
        start, end = move.path[0], move.path[-1]
        piece = self.board[start]
        self.board[start] = EMPTY
        for square in move.captured:
            self.board[square] = EMPTY
        self.board[end] = piece.upper() if move.crowned else piece
        self.turn = opponent(self.turn)
        self._moves = None

    def winner(self) -> str | None:
        """Return the side that has won (the side to move has no legal move), or None while the game goes on."""
        return None if self.legal_moves() else opponent(self.turn)

    def copy(self) -> State:
        # With the legal moves found so far (a list no one changes: `apply` replaces it): a server keeps a position
        # for the next command and hands out copies of it, each of which would otherwise look for them again.
        return State(list(self.board), self.turn, self._moves)

    def to_json(self) -> dict[str, Any]:
        return {"board": self.text, "turn": self.turn}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        board, turn = data.get("board"), data.get("turn")
        if not isinstance(board, str) or not isinstance(turn, str):
            raise ValueError("a draughts state has a board and a turn")
        return cls.from_board(board, turn)


def perft(state: State, depth: int) -> int:
    """Return the number of move sequences of `depth` moves from `state` (the standard check of a move generator)."""
    moves = state.legal_moves()
    if depth <= 1:
        return len(moves) if depth == 1 else 1
    total = 0
    for move in moves:
        child = state.copy()
        child.apply(move)
        total += perft(child, depth - 1)
    return total


def parse_path(names: list[str]) -> tuple[int, ...]:
    """Return the square indices of a move's square names ("c3", "d4"), or raise IllegalMove."""
    return tuple(square_index(name) for name in names)


# --- The engine: draughts behind the platform's interface (games/rules/base.py) -------------------------------------

PIECE_VALUES: Final = {"w": 1.0, "W": 1.6, "b": 1.0, "B": 1.6, EMPTY: 0.0}


class DraughtsEngine:
    """English draughts for two seats (white, black); no options."""

    kind = "draughts"
    title = "English draughts"
    min_seats = 2
    scored = False
    max_seats = 2
    chance = False
    action_labels: Mapping[str, str] = {"move": "moved", "capture": "captured"}

    def options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def variant(self, options: Mapping[str, Any]) -> str:
        return ""

    def variant_label(self, variant: str) -> str:
        return ""

    def new(self, seats: int, options: Mapping[str, Any], rng: random.Random) -> State:
        if seats != 2:
            raise ValueError("draughts is played by two")
        return State()

    def seats(self, state: State) -> int:
        return 2

    def to_act(self, state: State) -> int | None:
        return None if state.winner() is not None else SIDES.index(state.turn)

    def automatic(self, state: State) -> Move | None:
        return None

    def legal_actions(self, state: State, seat: int) -> list[Move]:
        if SIDES[seat] != state.turn:
            return []
        return list(state.legal_moves())

    def apply(self, state: State, seat: int, action: Move, rng: random.Random) -> Played:
        if state.winner() is not None:
            raise IllegalMove("the game is over")
        if SIDES[seat] != state.turn:
            raise IllegalMove("not your turn")
        move = state.find(action.path)
        state.apply(move)
        data: dict[str, Any] = {"path": move.names}
        if move.captured:
            data["captured"] = [square_name(square) for square in move.captured]
        if move.crowned:
            data["crowned"] = True
        return Played("capture" if move.captured else "move", data)

    def chances(self, state: State, seat: int, action: Move) -> list[tuple[Fraction, Move]] | None:
        return None

    def heuristic(self, state: State, seat: int) -> float:
        side = SIDES[seat]
        own = enemy = 0.0
        for square, piece in enumerate(state.board):
            if piece == EMPTY:
                continue
            value = PIECE_VALUES[piece]
            if piece == side:
                # A man on its way to the far row is worth a little more.
                _, row = _coordinates(square)
                value += 0.05 * (row - 1 if side == WHITE else 8 - row)
            if piece.lower() == side:
                own += value
            else:
                enemy += value
        total = own + enemy
        return 0.0 if total == 0 else (own - enemy) / total

    def logged_action(self, played: Played) -> Move:
        if played.kind not in self.action_labels:
            raise IllegalAction(f"Not an entry of draughts' log: {played.kind!r}")
        return self.action_from_json({"path": played.data.get("path")})

    def remove(self, state: State, seat: int) -> Played | None:
        return None  # a game for two ends when a player goes

    def outcome(self, state: State) -> Outcome | None:
        winner = state.winner()
        return None if winner is None else Outcome.win(SIDES.index(winner), 2, "no-move")

    def copy(self, state: State) -> State:
        return state.copy()

    def state_to_json(self, state: State) -> dict[str, Any]:
        return state.to_json()

    def state_from_json(self, data: Mapping[str, Any]) -> State:
        return State.from_json(data)

    def action_to_json(self, action: Move) -> dict[str, Any]:
        return {"path": action.names}

    def action_from_json(self, data: Mapping[str, Any]) -> Move:
        path = data.get("path")
        if not isinstance(path, list) or not all(isinstance(name, str) for name in path):
            raise IllegalMove("a move is a list of squares")
        if not 2 <= len(path) <= 13:
            raise IllegalMove("a move names 2 to 13 squares")
        return Move(parse_path(path))


ENGINE: Engine[State, Move] = DraughtsEngine()


def _extend_capture(
    board: list[str],
    start: int,
    directions: tuple[int, ...],
    enemies: tuple[str, str],
    crowning: Collection[int],
    moves: list[Move],
    square: int,
    path: tuple[int, ...],
    captured: tuple[int, ...],
) -> None:
    """Add to `moves` every capture that goes on from `square`, where the piece that set off from `start` stands after
    jumping along `path` over `captured`. A function of the module, not a closure inside `_captures_from`: a closure
    that calls itself is a reference cycle, left for the collector after every search (the draughts server's young
    collections each freed tens of thousands of them)."""
    jumped = False
    for direction, over, landing in JUMPS[square]:
        if direction not in directions or board[over] not in enemies or over in captured:
            continue
        # The piece's own starting square is empty during its move; captured pieces stay until it ends.
        if board[landing] != EMPTY and landing != start:
            continue
        jumped = True
        if landing in crowning:
            moves.append(Move((*path, landing), (*captured, over), True))
        else:
            _extend_capture(
                board, start, directions, enemies, crowning, moves, landing, (*path, landing), (*captured, over)
            )
    if not jumped and captured:
        moves.append(Move(path, captured, False))
