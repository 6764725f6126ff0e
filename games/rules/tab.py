"""Tâb: the board, the dice of sticks and the legal moves, as the rules page (spec/tab-rules.md) defines them."""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any, Final

from .base import Engine, IllegalAction, Outcome, Played

BLUE: Final = "Blue"
RED: Final = "Red"
COLORS: Final = (BLUE, RED)

MIN_SIZE: Final = 7
MAX_SIZE: Final = 15
DEFAULT_SIZE: Final = 9

FROM: Final = "from"
TO: Final = "to"

# Four fair sticks: the value is the number of light sides, none light counting as 6 (Sitteh).
THROW_PROBABILITIES: Final[Mapping[int, Fraction]] = MappingProxyType(
    {6: Fraction(1, 16), 1: Fraction(4, 16), 2: Fraction(6, 16), 3: Fraction(4, 16), 4: Fraction(1, 16)}
)
THROW_VALUES: Final = (1, 2, 3, 4, 6)


class IllegalMove(IllegalAction):
    """An action the rules refuse; `str(error)` is the message shown to the player."""


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece on the board, with the two facts about its past that the rules need."""

    color: str
    in_motion: bool = False
    reached_last_row: bool = False

    def to_json(self) -> dict[str, Any]:
        """Return the piece as the API's `pieces` entries show it."""
        return {"color": self.color, "inMotion": self.in_motion, "reachedLastRow": self.reached_last_row}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Piece:
        """Rebuild a piece from `to_json`'s output. A piece is a value (frozen) and there are eight: each is made
        once and shared by every board rebuilt, where a position held a new one for each of its pieces."""
        color = data["color"]
        if color not in COLORS:
            raise ValueError(f"invalid color {color!r}")
        return _shared_piece(color, bool(data["inMotion"]), bool(data["reachedLastRow"]))


@cache
def _shared_piece(color: str, in_motion: bool, reached_last_row: bool) -> Piece:
    """The one piece of this color and these two facts (Piece.from_json)."""
    return Piece(color, in_motion, reached_last_row)


# The eight pieces by their JSON's three values as `to_json` writes them (a board's pieces are decoded in one lookup
# each; anything else goes through `Piece.from_json`, which checks it).
_PIECES_BY_JSON: Final = {
    (color, in_motion, reached): _shared_piece(color, in_motion, reached)
    for color in COLORS
    for in_motion in (False, True)
    for reached in (False, True)
}


@dataclass(frozen=True, slots=True)
class Throw:
    """One throw of the four sticks."""

    sticks: tuple[bool, bool, bool, bool]

    def __post_init__(self) -> None:
        if len(self.sticks) != 4 or not all(isinstance(stick, bool) for stick in self.sticks):
            raise ValueError("a throw is four booleans")

    @property
    def value(self) -> int:
        """Return the number of cells to move: the light sticks, or 6 when none is light."""
        return sum(self.sticks) or 6

    @property
    def keep_playing(self) -> bool:
        """Return whether the thrower plays again after this throw."""
        return self.value in (1, 4, 6)

    @classmethod
    def of_bits(cls, bits: int) -> Throw:
        """Return the throw whose stick i is light when bit i of `bits` (0-15) is set. A throw is a value (frozen) and
        there are sixteen: each is made once and shared, where a game held a new one (and its tuple) for each throw."""
        return _THROWS[bits]

    @classmethod
    def of_sticks(cls, sticks: Sequence[bool]) -> Throw:
        """Return the throw of these four sticks (True: light), shared as `of_bits` does."""
        first, second, third, fourth = sticks
        return _THROWS[bool(first) | bool(second) << 1 | bool(third) << 2 | bool(fourth) << 3]

    @classmethod
    def random(cls, rng: random.Random | None = None) -> Throw:
        """Throw the sticks; without `rng`, with the operating system's secure randomness."""
        return _THROWS[(rng or secrets.SystemRandom()).getrandbits(4)]

    @classmethod
    def of_value(cls, value: int) -> Throw:
        """Return a throw with `value`: its first `value` sticks light (none for 6)."""
        if value not in THROW_VALUES:
            raise ValueError(f"no throw has the value {value!r}")
        light = 0 if value == 6 else value
        return cls.of_sticks((light > 0, light > 1, light > 2, light > 3))

    def to_json(self) -> dict[str, Any]:
        """Return the throw as the API's `dice` shows it."""
        return {"stickValues": list(self.sticks), "value": self.value, "keepPlaying": self.keep_playing}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Throw:
        """Rebuild a throw from `to_json`'s output (its stick values decide the rest)."""
        return cls.of_sticks(data["stickValues"])


