"""Waking the streams: from the database thread, all the streams of a batch of updates with one call into the loop."""

import asyncio
import threading

from games.events import StreamListener


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
        thread = threading.Thread(target=lambda: [listener.wake_threadsafe() for listener in listeners])
        thread.start()
        thread.join()
        calls_made = calls
        await asyncio.wait_for(asyncio.gather(*(listener.aevent.wait() for listener in listeners)), 5)
        return calls_made, [listener.aevent.is_set() for listener in listeners]

    calls, woken = asyncio.run(main())
    assert calls == 1
    assert woken == [True] * 5


def test_a_stream_woken_on_its_own_loop_is_woken_at_once():
    async def main() -> bool:
        (listener,) = listeners_on_this_loop(1)
        listener.wake_threadsafe()
        return listener.aevent.is_set()

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
    assert not any(listener.aevent.is_set() for listener in listeners)
    assert listeners[0].wakeups.events == []  # nothing kept for a loop that will never run
