"""The platform is any game's: an engine registered beside Tâb (tests/sample_game.py, for 2 to 4 seats) is joined,
played, timed out, ended with a rank per seat, ranked and rated (Plackett-Luce, as it seats more than two),
recomputed from its log, listed in the lobby, /games/ and the admin, and shown on the plain game page, with no
change to the platform."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from games.models import Game
from games.rules import ENGINES
from games.services import GameError, game_act, game_expire_due, games_recompute, match_join, seat_on_turn
from rankings.models import Ranking, Rating

from .factories import UserFactory
from .sample_game import ENGINE

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def takeaway(monkeypatch):
    monkeypatch.setitem(ENGINES, ENGINE.kind, ENGINE)


@pytest.fixture
def players():
    return [UserFactory(username=nick) for nick in ("ann", "ben", "cat")]


def join_all(players, pile: int = 7) -> Game:
    games = [
        match_join(user_id=p.pk, kind="takeaway", options={"pile": pile}, pool="lab", seat_count=3) for p in players
    ]
    assert len({game.public_id for game in games}) == 1
    return Game.objects.get(public_id=games[0].public_id)


def test_three_players_fill_a_match_which_starts_with_the_last_seat(players):
    first = match_join(user_id=players[0].pk, kind="takeaway", options={"pile": 7}, pool="lab", seat_count=3)
    again = match_join(user_id=players[0].pk, kind="takeaway", options={"pile": 7}, pool="lab", seat_count=3)
    assert first.public_id == again.public_id and again.status == Game.Status.WAITING
    match_join(user_id=players[1].pk, kind="takeaway", options={"pile": 7}, pool="lab", seat_count=3)
    assert Game.objects.get(pk=first.pk).status == Game.Status.WAITING
    # Another pool, or other options, is another match.
    other = match_join(user_id=players[2].pk, kind="takeaway", options={"pile": 9}, pool="lab", seat_count=3)
    assert other.public_id != first.public_id
    game = join_all(players)
    assert game.pk == first.pk and game.status == Game.Status.PLAYING
    assert game.seat_user_ids == [p.pk for p in players]
    assert (game.kind, game.options, game.variant, game.pool, game.seat_count) == (
        "takeaway",
        {"pile": 7},
        "7",
        "lab",
        3,
    )
    assert game.state == {"left": 7, "taken": [0, 0, 0], "turn": 0}


def test_a_match_played_to_its_end_ranks_every_seat_and_rates_them_together(players):
    game = join_all(players)
    with pytest.raises(GameError, match="Not your turn"):
        game_act(public_id=game.public_id, user_id=players[1].pk, action=1)
    with pytest.raises(GameError, match="Cannot take 3"):
        game_act(public_id=game.public_id, user_id=players[0].pk, action=3)
    # ann 2+1, ben 1+1, cat 2: ann first, ben and cat share second.
    for seat, tokens in ((0, 2), (1, 1), (2, 2), (0, 1), (1, 1)):
        game.refresh_from_db()
        assert seat_on_turn(game) == (seat, players[seat].pk)
        game_act(public_id=game.public_id, user_id=players[seat].pk, action=tokens)
    game = Game.objects.get(pk=game.pk)
    assert (game.status, game.ending, game.winner_id) == ("finished", "score", players[0].pk)
    assert list(game.seats.order_by("index").values_list("rank", flat=True)) == [1, 2, 2]
    assert sorted(Ranking.objects.values_list("kind", "pool", "player__username", "victories", "games")) == [
        ("takeaway", "lab", "ann", 1, 1),
        ("takeaway", "lab", "ben", 0, 1),
        ("takeaway", "lab", "cat", 0, 1),
    ]
    ratings = dict(Rating.objects.values_list("player__username", "rating"))
    assert ratings["ann"] > 1500 > ratings["ben"] == pytest.approx(ratings["cat"])

    before = sorted(Rating.objects.values_list("player__username", "rating", "deviation"))
    Game.objects.filter(pk=game.pk).update(winner=None)
    game.seats.update(rank=None)
    Rating.objects.all().delete()
    assert games_recompute() == {"games": 1, "corrected": 1}
    assert list(game.seats.order_by("index").values_list("rank", flat=True)) == [1, 2, 2]
    after = sorted(Rating.objects.values_list("player__username", "rating", "deviation"))
    assert [(n, pytest.approx(r), pytest.approx(d)) for n, r, d in before] == after


def test_the_seat_on_turn_that_runs_out_of_time_ranks_last(players):
    game = join_all(players)
    game_act(public_id=game.public_id, user_id=players[0].pk, action=1)
    assert game_expire_due(now=timezone.now() + timedelta(seconds=settings.TAB_TURN_TIMEOUT + 1)) == 1
    game = Game.objects.get(pk=game.pk)
    assert (game.status, game.ending, game.winner_id) == ("finished", "timeout", None)
    assert list(game.seats.order_by("index").values_list("rank", flat=True)) == [1, 2, 1]
    assert dict(Ranking.objects.values_list("player__username", "victories")) == {"ann": 1, "ben": 0, "cat": 1}


def test_the_pages_and_the_admin_list_it(client, admin_client, players):
    game = join_all(players)
    for seat, tokens in ((0, 2), (1, 2), (2, 2), (0, 1)):
        game_act(public_id=game.public_id, user_id=players[seat].pk, action=tokens)
    lobby = client.get("/").content.decode()
    assert "Take-away" in lobby and 'href="/play/tab/"' in lobby
    # No page of its own yet: offered without a link to play it in the browser, and its address is a 404 page.
    assert 'href="/play/takeaway/"' not in lobby
    assert client.get("/play/takeaway/").status_code == 404
    listed = client.get("/games/").content.decode()
    assert f"/games/{game.public_id}/" in listed and "ann" in listed and "cat" in listed
    page = client.get(f"/games/{game.public_id}/").content.decode()
    assert "Take-away" in page and "took tokens" in page and "ann won" in page
    assert client.get("/rankings/").status_code == 200
    table = client.get("/rankings/takeaway/", {"variant": "7", "pool": "lab"}).content.decode()
    assert "ann" in table and "ben" in table
    assert "ann" in client.get("/players/ann/").content.decode()
    assert game.public_id in admin_client.get("/admin/games/game/", {"kind": "takeaway"}).content.decode()
    assert "took tokens" in admin_client.get(f"/admin/games/game/{game.pk}/change/").content.decode()
