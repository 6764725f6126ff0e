import json
import os
from collections import Counter

import pytest
from django.core.cache import cache
from django.test import Client

from accounts.credentials import local_pairs
from accounts.nicks import account_of
from core import limits, notices

from .factories import UserFactory

PASSWORDS = {"alice": "alice-secret", "bob": "bob-secret", "charlie": "charlie-secret"}


class ManualClock:
    """A monotonic clock that a test moves by hand (`clock.now += seconds`)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    # Hashing cost is not under test here (one test checks the real hasher on purpose).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def no_limits(settings):
    # The suite fires thousands of requests, many with wrong passwords, from one address: tests/test_limits.py sets the
    # limits it checks.
    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 0
    settings.TAB_REGISTER_PER_MINUTE = 0
    settings.TAB_JOIN_PER_MINUTE = 0
    settings.TAB_STREAMS_PER_NICK = 0
    settings.TAB_HASHES_PER_MINUTE = 0


@pytest.fixture(autouse=True)
def empty_cache():
    # Rolled-back tests give their user ids to the next test's users: the nicks remembered by id must go too.
    # No test hears the other processes' notices unless it says so (core/notices.py): their memory is not believed.
    notices.deaf()
    cache.clear()
    limits.forget_failures()
    account_of.cache_clear()
    local_pairs.clear()
    yield
    notices.deaf()
    cache.clear()
    limits.forget_failures()
    account_of.cache_clear()
    local_pairs.clear()


class Api:
    """The course protocol as a client sees it: POST a JSON object, get a status and a JSON object back."""

    def __init__(self, client: Client):
        self.client = client

    def __call__(self, function: str, payload=None, *, raw: bytes | None = None, content_type="application/json"):
        body = raw if raw is not None else json.dumps(payload if payload is not None else {})
        response = self.client.post(f"/{function}", data=body, content_type=content_type)
        return response.status_code, response.json()

    def as_player(self, nick: str):
        """Return a function that calls the API with this player's credentials merged into the payload."""

        def call(function: str, **payload):
            return self(function, {"nick": nick, "password": PASSWORDS[nick], **payload})

        return call


@pytest.fixture
def api(client) -> Api:
    return Api(client)


def _player(nick: str):
    return UserFactory(username=nick, password=PASSWORDS[nick])


@pytest.fixture
def alice(db):
    return _player("alice")


@pytest.fixture
def bob(db):
    return _player("bob")


@pytest.fixture
def charlie(db):
    return _player("charlie")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say loudly, at the very end, that some tests did not run and why: a skip must never pass unnoticed."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons = Counter(report.longrepr[2].removeprefix("Skipped: ") for report in skipped)
    tests = "TEST" if len(skipped) == 1 else "TESTS"
    terminalreporter.write_sep("!", f"{len(skipped)} {tests} SKIPPED: this run did not test everything", red=True)
    for reason, count in sorted(reasons.items()):
        terminalreporter.write_line(f"  {count} x {reason}", red=True)


def require(available: bool, what: str) -> None:
    """Skip a test whose service is missing on a developer's machine; in CI a missing service is a failure."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is not reachable, and CI must test against it")
    pytest.skip(f"{what} is not reachable")


@pytest.fixture(scope="session")
def live_databases(tmp_path_factory):
    from .live import Databases, postgres_available, suite_uses_postgres

    postgres = suite_uses_postgres()
    if postgres:
        require(postgres_available(), "PostgreSQL")
    databases = Databases(tmp_path_factory.mktemp("live"), postgres=postgres)
    yield databases
    databases.drop_all()


@pytest.fixture(scope="session")
def postgres_databases(tmp_path_factory):
    from .live import Databases, postgres_available

    require(postgres_available(), "PostgreSQL")
    databases = Databases(tmp_path_factory.mktemp("live-postgres"), postgres=True)
    yield databases
    databases.drop_all()


@pytest.fixture
def start_server(live_databases, tmp_path):
    """Start uvicorn processes serving the project; each gets a fresh database unless one is given."""
    from .live import Server

    servers = []

    def start(database_url: str | None = None, **environment: str) -> Server:
        server = Server(database_url or live_databases.new(), tmp_path, **environment)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def gunicorn(live_databases, tmp_path):
    """Start servers as `make run` does (tests/live.py: Gunicorn), each on a fresh database."""
    from .live import Gunicorn

    servers = []

    def start(**environment: str):
        server = Gunicorn(live_databases.new(), tmp_path, **environment)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def tab_join(*, user_id: int, group: int, size: int):
    """Join a Tâb game as the course API's `join` does: the group is the pool, the size the board's option."""
    from games.services import match_join

    return match_join(user_id=user_id, kind="tab", options={"size": size}, pool=str(group))


def first_throw(public_id: str) -> None:
    """The player on turn throws the sticks: the game has been played, so that a leave now counts in the rankings
    (a game left before anybody acted counts for no one)."""
    from games.models import Game
    from games.rules import tab
    from games.services import game_act, seat_on_turn

    game_act(public_id=public_id, user_id=seat_on_turn(Game.objects.get(public_id=public_id))[1], action=tab.Roll())


def play_to_the_end(api: Api, game: str, rng, max_actions: int = 5000) -> dict:
    """Play random legal actions for whichever player is on turn until the game ends; return its last message."""
    from games.models import Game
    from protocols.course_api.snapshots import game_message

    from .live import checked, next_action

    for _ in range(max_actions):
        message = checked(game_message(Game.objects.get(public_id=game)))
        if "winner" in message:
            return message
        function, payload = next_action(message, rng)
        status, body = api.as_player(message["turn"])(function, game=game, **payload)
        assert status == 200, body
    raise AssertionError("the game does not end")


@pytest.fixture
def start_game(api):
    """Pair alice (the initial player) and bob in a (group, size); return the game id."""

    def start(group: int = 1, size: int = 7) -> str:
        _, body = api.as_player("alice")("join", group=group, size=size)
        api.as_player("bob")("join", group=group, size=size)
        return body["game"]

    return start


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright, one per test module."""
    from playwright.sync_api import sync_playwright

    from .browser import CHROMIUM, launch

    require(CHROMIUM.exists(), "Chromium (/usr/bin/chromium)")
    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()
