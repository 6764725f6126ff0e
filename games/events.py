"""Live updates: every committed change of a game reaches both players' `update` streams.

Publishing goes through django-eventstream: inside one process its listener manager wakes the streams of the
game's channel; with REDIS_URL set, the event travels through Redis to every server process. The stream view
is our own, because the course protocol wants what the library's generic view does not send: plain `data:`
lines for `EventSource.onmessage`, the current snapshot first, and the end of the stream after the winner.

A stream registers its listener *before* it reads the snapshot from the database, so an update committed in
between is either in that snapshot or queued for the listener; versions tell duplicates apart.
"""

import asyncio
import json
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django_eventstream.views import Listener, get_listener_manager

from tabsite import limits
from tabsite.text import is_text

from . import relay, selectors
from .models import Game

logger = logging.getLogger(__name__)

EVENT_TYPE = "message"
REDIS_SUBSCRIBE_WAIT = 2.0


def channel_name(public_id: str) -> str:
    return f"game-{public_id}"


def encode(version: int, message: dict, *, final: bool) -> str:
    """Pack a message for the channel: version, whether it is the last one, and the JSON of the snapshot."""
    return f"{version} {int(final)} {json.dumps(message, separators=(',', ':'))}"


def decode(data: str) -> tuple[int, bool, str]:
    version, final, message = data.split(" ", 2)
    return int(version), final == "1", message


def publish(public_id: str, version: int, message: dict, *, final: bool) -> None:
    """Send a game's new snapshot to every stream of the game, in this process or any other."""
    relay.send(channel_name(public_id), EVENT_TYPE, encode(version, message, final=final))


def sse(version: int, message: str) -> bytes:
    # Bytes: the response passes them on as they are, where text would be encoded after a look at its headers.
    return f"id: {version}\ndata: {message}\n\n".encode()


