"""The plumbing of JSON calls: the arguments of a call (the course API's and the site's own pages'), and, for the
pages' calls (signed in by the session, CSRF-checked), a refusal as the JSON error the pages show."""

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse

from .bodylimit import too_large
from .errors import Refusal


def arguments(request: HttpRequest) -> dict[str, Any]:
    """Return the request body as a JSON object (whatever the Content-Type says); an empty body is an empty object.
    Anything else is a Refusal."""
    try:
        raw = request.body
    except RequestDataTooBig:
        raise Refusal(too_large(), status=413) from None
    return arguments_of(raw)


def arguments_of(raw: bytes) -> dict[str, Any]:
    """`arguments` of a request whose body is `raw`."""
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        # ValueError covers bad UTF-8, bad JSON and integers too long to convert.
        raise Refusal("Request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise Refusal("Request body must be a JSON object")
    return data


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
