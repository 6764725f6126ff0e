"""Faults, end to end against real server processes: a server killed with SIGKILL in the middle of games and
started again, PostgreSQL gone during play, Redis gone. Every game goes on from the database, and every result
is counted once."""

import random
import threading
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from .conftest import require
from .faults import TcpProxy, query
from .live import REDIS_TEST_URL, Server, Stream, next_action, redis_available, redis_flush

pytestmark = pytest.mark.server

SIZE = 7


class Table:
    """Two players of one game on a server, each with a stream; `message` is the last update both saw."""

    def __init__(self, server: Server, group: int):
        self.group = group
        self.nicks = (f"blue{group}", f"red{group}")
        for nick in self.nicks:
            assert server.call("register", nick=nick, password=self.password(nick)) == (200, {})
        _, body = self.act(server, self.nicks[0], "join", group=group, size=SIZE)
        self.game = body["game"]
        assert self.act(server, self.nicks[1], "join", group=group, size=SIZE) == (200, body)
        self.connect(server)

    @staticmethod
    def password(nick: str) -> str:
        return f"pw-{nick}"

    def act(self, server: Server, nick: str, function: str, **payload) -> tuple[int, dict]:
        return server.call(function, nick=nick, password=self.password(nick), **payload)

    def connect(self, server: Server) -> dict:
        """Open both players' streams; return the snapshot they both get first."""
        self.streams = [server.stream(nick, self.game) for nick in self.nicks]
        first = [stream.next() for stream in self.streams]
        assert first[0] == first[1], first
        self.message = first[0]
        return self.message

    def play(self, server: Server, actions: int, rng: random.Random) -> None:
        """Make up to `actions` random legal requests, each seen by both streams."""
        for _ in range(actions):
            if "winner" in self.message:
                return
            nick = self.message["turn"]
            function, payload = next_action(self.message, rng)
            assert self.act(server, nick, function, game=self.game, **payload) == (200, {})
            messages = [stream.next() for stream in self.streams]
            assert Stream.END not in messages and messages[0] == messages[1], messages
            self.message = messages[0]

    def close(self) -> None:
        for stream in self.streams:
            stream.close()


def last_messages(stream: Stream) -> list[dict]:
    """Every message the stream still holds, up to its end (the server went away)."""
    messages = []
    while (message := stream.next()) is not Stream.END:
        messages.append(message)
    return messages


def game_rows(database_url: str, public_id: str) -> tuple[str, int, int]:
    [(status, version)] = query(
        database_url, "SELECT status, version FROM games_game WHERE public_id = %s", (public_id,)
    )
    [(events,)] = query(
        database_url,
        "SELECT COUNT(*) FROM games_gameevent WHERE game_id = (SELECT id FROM games_game WHERE public_id = %s)",
        (public_id,),
    )
    return status, version, events


