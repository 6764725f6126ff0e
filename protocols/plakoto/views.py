"""The Plakoto REST API under /plakoto/<table>/: the original project's paths, bodies, answers and messages.

One view takes every path of a table and routes it as the original's router did (trailing slashes optional);
parsing and the original's checks are here, the writes are the services'. Every success is a JSON array, every
refusal `{"errormesg": …}` with 400 (404 for what does not exist).

Its clients poll: the API is answered on the ASGI connection itself (`serve`, core/direct.py; its mount in apps.py),
the lean handler of the protocols serving what it leaves, and a request is one call to the process's database thread,
which routes, reads or writes, and renders the answer; a `GET status/` whose answer is kept in memory (polls.py) is
answered on the event loop without one, by the HTTP protocol itself as soon as its headers are read (`status_early`,
core/server.py), or here when the protocol leaves it. The page's own calls
that need its session (a signed-in player's seat, the computer's) are Django's usual views, at /tables/plakoto/, with
the table's stream, which players' pages and spectators follow instead of polling.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from core import limits
from core.dbthread import in_database_thread, in_worker_thread
from core.direct import Direct, failure, header_value, headers_of, json_head, read_small_body
from core.direct import answer as answer_directly
from core.direct import answer_response as direct_response
from core.sse import event_stream, ping_unless_woken
from games.publication import Subscription

from . import polls, services
from .models import Table
from .services import ApiError

TABLE_NAME = re.compile(r"[a-z0-9-]{1,32}")
DIGITS = re.compile(r"[0-9]+")


class NotFound(ApiError):
    status = 404


# An answer of the API: its status and its JSON body (JsonResponse's text: the standard library's, with spaces).
Answer = tuple[int, bytes]


def answer(data: Any) -> Answer:
    return 200, json.dumps(data).encode()


def board_answer(text: str) -> Answer:
    return 200, text.encode()


def refusal(error: ApiError) -> Answer:
    return error.status, json.dumps({"errormesg": str(error)}).encode()


def response(answered: Answer) -> HttpResponse:
    """The answer as Django's response, for the views that Django's handlers serve."""
    status, body = answered
    return HttpResponse(body, status=status, content_type="application/json")


def _integer(value: object, low: int, high: int) -> int:
    """Return a coordinate sent as a JSON integer or a string of digits, or raise "Invalid coordinates."."""
    if isinstance(value, bool):
        raise ApiError("Invalid coordinates.")
    if isinstance(value, str) and DIGITS.fullmatch(value):
        value = int(value)
    if not isinstance(value, int) or not low <= value <= high:
        raise ApiError("Invalid coordinates.")
    return value


@dataclass(frozen=True, slots=True)
class Call:
    """What a request to the API says: its method, the X-Token header and the body's bytes."""

    method: str
    header_token: str | None
    body: bytes


def _body(request: "Call | HttpRequest") -> dict[str, Any]:
    """Return the JSON object of the body ({} when empty), whatever its Content-Type."""
    if not request.body.strip():
        return {}
    try:
        body = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        raise ApiError("Invalid JSON body.") from None
    if not isinstance(body, dict):
        raise ApiError("The body must be a JSON object.")
    return body


def _token(request: Call, body: dict[str, Any]) -> str | None:
    token = request.header_token or body.get("token")
    return token if isinstance(token, str) and token else None


def _not_allowed(request: "Call | HttpRequest") -> ApiError:
    return ApiError(f"Method {request.method} not allowed here.")


async def table(request: HttpRequest, name: str, rest: str = "") -> HttpResponse:
    """Every path under a table's base URL: one trip to the database thread (Django's handlers serve it only where
    `serve` below leaves it to them, and in tests with Django's client)."""
    call = Call(request.method or "GET", request.headers.get("X-Token"), request.body)
    return response(await _answer(call, name, rest))


PREFIX = "/plakoto/"
X_TOKEN = b"x-token"


