"""Publication: every committed change of a match reaches whoever follows the match, in this process or any other.

A service calls `publish_on_commit(game, state)` once per change: "match M is at version V". A transport that serves
the game's kind may register a renderer (`register_renderer`), which turns the match into what its clients are sent
(the course API's snapshot, …): the renderers run once per change, in the process that made it, and the event carries
their texts, so a thousand followers cost one rendering, not a thousand. Followers take the event through a
`Subscription` and pick their transport's text, or, when their transport renders nothing, read the match themselves.

Events travel through django-eventstream: inside one process its listener manager wakes the subscriptions of the
match's channel; with REDIS_URL set, the event goes through Redis to every server process (the events of one batch of
the database thread together, in one message: `gathered`, `pack`).

This is the one module that relies on django-eventstream beyond `send_event`: its listeners (`Listener`:
`channel_items`, `overflow`, `assign_loop` and the `loop` it sets, `wake_threadsafe`, which the manager calls), the
manager's `lock`, `listeners_by_channel`, `add_to_queues` and `redis_listener`, and the module's `redis_client`. The
measured targets need it: `send_event` prepares a GRIP publication for every event (a third of its cost), the library's
listener is woken with one call into the event loop per stream, and its Redis listener dies silently with its
connection. The version is pinned in pyproject.toml, and tests/test_publication.py fails at once if the library changes
what is relied on here.

Two gaps of the library are closed here. A publish that fails (Redis down) goes to this process's own followers
instead of being lost. The library's Redis listener is started once and dies silently with its connection: ours logs
the outage, reconnects, and then has every subscription of the process re-read its match from the database, so that
nothing published in between is missed (each event is a full rendering, and versions drop duplicates).
"""

import asyncio
import contextlib
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any

import orjson
import redis
from django.conf import settings
from django.db import transaction
from django_eventstream import eventstream
from django_eventstream.event import Event
from django_eventstream.views import Listener, get_listener_manager

from core import notices

logger = logging.getLogger(__name__)

EVENT_TYPE = "message"
REDIS_SUBSCRIBE_WAIT = 2.0

# A renderer turns a match (the game row and its rules state) into a transport's text, or None when that transport's
# clients are sent nothing for this version (the course API says nothing while a game waits for an opponent).
Renderer = Callable[[Any, Any], str | None]
_renderers: dict[str, list[tuple[str, Renderer]]] = {}


def register_renderer(kind: str, transport: str, render: Renderer) -> None:
    """Have `render(game, state)` run for every published change of a match of `kind`: its text is `transport`'s."""
    renderers = _renderers.setdefault(kind, [])
    renderers[:] = [(name, function) for name, function in renderers if name != transport] + [(transport, render)]


def channel_name(public_id: str) -> str:
    return f"game-{public_id}"


def encode(version: int, final: bool, texts: dict[str, str]) -> str:
    """Pack an event: the match's version, whether it is its last, and one line per transport with its text."""
    lines = [f"{version} {int(final)}"] + [f"{transport} {text}" for transport, text in texts.items()]
    return "\n".join(lines)


@lru_cache(maxsize=1024)
def decode(data: str) -> tuple[int, bool, dict[str, str]]:
    """Unpack an event (remembered: every follower of a match decodes the same event; do not change what it gives)."""
    head, *lines = data.split("\n")
    version, final = head.split(" ")
    texts = dict(line.split(" ", 1) for line in lines)
    return int(version), final == "1", texts


def renderings(game: Any, state: Any) -> dict[str, str]:
    """Return every registered transport's text for the match as it is now."""
    texts = {}
    for transport, render in _renderers.get(game.kind, ()):
        text = render(game, state)
        if text is not None:
            texts[transport] = text
    return texts


def publish_on_commit(game: Any, state: Any, *, final: bool) -> None:
    """Once the current transaction commits, tell every follower of the match that it is at `game.version`, with the
    text of each transport that renders the match's kind. Every change is published, rendered or not: a follower whose
    transport renders nothing (or nothing for this version) reads the match itself when woken."""
    channel = channel_name(game.public_id)
    data = encode(game.version, final, renderings(game, state))
    # robust: the change is committed whatever happens to its publication; a follower that misses it catches up from
    # the database when it reconnects.
    transaction.on_commit(lambda: send(channel, EVENT_TYPE, data), robust=True)


def announce_on_commit(channel: str) -> None:
    """Once the current transaction commits, wake every follower of `channel`, a protocol's own (a Plakoto table
    is one: its seats change with no match to publish): they read what changed themselves."""
    transaction.on_commit(lambda: send(channel, EVENT_TYPE, encode(0, False, {})), robust=True)


