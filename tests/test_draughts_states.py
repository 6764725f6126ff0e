"""What GET_STATE reads of a room, kept in memory (protocols/draughts/states.py): a GET_STATE answered from memory is
always the room as the database has it at that moment, whatever changed the room or its game, its clock read live;
a read made while a change committed is not kept; without a single server process nothing is kept."""

import threading
from datetime import timedelta

import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from games import publication
from games.kept import LIFETIME, Kept
from games.models import Game
from games.services import game_expire_due, outage_bridge
from protocols.draughts import presence, server, states
from protocols.draughts.models import Room
from protocols.draughts.services import (
    Holder,
    room_close,
    room_create,
    room_draw_cancel,
    room_draw_request,
    room_join,
    room_leave,
    room_move,
    room_read,
    room_release,
    room_renew,
    room_view,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def kept(monkeypatch):
    """This process's kept reads, starting empty (the database of each test starts empty too)."""
    states.install()
    fresh = Kept(keys=states.ROOMS)
    monkeypatch.setattr(states, "kept", fresh)
    monkeypatch.setattr(states, "renewed_until", None)
    return fresh


def state(room_id):
    return async_to_sync(server.room_state)(room_id)


def from_memory(kept: Kept, room_id):
    """GET_STATE twice: the second is answered from memory, with no query, and is the room as the database has it at
    that moment."""
    state(room_id)
    assert kept.answer(states.channel(room_id)) is not None
    with time_machine.travel(timezone.now(), tick=False), CaptureQueriesContext(connection) as queries:
        view = state(room_id)
        assert len(queries) == 0
        assert view == room_view(room_id=room_id)
        # Who is online, from the row itself.
        now, room = timezone.now(), Room.objects.get(pk=room_id)
        assert view.online == (presence.online(room, "white", now), presence.online(room, "black", now))
    return view


def started(**options):
    """A room in play: (room, white's Seated, black's Seated, white's holder, black's holder)."""
    first, second = Holder.new(presence.PROCESS), Holder.new(presence.PROCESS)
    room, creator = room_create(holder=first, colour="w", **options)
    joiner = room_join(room_id=room.pk, key=room.black_key, holder=second)
    return room, creator, joiner, first, second


def test_every_change_of_a_room_or_its_game_is_seen_by_the_next_get_state(kept):
    with time_machine.travel(timezone.now(), tick=False) as clock:
        room, white, black, white_holder, black_holder = started()
        before = from_memory(kept, room.pk)
        assert before.state == "PLAYING" and before.online == (True, True)

        room_move(seated=white, squares=["c3", "d4"])  # the game's change
        moved = from_memory(kept, room.pk)
        assert moved.board != before.board and moved.turn == "b"

        room_draw_request(seated=black)
        assert from_memory(kept, room.pk).wants_draw == (False, True)
        room_draw_cancel(seated=black)
        assert from_memory(kept, room.pk).wants_draw == (False, False)

        # Who holds a colour: a connection gone, one back, one leaving; a page's renewal.
        room_release(seated=black, holder=black_holder)
        assert from_memory(kept, room.pk).online == (True, False)
        black = room_join(room_id=room.pk, key=room.black_key, holder=black_holder)
        assert from_memory(kept, room.pk).online == (True, True)
        room_leave(seated=black, holder=black_holder)
        assert from_memory(kept, room.pk).online == (True, False)
        page = Holder.new()
        black = room_join(room_id=room.pk, key=room.black_key, holder=page)
        from_memory(kept, room.pk)
        clock.shift(presence.HOLD_SECONDS - 1)
        assert room_renew(seated=black, holder=page)
        clock.shift(2)
        assert from_memory(kept, room.pk).online == (False, True)  # white's connection renewed nothing meanwhile

        # The renewal of this process's holds, all at once: the reads kept stay, each hold of the process's counting
        # until the renewal's time, as the database has it.
        presence.holds_renew()
        assert kept.answer(states.channel(room.pk)) is not None
        assert from_memory(kept, room.pk).online == (True, True)
        clock.shift(presence.HOLD_SECONDS + 1)
        assert from_memory(kept, room.pk).online == (False, False)
        presence.holds_renew()
        assert from_memory(kept, room.pk).online == (True, False)  # the page's hold is not the process's

        room_close(room_id=room.pk)
        closed = from_memory(kept, room.pk)
        assert closed.state == "DRAW" and closed.online == (False, False)


def test_a_kept_read_runs_its_clock_live_and_a_clock_run_out_ends_the_game(kept, settings):
    with time_machine.travel(timezone.now(), tick=False) as clock:
        room, *_ = started()
        first = from_memory(kept, room.pk)
        clock.shift(1.5)
        later = from_memory(kept, room.pk)
        assert later.times == (first.times[0] - 1500, first.times[1])

        clock.shift(settings.DRAUGHTS_CLOCK_MS / 1000)
        # Run out: no longer answered from memory, the game ended by the read itself, before the sweeper.
        ended = state(room.pk)
        assert ended.state == "BLACK_WON" and ended.times[0] == 0
        assert Game.objects.get(pk=room.game_id).status == Game.Status.FINISHED
        assert from_memory(kept, room.pk) == ended


def test_clocks_stood_still_through_an_outage_are_seen_at_once(kept):
    with time_machine.travel(timezone.now(), tick=False) as clock:
        room, *_ = started()
        assert outage_bridge() is None  # the first sweep: a mark
        before = from_memory(kept, room.pk)
        clock.shift(5)  # no sweep for 5 s: the clocks of whole games stand still
        assert outage_bridge() == timedelta(seconds=5)
        assert kept.answer(states.channel(room.pk)) is None
        assert from_memory(kept, room.pk).times == before.times


def test_a_moves_read_lasts_no_longer_than_the_holds_it_took(monkeypatch, clock):
    kept = Kept(clock)
    monkeypatch.setattr(states, "kept", kept)
    room, white, black, *_ = started()
    key = states.channel(room.pk)
    state(room.pk)
    clock.now += LIFETIME * 0.75
    room_move(seated=white, squares=["c3", "d4"])
    assert kept.answer(key) == room_read(room_id=room.pk)
    clock.now += LIFETIME * 0.5
    assert kept.answer(key) is None  # the holds were read a lifetime ago
    state(room.pk)
    clock.now += LIFETIME * 0.5
    room_move(seated=black, squares=["b6", "a5"])
    assert kept.answer(key) == room_read(room_id=room.pk)


def test_a_move_keeps_nothing_when_another_thread_changed_its_room_meanwhile(kept):
    room, white, *_ = started()
    key = states.channel(room.pk)
    from_memory(kept, room.pk)
    with transaction.atomic():
        room_move(seated=white, squares=["c3", "d4"])
        other = threading.Thread(target=kept.changed, args=[key])
        other.start()
        other.join()
    assert kept.answer(key) is None


def test_the_sweepers_end_of_a_game_is_seen_at_once(kept):
    room, *_ = started()
    from_memory(kept, room.pk)
    Game.objects.filter(pk=room.game_id).update(deadline=timezone.now() - timedelta(seconds=1))
    assert game_expire_due() == 1
    assert kept.answer(states.channel(room.pk)) is None
    assert from_memory(kept, room.pk).state == "BLACK_WON"


def test_a_move_keeps_what_the_next_get_state_reads_unless_its_room_changed_meanwhile(kept):
    room, white, black, _, black_holder = started()
    key = states.channel(room.pk)
    room_move(seated=white, squares=["c3", "d4"])
    assert kept.answer(key) is None  # nothing was kept of the room before: its holds are not known
    from_memory(kept, room.pk)
    room_move(seated=black, squares=["b6", "a5"])
    assert kept.answer(key) == room_read(room_id=room.pk)
    assert from_memory(kept, room.pk).turn == "w"

    # The room changed by the same thread, in the same transaction, before the move (a batch of the database thread):
    # the move's holds would be those of before; nothing is kept.
    with transaction.atomic():
        room_release(seated=black, holder=black_holder)
        room_move(seated=white, squares=["e3", "f4"])
    assert kept.answer(key) is None
    assert from_memory(kept, room.pk).online == (True, False)

    # A move undone with its transaction keeps nothing either.
    with pytest.raises(RuntimeError), transaction.atomic():
        room_move(seated=black, squares=["a5", "b4"])
        raise RuntimeError("undone")
    assert kept.answer(key) is not None and from_memory(kept, room.pk).turn == "b"


def test_a_change_of_another_room_leaves_the_read_kept(kept):
    room, white, *_ = started()
    other, other_white, *_ = started()
    from_memory(kept, room.pk)
    room_move(seated=other_white, squares=["c3", "d4"])
    room_leave(seated=other_white, holder=Holder("nobody"))  # not its holder: nothing changes
    assert kept.answer(states.channel(room.pk)) is not None


def test_a_read_made_while_a_change_committed_is_not_kept(kept):
    room, white, *_ = started()
    channels = (states.channel(room.pk), publication.channel_name(white.game))
    since = kept.since()
    stale = room_read(room_id=room.pk)
    room_move(seated=white, squares=["c3", "d4"])  # committed after the read began
    assert not kept.keep(states.channel(room.pk), since, channels, stale)

    since = kept.since()
    stale = room_read(room_id=room.pk)
    Room.objects.filter(pk=room.pk).update(white_holder="")  # no service's change: not heard of…
    presence.holds_release(presence.PROCESS)  # …but this is, for every room
    assert not kept.keep(states.channel(room.pk), since, channels, stale)
    assert state(room.pk).online == (False, False)


def test_with_several_server_processes_nothing_is_kept(monkeypatch):
    monkeypatch.setattr(states, "kept", None)
    with override_settings(EVENTSTREAM_REDIS={"host": "127.0.0.1", "port": 6379, "db": 0}):
        states.install()
        assert states.kept is None
        room, *_ = started()
        with time_machine.travel(timezone.now(), tick=False):
            assert state(room.pk) == room_view(room_id=room.pk)
    states.install()
    assert states.kept is not None
    assert publication._observers.count(states._changed) == 1
