"""SQLite's checkpoints in a server process (core/checkpoints.py): its connections checkpoint later than SQLite's
default, and a thread of their own copies the log's pages back into the database file meanwhile."""

import threading
import time

import pytest
from django.db import connection, connections

from core import checkpoints
from games.models import Game

pytestmark = pytest.mark.django_db(transaction=True)


def in_new_thread(work):
    """Run `work()` on a connection of a new thread (a new connection, as the server's threads open theirs)."""
    result = {}

    def run() -> None:
        try:
            result["value"] = work()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result["value"]


def autocheckpoint() -> int:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_autocheckpoint")
        return cursor.fetchone()[0]


def write_pages() -> int:
    """Write a few hundred pages to the log; return the connection's checkpoint limit."""
    for number in range(40):
        Game.objects.create(kind="tab", public_id=f"checkpoints-{number}", state={"padding": "x" * 40_000})
    return autocheckpoint()


@pytest.fixture
def started():
    """Start the checkpoints as a server's start-up does; their thread, or None where there is none (PostgreSQL)."""
    checkpoints.start()
    yield checkpoints._checkpointer
    checkpoints.stop()


def test_the_servers_connections_checkpoint_later_and_the_thread_copies_the_pages(started):
    if connection.vendor != "sqlite":
        assert started is None  # PostgreSQL has no such thing
        return
    assert started is not None and started.thread.is_alive()
    # The thread's connection open first (it made a checkpoint): otherwise the writer's connection may be the last one
    # to the database when it closes, and SQLite copies the log back itself then, leaving the thread nothing to copy.
    deadline = time.monotonic() + 60
    while started.checkpoints == 0:
        assert time.monotonic() < deadline, "the thread made no checkpoint"
        time.sleep(0.05)
    assert in_new_thread(write_pages) == checkpoints.AUTOMATIC_PAGES
    # Written far below the connections' own limit: what is in the database file now, the thread copied.
    while started.pages == 0:
        assert time.monotonic() < deadline, "no page was copied back"
        time.sleep(0.05)


def test_stopped_the_connections_are_sqlites_again(started):
    if connection.vendor != "sqlite":
        return
    checkpoints.stop()
    assert not started.thread.is_alive()
    assert in_new_thread(autocheckpoint) == 1000


def test_a_database_that_cannot_be_opened_is_left_alone(tmp_path, caplog):
    missing = tmp_path / "missing.sqlite3"
    checkpointer = checkpoints.Checkpointer(str(missing), interval=0.01)
    checkpointer.start()
    checkpointer.thread.join(60)
    assert not checkpointer.thread.is_alive() and checkpointer.checkpoints == 0
    assert not missing.exists()
    assert "No SQLite checkpoints in this process" in caplog.text
