"""The draughts rooms over the web: what the browser's page (templates/games/draughts/play.html) does, through the same
services as the TLS line server, so that a room made in one is joined from the other.

JSON in, JSON out. A colour's UUID (`key`) is the player's credential, as in the line protocol: no cookie, no account
(so no CSRF to fear). A page holds its colour with a `holder` token while it is open, and renews it; the stream of a
room sends its view at every change to its players and spectators alike (no keys in it).
"""

import json
import uuid
from typing import Any

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from core import limits
from core.dbthread import in_worker_thread
from core.errors import Refusal
from core.sse import event_stream, follow
from games.bots import is_offered, offered_text
from games.publication import Subscription

from . import services
from .models import Room


class BadRequest(Refusal):
    """A request that is not one of this API's."""


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("The body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("The body is a JSON object")
    return body


def _uuid(value: object, what: str) -> uuid.UUID:
    if not isinstance(value, str):
        raise BadRequest(f"{what} is a UUID")
    try:
        return uuid.UUID(value)
    except ValueError:
        raise BadRequest(f"{what} is a UUID") from None


def _holder(body: dict[str, Any]) -> services.Holder:
    token = body.get("holder")
    if not isinstance(token, str) or not 8 <= len(token) <= 64 or not token.isalnum():
        raise BadRequest("holder is the token the page was given")
    return services.Holder(token)


def view_json(view: services.RoomView, room_id: uuid.UUID) -> dict[str, Any]:
    return {
        "room": str(room_id),
        "game": view.game,
        "state": view.state,
        "turn": view.turn,
        "wants_draw": list(view.wants_draw),
        "times": list(view.times),
        "online": list(view.online),
        "board": view.board,
        "version": view.version,
    }


def _seated_answer(room_id: uuid.UUID, seated: services.Seated, holder: services.Holder, **more: Any) -> JsonResponse:
    view = services.room_view(room_id=room_id)
    answer = {"colour": seated.colour, "holder": holder.token, "game": seated.game, **more}
    return JsonResponse({**answer, **view_json(view, room_id)})


@csrf_exempt
@require_POST
def room_create(request: HttpRequest) -> JsonResponse:
    """POST /draughts/rooms/ {computer?: level, colour?: "w"|"b", hold?: false}: make a room; the answer has both
    colours' UUIDs (give `enemy_key` to the opponent), or one with the computer in the other colour. With `hold`
    false the page does not hold its colour: a line client JOINs it with the answer's `room` and `key`."""
    body = _body(request)
    level, colour, hold = body.get("computer"), body.get("colour"), body.get("hold", True)
    if level is not None and not is_offered("draughts", level):
        raise BadRequest(f"computer is a level: {offered_text('draughts')}")
    if colour not in (None, "w", "b"):
        raise BadRequest('colour is "w" or "b"')
    if not isinstance(hold, bool):
        raise BadRequest("hold is true or false")
    holder = services.Holder.new()
    room, seated = services.room_create(holder=holder, computer_level=level, colour=colour, hold=hold)
    mine, other = (room.white_key, room.black_key) if seated.colour == "w" else (room.black_key, room.white_key)
    enemy = None if level is not None else str(other)
    return _seated_answer(room.pk, seated, holder, key=str(mine), enemy_key=enemy)


@csrf_exempt
@require_POST
def room_join(request: HttpRequest, room_id: uuid.UUID) -> JsonResponse:
    """POST /draughts/rooms/<room>/join {key}: take the colour of that UUID (a page may take over another page's)."""
    key = _uuid(_body(request).get("key"), "key")
    holder = services.Holder.new()
    seated = services.room_join(room_id=room_id, key=key, holder=holder)
    return _seated_answer(room_id, seated, holder, key=str(key))


def _seated(room_id: uuid.UUID, body: dict[str, Any]) -> services.Seated:
    return services.room_seated(room_id=room_id, key=_uuid(body.get("key"), "key"))


@csrf_exempt
@require_POST
def room_act(request: HttpRequest, room_id: uuid.UUID, action: str) -> JsonResponse:
    """POST /draughts/rooms/<room>/<action> {key, holder, …}: move {path: ["c3", "d4"]}, draw, cancel-draw, renew,
    release (the page closes) or leave."""
    body = _body(request)
    seated = _seated(room_id, body)
    match action:
        case "move":
            path = body.get("path")
            if not isinstance(path, list) or not 2 <= len(path) <= 13 or not all(isinstance(s, str) for s in path):
                raise BadRequest("path is the list of the squares the piece stops on")
            services.room_move(seated=seated, squares=path)
        case "draw":
            services.room_draw_request(seated=seated)
        case "cancel-draw":
            services.room_draw_cancel(seated=seated)
        case "renew":
            if not services.room_renew(seated=seated, holder=_holder(body)):
                raise services.RoomNotFound("This colour is held elsewhere now")
        case "release":
            services.room_release(seated=seated, holder=_holder(body))
            return JsonResponse({})
        case "leave":
            services.room_leave(seated=seated, holder=_holder(body))
            return JsonResponse({})
        case _:
            raise BadRequest("No such action")
    return JsonResponse(view_json(services.room_view(room_id=room_id), room_id))


@require_GET
def room_state(request: HttpRequest, room_id: uuid.UUID) -> JsonResponse:
    """GET /draughts/rooms/<room>/: the room as GET_STATE shows it, with its game's id."""
    view = services.room_view(room_id=room_id)
    return JsonResponse(view_json(view, room_id))


async def room_stream(request: HttpRequest, room_id: uuid.UUID) -> StreamingHttpResponse | JsonResponse:
    """GET /draughts/rooms/<room>/stream: Server-Sent Events, the room's view now and at every change."""
    game = await _game_of(room_id)
    if game is None:
        return JsonResponse({"error": "no such room"}, status=404)
    slot = limits.spectator_slot(game, limits.client_address(request))
    subscription = Subscription(game)
    await subscription.ready()

    async def read() -> tuple[int, bytes, bool]:
        view = await _view(room_id)
        frame = f"id: {view.version}\ndata: {json.dumps(view_json(view, room_id))}\n\n".encode()
        return view.version, frame, view.state in ("WAITING", "PLAYING")

    async def events():
        try:
            async for frame in follow(subscription, read):
                yield frame
        finally:
            subscription.close()
            slot.release()

    return event_stream(events())


@in_worker_thread
def _game_of(room_id: uuid.UUID) -> str | None:
    return Room.objects.filter(pk=room_id).values_list("game__public_id", flat=True).first()


@in_worker_thread
def _view(room_id: uuid.UUID) -> services.RoomView:
    return services.room_view(room_id=room_id)
