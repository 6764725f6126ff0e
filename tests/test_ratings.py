"""Ratings: Glicko-2 (the pure module against Glickman's worked example) in games for two, per Tâb board size;
Plackett-Luce (openskill) in games for more; both rebuilt exactly from the matches."""

import random

import pytest

from games.services import game_end, game_leave
from rankings import glicko2
from rankings.models import Ranking, Rating
from rankings.selectors import ranking_top
from rankings.services import PLACKETT_LUCE, Result, rankings_rebuild, result_record

from .conftest import first_throw, play_to_the_end
from .factories import UserFactory


def test_glickmans_worked_example():
    # "Example of the Glicko-2 system" (Glickman, 2013): one rating period of three games, tau 0.5.
    player = glicko2.Glicko(1500, 200, 0.06)
    opponents = [(glicko2.Glicko(1400, 30), 1), (glicko2.Glicko(1550, 100), 0), (glicko2.Glicko(1700, 300), 0)]
    after = glicko2.rate(player, opponents, tau=0.5)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_a_period_without_games_only_widens_the_deviation():
    after = glicko2.rate(glicko2.Glicko(1500, 200, 0.06), [])
    assert after.rating == 1500
    assert after.deviation == pytest.approx(200.2714, abs=0.0001)  # the example's step 6: sqrt(φ² + σ²)
    assert glicko2.rate(glicko2.Glicko(), []).deviation == glicko2.DEFAULT_DEVIATION


def test_one_game_moves_both_players_symmetrically():
    winner, loser = glicko2.rate_game(glicko2.Glicko(), glicko2.Glicko(), 1.0)
    assert winner.rating > 1500 > loser.rating
    assert winner.rating - 1500 == pytest.approx(1500 - loser.rating)
    assert winner.deviation == pytest.approx(loser.deviation) and winner.deviation < glicko2.DEFAULT_DEVIATION


def ratings() -> dict[str, tuple[float, float, float, int, int]]:
    return {
        rating.player.username: (rating.rating, rating.deviation, rating.volatility, rating.games, rating.victories)
        for rating in Rating.objects.select_related("player")
    }


@pytest.mark.django_db
def test_a_game_won_on_the_board_updates_both_ratings(api, alice, bob, start_game):
    game = start_game(size=7)
    winner = play_to_the_end(api, game, random.Random(1))["winner"]
    loser = "bob" if winner == "alice" else "alice"
    won, lost = glicko2.rate_game(glicko2.Glicko(), glicko2.Glicko(), 1.0)
    assert ratings() == {
        winner: (pytest.approx(won.rating), pytest.approx(won.deviation), pytest.approx(won.volatility), 1, 1),
        loser: (pytest.approx(lost.rating), pytest.approx(lost.deviation), pytest.approx(lost.volatility), 1, 0),
    }
    assert Rating.objects.values_list("kind", "variant").get(player__username=winner) == ("tab", "7")


@pytest.mark.django_db
def test_ratings_are_per_board_size_across_groups(api, alice, bob, start_game):
    for group, size, leaver in ((1, 7, bob), (2, 7, bob), (1, 9, alice)):
        game = start_game(group=group, size=size)
        first_throw(game)
        game_leave(public_id=game, user_id=leaver.pk)
    by_size = {(r.player.username, r.variant): (r.games, r.victories) for r in Rating.objects.select_related("player")}
    assert by_size == {("alice", "7"): (2, 2), ("bob", "7"): (2, 0), ("alice", "9"): (1, 0), ("bob", "9"): (1, 1)}
    alice_7 = Rating.objects.get(player=alice, kind="tab", variant="7")
    once, _ = glicko2.rate_game(glicko2.Glicko(), glicko2.Glicko(), 1.0)
    assert alice_7.rating > once.rating  # the second victory counted on top of the first


@pytest.mark.django_db
def test_the_ranking_function_is_unchanged_by_ratings(api, alice, bob, start_game):
    game = start_game(group=3, size=7)
    first_throw(game)
    game_leave(public_id=game, user_id=bob.pk)
    assert ranking_top(kind="tab", variant="7", pool="3") == [
        {"nick": "alice", "victories": 1, "games": 1},
        {"nick": "bob", "victories": 0, "games": 1},
    ]
    top = ranking_top(kind="tab", variant="7", pool="3")
    assert api("ranking", {"group": 3, "size": 7}) == (200, {"ranking": top})


@pytest.mark.django_db
def test_a_game_with_no_result_counts_for_no_one(alice, bob, start_game):
    game_end(public_id=start_game(), opponent_wins=False)
    assert not Ranking.objects.exists()
    assert not Rating.objects.exists()


def multiplayer(ranks: dict, pool: str = "") -> Result:
    return Result(kind="fish", variant="", pool=pool, ranks=ranks, multiplayer=True)


@pytest.mark.django_db
def test_a_match_of_four_rates_each_player_by_place_with_plackett_luce(alice, bob, charlie):
    dave = UserFactory(username="dave")
    result_record(multiplayer({alice.pk: 1, bob.pk: 2, charlie.pk: 2, dave.pk: 4}, pool="7"))
    rows = {r.player.username: r for r in Rating.objects.select_related("player")}
    assert {nick: (r.kind, r.variant, r.games, r.victories) for nick, r in rows.items()} == {
        "alice": ("fish", "", 1, 1),
        "bob": ("fish", "", 1, 0),
        "charlie": ("fish", "", 1, 0),
        "dave": ("fish", "", 1, 0),
    }
    # The same as the model itself gives, on Glicko's scale: first above, a shared second alike, last below.
    model = PLACKETT_LUCE
    expected = model.rate([[model.rating()] for _ in range(4)], ranks=[1.0, 2.0, 2.0, 4.0])
    for nick, (new,) in zip(("alice", "bob", "charlie", "dave"), expected, strict=True):
        assert (rows[nick].rating, rows[nick].deviation) == (pytest.approx(new.mu), pytest.approx(new.sigma))
    assert rows["alice"].rating > rows["bob"].rating > rows["dave"].rating
    assert rows["bob"].rating == pytest.approx(rows["charlie"].rating)
    assert ranking_top(kind="fish", variant="", pool="7")[0] == {"nick": "alice", "victories": 1, "games": 1}


@pytest.mark.django_db
def test_a_match_everyone_shares_first_place_in_is_nobodys_victory(alice, bob, charlie):
    result_record(multiplayer({alice.pk: 1, bob.pk: 1, charlie.pk: 1}))
    assert set(Ranking.objects.values_list("victories", "games")) == {(0, 1)}
    assert {round(r.rating, 6) for r in Rating.objects.all()} == {PLACKETT_LUCE.mu}


@pytest.mark.django_db
def test_rebuilding_gives_the_ratings_the_matches_gave_as_they_ended(alice, bob, charlie):
    matches = [
        multiplayer({alice.pk: 1, bob.pk: 2, charlie.pk: 3}),
        multiplayer({alice.pk: 3, bob.pk: 1, charlie.pk: 2}),
        Result(kind="tab", variant="7", pool="1", ranks={alice.pk: 2, bob.pk: 1}, multiplayer=False),
    ]
    for match in matches:
        result_record(match)

    def table():
        return sorted(
            (kind, variant, nick, round(rating, 6), round(deviation, 6), games, victories)
            for kind, variant, nick, rating, deviation, games, victories in Rating.objects.values_list(
                "kind", "variant", "player__username", "rating", "deviation", "games", "victories"
            )
        )

    before = table()
    rankings_rebuild(matches)
    assert table() == before
    assert len(before) == 3 + 2  # each game and variant rated apart
