"""The draughts rooms: made, joined, left and read, whatever the transport (the TLS line server, the web page).

A room is a match of the platform (games/services.py) for two seats, white (seat 0) and black (seat 1), whose seats
are taken by two anonymous accounts, or by one of them and the computer. Moves, draw requests and clocks are the
platform's services; this module adds what a room is: its UUIDs, who is in it and who holds each colour now.

Every change is one transaction, committed before the caller answers. The room's row is locked (select_for_update)
by whatever changes who is in it, so that a JOIN and a LEAVE of one room are applied one at a time.
"""

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.services import anonymous_players
from core.errors import Refusal
from core.prepared import Prepared, update
from games import store
from games.bots import runner
from games.models import Game
from games.publication import channel_name
from games.rules import IllegalAction
from games.rules.draughts import BLACK, START, WHITE, Move, parse_path
from games.services import (
    GameError,
    game_act,
    game_draw_cancel,
    game_draw_offer,
    game_end,
    game_expire,
    match_open,
    match_start,
    remaining_ms,
)

from . import presence, states
from .models import Room

COLOURS = {WHITE: "white", BLACK: "black"}
# The room id that the queries built once (`Prepared`) are built with, in place of each call's own.
_STAND_IN = uuid.UUID(int=0x5EED)


class RoomNotFound(Refusal):
    """No such room (never made, or deleted), not one of its colours, or that colour held by another connection."""

    status = 404


@dataclass(frozen=True, slots=True)
class Holder:
    """A connection that may hold a colour: its token, and the server process it is served by ("" for a web page,
    whose hold lasts as long as the page renews it)."""

    token: str
    process: str = ""

    @classmethod
    def new(cls, process: str = "") -> "Holder":
        return cls(secrets.token_hex(12), process)


@dataclass(frozen=True, slots=True)
class Seated:
    """A colour of a room, as a connection in the room knows it."""

    room: uuid.UUID
    colour: str  # "w" or "b"
    game: str  # the match's public id
    user_id: int


@dataclass(frozen=True, slots=True)
class RoomView:
    """A room as GET_STATE shows it."""

    state: str  # WAITING, PLAYING, DRAW, WHITE_WON, BLACK_WON
    turn: str  # "w" or "b"
    wants_draw: tuple[bool, bool]  # white's, black's
    times: tuple[int, int]  # milliseconds left: white's, black's
    online: tuple[bool, bool]
    board: str
    version: int
    game: str  # the match's public id


def _holding(colour: str, holder: Holder, now: datetime) -> dict[str, object]:
    """The room's columns that put the colour in the room, held by `holder` from `now` on."""
    name = COLOURS[colour]
    return {
        f"{name}_in": True,
        f"{name}_holder": holder.token,
        f"{name}_process": holder.process,
        f"{name}_held_until": presence.hold_until(now),
    }


def _unholding(colour: str) -> dict[str, object]:
    """The room's columns that say nobody holds the colour."""
    name = COLOURS[colour]
    return {f"{name}_holder": "", f"{name}_process": "", f"{name}_held_until": None}


def _hold(room: Room, colour: str, holder: Holder, now: datetime) -> None:
    for column, value in _holding(colour, holder, now).items():
        setattr(room, column, value)


def _unhold(room: Room, colour: str) -> None:
    for column, value in _unholding(colour).items():
        setattr(room, column, value)


def _seated(room: Room, colour: str) -> Seated:
    index = 0 if colour == WHITE else 1
    return Seated(room.pk, colour, room.game.public_id, room.game.seat_user_ids[index])


