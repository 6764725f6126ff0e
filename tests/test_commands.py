"""The management commands: results, rankings and ratings recomputed from the logs, and the export of games."""

import json
import random
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from games.models import Game, GameEvent
from games.services import game_end, game_expire_due, game_leave
from rankings.models import Ranking, Rating

from .conftest import first_throw, play_to_the_end

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(api, alice, bob, charlie, start_game, settings):
    """Games that ended every way: on the board, by a leave, a timeout, an administrator, and while waiting."""
    games = [start_game(group=1, size=7) for _ in range(2)]
    for game in games:
        play_to_the_end(api, game, random.Random(len(game)))
    left = start_game(group=1, size=7)
    first_throw(left)
    game_leave(public_id=left, user_id=alice.pk)
    timed_out = start_game(group=2, size=9)
    first_throw(timed_out)
    game_expire_due(now=timezone.now() + timedelta(seconds=settings.TAB_TURN_TIMEOUT + 1))
    game_end(public_id=start_game(group=2, size=9), opponent_wins=True)
    game_end(public_id=start_game(group=2, size=9), opponent_wins=False)
    _, waiting = api.as_player("charlie")("join", group=8, size=7)
    game_leave(public_id=waiting["game"], user_id=charlie.pk)
    assert Game.objects.get(public_id=timed_out).ending == "timeout"
    # Left or timed out before anybody acted, a game counts for no one, recomputed or not.
    unplayed = [start_game(group=3, size=7) for _ in range(2)]
    game_leave(public_id=unplayed[0], user_id=alice.pk)
    game_expire_due(now=timezone.now() + timedelta(seconds=settings.TAB_TURN_TIMEOUT + 1))
    assert Game.objects.get(public_id=unplayed[1]).ending == "abandoned"
    return games


def table() -> tuple[list, list]:
    rankings = sorted(Ranking.objects.values_list("kind", "variant", "pool", "player__username", "victories", "games"))
    ratings = sorted(
        (nick, kind, variant, round(rating, 6), round(deviation, 6), round(volatility, 9), games, victories)
        for nick, kind, variant, rating, deviation, volatility, games, victories in Rating.objects.values_list(
            "player__username", "kind", "variant", "rating", "deviation", "volatility", "games", "victories"
        )
    )
    return rankings, ratings


def test_recompute_rebuilds_what_the_games_counted_as_they_ended(played):
    before = table()
    assert sum(games for *_, games in before[0]) == 2 * 5  # five games counted, the annulled and the waiting not
    winners = dict(Game.objects.values_list("public_id", "winner"))
    # Spoil everything the command must rebuild: a result, the rankings, the ratings.
    Ranking.objects.filter(pool="1").update(victories=0)
    Rating.objects.all().delete()
    Game.objects.filter(public_id=played[0]).update(winner=None)

    out = StringIO()
    call_command("tab_recompute", stdout=out)

    assert "5 games counted, 1 result(s) corrected" in out.getvalue()
    assert table() == before
    assert dict(Game.objects.values_list("public_id", "winner")) == winners


def test_recompute_refuses_a_log_the_rules_cannot_replay(played):
    before = table()
    move = GameEvent.objects.filter(game__public_id=played[0], kind="move").first()
    move.data = {**move.data, "to": move.data["from"]}
    move.save()
    with pytest.raises(CommandError, match="cannot be replayed"):
        call_command("tab_recompute", stdout=StringIO())
    assert table() == before


def test_export_writes_every_finished_game_with_its_log(played, tmp_path):
    output = tmp_path / "games.jsonl"
    call_command("tab_export", "--output", str(output), stderr=StringIO())
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(lines) == Game.objects.filter(status="finished").count() == 9
    first = next(line for line in lines if line["game"] == played[0])
    game = Game.objects.get(public_id=played[0])
    assert (first["kind"], first["options"], first["pool"], first["ending"]) == ("tab", {"size": 7}, "1", "win")
    assert [seat["player"] for seat in first["seats"]] == ["alice", "bob"]
    assert sorted(seat["rank"] for seat in first["seats"]) == [1, 2]
    assert first["winner"] == game.winner.username
    assert [entry["seq"] for entry in first["log"]] == list(range(1, game.version + 1))
    assert first["log"][0]["kind"] == "create" and first["log"][-1]["kind"] == "move"
    throws = [entry for entry in first["log"] if entry["kind"] == "throw"]
    assert all(len(entry["data"]["sticks"]) == 4 and entry["player"] in ("alice", "bob") for entry in throws)

    out = StringIO()
    call_command("tab_export", "--group", "2", "--size", "9", stdout=out, stderr=StringIO())
    assert sorted(json.loads(line)["ending"] for line in out.getvalue().splitlines()) == ["ended", "ended", "timeout"]