async def serve(scope: dict, receive, send, direct: Direct) -> None:
    """The API on the ASGI connection itself (core/direct.py): the paths of `table`, with the answers and headers it
    would have, for a fraction of the CPU (clients poll). Preflights, and requests Django's security middleware would
    redirect, go to the lean handler."""
    headers = direct.headers(scope)
    name, _, rest = scope["path"].removeprefix(PREFIX).partition("/")
    if headers is None or not name or not rest:  # `table` takes "<name>/<rest>"; the lean handler answers the rest
        await direct.fallback(scope, receive, send)
        return
    body = await read_small_body(receive)
    if body is None:
        return
    call = Call(scope["method"], header_value(scope, X_TOKEN), body)
    try:
        if call.method == "GET" and rest.strip("/") == "status" and (kept := polls.polls) is not None:
            status, text = await _status_polled(kept, name)
        else:
            status, text = await _answer(call, name, rest)
    except Exception as error:  # noqa: BLE001 - answered as Django's handler would (an unreachable database: 503)
        await direct_response(scope, send, failure(scope, body, error), headers)
        return
    await answer_directly(scope, send, status, text, headers)


def status_early(path: str, scope: dict) -> tuple[bytes, list[tuple[bytes, bytes]]] | None:
    """A `GET status/` whose answer is kept in memory, answered before the application is called (core/server.py):
    its body and headers, those `serve` would send; None for any other request, or an answer not kept."""
    kept = polls.polls
    if kept is None:
        return None
    name, _, rest = path.removeprefix(PREFIX).partition("/")
    if rest.strip("/") != "status" or (text := kept.answer(name)) is None or (headers := headers_of(scope)) is None:
        return None
    return text, json_head(text, headers)


async def _status_polled(kept: polls.Polls, name: str) -> Answer:
    """`GET status/`: the answer kept in memory (games/kept.py says when it is the table's status of now), else the
    database's, kept for the next polls."""
    text = kept.answer(name)
    if text is not None:
        return 200, text
    since = kept.since()
    (status, text), channels = await _status_read(name)
    if status == 200:
        kept.keep(name, since, channels, text)
    return status, text


@in_database_thread
def _status_read(name: str) -> tuple[Answer, tuple[str, ...]]:
    """The answer of `GET status/`, and the channels of the changes that would change it."""
    if not TABLE_NAME.fullmatch(name):
        return refusal(NotFound("Unknown table.")), ()
    view = services.table_view(name)
    channels = services.status_channels(name, view.game.public_id if view.game is not None else None)
    return (200, services.status_text(services.status(view))), channels


@in_database_thread
def _answer(call: Call, name: str, rest: str) -> Answer:
    try:
        if not TABLE_NAME.fullmatch(name):
            raise NotFound("Unknown table.")
        return _route(call, name, [part for part in rest.split("/") if part])
    except ApiError as error:
        return refusal(error)


def _route(request: Call, name: str, parts: list[str]) -> Answer:
    match parts:
        case ["board"]:
            return _board(request, name)
        case ["board", "piece", x, y]:
            return _piece(request, name, x, y)
        case ["players"]:
            if request.method != "GET":
                raise _not_allowed(request)
            seats = services.seats(services.table_view(name))
            return answer([seats["B"], seats["W"]])
        case ["players", colour]:
            return _player(request, name, colour)
        case ["status"]:
            if request.method != "GET":
                raise _not_allowed(request)
            return 200, services.status_text(services.status(services.table_view(name)))
    raise NotFound("Not found.")


def _board(request: Call, name: str) -> Answer:
    if request.method == "GET":
        token = _token(request, _body_or_empty(request))
        return _board_of(services.table_view(name), token)
    if request.method == "POST":
        body = _body(request)
        token = _token(request, body)
        services.table_reset(name=name, token=token)
        return _board_of(services.table_view(name), token)
    raise _not_allowed(request)


def _body_or_empty(request: Call) -> dict[str, Any]:
    """A GET's body is ignored, but for a token in it."""
    try:
        return _body(request)
    except ApiError:
        return {}


def _piece(request: Call, name: str, x: str, y: str) -> Answer:
    if request.method not in ("GET", "PUT"):
        raise _not_allowed(request)
    if request.method == "GET":
        column, row = _integer(x, 1, 24), _integer(y, 1, 16)
        return answer([services.cell(services.table_view(name).state, column, row)])
    column, row = _integer(x, 1, 24), _integer(y, 1, 16)
    body = _body(request)
    destination = _integer(body.get("x"), 0, 25)
    if "y" in body and body["y"] is not None:
        _integer(body["y"], 0, 16)
    token = _token(request, body)
    # Answered from the position the move left, without reading the table again.
    return board_answer(services.piece_move(name=name, token=token, x=column, y=row, destination=destination))


def _board_of(view: services.TableView, token: str | None) -> Answer:
    return board_answer(services.board_json(view.state, services.mover(view, token)))