def room_create(
    *, holder: Holder, computer_level: int | None = None, colour: str | None = None, hold: bool = True
) -> tuple[Room, Seated]:
    """Make a room, its creator in it with a colour drawn at random (or `colour`), and the other colour free for
    whoever is given its UUID; with `computer_level`, the computer takes the other colour and the game starts.
    Without `hold`, the creator's colour is in the room but held by nobody, for a line client to JOIN it."""
    now = timezone.now()
    creator = colour or secrets.choice((WHITE, BLACK))
    white, black = anonymous_players()
    users = {WHITE: white, BLACK: black}
    if computer_level is not None:
        users[WHITE if creator == BLACK else BLACK] = runner.computer_user(computer_level).pk
    with transaction.atomic():
        game = match_open(
            kind="draughts", options={}, user_ids=[users[WHITE], users[BLACK]], clock_ms=settings.DRAUGHTS_CLOCK_MS
        )
        room = Room(game=game, creator=creator)
        if hold:
            _hold(room, creator, holder, now)
        else:
            setattr(room, f"{COLOURS[creator]}_in", True)
        if computer_level is not None:
            other = COLOURS[WHITE if creator == BLACK else BLACK]
            setattr(room, f"{other}_in", True)
        room.save()
        if computer_level is not None:
            match_start(public_id=game.public_id, user_id=users[creator])
    return room, _seated(room, creator)


def _locked_room(room_id: uuid.UUID) -> Room:
    room = Room.objects.select_for_update().select_related("game").filter(pk=room_id, deleted_at=None).first()
    if room is None:
        raise RoomNotFound("no such room")
    return room


# What a JOIN reads of its room, its row locked: its colours' UUIDs, who is in it and holds each colour, its game.
_join_query = Prepared(
    lambda room_id: (
        Room.objects.select_for_update()
        .filter(pk=room_id, deleted_at=None)
        .values_list(
            "white_key",
            "black_key",
            "white_in",
            "black_in",
            "white_holder",
            "black_holder",
            "white_process",
            "black_process",
            "white_held_until",
            "black_held_until",
            "game__public_id",
            "game__status",
        )
    ),
    [(Room._meta.pk, _STAND_IN)],
)


def room_join(*, room_id: uuid.UUID, key: uuid.UUID, holder: Holder) -> Seated:
    """Put the connection in the room with the colour whose UUID is `key`; the first coming of the second colour
    starts the game. A colour held by a live connection cannot be joined (no take-over), except a web page's by
    another page. (Read and written by statements built once: rooms are joined again whenever a game ends.)"""
    now = timezone.now()
    with transaction.atomic():
        row = _join_query.first(room_id)
        if row is None:
            raise RoomNotFound("no such room")
        white_key, black_key, white_in, black_in, *holds, public_id, status = row
        if key == white_key:
            colour = WHITE
        elif key == black_key:
            colour = BLACK
        else:
            raise RoomNotFound("not a colour of this room")
        mine = 0 if colour == WHITE else 1
        held_by, process, until = holds[mine], holds[2 + mine], holds[4 + mine]
        if presence.held(held_by, until, now):
            taken_by_page = process == "" and holder.process == ""
            if not taken_by_page:
                raise RoomNotFound("this colour is held by another connection")
        update(Room, room_id, _holding(colour, holder, now))
        states.room_changed(room_id)
        # A room's two seats are taken when it is made, for good: remembered once read.
        seated = Seated(room_id, colour, public_id, store.seated(public_id)[mine])
        other_in = black_in if colour == WHITE else white_in
        if status == Game.Status.WAITING and other_in:
            match_start(public_id=public_id, user_id=seated.user_id)
        return seated


def room_seated(*, room_id: uuid.UUID, key: uuid.UUID) -> Seated:
    """Return the colour of the room whose UUID is `key` (a web page's credential for each action)."""
    room = Room.objects.select_related("game").filter(pk=room_id, deleted_at=None).first()
    if room is None or key not in (room.white_key, room.black_key):
        raise RoomNotFound("no such room, or not one of its colours")
    return _seated(room, WHITE if key == room.white_key else BLACK)


# What a LEAVE reads of its room, its row locked: who is in it and who holds each colour (the games' end makes rooms
# again by the hundred a minute: through the ORM's queryset and save, a LEAVE cost five times this).
_leave_query = Prepared(
    lambda room_id: (
        Room.objects.select_for_update()
        .filter(pk=room_id, deleted_at=None)
        .values_list("white_in", "black_in", "white_holder", "black_holder")
    ),
    [(Room._meta.pk, _STAND_IN)],
)


