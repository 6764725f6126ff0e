"""A small HTTP/1.1 client for load generators: kept-alive connections, one request at a time on each, answers with a
Content-Length (what our servers send), nothing else.

aiohttp costs a load generator about 0.3 ms of CPU a request: at the 3,000-4,000 requests a second of the Plakoto
scenario it takes a whole core of a two-core machine and falls behind its own schedule, so the figures become the
generator's. This one writes each request as one buffer and parses each answer's head with a few byte operations:
several times less CPU a request.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

__all__ = ["Client", "HttpError"]


class HttpError(Exception):
    """An answer that this client cannot read (no Content-Length), or a connection closed before its answer."""


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future | None = None
        self.closed = False
        self.close_after = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                self.close_after = True
        if length is None:
            waiter.set_exception(HttpError(f"an answer without Content-Length: {lines[0]!r}"))
            self.transport.close()
            return
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        self.waiter = None
        waiter.set_result((int(lines[0].split(b" ", 2)[1]), body))

    def connection_lost(self, exc) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(HttpError(f"connection closed before the answer ({exc!r})"))


class Client:
    """Requests to one server (`http://host:port`), each on an idle kept-alive connection or a new one."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"an http:// URL, not {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.host_header = parts.netloc.encode()
        self.idle: list[_Connection] = []
        self.opened = 0

    async def _connection(self) -> _Connection:
        while self.idle:
            connection = self.idle.pop()  # the most recently used: the least likely to have been closed meanwhile
            if not connection.closed:
                return connection
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(_Connection, self.host, self.port)
        self.opened += 1
        return connection

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        """Send a request; return the answer's status and body."""
        head = [f"{method} {path} HTTP/1.1\r\nHost: ".encode(), self.host_header, b"\r\n"]
        if body or method in ("POST", "PUT"):
            head.append(b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body))
        for name, value in (headers or {}).items():
            head.append(f"{name}: {value}\r\n".encode())
        head.append(b"\r\n")
        connection = await self._connection()
        connection.waiter = asyncio.get_running_loop().create_future()
        connection.transport.write(b"".join(head) + body)
        try:
            answer = await connection.waiter
        except BaseException:
            connection.transport.close()
            raise
        if connection.close_after:
            connection.transport.close()
        else:
            self.idle.append(connection)
        return answer

    def close(self) -> None:
        for connection in self.idle:
            connection.transport.close()
        self.idle.clear()
