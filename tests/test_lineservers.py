"""Line servers (core/lineservers.py) in real server processes started as `make run` starts them (gunicorn with
uvicorn workers): started and stopped with the web server, over TLS, sharing the database, in several workers at
once, and never stopped by what one connection does. The protocol served is the tests' own (tests/sample_protocol)."""

import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .conftest import require
from .live import REDIS_TEST_URL, ROOT, listening_socket, redis_available, redis_flush

pytestmark = pytest.mark.server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Gunicorn:
    """`make run`'s server: gunicorn with tabsite/gunicorn.conf.py, and the sample line protocol installed."""

    def __init__(self, database_url: str, workdir: Path, **environment: str):
        listener = listening_socket()
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        self.line_port = free_port()
        self.tls_dir = workdir / "tls"
        self.home = workdir / "home"
        self.log = workdir / f"gunicorn-{self.line_port}.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings_lines",
            "DATABASE_URL": database_url,
            "TAB_VAR_DIR": str(workdir),
            "SECRET_KEY": "live-test-secret-key",
            "PASSWORD_HASHERS": "django.contrib.auth.hashers.MD5PasswordHasher",
            "SAMPLE_LINE_PORT": str(self.line_port),
            "SAMPLE_TLS_DIR": str(self.tls_dir),
            "WEB_CONCURRENCY": "1",
            "HOME": str(self.home),
            **environment,
        }
        if "REDIS_URL" not in environment:
            env.pop("REDIS_URL", None)
        fd = listener.fileno()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "tabsite/gunicorn.conf.py", "--bind", f"fd://{fd}"]
            + ["tabsite.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
            pass_fds=[fd],
        )
        listener.close()
        self.http = httpx.Client(base_url=self.url, timeout=10)
        deadline = time.monotonic() + 60
        while True:
            assert self.process.poll() is None, self.log.read_text()
            try:
                if self.http.get("/healthz").status_code == 200 and self.line_open():
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.1)

    def wait_for_workers(self, count: int) -> None:
        """Wait until `count` worker processes have started their line server (each says so in the log)."""
        deadline = time.monotonic() + 60
        while self.log.read_text().count("sample serves on") < count:
            assert self.process.poll() is None and time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.1)

    def line_open(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.line_port), timeout=5).close()
            return True
        except OSError:
            return False

    def connect(self) -> "Line":
        return Line(self.line_port, self.tls_dir / "sample.crt")

    def stop(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Line:
    """A TLS client of the sample protocol that trusts the server's self-signed certificate."""

    def __init__(self, port: int, certificate: Path):
        context = ssl.create_default_context(cafile=str(certificate))
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
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


@pytest.fixture
def gunicorn(live_databases, tmp_path):
    servers: list[Gunicorn] = []

    def start(**environment: str) -> Gunicorn:
        server = Gunicorn(live_databases.new(), tmp_path, **environment)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def test_a_line_server_runs_with_the_web_server_and_stops_with_it(gunicorn):
    server = gunicorn()
    line = server.connect()
    assert line.ask("ECHO hi") == "ECHO ECHO hi"
    # It reads the database as the web server writes it, through the process's database thread.
    assert line.ask("ACCOUNTS") == "0"
    assert server.http.post("/register", json={"nick": "zp", "password": "secret"}).json() == {}
    assert line.ask("ACCOUNTS") == "1"
    # What one connection does ends that connection alone: a failure, a line past the limit, a handshake left undone.
    failing, long, silent = (
        server.connect(),
        server.connect(),
        socket.create_connection(("127.0.0.1", server.line_port)),
    )
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


@pytest.mark.redis
def test_every_worker_serves_the_line_protocol(gunicorn):
    require(redis_available(), "Redis")
    redis_flush()
    server = gunicorn(WEB_CONCURRENCY="2", REDIS_URL=REDIS_TEST_URL)
    server.wait_for_workers(2)
    lines = [server.connect() for _ in range(40)]
    # The kernel spreads connections over both workers' sockets (SO_REUSEPORT); 40 all on one would be a 1 in 2^39.
    pids = {line.ask("PID") for line in lines}
    assert len(pids) == 2, pids
    assert {line.ask("ACCOUNTS") for line in lines} == {"0"}
    for line in lines:
        line.close()
