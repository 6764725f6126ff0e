"""Hey, That's My Fish!, for 2 to 4 players: the board, the penguins and the legal placements and moves, as the Fish
protocol's page describes them (its sections "The board", "Rules", "Game over and winners" and "Kicking").

The board has 10 rows of 4 hexagonal tiles in the course's zig-zag layout: each odd row sits half a row lower and
half a step to the right of the even rows around it, so a tile's neighbours depend on whether its row is odd (see
`neighbour`). A tile holds 1 to 5 fish, or is a hole (0).

Players (seats 0 …, coloured red, white, brown, black in join order) first place their 6 − N penguins one a turn,
round-robin; then each turn one penguin moves in a straight line over free tiles, and the tile it leaves becomes a
hole whose fish the player scores. A player who cannot act is skipped; the game is over when no penguin can move. A
player may be removed (the protocol kicks one who errs): their penguins leave the board and they are skipped from
then on, keep their score, and rank after everyone still in.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from .base import Engine, IllegalAction, Outcome, Played

ROWS: Final = 10
COLUMNS: Final = 4
HOLES: Final = 4
MAX_FISH: Final = 5
COLOURS: Final = ("red", "white", "brown", "black")
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4
MAX_SEED: Final = 2**63

PLACEMENT: Final = "placement"
MOVEMENT: Final = "movement"
OVER: Final = "over"
PHASES: Final = (PLACEMENT, MOVEMENT, OVER)

# The course's order of the six directions; each is (row change, column change on an even row, on an odd row).
NORTH: Final = "north"
NORTHEAST: Final = "northeast"
SOUTHEAST: Final = "southeast"
SOUTH: Final = "south"
SOUTHWEST: Final = "southwest"
NORTHWEST: Final = "northwest"
DIRECTIONS: Final = (NORTH, NORTHEAST, SOUTHEAST, SOUTH, SOUTHWEST, NORTHWEST)
STEPS: Final[dict[str, tuple[int, int, int]]] = {
    NORTH: (-2, 0, 0),
    NORTHEAST: (-1, 0, 1),
    SOUTHEAST: (1, 0, 1),
    SOUTH: (2, 0, 0),
    SOUTHWEST: (1, -1, 0),
    NORTHWEST: (-1, -1, 0),
}

type Tile = tuple[int, int]  # (row, col)


class IllegalMove(IllegalAction):
    """An action the rules refuse (out of turn, in the wrong phase, a move they do not allow): the protocol's
    Invalid_Action. The message says why, for a person."""


class BadTile(IllegalAction):
    """A coordinate off the board or on a hole, or a placement on a tile with a penguin: the protocol's
    Invalid_Coordinate. The message says which tile, for a person."""


def penguins_each(players: int) -> int:
    """Return how many penguins each of `players` players has: 6 − N."""
    return 6 - players


def on_board(row: int, col: int) -> bool:
    return 0 <= row < ROWS and 0 <= col < COLUMNS


def neighbour(row: int, col: int, direction: str) -> Tile:
    """Return the tile next to (row, col) in `direction`, which may be off the board."""
    rows, even, odd = STEPS[direction]
    return row + rows, col + (odd if row % 2 else even)


def line(row: int, col: int, direction: str) -> Iterator[Tile]:
    """Yield the tiles of the straight line from (row, col) in `direction`, nearest first, up to the board's edge
    (holes and penguins aside)."""
    row, col = neighbour(row, col, direction)
    while on_board(row, col):
        yield row, col
        row, col = neighbour(row, col, direction)


# Every tile's six straight lines, in the course's order of directions, nearest tile first: the move generator looks
# them up instead of computing coordinates.
LINES: Final[dict[Tile, tuple[tuple[Tile, ...], ...]]] = {
    (row, col): tuple(tuple(line(row, col, direction)) for direction in DIRECTIONS)
    for row in range(ROWS)
    for col in range(COLUMNS)
}


def board_from_seed(seed: int) -> list[list[int]]:
    """Return the board that `seed` makes: HOLES holes at distinct random places, 1 to 5 fish on every other tile."""
    rng = random.Random(seed)
    holes = set(rng.sample(range(ROWS * COLUMNS), HOLES))
    return [
        [0 if row * COLUMNS + col in holes else rng.randint(1, MAX_FISH) for col in range(COLUMNS)]
        for row in range(ROWS)
    ]


def tile_name(tile: Tile) -> str:
    return f"({tile[0]}, {tile[1]})"


@dataclass(frozen=True, slots=True)
class Place:
    """Place a penguin on (row, col)."""

    row: int
    col: int


@dataclass(frozen=True, slots=True)
class Move:
    """Move the penguin on `start` to `end`, both (row, col)."""

    start: Tile
    end: Tile


@dataclass(frozen=True, slots=True)
class Remove:
    """Take the acting seat out of the game (the log's record of a removal, replayed like an action)."""


type Action = Place | Move | Remove


@dataclass(slots=True)
class State:
    """A position: the fish on each tile (0: a hole), each seat's penguins in placement order, the scores, the seats
    removed, the phase and the seat on turn (None once the game is over)."""

    board: list[list[int]]
    penguins: list[list[Tile]]
    scores: list[int]
    removed: list[bool]
    phase: str = PLACEMENT
    turn: int | None = 0

    @classmethod
    def new(cls, board: list[list[int]], players: int) -> State:
        """Return the start of a game of `players` on `board`: the placement phase, red on turn."""
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"Hey, That's My Fish! is played by {MIN_PLAYERS} to {MAX_PLAYERS}, not {players}")
        return cls([list(row) for row in board], [[] for _ in range(players)], [0] * players, [False] * players)

    @property
    def players(self) -> int:
        return len(self.penguins)

    def colour(self, seat: int) -> str:
        return COLOURS[seat]

    def copy(self) -> State:
        return State(
            [list(row) for row in self.board],
            [list(places) for places in self.penguins],
            list(self.scores),
            list(self.removed),
            self.phase,
            self.turn,
        )

    # --- The board -------------------------------------------------------------------------------------------------

    def taken(self) -> set[Tile]:
        """Return the tiles that have a penguin."""
        return {tile for places in self.penguins for tile in places}

    def owner(self, row: int, col: int) -> int | None:
        """Return the seat whose penguin stands on (row, col), or None."""
        for seat, places in enumerate(self.penguins):
            if (row, col) in places:
                return seat
        return None

    def is_free(self, row: int, col: int) -> bool:
        """Return whether a penguin may stand on (row, col): on the board, not a hole, no penguin."""
        return self._free((row, col), self.taken())

    def _free(self, tile: Tile, taken: set[Tile]) -> bool:
        return on_board(*tile) and self.board[tile[0]][tile[1]] > 0 and tile not in taken

    def check_tile(self, row: int, col: int) -> None:
        """Raise BadTile if (row, col) is off the board or a hole."""
        if not 0 <= row < ROWS:
            raise BadTile(f"row {row} is not on the board (rows 0 to {ROWS - 1})")
        if not 0 <= col < COLUMNS:
            raise BadTile(f"column {col} is not on the board (columns 0 to {COLUMNS - 1})")
        if self.board[row][col] == 0:
            raise BadTile(f"{tile_name((row, col))} is a hole")

    def fish(self) -> int:
        """Return the fish left on the board, tiles under penguins included."""
        return sum(sum(row) for row in self.board)

    # --- Who acts --------------------------------------------------------------------------------------------------

    def left_to_place(self, seat: int) -> int:
        """Return how many penguins `seat` has still to place (none once removed)."""
        return 0 if self.removed[seat] else penguins_each(self.players) - len(self.penguins[seat])

    def can_move(self, seat: int) -> bool:
        """Return whether one of `seat`'s penguins has a move."""
        taken = self.taken()
        return any(bool(tiles) and self._free(tiles[0], taken) for tile in self.penguins[seat] for tiles in LINES[tile])

    def _may_act(self, seat: int) -> bool:
        if self.removed[seat]:
            return False
        if self.phase == PLACEMENT:
            return self.left_to_place(seat) > 0
        return self.phase == MOVEMENT and self.can_move(seat)

    def _pass_turn(self, last: int) -> None:
        """Give the turn to the next seat after `last` that may act (`last` itself comes last), ending the placement
        phase once every seat still in has placed all its penguins, and the game once nobody may act."""
        if self.phase == PLACEMENT and not any(self.left_to_place(seat) for seat in range(self.players)):
            self.phase = MOVEMENT
        for step in range(1, self.players + 1):
            seat = (last + step) % self.players
            if self._may_act(seat):
                self.turn = seat
                return
        self.phase, self.turn = OVER, None

    # --- Placements and moves --------------------------------------------------------------------------------------

    def legal_placements(self, seat: int) -> list[Tile]:
        """Return the tiles where `seat` may place a penguin now, row by row (none when it may not place now)."""
        if self.phase != PLACEMENT or self.turn != seat:
            return []
        taken = self.taken()
        return [(row, col) for row in range(ROWS) for col in range(COLUMNS) if self._free((row, col), taken)]

    def moves_from(self, row: int, col: int) -> list[Move]:
        """Return the moves a penguin standing on (row, col) could make on the board as it is, whether or not one
        stands there: the directions in the course's order, nearest tile first. Raise BadTile off the board or on a
        hole."""
        self.check_tile(row, col)
        taken = self.taken()
        moves = []
        board = self.board
        for tiles in LINES[row, col]:
            for tile in tiles:
                if board[tile[0]][tile[1]] == 0 or tile in taken:
                    break
                moves.append(Move((row, col), tile))
        return moves

    def moves_of(self, seat: int) -> list[Move]:
        """Return every move `seat`'s penguins could make on the board as it is, whoever's turn it is: its penguins in
        placement order, then the directions, then the distance."""
        return [move for tile in self.penguins[seat] for move in self.moves_from(*tile)]

    def legal_moves(self, seat: int) -> list[Move]:
        """Return the moves `seat` may make now (none when it may not move now)."""
        if self.phase != MOVEMENT or self.turn != seat:
            return []
        return self.moves_of(seat)

    def _check_turn(self, seat: int, phase: str) -> None:
        if self.phase == OVER:
            raise IllegalMove("the game is over")
        if not 0 <= seat < self.players:
            raise IllegalMove(f"there is no seat {seat} in this game of {self.players}")
        if self.removed[seat]:
            raise IllegalMove(f"{COLOURS[seat]} was removed from the game")
        if self.phase != phase:
            if phase == PLACEMENT:
                raise IllegalMove("every penguin is placed: penguins move now")
            raise IllegalMove("penguins cannot move before every penguin is placed")
        if self.turn != seat:
            assert self.turn is not None
            raise IllegalMove(f"it is {COLOURS[self.turn]}'s turn, not {COLOURS[seat]}'s")

    def check_place(self, seat: int, row: int, col: int) -> None:
        """Raise the error that placing `seat`'s penguin on (row, col) would get, if any, in the protocol's order:
        the phase and the turn (IllegalMove), then the tile (BadTile)."""
        self._check_turn(seat, PLACEMENT)
        self.check_tile(row, col)
        if (row, col) in self.taken():
            raise BadTile(f"{tile_name((row, col))} already has a penguin")

    def check_move(self, seat: int, start: Tile, end: Tile) -> None:
        """Raise the error that moving `seat`'s penguin from `start` to `end` would get, if any, in the protocol's
        order: the phase and the turn (IllegalMove), the tiles (BadTile), then the move itself (IllegalMove)."""
        self._check_turn(seat, MOVEMENT)
        self.check_tile(*start)
        self.check_tile(*end)
        taken = self.taken()
        if start not in self.penguins[seat]:
            raise IllegalMove(f"{tile_name(start)} has no {COLOURS[seat]} penguin")
        if start == end:
            raise IllegalMove("a penguin must move at least one tile")
        if end in taken:
            raise IllegalMove(f"{tile_name(end)} already has a penguin")
        for tiles in LINES[start]:
            if end not in tiles:
                continue
            for tile in tiles[: tiles.index(end)]:
                if self.board[tile[0]][tile[1]] == 0:
                    raise IllegalMove(
                        f"the way from {tile_name(start)} to {tile_name(end)} crosses a hole at {tile_name(tile)}"
                    )
                if tile in taken:
                    raise IllegalMove(
                        f"the way from {tile_name(start)} to {tile_name(end)} crosses a penguin at {tile_name(tile)}"
                    )
            return
        raise IllegalMove(f"{tile_name(start)} to {tile_name(end)} is not a straight line")

    def is_legal_placement(self, seat: int, row: int, col: int) -> bool:
        try:
            self.check_place(seat, row, col)
        except IllegalAction:
            return False
        return True

    def is_legal_move(self, seat: int, start: Tile, end: Tile) -> bool:
        try:
            self.check_move(seat, start, end)
        except IllegalAction:
            return False
        return True

    def place(self, seat: int, row: int, col: int) -> None:
        """Place `seat`'s next penguin on (row, col) and pass the turn; raise IllegalMove or BadTile, changing
        nothing, if the rules refuse it."""
        self.check_place(seat, row, col)
        self.penguins[seat].append((row, col))
        self._pass_turn(seat)

    def move(self, seat: int, start: Tile, end: Tile) -> int:
        """Move `seat`'s penguin from `start` to `end`, score the fish of the tile it leaves (now a hole), pass the
        turn, and return the fish scored; raise IllegalMove or BadTile, changing nothing, if the rules refuse it."""
        self.check_move(seat, start, end)
        places = self.penguins[seat]
        places[places.index(start)] = end
        fish = self.board[start[0]][start[1]]
        self.board[start[0]][start[1]] = 0
        self.scores[seat] += fish
        self._pass_turn(seat)
        return fish

    def remove(self, seat: int) -> list[Tile]:
        """Take `seat` out of the game: its penguins leave the board (the tiles keep their fish), its score stays, and
        the turn passes on if it was its own. Return the tiles its penguins stood on."""
        if self.phase == OVER:
            raise IllegalMove("the game is over")
        if not 0 <= seat < self.players:
            raise IllegalMove(f"there is no seat {seat} in this game of {self.players}")
        if self.removed[seat]:
            raise IllegalMove(f"{COLOURS[seat]} was removed from the game already")
        places, self.penguins[seat] = self.penguins[seat], []
        self.removed[seat] = True
        if self.turn == seat:
            self._pass_turn(seat)
        return places

    # --- The end ---------------------------------------------------------------------------------------------------

    def ranks(self) -> tuple[int, ...] | None:
        """Return each seat's rank once the game is over (the seats still in by score, highest first, equal scores
        sharing a place; every removed seat after them all), or None while it goes on or when every seat was
        removed."""
        if self.phase != OVER or all(self.removed):
            return None
        scores = [score for seat, score in enumerate(self.scores) if not self.removed[seat]]
        last = len(scores) + 1
        return tuple(
            last if gone else 1 + sum(other > score for other in scores)
            for score, gone in zip(self.scores, self.removed, strict=True)
        )

    def winners(self) -> list[int]:
        """Return the seats that won (still in, with the highest score), in join order; none before the end or when
        every seat was removed."""
        ranks = self.ranks()
        return [] if ranks is None else [seat for seat, rank in enumerate(ranks) if rank == 1]

    # --- JSON ------------------------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "board": [list(row) for row in self.board],
            "players": [
                {
                    "color": COLOURS[seat],
                    "score": self.scores[seat],
                    "places": [{"row": row, "col": col} for row, col in self.penguins[seat]],
                }
                for seat in range(self.players)
            ],
            "removed": [COLOURS[seat] for seat in range(self.players) if self.removed[seat]],
            "phase": self.phase,
            "turn": None if self.turn is None else COLOURS[self.turn],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Rebuild a state from `to_json`'s output; raise ValueError if it is not a position of the game."""
        try:
            state = _parse(data)
        except (KeyError, TypeError, IndexError, AttributeError) as error:
            raise ValueError(f"not a Fish state: {error!r}") from None
        _validate(state)
        return state