def _player(request: Call, name: str, colour: str, user_id: int | None = None) -> Answer:
    if colour not in ("B", "W"):
        raise NotFound(f"Player {colour[:20]} not found.")
    if request.method == "GET":
        return answer([services.seats(services.table_view(name))[colour]])
    if request.method != "PUT":
        raise _not_allowed(request)
    body = _body(request)
    username = body.get("username")
    if username is None or username == "":
        raise ApiError("No username given.")
    if (
        not isinstance(username, str)
        or len(username) > 20
        or not username.strip()
        or any(ord(character) < 32 or 127 <= ord(character) < 160 for character in username)
    ):
        raise ApiError("Invalid username.")
    for field in ("color", "piece_color"):
        if field in body and body[field] != colour:
            raise ApiError(f"Color {str(body[field])[:20]} does not match player {colour}.")
    token, taken_at = services.seat_take(name=name, colour=colour, username=username, user_id=user_id)
    seat = {"username": username, "piece_color": colour, "token": token, "last_action": services.stamp(taken_at)}
    return answer([seat])


async def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    return response(refusal(NotFound("Not found.")))


@csrf_exempt
def seat(request: HttpRequest, name: str, colour: str) -> HttpResponse:
    """PUT /tables/plakoto/<table>/seat/<W|B> {username}: the page's `PUT players/<p>`, which also records the
    signed-in player's account, so that the game counts in their rankings."""
    try:
        if not TABLE_NAME.fullmatch(name):
            raise NotFound("Unknown table.")
        user_id = request.user.pk if request.user.is_authenticated else None
        call = Call(request.method or "GET", None, request.body)
        return response(_player(call, name, colour, user_id))
    except ApiError as error:
        return response(refusal(error))


@csrf_exempt
def computer(request: HttpRequest, name: str) -> HttpResponse:
    """POST /tables/plakoto/<table>/computer {level}: the page's "play the computer": it takes the free seat."""
    from games.bots import is_offered, offered_text

    try:
        if not TABLE_NAME.fullmatch(name):
            raise NotFound("Unknown table.")
        if request.method != "POST":
            raise _not_allowed(request)
        level = _body(request).get("level", 2)
        if not is_offered("plakoto", level):
            raise ApiError(f"level is one of {offered_text('plakoto')}.")
        return response(answer([{"piece_color": services.seat_computer(name=name, level=level)}]))
    except ApiError as error:
        return response(refusal(error))


@in_worker_thread
def _followed(name: str) -> tuple[str | None, str]:
    """The table's current game, and its status as `GET status/` answers it."""
    view = services.table_view(name)
    return (view.game.public_id if view.game else None), json.dumps([services.status(view)])


async def table_stream(request: HttpRequest, name: str) -> StreamingHttpResponse | HttpResponse:
    """GET /tables/plakoto/<table>/stream: Server-Sent Events, the table's status (as `GET status/` answers it) now
    and at every change of the table or its game; what players' pages and spectators follow."""
    if not TABLE_NAME.fullmatch(name):
        return response(refusal(NotFound("Unknown table.")))
    try:
        slot = limits.spectator_slot(f"plakoto:{name}", limits.client_address(request))
    except limits.Throttled as error:
        return JsonResponse({"errormesg": str(error)}, status=429)

    async def events():
        subscription, game, sent = None, "", None
        try:
            while True:
                current, status = await _followed(name)
                if subscription is None or current != game:
                    # Follow the table and its game of now; then read again, so that no change made meanwhile is
                    # missed.
                    if subscription is not None:
                        subscription.close()
                    subscription = Subscription(current, channels=[services.table_channel(name)])
                    await subscription.ready()
                    game = current
                    continue
                if status != sent:
                    sent = status
                    yield f"data: {status}\n\n".encode()
                if (ping := await ping_unless_woken(subscription)) is not None:
                    yield ping
        finally:
            if subscription is not None:
                subscription.close()
            slot.release()

    return event_stream(events())


@require_GET
def table_of_game(request: HttpRequest, public_id: str) -> HttpResponse:
    """GET /tables/plakoto/_game/<game>: the page of the table where the game is played (a live game's page links
    there)."""

    name = Table.objects.filter(game__public_id=public_id[:64]).values_list("name", flat=True).first()
    if name is None:
        raise Http404("No table plays this game now")
    return redirect(f"{reverse('play', args=['plakoto'])}?table={name}")