def redis_channel() -> str:
    """The Redis channel of this site's events. Redis's publish/subscribe ignores the database number: the channel
    carries it (django-eventstream's name, then the number), so that sites sharing a Redis server, each with a
    database of its own, hear only their own events."""
    return f"events_channel:{getattr(settings, 'EVENTSTREAM_REDIS', {}).get('db', 0)}"


RECONNECT_DELAYS = (0.2, 0.5, 1.0, 2.0)


# The events of the calls that a thread runs together (a batch of the database thread: `gathered`), sent at its end.
_gathering = threading.local()


@contextlib.contextmanager
def gathered() -> Iterator[None]:
    """Send the events of the changes committed inside the block together when it ends: through Redis, one trip for
    a whole batch of the database thread's calls instead of one per change (the thread waits for each trip)."""
    if getattr(_gathering, "events", None) is not None:
        yield  # already gathering: the outer block sends them
        return
    events: list[tuple[str, str, str]] = []
    _gathering.events = events
    try:
        yield
    finally:
        _gathering.events = None
        if events:
            try:
                _send_all(events)
            except Exception:  # the changes are committed whatever happens to their publication (robust on_commit)
                logger.exception("publishing %d updates failed", len(events))


def gathered_batch(calls: object) -> contextlib.AbstractContextManager[None]:
    """`gathered()` around a batch of database calls (core.dbthread.around_each_batch)."""
    return gathered()


# Told the channel of every change committed in this process, in the committing thread, before anything else hears of
# it (games/kept.py: values kept in memory are dropped there).
_observers: list[Callable[[str], None]] = []
# What the observers are told when a write may have changed any match (deadlines moved after an outage): no channel's.
EVERY_CHANNEL = "*"


def observe_changes(observer: Callable[[str], None]) -> None:
    """Have `observer(channel)` called for every change that this process commits, right after its commit, in the
    thread that committed it: before the change's own answer is sent, and before any follower is woken. It must be
    quick and must not raise."""
    if observer not in _observers:
        _observers.append(observer)


def every_channel_changed_on_commit() -> None:
    """Once the current transaction commits, tell the observers that a write it made may have changed any match, with
    nothing published (`EVERY_CHANNEL`)."""

    def tell() -> None:
        for observer in _observers:
            observer(EVERY_CHANNEL)

    transaction.on_commit(tell, robust=True)


def send(channel: str, event_type: str, data: str) -> None:
    """Send an event to every process; without Redis, at least to this one. Inside `gathered()`, when the block ends.

    What django-eventstream's send_event does for us, without the rest of it: no event storage is configured, and
    no GRIP proxy, whose publication send_event prepares for every event anyway (a third of its cost).
    """
    for observer in _observers:
        observer(channel)
    events = getattr(_gathering, "events", None)
    if events is not None and eventstream.redis_client is not None:
        events.append((channel, event_type, data))
    else:
        _send_all([(channel, event_type, data)])


def _send_all(events: list[tuple[str, str, str]]) -> None:
    if eventstream.redis_client is None:
        _to_this_process(events)
        return
    try:
        # One message for them all: every process's listener reads every message, and a message costs it (and the
        # publisher) far more than the few events in it (BENCHMARKS.md).
        eventstream.redis_client.publish(redis_channel(), pack(events))
    except redis.RedisError as error:
        logger.error(
            "Redis unreachable (%s): %d updates (%s, …) reached only this process's streams",
            error,
            len(events),
            events[0][0],
        )
        _to_this_process(events)


def pack(events: list[tuple[str, str, str]]) -> bytes:
    """The Redis message of these events (channel, event type, data): `{"events": [[channel, type, data], …]}`."""
    return orjson.dumps({"events": events})


def unpack(raw: bytes | str) -> list[tuple[str, str, str, Any]]:
    """The events of a Redis message (channel, event type, data, id): ours (`pack`), or one event as
    django-eventstream's own `send_event` writes it."""
    message = orjson.loads(raw)
    if isinstance(message, dict) and "events" in message:
        return [(channel, event_type, data, None) for channel, event_type, data in message["events"]]
    return [(message["channel"], message["event_type"], message["data"], message.get("pub_id"))]


def _to_this_process(events: list[tuple[str, str, str]]) -> None:
    manager = get_listener_manager()
    for channel, event_type, data in events:
        manager.add_to_queues(channel, Event(channel, event_type, data))


