"""Abuse: wrong passwords, floods of registrations and joins, and the admin's login are limited per nick and address,
with a JSON error, 429 and Retry-After; behind a trusted proxy the address comes from X-Forwarded-For."""

import time
from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client

from core import limits

from .conftest import PASSWORDS
from .live import window_begins

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def whole_window():
    """Start each test at the beginning of a minute, so that its counts all fall in one window however slow it runs."""
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=True):
        yield


def post(client: Client, function: str, payload: dict, **headers):
    response = client.post(f"/{function}", payload, content_type="application/json", headers=headers)
    return response.status_code, response.json(), response


def assert_throttled(answer, *, cross_origin: bool = True) -> None:
    """A 429 with its JSON error and Retry-After; readable by any site for the API, by this site alone elsewhere."""
    status, body, response = answer
    assert status == 429, body
    assert list(body) == ["error"] and body["error"].startswith("Too many"), body
    assert 1 <= int(response["Retry-After"]) <= 60
    assert response.get("Access-Control-Allow-Origin") == ("*" if cross_origin else None)


def test_ten_wrong_passwords_in_a_minute_lock_the_nick_for_that_address(client, settings, alice):
    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 10
    right = {"nick": "alice", "password": PASSWORDS["alice"]}
    wrong = {"nick": "alice", "password": "guess"}
    assert post(client, "register", right)[:2] == (200, {})  # remembered: the cache alone would let it in
    for function in ("register", "join") * 5:
        status, body, _ = post(client, function, {**wrong, "group": 1, "size": 9})
        assert (status, body) == (401, {"error": "User registered with a different password"})
    # Every function, the right password too: while locked, a right guess must look like a wrong one.
    assert_throttled(post(client, "register", right))
    assert_throttled(post(client, "join", {**right, "group": 1, "size": 9}))
    assert_throttled(post(client, "roll", {**wrong, "game": "whatever"}))
    # Another address, or another nick, is not concerned.
    other = Client(REMOTE_ADDR="10.1.2.3")
    assert post(other, "register", right)[:2] == (200, {})
    assert post(client, "register", {"nick": "bob", "password": PASSWORDS["bob"]})[:2] == (200, {})


def test_failures_are_counted_per_minute(client, settings, alice, monkeypatch):
    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 2
    wrong = {"nick": "alice", "password": "guess"}
    for _ in range(2):
        assert post(client, "register", wrong)[0] == 401
    assert_throttled(post(client, "register", wrong))
    later = time.time() + limits.WINDOW
    monkeypatch.setattr(limits, "clock", lambda: later)
    assert post(client, "register", {"nick": "alice", "password": PASSWORDS["alice"]})[:2] == (200, {})


@pytest.mark.parametrize(
    ("function", "setting"), [("register", "TAB_REGISTER_PER_MINUTE"), ("join", "TAB_JOIN_PER_MINUTE")]
)
def test_register_and_join_are_limited_per_address(client, settings, alice, function, setting):
    setattr(settings, setting, 5)
    payload = {"nick": "alice", "password": PASSWORDS["alice"], "group": 4, "size": 9}
    for _ in range(5):
        assert post(client, function, payload)[0] == 200
    assert_throttled(post(client, function, payload))
    assert_throttled(post(client, function, {"nick": "bad nick"}))  # counted before anything is parsed
    assert post(Client(REMOTE_ADDR="10.1.2.3"), function, payload)[0] == 200
    # The other functions are not limited.
    assert post(client, "ranking", {"group": 4, "size": 9})[0] == 200


def test_the_address_limit_fits_async_views_too(settings, rf):
    import asyncio

    from django.http import JsonResponse

    settings.TAB_JOIN_PER_MINUTE = 1

    async def view(request):
        return JsonResponse({})

    limited = limits.per_address("join", "TAB_JOIN_PER_MINUTE")(view)
    assert asyncio.run(limited(rf.post("/join"))).status_code == 200
    with pytest.raises(limits.Throttled):
        asyncio.run(limited(rf.post("/join")))