_THROWS: Final = tuple(Throw((bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8))) for bits in range(16))


@dataclass(frozen=True, slots=True)
class Move:
    """A piece going from `origin` to `destination`, both indexes of the API's `pieces`."""

    origin: int
    destination: int
    captures: bool


def opponent(color: str) -> str:
    """Return the other player's color."""
    return RED if color == BLUE else BLUE


def own_path_position(cell: int, color: str, size: int) -> int:
    """Return the position of `cell` along the path of `color` (its own row is the result // size)."""
    if color == BLUE:
        return cell
    return (3 - cell // size) * size + cell % size


def cell_of(position: int, color: str, size: int) -> int:
    """Return the cell at `position` along the path of `color`."""
    # Mirroring the rows is its own inverse.
    return own_path_position(position, color, size)


def own_row(cell: int, color: str, size: int) -> int:
    """Return the row of `cell` as `color` sees it: 0 is its home row, 3 the opponent's."""
    row = cell // size
    return row if color == BLUE else 3 - row


def cell_name(cell: int, size: int) -> str:
    """Return where `cell` is on the board as a person reads it, the initial player's side at the bottom (as the pages
    draw it): its row counted from that side, its column from the left."""
    row, offset = divmod(cell, size)
    # Rows run left to right from the initial player's side, then back, as the pieces travel.
    column = offset if row % 2 == 0 else size - 1 - offset
    return f"row {row + 1}, column {column + 1}"


def check_size(size: object) -> int:
    """Return `size` if it is a valid number of columns, else raise ValueError."""
    if isinstance(size, bool) or not isinstance(size, int) or not MIN_SIZE <= size <= MAX_SIZE or size % 2 == 0:
        raise ValueError(f"invalid size {size!r}")
    return size


def _next_positions(position: int, reached_last_row: bool, size: int) -> tuple[int, ...]:
    """Return where one step leads from `position`, the row-3 branch first at the fork."""
    if position == 3 * size - 1:
        return (size,) if reached_last_row else (3 * size, size)
    if position == 4 * size - 1:
        return (2 * size,)
    return (position + 1,)


@lru_cache(maxsize=64)
def _path_landings(size: int, color: str, reached_last_row: bool) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Return, by throw value then by cell, where a piece of `color` lands on an empty board."""
    table: list[tuple[tuple[int, ...], ...]] = []
    for value in range(7):
        if value not in THROW_VALUES:
            table.append(((),) * (4 * size))
            continue
        by_cell: list[tuple[int, ...]] = []
        for cell in range(4 * size):
            walks = [(own_path_position(cell, color, size), reached_last_row)]
            for _ in range(value):
                walks = [
                    (step, reached or step >= 3 * size)
                    for position, reached in walks
                    for step in _next_positions(position, reached, size)
                ]
            by_cell.append(tuple(dict.fromkeys(cell_of(position, color, size) for position, _ in walks)))
        table.append(tuple(by_cell))
    return tuple(table)


@dataclass
class State:
    """A game of Tâb between Blue (the initial player) and Red; actions mutate it or raise IllegalMove."""

    size: int
    pieces: list[Piece | None]
    turn: str
    dice: Throw | None = None
    step: str = FROM
    cell: int | None = None
    selected: list[int] | None = None
    winner: str | None = None

    @classmethod
    def new(cls, size: int = DEFAULT_SIZE) -> State:
        """Return the starting position: Blue on 0 … size-1, Red on 3·size … 4·size-1, Blue to throw."""
        size = check_size(size)
        pieces: list[Piece | None] = [None] * (4 * size)
        pieces[:size] = [Piece(BLUE)] * size
        pieces[3 * size :] = [Piece(RED)] * size
        return cls(size=size, pieces=pieces, turn=BLUE)

    def _row_cells(self, row: int, color: str) -> range:
        """Return the cells of the own row `row` of `color`."""
        start = (row if color == BLUE else 3 - row) * self.size
        return range(start, start + self.size)

    def _has_pieces_in_first_row(self, color: str) -> bool:
        """Return whether `color` still has a piece in its own row 0."""
        pieces = self.pieces
        return any((piece := pieces[cell]) is not None and piece.color == color for cell in self._row_cells(0, color))

    def _moves(self, color: str, value: int, origins: Iterable[int]) -> Iterator[Move]:
        """Yield the legal moves of `color` with `value` from `origins`; the single place that applies every rule."""
        pieces = self.pieces
        fresh = _path_landings(self.size, color, False)[value]
        veteran = _path_landings(self.size, color, True)[value]
        frozen = self._row_cells(3, color) if self._has_pieces_in_first_row(color) else range(0)
        for origin in origins:
            piece = pieces[origin]
            if piece is None or piece.color != color or (not piece.in_motion and value != 1) or origin in frozen:
                continue
            for destination in (veteran if piece.reached_last_row else fresh)[origin]:
                target = pieces[destination]
                if target is None:
                    yield Move(origin, destination, False)
                elif target.color != color:
                    yield Move(origin, destination, True)

    def destinations(self, cell: int, value: int) -> list[int]:
        """Return the legal destinations of the piece on `cell` with `value`, the row-3 branch first."""
        if not 0 <= cell < len(self.pieces) or value not in THROW_VALUES or (piece := self.pieces[cell]) is None:
            return []
        return [move.destination for move in self._moves(piece.color, value, (cell,))]

    def legal_moves(self) -> list[Move]:
        """Return the moves of the player on turn with the current throw, by origin cell."""
        if self.dice is None or self.winner is not None:
            return []
        return list(self._moves(self.turn, self.dice.value, range(len(self.pieces))))

    def _can_move(self) -> bool:
        """Return whether the player on turn has a legal move with the current throw."""
        if self.dice is None or self.winner is not None:
            return False
        return next(self._moves(self.turn, self.dice.value, range(len(self.pieces))), None) is not None

    @property
    def must_pass(self) -> bool:
        """Return whether the player on turn threw, cannot move and may not throw again."""
        return self.dice is not None and not self.dice.keep_playing and self.winner is None and not self._can_move()

    @property
    def can_throw(self) -> bool:
        """Return whether the player on turn may throw the sticks now."""
        if self.winner is not None:
            return False
        return self.dice is None or (self.dice.keep_playing and not self._can_move())

    def throw(self, throw: Throw) -> None:
        """Use `throw` as the throw of the player on turn."""
        if self.winner is not None:
            raise IllegalMove("The game is over")
        if self.dice is not None:
            if self._can_move():
                raise IllegalMove("You already rolled the dice and have valid moves")
            if not self.dice.keep_playing:
                raise IllegalMove("You already rolled the dice and must pass")
        self.dice = throw
        self.step = FROM
        # `cell` and `selected` describe the last play; a new throw starts a new one (clients that follow the
        # course server treat their presence as "a piece was just selected or moved").
        self.cell = None
        self.selected = None

    def pass_turn(self) -> None:
        """Pass the turn to the opponent, which is allowed only when the throw can be used in no way."""
        if self.winner is not None:
            raise IllegalMove("The game is over")
        if self.dice is None:
            raise IllegalMove("You must roll the dice first")
        if self._can_move():
            raise IllegalMove("You already rolled the dice and have valid moves")
        if self.dice.keep_playing:
            raise IllegalMove("You already rolled the dice but can roll it again")
        self.dice = None
        self.turn = opponent(self.turn)
        self.step = FROM
        self.cell = None
        self.selected = None

    def select(self, cell: int) -> Move | None:
        """Act on a click on `cell` (the API's `notify`); return the move made, or None after a (de)selection."""
        if self.winner is not None:
            raise IllegalMove("The game is over")
        if isinstance(cell, bool) or not isinstance(cell, int):
            raise IllegalMove("cell is not an integer")
        if cell < 0:
            raise IllegalMove("cell is negative")
        if cell >= len(self.pieces):
            raise IllegalMove("cell is out of the board")
        if self.dice is None:
            raise IllegalMove("You must roll the dice first")

        if self.step == TO and self.cell is not None:
            if cell == self.cell:
                self.step = FROM
                self.cell = None
                self.selected = None
                return None
            if cell in (self.selected or ()):
                return self._make(self.cell, cell)
            raise IllegalMove("Invalid move: must play the dice's value")

        piece = self.pieces[cell]
        if piece is None:
            raise IllegalMove("No piece on that cell")
        if piece.color != self.turn:
            raise IllegalMove("That piece is not yours")
        value = self.dice.value
        if not piece.in_motion and value != 1:
            raise IllegalMove("A piece's first move must be a tâb (1)")
        if own_row(cell, piece.color, self.size) == 3 and self._has_pieces_in_first_row(piece.color):
            raise IllegalMove("You can't move in the last row while you have pieces in the first row")
        destinations = self.destinations(cell, value)
        if not destinations:
            raise IllegalMove("cannot capture to your own piece")
        if len(destinations) == 1:
            return self._make(cell, destinations[0])
        self.step = TO
        self.cell = cell
        self.selected = destinations
        return None

    def apply(self, move: Move) -> None:
        """Make `move` if it is legal now, whatever piece is selected."""
        if move not in self.legal_moves():
            raise IllegalMove("Invalid move")
        self._make(move.origin, move.destination)

    def _make(self, origin: int, destination: int) -> Move:
        """Make a move already known to be legal and hand the turn on."""
        pieces = self.pieces
        piece = pieces[origin]
        assert piece is not None and self.dice is not None
        color = piece.color
        captures = pieces[destination] is not None
        reached = piece.reached_last_row or own_row(destination, color, self.size) == 3
        pieces[destination] = Piece(color, in_motion=True, reached_last_row=reached)
        pieces[origin] = None
        keep_playing = self.dice.keep_playing
        self.dice = None
        self.step = FROM
        self.cell = origin
        self.selected = [origin, destination]
        rival = opponent(color)
        if captures and not any(other is not None and other.color == rival for other in pieces):
            self.winner = color
        elif not keep_playing:
            self.turn = rival
        return Move(origin, destination, captures)

    def outcome(self) -> str | None:
        """Return the winner's color, or None while both players have pieces."""
        return self.winner

    def to_json(self) -> dict[str, Any]:
        """Return the state as a JSON-compatible dict (what the server stores)."""
        return {
            "size": self.size,
            "pieces": [None if piece is None else piece.to_json() for piece in self.pieces],
            "turn": self.turn,
            "dice": None if self.dice is None else self.dice.to_json(),
            "step": self.step,
            "cell": self.cell,
            "selected": None if self.selected is None else list(self.selected),
            "winner": self.winner,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Rebuild a state from `to_json`'s output."""
        size = check_size(data["size"])
        try:
            # Each piece in one lookup; what is not found there (or not a piece's JSON) is checked by Piece.from_json.
            shared = _PIECES_BY_JSON.get
            pieces = [
                None
                if piece is None
                else shared((piece["color"], piece["inMotion"], piece["reachedLastRow"])) or Piece.from_json(piece)
                for piece in data["pieces"]
            ]
        except (KeyError, TypeError):
            pieces = [None if piece is None else Piece.from_json(piece) for piece in data["pieces"]]
        if len(pieces) != 4 * size:
            raise ValueError(f"a board of size {size} has {4 * size} cells, not {len(pieces)}")
        if data["turn"] not in COLORS or data["winner"] not in (*COLORS, None) or data["step"] not in (FROM, TO):
            raise ValueError("invalid turn, winner or step")
        return cls(
            size=size,
            pieces=pieces,
            turn=data["turn"],
            dice=None if data["dice"] is None else Throw.from_json(data["dice"]),
            step=data["step"],
            cell=data["cell"],
            selected=None if data["selected"] is None else list(data["selected"]),
            winner=data["winner"],
        )

    def copy(self) -> State:
        """Return an independent copy (pieces are immutable, so the board list is copied shallowly)."""
        return State(
            size=self.size,
            pieces=list(self.pieces),
            turn=self.turn,
            dice=self.dice,
            step=self.step,
            cell=self.cell,
            selected=None if self.selected is None else list(self.selected),
            winner=self.winner,
        )


# --- The engine: Tâb behind the platform's interface (games/rules/base.py) ------------------------------------------

SEATS: Final = (BLUE, RED)  # seat 0 is the initial player


@dataclass(frozen=True, slots=True)
class Roll:
    """Throw the sticks: at random (a player's throw), or with a known result (a replay, a search)."""

    throw: Throw | None = None


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass the turn, when the throw can be used in no way."""


@dataclass(frozen=True, slots=True)
class Select:
    """A click on `cell`, the course API's `notify`: select a piece, cancel the selection, or choose a destination."""

    cell: int


type Action = Roll | Pass | Select | Move


def _cell(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise IllegalAction(f"{key} is not an integer")
    return value


class TabEngine:
    """Tâb for two seats; its one option is the board's number of columns."""

    kind = "tab"
    title = "Tâb"
    min_seats = 2
    scored = False
    max_seats = 2
    chance = True
    action_labels: Mapping[str, str] = {
        "throw": "threw the sticks",
        "select": "selected a piece",
        "deselect": "cancelled the selection",
        "move": "moved a piece",
        "pass": "passed the turn",
    }

    def options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {"size": check_size(raw.get("size", DEFAULT_SIZE))}

    def variant(self, options: Mapping[str, Any]) -> str:
        return str(self.options(options)["size"])

    def variant_label(self, variant: str) -> str:
        return f"{variant} columns"

    def new(self, seats: int, options: Mapping[str, Any], rng: random.Random) -> State:
        if seats != 2:
            raise ValueError("Tâb is played by two")
        return State.new(self.options(options)["size"])

    def seats(self, state: State) -> int:
        return len(SEATS)

    def to_act(self, state: State) -> int | None:
        return None if state.winner is not None else SEATS.index(state.turn)

    def automatic(self, state: State) -> Action | None:
        return None

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if state.winner is not None or SEATS[seat] != state.turn:
            return []
        if state.can_throw:
            return [Roll()]
        if state.must_pass:
            return [Pass()]
        return list(state.legal_moves())

    def apply(self, state: State, seat: int, action: Action, rng: random.Random) -> Played:
        if state.winner is not None:
            raise IllegalMove("The game is over")
        if SEATS[seat] != state.turn:
            raise IllegalMove("Not your turn to play")
        match action:
            case Roll(throw=throw):
                thrown = throw or Throw.random(rng)
                state.throw(thrown)
                return Played("throw", {"sticks": list(thrown.sticks), "value": thrown.value})
            case Pass():
                state.pass_turn()
                return Played("pass", {})
            case Select(cell=cell):
                step_before = state.step
                move = state.select(cell)
                if move is not None:
                    return Played("move", {"from": move.origin, "to": move.destination, "captures": move.captures})
                if step_before == TO:
                    return Played("deselect", {"cell": cell})
                return Played("select", {"cell": cell, "destinations": list(state.selected or ())})
            case Move():
                state.apply(action)
                return Played("move", {"from": action.origin, "to": action.destination, "captures": action.captures})
        raise IllegalMove("Not an action of Tâb")

    def chances(self, state: State, seat: int, action: Action) -> list[tuple[Fraction, Action]] | None:
        if not isinstance(action, Roll) or action.throw is not None:
            return None
        return [(THROW_PROBABILITIES[value], Roll(Throw.of_value(value))) for value in THROW_VALUES]

    def heuristic(self, state: State, seat: int) -> float:
        # Material first (a piece taken is what wins), then how far the pieces have gone along their paths.
        color = SEATS[seat]
        balance = advance = 0.0
        for cell, piece in enumerate(state.pieces):
            if piece is None:
                continue
            sign = 1.0 if piece.color == color else -1.0
            balance += sign
            advance += sign * (own_path_position(cell, piece.color, state.size) / (4 * state.size))
        return max(-1.0, min(1.0, (balance + 0.25 * advance) / state.size))

    def logged_action(self, played: Played) -> Action:
        data = played.data
        try:
            match played.kind:
                case "throw":
                    return self.action_from_json({"kind": "roll", "sticks": data["sticks"]})
                case "select" | "deselect":
                    return Select(_cell(data, "cell"))
                case "move":
                    return Move(_cell(data, "from"), _cell(data, "to"), data["captures"] is True)
                case "pass":
                    return Pass()
        except KeyError as missing:
            raise IllegalAction(f"{played.kind} without {missing}") from None
        raise IllegalAction(f"Not an entry of Tâb's log: {played.kind!r}")

    def remove(self, state: State, seat: int) -> Played | None:
        return None  # a game for two ends when a player goes

    def outcome(self, state: State) -> Outcome | None:
        return None if state.winner is None else Outcome.win(SEATS.index(state.winner), len(SEATS))

    def copy(self, state: State) -> State:
        return state.copy()

    def state_to_json(self, state: State) -> dict[str, Any]:
        return state.to_json()

    def state_from_json(self, data: Mapping[str, Any]) -> State:
        return State.from_json(data)

    def action_to_json(self, action: Action) -> dict[str, Any]:
        match action:
            case Roll(throw=None):
                return {"kind": "roll"}
            case Roll(throw=Throw() as throw):
                return {"kind": "roll", "sticks": list(throw.sticks)}
            case Pass():
                return {"kind": "pass"}
            case Select(cell=cell):
                return {"kind": "select", "cell": cell}
            case Move(origin=origin, destination=destination, captures=captures):
                return {"kind": "move", "from": origin, "to": destination, "captures": captures}
        raise ValueError(f"not an action of Tâb: {action!r}")

    def action_from_json(self, data: Mapping[str, Any]) -> Action:
        kind = data.get("kind")
        if kind == "roll":
            if "sticks" not in data:
                return Roll()
            sticks = data["sticks"]
            if not isinstance(sticks, list) or len(sticks) != 4 or not all(isinstance(s, bool) for s in sticks):
                raise IllegalAction("sticks are four booleans")
            return Roll(Throw.of_sticks(sticks))
        if kind == "pass":
            return Pass()
        if kind == "select":
            return Select(_cell(data, "cell"))
        if kind == "move":
            return Move(_cell(data, "from"), _cell(data, "to"), data.get("captures") is True)
        raise IllegalAction(f"Unknown action {str(kind)[:40]!r}")


ENGINE: Engine[State, Action] = TabEngine()
