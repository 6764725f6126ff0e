"""Line servers: the long-running TCP and TLS servers of the protocols that are not HTTP, run with asyncio on the event
loop of every server process, beside the web server.

A protocol package registers its server from its AppConfig.ready (`register(LineServer(...))`); the process's start-up
(tabsite/asgi.py) starts every registered server, and its shutdown stops them: `make run` starts and stops them with
the web server. Each process listens on the same port (SO_REUSEPORT): the kernel spreads connections over the
processes, which share the database, the deadlines and the publication like the web workers do.

A connection is served by the protocol's `handle(reader, writer)` coroutine, or, for a server that answers thousands of
requests a second (Fish), by an asyncio protocol of its own (`LineProtocol`), which answers from the event loop's
callbacks without a coroutine's task and streams around each request. Whatever a client does, and whatever goes
wrong while serving it, ends that connection alone: the server and every other connection go on.
"""

import asyncio
import contextlib
import fcntl
import ipaddress
import logging
import os
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

logger = logging.getLogger(__name__)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
Hook = Callable[[], Awaitable[None]]


class LineProtocol(asyncio.Protocol):
    """A connection of a server served by a protocol instead of a handler: it is kept among the server's open
    connections (closed at shutdown) and has keep-alive probes, as a handler's is. Subclasses that override
    `connection_made` or `connection_lost` call these."""

    transport: asyncio.Transport

    def __init__(self, opened: set[asyncio.BaseTransport]) -> None:
        self._opened = opened

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self._opened.add(transport)
        _keep_alive(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._opened.discard(self.transport)


def _keep_alive(transport: asyncio.BaseTransport) -> None:
    # Keep-alive probes notice a peer that vanished without closing (a player may rightly say nothing for long).
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)


# Connections waiting to be accepted, as many as gunicorn's default for the web server's socket.
BACKLOG = 2048
# A TLS handshake left half-done is dropped after this long.
HANDSHAKE_TIMEOUT = 10.0
# Connections still open at shutdown are closed after this long.
CLOSE_TIMEOUT = 5.0


@dataclass(frozen=True)
class LineServer:
    name: str
    handler: Handler | None  # None for a server served by `protocol`
    host: str
    port: int
    certificate: str | None = None  # PEM files: with both, the server speaks TLS
    key: str | None = None
    line_limit: int = 64 * 1024  # the longest line a client may send (StreamReader.readline raises past it)
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    # Run in the process before it listens (what the server needs ready: its certificate, its state after a
    # restart), and at its shutdown before the open connections are closed.
    on_start: Hook | None = None
    on_stop: Hook | None = None
    # The connections' protocol, made with the set of the server's open connections, instead of `handler`.
    protocol: Callable[[set[asyncio.BaseTransport]], LineProtocol] | None = None

    def tls(self) -> ssl.SSLContext | None:
        if not self.certificate or not self.key:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.certificate, self.key)
        return context


_registered: dict[str, LineServer] = {}
_running: list["_Running"] = []


def register(server: LineServer) -> None:
    """Have every server process serve `server` (a protocol's AppConfig.ready calls this)."""
    _registered[server.name] = server


def registered() -> list[LineServer]:
    return list(_registered.values())


def _listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on the host's first address (as gunicorn binds the web server's), on a port that every
    server process shares (SO_REUSEPORT). The event loop of core/accepting.py serves it, accepting every waiting
    connection at once."""
    family, _type, _proto, _name, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    return socket.create_server(address, family=family, backlog=BACKLOG, reuse_port=True)


class _Running:
    def __init__(self, config: LineServer):
        self.config = config
        self.writers: set[asyncio.StreamWriter] = set()
        self.transports: set[asyncio.BaseTransport] = set()  # a protocol's connections
        self.server: asyncio.Server | None = None
        self.listener: socket.socket | None = None

    async def start(self) -> None:
        config = self.config
        if config.on_start is not None:
            await config.on_start()
        self.listener = _listening_socket(config.host, config.port)
        listening = {
            "sock": self.listener,
            "backlog": BACKLOG,
            "ssl": config.tls(),
            "ssl_handshake_timeout": config.handshake_timeout if config.certificate else None,
        }
        if config.protocol is not None:
            protocol = config.protocol
            loop = asyncio.get_running_loop()
            self.server = await loop.create_server(lambda: protocol(self.transports), **listening)
        else:
            self.server = await asyncio.start_server(self.serve, limit=config.line_limit, **listening)
        secure = " (TLS)" if config.certificate else ""
        logger.info("%s serves on %s:%d%s", config.name, config.host, config.port, secure)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.add(writer)
        _keep_alive(writer.transport)
        assert self.config.handler is not None
        try:
            await self.config.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, TimeoutError):
            pass  # the client went away, or broke its connection
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("%s: a connection failed", self.config.name)
        finally:
            self.writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def stop(self) -> None:
        if self.server is None:
            return
        self.server.close()
        if self.listener is not None:
            self.listener.close()
        if self.config.on_stop is not None:
            try:
                await self.config.on_stop()
            except Exception:
                logger.exception("%s: its shutdown failed", self.config.name)
        for writer in list(self.writers):
            writer.close()
        for transport in list(self.transports):
            transport.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.server.wait_closed(), CLOSE_TIMEOUT)


def self_signed_certificate(certificate: Path, key: Path, hostnames: list[str]) -> None:
    """Write a self-signed certificate and its key for `hostnames` (names or IP addresses), unless both files exist:
    what a line server speaks TLS with when it is given no certificate of its own. The key is readable by its owner
    only. Several processes starting at once make one pair between them (a lock file beside the key)."""
    key.parent.mkdir(parents=True, exist_ok=True)
    with open(key.with_name(key.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (certificate.exists() and key.exists()):
            _write_self_signed(certificate, key, hostnames)


def _write_self_signed(certificate: Path, key: Path, hostnames: list[str]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private_key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for hostname in hostnames:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(hostname)))
        except ValueError:
            names.append(x509.DNSName(hostname))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostnames[0])])
    now = datetime.now(UTC)
    built = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(private_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private_key, hashes.SHA256())
    )
    pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    descriptor = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)
    certificate.write_bytes(built.public_bytes(serialization.Encoding.PEM))


async def start_all() -> None:
    """Start every registered line server in this process."""
    for config in registered():
        running = _Running(config)
        await running.start()
        _running.append(running)


async def stop_all() -> None:
    """Stop this process's line servers: no new connection, and the open ones closed."""
    while _running:
        await _running.pop().stop()
