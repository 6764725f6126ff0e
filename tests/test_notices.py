"""Notices between server processes (core/notices.py): while a process hears every notice of the others, it believes
its memory of a remembered pair and of a nick's clean record of wrong passwords without asking Redis, and forgets
what it is told to. Against the real Redis; the listener's confirmation of its subscription is `notices.heard()`,
called here as the listener calls it (tests/test_live.py has two real server processes tell each other)."""

from datetime import UTC, datetime

import pytest
import redis
import time_machine
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model

from accounts import credentials, services
from accounts.services import remembered_user_id
from core import limits, notices
from games import publication

from .conftest import require
from .live import REDIS_TEST_URL, redis_available, redis_flush
from .test_accounts import redis_cache

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

User = get_user_model()
user_register = async_to_sync(services.user_register)
# The middle of a minute on a controlled clock: the wrong passwords' windows are minutes of the wall clock.
MIDDAY = datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC)


@pytest.fixture
def shared(settings):
    """The shared cache in Redis (the tests' own database, emptied), wrong passwords limited, the clock held."""
    require(redis_available(), "Redis")
    redis_flush()
    settings.CACHES = redis_cache(REDIS_TEST_URL)
    settings.TAB_LOGIN_FAILURES_PER_MINUTE = 3
    with time_machine.travel(MIDDAY, tick=False) as clock:
        yield clock


def commands_of(action) -> list[str]:
    """The commands the tests' Redis database runs while `action()` runs."""
    server = redis.Redis.from_url(REDIS_TEST_URL)
    database = server.connection_pool.connection_kwargs.get("db", 0)
    marker = redis.Redis.from_url(REDIS_TEST_URL)
    marker.ping()
    commands = []
    with server.monitor() as monitor:
        action()
        marker.echo("seen")
        while (command := monitor.next_command())["command"] != "ECHO seen":
            if command["db"] == database:
                commands.append(command["command"].split()[0])
    return commands


def confirmed(nick: str) -> int:
    """Register `nick` and have this process confirm its pair with Redis once; return the user id."""
    user_register(nick=nick, password="secret")
    credentials.local_pairs.clear()  # as if another process had verified it
    user_id = remembered_user_id(nick, "secret")
    assert user_id == User.objects.get(username=nick).pk
    return user_id


def test_while_hearing_a_confirmed_pair_and_a_clean_nick_cost_no_trip_to_redis(shared):
    notices.heard()
    user_id = confirmed("zp")
    assert commands_of(lambda: remembered_user_id("zp", "secret")) == []
    assert remembered_user_id("zp", "guess") is None  # a wrong password is never believed
    # Redis no longer holds it (it expired, or was emptied): this process's memory is still believed.
    redis_flush()
    assert remembered_user_id("zp", "secret") == user_id


def test_a_pair_forgotten_in_another_process_is_refused_once_told(shared):
    notices.heard()
    confirmed("zp")
    # The other process forgets it (its password changed there): Redis drops it, and the notice comes.
    redis_flush()
    credentials.forgotten_elsewhere("zp")
    assert remembered_user_id("zp", "secret") is None


def test_forgetting_a_pair_and_a_wrong_password_are_told_to_every_process(shared, monkeypatch):
    from django_eventstream import eventstream

    # Events through the tests' Redis, as with REDIS_URL (the publication's client is the library's).
    monkeypatch.setattr(eventstream, "redis_client", redis.Redis.from_url(REDIS_TEST_URL))
    listener = redis.Redis.from_url(REDIS_TEST_URL).pubsub(ignore_subscribe_messages=True)
    listener.subscribe(publication.redis_channel())
    assert listener.get_message(timeout=5) is None  # the confirmation, skipped
    notices.send_with(publication.tell_processes)
    try:
        credentials.forget("zp")
        limits.login_failed("bo")
    finally:
        notices.send_with(None)
    try:
        told = [publication.unpack(listener.get_message(timeout=5)["data"]) for _ in range(2)]
    finally:
        listener.close()
    window = int(MIDDAY.timestamp()) // limits.WINDOW
    assert [events[0][:3] for events in told] == [
        ("notice:credentials-forget", publication.EVENT_TYPE, "zp"),
        ("notice:login-failed", publication.EVENT_TYPE, f"{window} {limits._digest('bo')}"),
    ]


