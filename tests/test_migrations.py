"""Migrations that move existing data: a database as an older schema left it, migrated forward and back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(target: list[tuple[str, str]]):
    """Migrate the test database to `target`; return the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)
    return executor.loader.project_state(target).apps


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