def room_leave(*, seated: Seated, holder: Holder) -> None:
    """Take the connection out of the room (LEAVE, QUIT, a closed connection): the colour is free for a later JOIN,
    and the room is deleted if neither colour is in it now."""
    now = timezone.now()
    # No savepoint of its own: nothing is refused after the write.
    with transaction.atomic(savepoint=False):
        row = _leave_query.first(seated.room)
        if row is None:
            return  # deleted meanwhile
        white_in, black_in, white_holder, black_holder = row
        mine = seated.colour == WHITE
        if (white_holder if mine else black_holder) != holder.token:
            return  # held by another page since
        name = COLOURS[seated.colour]
        values = {f"{name}_in": False, **_unholding(seated.colour)}
        if not (black_in if mine else white_in):
            values["deleted_at"] = now
        update(Room, seated.room, values)
        states.room_changed(seated.room)


def room_release(*, seated: Seated, holder: Holder) -> None:
    """The connection is gone, but its player has not left (a server shutting down, a page closed): the colour is no
    longer held, and stays in the room."""
    name = COLOURS[seated.colour]
    if Room.objects.filter(pk=seated.room, **{f"{name}_holder": holder.token}).update(**_unholding(seated.colour)):
        states.room_changed(seated.room)


def room_renew(*, seated: Seated, holder: Holder) -> bool:
    """Renew a web page's hold of its colour; return False if it holds it no more (taken over, or the room gone)."""
    name = COLOURS[seated.colour]
    renewed = Room.objects.filter(pk=seated.room, deleted_at=None, **{f"{name}_holder": holder.token}).update(
        **{f"{name}_held_until": presence.hold_until(timezone.now())}
    )
    if renewed:
        states.room_changed(seated.room)
    return renewed == 1


def _state_name(status: str, winner: int | None, public_id: str) -> str:
    if status == Game.Status.WAITING:
        return "WAITING"
    if status == Game.Status.PLAYING:
        return "PLAYING"
    if winner is not None:
        return "WHITE_WON" if winner == store.seated(public_id)[0] else "BLACK_WON"
    # Drawn by agreement, or ended by an administrator with no result.
    return "DRAW"


# What GET_STATE reads: the room's holds and its game, in one query built once (it is asked for most often).
_VIEW_COLUMNS = (
    "white_holder",
    "white_process",
    "white_held_until",
    "black_holder",
    "black_process",
    "black_held_until",
    "game__public_id",
    "game__status",
    "game__state",
    "game__version",
    "game__deadline",
    "game__winner",
    "game__clock_ms",
    "game__clocks",
    "game__draw_offers",
)
_view_query = Prepared(
    lambda room_id: Room.objects.filter(pk=room_id).values_list(*_VIEW_COLUMNS), [(Room._meta.pk, _STAND_IN)]
)


# Who holds a colour, in which server process, and until when (presence.py).
Hold = tuple[str, str, datetime | None]


@dataclass(frozen=True, slots=True)
class RoomRead:
    """What GET_STATE reads of a room: all it shows but what depends on the time it is asked (`view_at`)."""

    state: str
    turn: str
    wants_draw: tuple[bool, bool]
    times: tuple[int, int]  # milliseconds left at the turn's start: white's, black's
    deadline: datetime | None  # when the clock of the side to move runs out, if it runs
    holds: tuple[Hold, Hold]  # white's, black's
    board: str
    version: int
    game: str


def room_read(*, room_id: uuid.UUID) -> RoomRead:
    """Return the room as it is now (a clock that has run out ends its game first)."""
    now = timezone.now()
    row = _view_query.first(room_id)
    if row is None:
        raise RoomNotFound("no such room")
    # The holds read as they are: a Room built for them drew its three default UUIDs from the system's random source.
    public_id, status, deadline = row[6], row[7], row[10]
    if status == Game.Status.PLAYING and deadline is not None and deadline <= now:
        game_expire(public_id=public_id)
        return room_read(room_id=room_id)
    return _read_of((row[:3], row[3:6]), *row[6:])