def test_what_is_no_notice_is_left_to_the_streams_or_dropped():
    assert notices.deliver("game-abc", "1 0") is False  # a match's update
    assert notices.deliver(1, "x") is False  # no channel at all: dropped by the listener, which goes on
    assert notices.deliver("notice:credentials-forget", 7) is True  # a notice's channel with no text: dropped
    assert notices.deliver("notice:of-no-kind", "x") is True


def test_a_late_notice_of_an_earlier_minute_moves_no_nick_back(shared):
    notices.heard()
    confirmed("ana")
    window = int(MIDDAY.timestamp()) // limits.WINDOW
    limits.failed_elsewhere(f"{window} {limits._digest('ana')}")
    limits.failed_elsewhere(f"{window - 1} {limits._digest('ana')}")  # from a process whose minute had just ended
    assert "MGET" in commands_of(lambda: remembered_user_id("ana", "secret"))  # her count is still read


def test_a_process_that_stopped_hearing_asks_redis_until_it_confirms_again(shared):
    notices.heard()
    user_id = confirmed("zp")
    notices.deaf()  # its listener lost Redis: a forgetting may go unheard
    assert commands_of(lambda: remembered_user_id("zp", "secret"))[0] == "MGET"
    notices.heard()  # hearing again, in a new epoch: what it learned before is not believed yet
    # (and the minute's wrong passwords given before it heard again are read once: SMEMBERS)
    assert commands_of(lambda: remembered_user_id("zp", "secret")) == ["SMEMBERS", "MGET"]
    assert commands_of(lambda: remembered_user_id("zp", "secret")) == []  # confirmed in this epoch
    redis_flush()
    assert remembered_user_id("zp", "secret") == user_id


def test_a_pair_whose_nick_was_forgotten_while_it_was_checked_is_not_remembered(shared):
    notices.heard()
    user_register(nick="zp", password="secret")
    user_register(nick="ana", password="secret")
    credentials.local_pairs.clear()
    redis_flush()
    before = credentials.learning()  # then the accounts are read, and the passwords' hashes checked
    credentials.forgotten_elsewhere("zp")  # meanwhile zp's password changed in another process
    credentials.remember("zp", "secret", User.objects.get(username="zp").pk, before)
    credentials.remember("ana", "secret", User.objects.get(username="ana").pk, before)
    # zp's pair may be the old one: neither believed here nor written to Redis (the next call checks the hash again)
    assert remembered_user_id("zp", "secret") is None
    # ana's, whose nick was not forgotten, is remembered and believed
    assert commands_of(lambda: remembered_user_id("ana", "secret")) == []
    redis_flush()
    assert remembered_user_id("ana", "secret") == User.objects.get(username="ana").pk


def test_a_pair_read_from_redis_before_its_nick_was_forgotten_is_not_believed(shared):
    notices.heard()
    confirmed("zp")
    credentials.local_pairs.clear()
    before = credentials.learning()
    credentials.forgotten_elsewhere("zp")  # told between the read of Redis and the pair's keeping
    credentials.local_pairs.set("zp", credentials._fingerprint("zp", "secret"), 1, before)
    assert credentials.believed_user_id("zp", "secret") is None


def test_wrong_passwords_given_before_the_process_heard_are_read_from_redis_once(shared):
    confirmed("zp")
    confirmed("ana")
    limits.login_failed("zp")  # in this minute, while this process did not hear (or by another, before it did)
    notices.heard()
    # Hearing began in the middle of the minute: the nicks given a wrong password before are read once (and ana's pair,
    # confirmed before this process heard, once more).
    assert commands_of(lambda: remembered_user_id("ana", "secret")) == ["SMEMBERS", "MGET"]
    assert commands_of(lambda: remembered_user_id("ana", "secret")) == []
    # zp's count is read at every call (two of the three this minute): its right password is let in.
    assert commands_of(lambda: remembered_user_id("zp", "secret"))[0] == "MGET"
    # Told of ana's wrong passwords by another process: hers are read too, and once throttled she is refused.
    window = int(MIDDAY.timestamp()) // limits.WINDOW
    limits.failed_elsewhere(f"{window} {limits._digest('ana')}")
    assert commands_of(lambda: remembered_user_id("ana", "secret"))[0] == "MGET"
    for _ in range(3):
        limits.login_failed("ana")
    with pytest.raises(limits.Throttled):
        remembered_user_id("ana", "secret")
    # The next minute: heard all along, so nothing is read for a nick with no wrong password in it.
    shared.shift(limits.WINDOW)
    assert commands_of(lambda: remembered_user_id("ana", "secret")) == []
