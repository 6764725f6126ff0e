"""Line servers (core/lineservers.py) in real server processes started as `make run` starts them (gunicorn with
uvicorn workers): started and stopped with the web server, over TLS, sharing the database, in several workers at
once, and never stopped by what one connection does. The protocol served is the tests' own (tests/sample_protocol)."""

import signal
import socket
import ssl
from pathlib import Path

import pytest

from .conftest import require
from .live import REDIS_TEST_URL, redis_available, redis_flush

pytestmark = pytest.mark.server


def connect(server) -> "Line":
    return Line(server.line_port, server.tls_dir / "sample.crt")


class Line:
    """A client of the sample protocol: over TLS, trusting the server's self-signed certificate, or plain TCP."""

    def __init__(self, port: int, certificate: Path | None):
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        if certificate is None:
            self.sock = raw
        else:
            context = ssl.create_default_context(cafile=str(certificate))
            self.sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
        self.file = self.sock.makefile("rwb")
        assert self.read() == "HELLO"

    def read(self) -> str:
        return self.file.readline().decode().rstrip("\n")

    def ask(self, line: str) -> str:
        self.file.write(line.encode() + b"\n")
        self.file.flush()
        return self.read()

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def test_a_line_server_runs_with_the_web_server_and_stops_with_it(gunicorn):
    server = gunicorn()
    line = connect(server)
    assert line.ask("ECHO hi") == "ECHO ECHO hi"
    # It reads the database as the web server writes it, through the process's database thread.
    assert line.ask("ACCOUNTS") == "0"
    assert server.http.post("/register", json={"nick": "zp", "password": "secret"}).json() == {}
    assert line.ask("ACCOUNTS") == "1"
    # What one connection does ends that connection alone: a failure, a line past the limit, a handshake left undone.
    failing, long = connect(server), connect(server)
    silent = socket.create_connection(("127.0.0.1", server.line_port))
    assert failing.ask("FAIL") == ""
    assert long.ask("x" * 5000) == ""
    assert line.ask("still here") == "ECHO still here"
    for client in (failing, long):
        client.close()
    # The key is its owner's alone.
    assert (server.tls_dir / "sample.key").stat().st_mode & 0o777 == 0o600
    # The server's control socket is in its own folder, not in the home folder that every server would share.
    assert (server.tls_dir.parent / "gunicorn.ctl").is_socket()
    assert not (server.home / ".gunicorn").exists()

    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0
    # Stopped with the web server: open connections are closed, and nothing listens any more.
    assert line.read() == ""
    assert silent.recv(1) == b""
    assert not server.line_open()
    line.close()
    silent.close()


def test_a_line_server_may_speak_plain_tcp(gunicorn):
    server = gunicorn(SAMPLE_TLS_DIR="")
    line = Line(server.line_port, None)
    assert line.ask("ECHO plain") == "ECHO ECHO plain"
    assert line.ask("ACCOUNTS") == "0"
    assert not server.tls_dir.exists()
    line.close()
    # The tests keep the port the server was given (tests/live.py, free_port): a socket of anyone else cannot bind
    # it, and the socket that keeps it takes none of the server's connections.
    with socket.socket() as other, pytest.raises(OSError, match="in use"):
        other.bind(("127.0.0.1", server.line_port))
    for _ in range(20):
        each = Line(server.line_port, None)
        assert each.ask("ECHO again") == "ECHO ECHO again"
        each.close()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0


@pytest.mark.redis
def test_every_worker_serves_the_line_protocol(gunicorn):
    require(redis_available(), "Redis")
    redis_flush()
    server = gunicorn(WEB_CONCURRENCY="2", REDIS_URL=REDIS_TEST_URL)
    server.wait_for_workers(2)
    lines = [connect(server) for _ in range(40)]
    # The kernel spreads connections over both workers' sockets (SO_REUSEPORT); 40 all on one would be a 1 in 2^39.
    pids = {line.ask("PID") for line in lines}
    assert len(pids) == 2, pids
    assert {line.ask("ACCOUNTS") for line in lines} == {"0"}
    for line in lines:
        line.close()
