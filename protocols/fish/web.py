"""The Fish page's transport, on the web server (mounted at /tables/fish/): the protocol's own requests over HTTP, so
that a tournament made in the browser can be joined by a TCP client and the other way round; the computer taking a
seat; and a tournament's live view, which players' pages and spectators follow.

`POST /tables/fish/request` takes one request object of the protocol as its body and answers with the very JSON the
TCP server would send (with 400 for a refusal); a signed-in visitor's join seats their account, so that the game
counts in their rankings.
"""

import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from core import limits
from core.dbthread import in_worker_thread
from core.sse import event_stream, follow
from games.publication import Subscription

from . import protocol, server, services
from .models import Tournament
from .protocol import FishError


def refusal(error: FishError) -> JsonResponse:
    return JsonResponse({"error_type": error.error_type, "error_message": str(error)}, status=400)


def _body(request: HttpRequest) -> dict[str, Any]:
    body = protocol.read(request.body)
    if body is None:
        raise protocol.unknown("the body is one request of the protocol, a JSON object")
    return dict(body)


@csrf_exempt
@require_POST
def request_view(request: HttpRequest) -> JsonResponse:
    """POST /tables/fish/request: one request of the protocol, answered as the TCP server answers it."""
    try:
        body = _body(request)
        if body["action"] == "join_tournament" and request.user.is_authenticated:
            name, players = protocol.tournament_name(body), protocol.player_count(body)
            token, colour = services.tournament_join(name=name, players=players, user_id=request.user.pk)
            return JsonResponse({"user_token": token, "color": colour})
        return JsonResponse(server.respond(body))
    except FishError as error:
        return refusal(error)


@csrf_exempt
@require_POST
def computer(request: HttpRequest, name: str) -> JsonResponse:
    """POST /tables/fish/<tournament>/computer {level}: the computer player takes the next free seat."""
    from games.bots import is_offered, offered_text

    try:
        try:
            level = json.loads(request.body or b"{}").get("level", 2)
        except (ValueError, AttributeError):
            raise protocol.unknown('the body is a JSON object: {"level": 1}') from None
        if not is_offered("fish", level):
            raise FishError("Tournament_Error", f"level is one of {offered_text('fish')}")
        return JsonResponse({"color": services.seat_computer(name=name, level=level)})
    except FishError as error:
        return refusal(error)


def _no_such_tournament() -> JsonResponse:
    return JsonResponse({"error_type": "Tournament_Error", "error_message": "no tournament of that name"}, status=404)


@in_worker_thread
def _view(name: str) -> dict[str, Any] | None:
    return services.tournament_view(name)


@require_GET
def waiting(request: HttpRequest) -> JsonResponse:
    """GET /tables/fish/waiting: the tournaments that wait for players, newest first."""
    return JsonResponse({"tournaments": services.tournaments_waiting()})


@require_GET
def view(request: HttpRequest, name: str) -> JsonResponse:
    """GET /tables/fish/<tournament>/view: the tournament as its page shows it."""
    found = services.tournament_view(name)
    if found is None:
        return _no_such_tournament()
    return JsonResponse(found)


async def stream(request: HttpRequest, name: str) -> StreamingHttpResponse | JsonResponse:
    """GET /tables/fish/<tournament>/stream: Server-Sent Events, the tournament's view now and at every change (a seat
    taken, a placement, a move, a removal, the end)."""
    first = await _view(name)
    if first is None:
        return _no_such_tournament()
    try:
        slot = limits.spectator_slot(f"fish:{name}", limits.client_address(request))
    except limits.Throttled as error:
        return JsonResponse({"error_type": "Tournament_Error", "error_message": str(error)}, status=429)

    async def read() -> tuple[str, bytes, bool]:
        current = json.dumps(await _view(name))
        return current, f"data: {current}\n\n".encode(), True

    async def events():
        subscription = Subscription(first["game"], channels=[services.tournament_channel(name)])
        try:
            await subscription.ready()
            async for frame in follow(subscription, read):
                yield frame
        finally:
            subscription.close()
            slot.release()

    return event_stream(events())


@require_GET
def tournament_of_game(request: HttpRequest, public_id: str) -> HttpResponse:
    """GET /tables/fish/_game/<game>: the page of the tournament that plays the game (a live game's page links here)."""
    name = Tournament.objects.filter(game__public_id=public_id[:64]).values_list("name", flat=True).first()
    if name is None:
        raise Http404("No tournament plays this game")
    return redirect(f"{reverse('play', args=['fish'])}?tournament={name}")