def _integer(value: object, low: int, high: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"not a Fish state: {name} is an integer from {low} to {high}")
    return value


def _parse(data: Mapping[str, Any]) -> State:
    board = data["board"]
    if not isinstance(board, list) or len(board) != ROWS:
        raise ValueError(f"not a Fish state: the board has {ROWS} rows")
    rows = []
    for row in board:
        if not isinstance(row, list) or len(row) != COLUMNS:
            raise ValueError(f"not a Fish state: a row has {COLUMNS} tiles")
        rows.append([_integer(fish, 0, MAX_FISH, "a tile's fish") for fish in row])
    players = data["players"]
    if not isinstance(players, list) or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise ValueError(f"not a Fish state: {MIN_PLAYERS} to {MAX_PLAYERS} players")
    penguins, scores = [], []
    for seat, player in enumerate(players):
        if player["color"] != COLOURS[seat]:
            raise ValueError(f"not a Fish state: player {seat} is {COLOURS[seat]}")
        scores.append(_integer(player["score"], 0, ROWS * COLUMNS * MAX_FISH, "a score"))
        places = player["places"]
        if not isinstance(places, list):
            raise ValueError("not a Fish state: places are a list")
        penguins.append(
            [
                (_integer(place["row"], 0, ROWS - 1, "a row"), _integer(place["col"], 0, COLUMNS - 1, "a column"))
                for place in places
            ]
        )
    removed = data["removed"]
    if not isinstance(removed, list) or not set(removed) <= set(COLOURS[: len(players)]):
        raise ValueError("not a Fish state: removed lists colours of the game")
    phase, turn = data["phase"], data["turn"]
    if phase not in PHASES:
        raise ValueError(f"not a Fish state: the phase is one of {', '.join(PHASES)}")
    if turn is not None and turn not in COLOURS[: len(players)]:
        raise ValueError("not a Fish state: the turn is a colour of the game, or null")
    return State(
        rows,
        penguins,
        scores,
        [colour in removed for colour in COLOURS[: len(players)]],
        phase,
        None if turn is None else COLOURS.index(turn),
    )