def in_worker_thread[**P, R](function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """Run a stream's database read in a worker thread, its connection closed afterwards: a stream may stay open
    for hours, and must not hold a database connection meanwhile."""

    def read(*args: P.args, **kwargs: P.kwargs) -> R:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(read, thread_sensitive=False)


@in_worker_thread
def _current(game_pk: int) -> tuple[int, bool, str | None]:
    """Read the game's current message from the database."""
    game = Game.objects.get(pk=game_pk)
    message = selectors.game_message(game)
    final = game.status == Game.Status.FINISHED
    return game.version, final, None if message is None else json.dumps(message, separators=(",", ":"))


@in_worker_thread
def _find(public_id: str, nick: str) -> tuple[Game | None, bool]:
    game = Game.objects.select_related("initial_player", "second_player").filter(public_id=public_id).first()
    return game, game is not None and any(player.username == nick for player in game.players)


async def _redis_subscribed() -> None:
    """Wait until this process listens to Redis, so that no update published meanwhile is missed."""
    redis_listener = get_listener_manager().redis_listener
    if redis_listener is None or redis_listener.unreachable:
        return
    loop = asyncio.get_running_loop()
    give_up = loop.time() + REDIS_SUBSCRIBE_WAIT
    while not redis_listener.pubsub.subscribed and not redis_listener.unreachable and loop.time() < give_up:
        await asyncio.sleep(0.005)


class _Wakeups:
    """The streams of one event loop to wake, gathered from other threads: one call into the loop wakes them all.

    The database thread publishes a batch's updates one after another; a call into the loop per stream (the library's
    way) wrote to the loop's wake-up pipe each time, holding the GIL, which was 7 % of that thread's work."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = weakref.ref(loop)  # held by the loop's entry in `_wakeups`, which must not keep the loop alive
        self.lock = threading.Lock()
        self.events: list[asyncio.Event] = []

    def add(self, event: asyncio.Event) -> None:
        with self.lock:
            self.events.append(event)
            if len(self.events) > 1:
                return  # the call that wakes them is on its way
        loop = self.loop()
        try:
            if loop is not None:
                loop.call_soon_threadsafe(self.wake)
                return
        except RuntimeError:
            pass
        with self.lock:  # the loop is closed or gone: no stream is waiting any more
            self.events.clear()

    def wake(self) -> None:
        with self.lock:
            events, self.events = self.events, []
        for event in events:
            event.set()


_wakeups: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Wakeups] = weakref.WeakKeyDictionary()


class StreamListener(Listener):
    """django-eventstream's listener, woken directly on its own loop and through `_Wakeups` from other threads."""

    def assign_loop(self) -> None:
        super().assign_loop()
        self.thread = threading.get_ident()
        self.wakeups = _wakeups.get(self.loop) or _wakeups.setdefault(self.loop, _Wakeups(self.loop))

    def wake_threadsafe(self) -> None:
        if threading.get_ident() == self.thread:
            self.aevent.set()
        else:
            self.wakeups.add(self.aevent)


KEEPALIVE = b": ping\n\n"

# One timer for every stream of the process, not one per stream and wait: each wait's timer lived until the next event
# (seconds), so with thousands of streams the garbage collector kept finding and promoting them. It wakes only the
# streams quiet for a whole period, so that their comment lines stay spread out as the streams' own activity is.
# It also renews the streams' slots (tabsite/limits.py): one trip to a worker thread a tick for all, not one a stream.
_pinged: weakref.WeakSet[StreamListener] = weakref.WeakSet()
_pinger: asyncio.Task | None = None


async def _ping_forever() -> None:
    """Wake every stream that sent nothing for TAB_KEEPALIVE_SECONDS: having nothing to send, it sends a comment.
    Renew the stream slots that are due, all in one trip to a worker thread (the cache may be Redis)."""
    loop = asyncio.get_running_loop()
    while True:
        keepalive = settings.TAB_KEEPALIVE_SECONDS
        await asyncio.sleep(min(1.0, keepalive / 4))
        due, now = loop.time() - keepalive, time.monotonic()
        slots = []
        for listener in list(_pinged):
            if listener.last_sent <= due:
                listener.aevent.set()
            if listener.slot.is_due(now):
                slots.append(listener.slot)
        if slots:
            try:
                await sync_to_async(limits.renew_slots, thread_sensitive=False)(slots)
            except Exception:  # the timer must go on: the streams' keep-alives depend on it
                logger.exception("renewing %d stream slots failed", len(slots))


def _ping_regularly(listener: StreamListener) -> None:
    global _pinger
    loop = asyncio.get_running_loop()
    listener.last_sent = loop.time()
    _pinged.add(listener)
    if _pinger is None or _pinger.done() or _pinger.get_loop() is not loop:
        _pinger = loop.create_task(_ping_forever())


async def _stream(game_pk: int, channel: str, slot: limits.StreamSlot) -> AsyncIterator[bytes]:
    manager = get_listener_manager()
    listener = StreamListener()
    listener.channels = {channel}
    listener.slot = slot
    listener.assign_loop()
    manager.add_listener(listener)
    try:
        await _redis_subscribed()
        sent, final, message = await _current(game_pk)
        if message is not None:
            yield sse(sent, message)
            if final:
                return
        _ping_regularly(listener)
        loop = asyncio.get_running_loop()
        while True:
            await listener.aevent.wait()
            with manager.lock:
                items = listener.channel_items.pop(channel, [])
                overflow, listener.overflow = listener.overflow, False
                listener.aevent.clear()
            listener.last_sent = loop.time()
            if not items and not overflow:
                yield KEEPALIVE
                continue
            queued = [decode(item.data) for item in items]
            if overflow:
                # The listener's queue is bounded: when it overflowed, the database has the latest snapshot.
                version, final, message = await _current(game_pk)
                if message is not None:
                    queued.append((version, final, message))
            for version, final, message in queued:
                if version <= sent:
                    continue
                yield sse(version, message)
                sent = version
                if final:
                    return
    finally:
        _pinged.discard(listener)
        manager.remove_listener(listener)
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
    slot = await sync_to_async(limits.stream_slot, thread_sensitive=False)(nick)
    return stream_response(game_stream(game.pk, public_id, slot))


def game_stream(game_pk: int, public_id: str, slot: limits.StreamSlot | None = None) -> AsyncIterator[bytes]:
    """Return a game's stream, for spectators as for players: its current snapshot, then each newer one; a player's
    stream holds one of the nick's slots (`limits.stream_slot`) while it lasts."""
    return _stream(game_pk, channel_name(public_id), slot or limits.StreamSlot(None))


class EventStreamResponse(StreamingHttpResponse):
    """A Server-Sent Events response: its stream yields bytes ready to send, which the handler takes as they are
    (StreamingHttpResponse would pass each through two generators of its own, to encode text)."""

    def __init__(self, stream: AsyncIterator[bytes]):
        super().__init__(stream, content_type="text/event-stream")
        self.stream = stream

    def __aiter__(self) -> AsyncIterator[bytes]:
        return aiter(self.stream)


def stream_response(stream: AsyncIterator[bytes]) -> StreamingHttpResponse:
    """Return the Server-Sent Events response of a stream, unbuffered and uncached all the way to the browser."""
    response = EventStreamResponse(stream)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