def test_a_server_killed_in_the_middle_of_games_loses_nothing(start_server, live_databases):
    database_url = live_databases.new()
    server = start_server(database_url)
    rng = random.Random(5)
    playing, idle, done = (Table(server, group) for group in (1, 2, 3))
    playing.play(server, 30, rng)
    idle.play(server, 5, rng)
    assert done.act(server, done.nicks[0], "roll", game=done.game) == (200, {})  # played: the result counts
    assert done.act(server, done.nicks[1], "leave", game=done.game) == (200, {})

    # Kill the server while a player keeps acting: a request may be cut in the middle. Until the kill every answer
    # and every update must be right; from the kill on, a cut request or an ended stream is expected.
    killing, under_way = threading.Event(), threading.Event()
    acknowledged: list[int] = []  # the version each action answered 200 made
    failures: list[BaseException] = []

    def keep_playing() -> None:
        version = int(playing.streams[0].event_ids[-1])
        try:
            for played in range(10_000):
                if played == 40:
                    # Long before the game can end (random play needs over a hundred actions): wait for the kill.
                    killing.wait(60)
                nick = playing.message["turn"]
                function, payload = next_action(playing.message, rng)
                try:
                    answer = playing.act(server, nick, function, game=playing.game, **payload)
                except httpx.TransportError:
                    if killing.is_set():
                        return
                    raise
                assert answer == (200, {}), (function, payload, answer)
                version += 1
                acknowledged.append(version)
                if played == 5:
                    under_way.set()  # the kill comes right after an answer: that action must have been committed
                messages = [stream.next() for stream in playing.streams]
                if Stream.END in messages and killing.is_set():
                    return
                assert Stream.END not in messages and messages[0] == messages[1], messages
                playing.message = messages[0]
                assert "winner" not in playing.message, "the game ended before the server was killed"
        except BaseException as error:
            failures.append(error)
        finally:
            under_way.set()

    player = threading.Thread(target=keep_playing)
    player.start()
    # A few actions into the game.
    assert under_way.wait(60)
    killing.set()
    server.process.kill()
    server.process.wait()
    player.join(60)
    assert not player.is_alive()
    if failures:
        raise failures[0]
    assert len(acknowledged) >= 5
    # What each stream of the interrupted game saw last: (version, message).
    seen = [(int(stream.event_ids[-1]), (last_messages(stream) or [playing.message])[-1]) for stream in playing.streams]
    for stream in idle.streams:
        last_messages(stream)
    # The idle game's deadline passes while no server runs.
    query(database_url, "UPDATE games_game SET deadline = '2000-01-01 00:00:00' WHERE public_id = %s", (idle.game,))

    again = start_server(database_url)
    # The sweeper of the new process ends the overdue game at once, before or after each player's stream opens: a
    # stream may get the last position first, and then the final message; both end with the same final message.
    idle.streams = [again.stream(nick, idle.game) for nick in idle.nicks]
    finals = [last_messages(stream) for stream in idle.streams]
    assert all(1 <= len(messages) <= 2 for messages in finals), finals
    final = finals[0][-1]
    assert finals[1][-1] == final
    assert final["winner"] == idle.nicks[1 - idle.nicks.index(final["turn"])]
    # The interrupted game goes on from its last committed state, which reconnected streams get in full.
    snapshot = playing.connect(again)
    status, version, events = game_rows(database_url, playing.game)
    assert (status, events) == ("playing", version)
    # Every action answered 200 was committed before its answer: none is lost with the process.
    assert version >= acknowledged[-1]
    assert playing.streams[0].event_ids == [str(version)]
    # Streams never saw more than was committed: the last update they got is the snapshot, unless the kill came
    # between a commit and its publication, and then the snapshot is the next version.
    for seen_version, seen_message in seen:
        assert seen_version in (version, version - 1)
        assert (seen_message == snapshot) == (seen_version == version)
    playing.play(again, 20_000, rng)
    assert "winner" in playing.message

    # Three games finished, each counted once in the rankings.
    for table in (playing, idle, done):
        assert game_rows(database_url, table.game)[0] == "finished"
        assert again.call("ranking", group=table.group, size=SIZE)[1]["ranking"] in (
            [{"nick": winner, "victories": 1, "games": 1}, {"nick": loser, "victories": 0, "games": 1}]
            for winner, loser in (table.nicks, table.nicks[::-1])
        )
    assert query(database_url, "SELECT SUM(games), SUM(victories) FROM rankings_ranking") == [(6, 3)]
    for table in (playing, idle, done):
        table.close()


