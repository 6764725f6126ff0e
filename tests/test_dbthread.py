"""The database calls' batches: calls that queue up together share one transaction, and each gets its own outcome;
both where a server process can run them, the database thread and the event loop itself (TAB_DATABASE_CALLS).

Each runs for real, with a connection of its own, so these tests commit for real (transaction=True). For the thread, a
first call holds it until the others are queued; on the loop, the calls made in one turn of the loop are a batch.
"""

import asyncio
import threading
from collections.abc import Callable

import pytest
from django.db import OperationalError

from core.dbthread import DatabaseThread, OnTheLoop
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


Runner = Callable[[list], list]


@pytest.fixture
def database_thread():
    thread = DatabaseThread()
    thread.thread.start()
    yield thread
    thread.stop()


async def batch_while_held(database_thread: DatabaseThread, calls: list) -> list:
    """Submit every (function, *args) while the thread is held by a call alone, so that they form one batch (with
    company: the sign of load); return the outcomes."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release.wait(10)

    first = database_thread.submit(hold, (), {})
    await asyncio.get_running_loop().run_in_executor(None, held.wait, 10)
    futures = [database_thread.submit(function, tuple(args), {}) for function, *args in calls]
    assert database_thread.calls.qsize() == len(calls)
    release.set()
    await first
    return await asyncio.gather(*futures, return_exceptions=True)


def thread_batch(database_thread: DatabaseThread, calls: list) -> list:
    """`batch_while_held`, from outside any event loop."""
    return asyncio.run(batch_while_held(database_thread, calls))


class Counted(OnTheLoop):
    """The calls on the loop, with the size of each batch noted."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def run_batch(self, batch) -> None:
        self.batches.append(len(batch))
        super().run_batch(batch)


