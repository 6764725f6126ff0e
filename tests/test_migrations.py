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


BEFORE_MATCHES = [("games", "0002_history"), ("rankings", "0002_rating")]


def test_a_database_of_tab_games_from_before_generic_matches_plays_on_after_migrating(latest):
    """The schema as it was before matches were generic: a game in play with a real position, deadline and log, a
    finished one with its ranking and rating; migrated to the latest schema, nothing is lost and the game plays on
    to its end through the services, which count it in its group's ranking."""
    import random
    from datetime import timedelta

    from django.utils import timezone

    from games.rules import find_engine
    from games.rules.tab import Roll

    old = migrate(BEFORE_MATCHES)
    User, Game, GameEvent, Ranking, Rating = (
        old.get_model(*name)
        for name in (("auth", "User"), ("games", "Game"), ("games", "GameEvent"), ("rankings", "Ranking"))
        + (("rankings", "Rating"),)
    )
    alice, bob = (User.objects.create(username=nick) for nick in ("alice", "bob"))
    engine, rng = find_engine("tab"), random.Random(5)
    state = engine.new(2, {"size": 9}, rng)
    played = engine.apply(state, engine.to_act(state), Roll(), rng)
    now = timezone.now().replace(microsecond=0)
    running = Game.objects.create(
        group=6,
        size=9,
        initial_player=alice,
        second_player=bob,
        status="playing",
        state=engine.state_to_json(state),
        version=3,
        started_at=now - timedelta(minutes=1),
        deadline=now + timedelta(minutes=5),
    )
    log = [("create", alice, {}), ("start", bob, {}), (played.kind, alice, dict(played.data))]
    for seq, (kind, player, data) in enumerate(log, start=1):
        GameEvent.objects.create(game=running, seq=seq, kind=kind, player=player, data=data)
    finished = Game.objects.create(
        group=6,
        size=9,
        initial_player=bob,
        second_player=alice,
        status="finished",
        winner=bob,
        ending="win",
        state=engine.state_to_json(engine.new(2, {"size": 9}, rng)),
        version=40,
        started_at=now - timedelta(hours=2),
        finished_at=now - timedelta(hours=1),
    )
    Ranking.objects.create(group=6, size=9, player=alice, victories=0, games=1)
    Ranking.objects.create(group=6, size=9, player=bob, victories=1, games=1)
    Rating.objects.create(player=bob, size=9, rating=1662.3, deviation=290.3, volatility=0.059999, games=1, victories=1)

    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    from games import services
    from games.models import Game as Match
    from games.models import GameEvent as Entry
    from rankings.models import Ranking as Rank
    from rankings.models import Rating as Rated

    match = Match.objects.get(pk=running.pk)
    assert (match.kind, match.variant, match.pool, match.status) == ("tab", "9", "6", "playing")
    assert (match.started_at, match.deadline, match.version) == (
        now - timedelta(minutes=1),
        now + timedelta(minutes=5),
        3,
    )
    assert [seat.user.username for seat in match.seats.order_by("index")] == ["alice", "bob"]
    # Alice's throw is the first action of a player: left or timed out now, the game counts.
    assert match.acted_at == Entry.objects.get(game=match, seq=3).created_at
    assert [(e.seq, e.kind, e.player.username, e.data) for e in Entry.objects.filter(game=match).order_by("seq")] == [
        (seq, kind, player.username, data) for seq, (kind, player, data) in enumerate(log, start=1)
    ]
    old_finished = Match.objects.get(pk=finished.pk)
    assert (old_finished.started_at, old_finished.finished_at, old_finished.winner_id) == (
        now - timedelta(hours=2),
        now - timedelta(hours=1),
        bob.pk,
    )
    rated = Rated.objects.get(player_id=bob.pk)
    assert (rated.kind, rated.variant, rated.rating, rated.deviation, rated.volatility) == (
        "tab",
        "9",
        1662.3,
        290.3,
        0.059999,
    )

    # The game goes on where it stood, through the services, to its end; it counts in group 6's ranking.
    seats = {0: alice.pk, 1: bob.pk}
    for _ in range(5000):
        match.refresh_from_db()
        if match.status == "finished":
            break
        position = engine.state_from_json(match.state)
        seat = engine.to_act(position)
        services.game_act(
            public_id=match.public_id, user_id=seats[seat], action=rng.choice(engine.legal_actions(position, seat))
        )
    assert match.status == "finished" and match.ending == "win"
    rankings = dict(Rank.objects.filter(kind="tab", variant="9", pool="6").values_list("player__username", "games"))
    assert rankings == {"alice": 2, "bob": 2}
    assert Rated.objects.get(player_id=bob.pk).games == 2
