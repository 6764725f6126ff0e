"""The course's functions: each validates its arguments, runs one service of the platform and answers a JSON object.
The update stream is in streams.py."""

from typing import Any

from accounts.services import user_register
from core.dbthread import in_database_thread
from core.errors import Refusal
from core.limits import per_address
from games import services
from games.bots import PRACTICE_GROUPS
from games.rules import tab
from rankings.selectors import ranking_top

from .api import (
    Login,
    api_function,
    as_player,
    credentials,
    integer,
    integer_argument,
    is_group,
    nick_and_password,
    shown,
    string_argument,
)

GAME_ID_MAX_LENGTH = 64


def _is_board_size(size: int) -> bool:
    return tab.MIN_SIZE <= size <= tab.MAX_SIZE and size % 2 == 1


@per_address("register", "TAB_REGISTER_PER_MINUTE")
@api_function()
async def register(args: dict[str, Any]) -> dict[str, Any]:
    nick, password = nick_and_password(args)
    await user_register(nick=nick, password=password)
    return {}


@per_address("join", "TAB_JOIN_PER_MINUTE")
@api_function()
async def join(args: dict[str, Any]) -> dict[str, Any]:
    group = integer_argument(args, "group", is_group)
    login = credentials(args)
    size = integer_argument(args, "size", _is_board_size)
    # Practice: a join in group 900 + L starts a game at once against the server's computer player of level L (1
    # random, 2 greedy, 3 search), the client first to play; it counts for no ranking or rating.
    if group in PRACTICE_GROUPS:
        game = await as_player(
            login, services.match_against_computer, kind="tab", options={"size": size}, level=PRACTICE_GROUPS[group]
        )
        return {"game": game.public_id}
    # A course group is the pool players meet in; the board size is Tâb's one option.
    game = await as_player(login, services.match_join, kind="tab", options={"size": size}, pool=str(group))
    return {"game": game.public_id}


def _player_and_game(args: dict[str, Any]) -> tuple[Login, str]:
    """Return the request's credentials and game id, validated in the course server's order."""
    return credentials(args), string_argument(args, "game", GAME_ID_MAX_LENGTH)


@api_function()
async def leave(args: dict[str, Any]) -> dict[str, Any]:
    login, game = _player_and_game(args)
    await as_player(login, services.game_leave, public_id=game, kind="tab")
    return {}


@api_function()
async def roll(args: dict[str, Any]) -> dict[str, Any]:
    login, game = _player_and_game(args)
    await as_player(login, services.game_act, public_id=game, kind="tab", action=tab.Roll())
    return {}


@api_function()
async def pass_turn(args: dict[str, Any]) -> dict[str, Any]:
    login, game = _player_and_game(args)
    await as_player(login, services.game_act, public_id=game, kind="tab", action=tab.Pass())
    return {}


@api_function()
async def notify(args: dict[str, Any]) -> dict[str, Any]:
    login, game = _player_and_game(args)
    # Some clients name the cell `move`, as the seed's own text does.
    raw = args["cell"] if args.get("cell") is not None else args.get("move")
    if raw is None:
        raise Refusal("undefined cell")
    cell = integer(raw)
    if cell is None:
        raise Refusal("cell is not an integer")
    if cell < 0:
        raise Refusal("cell is negative")
    # The seed's own message for notify out of turn is in lower case.
    action = tab.Select(cell)
    await as_player(
        login, services.game_act, public_id=game, kind="tab", action=action, not_your_turn="not your turn to play"
    )
    return {}


@api_function()
async def ranking(args: dict[str, Any]) -> dict[str, Any]:
    # The seed's messages for ranking are capitalised, unlike join's, and a size without games is an empty table.
    if args.get("group") is None:
        raise Refusal("Undefined group")
    group = integer(args["group"])
    if group is None or not is_group(group):
        raise Refusal(f"Invalid group '{shown(args['group'])}'")
    size = integer(args.get("size"))
    if size is None or not 1 <= size <= 1000:
        raise Refusal(f"Invalid size '{shown(args.get('size', 'undefined'))}'")
    return {"ranking": await in_database_thread(ranking_top)(kind="tab", variant=str(size), pool=str(group))}
