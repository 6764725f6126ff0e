"""Migrations that move existing data: a database as an older schema left it, migrated forward and back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(target: list[tuple[str, str | None]]):
    """Migrate the test database to `target` (an app's None: before its first migration); return the models as they
    are there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)
    executor.loader.build_graph()
    return executor.loader.project_state(list(executor.loader.applied_migrations)).apps


@pytest.fixture
def latest():
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_an_administrators_end_names_the_winner_by_seat(latest):
    old = migrate([("games", "0002_history")])
    User, Game, GameEvent = (
        old.get_model(*name) for name in (("auth", "User"), ("games", "Game"), ("games", "GameEvent"))
    )
    alice, bob = (User.objects.create(username=nick) for nick in ("alice", "bob"))
    for seq, winner in enumerate(("Blue", "Red", None), start=1):
        game = Game.objects.create(group=1, size=7, initial_player=alice, second_player=bob, status="finished")
        GameEvent.objects.create(game=game, seq=seq, kind="end", data={"winner": winner})
    GameEvent.objects.create(game=game, seq=9, kind="throw", data={"sticks": [True, False, False, False], "value": 1})

    new = migrate([("games", "0003_kind")])
    events = new.get_model("games", "GameEvent").objects.order_by("seq")
    assert [(event.kind, event.data) for event in events] == [
        ("end", {"winner": 0}),
        ("end", {"winner": 1}),
        ("end", {"winner": None}),
        ("throw", {"sticks": [True, False, False, False], "value": 1}),
    ]
    assert set(new.get_model("games", "Game").objects.values_list("kind", flat=True)) == {"tab"}

    back = migrate([("games", "0002_history")])
    assert [event.data.get("winner") for event in back.get_model("games", "GameEvent").objects.order_by("seq")][:3] == [
        "Blue",
        "Red",
        None,
    ]


TODAY = [("games", "0004_endings"), ("rankings", "0002_rating")]
GENERIC = [("games", "0005_seats"), ("rankings", "0003_kind_variant_pool")]


