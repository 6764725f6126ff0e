"""The Fish server: one coroutine per TCP connection (core/lineservers.py runs it), reading newline-delimited JSON
requests and answering each, in order, with one line, through the tournaments' services (run in the process's
database thread).

Tokens are not bound to connections: a connection holds nothing, and closing it changes nothing in any game. A line
too long is answered Unknown_Action and ends the connection; every other fault is answered and the connection goes
on. While the database cannot be reached, every request is answered Tournament_Error and nothing changes.
"""

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from django.db import DatabaseError

from core.dbthread import in_database_thread

from . import services
from .protocol import MAX_LINE, FishError, Lines, answer, failure, fields, player_count, read, token, tournament_name

logger = logging.getLogger(__name__)

READ_SIZE = 16 * 1024
UNREACHABLE = "the server cannot reach its database just now: nothing was changed; try again"


def _read(request_token: str, action: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """Answer a request that changes nothing (every action but the join, the placement and the move)."""
    found = services.reading(request_token)
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


_respond = in_database_thread(respond)


async def handle_line(line: bytes) -> bytes | None:
    """Return the answer line to one line, or None for a blank line (ignored)."""
    try:
        request = read(line)
        if request is None:
            return None
        return answer(await _respond(request))
    except FishError as error:
        return failure(error)
    except DatabaseError:
        logger.warning("fish: the database could not be reached", exc_info=True)
        return failure(FishError("Tournament_Error", UNREACHABLE))


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    lines = Lines()
    while data := await reader.read(READ_SIZE):
        for line in lines.feed(data):
            reply = await handle_line(line)
            if writer.is_closing():
                return  # the client went away before its answer
            if reply is not None:
                writer.write(reply)
        if lines.too_long:
            writer.write(failure(FishError("Unknown_Action", f"a line is at most {MAX_LINE} bytes; closing")))
            await writer.drain()
            return
        await writer.drain()
