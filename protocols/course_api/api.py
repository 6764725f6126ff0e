"""The course protocol's plumbing, shared by every API function.

A function is a coroutine: it receives the JSON object of the request body (whatever the Content-Type says),
validates its arguments with the helpers below on the event loop, runs one service in the database thread and
returns a dict. The single place that turns a refusal into `{"error": …}` with its status code is `api_function`.
"""

import functools
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.nickrule import NICK_MAX_LENGTH
from accounts.services import PASSWORD_MAX_LENGTH, checks_login, remembered_user_id, user_verify
from core.calls import arguments, refused
from core.dbthread import in_database_thread
from core.errors import Refusal
from core.text import is_short_text, is_text
from games.models import GROUP_MAX
from games.services import game_act

INTEGER_TEXT = re.compile(r"-?[0-9]{1,18}")


def error_response(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def shown(value: Any) -> str:
    """Return a value as the course server quotes it in its messages (JavaScript's String(), shortened)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, int | float):
        text = json.dumps(value)
    else:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if not is_text(text):
        text = json.dumps(text)[1:-1]
    return text if len(text) <= 40 else text[:37] + "..."


# The request body as a JSON object, or a Refusal.
parse_body = arguments


ApiFunction = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class SignedIn(dict[str, Any]):
    """The arguments of a function called by the site's own page, whose player is signed in by the site's session
    (site.py): `credentials` gives that player instead of reading a nick and a password from them."""

    def __init__(self, args: dict[str, Any], user_id: int):
        super().__init__(args)
        self.user_id = user_id


def method_not_allowed(request: HttpRequest, method: str) -> JsonResponse:
    response = error_response(f"Method {request.method} not allowed: use {method}", 405)
    response["Allow"] = f"{method}, OPTIONS"
    return response


def refusal_response(error: Refusal) -> JsonResponse:
    """The JSON error of a refusal, with its status and, when it has one, its Retry-After."""
    return refused(str(error), error.status, error.retry_after)


def api_function(method: str = "POST") -> Callable[[ApiFunction], Callable[..., Awaitable[JsonResponse]]]:
    """Turn `async function(args) -> dict` into a view of the course protocol (the function itself stays at hand as
    the view's `function`, for the site's own page: site.py)."""

    def decorate(function: ApiFunction) -> Callable[..., Awaitable[JsonResponse]]:
        @csrf_exempt
        @functools.wraps(function)
        async def view(request: HttpRequest) -> JsonResponse:
            if request.method != method:
                return method_not_allowed(request, method)
            try:
                return JsonResponse(await function(parse_body(request)))
            except Refusal as error:
                return refusal_response(error)

        view.function = function  # type: ignore[attr-defined]
        view.method = method  # type: ignore[attr-defined]
        # Which view this is: a decorator that wraps it (a limit per address) copies these attributes, not this one's
        # identity, so the view it makes is not served as this one (protocols/course_api/handler.py).
        view.api_view = view  # type: ignore[attr-defined]
        return view

    return decorate


def is_group(group: int) -> bool:
    return 1 <= group <= GROUP_MAX


def string_argument(args: dict[str, Any], name: str, max_length: int) -> str:
    if name not in args or args[name] is None:
        raise Refusal(f"undefined {name}")
    value = args[name]
    if not is_short_text(value, max_length):
        raise Refusal(f"invalid {name} '{shown(value)}'")
    return value


def integer(value: Any) -> int | None:
    """Return the integer a client meant (9, 9.0 or "9"), or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and INTEGER_TEXT.fullmatch(value.strip()):
        return int(value)
    return None


def integer_argument(args: dict[str, Any], name: str, valid: Callable[[int], bool] = lambda number: True) -> int:
    if name not in args or args[name] is None:
        raise Refusal(f"undefined {name}")
    number = integer(args[name])
    if number is None or not valid(number):
        raise Refusal(f"invalid {name} '{shown(args[name])}'")
    return number


# Who calls a function: a nick and a password to check, or the id of the user the site's session signed in.
Login = tuple[str, str] | int


def credentials(args: dict[str, Any]) -> Login:
    """Return the request's nick and password, validated but not yet checked (or its signed-in user: SignedIn)."""
    return args.user_id if isinstance(args, SignedIn) else nick_and_password(args)


def nick_and_password(args: dict[str, Any]) -> tuple[str, str]:
    """Return the request's nick and password, validated but not yet checked."""
    return string_argument(args, "nick", NICK_MAX_LENGTH), string_argument(args, "password", PASSWORD_MAX_LENGTH)


_UNVERIFIED = object()


@checks_login
def _as_remembered_player[Result](login: tuple[str, str], service: Callable[..., Result], arguments: dict) -> Any:
    user_id = remembered_user_id(*login)
    return _UNVERIFIED if user_id is None else service(user_id=user_id, **arguments)


def game_acted_in(args: tuple, kwargs: dict) -> str | None:
    """The game that a database call of `_as_remembered_player` makes an action in, if it makes one (games/store.py,
    `locks_ahead`)."""
    if len(args) == 3 and args[1] is game_act and isinstance(args[2], dict):
        return args[2].get("public_id")
    return None


async def as_player[Result](login: Login, service: Callable[..., Result], **arguments: Any) -> Result:
    """Run `service(user_id=…, **arguments)` for the player with these credentials, in the database thread.

    A pair verified recently costs one trip to that thread, check and service together; otherwise the password is
    checked against its hash in a worker thread first. A signed-in user is the player already.
    """
    if isinstance(login, int):
        return await in_database_thread(service)(user_id=login, **arguments)
    result = await in_database_thread(_as_remembered_player)(login, service, arguments)
    if result is not _UNVERIFIED:
        return result
    nick, password = login
    user_id = await user_verify(nick=nick, password=password)
    return await in_database_thread(service)(user_id=user_id, **arguments)
