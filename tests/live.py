"""Real servers for end-to-end tests: uvicorn processes on fresh databases, and clients of their API and streams.

pytest-django's live_server is WSGI and cannot stream, so these tests start the ASGI application the way
production does and talk to it only over HTTP.
"""

import contextlib
import hashlib
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx
from django.conf import settings

from core.limits import WINDOW
from protocols.course_api.message import state_of

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_ADMIN_URL = os.environ.get("POSTGRES_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_TEST_URL = os.environ.get("REDIS_TEST_URL", "redis://127.0.0.1:6379/15")


def listening_socket() -> socket.socket:
    """Return a socket listening on a free port of 127.0.0.1. A server handed the socket itself, rather than a port
    number to bind, cannot lose its port to another process between the choice and the bind."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    return sock


# Sockets holding the ports free_port() handed out, open until this process ends.
_reserved: list[socket.socket] = []


def free_port() -> int:
    """Return a free port of 127.0.0.1 for a server that can only be given a number (the line servers), kept for
    this test process until it ends.

    A port merely found free could go to another process before the server binds it; and as the line servers listen
    with SO_REUSEPORT, a server of another test run beside this one (CI runs SQLite and PostgreSQL at once) given the
    same number would bind it too, and the kernel would hand it half of this server's connections. So the port stays
    bound by a socket of this process with SO_REUSEPORT that never listens: no other bind is given the port (a new
    socket's bind(0) skips it, a socket without SO_REUSEPORT cannot bind it), our servers, of the same user and with
    SO_REUSEPORT, can, and a socket that does not listen takes no connection."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", 0))
    _reserved.append(sock)
    return sock.getsockname()[1]


def window_begins(http: httpx.Client, needed: float = WINDOW / 2) -> None:
    """Wait, if fewer than `needed` seconds of it are left, for the next window of a live server's limits to begin
    (core/limits.py), so that what a test counts there falls in one window. The servers count by the wall clock, in
    windows of `limits.WINDOW` seconds: their Date header tells where in its window their clock is."""
    second = parsedate_to_datetime(http.get("/healthz").headers["date"]).timestamp()
    left = WINDOW - second % WINDOW
    if left < needed:
        time.sleep(left + 1)


def suite_uses_postgres() -> bool:
    return settings.DATABASES["default"]["ENGINE"].startswith("django.db.backends.postgresql")


def database_calls() -> list[str]:
    """Where a live server may run its database calls (TAB_DATABASE_CALLS): on the event loop with SQLite only."""
    return ["thread"] if suite_uses_postgres() else ["thread", "loop"]


def postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(POSTGRES_ADMIN_URL, connect_timeout=2):
            return True
    except Exception:
        return False


def redis_available() -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=2).ping())
    except Exception:
        return False


def redis_flush() -> None:
    """Empty the tests' own Redis database: cached credentials must not outlive the databases they came from."""
    import redis

    redis.Redis.from_url(REDIS_TEST_URL).flushdb()


def live_secret_key(database_url: str) -> str:
    return "live-test-" + hashlib.sha256(database_url.encode()).hexdigest()


def migrate(database_url: str, var_dir: Path) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "TAB_VAR_DIR": str(var_dir)}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"], cwd=ROOT, env=env, check=True
    )