def _validate(state: State) -> None:
    """Raise ValueError unless `state` is a position that the rules can reach."""
    tiles = [tile for places in state.penguins for tile in places]
    if len(set(tiles)) != len(tiles) or any(state.board[row][col] == 0 for row, col in tiles):
        raise ValueError("not a Fish state: penguins stand on distinct tiles that are not holes")
    each = penguins_each(state.players)
    for seat, places in enumerate(state.penguins):
        if state.removed[seat] and places:
            raise ValueError("not a Fish state: a removed player has no penguin on the board")
        if len(places) > each or (state.phase != PLACEMENT and not state.removed[seat] and len(places) < each):
            raise ValueError(f"not a Fish state: a player has {each} penguins, placed before any moves")
    taken = set(tiles)
    free = sum(
        fish > 0 and (row, col) not in taken for row, line in enumerate(state.board) for col, fish in enumerate(line)
    )
    if state.phase == PLACEMENT and free < sum(state.left_to_place(seat) for seat in range(state.players)):
        raise ValueError("not a Fish state: too few free tiles for the penguins left to place")
    if state.phase == OVER:
        if state.turn is not None or any(state.can_move(seat) for seat in range(state.players)):
            raise ValueError("not a Fish state: nobody is on turn and no penguin can move once the game is over")
    elif state.turn is None or not state._may_act(state.turn):
        raise ValueError("not a Fish state: the seat on turn is one that may act")