def test_tab_games_rankings_and_ratings_move_to_generic_matches_and_back(latest):
    old = migrate(TODAY)
    User, Game, GameEvent, Ranking, Rating, WaitingRoom = (
        old.get_model(*name)
        for name in (
            ("auth", "User"),
            ("games", "Game"),
            ("games", "GameEvent"),
            ("rankings", "Ranking"),
            ("rankings", "Rating"),
            ("games", "WaitingRoom"),
        )
    )
    alice, bob, carol = (User.objects.create(username=nick) for nick in ("alice", "bob", "carol"))
    board = {"size": 7, "turn": "Blue"}  # what the state holds is the engine's business: it must come through as is
    won = Game.objects.create(
        group=4,
        size=7,
        initial_player=alice,
        second_player=bob,
        status="finished",
        winner=bob,
        ending="win",
        state=board,
        version=3,
    )
    running = Game.objects.create(
        group=4, size=9, initial_player=carol, second_player=alice, status="playing", state=board, version=2
    )
    waiting = Game.objects.create(group=5, size=11, initial_player=bob, status="waiting", version=1)
    annulled = Game.objects.create(
        group=4,
        size=7,
        initial_player=bob,
        second_player=carol,
        status="finished",
        ending="ended",
        state=board,
        version=2,
    )
    practice = Game.objects.create(
        group=0,
        size=9,
        initial_player=alice,
        second_player=carol,
        status="finished",
        winner=alice,
        ending="win",
        state=board,
        version=2,
    )
    for seq, kind in enumerate(("create", "start", "throw"), start=1):
        GameEvent.objects.create(game=won, seq=seq, kind=kind, player=alice if seq != 2 else bob)
    WaitingRoom.objects.create(group=5, size=11)
    Ranking.objects.create(group=4, size=7, player=alice, victories=0, games=1)
    Ranking.objects.create(group=4, size=7, player=bob, victories=1, games=1)
    Rating.objects.create(player=bob, size=7, rating=1662.3, deviation=290.3, volatility=0.059999, games=1, victories=1)

    new = migrate(GENERIC)
    Game, Seat = new.get_model("games", "Game"), new.get_model("games", "Seat")
    Ranking, Rating = new.get_model("rankings", "Ranking"), new.get_model("rankings", "Rating")

    def seats(game):
        return [(s.index, s.user.username, s.rank) for s in Seat.objects.filter(game_id=game.pk).order_by("index")]

    def moved(game):
        row = Game.objects.get(pk=game.pk)
        return row.kind, row.options, row.variant, row.pool, row.seat_count, row.status, row.winner_id, row.state

    assert moved(won) == ("tab", {"size": 7}, "7", "4", 2, "finished", bob.pk, board)
    assert seats(won) == [(0, "alice", 2), (1, "bob", 1)]
    assert moved(running) == ("tab", {"size": 9}, "9", "4", 2, "playing", None, board)
    assert seats(running) == [(0, "carol", None), (1, "alice", None)]
    assert moved(waiting)[:6] == ("tab", {"size": 11}, "11", "5", 2, "waiting")
    assert seats(waiting) == [(0, "bob", None)]
    assert seats(annulled) == [(0, "bob", None), (1, "carol", None)]
    assert moved(practice)[3] == "" and seats(practice) == [(0, "alice", 1), (1, "carol", 2)]
    assert new.get_model("games", "GameEvent").objects.filter(game_id=won.pk).count() == 3
    assert sorted(Ranking.objects.values_list("kind", "variant", "pool", "player__username", "victories", "games")) == [
        ("tab", "7", "4", "alice", 0, 1),
        ("tab", "7", "4", "bob", 1, 1),
    ]
    assert list(Rating.objects.values_list("kind", "variant", "player__username", "rating", "games")) == [
        ("tab", "7", "bob", 1662.3, 1)
    ]
    assert not new.get_model("games", "WaitingRoom").objects.exists()  # remade by the next join

    back = migrate(TODAY)
    Game = back.get_model("games", "Game")
    players = {
        game.pk: (
            game.group,
            game.size,
            game.initial_player.username,
            game.second_player and game.second_player.username,
        )
        for game in Game.objects.select_related("initial_player", "second_player")
    }
    assert players == {
        won.pk: (4, 7, "alice", "bob"),
        running.pk: (4, 9, "carol", "alice"),
        waiting.pk: (5, 11, "bob", None),
        annulled.pk: (4, 7, "bob", "carol"),
        practice.pk: (0, 9, "alice", "carol"),
    }
    assert sorted(back.get_model("rankings", "Ranking").objects.values_list("group", "size", "victories")) == [
        (4, 7, 0),
        (4, 7, 1),
    ]
    assert list(back.get_model("rankings", "Rating").objects.values_list("size", "rating")) == [(7, 1662.3)]


def test_accounts_that_are_the_same_nick_under_the_rule_keep_working_and_are_reported(latest, capsys):
    old = migrate([("accounts", None)])
    User = old.get_model("auth", "User")
    made = [User.objects.create(username=nick) for nick in ("Ana", "bob", "ana", "ＡＮＡ")]

    new = migrate([("accounts", "0001_nick_key")])
    keys = dict(new.get_model("accounts", "NickKey").objects.values_list("user__username", "key"))
    assert keys == {"Ana": "ana", "bob": "bob", "ana": f"ana#{made[2].pk}", "ＡＮＡ": f"ana#{made[3].pk}"}
    report = capsys.readouterr().out
    assert "2 account(s) share their nick" in report
    assert f"'ana' (id {made[2].pk}) is the same nick as 'Ana'" in report
    assert f"'ＡＮＡ' (id {made[3].pk}) is the same nick as 'Ana'" in report