class Databases:
    """Fresh databases for server processes, copied from one migrated template per test session."""

    def __init__(self, workdir: Path, postgres: bool):
        self.workdir = workdir
        self.postgres = postgres
        self.created: list[str] = []
        self.template: str | None = None

    def _admin(self):
        import psycopg

        return psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True)

    def _postgres_url(self, name: str) -> str:
        return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name

    def new(self) -> str:
        """Return the URL of a new, migrated, empty database."""
        if self.postgres:
            if self.template is None:
                self.template = f"tab_live_template_{secrets.token_hex(4)}"
                with self._admin() as admin:
                    admin.execute(f'CREATE DATABASE "{self.template}"')
                self.created.append(self.template)
                migrate(self._postgres_url(self.template), self.workdir)
            name = f"tab_live_{secrets.token_hex(6)}"
            with self._admin() as admin:
                admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
            self.created.append(name)
            return self._postgres_url(name)
        template = self.workdir / "template.sqlite3"
        if not template.exists():
            migrate(f"sqlite:///{template}", self.workdir)
        copy = self.workdir / f"live-{secrets.token_hex(6)}.sqlite3"
        shutil.copy(template, copy)
        return f"sqlite:///{copy}"

    def drop_all(self) -> None:
        if not self.postgres:
            return
        with self._admin() as admin:
            for name in reversed(self.created):
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Server:
    """One uvicorn process serving tabsite.asgi, as `make run`'s workers do."""

    def __init__(self, database_url: str, workdir: Path, **environment: str):
        self.database_url = database_url
        self.workdir = workdir
        listener = listening_socket()
        self.port = listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"server-{self.port}.log"
        self.draughts_port = int(environment.get("DRAUGHTS_PORT") or free_port())
        self.fish_port = int(environment.get("FISH_PORT") or free_port())
        env = {
            **os.environ,
            "DRAUGHTS_PORT": str(self.draughts_port),
            "FISH_PORT": str(self.fish_port),
            "DATABASE_URL": database_url,
            "TAB_VAR_DIR": str(workdir),
            # One key per database: credentials a server remembers in the shared Redis are keyed with it, so those of
            # another test's database (and its user ids) are never found here, whenever they were written.
            "SECRET_KEY": live_secret_key(database_url),
            # The password hash is not under test here; a cheap one keeps the tests quick.
            "PASSWORD_HASHERS": "django.contrib.auth.hashers.MD5PasswordHasher",
            # Nor is the hashing budget of an address (tests/test_limits.py checks it): every client here is local.
            "TAB_HASHES_PER_MINUTE": "0",
            "PYTHONUNBUFFERED": "1",
            **environment,
        }
        if "REDIS_URL" not in environment:
            env.pop("REDIS_URL", None)
        self.environment = env
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "tabsite.asgi:application",
                "--fd",
                str(listener.fileno()),
                "--no-access-log",
                # As gunicorn's workers serve (core/server.py).
                "--http",
                "core.server:HttpProtocol",
                "--loop",
                "core.accepting:new_event_loop",
                # As gunicorn's workers serve: the address is the connection's (the application reads the headers).
                "--no-proxy-headers",
                "--timeout-graceful-shutdown",
                "1",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
            pass_fds=[listener.fileno()],
        )
        listener.close()
        self.http = httpx.Client(base_url=self.url, timeout=10)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()}")
            try:
                self.http.get("/")
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"server did not start: {self.log.read_text()}")

    def manage(self, *arguments: str, **environment: str) -> str:
        """Run a management command on this server's database, with its settings; return what it printed."""
        return manage(self.environment, *arguments, **environment)

    def call(self, function: str, **payload) -> tuple[int, dict]:
        response = self.http.post(f"/{function}", content=json.dumps(payload))
        return response.status_code, response.json()

    def stream(self, nick: str, game: str) -> "Stream":
        return Stream(f"{self.url}/update", {"nick": nick, "game": game})

    def watch(self, game: str) -> "Stream":
        """Return a spectator's stream of a game (not the players' `update`)."""
        return Stream(f"{self.url}/games/{game}/stream", {})

    def stop(self) -> None:
        self.http.close()
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def manage(server_environment: dict[str, str], *arguments: str, **environment: str) -> str:
    """Run a management command with a server's environment (its database, its settings); return what it printed."""
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env={**server_environment, **environment},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