def test_forwarded_for_is_believed_only_from_trusted_proxies(client, settings, alice):
    settings.TAB_REGISTER_PER_MINUTE = 2
    payload = {"nick": "alice", "password": PASSWORDS["alice"]}
    # No trusted proxy: X-Forwarded-For is whatever the client wrote, and changes nothing.
    for number in range(2):
        assert post(client, "register", payload, **{"X-Forwarded-For": f"10.0.0.{number}"})[0] == 200
    assert_throttled(post(client, "register", payload, **{"X-Forwarded-For": "10.0.0.9"}))

    settings.TAB_REGISTER_PER_MINUTE = 2
    settings.TRUSTED_PROXIES = 1
    # One proxy: the client is the address it appended last; what the client wrote before it does not count.
    for spoofed in ("1.1.1.1", "2.2.2.2"):
        assert post(client, "register", payload, **{"X-Forwarded-For": f"{spoofed}, 192.0.2.7"})[0] == 200
    assert_throttled(post(client, "register", payload, **{"X-Forwarded-For": "3.3.3.3, 192.0.2.7"}))
    assert post(client, "register", payload, **{"X-Forwarded-For": "192.0.2.8"})[0] == 200

    settings.TRUSTED_PROXIES = 2
    for _ in range(2):
        assert post(client, "register", payload, **{"X-Forwarded-For": "9.9.9.9, 198.51.100.1, 10.0.0.1"})[0] == 200
    assert_throttled(post(client, "register", payload, **{"X-Forwarded-For": "198.51.100.1, 10.0.0.2"}))


# --- The admin ---------------------------------------------------------------------------------------------------


@pytest.fixture
def staff(db):
    from .factories import UserFactory

    return UserFactory(username="boss", password="boss-secret", is_staff=True, is_superuser=True)


def admin_login(client: Client, username: str, password: str):
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})


