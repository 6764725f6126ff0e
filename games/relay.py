"""Carry game updates between server processes through Redis, and keep them flowing when Redis is not there.

django-eventstream publishes to Redis, and one task per process (its RedisListener) hands what Redis says to the
streams of that process. Two gaps are closed here. A publish that fails (Redis down) goes to this process's own
streams instead of being lost. The library's listener is started once and dies silently with its connection: ours
logs the outage, reconnects, and then has every stream of the process re-read its game from the database, so that
nothing published in between is missed (each message is a full snapshot, and versions drop duplicates).
"""

import asyncio
import contextlib
import json
import logging

import redis
from django.conf import settings
from django_eventstream import eventstream
from django_eventstream.event import Event
from django_eventstream.views import get_listener_manager

logger = logging.getLogger(__name__)

REDIS_CHANNEL = "events_channel"  # django-eventstream's
RECONNECT_DELAYS = (0.2, 0.5, 1.0, 2.0)


def send(channel: str, event_type: str, data: str) -> None:
    """Publish an event to every process; without Redis, at least to this one.

    What django-eventstream's send_event does for us, without the rest of it: no event storage is configured, and
    no GRIP proxy, whose publication send_event prepares for every event anyway (a third of its cost).
    """
    event = Event(channel, event_type, data)
    if eventstream.redis_client is None:
        get_listener_manager().add_to_queues(channel, event)
        return
    message = {"channel": channel, "event_type": event_type, "data": data, "pub_id": None}
    try:
        eventstream.redis_client.publish(REDIS_CHANNEL, json.dumps(message))
    except redis.RedisError as error:
        logger.error("Redis unreachable (%s): an update of %s reached only this process's streams", error, channel)
        get_listener_manager().add_to_queues(channel, event)


def resync_streams() -> None:
    """Make every stream of this process read its game's current snapshot from the database."""
    manager = get_listener_manager()
    with manager.lock:
        listeners = {listener for group in manager.listeners_by_channel.values() for listener in group}
        for listener in listeners:
            listener.overflow = True
    for listener in listeners:
        listener.wake_threadsafe()


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
        self.redis_client = Redis(**options, socket_keepalive=True, retry=Retry(NoBackoff(), 0))
        self.pubsub = self.redis_client.pubsub()
        self.unreachable = False
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        self.task = asyncio.current_task()  # a reference, so that the task is not collected while it waits
        attempt = 0
        while True:
            try:
                await self.pubsub.subscribe(REDIS_CHANNEL)
                if self.unreachable:
                    self.unreachable = False
                    logger.warning("Redis at %s is reachable again: updates flow between processes", self.address)
                    resync_streams()
                attempt = 0
                async for message in self.pubsub.listen():
                    if message["type"] == "message":
                        self.deliver(message["data"])
            except Exception as error:
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
        event = json.loads(raw)
        channel = event["channel"]
        get_listener_manager().add_to_queues(
            channel, Event(channel, event["event_type"], event["data"], id=event["pub_id"])
        )


def install() -> None:
    """Put the supervised listener in place of the library's, when events go through Redis."""
    manager = get_listener_manager()
    if manager.redis_listener is not None:
        manager.redis_listener = SupervisedRedisListener()
