from typing import Any

from tabsite.api import (
    ApiError,
    api_function,
    as_player,
    credentials,
    integer,
    integer_argument,
    is_group,
    string_argument,
)
from tabsite.limits import per_address

from . import services
from .rules import tab

GAME_ID_MAX_LENGTH = 64


def _is_board_size(size: int) -> bool:
    return tab.MIN_SIZE <= size <= tab.MAX_SIZE and size % 2 == 1


@per_address("join", "TAB_JOIN_PER_MINUTE")
@api_function()
async def join(args: dict[str, Any]) -> dict[str, Any]:
    group = integer_argument(args, "group", is_group)
    login = credentials(args)
    size = integer_argument(args, "size", _is_board_size)
    game = await as_player(login, services.game_join, group=group, size=size)
    return {"game": game.public_id}


@api_function()
async def leave(args: dict[str, Any]) -> dict[str, Any]:
    login = credentials(args)
    game = string_argument(args, "game", GAME_ID_MAX_LENGTH)
    await as_player(login, services.game_leave, public_id=game)
    return {}


@api_function()
async def roll(args: dict[str, Any]) -> dict[str, Any]:
    login = credentials(args)
    game = string_argument(args, "game", GAME_ID_MAX_LENGTH)
    await as_player(login, services.game_act, public_id=game, action=tab.Roll())
    return {}


@api_function()
async def pass_turn(args: dict[str, Any]) -> dict[str, Any]:
    login = credentials(args)
    game = string_argument(args, "game", GAME_ID_MAX_LENGTH)
    await as_player(login, services.game_act, public_id=game, action=tab.Pass())
    return {}


@api_function()
async def notify(args: dict[str, Any]) -> dict[str, Any]:
    login = credentials(args)
    game = string_argument(args, "game", GAME_ID_MAX_LENGTH)
    # Some clients name the cell `move`, as the seed's own text does.
    raw = args["cell"] if args.get("cell") is not None else args.get("move")
    if raw is None:
        raise ApiError("undefined cell")
    cell = integer(raw)
    if cell is None:
        raise ApiError("cell is not an integer")
    if cell < 0:
        raise ApiError("cell is negative")
    # The seed's own message for notify out of turn is in lower case.
    action = tab.Select(cell)
    await as_player(login, services.game_act, public_id=game, action=action, not_your_turn="not your turn to play")
    return {}