@pytest.mark.postgres
def test_postgresql_outage_answers_503_and_play_resumes(postgres_databases, tmp_path):
    database_url = postgres_databases.new()
    proxy = TcpProxy("127.0.0.1", 5432)
    # Kept connections (CONN_MAX_AGE) die with the outage: the server must notice and reconnect afterwards.
    server = Server(proxy.url(database_url), tmp_path, CONN_MAX_AGE="60")
    try:
        rng = random.Random(3)
        table = Table(server, 1)
        table.play(server, 5, rng)
        before = game_rows(database_url, table.game)

        proxy.cut()
        nick = table.message["turn"]
        requests = [
            ("register", {"nick": "newcomer", "password": "secret"}),
            ("join", {"nick": nick, "password": table.password(nick), "group": 9, "size": SIZE}),
            ("roll", {"nick": nick, "password": table.password(nick), "game": table.game}),
            ("notify", {"nick": nick, "password": table.password(nick), "game": table.game, "cell": 0}),
            ("ranking", {"group": 1, "size": SIZE}),
        ]
        for function, payload in requests:
            response = server.http.post(f"/{function}", json=payload)
            assert response.status_code == 503, (function, response.text)
            assert response.json() == {"error": "The database is unavailable: try again in a few seconds"}
            assert response.headers["retry-after"] == "5"
        response = server.http.get("/update", params={"nick": nick, "game": table.game})
        assert (response.status_code, list(response.json())) == (503, ["error"])
        # The Plakoto API, which answers on the connection itself (core/direct.py), refuses as the others do.
        for method, path in (("GET", "/plakoto/demo/status/"), ("PUT", "/plakoto/demo/players/W")):
            response = server.http.request(method, path, json={"username": "ann"})
            assert response.status_code == 503, (path, response.text)
            assert response.json() == {"error": "The database is unavailable: try again in a few seconds"}
            assert (response.headers["retry-after"], response.headers["access-control-allow-origin"]) == ("5", "*")
        response = server.http.get("/healthz")
        assert (response.status_code, response.json()) == (
            503,
            {"status": "unavailable", "database": "unavailable", "redis": "not configured"},
        )
        # Open streams stay open, and no game changed.
        assert table.streams[0].nothing_for(0.5)
        proxy.restore()

        assert game_rows(database_url, table.game) == before
        assert server.http.get("/healthz").json()["database"] == "ok"
        table.play(server, 10, rng)
        status, version, events = game_rows(database_url, table.game)
        assert version == events == before[1] + 10 or "winner" in table.message
        assert "database unavailable" in server.log.read_text()
        table.close()
    finally:
        server.stop()
        proxy.close()


@pytest.mark.redis
def test_without_redis_a_process_serves_its_own_streams_and_reconnects(start_server):
    require(redis_available(), "Redis")
    redis_flush()
    host, port = "127.0.0.1", int(REDIS_TEST_URL.rsplit(":", 1)[1].split("/")[0])
    proxy = TcpProxy(host, port)
    proxy.cut()
    try:
        server = start_server(REDIS_URL=proxy.url(REDIS_TEST_URL))
        rng = random.Random(4)
        table = Table(server, 1)
        table.play(server, 10, rng)
        log = server.log.read_text()
        assert "is unreachable" in log and "only the updates made in this process" in log

        proxy.restore()
        deadline = time.monotonic() + 15
        while "is reachable again" not in server.log.read_text():
            assert time.monotonic() < deadline, server.log.read_text()
            time.sleep(0.1)
        table.play(server, 10, rng)
        table.close()
    finally:
        proxy.close()


@pytest.mark.redis
def test_no_turn_runs_out_while_redis_is_unreachable(start_server, live_databases):
    """With Redis away, players served by another process may not see their opponent's move: the turn clocks stand
    still until it is back, then the deadlines move later by the whole outage."""
    require(redis_available(), "Redis")
    redis_flush()
    host, port = "127.0.0.1", int(REDIS_TEST_URL.rsplit(":", 1)[1].split("/")[0])
    proxy = TcpProxy(host, port)
    try:
        database_url = live_databases.new()
        server = start_server(database_url, REDIS_URL=proxy.url(REDIS_TEST_URL), TAB_OUTAGE_GRACE_SECONDS="3")
        table = Table(server, 1)
        proxy.cut()
        wait_for_log(server, "no deadline expires")
        cut_at = time.monotonic()
        # The turn ends five seconds into the outage; seven seconds later, the game goes on.
        due = datetime.now(UTC) + timedelta(seconds=5)
        stored = due if not database_url.startswith("sqlite:") else due.replace(tzinfo=None).isoformat(" ")
        query(database_url, "UPDATE games_game SET deadline = %s WHERE public_id = %s", (stored, table.game))
        time.sleep(7)
        sql = "SELECT status, deadline FROM games_game WHERE public_id = %s"
        assert query(database_url, sql, (table.game,))[0][0] == "playing"
        proxy.restore()
        wait_for_log(server, "the deadlines still ahead then move as much later")
        outage = time.monotonic() - cut_at
        ((status, moved),) = query(database_url, sql, (table.game,))
        assert status == "playing" and as_datetime(moved) - due >= timedelta(seconds=outage - 1)
        # Then the turn runs out after all, and the player on turn loses, as ever.
        for stream in table.streams:
            assert stream.next(30)["winner"] == table.nicks[1]
        table.close()
    finally:
        proxy.close()