# --- The engine: Fish behind the platform's interface (games/rules/base.py) -----------------------------------------


def _coordinate(value: object) -> Tile:
    if not isinstance(value, Mapping):
        raise IllegalMove("a tile is {row, col}")
    row, col = value.get("row"), value.get("col")
    if isinstance(row, bool) or isinstance(col, bool) or not isinstance(row, int) or not isinstance(col, int):
        raise IllegalMove("a tile's row and col are integers")
    return row, col


def _tile_json(tile: Tile) -> dict[str, int]:
    return {"row": tile[0], "col": tile[1]}


class FishEngine:
    """Hey, That's My Fish! for 2 to 4 seats (red, white, brown, black); the option `seed` fixes the board."""

    kind = "fish"
    title = "Hey, That's My Fish!"
    min_seats = MIN_PLAYERS
    max_seats = MAX_PLAYERS
    chance = False  # the board is random, but drawn before the first action
    scored = False
    action_labels: Mapping[str, str] = {
        "place": "placed a penguin",
        "move": "moved a penguin",
        "remove": "was removed from the game",
    }

    def options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(str(key) for key in raw if key != "seed")
        if unknown:
            raise ValueError(f"unknown option {unknown[0][:40]!r}: Fish has only a board's seed")
        if "seed" not in raw:
            # A match keeps its board's seed in its options, so that a replay deals the same board.
            return {"seed": random.SystemRandom().randrange(MAX_SEED)}
        seed = raw["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < MAX_SEED:
            raise ValueError("seed: an integer from 0 to 2**63 - 1")
        return {"seed": seed}

    def variant(self, options: Mapping[str, Any]) -> str:
        return ""

    def variant_label(self, variant: str) -> str:
        return ""

    def new(self, seats: int, options: Mapping[str, Any], rng: random.Random) -> State:
        seed = options.get("seed")
        return State.new(board_from_seed(rng.randrange(MAX_SEED) if seed is None else seed), seats)

    def seats(self, state: State) -> int:
        return state.players

    def to_act(self, state: State) -> int | None:
        return state.turn

    def automatic(self, state: State) -> Action | None:
        return None

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if state.phase == PLACEMENT:
            return [Place(row, col) for row, col in state.legal_placements(seat)]
        return list(state.legal_moves(seat))

    def apply(self, state: State, seat: int, action: Action, rng: random.Random) -> Played:
        match action:
            case Place(row=row, col=col):
                state.place(seat, row, col)
                return Played("place", {"row": row, "col": col})
            case Move(start=start, end=end):
                fish = state.move(seat, start, end)
                return Played("move", {"start": _tile_json(start), "end": _tile_json(end), "fish": fish})
            case Remove():
                places = state.remove(seat)
                return Played("remove", {"places": [_tile_json(tile) for tile in places]})
        raise IllegalMove("not an action of Fish")

    def chances(self, state: State, seat: int, action: Action) -> list[tuple[Fraction, Action]] | None:
        return None

    def heuristic(self, state: State, seat: int) -> float:
        # What a seat has scored, and half of what its penguins can reach in one move (it will get some of it), against
        # the best of its opponents.
        if state.removed[seat]:
            return -1.0

        def worth(each: int) -> float:
            reachable = {move.end for move in state.moves_of(each)}
            return state.scores[each] + 0.5 * sum(state.board[row][col] for row, col in reachable)

        others = [worth(other) for other in range(state.players) if other != seat and not state.removed[other]]
        lead = worth(seat) - max(others, default=0.0)
        return max(-1.0, min(1.0, lead / 40))

    def logged_action(self, played: Played) -> Action:
        data = played.data
        match played.kind:
            case "place":
                return Place(*_coordinate(data))
            case "move":
                return Move(_coordinate(data.get("start")), _coordinate(data.get("end")))
            case "remove":
                return Remove()
        raise IllegalAction(f"not an entry of Fish's log: {str(played.kind)[:40]!r}")

    def remove(self, state: State, seat: int) -> Played | None:
        return self.apply(state, seat, Remove(), random.Random(0))

    def outcome(self, state: State) -> Outcome | None:
        ranks = state.ranks()
        return None if ranks is None else Outcome(ranks, "score")

    def copy(self, state: State) -> State:
        return state.copy()

    def state_to_json(self, state: State) -> dict[str, Any]:
        return state.to_json()

    def state_from_json(self, data: Mapping[str, Any]) -> State:
        return State.from_json(data)

    def action_to_json(self, action: Action) -> dict[str, Any]:
        match action:
            case Place(row=row, col=col):
                return {"kind": "place", "row": row, "col": col}
            case Move(start=start, end=end):
                return {"kind": "move", "start": _tile_json(start), "end": _tile_json(end)}
            case Remove():
                return {"kind": "remove"}
        raise ValueError(f"not an action of Fish: {action!r}")

    def action_from_json(self, data: Mapping[str, Any]) -> Action:
        if not isinstance(data, Mapping):
            raise IllegalAction("an action is a JSON object")
        kind = data.get("kind")
        if kind == "place":
            return Place(*_coordinate(data))
        if kind == "move":
            return Move(_coordinate(data.get("start")), _coordinate(data.get("end")))
        if kind == "remove":
            return Remove()
        raise IllegalAction(f"unknown action {str(kind)[:40]!r}")


ENGINE: Engine[State, Action] = FishEngine()
