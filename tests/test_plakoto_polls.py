"""Plakoto's status answers kept in memory (protocols/plakoto/polls.py): a poll answered from memory is always the
table's status as the database has it, whoever changed the table or its game; an answer read while a change committed
is not kept; without a single server process nothing is kept."""

import json
import threading
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

import games.kept
from games import publication
from games.models import Game
from games.services import game_end, game_expire_due
from protocols.plakoto import polls, services, views

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def kept(monkeypatch, clock):
    """This process's kept answers, starting empty (the database of each test starts empty too)."""
    polls.install()
    fresh = polls.Polls(clock)
    monkeypatch.setattr(polls, "polls", fresh)
    return fresh


def poll(kept: polls.Polls, name: str) -> dict:
    status, text = async_to_sync(views._status_polled)(kept, name)
    assert status == 200
    (answer,) = json.loads(text)
    return answer


def read(name: str) -> dict:
    """The table's status read from the database, as `GET status/` answers it."""
    return services.status(services.table_view(name))


def polled_from_memory(kept: polls.Polls, name: str) -> dict:
    """Poll twice: the second answer is the kept one, and it is the database's."""
    poll(kept, name)
    assert kept.answer(name) is not None
    answer = poll(kept, name)
    assert answer == read(name)
    return answer


def a_move(name: str) -> tuple[int, int, int]:
    """A legal move of the player on turn: (x, y, destination)."""
    state = services.table_view(name).state
    x, destination = sorted(state.plan())[0]
    return x, len(state.points[x]), destination


def test_every_change_of_a_table_or_its_game_is_seen_by_the_next_poll(kept):
    assert polled_from_memory(kept, "t")["status"] == "not active"
    white, _ = services.seat_take(name="t", colour="W", username="ann")
    assert polled_from_memory(kept, "t")["status"] == "initialized"
    services.seat_take(name="t", colour="B", username="ben")
    before = polled_from_memory(kept, "t")
    assert before["status"] == "started" and before["p_turn"] == "W"

    # A move changes the game (its channel), not the table's own.
    x, y, destination = a_move("t")
    services.piece_move(name="t", token=white, x=x, y=y, destination=destination)
    after = polled_from_memory(kept, "t")
    assert after != before

    # The sweeper's timeout, and an administrator's end.
    public_id = services.table_view("t").game.public_id
    Game.objects.filter(public_id=public_id).update(deadline=timezone.now() - timedelta(seconds=1))
    kept_before_timeout = kept.answer("t")
    assert kept_before_timeout is not None  # a write no service made is not heard of (until LIFETIME)…
    assert game_expire_due() == 1  # …but the sweeper's is
    assert kept.answer("t") is None
    assert polled_from_memory(kept, "t")["status"] == "aborded"

    services.table_reset(name="t", token=None, staff=True)
    assert polled_from_memory(kept, "t")["status"] == "not active"

    services.seat_take(name="t", colour="W", username="ann")
    services.seat_take(name="t", colour="B", username="ben")
    assert polled_from_memory(kept, "t")["status"] == "started"
    game_end(public_id=services.table_view("t").game.public_id, opponent_wins=False)
    assert polled_from_memory(kept, "t")["status"] == "ended"


def test_a_change_of_another_table_leaves_the_answer_kept(kept):
    services.seat_take(name="t", colour="W", username="ann")
    polled_from_memory(kept, "t")
    services.seat_take(name="u", colour="W", username="ann")
    assert kept.answer("t") is not None


def test_an_answer_read_while_a_change_committed_is_not_kept(kept):
    services.seat_take(name="t", colour="W", username="ann")
    since = kept.since()
    stale = json.dumps([read("t")]).encode()
    services.seat_take(name="t", colour="B", username="ben")  # committed after the read began
    channels = [services.table_channel("t")]
    assert not kept.keep("t", since, channels, stale)
    assert kept.answer("t") is None
    assert poll(kept, "t")["status"] == "started"

    # A change of its game, likewise.
    game = publication.channel_name(services.table_view("t").game.public_id)
    since = kept.since()
    stale = json.dumps([read("t")]).encode()
    game_end(public_id=services.table_view("t").game.public_id, opponent_wins=False)
    assert not kept.keep("t", since, [services.table_channel("t"), game], stale)
    assert poll(kept, "t")["status"] == "ended"


def test_a_move_keeps_the_status_it_leaves(kept):
    white, _ = services.seat_take(name="t", colour="W", username="ann")
    services.seat_take(name="t", colour="B", username="ben")
    assert kept.answer("t") is None
    x, y, destination = a_move("t")
    services.piece_move(name="t", token=white, x=x, y=y, destination=destination)
    assert kept.answer("t") == services.status_text(read("t"))


def test_a_changes_answer_is_kept_unless_another_thread_changed_the_table_since(kept):
    channels = [services.table_channel("t")]
    since = kept.since()
    with transaction.atomic():
        kept.keep_on_commit("t", since, channels, b"[1]")
        other = threading.Thread(target=kept.changed, args=channels)
        other.start()
        other.join()
    assert kept.answer("t") is None

    # Its own thread's changes are in it.
    since = kept.since()
    with transaction.atomic():
        publication.announce_on_commit(services.table_channel("t"))
        kept.keep_on_commit("t", since, channels, b"[2]")
    assert kept.answer("t") == b"[2]"

    # Nothing is kept of a change undone.
    with pytest.raises(RuntimeError), transaction.atomic():
        kept.keep_on_commit("u", kept.since(), [services.table_channel("u")], b"[3]")
        raise RuntimeError("undone")
    assert kept.answer("u") is None


def test_a_kept_answer_lasts_one_lifetime_at_most(kept, clock):
    polled_from_memory(kept, "t")
    clock.now += polls.LIFETIME / 2
    assert kept.answer("t") is not None
    clock.now += polls.LIFETIME
    assert kept.answer("t") is None


def test_what_is_kept_is_bounded(clock, monkeypatch):
    polls.install()
    kept = polls.Polls(clock, keys=3)
    monkeypatch.setattr(polls, "polls", kept)
    monkeypatch.setattr(games.kept, "CHANNELS", 5)
    for name in "abcd":
        poll(kept, name)
    assert [kept.answer(name) is not None for name in "abcd"] == [False, True, True, True]

    # A channel forgotten may have changed after any read begun before it was forgotten: such a read is not kept.
    since = kept.since()
    for index in range(6):
        kept.changed(f"elsewhere-{index}")
    assert not kept.keep("e", since, [services.table_channel("e")], b"[]")
    assert kept.keep("e", kept.since(), [services.table_channel("e")], b"[]")


def test_with_several_server_processes_nothing_is_kept(monkeypatch):
    monkeypatch.setattr(polls, "polls", None)
    with override_settings(EVENTSTREAM_REDIS={"host": "127.0.0.1", "port": 6379, "db": 0}):
        polls.install()
    assert polls.polls is None
    polls.install()
    assert polls.polls is not None
    # The observer is installed once, whatever the number of installs.
    assert publication._observers.count(polls._changed) == 1
