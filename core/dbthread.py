"""Where the API's and the line protocols' database work runs, one call at a time, on one persistent connection.

A server process starts it (`start()`, from tabsite/asgi.py), as TAB_DATABASE_CALLS says: on the event loop itself
(`OnTheLoop`, with SQLite only; the default there in one process), or the database thread. Calls queue up for the
thread, and it takes all the waiting ones at once and runs them in one transaction; on the loop, the calls of one turn
run so at the start of the next. A call's writes must be in its own `transaction.atomic()` (every service's are), which
nests as a savepoint (a game's action has none: it refuses before writing anything): a refused call undoes only
itself. This is group commit: under load one commit (and, with the thread, one wake-up of it and one of the event
loop) serve many actions, where each action used to pay for all three. Under load (the last batch had company) a batch
begins at most every TAB_BATCH_GATHER_MS: a call that comes sooner after the last batch began waits for the calls that
follow it; in the thread, a batch that has fewer than BATCH_ENOUGH calls by then waits for them up to
TAB_BATCH_GATHER_MAX_MS after the last began (paced by its size as well as by the clock: a process that gets a part of
the load, one of several workers, makes batches as large as one process would, not as many). When the server is quiet
a batch is a single call and nothing waits for company. Results and errors reach the
callers only after the commit; the updates of a batch are published once it has committed, together (one trip to Redis
for the batch: `around_each_batch`, games.publication.gathered), before any caller has its answer; the credentials its
calls check are read together too (accounts.services.read_ahead). On PostgreSQL a batch's writes built once are sent
with its next statement or its COMMIT (core.prepared.writes_deferred): an action's writes and the next action's locking
read make one trip.

If the transaction of a batch fails as a whole (a deadlock between two server processes on PostgreSQL, a lost
connection), nothing of it was committed: each call is run again alone, in its own transaction, and gets its own
result or error.

The API's handler sends no request signals (protocols/course_api/handler.py), so the checks Django makes when a
request starts are made here, before a batch: a connection past CONN_MAX_AGE, or left unusable by an error, is
replaced. Not before every batch: with CONN_HEALTH_CHECKS each check is a query (on PostgreSQL a round trip, made
for every batch, that is for nearly every action below saturation), while a batch that just succeeded shows the
connection usable. So at most once every CHECK_INTERVAL while batches follow one another, and always before the
batch after one that met a database error.

Without `start()` (management commands, Django's test client), calls go to asgiref's thread for thread-sensitive
work, as `sync_to_async` does, which under `async_to_sync` is the caller's own thread and transaction.
"""

import asyncio
import contextlib
import contextvars
import logging
import math
import os
import queue
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, close_old_connections, connection, connections, transaction

from core import prepared

logger = logging.getLogger(__name__)

# At most this many calls share a transaction: a batch must not hold the write lock for long.
BATCH_MAX = 64
# Under load, the database thread's batch waits for this many calls, up to TAB_BATCH_GATHER_MAX_MS after the last batch
# began: on PostgreSQL a batch costs its thread about as much as four of its calls beyond them (BENCHMARKS.md).
BATCH_ENOUGH = 8
# Seconds between the connection's checks while batches succeed one after another.
CHECK_INTERVAL = 1.0


class Call:
    __slots__ = ("context", "function", "args", "kwargs", "future", "loop", "outcome")

    def __init__(self, function, args, kwargs, future: asyncio.Future, loop: asyncio.AbstractEventLoop):
        self.context = contextvars.copy_context()
        self.function, self.args, self.kwargs = function, args, kwargs
        self.future, self.loop = future, loop
        self.outcome: tuple[bool, Any] = (False, None)

    def run(self) -> None:
        try:
            self.outcome = (True, self.context.run(self.function, *self.args, **self.kwargs))
        except BaseException as error:  # noqa: BLE001 - every outcome goes back to its caller
            self.outcome = (False, error)


def _settle(calls: list[Call]) -> None:
    """Hand each call's outcome to its coroutine (on the event loop)."""
    for call in calls:
        if call.future.cancelled():
            continue
        succeeded, value = call.outcome
        if succeeded:
            call.future.set_result(value)
        else:
            call.future.set_exception(value)


