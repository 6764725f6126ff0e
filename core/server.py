"""The HTTP server's own guards, where the ASGI application cannot see: connections that never finish their request
headers or body, and more connections than a process can hold.

uvicorn has neither a time limit on request headers (a client sending a byte every few seconds holds a connection for
ever) nor a connection cap that answers in the protocol's terms: its `limit_concurrency` answers a plain-text 503, and
only once the headers are complete. So the process runs a subclass of uvicorn's httptools protocol (`HttpProtocol`,
through gunicorn's `Worker` below, or `uvicorn --http core.server:HttpProtocol --loop core.accepting:new_event_loop`
as the Worker does). It relies on uvicorn's protocol callbacks (`connection_made`, `data_received`,
`on_message_begin`, `on_headers_complete`, `on_message_complete`, `connection_lost`), its `connections` set and its
request cycle's `response_started`; tests/test_server.py fails loudly if an upgrade of uvicorn changes them. One timer
per connection: the headers' deadline, then the body's, checked when it fires.
"""

import contextlib
import json
import resource
import socket
from collections.abc import Callable
from functools import cache

import httptools
from django.conf import settings
from django.utils.module_loading import import_string
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn_worker import UvicornWorker

from . import transports

# `early(path, scope)` of a mount (core/transports.py): a GET's body and headers, or None.
Early = Callable[[str, dict], tuple[bytes, list[tuple[bytes, bytes]]] | None]

# Descriptors kept for what is not a client: the database, Redis, log files, line servers, the interpreter's own.
RESERVED_FILES = 512
# Seconds a connection refused at the cap stays open after its answer, so that the client reads it; and how many may
# at once (each holds a descriptor of the reserve: past that, they are closed at once).
REFUSED_LINGER = 1.0
REFUSED_LINGERING = RESERVED_FILES // 4


