"""The draughts rooms' services (protocols/draughts/services.py) and what the platform keeps of them: who is in a
room and who holds a colour, when a room is deleted, draws and results, the admin."""

import socket
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from games.models import Game, GameEvent
from games.services import GameError, games_recompute
from protocols.draughts import presence
from protocols.draughts.models import Room
from protocols.draughts.services import (
    Holder,
    RoomNotFound,
    room_close,
    room_create,
    room_draw_cancel,
    room_draw_request,
    room_join,
    room_leave,
    room_move,
    room_release,
    room_renew,
    room_view,
)
from rankings.models import Ranking, Rating

pytestmark = pytest.mark.django_db


def line_holder() -> Holder:
    return Holder.new(presence.PROCESS)


def other_key(room: Room) -> object:
    return room.black_key if room.creator == "w" else room.white_key


def started():
    """Return a room in play with its two colours seated: (room, white, black, white's holder, black's holder)."""
    first, second = line_holder(), line_holder()
    room, creator = room_create(holder=first)
    joiner = room_join(room_id=room.pk, key=other_key(room), holder=second)
    if creator.colour == "w":
        return room, creator, joiner, first, second
    return room, joiner, creator, second, first


def test_a_room_waits_for_its_second_colour_then_plays():
    holder = line_holder()
    room, creator = room_create(holder=holder)
    view = room_view(room_id=room.pk)
    assert view.state == "WAITING" and view.times == (600000, 600000)
    assert view.online == ((True, False) if creator.colour == "w" else (False, True))
    assert Game.objects.get(pk=room.game_id).deadline is None  # a waiting room is never deleted by time
    room_join(room_id=room.pk, key=other_key(room), holder=line_holder())
    view = room_view(room_id=room.pk)
    assert view.state == "PLAYING" and view.online == (True, True) and view.turn == "w"


def test_the_creator_leaving_a_waiting_room_deletes_it():
    holder = line_holder()
    room, creator = room_create(holder=holder)
    room_leave(seated=creator, holder=holder)
    with pytest.raises(RoomNotFound):
        room_join(room_id=room.pk, key=other_key(room), holder=line_holder())
    assert Game.objects.get(pk=room.game_id).status == Game.Status.WAITING  # kept, unfinished


def test_a_room_is_deleted_when_its_last_colour_leaves_whatever_the_state():
    room, white, black, white_holder, black_holder = started()
    room_move(seated=white, squares=["c3", "d4"])
    room_leave(seated=white, holder=white_holder)
    # Back with the same UUID while the other is still in.
    white = room_join(room_id=room.pk, key=room.white_key, holder=white_holder)
    room_leave(seated=white, holder=white_holder)
    room_leave(seated=black, holder=black_holder)
    for key in (room.white_key, room.black_key):
        with pytest.raises(RoomNotFound):
            room_join(room_id=room.pk, key=key, holder=line_holder())
    game = Game.objects.get(pk=room.game_id)
    assert game.status == Game.Status.PLAYING  # left before its end: kept as unfinished


def test_leaving_frees_the_colour_and_keeps_the_room_while_the_other_is_in():
    room, white, black, white_holder, black_holder = started()
    room_leave(seated=white, holder=white_holder)
    row = Room.objects.get(pk=room.pk)
    assert (row.white_in, row.white_holder, row.white_process, row.white_held_until) == (False, "", "", None)
    assert row.black_in and row.black_holder == black_holder.token and row.black_held_until is not None
    assert row.deleted_at is None
    assert room_view(room_id=room.pk).online == (False, True)
    room_leave(seated=black, holder=black_holder)
    row = Room.objects.get(pk=room.pk)
    assert not row.black_in and row.black_holder == "" and row.deleted_at is not None


def test_a_held_colour_cannot_be_taken_until_its_hold_lapses():
    room, white, black, white_holder, _ = started()
    with pytest.raises(RoomNotFound):
        room_join(room_id=room.pk, key=room.white_key, holder=line_holder())
    # A connection that vanished without a word stops holding when its hold lapses.
    Room.objects.filter(pk=room.pk).update(white_held_until=timezone.now() - timedelta(seconds=1))
    assert room_view(room_id=room.pk).online == (False, True)
    room_join(room_id=room.pk, key=room.white_key, holder=line_holder())


def test_a_page_may_take_over_a_pages_hold_but_not_a_connections():
    page, other_page = Holder.new(), Holder.new()
    room, creator = room_create(holder=page)
    mine = room.white_key if creator.colour == "w" else room.black_key
    room_join(room_id=room.pk, key=mine, holder=other_page)
    assert not room_renew(seated=creator, holder=page) and room_renew(seated=creator, holder=other_page)
    # The page that lost the hold leaving changes nothing: the room stays, held by the other page.
    room_leave(seated=creator, holder=page)
    assert Room.objects.get(pk=room.pk).deleted_at is None
    second = room_join(room_id=room.pk, key=other_key(room), holder=line_holder())
    with pytest.raises(RoomNotFound):
        room_join(room_id=room.pk, key=other_key(room), holder=Holder.new())
    assert second.colour != creator.colour


