"""Accounts: hashed passwords, and the short-lived cache of verified credentials that spares a hash per call."""

import pickle
import time

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, make_password
from django.core.cache import cache

from accounts import credentials, services
from accounts.services import AuthenticationFailed
from tabsite import settings as project_settings

pytestmark = pytest.mark.django_db

User = get_user_model()
# The services are coroutines; called from a test's thread, their database work runs in that thread.
user_register = async_to_sync(services.user_register)
user_authenticate = async_to_sync(services.user_authenticate)


@pytest.fixture
def real_password_hasher(settings):
    """The production hashers (the suite's own fixture swaps in a cheap one)."""
    settings.PASSWORD_HASHERS = project_settings.PASSWORD_HASHERS


def stored_cache_bytes() -> bytes:
    """Everything the (local memory) cache holds, as bytes."""
    return b"".join(value if isinstance(value, bytes) else pickle.dumps(value) for value in cache._cache.values())


def test_register_hashes_with_argon2(real_password_hasher):
    user_register(nick="zp", password="secret")
    stored = User.objects.get(username="zp").password
    assert stored.startswith("argon2$")
    assert check_password("secret", stored)


def test_a_verified_pair_is_remembered_without_the_password(real_password_hasher, django_assert_num_queries):
    user_id = user_register(nick="zp", password="secret")
    cache.clear()
    assert user_authenticate(nick="zp", password="secret") == user_id  # hashes once
    with django_assert_num_queries(0):
        assert user_authenticate(nick="zp", password="secret") == user_id
    assert b"secret" not in stored_cache_bytes()
    assert b"zp" not in stored_cache_bytes()


def test_with_a_cache_of_the_processs_own_a_pair_and_a_nicks_wrong_passwords_are_read_from_memory(
    settings, monkeypatch
):
    from datetime import UTC, datetime

    import time_machine
    from django.core.cache.backends.locmem import LocMemCache

    from accounts.services import remembered_user_id
    from core import limits

    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 2
    user_id = user_register(nick="zp", password="secret")
    reads: list[object] = []
    monkeypatch.setattr(LocMemCache, "get_many", lambda cache, keys, version=None: reads.append(keys) or {})
    assert remembered_user_id("zp", "secret") == user_id
    assert remembered_user_id("zp", "guess") is None
    assert reads == []  # neither the pair nor a count of wrong passwords that nobody gave
    # Once this process counted one, the nick's count is read: the limit holds for a right guess too. At the start of a
    # minute (on a controlled clock), so that the counts fall in one window however slow the run.
    monkeypatch.undo()
    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 2
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=True):
        limits.login_failed("zp")
        limits.login_failed("zp")
        with pytest.raises(limits.Throttled):
            remembered_user_id("zp", "secret")


def test_a_wrong_password_is_refused_even_when_the_right_one_is_remembered():
    user_register(nick="zp", password="secret")
    user_authenticate(nick="zp", password="secret")
    for wrong in ("secret ", "Secret", "", "secretsecret"):
        with pytest.raises(AuthenticationFailed, match="User registered with a different password"):
            user_authenticate(nick="zp", password=wrong)


def test_the_pair_is_keyed_to_the_nick():
    user_register(nick="zp", password="secret")
    user_register(nick="jpleal", password="another")
    with pytest.raises(AuthenticationFailed):
        user_authenticate(nick="jpleal", password="secret")


def test_a_changed_password_forgets_the_old_pair():
    user_register(nick="zp", password="secret")
    assert credentials.remembered_user_id("zp", "secret") is not None
    user = User.objects.get(username="zp")
    user.set_password("new one")
    user.save()
    assert credentials.remembered_user_id("zp", "secret") is None
    with pytest.raises(AuthenticationFailed):
        user_authenticate(nick="zp", password="secret")
    assert user_authenticate(nick="zp", password="new one") == user.pk


def test_a_deactivated_account_is_refused_at_once():
    user_register(nick="zp", password="secret")
    user = User.objects.get(username="zp")
    user.is_active = False
    user.save()
    with pytest.raises(AuthenticationFailed, match="This account is disabled"):
        user_authenticate(nick="zp", password="secret")


def test_remembered_pairs_expire(settings):
    settings.TAB_CREDENTIALS_TTL = 0.01
    user_register(nick="zp", password="secret")
    time.sleep(0.05)
    assert credentials.remembered_user_id("zp", "secret") is None


def test_unknown_nick():
    with pytest.raises(AuthenticationFailed, match="User not registered"):
        user_authenticate(nick="nobody", password="x")


def test_registering_again_is_a_password_check():
    first = user_register(nick="zp", password="secret")
    cache.clear()
    assert user_register(nick="zp", password="secret") == first
    with pytest.raises(AuthenticationFailed):
        user_register(nick="zp", password="other")
    assert User.objects.filter(username="zp").count() == 1