def wait_for_log(server: Server, text: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while text not in server.log.read_text():
        assert time.monotonic() < deadline, server.log.read_text()[-3000:]
        time.sleep(0.1)


def as_datetime(value) -> datetime:
    """A deadline as the database gives it (a datetime from PostgreSQL, a text from SQLite)."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(value).replace(tzinfo=UTC)


@pytest.mark.redis
def test_streams_of_another_process_catch_up_when_redis_is_back(start_server, live_databases):
    require(redis_available(), "Redis")
    redis_flush()
    host, port = "127.0.0.1", int(REDIS_TEST_URL.rsplit(":", 1)[1].split("/")[0])
    proxy = TcpProxy(host, port)
    try:
        database_url = live_databases.new()
        first = start_server(database_url, REDIS_URL=proxy.url(REDIS_TEST_URL))
        second = start_server(database_url, REDIS_URL=proxy.url(REDIS_TEST_URL))
        rng = random.Random(6)
        table = Table(first, 1)
        watcher = second.stream(table.nicks[0], table.game)
        assert watcher.next() == table.message
        table.play(first, 3, rng)
        assert [watcher.next() for _ in range(3)][-1] == table.message

        proxy.cut()
        # The first process's own streams go on; the other process hears nothing while Redis is away.
        table.play(first, 5, rng)
        assert watcher.nothing_for(0.5)
        proxy.restore()
        # Back: the other process's stream gets the current state at once, then every update again.
        assert watcher.next(15) == table.message
        table.play(first, 3, rng)
        assert [watcher.next() for _ in range(3)][-1] == table.message
        watcher.close()
        table.close()
    finally:
        proxy.close()


def test_an_outage_is_logged_once_a_minute_not_once_a_request(monkeypatch):
    import logging

    from core import logfilters

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("core.cache")  # django-redis logs the errors it ignores here
    logger.addHandler(handler)
    try:
        now = [1000.0]
        monkeypatch.setattr(logfilters, "clock", lambda: now[0])
        [outage_filter] = logger.filters
        outage_filter.last = float("-inf")
        for _ in range(50):
            logger.error("Exception ignored")
        now[0] += logfilters.QUIET_SECONDS
        logger.error("Exception ignored")
    finally:
        logger.removeHandler(handler)
    assert [record.getMessage() for record in records] == [
        "Exception ignored",
        "Exception ignored (49 more like it in the last minute)",
    ]


def sql_time(database_url: str, moment: datetime) -> str:
    """A UTC time as the database stores it (SQLite: naive text in UTC)."""
    text = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return text if database_url.startswith("sqlite:") else f"{text}+00:00"


def wait_for_a_sweep(database_url: str, after: datetime) -> None:
    give_up = time.monotonic() + 30
    while not query(
        database_url, "SELECT 1 FROM games_sweepmark WHERE swept_at > %s", (sql_time(database_url, after),)
    ):
        assert time.monotonic() < give_up, "no sweeper ran"
        time.sleep(0.1)


def test_a_restart_after_an_outage_leaves_the_turn_clocks_where_they_stood(start_server, live_databases):
    database_url = live_databases.new()
    server = start_server(database_url)
    table = Table(server, 1)
    wait_for_a_sweep(database_url, datetime(2000, 1, 1, tzinfo=UTC))
    server.process.kill()
    server.process.wait()
    table.close()
    # As if the server had been down for an hour, and the player on turn had had half an hour left then.
    now = datetime.now(UTC)
    query(database_url, "UPDATE games_sweepmark SET swept_at = %s", (sql_time(database_url, now - timedelta(hours=1)),))
    query(
        database_url,
        "UPDATE games_game SET deadline = %s WHERE public_id = %s",
        (sql_time(database_url, now - timedelta(minutes=30)), table.game),
    )

    again = start_server(database_url)
    wait_for_a_sweep(database_url, now)
    # The game goes on, with about the half hour that was left (the hour of the outage added to its deadline).
    later = sql_time(database_url, now + timedelta(minutes=29))
    assert query(database_url, "SELECT status FROM games_game WHERE deadline > %s", (later,)) == [("playing",)]
    assert table.act(again, table.nicks[0], "roll", game=table.game) == (200, {})
