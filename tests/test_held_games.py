"""The games that the connection of the database calls wrote last are held between their actions (games/store.py):
an action takes its game from there instead of reading the row, and whatever else writes a game makes it read again.

The calls run as a server process runs them, on the event loop and a connection of their own, and commit for real
(transaction=True); the test's own connection is "another connection", as the admin's or a management command's is.
On PostgreSQL nothing is held: there every action reads its row, and these tests check the same outcomes."""

import asyncio

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from core.dbthread import OnTheLoop
from games import services, store
from games.models import Game
from games.rules import tab

pytestmark = pytest.mark.django_db(transaction=True)

GAME_READ = 'FROM "games_game"'


@pytest.fixture
def on_the_loop(monkeypatch):
    """Run a function as a database call of a server process, one batch, and return its outcome."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # as dbthread.start() sets it for a server process
    calls = OnTheLoop()

    def run(function, *args, **kwargs):
        async def main():
            return await calls.submit(function, args, kwargs)

        return asyncio.run(main())

    yield run
    calls.stop()


def started(alice, bob) -> str:
    game = services.match_open(kind="tab", options={"size": 7}, user_ids=[alice.pk, bob.pk], pool="3")
    return services.match_start(public_id=game.public_id, user_id=bob.pk).public_id


def throw(public_id: str, alice, bob) -> tuple[Game, list[str]]:
    """Make the next action of the player on turn; return the game as it left it, and the statements the action ran
    on its connection (all of them, through Django's cursor while they are captured)."""
    with CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as queries:
        game = Game.objects.get(public_id=public_id)
        state = tab.ENGINE.state_from_json(game.state)
        seat = tab.ENGINE.to_act(state)
        action = tab.ENGINE.legal_actions(state, seat)[0]
        acted = services.game_act(public_id=public_id, user_id=(alice.pk, bob.pk)[seat], action=action)
    return acted.game, [query["sql"] for query in queries][1:]  # the action's own: after the test's read above


def test_an_action_takes_the_game_its_connection_wrote_last(on_the_loop, alice, bob):
    public_id = on_the_loop(started, alice, bob)
    first, first_statements = on_the_loop(throw, public_id, alice, bob)
    second, second_statements = on_the_loop(throw, public_id, alice, bob)
    held = connection.vendor == "sqlite"
    for statements in (first_statements, second_statements):
        assert any(GAME_READ in sql for sql in statements) is not held, statements
    assert second.version == first.version + 1 == Game.objects.get(public_id=public_id).version


def test_a_game_another_connection_wrote_is_read_again(on_the_loop, alice, bob):
    public_id = on_the_loop(started, alice, bob)
    on_the_loop(throw, public_id, alice, bob)
    # An administrator ends it, on a connection of their own (the test's).
    services.game_end(public_id=public_id, opponent_wins=False)
    with pytest.raises(services.GameError, match="The game is over"):
        on_the_loop(throw, public_id, alice, bob)


def test_a_row_written_other_than_by_an_action_is_read_again(on_the_loop, alice, bob):
    public_id = on_the_loop(started, alice, bob)

    def act_then_update(pool: str) -> None:
        with transaction.atomic():
            throw(public_id, alice, bob)
            Game.objects.filter(public_id=public_id).update(pool=pool)
            store.held_forget(public_id)

    def update_then_act(pool: str) -> None:
        with transaction.atomic():
            Game.objects.filter(public_id=public_id).update(pool=pool)
            store.held_forget(public_id)
            throw(public_id, alice, bob)

    def saved_by_the_orm(pool: str) -> None:
        game = Game.objects.get(public_id=public_id)
        game.pool = pool
        game.save(update_fields=["pool"])

    for write, pool in ((act_then_update, "4"), (update_then_act, "5"), (saved_by_the_orm, "6")):
        on_the_loop(write, pool)
        game, statements = on_the_loop(throw, public_id, alice, bob)
        assert game.pool == pool
        assert any(GAME_READ in sql for sql in statements), write.__name__


def test_an_action_undone_holds_nothing(on_the_loop, alice, bob):
    public_id = on_the_loop(started, alice, bob)
    version = on_the_loop(throw, public_id, alice, bob)[0].version

    class Undone(Exception):
        pass

    def act_then_fail() -> None:
        with transaction.atomic():
            throw(public_id, alice, bob)
            raise Undone

    with pytest.raises(Undone):
        on_the_loop(act_then_fail)
    game, _ = on_the_loop(throw, public_id, alice, bob)
    assert game.version == version + 1 == Game.objects.get(public_id=public_id).version


def test_what_a_caller_does_with_the_game_it_got_is_not_held(on_the_loop, alice, bob):
    public_id = on_the_loop(started, alice, bob)

    def act_and_scribble() -> int:
        game, _ = throw(public_id, alice, bob)
        game.status = Game.Status.FINISHED
        game.pool = "scribbled"
        return game.version

    version = on_the_loop(act_and_scribble)
    game, _ = on_the_loop(throw, public_id, alice, bob)
    assert (game.status, game.pool, game.version) == (Game.Status.PLAYING, "3", version + 1)


def test_only_the_connection_of_the_database_calls_holds_games(alice, bob):
    public_id = started(alice, bob)
    throw(public_id, alice, bob)
    _, statements = throw(public_id, alice, bob)
    assert any(GAME_READ in sql for sql in statements)