def updates_cut() -> bool:
    """Whether changes made in this process reach only its own followers now: events go between processes through
    Redis, and Redis is unreachable (the players served by other processes cannot see them)."""
    listener = get_listener_manager().redis_listener
    return listener is not None and bool(getattr(listener, "unreachable", False))


def resync_streams() -> None:
    """Make every subscription of this process read its match as it is from the database."""
    manager = get_listener_manager()
    with manager.lock:
        listeners = {listener for group in manager.listeners_by_channel.values() for listener in group}
        for listener in listeners:
            listener.overflow = True
    for listener in listeners:
        listener.wake_threadsafe()


# The listener's connection is probed after this many seconds without traffic, then every KEEPALIVE_INTERVAL, and given
# up after KEEPALIVE_PROBES unanswered probes: a connection that dies silently (a dropped route) is found within about
# 25 s instead of the system's default two hours, during which the process would believe it hears (core/notices.py).
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_PROBES = 10, 5, 3


def keepalive() -> dict[int, int]:
    """The TCP keep-alive options of the listener's socket, those the system has."""
    import socket

    wanted = {"TCP_KEEPIDLE": KEEPALIVE_IDLE, "TCP_KEEPINTVL": KEEPALIVE_INTERVAL, "TCP_KEEPCNT": KEEPALIVE_PROBES}
    return {getattr(socket, name): value for name, value in wanted.items() if hasattr(socket, name)}


class SupervisedRedisListener:
    """Listen to Redis for the events of other processes as long as the process lives, reconnecting after outages."""

    def __init__(self) -> None:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        # No read timeout (a quiet channel is normal) and no silent retries: an outage must surface here.
        options = {
            key: value for key, value in settings.EVENTSTREAM_REDIS.items() if key not in ("socket_timeout", "retry")
        }
        self.address = f"{options.get('host')}:{options.get('port')}"
        self.redis_client = Redis(
            **options, socket_keepalive=True, socket_keepalive_options=keepalive(), retry=Retry(NoBackoff(), 0)
        )
        self.pubsub = self.redis_client.pubsub()
        self.unreachable = False
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        self.task = asyncio.current_task()  # a reference, so that the task is not collected while it waits
        attempt = 0
        while True:
            try:
                await self.pubsub.subscribe(redis_channel())
                if self.unreachable:
                    self.unreachable = False
                    logger.warning("Redis at %s is reachable again: updates flow between processes", self.address)
                    resync_streams()
                attempt = 0
                async for message in self.pubsub.listen():
                    if message["type"] == "message":
                        self.deliver(message["data"])
                    elif message["type"] == "subscribe":
                        notices.heard()  # confirmed: every message published from now on comes here
            except Exception as error:
                notices.deaf()
                if not self.unreachable:
                    self.unreachable = True
                    logger.error(
                        "Redis at %s is unreachable (%s): this process's streams get only the updates made in this "
                        "process until it is back; reconnecting",
                        self.address,
                        error,
                    )
                with contextlib.suppress(Exception):
                    await self.pubsub.aclose()
                self.pubsub = self.redis_client.pubsub()
                await asyncio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])
                attempt += 1

    @staticmethod
    def deliver(raw: bytes) -> None:
        manager = get_listener_manager()
        try:
            events = unpack(raw)
        except (ValueError, KeyError, TypeError):  # orjson's decode error is a ValueError
            # Not ours, and no event of the library's: something else publishes on the channel. Dropped, the
            # listener going on (a failure here would count as an outage of Redis, and every stream read again).
            logger.warning("a message on %s is no event (%r…): dropped", redis_channel(), raw[:80])
            return
        # Every process gets every change; most are followed in another process: those are dropped here.
        for channel, event_type, data, event_id in events:
            if notices.deliver(channel, data):
                continue
            if manager.listeners_by_channel.get(channel):
                manager.add_to_queues(channel, Event(channel, event_type, data, id=event_id))


def install() -> None:
    """Put the supervised listener in place of the library's, when events go through Redis."""
    manager = get_listener_manager()
    if manager.redis_listener is not None:
        manager.redis_listener = SupervisedRedisListener()
        notices.send_with(tell_processes)


def tell_processes(channel: str, text: str) -> None:
    """Send a notice (core.notices) to every process through Redis, at once (not gathered with a batch's updates)."""
    try:
        eventstream.redis_client.publish(redis_channel(), pack([(channel, EVENT_TYPE, text)]))
    except redis.RedisError as error:
        logger.error("Redis unreachable (%s): a notice on %s reached no other process", error, channel)


