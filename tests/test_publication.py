"""Publication (games/publication.py): what django-eventstream is relied on for, the events' format, subscriptions
that get what is published, and the wake-ups of a batch's followers with one call into the loop."""

import asyncio
import inspect
import json
import os
import re
import threading
from importlib.metadata import version

import pytest
from django_eventstream import eventstream
from django_eventstream.views import Listener, get_listener_manager

from games import publication
from games.publication import _Listener as StreamListener

from .live import ROOT


def test_the_library_still_has_what_publication_relies_on():
    """Fails at once if an upgrade of django-eventstream changes the private parts games/publication.py uses: then
    that module must be read again against the new version before the pin in pyproject.toml moves."""
    pinned = re.search(r'"django-eventstream==([^"]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert version("django-eventstream") == pinned
    listener = Listener()
    for attribute in ("channel_items", "overflow", "channels", "loop"):
        assert hasattr(listener, attribute), attribute
    assert callable(listener.assign_loop) and callable(listener.wake_threadsafe)
    manager = get_listener_manager()
    for attribute in ("lock", "listeners_by_channel", "redis_listener"):
        assert hasattr(manager, attribute), attribute
    for method in ("add_listener", "remove_listener", "add_to_queues"):
        assert list(inspect.signature(getattr(manager, method)).parameters)[
            : 2 if method == "add_to_queues" else 1
        ] == (["channel", "event"] if method == "add_to_queues" else ["listener"]), method
    assert hasattr(eventstream, "redis_client")


def test_an_event_carries_each_transports_text():
    data = publication.encode(7, True, {"course": '{"turn":"zp"}', "lines": "STATE a b"})
    assert publication.decode(data) == (7, True, {"course": '{"turn":"zp"}', "lines": "STATE a b"})
    assert publication.decode(publication.encode(1, False, {})) == (1, False, {})


def test_a_subscription_gets_what_is_sent_on_its_channel_only():
    async def main():
        mine, other = publication.Subscription("abc"), publication.Subscription("xyz")
        try:
            publication.send(
                publication.channel_name("abc"), publication.EVENT_TYPE, publication.encode(3, False, {"t": "x"})
            )
            events, lost = await asyncio.wait_for(mine.next(), 5)
            other.wake()
            nothing = await asyncio.wait_for(other.next(), 5)
            return events, lost, nothing
        finally:
            mine.close()
            other.close()

    events, lost, nothing = asyncio.run(main())
    assert (events, lost) == ([(3, False, {"t": "x"})], False)
    assert nothing == ([], False)


def test_a_follower_waits_on_a_future_that_a_wake_up_ends():
    async def main():
        subscription = publication.Subscription("abc")
        try:
            waiter = subscription.waiting()
            assert isinstance(waiter, asyncio.Future) and not waiter.done()
            publication.send(
                publication.channel_name("abc"), publication.EVENT_TYPE, publication.encode(4, False, {"t": "y"})
            )
            await asyncio.wait_for(waiter, 5)
            taken = subscription.take()
            subscription.wake()
            woken_meanwhile = subscription.waiting()  # a wake-up since the last take: nothing to wait for
            nothing = subscription.take()
            again = subscription.waiting()
            return taken, woken_meanwhile, nothing, again.done()
        finally:
            subscription.close()

    taken, woken_meanwhile, nothing, done = asyncio.run(main())
    assert taken == ([(4, False, {"t": "y"})], False)
    assert woken_meanwhile is None
    assert nothing == ([], False)
    assert done is False


def listeners_on_this_loop(count: int) -> list[StreamListener]:
    listeners = [StreamListener() for _ in range(count)]
    for listener in listeners:
        listener.assign_loop()
    return listeners


def test_streams_woken_from_another_thread_are_woken_together():
    async def main() -> tuple[int, list[bool]]:
        loop = asyncio.get_running_loop()
        calls = 0
        call_soon_threadsafe = loop.call_soon_threadsafe

        def counted(*args, **kwargs):
            nonlocal calls
            calls += 1
            return call_soon_threadsafe(*args, **kwargs)

        loop.call_soon_threadsafe = counted
        listeners = listeners_on_this_loop(5)
        waiters = []
        for listener in listeners:
            listener.waiter = loop.create_future()
            waiters.append(listener.waiter)
        thread = threading.Thread(target=lambda: [listener.wake_threadsafe() for listener in listeners])
        thread.start()
        thread.join()
        calls_made = calls
        await asyncio.wait_for(asyncio.gather(*waiters), 5)
        return calls_made, [listener.woken for listener in listeners]

    calls, woken = asyncio.run(main())
    assert calls == 1
    assert woken == [True] * 5


def test_a_stream_woken_on_its_own_loop_is_woken_at_once():
    async def main() -> bool:
        (listener,) = listeners_on_this_loop(1)
        listener.wake_threadsafe()
        return listener.woken

    assert asyncio.run(main())


def test_waking_the_streams_of_a_closed_loop_does_nothing():
    async def make() -> list[StreamListener]:
        return listeners_on_this_loop(2)

    listeners = asyncio.run(make())
    errors = []

    def wake() -> None:
        try:
            for listener in listeners:
                listener.wake_threadsafe()
        except Exception as error:
            errors.append(error)

    thread = threading.Thread(target=wake)
    thread.start()
    thread.join()
    assert errors == []
    assert not any(listener.woken for listener in listeners)
    assert listeners[0].wakeups.listeners == []  # nothing kept for a loop that will never run


@pytest.fixture
def redis_publisher(monkeypatch, settings):
    """Events published through the tests' real Redis, as with REDIS_URL: yield a subscriber to django-eventstream's
    channel there, one of this test process's own (suites that run side by side share the Redis server)."""
    import redis

    from .conftest import require
    from .live import REDIS_TEST_URL, redis_available

    require(redis_available(), "Redis")
    settings.EVENTSTREAM_REDIS = {"db": 1000 + os.getpid()}  # the channel's name only: the client is the tests'
    monkeypatch.setattr(eventstream, "redis_client", redis.Redis.from_url(REDIS_TEST_URL))
    subscriber = redis.Redis.from_url(REDIS_TEST_URL).pubsub(ignore_subscribe_messages=True)
    subscriber.subscribe(publication.redis_channel())
    assert subscriber.get_message(timeout=5) is None  # the subscription's confirmation, left out
    yield subscriber
    subscriber.close()


def received(subscriber, count: int) -> list[list[str]]:
    """The data of the events of the next `count` messages, message by message."""
    messages = []
    while len(messages) < count and (message := subscriber.get_message(timeout=5)) is not None:
        messages.append([data for _, _, data, _ in publication.unpack(message["data"])])
    return messages


@pytest.mark.redis
def test_the_events_of_a_batch_go_to_redis_together_when_it_ends(redis_publisher):
    """In one message: every process's listener reads every message, whatever it holds."""
    published = []
    publish = eventstream.redis_client.publish
    eventstream.redis_client.publish = lambda *arguments: published.append(arguments) or publish(*arguments)
    events = [publication.encode(version, False, {"t": str(version)}) for version in (1, 2, 3)]
    with publication.gathered():
        for data in events:
            publication.send(publication.channel_name("abc"), publication.EVENT_TYPE, data)
        with publication.gathered():  # a block inside leaves the sending to the outer one
            pass
        assert published == []
    assert len(published) == 1
    assert received(redis_publisher, 1) == [events]
    publication.send(publication.channel_name("abc"), publication.EVENT_TYPE, events[0])  # outside: at once
    assert received(redis_publisher, 1) == [events[:1]]


@pytest.mark.redis
def test_sites_sharing_a_redis_server_hear_only_their_own_events(redis_publisher, settings):
    """Redis's publish/subscribe ignores the database number: two sites on one Redis server, each with its database,
    publish on channels of their own."""
    import redis

    from .live import REDIS_TEST_URL

    subscribers, events = {}, {}
    for db in (98, 99):
        settings.EVENTSTREAM_REDIS = {"db": db}
        subscribers[db] = redis.Redis.from_url(REDIS_TEST_URL).pubsub(ignore_subscribe_messages=True)
        subscribers[db].subscribe(publication.redis_channel())
        assert subscribers[db].get_message(timeout=5) is None  # the subscription's confirmation, left out
        events[db] = publication.encode(db, False, {"t": str(db)})
    try:
        for db in (98, 99):
            settings.EVENTSTREAM_REDIS = {"db": db}
            publication.send(publication.channel_name("abc"), publication.EVENT_TYPE, events[db])
        # Sent one after the other on one connection: each site's first event is its own.
        assert received(subscribers[98], 1) == [[events[98]]]
        assert received(subscribers[99], 1) == [[events[99]]]
    finally:
        for subscriber in subscribers.values():
            subscriber.close()


def test_the_events_of_a_batch_reach_this_processs_streams_when_redis_is_down(monkeypatch):
    import redis

    monkeypatch.setattr(eventstream, "redis_client", redis.Redis.from_url("redis://127.0.0.1:1/0"))  # nothing there

    async def main():
        subscription = publication.Subscription("abc")
        try:
            with publication.gathered():
                for version in (1, 2):
                    data = publication.encode(version, False, {"t": str(version)})
                    publication.send(publication.channel_name("abc"), publication.EVENT_TYPE, data)
            return await asyncio.wait_for(subscription.next(), 5)
        finally:
            subscription.close()

    events, lost = asyncio.run(main())
    assert (events, lost) == ([(1, False, {"t": "1"}), (2, False, {"t": "2"})], False)


@pytest.mark.redis
def test_a_process_takes_from_redis_the_changes_its_streams_follow_and_drops_the_rest(redis_publisher):
    """What `_send_all` publishes, as the listener of every process gets it: the changes of a match followed here are
    queued for its followers, the others (followed in other processes) dropped. A message of the library's own shape
    (its send_event) is taken too."""
    followed, elsewhere = publication.channel_name("abc"), publication.channel_name("xyz")
    first, second, third = (publication.encode(version, False, {"t": str(version)}) for version in (1, 2, 3))
    publication._send_all([(elsewhere, publication.EVENT_TYPE, first), (followed, publication.EVENT_TYPE, second)])
    message = redis_publisher.get_message(timeout=5)
    assert message is not None
    raw = message["data"]
    assert [channel for channel, _, _, _ in publication.unpack(raw)] == [elsewhere, followed]
    library_shaped = json.dumps({"event_type": "message", "channel": followed, "data": third, "pub_id": None})

    async def main():
        subscription = publication.Subscription("abc")
        try:
            for message in (raw, library_shaped.encode()):
                publication.SupervisedRedisListener.deliver(message)
            return await asyncio.wait_for(subscription.next(), 5)
        finally:
            subscription.close()

    events, lost = asyncio.run(main())
    assert events == [publication.decode(second), publication.decode(third)] and lost is False


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"events": [[1]]}', b'{"channel": "game-abc"}', b"null"])
def test_a_message_that_is_no_event_is_dropped_and_the_listener_goes_on(raw, caplog):
    """Something else publishing on the channel must not stop the process's streams (nor pass for an outage)."""

    async def main():
        subscription = publication.Subscription("abc")
        try:
            publication.SupervisedRedisListener.deliver(raw)
            event = (publication.channel_name("abc"), publication.EVENT_TYPE, publication.encode(1, False, {"t": "1"}))
            publication.SupervisedRedisListener.deliver(publication.pack([event]))
            return await asyncio.wait_for(subscription.next(), 5)
        finally:
            subscription.close()

    events, lost = asyncio.run(main())
    assert events == [(1, False, {"t": "1"})] and lost is False
    assert "is no event" in caplog.text
