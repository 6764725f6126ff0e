"""The Plakoto tables of the REST API: reset, seats, moves, and the reads the API answers with.

A table's current game is a match of the platform (games/services.py) between its two seats, W (seat 0) and B (seat
1), made when the second seat is taken: the platform rolls the dice when a turn begins (the engine's automatic
action), applies the turn timeout by its deadlines, logs every roll and move, and keeps the result. The API's own
checks come first, in the original's order, each with its message. Every change locks the table's row first, so the
requests on one table are applied one at a time.
"""

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from accounts.services import anonymous_players
from core import prepared
from core.errors import Refusal
from core.prepared import Prepared
from games import lobby, positions, publication, store
from games.lobby import Seek
from games.models import Game
from games.rules.plakoto import BLACK, OFF, SIDES, WHITE, Move, Stack, State
from games.services import GameError, NotYourTurn, checked_then_written, game_act, game_end, match_open, match_start

from . import polls
from .models import Table

# Endings the API calls "aborded": the player on turn stayed idle (whether anybody had moved yet or not), or left.
ABORTED = frozenset({Game.Ending.TIMEOUT, Game.Ending.ABANDONED, Game.Ending.LEAVE})


class ApiError(Refusal):
    """A refused request: `{"errormesg": str(error)}` with its status (400 unless said)."""


@dataclass(frozen=True, slots=True)
class TableRow:
    """What the reads show of a table's row (read-only: a model instance costs a poll more than its query)."""

    name: str
    w_username: str
    b_username: str
    w_token: str
    b_token: str
    w_last_action: datetime | None
    b_last_action: datetime | None
    last_change: datetime | None


@dataclass(frozen=True, slots=True)
class GameRow:
    """What the reads show of a table's current game."""

    pk: int
    public_id: str
    status: str
    ending: str
    winner_id: int | None
    changed_at: datetime | None


@dataclass(frozen=True, slots=True)
class TableView:
    """A table as the reads show it."""

    table: TableRow | None
    game: GameRow | None
    state: State

    @property
    def status(self) -> str:
        """The table's status in the API's words."""
        seated = self.table is not None and bool(self.table.w_token or self.table.b_token)
        return status_name(self.game, seated)


def status_name(game: GameRow | None, seated: bool) -> str:
    """The status of a table in the API's words, from its game, or without one whether a seat is taken."""
    if game is None:
        return "initialized" if seated else "not active"
    if game.status == Game.Status.PLAYING:
        return "started"
    if game.status == Game.Status.FINISHED and game.ending in ABORTED:
        return "aborded"
    if game.status == Game.Status.FINISHED:
        return "ended"
    return "initialized"


def game_row(game: Game) -> GameRow:
    return GameRow(game.pk, game.public_id, game.status, game.ending, game.winner_id, game.changed_at)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def stamp(moment: datetime | None) -> str | None:
    """Return a moment as the API writes it: "YYYY-MM-DD HH:MM:SS" in UTC (ISO's text without its offset: half the
    time of `strftime`; a move writes the moment it was made, read nowhere before)."""
    if moment is None:
        return None
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return moment.isoformat(" ", "seconds")[:19]


# What a read needs of a table and its game, in one query built once (clients poll: it is the API's hottest path).
_TABLE_COLUMNS = ("name", "w_username", "b_username", "w_token", "b_token", "w_last_action", "b_last_action")
_GAME_COLUMNS = ("public_id", "status", "ending", "winner", "changed_at")
_POSITION = 9 + len(_GAME_COLUMNS)  # the game's state, the last column
_table_query = Prepared(
    lambda name: Table.objects.filter(name=name).values_list(
        *_TABLE_COLUMNS, "last_change", "game", *(f"game__{column}" for column in _GAME_COLUMNS), "game__state"
    ),
    [(Table._meta.get_field("name"), "stand-in")],
    unconverted=(_POSITION,),  # decoded only if it is not the position this process kept
)


def table_view(name: str) -> TableView:
    """Read a table (never creating it): its row, its current game and that game's position (the rules' state, which
    the reads must not change: it may be shared with other reads, games/positions.py)."""
    row = _table_query.first(name)
    if row is None:
        return TableView(None, None, State.new())
    table = TableRow(*row[:8])
    game_id, text = row[8], row[_POSITION]
    game = None if game_id is None else GameRow(game_id, *row[9:_POSITION])
    if game is None or text is None:
        return TableView(table, game, State.new())
    kept = positions.peek(game.public_id, text)
    if kept is not None and isinstance(kept[1], State):
        return TableView(table, game, kept[1])
    position = _table_query.convert(_POSITION, text)
    return TableView(table, game, State.from_json(position) if position else State.new())


