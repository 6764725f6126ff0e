"""The database thread: where the API's database work runs, one call at a time, on one persistent connection.

It is asgiref's thread for thread-sensitive calls (`sync_to_async`): outside a request with a thread of its own,
that is one thread per process (and, in tests driven by `async_to_sync`, the test's own thread). The API's handler
sends no request signals (tabsite/handlers.py), so the checks Django makes when a request starts are made here,
before each call: a connection past CONN_MAX_AGE, or left unusable by an error, is closed and opened again.
"""

from collections.abc import Awaitable, Callable

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connection


def in_database_thread[**P, R](function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """Return a coroutine function that runs `function` in the database thread."""

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        # Inside a transaction (a test's), the connection is the transaction's: it must not be swapped.
        if not connection.in_atomic_block:
            close_old_connections()
        return function(*args, **kwargs)

    return sync_to_async(run)
