"""The draughts room server: one coroutine per TLS connection (core/lineservers.py runs it), reading lines, answering
each in order through the rooms' services (run in the process's database thread), and leaving the room when the
connection ends. A GET_STATE whose room has not changed since it was last read is answered from that read, kept in
memory (states.py).

A connection is outside a room, or in one with a colour (`Seated`). Bad input is answered and changes nothing; a line
too long is answered INVALID_SYNTAX and ends the connection. A server shutting down is not a player leaving: its
connections' colours stay in their rooms, and the players come back with JOIN.
"""

import asyncio
import contextlib
import logging
import uuid

from django.utils import timezone

from core.dbthread import in_database_thread
from core.errors import Refusal
from games.publication import channel_name

from . import presence, services, states
from .protocol import Command, Invalid, Lines, answer, failure, flag, parse

logger = logging.getLogger(__name__)

READ_SIZE = 4096

# The failure code of each command that can fail.
FAILURES = {
    "JOIN": "ROOM_NOT_FOUND",
    "MOVE": "MOVE_FAIL",
    "REQUEST_A_DRAW": "DRAW_FAIL",
    "CANCEL_DRAW_REQUEST": "DRAW_CANCEL_FAIL",
}

_room_create = in_database_thread(services.room_create)
_room_join = in_database_thread(services.room_join)
_room_leave = in_database_thread(services.room_leave)
_room_view_read = in_database_thread(services.room_view_read)
_room_move = in_database_thread(services.room_move)
_room_draw_request = in_database_thread(services.room_draw_request)
_room_draw_cancel = in_database_thread(services.room_draw_cancel)


class Quit(Exception):
    """The client asked to end the connection."""


class Connection:
    """One client's connection: where it is, and the token it holds its colour with."""

    def __init__(self) -> None:
        self.holder = services.Holder.new(presence.PROCESS)
        self.seated: services.Seated | None = None

    async def handle(self, line: bytes) -> bytes:
        """Return the answer to one line; raise Quit for QUIT."""
        try:
            command = parse(line, in_room=self.seated is not None)
        except Invalid as error:
            return failure("INVALID_SYNTAX", str(error))
        try:
            return await self.run(command)
        except Refusal as error:
            return failure(FAILURES.get(command.name, "INVALID_SYNTAX"), str(error))
        except Quit:
            raise
        except Exception:
            logger.exception("draughts: %s failed", command.name)
            return failure("SERVER_ERROR", "the command could not be carried out; try again")

    async def run(self, command: Command) -> bytes:
        match command.name:
            case "CREATE":
                room, self.seated = await _room_create(holder=self.holder)
                mine, other = (
                    (room.white_key, room.black_key) if room.creator == "w" else (room.black_key, room.white_key)
                )
                return answer("ROOM_CREATED", ROOM_ID=room.pk, PLAYER_COLOR_ID=mine, ENEMY_COLOR_ID=other)
            case "JOIN":
                room_id, key = (uuid.UUID(word) for word in command.arguments)
                self.seated = await _room_join(room_id=room_id, key=key, holder=self.holder)
                return answer("ROOM_JOINED")
            case "GET_STATE":
                assert self.seated is not None
                return state_line(await room_state(self.seated.room))
            case "MOVE":
                assert self.seated is not None
                await _room_move(seated=self.seated, squares=command.arguments)
                return answer("MOVE_OK")
            case "REQUEST_A_DRAW":
                assert self.seated is not None
                await _room_draw_request(seated=self.seated)
                return answer("DRAW_OK")
            case "CANCEL_DRAW_REQUEST":
                assert self.seated is not None
                await _room_draw_cancel(seated=self.seated)
                return answer("DRAW_CANCEL_OK")
            case "LEAVE":
                await self.leave()
                return answer("ROOM_LEFT")
            case "QUIT":
                raise Quit
        raise AssertionError(f"no handler for {command.name}")

    async def leave(self) -> None:
        if self.seated is not None:
            seated, self.seated = self.seated, None
            await _room_leave(seated=seated, holder=self.holder)