class Gunicorn:
    """`make run`'s server: gunicorn with tabsite/gunicorn.conf.py, and the tests' sample line protocol installed
    (tests/sample_protocol) on a port of its own, over TLS."""

    def __init__(self, database_url: str, workdir: Path, **environment: str):
        listener = listening_socket()
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        self.line_port = free_port()
        self.tls_dir = workdir / "tls"
        self.home = workdir / "home"
        self.log = workdir / f"gunicorn-{self.line_port}.log"
        self.draughts_port = int(environment.get("DRAUGHTS_PORT") or free_port())
        self.fish_port = int(environment.get("FISH_PORT") or free_port())
        env = {
            **os.environ,
            "DRAUGHTS_PORT": str(self.draughts_port),
            "FISH_PORT": str(self.fish_port),
            "DJANGO_SETTINGS_MODULE": "tests.settings_lines",
            "DATABASE_URL": database_url,
            "TAB_VAR_DIR": str(workdir),
            "SECRET_KEY": live_secret_key(database_url),
            "PASSWORD_HASHERS": "django.contrib.auth.hashers.MD5PasswordHasher",
            "TAB_HASHES_PER_MINUTE": "0",
            "SAMPLE_LINE_PORT": str(self.line_port),
            "SAMPLE_TLS_DIR": str(self.tls_dir),
            "WEB_CONCURRENCY": "1",
            "HOME": str(self.home),
            **environment,
        }
        if "REDIS_URL" not in environment:
            env.pop("REDIS_URL", None)
        self.environment = env
        fd = listener.fileno()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "tabsite/gunicorn.conf.py", "--bind", f"fd://{fd}"]
            + ["tabsite.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            pass_fds=[fd],
            # Its own process group: `kill` takes the whole server down at once, as kill -9 of `make run` would.
            start_new_session=True,
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

    def manage(self, *arguments: str, **environment: str) -> str:
        """Run a management command on this server's database, with its settings; return what it printed."""
        return manage(self.environment, *arguments, **environment)

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

    def kill(self) -> None:
        """Kill every process of the server with SIGKILL: nothing of it runs a line more."""
        self.http.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Stream:
    """A stream of a game read in a thread, as a browser's EventSource would: messages, comments and its end."""

    END = object()

    def __init__(self, url: str, params: dict[str, str]):
        self.messages: queue.Queue = queue.Queue()
        self.comments: list[str] = []
        self.event_ids: list[str] = []
        self.ended = False
        self.status: int | None = None
        self.headers: httpx.Headers | None = None
        self._opened = threading.Event()
        self._client = httpx.Client(timeout=httpx.Timeout(10, read=None))
        self._thread = threading.Thread(target=self._read, args=(url, params), daemon=True)
        self._thread.start()
        if not self._opened.wait(10):
            raise RuntimeError("the stream did not open")

    def _read(self, url: str, params: dict) -> None:
        try:
            with self._client.stream("GET", url, params=params) as response:
                self.status, self.headers = response.status_code, response.headers
                self._opened.set()
                data: list[str] = []
                for line in response.iter_lines():
                    if line.startswith(":"):
                        self.comments.append(line)
                    elif line.startswith("data:"):
                        data.append(line[5:].removeprefix(" "))
                    elif line.startswith("id:"):
                        self.event_ids.append(line[3:].strip())
                    elif line.startswith("event:"):
                        raise AssertionError(f"unexpected event type line: {line!r}")
                    elif line == "" and data:
                        self.messages.put(json.loads("\n".join(data)))
                        data = []
        except httpx.HTTPError:
            pass
        finally:
            self._opened.set()
            self.messages.put(self.END)

    def next(self, timeout: float = 10):
        """Return the next message, or Stream.END once the server closed the stream (and ever after)."""
        if self.ended:
            return self.END
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message within {timeout} s") from None
        self.ended = message is self.END
        return message if self.ended else checked(message)

    def nothing_for(self, seconds: float) -> bool:
        try:
            self.messages.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        self._client.close()


# The update messages of the course protocol, key by key: a field added, renamed or dropped is a change clients see.
SNAPSHOT_KEYS = frozenset({"pieces", "initial", "players", "turn", "step", "dice", "mustPass"})
# `cell` and `selected` describe the last play (a selection, or a move), and come together.
LAST_PLAY_KEYS = frozenset({"cell", "selected"})
DICE_KEYS = frozenset({"stickValues", "value", "keepPlaying"})
PIECE_KEYS = frozenset({"color", "inMotion", "reachedLastRow"})


def checked(message: dict) -> dict:
    """Return an update message after checking that it has exactly the keys of its kind."""
    if message == {"winner": None}:  # a waiting game that ended: there is no board
        return message
    keys = set(message) - {"winner"}
    assert keys in (SNAPSHOT_KEYS, SNAPSHOT_KEYS | LAST_PLAY_KEYS), sorted(keys)
    assert message["dice"] is None or set(message["dice"]) == DICE_KEYS, message["dice"]
    assert all(piece is None or set(piece) == PIECE_KEYS for piece in message["pieces"]), message["pieces"]
    players = message["players"]
    assert len(players) == 2 and {message["initial"], message["turn"]} <= set(players), message
    assert message["mustPass"] in (None, message["turn"]), message
    return message


def next_action(message: dict, rng) -> tuple[str, dict]:
    """Choose the turn player's next request from an update message, playing random legal moves."""
    if message["dice"] is None:
        return "roll", {}
    if message["mustPass"]:
        return "pass", {}
    if message["step"] == "to":
        return "notify", {"cell": rng.choice(message["selected"])}
    state = state_of(message)
    moves = state.legal_moves()
    if not moves:
        return "roll", {}
    return "notify", {"cell": rng.choice(moves).origin}


def raw_answers(port: int, data: bytes, count: int) -> list[tuple[list[bytes], bytes]]:
    """Send `data` on a new connection and read `count` answers: each one's header lines (its date left out) and
    body."""
    answers = []
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(data)
        received = b""
        while len(answers) < count:
            head, found, rest = received.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            length = next(
                (int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length:")), -1
            )
            if found and 0 <= length <= len(rest):
                answers.append(([line for line in lines if not line.lower().startswith(b"date:")], rest[:length]))
                received = rest[length:]
                continue
            chunk = client.recv(65536)
            assert chunk, "the connection was closed"
            received += chunk
    return answers
