"""Refuse request bodies over TAB_MAX_BODY_BYTES before the application reads them (the HTTP protocol gives a body
its time: core/server.py).

Django checks the size only once its ASGI handler has read the whole body (into a temporary file, on disk past a few
megabytes), so a client could make every server process write gigabytes. This ASGI middleware answers 413 at once
when Content-Length announces too much, and stops a chunked body as soon as it grows past the limit.

A body a little too large (up to DRAIN_BYTES) is read and dropped before the answer: a connection closed with unread
data is reset by the kernel, and a client still sending would get the reset instead of the 413.
"""

import inspect
import json

from django.conf import settings


def too_large() -> str:
    """Return the error of a body over the limit, wherever it is caught."""
    return f"Request body too large: at most {settings.TAB_MAX_BODY_BYTES} bytes"


DRAIN_BYTES = 1024 * 1024


async def _drain(receive, budget: int) -> None:
    """Read and drop what is left of a request body, up to `budget` bytes."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _answer(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"access-control-allow-origin", b"*"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


async def _read(receive, limit: int) -> list[dict]:
    """Read a whole request body (its ASGI messages), or raise _TooLarge as soon as it grows past `limit`."""
    messages, size = [], 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        size += len(message.get("body", b""))
        if size > limit:
            if message.get("more_body", False):
                await _drain(receive, DRAIN_BYTES - size)
            raise _TooLarge
        if not message.get("more_body", False):
            return messages


class BodySizeLimit:
    """Refuse (413) a request whose body is over TAB_MAX_BODY_BYTES: at once when its Content-Length says so (the
    server holds a body to it), as soon as it grows past the limit when it comes in chunks."""

    def __init__(self, app):
        self.app = app

    # A request within the limit goes on to the application's coroutine, awaited directly: this layer is no frame of
    # its resumptions.
    @inspect.markcoroutinefunction
    def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return self.app(scope, receive, send)
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        if length is not None:
            # The server holds a body to its Content-Length: only the announced size needs checking.
            if length.isdigit() and int(length) <= settings.TAB_MAX_BODY_BYTES:
                return self.app(scope, receive, send)
            return self._refused(length, receive, send)
        if b"chunked" not in headers.get(b"transfer-encoding", b""):
            # No body at all (a GET, a stream): nothing to check.
            return self.app(scope, receive, send)
        return self._read_chunked(scope, receive, send)

    @staticmethod
    async def _refused(length: bytes, receive, send) -> None:
        if length.isdigit() and int(length) <= DRAIN_BYTES:
            await _drain(receive, int(length))
        await _answer(send, 413, too_large())

    async def _read_chunked(self, scope, receive, send):
        limit = settings.TAB_MAX_BODY_BYTES
        try:
            messages = await _read(receive, limit)
        except _TooLarge:
            return await _answer(send, 413, too_large())

        async def replay():
            return messages.pop(0) if messages else await receive()

        return await self.app(scope, replay, send)
