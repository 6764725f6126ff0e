"""Rankings of games that score their results (Plakoto: a single win 1 point, a double 2), through the services
that end a game and the recomputation from the logs, and the ranking table that orders by points."""

import random

import pytest

from games import services
from games.models import Game
from games.rules import find_engine
from games.rules.plakoto import BLACK, WHITE, Move
from rankings.models import Ranking

from .factories import UserFactory
from .test_rules_plakoto import position

pytestmark = pytest.mark.django_db
ENGINE = find_engine("plakoto")


def ranked_game(white, black) -> Game:
    """A ranked Plakoto match between two accounts, started."""
    game = services.match_open(kind="plakoto", options={}, pool="web", user_ids=[white.pk, black.pk])
    return services.match_start(public_id=game.public_id, user_id=black.pk)


def table() -> dict[str, tuple[int, int, int]]:
    rows = Ranking.objects.values_list("player__username", "points", "victories", "games")
    return {nick: tuple(row) for nick, *row in rows}


def test_a_double_win_scores_two_points_and_a_single_one(client):
    ann, ben = UserFactory(username="ann"), UserFactory(username="ben")
    # Ben (black) bears off his last piece while all of Ann's are still on the board: a double.
    game = ranked_game(ann, ben)
    double = position({24: "B", 20: "W" * 15}, turn=BLACK, off={BLACK: 14}, dice=(1, 2))
    Game.objects.filter(pk=game.pk).update(state=ENGINE.state_to_json(double))
    services.game_act(public_id=game.public_id, user_id=ben.pk, action=Move(24, 25))
    # Then Ann wins a single: she bears off her last piece after Ben bore off some of his.
    game = ranked_game(ann, ben)
    single = position({1: "W", 5: "B"}, turn=WHITE, off={WHITE: 14, BLACK: 14}, dice=(1, 2))
    Game.objects.filter(pk=game.pk).update(state=ENGINE.state_to_json(single))
    services.game_act(public_id=game.public_id, user_id=ann.pk, action=Move(1, 0))
    assert table() == {"ben": (2, 1, 2), "ann": (1, 1, 2)}
    # The table ranks by points unless told otherwise, and shows them; so does its CSV.
    page = client.get("/rankings/plakoto/", {"variant": "", "pool": "web"}).content.decode()
    assert "Points" in page and page.index(">ben<") < page.index(">ann<")
    fewest_first = client.get("/rankings/plakoto/", {"variant": "", "pool": "web", "sort": "-points"}).content.decode()
    assert fewest_first.index(">ann<") < fewest_first.index(">ben<")
    lines = client.get("/rankings/plakoto.csv", {"variant": "", "pool": "web"}).content.decode().splitlines()
    assert lines[0] == "position,nick,points,victories,games,win_rate,rating,deviation"
    assert [line.split(",")[:3] for line in lines[1:]] == [["1", "ben", "2"], ["2", "ann", "1"]]


def test_points_recomputed_from_the_logs_are_those_counted_as_games_ended(monkeypatch):
    # The server's dice from a fixed seed, so that the games are the same at every run.
    monkeypatch.setattr(services, "RANDOM", random.Random(7))
    ann, ben = UserFactory(username="ann"), UserFactory(username="ben")
    rng = random.Random(3)
    seats = {0: ann.pk, 1: ben.pk}
    scores = []
    for _ in range(3):
        game = ranked_game(ann, ben)
        while game.status == "playing":
            state = ENGINE.state_from_json(game.state)
            seat = ENGINE.to_act(state)
            action = rng.choice(ENGINE.legal_actions(state, seat))
            services.game_act(public_id=game.public_id, user_id=seats[seat], action=action)
            game.refresh_from_db()
        scores.append(ENGINE.outcome(ENGINE.state_from_json(game.state)).points or (0, 0))
    counted = table()
    assert sum(points for points, _, _ in counted.values()) == sum(sum(score) for score in scores) >= 3
    Ranking.objects.update(points=0)
    assert services.games_recompute()["games"] == 3
    assert table() == counted
