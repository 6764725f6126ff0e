"""The plumbing of the site's own JSON calls (its pages', signed in by the session, CSRF-checked): the arguments
of a call, and a refusal as the JSON error the pages show."""

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from django.http import HttpRequest, JsonResponse

from .errors import Refusal


def arguments(request: HttpRequest) -> dict[str, Any]:
    """Return the call's JSON object (an empty body is an empty object), or raise a Refusal."""
    try:
        args = json.loads(request.body or b"{}")
    except ValueError:
        raise Refusal("The request is not valid JSON") from None
    if not isinstance(args, dict):
        raise Refusal("The request must be a JSON object")
    return args


def refused(message: str, status: int, retry_after: int | None = None) -> JsonResponse:
    response = JsonResponse({"error": message}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def answered(function: Callable[..., Awaitable[dict[str, Any]]]) -> Callable[..., Awaitable[JsonResponse]]:
    """Turn `async function(request, …) -> dict` into a view: the dict as JSON, a refusal as its JSON error."""

    @functools.wraps(function)
    async def view(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        try:
            return JsonResponse(await function(request, *args, **kwargs))
        except Refusal as refusal:
            return refused(str(refusal), refusal.status, refusal.retry_after)

    return view


async def signed_in_user(request: HttpRequest, message: str) -> Any:
    """Return the user the session signed in, or refuse with 401 and `message`."""
    user = await request.auser()
    if not user.is_authenticated:
        raise Refusal(message, status=401)
    return user