def test_a_hash_with_outdated_parameters_is_upgraded_at_the_next_check(settings):
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    user = User.objects.create(username="zp", password=make_password("secret", hasher="md5"))
    assert user_authenticate(nick="zp", password="secret") == user.pk
    user.refresh_from_db()
    assert user.password.startswith("pbkdf2_sha256$")
    assert check_password("secret", user.password)


def test_a_pbkdf2_hash_of_before_keeps_working_and_becomes_argon2(real_password_hasher):
    user = User.objects.create(username="zp", password=make_password("secret", hasher="pbkdf2_sha256"))
    with pytest.raises(AuthenticationFailed):
        user_authenticate(nick="zp", password="guess")
    user.refresh_from_db()
    assert user.password.startswith("pbkdf2_sha256$")  # a wrong password changes nothing
    assert user_authenticate(nick="zp", password="secret") == user.pk
    user.refresh_from_db()
    assert user.password.startswith("argon2$") and check_password("secret", user.password)


def redis_cache(url: str) -> dict:
    """The shared cache as the settings make it with REDIS_URL."""
    return {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": url,
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }


@pytest.fixture
def shared_cache(settings):
    """The shared cache in Redis (the tests' own database of it, emptied), as the settings make it with REDIS_URL."""
    from .conftest import require
    from .live import REDIS_TEST_URL, redis_available, redis_flush

    require(redis_available(), "Redis")
    redis_flush()
    settings.CACHES = redis_cache(REDIS_TEST_URL)


def test_while_redis_is_unreachable_each_process_remembers_what_it_verified(settings):
    settings.CACHES = redis_cache("redis://127.0.0.1:1/0")  # nothing listens there: an outage
    user_register(nick="zp", password="secret")
    # Remembered all the same: the next calls are spared a hash each.
    assert credentials.remembered_user_id("zp", "secret") == User.objects.get(username="zp").pk
    assert credentials.remembered_user_id("zp", "guess") is None
    credentials.forget("zp")
    assert credentials.remembered_user_id("zp", "secret") is None


@pytest.mark.redis
def test_while_redis_is_reachable_it_alone_is_believed(shared_cache):
    from .live import REDIS_TEST_URL

    user_register(nick="zp", password="secret")
    user_id = User.objects.get(username="zp").pk
    assert credentials.remembered_user_id("zp", "secret") == user_id
    # Another process drops the pair (the password changed there): this process's own memory must not let it in.
    import redis

    redis.Redis.from_url(REDIS_TEST_URL).flushdb()
    assert credentials.remembered_user_id("zp", "secret") is None


def test_a_pair_in_use_stays_remembered_and_an_unused_one_expires(settings):
    import time_machine

    settings.TAB_CREDENTIALS_TTL = 300
    with time_machine.travel(1_900_000_000, tick=False) as clock:
        user_register(nick="zp", password="secret")
        user_register(nick="idle", password="secret")
        user_id = User.objects.get(username="zp").pk
        for _ in range(4):  # used every two minutes for eight: past its first TTL, remembered all along
            clock.shift(120)
            assert credentials.remembered_user_id("zp", "secret") == user_id
        assert credentials.remembered_user_id("idle", "secret") is None
        assert credentials.remembered_user_id("zp", "guess") is None
        clock.shift(301)  # unused for longer than the TTL
        assert credentials.remembered_user_id("zp", "secret") is None


@pytest.mark.redis
def test_a_pair_used_in_another_process_is_extended_in_redis_and_a_forgotten_one_stays_forgotten(
    settings, shared_cache
):
    from django.core.cache import caches

    settings.TAB_CREDENTIALS_TTL = 300
    user_register(nick="zp", password="secret")
    user_id, key, shared = User.objects.get(username="zp").pk, credentials.key_of("zp"), caches["default"]
    shared.expire(key, 20)  # late in its life; and this process never saw it (another one verified it)
    credentials.local_pairs.clear()
    assert credentials.remembered_user_id("zp", "secret") == user_id
    assert 250 < shared.ttl(key) <= 300
    # Dropped by another process (its password changed there): a use here does not bring it back.
    shared.delete(key)
    credentials.local_pairs.clear()
    assert credentials.remembered_user_id("zp", "secret") is None
    assert shared.ttl(key) == 0


