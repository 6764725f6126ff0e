"""The `update` stream and the spectators' stream: Server-Sent Events of a game's snapshots (snapshots.py).

The stream view is our own, because the course protocol wants what django-eventstream's generic view does not send:
plain `data:` lines for `EventSource.onmessage`, the current snapshot first, and the end of the stream after the
winner. Updates come through the platform's publication (games/publication.py), already rendered as this transport's
text once per change.

A stream subscribes *before* it reads the snapshot from the database, so an update committed in between is either in
that snapshot or queued for the subscription; versions tell duplicates apart.
"""

import asyncio
import logging
import time
import weakref
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse

from core import limits
from core.dbthread import in_worker_thread
from core.sse import event_stream
from core.text import is_text
from games.models import Game, Seat
from games.publication import Subscription

from . import snapshots

logger = logging.getLogger(__name__)

TRANSPORT = "course"


def sse(version: int, message: str) -> bytes:
    # Bytes: the response passes them on as they are, where text would be encoded after a look at its headers.
    return f"id: {version}\ndata: {message}\n\n".encode()


@in_worker_thread
def _current(game_pk: int) -> tuple[int, bool, str | None]:
    """Read the game's current message from the database."""
    game = Game.objects.get(pk=game_pk)
    return game.version, game.status == Game.Status.FINISHED, snapshots.render(game, None)


@in_worker_thread
def _find(public_id: str, nick: str) -> tuple[Game | None, bool]:
    # One query: the game, and whether the nick sits in it.
    plays = Seat.objects.filter(game=OuterRef("pk"), user__username=nick)
    # The course API's games are Tâb's: another game's id is no game here.
    game = Game.objects.annotate(plays=Exists(plays)).filter(public_id=public_id, kind="tab").first()
    return game, game is not None and game.plays


KEEPALIVE = b": ping\n\n"


# One timer for every stream of the process, not one per stream and wait: each wait's timer lived until the next event
# (seconds), so with thousands of streams the garbage collector kept finding and promoting them. It wakes only the
# streams quiet for a whole period, so that their comment lines stay spread out as the streams' own activity is.
# It also renews the streams' slots (core/limits.py): one trip to a worker thread a tick for all, not one a stream.
class _Follower(Subscription):
    """A stream's subscription, with what the keep-alive timer needs: when it last sent, and its stream slot."""

    def __init__(self, public_id: str, slot: limits.StreamSlot):
        super().__init__(public_id)
        self.slot = slot
        self.last_sent = 0.0


_pinged: weakref.WeakSet[_Follower] = weakref.WeakSet()
_pinger: asyncio.Task | None = None


async def _ping_forever() -> None:
    """Wake every stream that sent nothing for TAB_KEEPALIVE_SECONDS: having nothing to send, it sends a comment.
    Renew the stream slots that are due, all in one trip to a worker thread (the cache may be Redis)."""
    loop = asyncio.get_running_loop()
    while True:
        keepalive = settings.TAB_KEEPALIVE_SECONDS
        await asyncio.sleep(min(1.0, keepalive / 4))
        due, renewed_before = loop.time() - keepalive, time.monotonic() - keepalive
        slots = []
        for subscription in list(_pinged):
            if subscription.last_sent <= due:
                subscription.wake()
            if subscription.slot.is_due(renewed_before):
                slots.append(subscription.slot)
        if slots:
            try:
                await sync_to_async(limits.renew_slots, thread_sensitive=False)(slots)
            except Exception:  # the timer must go on: the streams' keep-alives depend on it
                logger.exception("renewing %d stream slots failed", len(slots))


def _ping_regularly(subscription: _Follower) -> None:
    global _pinger
    loop = asyncio.get_running_loop()
    subscription.last_sent = loop.time()
    _pinged.add(subscription)
    if _pinger is None or _pinger.done() or _pinger.get_loop() is not loop:
        _pinger = loop.create_task(_ping_forever())


async def _stream(game_pk: int, public_id: str, slot: limits.StreamSlot) -> AsyncIterator[bytes]:
    subscription = _Follower(public_id, slot)
    try:
        await subscription.ready()
        sent, final, message = await _current(game_pk)
        if message is not None:
            yield sse(sent, message)
            if final:
                return
        _ping_regularly(subscription)
        loop = asyncio.get_running_loop()
        while True:
            # A stream waits for most of its life, and with thousands of streams what their waits hold is much of what
            # the garbage collector walks at each collection (BENCHMARKS.md): the wait awaits the subscription's
            # future, without a coroutine of its own (games/publication.py), and holds nothing of the last wake-up.
            if (waiter := subscription.waiting()) is not None:
                await waiter
            events, lost = subscription.take()
            subscription.last_sent = loop.time()
            news = [(version, final, texts.get(TRANSPORT)) for version, final, texts in events]
            del events
            if lost:
                news.append(await _current(game_pk))
            if not news:
                yield KEEPALIVE
            for version, final, message in news:
                if version <= sent or message is None:
                    continue
                yield sse(version, message)
                sent = version
                if final:
                    return
            del news
    finally:
        _pinged.discard(subscription)
        subscription.close()
        slot.release()


async def update(request: HttpRequest) -> HttpResponse:
    """GET /update?nick=…&game=…: the game's Server-Sent Events stream."""
    if request.method != "GET":
        response = JsonResponse({"error": f"Method {request.method} not allowed: use GET"}, status=405)
        response["Allow"] = "GET, OPTIONS"
        return response
    nick, public_id = request.GET.get("nick"), request.GET.get("game")
    if not nick:
        return JsonResponse({"error": "undefined nick"}, status=400)
    if not public_id:
        return JsonResponse({"error": "undefined game"}, status=400)
    if len(public_id) > 64 or len(nick) > 64 or not is_text(public_id) or not is_text(nick):
        return JsonResponse({"error": "Invalid game reference"}, status=400)
    game, plays = await _find(public_id, nick)
    if game is None:
        return JsonResponse({"error": "Invalid game reference"}, status=400)
    if not plays:
        return JsonResponse({"error": "You are not a player of this game"}, status=400)
    if game.status == Game.Status.FINISHED and request.headers.get("Last-Event-ID") == str(game.version):
        # The client saw the last message and its EventSource reconnected: 204 tells it to stop.
        return HttpResponse(status=204)
    slot = await sync_to_async(limits.stream_slot, thread_sensitive=False)(nick, limits.current_address.get())
    return event_stream(game_stream(game.pk, public_id, slot))


def game_stream(game_pk: int, public_id: str, slot: limits.StreamSlot | None = None) -> AsyncIterator[bytes]:
    """Return a game's stream, for spectators as for players: its current snapshot, then each newer one; a player's
    stream holds one of the nick's slots at its address (`limits.stream_slot`) while it lasts."""
    return _stream(game_pk, public_id, slot or limits.StreamSlot(None))


async def watch(request: HttpRequest, public_id: str) -> HttpResponse:
    """GET /games/<id>/stream: a spectator's read-only stream of a game, the same snapshots the players get."""
    if request.method != "GET":
        response = JsonResponse({"error": f"Method {request.method} not allowed: use GET"}, status=405)
        response["Allow"] = "GET, OPTIONS"
        return response
    found = await in_worker_thread(_watched)(public_id[:64])
    if found is None:
        raise Http404("No such game")
    slot = limits.spectator_slot(found.public_id, limits.current_address.get())
    return event_stream(game_stream(found.pk, found.public_id, slot))


def _watched(public_id: str) -> Game | None:
    return Game.objects.only("pk", "public_id").filter(public_id=public_id).first()