def test_only_staff_get_in_even_with_a_players_right_password(client, alice, staff):
    response = admin_login(client, "alice", PASSWORDS["alice"])
    assert response.status_code == 200 and "_auth_user_id" not in client.session
    player = Client()
    player.force_login(alice)
    response = player.get("/admin/games/game/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    response = admin_login(client, "boss", "boss-secret")
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.get("/admin/games/game/").status_code == 200


def test_admin_login_is_throttled_too(client, settings, staff):
    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 3
    for _ in range(3):
        response = admin_login(client, "boss", "guess")
        assert response.status_code == 200 and "_auth_user_id" not in client.session
    response = admin_login(client, "boss", "boss-secret")
    assert_throttled((response.status_code, response.json(), response), cross_origin=False)
    assert "_auth_user_id" not in client.session
    # The game API shares the count: the same nick from the same address is locked there too.
    assert_throttled(post(client, "register", {"nick": "boss", "password": "boss-secret"}))
    assert admin_login(Client(REMOTE_ADDR="10.1.2.3"), "boss", "boss-secret").status_code == 302


# --- Against real servers -----------------------------------------------------------------------------------------


def open_stream(server, nick: str, game: str, headers: str = ""):
    """Open an update stream on a socket of its own (closing it is a client going away); return it and its status."""
    import socket

    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(f"GET /update?nick={nick}&game={game} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
    return sock, int(sock.recv(65536).split(b" ", 2)[1])


@pytest.mark.server
def test_open_streams_per_nick_are_capped(start_server):
    server = start_server(TAB_STREAMS_PER_NICK="2")
    for nick in ("zp", "op"):
        assert server.call("register", nick=nick, password="secret") == (200, {})
    # Three games in play (an account waits in one game at a time).
    games = []
    for group in (1, 2, 3):
        games.append(server.call("join", nick="zp", password="secret", group=group, size=9)[1]["game"])
        assert server.call("join", nick="op", password="secret", group=group, size=9)[1]["game"] == games[-1]
    (first, status_1), (second, status_2) = open_stream(server, "zp", games[0]), open_stream(server, "zp", games[1])
    assert (status_1, status_2) == (200, 200)
    response = server.http.get("/update", params={"nick": "zp", "game": games[2]})
    assert response.status_code == 429
    assert response.json() == {"error": "Too many open update streams for this nick (at most 2)"}
    assert int(response.headers["retry-after"]) > 0
    # A stream whose client went away gives its place back.
    first.close()
    deadline = time.monotonic() + 10
    while (third := open_stream(server, "zp", games[2]))[1] != 200:
        third[0].close()
        assert time.monotonic() < deadline, "the closed stream's slot was not given back"
        time.sleep(0.1)
    second.close()
    third[0].close()


def wait_for_pings(sock, count: int) -> None:
    """Read a stream's socket until it has sent `count` keep-alive comments."""
    received = b""
    while received.count(b": ping") < count:
        chunk = sock.recv(65536)
        assert chunk, "the stream ended"
        received += chunk


@pytest.mark.server
def test_a_stranger_cannot_use_up_a_players_streams(start_server):
    # Behind a trusted proxy, so that the test can speak from two addresses.
    server = start_server(TAB_STREAMS_PER_NICK="2", TRUSTED_PROXIES="1")
    assert server.call("register", nick="zp", password="secret") == (200, {})
    game = server.call("join", nick="zp", password="secret", group=1, size=9)[1]["game"]
    stranger, player = "X-Forwarded-For: 203.0.113.9\r\n", "X-Forwarded-For: 198.51.100.7\r\n"
    # A stream needs no password: anyone who knows the nick and the game can open one, up to the cap for their address.
    held = [open_stream(server, "zp", game, stranger) for _ in range(3)]
    assert [status for _, status in held] == [200, 200, 429]
    # The player's own stream, from their address, is not refused for it.
    own, status = open_stream(server, "zp", game, player)
    assert status == 200
    for sock in [own] + [sock for sock, _ in held]:
        sock.close()


@pytest.mark.server
def test_a_stream_keeps_its_slot_beyond_the_slots_lifetime(start_server):
    # A slot lives three keep-alive periods (6 s here) unless the keep-alive timer renews it.
    server = start_server(TAB_STREAMS_PER_NICK="1", TAB_KEEPALIVE_SECONDS="2")
    for nick in ("zq", "zr"):
        assert server.call("register", nick=nick, password="secret") == (200, {})
    # A game in play, then one waiting (an account waits in one game at a time).
    games = [server.call("join", nick="zq", password="secret", group=1, size=9)[1]["game"]]
    assert server.call("join", nick="zr", password="secret", group=1, size=9)[1]["game"] == games[0]
    games.append(server.call("join", nick="zq", password="secret", group=2, size=9)[1]["game"])
    first, status = open_stream(server, "zq", games[0])
    assert status == 200
    # Four keep-alives come at least four periods after the slot was taken: past its first lifetime.
    wait_for_pings(first, 4)
    second, status = open_stream(server, "zq", games[1])
    second.close()
    assert status == 429
    first.close()


def test_a_slot_lives_while_it_is_renewed_and_frees_itself_after(settings):
    settings.TAB_STREAMS_PER_NICK = 1
    settings.TAB_KEEPALIVE_SECONDS = 2
    lifetime = limits.STREAM_SLOT_LIFETIMES * 2
    with time_machine.travel(datetime(2026, 3, 1, tzinfo=UTC), tick=False) as clock:
        slot = limits.stream_slot("zq", "192.0.2.1")
        for _ in range(3):
            clock.shift(lifetime - 1)
            limits.renew_slots([slot])
        with pytest.raises(limits.Throttled):
            limits.stream_slot("zq", "192.0.2.1")
        # The process that held it died: nobody renews it, and after a lifetime it is free again.
        clock.shift(lifetime + 1)
        limits.stream_slot("zq", "192.0.2.1").release()


@pytest.mark.server
@pytest.mark.redis
def test_limits_are_shared_between_processes_through_redis(start_server, live_databases):
    from .conftest import require
    from .live import REDIS_TEST_URL, redis_available, redis_flush

    require(redis_available(), "Redis")
    redis_flush()
    database_url = live_databases.new()
    first = start_server(database_url, REDIS_URL=REDIS_TEST_URL)
    second = start_server(database_url, REDIS_URL=REDIS_TEST_URL)
    window_begins(first.http)
    assert first.call("register", nick="zp", password="secret") == (200, {})
    for server in (first, second) * 5:
        assert server.call("register", nick="zp", password="guess")[0] == 401
    for server in (first, second):
        status, body = server.call("register", nick="zp", password="secret")
        assert status == 429 and body["error"].startswith("Too many wrong passwords")


@pytest.mark.server
def test_a_local_client_cannot_choose_its_address_with_x_forwarded_for(gunicorn):
    # `make run`'s server with no trusted proxy (the default): the header is only what the client wrote.
    server = gunicorn(TAB_LOGIN_FAILURES_PER_MINUTE="3")
    window_begins(server.http)
    assert server.http.post("/register", json={"nick": "zp", "password": "secret"}).status_code == 200
    answers = [
        server.http.post(
            "/register", json={"nick": "zp", "password": "guess"}, headers={"X-Forwarded-For": f"10.9.8.{number}"}
        )
        for number in range(4)
    ]
    assert [answer.status_code for answer in answers] == [401, 401, 401, 429]