class _Batches:
    """How a batch of calls is run and its connection checked, wherever it runs."""

    checked_at: float | None = None  # when the connection was last checked (time.monotonic())

    def run_around(self, batch: list[Call]) -> None:
        try:
            with contextlib.ExitStack() as around:
                for context in _around_batches:
                    around.enter_context(context(batch))
                self.run_batch(batch)
        except Exception as error:  # the server must live on: every caller hears of it
            logger.exception("database calls failed")
            for call in batch:
                call.outcome = (False, error)

    def check_connection(self) -> None:
        """Make Django's checks of the connection if they are due (the module's docstring says when)."""
        now = time.monotonic()
        if self.checked_at is None or now - self.checked_at >= CHECK_INTERVAL:
            close_old_connections()
            self.checked_at = now

    def run_call(self, call: Call) -> None:
        call.run()

    def run_batch(self, batch: list[Call]) -> None:
        run = self.run_call
        try:
            self.check_connection()
            if len(batch) == 1:
                run(batch[0])
            else:
                with transaction.atomic(), prepared.writes_deferred(), contextlib.ExitStack() as inside:
                    for context in _inside_batches:
                        inside.enter_context(context(batch))
                    for call in batch:
                        run(call)
                    if connection.needs_rollback:
                        # Something left the transaction unable to commit: Django would roll it back without a word.
                        raise DatabaseError("the transaction of the batch cannot be committed")
        except DatabaseError as error:
            # The transaction failed as a whole (at BEGIN or COMMIT): nothing of the batch was committed.
            logger.warning("a batch of %d database calls failed (%s): running them one by one", len(batch), error)
            for call in batch:
                call.outcome = (False, error)
        # A call that met a database error was undone alone (its savepoint); it may have been a batch's error rather
        # than its own (a deadlock between two processes' batches, on PostgreSQL): once more, in a transaction alone.
        for call in batch if len(batch) > 1 else ():
            if not call.outcome[0] and isinstance(call.outcome[1], DatabaseError):
                with contextlib.suppress(DatabaseError):
                    close_old_connections()
                run(call)
        if any(not call.outcome[0] and isinstance(call.outcome[1], DatabaseError) for call in batch):
            self.checked_at = None  # the connection may be broken: checked before the next batch


class OnTheLoop(_Batches):
    """Calls run on the event loop itself, between its turns, on one connection kept for them (SQLite: a statement
    there takes microseconds and waits for no network). The calls made during one turn of the loop run as one batch at
    the start of the next, BATCH_MAX at most, and the loop polls its sockets between two batches. This saves the two
    threads' wake-ups and the GIL's hand-overs of every trip to the database thread (BENCHMARKS.md has the figures).
    Its turns are longer, so the server's listening sockets must accept every waiting connection in one turn, not one
    a turn as uvloop's own do (core/accepting.py): past saturation the queue of connections overflowed.

    Django refuses database calls where an event loop runs unless DJANGO_ALLOW_ASYNC_UNSAFE is set: `start()` sets it
    for the serving process, whose every database call from the loop goes through here."""

    def __init__(self, gather: float | None = None) -> None:
        self.pending: dict[asyncio.AbstractEventLoop, list[Call]] = {}
        self.context = contextvars.Context()  # where the loop's connection lives, and the batches' transactions
        self.connection: Any = None
        self.gather = settings.TAB_BATCH_GATHER_MS / 1000 if gather is None else gather
        # When each loop's last batch began, and whether it had company (the sign of load).
        self.flushed_at: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, float] = weakref.WeakKeyDictionary()
        self.company: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, bool] = weakref.WeakKeyDictionary()

    def submit(self, function: Callable, args: tuple, kwargs: dict) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        calls = self.pending.setdefault(loop, [])
        calls.append(Call(function, args, kwargs, future, loop))
        if len(calls) == 1:
            # Under load (the last batch had company), a batch at most every `gather` seconds: a call that comes sooner
            # after the last one began waits for the calls that follow it meanwhile (a few a batch instead of one or
            # two: each transaction's begin and commit cost an action about a third of its database work). On a quiet
            # loop, or for a client whose calls come one after another, it runs at once.
            wait = self.flushed_at.get(loop, -math.inf) + self.gather - loop.time()
            if wait > 0 and self.company.get(loop, False):
                loop.call_later(wait, self.flush, loop)
            else:
                loop.call_soon(self.flush, loop)
        return future

    def flush(self, loop: asyncio.AbstractEventLoop) -> None:
        self.flushed_at[loop] = loop.time()
        calls = self.pending.pop(loop, [])
        batch, rest = calls[:BATCH_MAX], calls[BATCH_MAX:]
        self.company[loop] = len(batch) > 1
        if rest:
            self.pending[loop] = rest
            loop.call_soon(self.flush, loop)
        self.context.run(self.run_around, batch)
        _settle(batch)

    def stop(self) -> None:
        """Close the loop's connection (calls made afterwards open another)."""
        self.context.run(connections.close_all)

    def check_connection(self) -> None:
        super().check_connection()
        self.connection = connections[DEFAULT_DB_ALIAS]

    def run_call(self, call: Call) -> None:
        # In its caller's context (its context variables), on the loop's connection.
        call.context.run(_use_connection, self.connection)
        call.run()