def raise_open_files_limit() -> None:
    """Raise this process's limit of open files to its hard limit (a server's connections are files): a start-up
    step."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 20)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connection_cap() -> int:
    """Return how many connections this process holds at once: TAB_MAX_CONNECTIONS, or what its files allow."""
    if settings.TAB_MAX_CONNECTIONS:
        return settings.TAB_MAX_CONNECTIONS
    return max(64, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - RESERVED_FILES)


def _answer(status: int, reason: str, message: str, retry_after: int | None = None) -> bytes:
    body = json.dumps({"error": message}).encode()
    headers = [
        f"HTTP/1.1 {status} {reason}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "access-control-allow-origin: *",
        "connection: close",
    ]
    if retry_after is not None:
        headers.append(f"retry-after: {retry_after}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


def _no_delay(transport) -> None:
    """Send each write at once (TCP_NODELAY). The event loop does so for the connections of a listening socket that it
    knows to be TCP, but not for one it was handed as a descriptor (`uvicorn --fd`, systemd's socket activation), which
    uvicorn labels a Unix socket: there an answer's head and body, two writes, waited for the client's delayed
    acknowledgement, 40 ms an answer."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        # A Unix socket refuses it; uvloop's socket of a connection already closed says so with ValueError.
        with contextlib.suppress(OSError, ValueError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


@cache
def _early() -> tuple[tuple[str, Early], ...]:
    """The mounts' answerers before the application, by path prefix."""
    return tuple((f"/{mount.prefix}", import_string(mount.early)) for mount in transports.mounts() if mount.early)


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol, with deadlines for each request's headers and body, and a cap on connections;
    and a mount's requests answered from memory as soon as their headers are read (`early`).

    A connection's deadline is a number that each phase of a request sets (or clears, between requests); one timer
    per connection checks it when it fires, and sets itself again for a deadline that moved on meanwhile. So a request
    costs no timer of its own: a client on a kept-alive connection sends many in the time one timer runs.

    A mount may answer a GET without a body from memory (a Plakoto client's poll of a table's status): its `early`
    is asked when the request's headers are complete, and what it gives is written at once, with the headers uvicorn
    would have added, in one write; no request cycle, no task, no ASGI call. Only on a connection with no request of
    its own in flight (an answer must never overtake an earlier one), with keep-alive (HTTP/1.1), no access log and
    writing not paused; anything else goes the usual way."""

    refused = False
    answered = False  # the request under way was answered early
    lingering = 0  # refused connections of the process still open
    due: float | None = None  # when the phase under way must end (loop time), or None between requests
    due_message = ""
    timer = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        _no_delay(transport)
        if len(self.connections) > connection_cap():
            self.refused = True
            transport.write(_answer(503, "Service Unavailable", "Too many connections: try again shortly", 1))
            # Said, then closed a moment later, whatever the client sends meanwhile being dropped: a connection closed
            # with a request unread is reset by the kernel, and the client could lose the answer.
            if HttpProtocol.lingering >= REFUSED_LINGERING or not transport.can_write_eof():
                transport.close()
                return
            transport.write_eof()
            HttpProtocol.lingering += 1
            self.loop.call_later(REFUSED_LINGER, self._refused_close)
            return
        self._expect_headers()

    def data_received(self, data: bytes) -> None:
        if not self.refused:
            super().data_received(data)

    def _refused_close(self) -> None:
        HttpProtocol.lingering -= 1
        self.transport.close()

    def on_message_begin(self) -> None:
        self.answered = False
        super().on_message_begin()
        # The first request's headers are due within the time from the connection; each later one's, from its start.
        if self.due is None:
            self._expect_headers()

    def on_headers_complete(self) -> None:
        if self._answer_early():
            self.answered = True
            self.on_response_complete()  # uvicorn's: the keep-alive timer armed, reading resumed
            return
        super().on_headers_complete()
        # The body, if any, is due within its own time (a request without one completes at once, which clears it).
        self._expect(settings.TAB_BODY_TIMEOUT, f"Request body not received within {settings.TAB_BODY_TIMEOUT} s")

    def on_body(self, body: bytes) -> None:
        if not self.answered:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self.due = None
        if not self.answered:
            super().on_message_complete()

    def _answer_early(self) -> bool:
        """Answer the request whose headers are complete from a mount's `early`, if it may be; return whether it was."""
        if not _early() or self.pipeline or (self.cycle is not None and not self.cycle.response_complete):
            return False
        parser = self.parser
        if parser.get_method() != b"GET" or parser.get_http_version() != "1.1" or not parser.should_keep_alive():
            return False
        if parser.should_upgrade() or self.access_log or self.flow.write_paused:
            return False
        if any(name in (b"content-length", b"transfer-encoding") for name, _ in self.headers):
            return False  # a body (a GET's is ignored, but read): the usual way
        raw = httptools.parse_url(self.url).path
        if b"%" in raw:
            return False
        path = raw.decode("ascii")
        for prefix, early in _early():
            if path.startswith(prefix):
                scope = {"method": "GET", "path": path, "scheme": self.scheme, "headers": self.headers}
                found = early(path, scope)
                if found is None:
                    return False
                body, headers = found
                head = [STATUS_LINE[200]]
                for name, value in (*self.server_state.default_headers, *headers):
                    head += [name.lower(), b": ", value, b"\r\n"]
                self.transport.write(b"".join([*head, b"\r\n", body]))
                return True
        return False

    def connection_lost(self, exc) -> None:
        self.due = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        super().connection_lost(exc)

    def _expect_headers(self) -> None:
        timeout = settings.TAB_HEADER_TIMEOUT
        self._expect(timeout, f"Request headers not received within {timeout} s")

    def _expect(self, seconds: float, message: str) -> None:
        self.due = self.loop.time() + seconds
        self.due_message = message
        if self.timer is None or self.timer.when() > self.due:
            self._set_timer(self.due)

    def _set_timer(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.loop.call_at(when, self._check)

    def _check(self) -> None:
        self.timer = None
        if self.due is None:
            return
        if self.loop.time() < self.due:
            self._set_timer(self.due)
            return
        self.due = None
        if self.transport.is_closing():
            return
        cycle = getattr(self, "cycle", None)
        if cycle is None or not cycle.response_started:
            self.transport.write(_answer(408, "Request Timeout", self.due_message))
        self.transport.close()


class Worker(UvicornWorker):
    """gunicorn's uvicorn worker, serving with `HttpProtocol`, without uvicorn's proxy-headers middleware: the client's
    address is the connection's, and the application alone reads X-Forwarded-For (TRUSTED_PROXIES), so that layer
    would only cost every request a call."""

    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        "http": "core.server:HttpProtocol",
        "loop": "core.accepting:new_event_loop",
        "proxy_headers": False,
    }
