"""Each rated match keeps every player's rating before and after it: shown on the game's page, given by its result
call (the Tâb page's end card), and rebuilt with everything else by a recomputation."""

import pytest
from django.test import Client

from games.models import Game, Seat
from games.services import games_recompute
from rankings.models import Rating

pytestmark = pytest.mark.django_db(transaction=True)


def finished_rated_game(api, alice, bob) -> Game:
    as_alice, as_bob = api.as_player("alice"), api.as_player("bob")
    game = as_alice("join", group=4, size=7)[1]["game"]
    as_bob("join", group=4, size=7)
    assert as_alice("roll", game=game) == (200, {})  # a game left before anybody acted counts for no one
    assert as_alice("leave", game=game) == (200, {})
    return Game.objects.get(public_id=game)


def test_a_rated_match_keeps_each_player_s_rating_before_and_after(api, alice, bob):
    game = finished_rated_game(api, alice, bob)
    seats = {seat.user.username: seat for seat in Seat.objects.filter(game=game).select_related("user")}
    ratings = {rating.player.username: rating.rating for rating in Rating.objects.select_related("player")}
    for nick in ("alice", "bob"):
        assert seats[nick].rating_before == 1500 and seats[nick].rating_after == ratings[nick]
    assert ratings["bob"] > 1500 > ratings["alice"]

    response = Client().get(f"/games/{game.public_id}/result")
    assert response.status_code == 200
    result = response.json()
    assert (result["status"], result["winner"], result["ending"]) == ("finished", "bob", game.ending)
    assert [(seat["nick"], seat["rank"], seat["rating_before"]) for seat in result["seats"]] == [
        ("alice", 2, 1500),
        ("bob", 1, 1500),
    ]
    assert [seat["rating_after"] for seat in result["seats"]] == [round(ratings["alice"]), round(ratings["bob"])]
    gain = round(ratings["bob"]) - 1500
    page = Client().get(f"/games/{game.public_id}/").content.decode()
    assert f"bob 1500 → {round(ratings['bob'])} (+{gain})" in page
    assert f"alice 1500 → {round(ratings['alice'])} (−{1500 - round(ratings['alice'])})" in page
    assert Client().get("/games/nope/result").status_code == 404


def test_a_recomputation_rebuilds_the_rating_changes(api, alice, bob):
    game = finished_rated_game(api, alice, bob)
    kept = list(Seat.objects.filter(game=game).order_by("index").values_list("rating_before", "rating_after"))
    Seat.objects.update(rating_before=None, rating_after=7.0)
    games_recompute()
    assert list(Seat.objects.filter(game=game).order_by("index").values_list("rating_before", "rating_after")) == kept
    # An unrated match has none: a game against nobody, cancelled while waiting.
    waiting = api.as_player("alice")("join", group=9, size=9)[1]["game"]
    api.as_player("alice")("leave", game=waiting)
    assert list(Seat.objects.filter(game__public_id=waiting).values_list("rating_before", "rating_after")) == [
        (None, None)
    ]
