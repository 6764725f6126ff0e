"""The Fish server: a protocol per TCP connection (core/lineservers.py runs it), reading newline-delimited JSON
requests and answering each, in order, with one line, through the tournaments' services (run in the process's
database thread).

Tokens are not bound to connections: a connection holds nothing, and closing it changes nothing in any game. A line
too long is answered Unknown_Action and ends the connection; every other fault is answered and the connection goes
on. While the database cannot be reached, every request is answered Tournament_Error and nothing changes.
"""

import asyncio
import logging
from collections import deque
from collections.abc import Mapping
from typing import Any

from django.db import DatabaseError

from core.dbthread import submit
from core.lineservers import LineProtocol

from . import services
from .protocol import MAX_LINE, FishError, Lines, answer, failure, fields, player_count, read, token, tournament_name

logger = logging.getLogger(__name__)

TOO_LONG = f"a line is at most {MAX_LINE} bytes; closing"
# Complete lines waiting for their turn beyond which a connection's reading pauses.
PENDING_BYTES = 64 * 1024
UNREACHABLE = "the server cannot reach its database just now: nothing was changed; try again"


def _read(request_token: str, action: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """Answer a request that changes nothing (every action but the join, the placement and the move)."""
    found = services.current(request_token)
    given = fields(request)
    if given.error is not None:
        raise given.error
    match action:
        case "check_placement":
            return {"is_valid": services.check(found, "place", given)}
        case "check_move":
            return {"is_valid": services.check(found, "move", given)}
        case "check_turn":
            turn = found.turn()
            return {"color": None if turn is None else services.COLOURS[turn]}
        case "get_state":
            return {"current_state": services.state_json(found)}
        case "get_moves_for_color":
            assert given.color is not None
            return {"reachable_locations": services.moves_for_color(found, given.color)}
        case "get_moves_for_location":
            return {"reachable_locations": services.moves_for_location(found, *given.values)}
        case "is_game_over":
            return services.game_over(found)
    raise AssertionError(f"no reading for {action}")


def _join(request: Mapping[str, Any]) -> dict[str, Any]:
    name = tournament_name(request)
    players = player_count(request)
    user_token, colour = services.tournament_join(name=name, players=players)
    return {"user_token": user_token, "color": colour}


def _act(request_token: str, action: str, request: Mapping[str, Any]) -> dict[str, Any]:
    kind = "place" if action == "place_penguin" else "move"
    result = services.penguin_act(token=request_token, kind=kind, fields=fields(request))
    if isinstance(result, FishError):
        raise result
    return {"result_state": result}


def respond(request: Mapping[str, Any]) -> dict[str, Any]:
    """Return the answer to a request (its fields not yet checked); raise FishError for a refusal."""
    action = request["action"]
    if action == "join_tournament":
        return _join(request)
    request_token = token(request)
    if action in ("place_penguin", "move_penguin"):
        return _act(request_token, action, request)
    return _read(request_token, action, request)


def _reply(outcome: "asyncio.Future[dict[str, Any]]") -> bytes:
    """Return the answer line to a request's outcome in the database thread."""
    try:
        return answer(outcome.result())
    except FishError as error:
        return failure(error)
    except DatabaseError:
        logger.warning("fish: the database could not be reached", exc_info=True)
        return failure(FishError("Tournament_Error", UNREACHABLE))


class FishConnection(LineProtocol):
    """One client's connection: its lines answered one at a time, in order (a client may send several before reading
    the answers), each request run in the database thread and answered from its outcome's callback.

    Reading pauses while more than PENDING_BYTES of complete lines wait for their turn, and while the client does not
    read its answers (the transport's buffer is full); a line too long is answered after the lines before it, and
    ends the connection; so does the client's end of its sending, once everything before it is answered."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.lines = Lines()
        self.pending: deque[bytes] = deque()
        self.pending_bytes = 0
        self.asking = False  # a request is in the database thread
        self.writing_paused = self.reading_paused = self.ended = False

    def data_received(self, data: bytes) -> None:
        if self.lines.too_long:
            return  # not read: the connection ends once the lines before the one too long are answered
        for line in self.lines.feed(data):
            self.pending.append(line)
            self.pending_bytes += len(line)
        if (self.pending_bytes > PENDING_BYTES or self.lines.too_long) and not self.reading_paused:
            self.transport.pause_reading()
            self.reading_paused = True
        self._go_on()

    def eof_received(self) -> bool:
        self.ended = True
        self._go_on()
        return True  # the lines received are answered first; _go_on closes the connection then

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._go_on()

    def _go_on(self) -> None:
        """Answer the pending lines in order, as far as can be now."""
        try:
            self._answer_pending()
        except Exception:
            logger.exception("fish: a connection failed")
            self.transport.close()

    def _answer_pending(self) -> None:
        transport = self.transport
        while not self.asking and not self.writing_paused and not transport.is_closing():
            if not self.pending:
                if self.lines.too_long:
                    transport.write(failure(FishError("Unknown_Action", TOO_LONG)))
                    transport.close()
                elif self.ended:
                    transport.close()
                elif self.reading_paused:
                    self.reading_paused = False
                    transport.resume_reading()
                return
            line = self.pending.popleft()
            self.pending_bytes -= len(line)
            try:
                request = read(line)
            except FishError as error:
                transport.write(failure(error))
                continue
            if request is None:
                continue  # a blank line
            self.asking = True
            submit(respond, request).add_done_callback(self._answered)

    def _answered(self, outcome: "asyncio.Future[dict[str, Any]]") -> None:
        self.asking = False
        if self.transport.is_closing():
            return  # the client went away before its answer
        try:
            self.transport.write(_reply(outcome))
        except Exception:
            logger.exception("fish: a connection failed")
            self.transport.close()
            return
        self._go_on()
