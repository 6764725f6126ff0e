"""Listening sockets that accept every waiting connection at once (core/accepting.py)."""

import asyncio
import socket
from collections.abc import Callable

import pytest
import uvloop

from core.accepting import Loop, new_event_loop

WAITING = 50


def turns_to_serve(loop_factory: Callable[[], asyncio.AbstractEventLoop]) -> int:
    """Open WAITING connections to a listening socket, then serve it on a loop made by `loop_factory`: return how many
    turns of the loop passed before every connection had its protocol."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        listener = socket.create_server(("127.0.0.1", 0), backlog=WAITING)
        # The kernel completes each handshake into the listening socket's queue: all are waiting to be accepted.
        clients = [socket.create_connection(listener.getsockname(), timeout=30) for _ in range(WAITING)]
        served = loop.create_future()
        made = turns = 0

        class Counted(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                nonlocal made
                made += 1
                if made == WAITING:
                    served.set_result(None)

        def turn() -> None:  # called once a turn of the loop, until every connection is served
            nonlocal turns
            turns += 1
            if not served.done():
                loop.call_soon(turn)

        server = await loop.create_server(Counted, sock=listener, backlog=WAITING)
        loop.call_soon(turn)
        await asyncio.wait_for(served, 30)
        assert server.is_serving() and server.sockets
        server.close()
        await server.wait_closed()
        assert not server.is_serving() and not server.sockets
        for client in clients:
            client.close()
        listener.close()
        return turns

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(main())


def test_the_gunicorn_worker_runs_the_accepting_loop():
    import uvicorn

    from core.server import Worker

    # uvicorn 0.36 and later read an import string for the loop, and uvicorn-worker 0.4 and later run the loop it makes.
    config = uvicorn.Config(app=None, **Worker.CONFIG_KWARGS)
    loop = config.get_loop_factory()()
    assert isinstance(loop, Loop)
    loop.close()


def test_every_waiting_connection_is_accepted_in_one_turn_of_the_loop():
    assert isinstance(new_event_loop(), Loop)
    assert turns_to_serve(new_event_loop) <= 5
    # uvloop's own servers take one a turn: why this module exists. If this fails, uvloop accepts in bulk again and
    # core/accepting.py may go.
    assert turns_to_serve(uvloop.new_event_loop) >= WAITING


def test_a_line_server_over_tls_is_served_so_and_its_port_is_free_once_stopped(tmp_path):
    import ssl

    from core.accepting import Accepting
    from core.lineservers import LineServer, _Running, self_signed_certificate

    certificate, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    self_signed_certificate(certificate, key, ["127.0.0.1"])
    port = socket.create_server(("127.0.0.1", 0)).getsockname()[1]  # closed at once: a free port

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readline())
        await writer.drain()

    config = LineServer("echo", echo, "127.0.0.1", port, certificate=str(certificate), key=str(key))
    client_context = ssl.create_default_context(cafile=str(certificate))

    async def main() -> bytes:
        running = _Running(config)
        await running.start()
        assert isinstance(running.server, Accepting)
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context)
        writer.write(b"hello\n")
        line = await asyncio.wait_for(reader.readline(), 30)
        writer.close()
        await running.stop()
        return line

    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        assert runner.run(main()) == b"hello\n"
    # Nothing listens there any more (no descriptor of the listening socket was left open).
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)


OUT_OF_DESCRIPTORS = """
import asyncio, logging, os, resource, socket, sys

from core.accepting import new_event_loop

logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")


class Echo(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


async def main():
    listener = socket.create_server(("127.0.0.1", 0), backlog=100)
    await asyncio.get_running_loop().create_server(Echo, sock=listener, backlog=100)
    # Room for FREE connections more, no more.
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + FREE, hard))
    print(listener.getsockname()[1], flush=True)
    await asyncio.Event().wait()


with asyncio.Runner(loop_factory=new_event_loop) as runner:
    runner.run(main())
"""


def test_out_of_descriptors_a_server_stops_accepting_for_a_while_then_serves_the_connections_that_waited():
    import subprocess
    import sys
    from pathlib import Path

    free, clients = 10, 15
    connections: list[socket.socket] = []
    server = subprocess.Popen(
        [sys.executable, "-c", OUT_OF_DESCRIPTORS.replace("FREE", str(free))],
        cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        connections = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(clients)]
        for connection in connections:
            connection.sendall(b"x")
        # Some are served, as many as the descriptors allow (the listening socket's reader paused at the first one
        # more); they leave, and the others, still waiting, are served once the server accepts again.
        served = [connection.recv(1) for connection in connections[: free - 1]]
        assert served == [b"x"] * (free - 1)
        for connection in connections[: free - 1]:
            connection.close()
        assert [connection.recv(1) for connection in connections[free - 1 :]] == [b"x"] * (clients - free + 1)
        server.terminate()
        log, _ = server.communicate(timeout=30)
        assert "Out of descriptors or memory: accepting again in 1 s" in log
    finally:
        server.kill()
        for connection in connections:
            connection.close()
