"""The HTTP server's guards (core/server.py, core/bodylimit.py), against a real server process over raw sockets: a
request's headers and body have a deadline, a process holds a capped number of connections and answers past it, and
spectators' streams are capped per address and per game; a mount's answers kept in memory are written by
the protocol itself, never ahead of an earlier answer. Plus the fence around what core/server.py takes from uvicorn.
"""

import inspect
import json
import socket
import time

import pytest
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol, RequestResponseCycle

from core.server import HttpProtocol

from .live import raw_answers


def connect(server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=30)


def answer(sock: socket.socket) -> tuple[int, dict, bytes]:
    """Read a whole answer, up to the server closing the connection: its status, headers and body."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines)
    return int(status_line.split()[1]), headers, body


def test_what_the_protocol_takes_from_uvicorn_is_still_there():
    # The callbacks overridden, with the signatures the subclass calls them with, and the attributes it reads.
    for name, parameters in {
        "connection_made": ["self", "transport"],
        "connection_lost": ["self", "exc"],
        "on_message_begin": ["self"],
        "on_headers_complete": ["self"],
        "on_message_complete": ["self"],
        "data_received": ["self", "data"],
        "on_body": ["self", "body"],
        "on_response_complete": ["self"],
    }.items():
        assert list(inspect.signature(getattr(HttpToolsProtocol, name)).parameters) == parameters, name
    source = inspect.getsource(HttpToolsProtocol)
    # What the early answers read (HttpProtocol._answer_early).
    early = ("self.pipeline", "self.parser", "self.url", "self.scheme", "self.access_log", "self.flow", "self.headers")
    for attribute in ("self.connections", "self.transport", "self.loop", "self.cycle", *early):
        assert attribute in source, attribute
    assert "self.server_state.default_headers" in source and "write_paused" in inspect.getsource(FlowControl)
    assert STATUS_LINE[200] == b"HTTP/1.1 200 OK\r\n"
    assert "self.response_started" in inspect.getsource(RequestResponseCycle)
    assert "self.response_complete" in inspect.getsource(RequestResponseCycle)
    assert issubclass(HttpProtocol, HttpToolsProtocol)


@pytest.mark.server
def test_headers_that_do_not_come_in_time_are_answered_408(start_server):
    server = start_server(TAB_HEADER_TIMEOUT_SECONDS="1")
    silent, trickle = connect(server), connect(server)
    # One sends nothing; the other starts a request and sends a byte now and then, never finishing its headers.
    trickle.sendall(b"POST /register HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    for _ in range(100):
        try:
            trickle.sendall(b"X")
        except OSError:
            break  # closed by the server
        time.sleep(0.2)
    for sock in (silent, trickle):
        status, headers, body = answer(sock)
        assert (status, json.loads(body)) == (408, {"error": "Request headers not received within 1 s"})
        assert headers["connection"] == "close"
    # Everyone else is served as ever.
    assert server.call("register", nick="zp", password="secret") == (200, {})


@pytest.mark.server
def test_a_body_that_does_not_come_in_time_is_answered_408(start_server):
    server = start_server(TAB_BODY_TIMEOUT_SECONDS="1")
    sock = connect(server)
    sock.sendall(b'POST /register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 40\r\n\r\n{"nick": "zp"')
    status, _, body = answer(sock)
    assert (status, json.loads(body)) == (408, {"error": "Request body not received within 1 s"})
    assert server.call("register", nick="zp", password="secret") == (200, {})


@pytest.mark.server
def test_a_body_deadline_shorter_than_the_headers_one_still_counts_from_the_headers_end(start_server):
    # The connection's one timer was set for the headers' 600 s: the body's 1 s moves it earlier.
    server = start_server(TAB_HEADER_TIMEOUT_SECONDS="600", TAB_BODY_TIMEOUT_SECONDS="1")
    sock = connect(server)
    sent = time.monotonic()
    sock.sendall(b'POST /register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 40\r\n\r\n{"nick": "zp"')
    status, _, body = answer(sock)
    assert (status, json.loads(body)) == (408, {"error": "Request body not received within 1 s"})
    # Long before the headers' 600 s, however busy the machine.
    assert time.monotonic() - sent < 300


@pytest.mark.server
def test_past_its_connection_cap_a_process_answers_503_and_serves_again_below_it(start_server):
    server = start_server(TAB_MAX_CONNECTIONS="8", TAB_HEADER_TIMEOUT_SECONDS="600")
    server.http.close()  # the test client's own connection is not counted from here on
    idle = [connect(server) for _ in range(8)]
    # Every connection is accepted at once; one that finds the process full is answered and closed.
    extra = connect(server)
    status, headers, body = answer(extra)
    assert (status, json.loads(body)) == (503, {"error": "Too many connections: try again shortly"})
    assert headers["retry-after"] == "1"
    # A client that sends its request at once reads the answer too (a close with its request unread would reset it).
    for _ in range(5):
        eager = connect(server)
        eager.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, _, body = answer(eager)
        assert (status, json.loads(body)) == (503, {"error": "Too many connections: try again shortly"})
        eager.close()
    for sock in idle:
        sock.close()
    give_up = time.monotonic() + 30
    while True:
        sock = connect(server)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        status, _, _ = answer(sock)
        if status == 200:
            break
        assert time.monotonic() < give_up, "the closed connections were not given back"
        time.sleep(0.1)


def watch(server, game: str, address: str) -> tuple[socket.socket, int, bytes]:
    """Open a spectator's stream from `address` (behind a trusted proxy); return its socket, status and, when it is
    refused, the answer's body."""
    sock = connect(server)
    sock.sendall(
        f"GET /games/{game}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: {address}\r\n"
        "Connection: close\r\n\r\n".encode()
    )
    received = sock.recv(65536)
    status = int(received.split(b" ", 2)[1])
    if status != 200:
        while chunk := sock.recv(65536):
            received += chunk
    return sock, status, received.partition(b"\r\n\r\n")[2]