def colour_of(table: Table | TableRow | None, token: str | None) -> str | None:
    """Return the colour of the seat whose token this is, or None."""
    return None if table is None else _colour(table.w_token, table.b_token, token)


def _colour(white: str, black: str, token: str | None) -> str | None:
    """Return the colour of the seat whose token this is, given the hashes of the seats' tokens, or None."""
    if not token:
        return None
    hashed = token_hash(token)
    if white and secrets.compare_digest(hashed, white):
        return WHITE
    if black and secrets.compare_digest(hashed, black):
        return BLACK
    return None


def table_channel(name: str) -> str:
    """The publication channel of a table's own changes (a reset, a seat taken): its game's changes are the game's."""
    return f"plakoto-table-{name}"


def status_channels(name: str, public_id: str | None) -> tuple[str, ...]:
    """The channels of the changes that change a table's status: the table's own, and its game's (if it has one)."""
    table = table_channel(name)
    return (table,) if public_id is None else (table, publication.channel_name(public_id))


def _locked(name: str) -> Table:
    Table.objects.get_or_create(name=name)
    return Table.objects.select_for_update(of=("self",)).select_related("game").get(name=name)


def table_reset(*, name: str, token: str | None, staff: bool = False) -> None:
    """Start the table afresh: the starting position, both seats free. While a game is in play only one of its
    players (or an administrator: `staff`) may reset it, and that game ends with no result."""
    now = timezone.now()
    with transaction.atomic():
        table = _locked(name)
        game = table.game
        if game is not None and game.status == Game.Status.PLAYING:
            if not staff and not token:
                raise ApiError("token is not set.")
            if not staff and colour_of(table, token) is None:
                raise ApiError("You are not a player of this game.")
            game_end(public_id=game.public_id, opponent_wins=False)
        table.game = None
        table.w_username = table.b_username = table.w_token = table.b_token = ""
        table.w_user = table.b_user = None
        table.w_last_action = table.b_last_action = None
        table.last_change = now
        table.save()
        publication.announce_on_commit(table_channel(name))


def seat_take(*, name: str, colour: str, username: str, user_id: int | None = None) -> tuple[str, datetime]:
    """Take the seat of `colour` with a username (and the account of a signed-in player, if any); return the seat's
    token, shown only now, and when it was taken. The second seat taken starts the game: W's dice are rolled."""
    now = timezone.now()
    prefix = colour.lower()
    with transaction.atomic():
        table = _locked(name)
        if getattr(table, f"{prefix}_token"):
            raise ApiError(f"Player {colour} is already set. Please select another color.")
        token = secrets.token_hex(16)
        setattr(table, f"{prefix}_token", token_hash(token))
        setattr(table, f"{prefix}_username", username)
        setattr(table, f"{prefix}_user_id", user_id)
        setattr(table, f"{prefix}_last_action", now)
        table.last_change = now
        if table.w_token and table.b_token:
            table.game = _game_start(table)
        table.save()
        publication.announce_on_commit(table_channel(name))
    return token, now


def seat_computer(*, name: str, level: int) -> str:
    """Seat the computer player of `level` in the table's free seat (W if both are free); return its colour."""
    from games.bots import LEVELS, runner

    with transaction.atomic():
        table = _locked(name)
        free = [colour for colour in SIDES if not getattr(table, f"{colour.lower()}_token")]
        if not free:
            raise ApiError("Both seats are taken.")
    colour = free[0]
    computer = runner.computer_user(level)
    # The computer's token is never shown: it plays through the services, not the API.
    seat_take(name=name, colour=colour, username=f"computer ({LEVELS[level]})", user_id=computer.pk)
    return colour


def _game_start(table: Table) -> Game:
    white, black = anonymous_players()
    users = [table.w_user_id or white, table.b_user_id or black]
    if users[0] == users[1]:
        # One account in both seats (a person playing both sides): the second seat is the anonymous one's.
        users[1] = black if users[0] != black else white
    game = match_open(
        kind="plakoto",
        options={},
        user_ids=users,
        pool="" if None in (table.w_user_id, table.b_user_id) else "web",
        turn_seconds=settings.PLAKOTO_TURN_TIMEOUT,
    )
    return match_start(public_id=game.public_id, user_id=users[1])


