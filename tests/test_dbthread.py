"""The database thread's batches: calls that queue up together share one transaction, and each gets its own outcome.

The thread is the real one, with its own connection, so these tests commit for real (transaction=True). A first call
holds the thread until the others are queued: they then run as one batch.
"""

import asyncio
import threading

import pytest
from django.db import OperationalError

from core.dbthread import DatabaseThread
from games.models import WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)


class Refused(Exception):
    pass


def room_add(group: int) -> int:
    return int(WaitingRoom.objects.create(pool=str(group), variant="9").pool)


def room_add_then_refuse(group: int) -> None:
    from django.db import transaction

    with transaction.atomic():  # as a service does: its writes are undone with it
        WaitingRoom.objects.create(pool=str(group), variant="9")
        raise Refused(f"no room {group}")


@pytest.fixture
def database_thread():
    thread = DatabaseThread()
    thread.thread.start()
    yield thread
    thread.stop()


def run_batch(database_thread: DatabaseThread, calls: list) -> list:
    """Submit every (function, *args) while the thread is held, so that they form one batch; return the outcomes."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release.wait(10)

    async def main() -> list:
        first = database_thread.submit(hold, (), {})
        await asyncio.get_running_loop().run_in_executor(None, held.wait, 10)
        futures = [database_thread.submit(function, tuple(args), {}) for function, *args in calls]
        assert database_thread.calls.qsize() == len(calls)
        release.set()
        await first
        return await asyncio.gather(*futures, return_exceptions=True)

    return asyncio.run(main())


def test_a_refused_call_undoes_only_itself(database_thread):
    outcomes = run_batch(database_thread, [(room_add, 1), (room_add_then_refuse, 2), (room_add, 3)])

    assert outcomes[0] == 1 and outcomes[2] == 3
    assert isinstance(outcomes[1], Refused) and str(outcomes[1]) == "no room 2"
    assert sorted(WaitingRoom.objects.values_list("pool", flat=True)) == ["1", "3"]


def test_a_database_error_in_a_batch_is_tried_again_alone(database_thread):
    attempts = []

    def fails_once(group: int) -> int:
        attempts.append(group)
        if len(attempts) == 1:
            # What a deadlock between two processes' batches looks like to the loser.
            raise OperationalError("deadlock detected")
        return room_add(group)

    outcomes = run_batch(database_thread, [(room_add, 1), (fails_once, 2), (room_add, 3)])

    assert outcomes == [1, 2, 3]
    assert attempts == [2, 2]
    assert sorted(WaitingRoom.objects.values_list("pool", flat=True)) == ["1", "2", "3"]


def test_the_thread_survives_every_kind_of_failure(database_thread):
    def crashes() -> None:
        raise RuntimeError("bug")

    outcomes = run_batch(database_thread, [(crashes,), (room_add, 5)])

    assert isinstance(outcomes[0], RuntimeError) and outcomes[1] == 5
    assert run_batch(database_thread, [(room_add, 6)]) == [6]


def test_refused_actions_in_a_batch_change_nothing_and_leave_the_others_applied(database_thread):
    from games.models import Game
    from games.rules import tab
    from games.services import GameError, NotYourTurn, game_act, match_join, seat_on_turn

    from .factories import UserFactory

    games = []
    for pair in range(2):
        first, second = (UserFactory(username=f"p{pair}{seat}").pk for seat in range(2))
        match_join(user_id=first, kind="tab", options={"size": 9}, pool="1")
        game = match_join(user_id=second, kind="tab", options={"size": 9}, pool="1")
        games.append((game.public_id, seat_on_turn(game)[1], first if seat_on_turn(game)[1] == second else second))
    (one, on_turn_one, _), (two, on_turn_two, waiting_two) = games
    before = {game.public_id: (game.version, game.state, game.events.count()) for game in Game.objects.all()}

    def act(public_id: str, user_id: int, action: object):
        return game_act(public_id=public_id, user_id=user_id, action=action)

    outcomes = run_batch(
        database_thread,
        [
            (act, one, on_turn_one, tab.Roll()),
            (act, two, waiting_two, tab.Roll()),  # out of turn
            (act, two, on_turn_two, tab.Select(0)),  # the rules refuse it: the sticks are not thrown yet
            (act, two, on_turn_two, tab.Roll()),
        ],
    )

    assert isinstance(outcomes[1], NotYourTurn)
    assert isinstance(outcomes[2], GameError) and outcomes[2].rule is not None
    for public_id, outcome in ((one, outcomes[0]), (two, outcomes[3])):
        assert outcome.played.kind == "throw"
        game = Game.objects.get(public_id=public_id)
        version, state, logged = before[public_id]
        assert (game.version, game.events.count()) == (version + 1, logged + 1)
        assert game.state == outcome.position != state


def test_the_connection_is_checked_after_a_database_error_not_before_every_batch(database_thread, monkeypatch):
    """Django's check of a connection (with CONN_HEALTH_CHECKS, a query: on PostgreSQL a round trip) is not made for
    every batch while batches succeed one after another, only once in a while and after a batch's database error."""
    from django.db import DEFAULT_DB_ALIAS, connections

    from core import dbthread

    checks = []
    wrapper = type(connections[DEFAULT_DB_ALIAS])
    usable = wrapper.is_usable
    monkeypatch.setattr(wrapper, "is_usable", lambda self: checks.append(1) or usable(self))
    monkeypatch.setattr(dbthread, "CHECK_INTERVAL", 3600)  # "once in a while": not within this test

    for group in range(1, 6):
        assert run_batch(database_thread, [(room_add, group)]) == [group]
    assert len(checks) <= 1  # the thread's first batch checks its new connection

    def connection_lost() -> None:
        raise OperationalError("server closed the connection unexpectedly")

    checks.clear()
    assert isinstance(run_batch(database_thread, [(connection_lost,)])[0], OperationalError)
    assert run_batch(database_thread, [(room_add, 7)]) == [7]
    assert len(checks) == 1
    assert run_batch(database_thread, [(room_add, 8)]) == [8]
    assert len(checks) == 1
