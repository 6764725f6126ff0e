"""Server-Sent Events: the response every stream of the site is sent in, and the loop of the live views that send
what a page shows whenever it changes."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from django.conf import settings
from django.http import StreamingHttpResponse

PING = b": ping\n\n"  # a comment: keeps proxies from closing a quiet stream, and tells the server the client is gone


class EventStreamResponse(StreamingHttpResponse):
    """A Server-Sent Events response: its stream yields bytes ready to send, which the handler takes as they are
    (StreamingHttpResponse would pass each through two generators of its own, to encode text)."""

    def __init__(self, stream: AsyncIterator[bytes]):
        super().__init__(stream, content_type="text/event-stream")
        self.stream = stream

    def __aiter__(self) -> AsyncIterator[bytes]:
        return aiter(self.stream)


def event_stream(events: AsyncIterator[bytes]) -> StreamingHttpResponse:
    """Return the response that sends `events` (SSE frames) as they come: never cached, and never held back by a
    buffering proxy in front (nginx reads X-Accel-Buffering)."""
    response = EventStreamResponse(events)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


class Woken(Protocol):
    """What follows changes: `next()` returns once something changed (games/publication.py's Subscription)."""

    def next(self) -> Awaitable[object]: ...


async def ping_unless_woken(subscription: Woken) -> bytes | None:
    """Wait for the next change; if none comes within TAB_KEEPALIVE_SECONDS, return a ping to send meanwhile."""
    try:
        await asyncio.wait_for(subscription.next(), settings.TAB_KEEPALIVE_SECONDS)
    except TimeoutError:
        return PING
    return None


async def follow(
    subscription: Woken, read: Callable[[], Awaitable[tuple[object, bytes, bool]]]
) -> AsyncIterator[bytes]:
    """Yield the frame of what `read()` gives now and again after each change, when its key (a version, the text
    itself) differs from the last one sent; ping while nothing changes; stop after a frame that `read()` says is the
    last (the game is over)."""
    sent: object = None
    while True:
        key, frame, more = await read()
        if key != sent:
            sent = key
            yield frame
        if not more:
            return
        if (ping := await ping_unless_woken(subscription)) is not None:
            yield ping