class _Wakeups:
    """The subscriptions of one event loop to wake, gathered from other threads: one call into the loop wakes them all.

    The database thread publishes a batch's updates one after another; a call into the loop per subscription (the
    library's way) wrote to the loop's wake-up pipe each time, holding the GIL, which was 7 % of that thread's work."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = weakref.ref(loop)  # held by the loop's entry in `_wakeups`, which must not keep the loop alive
        self.lock = threading.Lock()
        self.listeners: list[_Listener] = []

    def add(self, listener: "_Listener") -> None:
        with self.lock:
            self.listeners.append(listener)
            if len(self.listeners) > 1:
                return  # the call that wakes them is on its way
        loop = self.loop()
        try:
            if loop is not None:
                loop.call_soon_threadsafe(self.wake)
                return
        except RuntimeError:
            pass
        with self.lock:  # the loop is closed or gone: no one is waiting any more
            self.listeners.clear()

    def wake(self) -> None:
        with self.lock:
            listeners, self.listeners = self.listeners, []
        for listener in listeners:
            listener.wake()


_wakeups: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Wakeups] = weakref.WeakKeyDictionary()


class _Listener(Listener):
    """django-eventstream's listener, woken directly on its own loop and through `_Wakeups` from other threads.

    Its follower waits on a future of its own (`waiter`), not on the library's `aevent`: an asyncio.Event's wait is a
    coroutine around a future, and a stream waits between any two events; with thousands of streams, the objects of
    their waits are much of what the garbage collector walks (BENCHMARKS.md)."""

    woken = False  # since the follower last took what came (`Subscription.take`)
    waiter: asyncio.Future | None = None

    def assign_loop(self) -> None:
        super().assign_loop()
        self.thread = threading.get_ident()
        self.wakeups = _wakeups.get(self.loop) or _wakeups.setdefault(self.loop, _Wakeups(self.loop))

    def wake(self) -> None:
        """On the listener's loop: note the wake-up, and end the follower's wait if it waits."""
        self.woken = True
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def wake_threadsafe(self) -> None:
        if threading.get_ident() == self.thread:
            self.wake()
        else:
            self.wakeups.add(self)


class Subscription:
    """One follower of one match in this process (and of any channels announced to, `announce_on_commit`), on the
    running event loop: `await next()` for what came."""

    def __init__(self, public_id: str | None, *, channels: Iterable[str] = ()):
        self.channels = ({channel_name(public_id)} if public_id else set()) | set(channels)
        self._manager = get_listener_manager()
        self._listener = _Listener()
        self._listener.channels = self.channels
        self._listener.assign_loop()
        self._manager.add_listener(self._listener)

    async def ready(self) -> None:
        """Wait until this process listens to Redis, so that no change published meanwhile is missed."""
        redis_listener = self._manager.redis_listener
        if redis_listener is None or redis_listener.unreachable:
            return
        loop = asyncio.get_running_loop()
        give_up = loop.time() + REDIS_SUBSCRIBE_WAIT
        while not redis_listener.pubsub.subscribed and not redis_listener.unreachable and loop.time() < give_up:
            await asyncio.sleep(0.005)

    def waiting(self) -> asyncio.Future | None:
        """Return a future done at the next wake-up, or None if one came since the last `take()`: awaited directly,
        it makes no coroutine of its own (a stream waits so between any two events, `next()` for the others)."""
        listener = self._listener
        if listener.woken:
            return None
        listener.waiter = waiter = listener.loop.create_future()
        return waiter

    def take(self) -> tuple[list[tuple[int, bool, dict[str, str]]], bool]:
        """Return the events that came since the last `take()`, decoded, and whether some were lost (the queue of a
        slow follower is bounded, and a Redis outage loses events): then the database has the match as it is.
        Nothing at all after a wake-up means `wake()` was called."""
        listener = self._listener
        listener.waiter = None
        with self._manager.lock:
            items = [item for channel in self.channels for item in listener.channel_items.pop(channel, [])]
            lost, listener.overflow = listener.overflow, False
            listener.woken = False
        return [decode(item.data) for item in items], lost

    async def next(self) -> tuple[list[tuple[int, bool, dict[str, str]]], bool]:
        """Wait for a wake-up; return what `take()` returns then."""
        if (waiter := self.waiting()) is not None:
            await waiter
        return self.take()

    def wake(self) -> None:
        """Wake the follower on its own loop, with nothing new (a keep-alive is due)."""
        self._listener.wake()

    def close(self) -> None:
        self._manager.remove_listener(self._listener)