@pytest.mark.redis
def test_a_remembered_pair_and_the_nicks_wrong_passwords_are_one_trip_to_redis(settings, shared_cache):
    from datetime import UTC, datetime

    import redis
    import time_machine

    from accounts.services import remembered_user_id
    from core import limits

    from .live import REDIS_TEST_URL

    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 2
    user_register(nick="zp", password="secret")
    user_id = User.objects.get(username="zp").pk
    server = redis.Redis.from_url(REDIS_TEST_URL)
    database = server.connection_pool.connection_kwargs.get("db", 0)
    marker = redis.Redis.from_url(REDIS_TEST_URL)
    marker.ping()  # connected before: its handshake is not counted
    with server.monitor() as monitor:  # every command the server runs, of any client and database
        assert remembered_user_id("zp", "secret") == user_id
        marker.echo("seen")
        commands = []
        while (command := monitor.next_command())["command"] != "ECHO seen":
            if command["db"] == database:
                commands.append(command["command"].split()[0])
    assert commands == ["MGET"]
    # The wrong passwords are counted all the same: the nick is throttled, right guess or wrong. At the start of a
    # minute (on a controlled clock), so that the counts fall in one window however slow the run.
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=True):
        limits.login_failed("zp")
        limits.login_failed("zp")
        with pytest.raises(limits.Throttled):
            remembered_user_id("zp", "secret")


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_calls_of_a_batch_read_their_players_credentials_in_one_trip_to_redis(settings, shared_cache):
    from datetime import UTC, datetime

    import redis
    import time_machine

    from accounts.services import checks_login, remembered_user_id
    from core import limits
    from core.dbthread import DatabaseThread

    from .live import REDIS_TEST_URL
    from .test_dbthread import thread_batch

    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 2
    nicks = ("zp", "jpleal", "ana")
    for nick in nicks:
        user_register(nick=nick, password="secret")
    ids = dict(User.objects.filter(username__in=nicks).values_list("username", "id"))

    @checks_login
    def player(login: tuple[str, str]) -> int | None:
        return remembered_user_id(*login)

    server = redis.Redis.from_url(REDIS_TEST_URL)
    database = server.connection_pool.connection_kwargs.get("db", 0)
    marker = redis.Redis.from_url(REDIS_TEST_URL)
    marker.ping()  # connected before: its handshake is not counted
    thread = DatabaseThread()
    thread.thread.start()
    try:
        thread_batch(thread, [(player, ("zp", "secret"))])  # the thread's own client connects
        # At the start of a minute (on a controlled clock), so that the counts fall in one window however slow the run.
        with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=True):
            limits.login_failed("ana")
            limits.login_failed("ana")
            with server.monitor() as monitor:  # every command the server runs, of any client and database
                outcomes = thread_batch(
                    thread, [(player, ("zp", "secret")), (player, ("jpleal", "wrong")), (player, ("ana", "secret"))]
                )
                marker.echo("seen")
                commands = []
                while (command := monitor.next_command())["command"] != "ECHO seen":
                    if command["db"] == database:
                        commands.append(command["command"].split()[0])
    finally:
        thread.stop()
    # Each call has its own answer: the right pair its player, a wrong one none, a throttled nick a refusal.
    assert outcomes[:2] == [ids["zp"], None] and isinstance(outcomes[2], limits.Throttled)
    # The pairs and the counts of the three were read in one trip.
    assert [name for name in commands if name in ("GET", "MGET", "EXISTS")] == ["MGET"]


def test_hashing_refuses_at_once_what_it_could_not_do_promptly():
    import asyncio
    import threading

    from accounts.hashing import HashingBusy, HashingGate

    async def main():
        gate, release = HashingGate(threads=1, waiting=1), threading.Event()
        running = asyncio.ensure_future(gate.run(release.wait, 30))
        waiting = asyncio.ensure_future(gate.run(release.wait, 30))
        await asyncio.sleep(0)  # both admitted: one hashing, one waiting for the thread
        with pytest.raises(HashingBusy) as refused:
            await gate.run(release.wait, 30)
        release.set()
        assert await asyncio.gather(running, waiting) == [True, True]
        return refused.value, await gate.run(str.upper, "free again")

    refused, after = asyncio.run(main())
    assert (refused.status, refused.retry_after, after) == (503, 1, "FREE AGAIN")


def test_an_address_has_a_budget_of_password_hashes(api, settings):
    from datetime import UTC, datetime

    import time_machine

    settings.TAB_HASHES_PER_MINUTE = 3
    # At the start of a minute (on a controlled clock), so that the counts fall in one window however slow the run.
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=True):
        # New accounts and password checks alike cost a hash; the fourth of the minute is refused before it is made.
        assert api("register", {"nick": "one", "password": "secret"}) == (200, {})
        assert api("register", {"nick": "two", "password": "secret"}) == (200, {})
        assert api("register", {"nick": "one", "password": "guess"})[0] == 401
        status, body = api("register", {"nick": "three", "password": "secret"})
        assert status == 429 and body["error"].startswith("Too many password checks from your address"), body
        assert not User.objects.filter(username="three").exists()
        # A remembered pair costs no hash, and is still let in.
        assert api("register", {"nick": "one", "password": "secret"}) == (200, {})