# The row a move locks, read with its game's, in one statement built once (a move is the API's busiest write).
_move_query = Prepared(
    lambda name: (
        Table.objects.select_for_update(of=("self",))
        .filter(name=name)
        .values_list("pk", "w_token", "b_token", "game__public_id", "game__status")
    ),
    [(Table._meta.get_field("name"), "stand-in")],
)


def piece_move(*, name: str, token: str | None, x: int, y: int, destination: int) -> str:
    """Move the top piece of point `x` (the cell `x`, `y` must hold a free piece of the mover) to `destination`,
    with the checks of the API in their order. Return the board as the mover sees it then (`board_json`), from the
    position the move left (with the dice of the turn it began, if it ended one)."""
    now = timezone.now()
    kept = polls.polls
    since = kept.since() if kept is not None else 0
    with checked_then_written():
        row = _move_query.first(name)
        if not token:
            raise ApiError("token is not set.")
        pk, white, black, public_id, status = row or (None, "", "", None, None)
        colour = _colour(white, black, token)
        if row is None or colour is None:
            raise ApiError("You are not a player of this game.")
        if public_id is None or status != Game.Status.PLAYING:
            raise ApiError("Game is not in action.")

        def movable(state: object) -> None:
            assert isinstance(state, State)
            stack = state.points[x]
            if y > len(stack) or stack[y - 1][0] != colour or state.top(x) != colour:
                raise ApiError("This piece cannot move.")
            if (x, destination) not in state.plan():
                raise ApiError("This move is illegal.")

        user_id = store.seated(public_id)[SIDES.index(colour)]
        try:
            acted = game_act(
                public_id=public_id,
                user_id=user_id,
                action=Move(x, destination),
                check=movable,
            )
        except NotYourTurn:
            raise ApiError("It is not your turn.") from None
        except GameError:
            # Ended by its deadline between our read and the move.
            raise ApiError("Game is not in action.") from None
        prepared.update(Table, pk, {f"{colour.lower()}_last_action": now, "last_change": now})
        # Written before the commit, while the position is still this move's alone (its plan, worked out here, serves
        # the next move too).
        state = acted.state
        assert isinstance(state, State)
        if kept is not None:
            # The table's status as the move left it: its client, and its opponent, poll it next.
            game = game_row(acted.game)
            text = status_text(_status(state, game, status_name(game, True), now))
            kept.keep_on_commit(name, since, status_channels(name, public_id), text)
        return board_json(state, colour if state.result is None and state.turn == colour else None)


# --- What the reads answer ------------------------------------------------------------------------------------------


def cell(state: State, x: int, y: int) -> dict[str, Any]:
    stack = state.points[x]
    return _cell(x, y, stack[y - 1] if y <= len(stack) else None)


def _cell(x: int, y: int, piece: tuple[str, int] | None) -> dict[str, Any]:
    return {
        "x": x,
        "y": y,
        "b_color": "W" if x % 2 else "B",
        "piece_color": piece[0] if piece else None,
        "piece": f"P{piece[1]}" if piece else None,
    }


def mover(view: TableView, token: str | None) -> str | None:
    """Return the colour on turn if the token is theirs and the game in play (their board shows their moves)."""
    state = view.state
    if view.status == "started" and colour_of(view.table, token) == state.turn:
        return state.turn
    return None


def board(state: State, mover: str | None) -> list[dict[str, Any]]:
    """Return the board's cells, with the moves of `mover` (the player on turn, to whom it is shown), if any."""
    plan = state.plan() if mover else {}
    cells = []
    for x in range(1, 25):
        stack = state.points[x]
        for y in range(1, max(15, len(stack)) + 1):
            entry = cell(state, x, y)
            if mover and y == len(stack) and stack[-1][0] == mover:
                entry["moves"] = _moves(state, plan, mover, x)
            cells.append(entry)
    return cells


def _moves(state: State, plan: dict[tuple[int, int], int], mover: str, origin: int) -> list[dict[str, int]]:
    targets = sorted(destination for start, destination in plan if start == origin)
    return [_target(state, mover, destination) for destination in targets]


@cache
def _cell_json(x: int, y: int, piece: tuple[str, int] | None) -> str:
    """A cell's JSON without moves: a board is 360 cells, and clients read it often. Every cell that can be (24 × at
    most 30 heights × 31 pieces or none) is written once."""
    return json.dumps(_cell(x, y, piece))


@cache
def _empty_cells_json(x: int, first: int) -> str:
    """The JSON of the cells of point `x` from height `first` to 15, all empty (most of a board's 360 cells), written
    once for each point and height."""
    return ", ".join(_cell_json(x, y, None) for y in range(first, 16))