@pytest.fixture
def on_the_loop(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # as start() sets it for a server process
    calls = Counted()
    yield calls
    calls.stop()


def loop_batch(on_the_loop: OnTheLoop, calls: list) -> list:
    """Submit every (function, *args) in one turn of the loop: they form one batch; return the outcomes."""

    async def main() -> list:
        futures = [on_the_loop.submit(function, tuple(args), {}) for function, *args in calls]
        return await asyncio.gather(*futures, return_exceptions=True)

    return asyncio.run(main())


@pytest.fixture(params=["thread", "loop"])
def run_batch(request) -> Runner:
    """Run calls as one batch, in the database thread or on the event loop."""
    if request.param == "thread":
        database_thread = request.getfixturevalue("database_thread")
        return lambda calls: thread_batch(database_thread, calls)
    on_the_loop = request.getfixturevalue("on_the_loop")
    return lambda calls: loop_batch(on_the_loop, calls)


def test_a_refused_call_undoes_only_itself(run_batch):
    outcomes = run_batch([(room_add, 1), (room_add_then_refuse, 2), (room_add, 3)])

    assert outcomes[0] == 1 and outcomes[2] == 3
    assert isinstance(outcomes[1], Refused) and str(outcomes[1]) == "no room 2"
    assert sorted(WaitingRoom.objects.values_list("pool", flat=True)) == ["1", "3"]


def test_a_database_error_in_a_batch_is_tried_again_alone(run_batch):
    attempts = []

    def fails_once(group: int) -> int:
        attempts.append(group)
        if len(attempts) == 1:
            # What a deadlock between two processes' batches looks like to the loser.
            raise OperationalError("deadlock detected")
        return room_add(group)

    outcomes = run_batch([(room_add, 1), (fails_once, 2), (room_add, 3)])

    assert outcomes == [1, 2, 3]
    assert attempts == [2, 2]
    assert sorted(WaitingRoom.objects.values_list("pool", flat=True)) == ["1", "2", "3"]


def room_add_then_write(group: int, variant: str | None) -> int:
    """A room added, then changed by a write built once, in a block without a savepoint, as a game's action writes:
    on PostgreSQL, in a batch, the write is sent with what comes next, the next call's first statement or the COMMIT."""
    from django.db import transaction

    from core import prepared

    with transaction.atomic(savepoint=False):
        room = WaitingRoom.objects.create(pool=str(group), variant="9")
        statement, _ = prepared.update_statement(WaitingRoom, room.pk, {"variant": variant})
        prepared.run_together([statement])
    return group


def test_a_write_that_fails_once_its_call_returned_fails_the_batch_and_each_call_runs_again_alone(run_batch):
    from django.db import IntegrityError

    outcomes = run_batch([(room_add_then_write, 1, "a"), (room_add_then_write, 2, None), (room_add_then_write, 3, "c")])

    assert outcomes[0] == 1 and outcomes[2] == 3
    assert isinstance(outcomes[1], IntegrityError)  # its own error (NOT NULL), whichever call's statement sent it
    assert sorted(WaitingRoom.objects.values_list("pool", "variant")) == [("1", "a"), ("3", "c")]
    # The batch's last write fails: at the COMMIT it was sent with.
    last = run_batch([(room_add_then_write, 4, "d"), (room_add_then_write, 5, None)])
    assert last[0] == 4 and isinstance(last[1], IntegrityError)
    assert run_batch([(room_add, 6), (room_add_then_write, 7, "g")]) == [6, 7]
    assert sorted(WaitingRoom.objects.values_list("pool", "variant")) == [
        ("1", "a"),
        ("3", "c"),
        ("4", "d"),
        ("6", "9"),
        ("7", "g"),
    ]


def test_the_thread_survives_every_kind_of_failure(run_batch):
    def crashes() -> None:
        raise RuntimeError("bug")

    outcomes = run_batch([(crashes,), (room_add, 5)])

    assert isinstance(outcomes[0], RuntimeError) and outcomes[1] == 5
    assert run_batch([(room_add, 6)]) == [6]


def test_refused_actions_in_a_batch_change_nothing_and_leave_the_others_applied(run_batch):
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


def test_the_connection_is_checked_after_a_database_error_not_before_every_batch(run_batch, monkeypatch):
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
        assert run_batch([(room_add, group)]) == [group]
    assert len(checks) <= 1  # the thread's first batch checks its new connection

    def connection_lost() -> None:
        raise OperationalError("server closed the connection unexpectedly")

    checks.clear()
    assert isinstance(run_batch([(connection_lost,)])[0], OperationalError)
    assert run_batch([(room_add, 7)]) == [7]
    assert len(checks) == 1
    assert run_batch([(room_add, 8)]) == [8]
    assert len(checks) == 1


def test_the_calls_of_one_turn_of_the_loop_are_one_batch_and_the_loop_turns_between_batches(on_the_loop, monkeypatch):
    from core import dbthread

    monkeypatch.setattr(dbthread, "BATCH_MAX", 2)
    order: list[str] = []

    def noted(group: int) -> int:
        order.append(f"call {group}")
        return room_add(group)

    async def main() -> list:
        futures = [on_the_loop.submit(noted, (group,), {}) for group in range(1, 6)]
        # Queued after the calls: it runs once their first batch is done, before the next (the loop's other work,
        # its sockets' polls among it, goes on between two batches).
        asyncio.get_running_loop().call_soon(order.append, "other work")
        return await asyncio.gather(*futures)

    assert asyncio.run(main()) == [1, 2, 3, 4, 5]
    assert on_the_loop.batches == [2, 2, 1]
    assert order == ["call 1", "call 2", "other work", "call 3", "call 4", "call 5"]
    assert sorted(WaitingRoom.objects.values_list("pool", flat=True)) == ["1", "2", "3", "4", "5"]


def test_a_call_on_the_loop_runs_in_its_callers_context_on_the_loops_own_connection(on_the_loop):
    from django.db import DEFAULT_DB_ALIAS, connections

    from core import limits

    seen: list[tuple[str, object, bool]] = []

    def note() -> None:
        used = connections[DEFAULT_DB_ALIAS]
        seen.append((limits.current_address.get(), used, used.in_atomic_block))

    async def request(address: str) -> None:
        limits.current_address.set(address)
        await on_the_loop.submit(note, (), {})

    async def main() -> None:
        await asyncio.gather(request("192.0.2.1"), request("192.0.2.2"))  # one batch
        await request("192.0.2.3")  # a batch alone, later

    asyncio.run(main())

    assert [address for address, _, _ in seen] == ["192.0.2.1", "192.0.2.2", "192.0.2.3"]
    connections_used = {id(used) for _, used, _ in seen}
    # One connection, and not the test's own.
    assert len(connections_used) == 1 and id(connections[DEFAULT_DB_ALIAS]) not in connections_used
    assert [atomic for _, _, atomic in seen] == [True, True, False]  # a batch of two shares a transaction
    assert on_the_loop.batches == [2, 1]


def test_under_load_a_call_soon_after_a_batch_waits_for_the_calls_that_follow_it_else_it_runs_at_once(monkeypatch):
    """Under load (the last batch had company) a call that comes within the gathering window of the last batch waits
    for the calls that follow it; on a quiet loop, and after a batch alone (a client's calls one after another), a call
    runs at the next turn."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    calls = Counted()
    calls.gather = 1.0  # far longer than the few turns of the loop between the calls below, however busy the machine

    async def main() -> None:
        loop = asyncio.get_running_loop()
        first = calls.submit(room_add, (1,), {})
        await asyncio.sleep(0)  # a quiet loop: the call ran at the next turn
        assert calls.batches == [1] and first.done()
        # Within a second of a batch alone: at once too (a client's next call).
        second = calls.submit(room_add, (2,), {})
        third = calls.submit(room_add, (3,), {})  # in the same turn: one batch, with company
        await asyncio.sleep(0)
        assert calls.batches == [1, 2] and second.done() and third.done()
        # Within a second of a batch with company: the next call waits for those that follow it.
        fourth = calls.submit(room_add, (4,), {})
        for _ in range(3):
            await asyncio.sleep(0)
        assert not fourth.done()
        fifth = calls.submit(room_add, (5,), {})
        assert await asyncio.gather(fourth, fifth) == [4, 5]
        assert calls.batches == [1, 2, 2]
        # Long after the last batch: at once again.
        calls.flushed_at[loop] = loop.time() - 10
        sixth = calls.submit(room_add, (6,), {})
        await asyncio.sleep(0)
        assert calls.batches == [1, 2, 2, 1] and sixth.done()

    try:
        asyncio.run(main())
    finally:
        calls.stop()


class CountedThread(DatabaseThread):
    """The database thread, with the size of each batch noted."""

    def __init__(self, gather: float, longest: float | None = None) -> None:
        super().__init__(gather, gather if longest is None else longest)
        self.batches: list[int] = []

    def run_batch(self, batch) -> None:
        self.batches.append(len(batch))
        super().run_batch(batch)


def test_in_the_thread_under_load_a_call_soon_after_a_batch_waits_for_those_that_follow_and_alone_runs_at_once(
    monkeypatch,
):
    from core import dbthread

    monkeypatch.setattr(dbthread, "BATCH_MAX", 3)
    # A minute: far longer than the test takes, however busy the machine. Waited for, the calls below would time out.
    database_thread = CountedThread(gather=60.0)
    database_thread.thread.start()

    async def main() -> list:
        def call(group: int) -> asyncio.Future:
            return database_thread.submit(room_add, (group,), {})

        # A quiet thread, and a client whose calls come one after another: each runs at once, alone.
        outcomes = [await asyncio.wait_for(call(1), 30), await asyncio.wait_for(call(2), 30)]
        # Two calls queued while the thread is busy: a batch with company, the sign of load.
        outcomes += await asyncio.wait_for(batch_while_held(database_thread, [(room_add, 3), (room_add, 4)]), 30)
        # Within the minute after that batch began: these wait for one another, until the batch is full.
        later = [call(group) for group in (5, 6, 7)]
        return outcomes + await asyncio.wait_for(asyncio.gather(*later), 30)

    try:
        assert asyncio.run(main()) == [1, 2, 3, 4, 5, 6, 7]
        assert database_thread.batches == [1, 1, 1, 2, 3]
    finally:
        database_thread.calls.put(None)  # the thread's last wait ends with it: no minute waited for
        database_thread.thread.join(30)
    assert not database_thread.thread.is_alive()
    assert sorted(WaitingRoom.objects.values_list("pool", flat=True)) == [str(group) for group in range(1, 8)]


@pytest.mark.parametrize(("gather", "longest"), [(60.0, 60.0), (0.0, 60.0)], ids=["window", "waiting for company"])
def test_in_the_thread_stopping_ends_a_gathering_window_and_runs_what_waits(gather, longest):
    """A call that waits out a gathering window (under load), or waits for company after it, is not left behind by
    `stop()`, nor waits for the wait's end: stopping wakes the thread, which runs it and ends."""
    # A minute: far longer than the test takes, however busy the machine. Waited for, the join below would time out.
    database_thread = CountedThread(gather=gather, longest=longest)
    database_thread.thread.start()

    async def main() -> None:
        await asyncio.wait_for(batch_while_held(database_thread, [(room_add, 1), (room_add, 2)]), 30)
        database_thread.submit(room_add, (3,), {})  # within the minute after that batch: it waits

    asyncio.run(main())
    stopping = threading.Thread(target=database_thread.stop)
    stopping.start()
    stopping.join(30)
    assert not stopping.is_alive() and not database_thread.thread.is_alive()
    # The waiting call ran, alone, once stopping woke the thread (its loop had ended: no one to answer).
    assert database_thread.batches == [1, 2, 1]
    assert sorted(WaitingRoom.objects.values_list("pool", flat=True)) == ["1", "2", "3"]


def test_in_the_thread_under_load_a_batch_short_of_company_waits_for_enough_calls_then_runs_at_once(monkeypatch):
    """Under load, a batch with fewer than BATCH_ENOUGH calls when its window ends waits for more, up to `longest`
    after the last batch began; once enough calls wait, it runs at once."""
    from core import dbthread

    monkeypatch.setattr(dbthread, "BATCH_ENOUGH", 3)
    # No window, then a minute to wait for company: waited for, the calls below would time out.
    database_thread = CountedThread(gather=0.0, longest=60.0)
    database_thread.thread.start()

    async def main() -> list:
        outcomes = await asyncio.wait_for(batch_while_held(database_thread, [(room_add, 1), (room_add, 2)]), 30)
        first = database_thread.submit(room_add, (3,), {})
        await asyncio.sleep(0.05)  # whenever the thread takes it, it waits: a batch of one is short of company
        assert not first.done()
        later = [database_thread.submit(room_add, (group,), {}) for group in (4, 5)]
        return outcomes + await asyncio.wait_for(asyncio.gather(first, *later), 30)

    try:
        assert asyncio.run(main()) == [1, 2, 3, 4, 5]
        assert database_thread.batches == [1, 2, 3]
    finally:
        database_thread.stop()


def test_in_the_thread_a_batch_short_of_company_runs_alone_when_its_longest_wait_ends():
    database_thread = CountedThread(gather=0.0, longest=0.05)
    database_thread.thread.start()

    async def main() -> list:
        outcomes = await asyncio.wait_for(batch_while_held(database_thread, [(room_add, 1), (room_add, 2)]), 30)
        return outcomes + [await asyncio.wait_for(database_thread.submit(room_add, (3,), {}), 30)]

    try:
        assert asyncio.run(main()) == [1, 2, 3]
        assert database_thread.batches == [1, 2, 1]
    finally:
        database_thread.stop()


def test_the_thread_gathers_for_as_long_as_the_settings_say():
    from django.test import override_settings

    with override_settings(TAB_BATCH_GATHER_MS=25, TAB_BATCH_GATHER_MAX_MS=40):
        thread = DatabaseThread()
        assert (thread.gather, thread.longest) == (0.025, 0.040)