def _use_connection(database: Any) -> None:
    connections[DEFAULT_DB_ALIAS] = database


class DatabaseThread(_Batches):
    def __init__(self, gather: float | None = None, longest: float | None = None) -> None:
        self.calls: queue.SimpleQueue[Call | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self.serve, name="tab-database", daemon=True)
        self.gather = settings.TAB_BATCH_GATHER_MS / 1000 if gather is None else gather
        self.longest = settings.TAB_BATCH_GATHER_MAX_MS / 1000 if longest is None else longest
        # While the thread waits out a gathering window (`serve`): set when `wanted` calls wait besides the batch's
        # first, or to stop.
        self.gathering = False
        self.wanted = BATCH_MAX - 1
        self.wake = threading.Event()
        self.stopping = False  # set by `stop()`: from then on no wait for calls begins

    def stop(self) -> None:
        """Let the thread finish the calls queued so far, close its connections and end."""
        self.stopping = True
        self.calls.put(None)
        self.wake.set()
        self.thread.join()

    def submit(self, function: Callable, args: tuple, kwargs: dict) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.calls.put(Call(function, args, kwargs, future, loop))
        # A window's calls are taken when it ends; a batch large enough need not wait for that (`serve`).
        if self.gathering and self.calls.qsize() >= self.wanted:
            self.wake.set()
        return future

    def gather_for(self, seconds: float, wanted: int) -> None:
        """Sleep for `seconds` unless `wanted` calls wait besides the batch's first, or until they do, or stopping."""
        self.wanted = wanted
        self.gathering = True
        if self.calls.qsize() < wanted and not self.stopping:
            self.wake.wait(seconds)
        self.gathering = False
        self.wake.clear()

    def serve(self) -> None:
        stopping = False
        busy = False
        began = -math.inf  # when the last batch began
        while not stopping:
            call = self.calls.get()
            batch: list[Call] = [] if call is None else [call]
            stopping = call is None
            # Under load (the last batch had company), a batch at most every `gather` seconds: a call that comes
            # sooner after the last batch began waits for the calls that follow it meanwhile. On PostgreSQL a batch
            # costs the thread far more than its calls' share of a transaction: its round trips, and with Redis the
            # credentials' read and the updates' publication, each a trip too (BENCHMARKS.md). On a quiet thread, or
            # for a client whose calls come one after another, the call runs at once. The calls that come during the
            # window stay queued until it ends, all taken then: taken one by one as they came, each woke this thread,
            # which took the GIL from the event loop for it. Only a full batch (or the server stopping) ends the
            # window sooner. Then, short of BATCH_ENOUGH calls, the batch waits for them until `longest` after the last
            # began: where the load is shared by several processes, each would otherwise run as many batches as one
            # process would with all of it, each with a part of the calls and the whole of a batch's cost.
            wait = began + self.gather - time.monotonic() if busy and not stopping else 0.0
            if wait > 0:
                self.gather_for(wait, BATCH_MAX - 1)
            enough = min(BATCH_ENOUGH, BATCH_MAX) - 1
            if busy and not stopping and self.calls.qsize() < enough:
                longer = began + self.longest - time.monotonic()
                if longer > 0:
                    wait = longer
                    self.gather_for(longer, enough)
            gave_way = False
            while not stopping and len(batch) < BATCH_MAX:
                try:
                    call = self.calls.get_nowait()
                except queue.Empty:
                    if wait > 0 or not busy or gave_way:
                        break
                    # Under load (the last batch had company), the event loop may be about to hand over more calls
                    # but is waiting for the GIL: giving it up once lets them join this batch. Fewer, larger batches
                    # cost less per call (BENCHMARKS.md has the figures).
                    gave_way = True
                    time.sleep(0)
                    continue
                if call is None:
                    stopping = True
                else:
                    batch.append(call)
            began = time.monotonic()
            busy = len(batch) > 1
            if not batch:
                continue
            self.run_around(batch)
            by_loop: dict[asyncio.AbstractEventLoop, list[Call]] = {}
            for call in batch:
                by_loop.setdefault(call.loop, []).append(call)
            for loop, calls in by_loop.items():
                with contextlib.suppress(RuntimeError):  # that loop is closed: no one is waiting any more
                    loop.call_soon_threadsafe(_settle, calls)
        connections.close_all()