async def room_state(room_id: uuid.UUID) -> services.RoomView:
    """The room as GET_STATE shows it now: from what was read of it last, while nothing has changed it since (kept in
    this process: protocols/draughts/states.py), else read, and kept for the next GET_STATE."""
    kept = states.kept
    if kept is None:
        return (await _room_view_read(room_id=room_id))[0]
    key = states.channel(room_id)
    read = kept.answer(key)
    if read is not None and (view := services.view_at(read, timezone.now())) is not None:
        return view
    since = kept.since()
    view, read = await _room_view_read(room_id=room_id)
    kept.keep(key, since, (key, channel_name(read.game)), read)
    return view


def state_line(view: services.RoomView) -> bytes:
    """Return GET_STATE's answer: all nine variables, in the order of the protocol."""
    return answer(
        "STATUS_OK",
        STATE=view.state,
        PLAYER_TURN="WHITE" if view.turn == "w" else "BLACK",
        WHITE_WANTS_DRAW=flag(view.wants_draw[0]),
        BLACK_WANTS_DRAW=flag(view.wants_draw[1]),
        BLACK_TIME=view.times[1],
        WHITE_TIME=view.times[0],
        WHITE_ONLINE=flag(view.online[0]),
        BLACK_ONLINE=flag(view.online[1]),
        BOARD=view.board,
    )


_stopping = False


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    connection = Connection()
    lines = Lines()
    try:
        while data := await reader.read(READ_SIZE):
            for line in lines.feed(data):
                writer.write(await connection.handle(line))
            if lines.too_long:
                writer.write(failure("INVALID_SYNTAX", "a line is at most 1024 bytes; closing"))
                return
            await writer.drain()
    except Quit:
        pass
    finally:
        # The connection ends: its player leaves the room, unless the server is the one stopping.
        if not _stopping:
            with contextlib.suppress(Exception):
                await connection.leave()
        with contextlib.suppress(Exception):
            await writer.drain()


_renewing: asyncio.Task | None = None


async def _renew_forever() -> None:
    renew = in_database_thread(presence.holds_renew)
    while True:
        await asyncio.sleep(presence.HOLD_RENEWED_EVERY)
        try:
            await renew()
        except Exception:
            logger.exception("draughts: renewing the connections' holds failed")


async def start() -> None:
    """Before the server listens: a certificate if it has none, and the holds of departed processes cleared (after a
    restart, nobody is online and everybody may JOIN again)."""
    global _renewing, _stopping
    _stopping = False
    from django.conf import settings

    from core.lineservers import self_signed_certificate

    if not (settings.DRAUGHTS_TLS_CERT.exists() and settings.DRAUGHTS_TLS_KEY.exists()):
        await asyncio.to_thread(
            self_signed_certificate, settings.DRAUGHTS_TLS_CERT, settings.DRAUGHTS_TLS_KEY, ["localhost", "127.0.0.1"]
        )
    try:
        released = await in_database_thread(presence.holds_of_the_departed)()
    except Exception:
        # The database unreachable at start-up: the holds of departed processes lapse by themselves (HOLD_SECONDS).
        logger.exception("draughts: the holds of stopped processes could not be cleared")
    else:
        if released:
            logger.info("draughts: %d colours held by connections of stopped processes are free again", released)
    _renewing = asyncio.create_task(_renew_forever())


async def stop() -> None:
    """At shutdown: the connections about to be closed hold their colours no more, but their players stay in their
    rooms."""
    global _stopping
    _stopping = True
    if _renewing is not None:
        _renewing.cancel()
    try:
        await in_database_thread(presence.holds_release)(presence.PROCESS)
    except Exception:
        logger.exception("draughts: the holds of this process could not be released; they lapse by themselves")
