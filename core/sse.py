"""Server-Sent Events: the response every stream of the site is sent in."""

from collections.abc import AsyncIterator

from django.http import StreamingHttpResponse


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
