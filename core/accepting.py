"""Listening sockets that accept every waiting connection at once.

uvloop (0.23, with libuv 1.52) accepts one connection each time the event loop polls a listening socket: since 2022
libuv no longer accepts in a loop (its pull request 3696). A loop whose turns are short hardly notices; one whose turns
each run a batch of database calls (TAB_DATABASE_CALLS=loop) accepts a hundred connections a second, and when clients
open connections faster than that the kernel's queue overflows and drops them (clients try again 1, 3, 7 s later).

So the servers of this process listen through `Accepting`: the loop watches the listening socket, and each time it is
ready every connection waiting is accepted (up to the backlog) and handed to the loop as an accepted socket, as
asyncio's own event loop does. `Loop` is uvloop's loop with `create_server(sock=…)` served that way; uvicorn runs it
(`--loop core.accepting:new_event_loop`, and core/server.py's gunicorn worker), and the line servers bind their
sockets and pass them in.
"""

import asyncio
import errno
import logging
import os
import socket
import ssl as ssl_module
from collections.abc import Callable
from typing import Any

import uvloop

logger = logging.getLogger(__name__)

# Seconds the server stops accepting when the process is out of descriptors or memory (asyncio waits as long).
RETRY_AFTER_EXHAUSTION = 1.0
EXHAUSTION = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class Accepting:
    """A listening socket served on `loop`: the part of `asyncio.Server` that uvicorn and the line servers use."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        sock: socket.socket,
        backlog: int,
        ssl: ssl_module.SSLContext | None = None,
        ssl_handshake_timeout: float | None = None,
    ):
        self._loop, self._factory, self._backlog = loop, protocol_factory, backlog
        self._ssl, self._handshake_timeout = ssl, ssl_handshake_timeout
        # A descriptor of our own, whose family the socket module reads from it (uvicorn's `--fd` makes a socket
        # object that calls every descriptor AF_UNIX): its accepted sockets then have the right family.
        self._socket = socket.socket(fileno=os.dup(sock.fileno()))
        self._socket.setblocking(False)
        self._socket.listen(backlog)
        self._connecting: set[asyncio.Task[Any]] = set()
        self._serving = False
        self._closed = False

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        return () if self._closed else (self._socket,)

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def is_serving(self) -> bool:
        return self._serving

    async def start_serving(self) -> None:
        self._watch()

    def _watch(self) -> None:
        if not self._serving and not self._closed:
            self._loop.add_reader(self._socket.fileno(), self._accept)
            self._serving = True

    def close(self) -> None:
        if self._closed:
            return
        if self._serving:
            self._loop.remove_reader(self._socket.fileno())
        self._serving, self._closed = False, True
        self._socket.close()

    async def wait_closed(self) -> None:
        """Return once closed and every connection accepted before is handed over (a TLS one: its handshake ended)."""
        if self._connecting:
            await asyncio.gather(*self._connecting, return_exceptions=True)

    def _accept(self) -> None:
        for _ in range(self._backlog):
            try:
                connection, _address = self._socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as error:
                if error.errno not in EXHAUSTION:
                    raise
                logger.warning("Out of descriptors or memory: accepting again in %.0f s", RETRY_AFTER_EXHAUSTION)
                self._loop.remove_reader(self._socket.fileno())
                self._serving = False
                self._loop.call_later(RETRY_AFTER_EXHAUSTION, self._watch)
                return
            self._hand_over(connection)

    def _hand_over(self, connection: socket.socket) -> None:
        handing = self._loop.connect_accepted_socket(
            self._factory, connection, ssl=self._ssl, ssl_handshake_timeout=self._handshake_timeout
        )
        task = self._loop.create_task(handing)
        self._connecting.add(task)
        task.add_done_callback(self._handed_over)

    def _handed_over(self, task: "asyncio.Task[Any]") -> None:
        self._connecting.discard(task)
        failure = None if task.cancelled() else task.exception()
        if failure is not None:
            # A connection lost before it was handed over, or a failed TLS handshake: the client's business.
            logger.debug("A connection failed before it was served: %r", failure)


class Loop(uvloop.Loop):
    """uvloop's event loop, with servers on given sockets accepting every waiting connection at once."""

    async def create_server(  # type: ignore[override]
        self,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        host: Any = None,
        port: Any = None,
        *,
        sock: socket.socket | None = None,
        backlog: int = 100,
        ssl: ssl_module.SSLContext | None = None,
        ssl_handshake_timeout: float | None = None,
        start_serving: bool = True,
        **options: Any,
    ) -> Any:
        if sock is None or host is not None or port is not None or options:
            return await super().create_server(
                protocol_factory,
                host,
                port,
                sock=sock,
                backlog=backlog,
                ssl=ssl,
                ssl_handshake_timeout=ssl_handshake_timeout,
                start_serving=start_serving,
                **options,
            )
        server = Accepting(self, protocol_factory, sock, backlog, ssl, ssl_handshake_timeout)
        if start_serving:
            await server.start_serving()
        return server


def new_event_loop() -> asyncio.AbstractEventLoop:
    return Loop()
