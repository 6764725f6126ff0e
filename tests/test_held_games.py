"""A process holds the games it wrote last, each with the row its write left (games/store.py; on PostgreSQL, the row
version's identity): an action whose locking read gives that very row takes the model as the write left it instead of
building it again, and any other writer, which leaves another row, has the game built from its row as before.

The actions run as a server process runs them, on the event loop and a connection of their own, and commit for real
(transaction=True); the test's own connection is "another connection", as the admin's or a management command's is."""

import asyncio
from datetime import UTC, datetime

import pytest
import time_machine
from django.db import transaction

from core.dbthread import OnTheLoop
from games import services, store
from games.models import Game
from games.rules import tab

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def on_the_loop(monkeypatch):
    """Run a function as a database call of a server process, one batch, and return its outcome."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # as dbthread.start() sets it for a server process
    calls = OnTheLoop(gather=0)

    def run(function, *args, **kwargs):
        async def main():
            return await calls.submit(function, args, kwargs)

        return asyncio.run(main())

    yield run
    calls.stop()


@pytest.fixture
def built(monkeypatch) -> list[str]:
    """The games whose model a locking read built from their row (a new model, or the one held), in order."""
    seen: list[str] = []
    from_row = store._from_row

    def noted(held, names, values):
        game = from_row(held, names, values)
        assert held is None or game is held
        seen.append(game.public_id if held is None else f"{game.public_id} (held)")
        return game

    monkeypatch.setattr(store, "_from_row", noted)
    return seen


def started(alice, bob) -> str:
    game = services.match_open(kind="tab", options={"size": 7}, user_ids=[alice.pk, bob.pk], pool="3")
    return services.match_start(public_id=game.public_id, user_id=bob.pk).public_id


def throw(public_id: str, alice, bob) -> Game:
    """Make the next action of the player on turn; return the game as it left it."""
    state = tab.ENGINE.state_from_json(Game.objects.values_list("state", flat=True).get(public_id=public_id))
    seat = tab.ENGINE.to_act(state)
    action = tab.ENGINE.legal_actions(state, seat)[0]
    return services.game_act(public_id=public_id, user_id=(alice.pk, bob.pk)[seat], action=action).game


def test_an_action_takes_the_game_its_process_wrote_last(on_the_loop, alice, bob, built):
    public_id = on_the_loop(started, alice, bob)
    games = [on_the_loop(throw, public_id, alice, bob) for _ in range(3)]
    # Built once, when the match started (read from the row its opening wrote); each action then takes it.
    assert built == [public_id]
    assert [game.version for game in games] == [games[0].version + n for n in range(3)]
    assert games[-1].version == Game.objects.get(public_id=public_id).version
    # What the model holds is what the ORM reads of the row.
    stored = Game.objects.get(public_id=public_id)
    for field in Game._meta.concrete_fields:
        assert getattr(games[-1], field.attname) == getattr(stored, field.attname), field.name


def test_a_game_written_at_a_whole_second_is_taken_too(on_the_loop, alice, bob, built):
    """On SQLite the row read is compared with the values written as text: a time with no fraction of a second is
    written without one, and read so."""
    with time_machine.travel(datetime(2026, 5, 1, 12, tzinfo=UTC), tick=False):
        public_id = on_the_loop(started, alice, bob)
        games = [on_the_loop(throw, public_id, alice, bob) for _ in range(3)]
    assert built == [public_id]
    assert (
        games[-1].changed_at == Game.objects.get(public_id=public_id).changed_at == datetime(2026, 5, 1, 12, tzinfo=UTC)
    )


def test_a_game_another_connection_wrote_is_built_again(on_the_loop, alice, bob, built):
    public_id = on_the_loop(started, alice, bob)
    on_the_loop(throw, public_id, alice, bob)
    # An administrator ends it, on a connection of their own (the test's).
    services.game_end(public_id=public_id, opponent_wins=False)
    built.clear()
    with pytest.raises(services.GameError, match="The game is over"):
        on_the_loop(throw, public_id, alice, bob)
    assert built == [public_id]


def test_a_held_game_another_process_acted_in_takes_its_row_whole(on_the_loop, alice, bob, built):
    """Two processes serve a game's players in turn: an action here after one there takes the row's columns into the
    model this process held, which then holds what the ORM reads of the row, with no related object of before."""
    public_id = on_the_loop(started, alice, bob)
    held = on_the_loop(throw, public_id, alice, bob)
    assert held.winner is None  # a related object read (and cached) on the model as it was
    # Another process's actions: the test's own connection, outside this process's event loop.
    for _ in range(2):
        throw(public_id, alice, bob)
    Game.objects.filter(public_id=public_id).update(winner=alice)  # and a column no action of a game in play writes
    built.clear()
    game = on_the_loop(throw, public_id, alice, bob)
    assert built == [f"{public_id} (held)"]
    stored = Game.objects.get(public_id=public_id)
    for field in Game._meta.concrete_fields:
        assert getattr(game, field.attname) == getattr(stored, field.attname), field.name
    assert game.version == held.version + 3
    assert game.winner == alice
    assert game.seat_user_ids == [alice.pk, bob.pk]


def test_a_row_written_other_than_by_an_action_is_built_again(on_the_loop, alice, bob, built):
    public_id = on_the_loop(started, alice, bob)

    def act_then_update(pool: str) -> None:
        with transaction.atomic():
            throw(public_id, alice, bob)
            Game.objects.filter(public_id=public_id).update(pool=pool)

    def update_then_act(pool: str) -> None:
        with transaction.atomic():
            Game.objects.filter(public_id=public_id).update(pool=pool)
            throw(public_id, alice, bob)

    def saved_by_the_orm(pool: str) -> None:
        game = Game.objects.get(public_id=public_id)
        game.pool = pool
        game.save(update_fields=["pool"])

    # After the action's write, the row is not the one it left: the next action builds the game from the row. Before
    # it, the action read the updated row: what it left is what is stored.
    for write, pool, built_again in (
        (act_then_update, "4", True),
        (update_then_act, "5", False),
        (saved_by_the_orm, "6", True),
    ):
        on_the_loop(write, pool)
        built.clear()
        assert on_the_loop(throw, public_id, alice, bob).pool == pool, write.__name__
        assert built == ([f"{public_id} (held)"] if built_again else []), write.__name__


def test_an_action_undone_holds_nothing(on_the_loop, alice, bob):
    public_id = on_the_loop(started, alice, bob)
    version = on_the_loop(throw, public_id, alice, bob).version

    class Undone(Exception):
        pass

    def act_then_fail() -> None:
        with transaction.atomic():
            throw(public_id, alice, bob)
            raise Undone

    with pytest.raises(Undone):
        on_the_loop(act_then_fail)
    assert on_the_loop(throw, public_id, alice, bob).version == version + 1
    assert Game.objects.get(public_id=public_id).version == version + 1


def test_what_a_caller_does_with_the_game_it_got_is_not_held(on_the_loop, alice, bob):
    public_id = on_the_loop(started, alice, bob)

    def act_and_scribble() -> int:
        game = throw(public_id, alice, bob)
        game.status = Game.Status.FINISHED
        game.pool = "scribbled"
        return game.version

    version = on_the_loop(act_and_scribble)
    game = on_the_loop(throw, public_id, alice, bob)
    assert (game.status, game.pool, game.version) == (Game.Status.PLAYING, "3", version + 1)


def test_the_games_a_batch_wrote_are_held_once_it_commits(alice, bob, built):
    """In the database thread's batches (where, on PostgreSQL, the writes go with the next statement or the COMMIT)."""
    from core.dbthread import DatabaseThread

    from .factories import UserFactory
    from .test_dbthread import thread_batch

    carol, dave = UserFactory(username="carol"), UserFactory(username="dave")
    games = [started(alice, bob), started(carol, dave)]
    players = {games[0]: (alice, bob), games[1]: (carol, dave)}
    thread = DatabaseThread()
    thread.thread.start()
    try:
        first = thread_batch(thread, [(throw, public_id, *players[public_id]) for public_id in games])
        assert sorted(built) == sorted(games)  # built from the rows their start left
        built.clear()
        then = thread_batch(thread, [(throw, public_id, *players[public_id]) for public_id in games])
        assert built == []
    finally:
        thread.stop()
    for before, after in zip(first, then, strict=True):
        assert after.version == before.version + 1
        stored = Game.objects.get(public_id=after.public_id)
        for field in Game._meta.concrete_fields:
            assert getattr(after, field.attname) == getattr(stored, field.attname), field.name