@lru_cache(maxsize=16384)
def _pieces_json(x: int, stack: Stack) -> str:
    """The JSON of the cells of point `x` holding the pieces of `stack` (a stack not empty), without moves: kept for
    the stacks met lately, as most of a board's points are as they were at its last reading."""
    return ", ".join([_cell_json(x, y, piece) for y, piece in enumerate(stack, 1)])


def board_json(state: State, mover: str | None) -> str:
    """Return `board(state, mover)` as JSON text, from the texts of its points and cells written once; a cell with
    moves is its text with theirs added (the standard library's text, as `json.dumps` writes it)."""
    targets: dict[int, list[int]] = {}
    if mover:
        for origin, destination in state.plan():
            targets.setdefault(origin, []).append(destination)
    parts = []
    for x in range(1, 25):
        stack = state.points[x]
        height = len(stack)
        if height and (not mover or stack[-1][0] != mover):
            parts.append(_pieces_json(x, stack))
        elif height:  # the mover's top piece shows its moves
            if height > 1:
                parts.append(_pieces_json(x, stack[:-1]))
            moves = ", ".join(_target_json(state, mover, destination) for destination in sorted(targets.get(x, ())))
            parts.append(f'{_cell_json(x, height, stack[-1])[:-1]}, "moves": [{moves}]}}')
        if height < 15:
            parts.append(_empty_cells_json(x, height + 1))
    return "[" + ", ".join(parts) + "]"


def _target_json(state: State, side: str, destination: int) -> str:
    target = _target(state, side, destination)
    return f'{{"x": {target["x"]}, "y": {target["y"]}}}'


def _target(state: State, side: str, destination: int) -> dict[str, int]:
    if destination == OFF[side]:
        return {"x": destination, "y": 0}
    return {"x": destination, "y": len(state.points[destination]) + 1}


def seats(view: TableView) -> dict[str, dict[str, Any]]:
    table = view.table
    answer = {}
    for colour in (BLACK, WHITE):
        prefix = colour.lower()
        taken = table is not None and bool(getattr(table, f"{prefix}_token"))
        answer[colour] = {
            "username": getattr(table, f"{prefix}_username") if taken else None,
            "piece_color": colour,
            "last_action": stamp(getattr(table, f"{prefix}_last_action")) if taken else None,
        }
    return answer


def status(view: TableView) -> dict[str, Any]:
    last_change = view.table.last_change if view.table is not None else None
    return _status(view.state, view.game, view.status, last_change)


def status_text(status: dict[str, Any]) -> bytes:
    """The answer of `GET status/` (JsonResponse's text: the standard library's, with spaces)."""
    return json.dumps([status]).encode()


def _status(state: State, game: GameRow | None, name: str, last_change: datetime | None) -> dict[str, Any]:
    result = score = None
    if name == "ended":
        result, score = state.result, state.score
    elif name == "aborded":
        assert game is not None
        winner = SIDES[store.seated(game.public_id).index(game.winner_id)] if game.winner_id else None
        result, score = winner, 1
    # The game changes by itself too: its rolls, its timeout, a computer's moves.
    if game is not None and game.changed_at and (last_change is None or game.changed_at > last_change):
        last_change = game.changed_at
    started = name == "started"
    return {
        "status": name,
        "p_turn": state.turn if started else None,
        "result": result,
        "last_change": stamp(last_change),
        "dice": list(state.dice) if started and state.dice else None,
        "dice_left": list(state.dice_left) if started else None,
        "score": score,
        "passes": [dict(entry) for entry in state.passes] if game is not None else [],
    }


# A table where one player sat down within this long is offered in the lobby, to play them.
SEEK_FRESH = timedelta(hours=1)


def lobby_seeks() -> list[Seek]:
    """The tables where one player waits for an opponent, newest first, as the lobby lists them."""
    play = reverse("play", args=["plakoto"])
    waiting = (
        Table.objects.filter(game__isnull=True, last_change__gte=timezone.now() - SEEK_FRESH)
        .filter(Q(w_token="") | Q(b_token=""))
        .exclude(w_token="", b_token="")
        .order_by("-last_change")
        .values_list("name", "w_username", "b_username", "last_change")[: lobby.SHOWN]
    )
    return [
        Seek(
            who=white or black,
            what=f"table {name} · plays {'White' if white else 'Black'}",
            url=f"{play}?{urlencode({'table': name})}",
            action=f"Play {white or black}",
            since=since,
        )
        for name, white, black, since in waiting
    ]