# What each batch runs inside, given the batch's calls (each a `Call`: its function and arguments), by the apps that
# need it: games.publication (the batch's updates sent together), accounts (the credentials of its calls read together).
_around_batches: list[Callable[[list[Call]], contextlib.AbstractContextManager]] = []


def around_each_batch(context: Callable[[list[Call]], contextlib.AbstractContextManager]) -> None:
    """Run every batch of database calls inside `context(calls)`."""
    if context not in _around_batches:
        _around_batches.append(context)


# What each batch of several calls runs inside, in its transaction (not the calls run again alone after it failed).
_inside_batches: list[Callable[[list[Call]], contextlib.AbstractContextManager]] = []


def inside_each_batch(context: Callable[[list[Call]], contextlib.AbstractContextManager]) -> None:
    """Run the calls of every batch of several database calls inside `context(calls)`, within their transaction."""
    if context not in _inside_batches:
        _inside_batches.append(context)


_thread: DatabaseThread | OnTheLoop | None = None
_started = threading.Lock()


def start() -> None:
    """Start this process's database thread, once (or, with TAB_DATABASE_CALLS=loop, run the calls on the event loop
    from now on); from then on the API's database calls go there."""
    global _thread
    with _started:
        if _thread is None and settings.TAB_DATABASE_CALLS == "loop":
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
            _thread = OnTheLoop()
        elif _thread is None:
            thread = DatabaseThread()
            thread.thread.start()
            _thread = thread


def _checked_first[**P, R](function: Callable[P, R]) -> Callable[P, R]:
    """`function`, run where Django's request checks are not made: the connection checked first (without `start()`)."""

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        # Inside a transaction (a test's), the connection is the transaction's: it must not be swapped.
        if not connection.in_atomic_block:
            close_old_connections()
        return function(*args, **kwargs)

    return run


def in_database_thread[**P, R](function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """Return a coroutine function that runs `function` in the database thread."""
    run = _checked_first(function)

    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if _thread is not None:
            return await _thread.submit(function, args, kwargs)
        return await sync_to_async(run)(*args, **kwargs)

    return call


def submit[R](function: Callable[..., R], *args: Any) -> "asyncio.Future[R]":
    """Run `function(*args)` in the database thread and return the future of its outcome, for a caller on the event
    loop that is no coroutine (a protocol's callbacks: protocols/fish/server.py)."""
    if _thread is not None:
        return _thread.submit(function, args, {})
    return asyncio.ensure_future(sync_to_async(_checked_first(function))(*args))


def in_worker_thread[**P, R](function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """Run a stream's database read in a worker thread, its connection closed afterwards: a stream may stay open
    for hours, and must not hold a database connection meanwhile."""

    def read(*args: P.args, **kwargs: P.kwargs) -> R:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(read, thread_sensitive=False)


def close_request_connections(**kwargs: Any) -> None:
    """At the end of a request that Django's own handler served (pages, the admin, the web transports of the games):
    under ASGI it ran in a thread of its own, and a connection kept for CONN_MAX_AGE would outlive that thread, one
    per request, until PostgreSQL refuses more clients. The database thread keeps its one connection."""
    if not isinstance(_thread, DatabaseThread) or threading.current_thread() is not _thread.thread:
        connections.close_all()