@pytest.mark.server
def test_spectator_streams_are_capped_per_address_and_per_game(start_server):
    server = start_server(TAB_SPECTATORS_PER_ADDRESS="2", TAB_SPECTATORS_PER_GAME="3", TRUSTED_PROXIES="1")
    for nick in ("zp", "op"):
        assert server.call("register", nick=nick, password="secret") == (200, {})
    game = server.call("join", nick="zp", password="secret", group=1, size=9)[1]["game"]
    assert server.call("join", nick="op", password="secret", group=1, size=9)[1]["game"] == game
    first, second = "203.0.113.9", "198.51.100.7"
    held = [watch(server, game, first) for _ in range(2)]
    assert [status for _, status, _ in held] == [200, 200]
    sock, status, received = watch(server, game, first)
    assert (status, json.loads(received)) == (
        429,
        {"error": "Too many spectator streams from this address (at most 2)"},
    )
    sock.close()
    held.append(watch(server, game, second))
    assert held[-1][1] == 200
    sock, status, received = watch(server, game, second)
    assert (status, json.loads(received)) == (429, {"error": "Too many spectators of this game (at most 3)"})
    sock.close()
    # A spectator who leaves gives the place back.
    held.pop(0)[0].close()
    give_up = time.monotonic() + 30
    while (again := watch(server, game, second))[1] != 200:
        again[0].close()
        assert time.monotonic() < give_up, "the closed stream's place was not given back"
        time.sleep(0.1)
    for sock, _, _ in [*held, again]:
        sock.close()


def test_a_server_handed_its_listening_socket_as_a_descriptor_sends_each_write_at_once():
    """`uvicorn --fd` (and systemd's socket activation) labels the socket it is handed a Unix one, so the event loop
    leaves Nagle's algorithm on for its TCP connections: an answer's head and body, two writes, then waited for the
    client's delayed acknowledgement (40 ms an answer). The protocol sets TCP_NODELAY itself."""
    import asyncio
    import threading

    import uvicorn

    seen: list[int] = []

    class Recording(HttpProtocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            seen.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    async def app(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, fd=listener.fileno(), http=Recording, lifespan="off", log_level="warning", loop="asyncio")
    )
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            received = b""
            while chunk := client.recv(65536):
                received += chunk
        assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"ok")
        assert seen == [1]
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()


def test_a_mounts_early_answer_is_written_when_its_headers_are_read_and_never_overtakes(monkeypatch):
    """A poll whose answer a mount keeps in memory (a Plakoto table's status) is answered by the protocol itself, with
    no request cycle: the application is not called. Any other request goes to the application, and so does a kept
    poll that is not a plain keep-alive GET or that comes behind a request still being answered (pipelined): answers
    keep the requests' order."""
    import asyncio
    import threading

    import uvicorn

    from protocols.plakoto import polls

    kept = polls.Polls()
    monkeypatch.setattr(polls, "polls", kept)
    text = b'[{"status": "kept"}]'
    assert kept.keep("early", kept.since(), ["plakoto-table-early"], text)
    called: list[tuple[str, str]] = []

    async def app(scope, receive, send) -> None:
        called.append((scope["method"], scope["path"]))
        while (await receive()).get("more_body"):
            pass
        body = b"application"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"11")]})
        await send({"type": "http.response.body", "body": body})

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(
        app, fd=listener.fileno(), http=HttpProtocol, lifespan="off", log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()

    def exchange(data: bytes, count: int) -> list[bytes]:
        """Send `data` on a new connection and return the bodies of the `count` answers, in the order they came."""
        return [body for _, body in raw_answers(port, data, count)]

    poll = b"GET /plakoto/early/status/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert exchange(poll + poll, 2) == [text, text] and called == []
        assert exchange(b"GET /plakoto/other/status/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 1) == [b"application"]
        assert called == [("GET", "/plakoto/other/status/")]
        called.clear()
        # Not a plain keep-alive GET without a body: the application's.
        for variant in (
            b"GET /plakoto/early/status/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
            b"GET /plakoto/early/status/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
        ):
            assert exchange(variant, 1) == [b"application"]
        assert len(called) == 2
        called.clear()
        # Behind a request still being answered: in their turn, by the application.
        move = b'PUT /plakoto/early/board/piece/1/1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8\r\n\r\n{"x": 3}'
        assert exchange(move + poll + poll, 3) == [b"application"] * 3
        assert called == [("PUT", "/plakoto/early/board/piece/1/1/")] + [("GET", "/plakoto/early/status/")] * 2
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()