def test_a_closed_page_or_a_stopping_server_frees_the_colour_without_leaving():
    room, white, _, white_holder, _ = started()
    room_release(seated=white, holder=white_holder)
    assert room_view(room_id=room.pk).online == (False, True)
    assert Room.objects.get(pk=room.pk).white_in
    room_join(room_id=room.pk, key=room.white_key, holder=line_holder())


def test_a_restarted_process_frees_the_colours_of_the_processes_gone():
    room, _, _, _, _ = started()
    # The holds of a process of this host that no longer runs (no process has this id), and of one that does.
    gone = f"{socket.gethostname()}:{2**22 + 7}:12345"
    Room.objects.filter(pk=room.pk).update(white_process=gone)
    assert presence.process_running(gone) is False and presence.process_running(presence.PROCESS) is True
    assert presence.process_running("elsewhere:1:1") is None
    assert presence.holds_of_the_departed() == 1
    assert room_view(room_id=room.pk).online == (False, True)


def test_draw_requests_stand_until_cancelled_and_both_end_the_game_drawn():
    room, white, black, _, _ = started()
    room_draw_request(seated=black)
    with pytest.raises(GameError):
        room_draw_request(seated=black)
    room_move(seated=white, squares=["c3", "d4"])
    assert room_view(room_id=room.pk).wants_draw == (False, True)  # a move does not withdraw it
    with pytest.raises(GameError):
        room_draw_cancel(seated=white)  # one cancels only one's own
    room_draw_cancel(seated=black)
    room_draw_request(seated=black)
    room_draw_request(seated=white)
    view = room_view(room_id=room.pk)
    assert view.state == "DRAW" and view.wants_draw == (True, True)
    game = Game.objects.get(pk=room.game_id)
    assert game.ending == Game.Ending.AGREED and game.winner is None
    assert list(game.seats.order_by("index").values_list("rank", flat=True)) == [1, 1]
    with pytest.raises(GameError):
        room_draw_cancel(seated=white)
    # The log proves the result; rooms count for no ranking.
    assert games_recompute()["corrected"] == 0
    assert not Ranking.objects.exists() and not Rating.objects.exists()
    kinds = list(GameEvent.objects.filter(game=game).values_list("kind", flat=True))
    assert kinds.count("draw-offer") == 3 and kinds.count("draw-cancel") == 1


def test_clocks_switch_at_each_move_and_read_live(settings):
    with time_machine.travel(datetime(2026, 5, 1, 12, tzinfo=UTC), tick=False) as clock:
        room, white, black, _, _ = started()
        clock.shift(timedelta(milliseconds=1500.4))
        room_move(seated=white, squares=["c3", "d4"])
        clock.shift(timedelta(milliseconds=500))
        # A fraction of a millisecond counts as a whole one.
        assert room_view(room_id=room.pk).times == (598_500, 599_500)
        # The stopped clocks are stored; the running one is read from the deadline.
        assert Game.objects.get(pk=room.game_id).clocks == [598_500, 600_000]
        clock.shift(timedelta(seconds=600))
        view = room_view(room_id=room.pk)
    assert view.state == "WHITE_WON" and view.times == (598_500, 0)
    game = Game.objects.get(pk=room.game_id)
    assert game.ending == Game.Ending.FLAG and game.clocks == [598_500, 0]
    # The seats keep their clocks' last readings with their ranks.
    assert list(game.seats.order_by("index").values_list("rank", "clock_ms")) == [(1, 598_500), (2, 0)]


@pytest.mark.django_db(transaction=True)
def test_a_room_against_the_computer_starts_at_once():
    from games.bots import runner

    holder = Holder.new()
    room, me = room_create(holder=holder, computer_level=1, colour="b")
    assert runner.settle(60)
    view = room_view(room_id=room.pk)
    # The computer played white's first move.
    assert view.state == "PLAYING" and view.turn == "b" and me.colour == "b"


def test_the_admin_lists_filters_and_closes_rooms(admin_client):
    room, white, _, _, _ = started()
    waiting, _ = room_create(holder=line_holder())
    page = admin_client.get("/admin/draughts/room/?deleted=no&game__status=playing")
    assert page.status_code == 200 and str(room.pk) in page.content.decode()
    assert str(waiting.pk) not in page.content.decode()
    response = admin_client.post(
        "/admin/draughts/room/", {"action": "close", "_selected_action": [str(room.pk), str(waiting.pk)]}
    )
    assert response.status_code == 302
    assert Room.objects.filter(deleted_at=None).count() == 0
    game = Game.objects.get(pk=room.game_id)
    assert game.status == Game.Status.FINISHED and game.ending == Game.Ending.ENDED and game.winner is None
    assert room_view(room_id=room.pk).state == "DRAW"
    with pytest.raises(RoomNotFound):
        room_close(room_id=room.pk)
    assert admin_client.get(f"/admin/draughts/room/{room.pk}/change/").status_code == 200