def _read_of(
    holds: tuple[Hold, Hold],
    public_id: str,
    status: str,
    state: dict | None,
    version: int,
    deadline: datetime | None,
    winner: int | None,
    clock_ms: int | None,
    clocks: list[int] | None,
    offers: list[int] | None,
) -> RoomRead:
    state = state or {"board": START, "turn": WHITE}
    times = clocks or [clock_ms or settings.DRAUGHTS_CLOCK_MS] * 2
    offers = offers or []
    return RoomRead(
        state=_state_name(status, winner, public_id),
        turn=state["turn"],
        wants_draw=(0 in offers, 1 in offers),
        times=(times[0], times[1]),
        deadline=deadline if status == Game.Status.PLAYING else None,
        holds=holds,
        board=state["board"],
        version=version,
        game=public_id,
    )


def view_at(read: RoomRead, now: datetime) -> RoomView | None:
    """The room as GET_STATE shows it at `now`, from what was read of it; None once its running clock has run out
    (a read ends its game: `room_read`)."""
    times = read.times
    if read.deadline is not None:
        if read.deadline <= now:
            return None
        left = remaining_ms(read.deadline, now)
        times = (left, times[1]) if read.turn == WHITE else (times[0], left)
    return RoomView(
        state=read.state,
        turn=read.turn,
        wants_draw=read.wants_draw,
        times=times,
        online=(_online(read.holds[0], now), _online(read.holds[1], now)),
        board=read.board,
        version=read.version,
        game=read.game,
    )


def _online(hold: Hold, now: datetime) -> bool:
    """Whether a hold counts at `now`: a hold of this process's counts until its latest renewal's time, if later than
    the one read (the database has it: a renewal writes it into every hold of the process's, presence.holds_renew)."""
    holder, process, until = hold
    renewed = states.renewed_until
    if process == presence.PROCESS and until is not None and renewed is not None and renewed > until:
        until = renewed
    return presence.held(holder, until, now)


def room_view(*, room_id: uuid.UUID) -> RoomView:
    """Return the room as it is now, its running clock read now (a clock that has run out ends its game first)."""
    return room_view_read(room_id=room_id)[0]


def room_view_read(*, room_id: uuid.UUID) -> tuple[RoomView, RoomRead]:
    """The room as it is now, and what was read of it (`states`: kept for the next GET_STATE)."""
    while True:
        read = room_read(room_id=room_id)
        view = view_at(read, timezone.now())
        if view is not None:
            return view, read


def room_move(*, seated: Seated, squares: list[str]) -> None:
    """Make the colour's move: the squares its piece stops on, start first. GameError says why not."""
    try:
        path = parse_path(squares)
    except IllegalAction as error:
        raise GameError(str(error)) from None
    kept = states.kept
    if kept is not None:
        key = states.channel(seated.room)
        since, before = kept.since(), kept.entry(key)
    game = game_act(
        public_id=seated.game, user_id=seated.user_id, action=Move(path), not_your_turn="not your turn"
    ).game
    if kept is not None and before is not None:
        # What the next GET_STATE reads: the game as the move left it, the room's holds as the last read had them
        # (kept only if the room has not changed since, not even by this thread's calls: `settled`).
        read = _read_of(
            before[0].holds,
            game.public_id,
            game.status,
            game.state,
            game.version,
            game.deadline,
            game.winner_id,
            game.clock_ms,
            game.clocks,
            game.draw_offers,
        )
        kept.keep_on_commit(key, since, (key, channel_name(game.public_id)), read, settled=(key,), expires=before[1])


def room_draw_request(*, seated: Seated) -> None:
    game_draw_offer(public_id=seated.game, user_id=seated.user_id)


def room_draw_cancel(*, seated: Seated) -> None:
    game_draw_cancel(public_id=seated.game, user_id=seated.user_id)


def room_close(*, room_id: uuid.UUID) -> None:
    """Delete a stuck room (an administrator's decision): its UUIDs are retired, nobody is in it any more, and its
    game, if not over, ends with no result."""
    with transaction.atomic():
        room = _locked_room(room_id)
        room.white_in = room.black_in = False
        _unhold(room, WHITE)
        _unhold(room, BLACK)
        room.deleted_at = timezone.now()
        room.save()
        states.room_changed(room_id)
        if room.game.status != Game.Status.FINISHED:
            game_end(public_id=room.game.public_id, opponent_wins=False)
