"""SQLite's checkpoints, made mostly by a thread of their own in a server process.

In WAL mode a commit appends the pages it changed to the write-ahead log, and a checkpoint copies them back into the
database file. By default the connection whose commit takes the log past 1,000 pages makes that checkpoint itself,
inside its commit: on a server that is where the database calls run (core/dbthread.py), which then copies megabytes
while every action waits behind it (a few times a second under load: most of the slowest answers, BENCHMARKS.md).

So a server process copies the pages in this thread, on a connection of its own, every CHECKPOINT_INTERVAL: a passive
checkpoint, which copies what no reader still needs and never waits for (nor holds up) the writers and readers; SQLite
does that work without the GIL. Such a checkpoint cannot finish the log while commits keep coming (they append as it
copies), and only a finished log is written again from its start: the server's own connections still checkpoint when
their commit takes the log past AUTOMATIC_PAGES, and then find nearly everything copied already. The log stays within
about that size, as with SQLite's default. Other processes (management commands) keep SQLite's default. On PostgreSQL
this module does nothing.
"""

import logging
import sqlite3
import threading
from pathlib import Path

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

# Seconds between the thread's checkpoints. A checkpoint copies each page once, however many commits changed it since
# the last one: under load an action changes a few pages (its game's row, its log's entry, their indexes), and copies
# every 0.1 s cost about 14 µs of CPU an action more than every 0.25 s at 1,000 actions a second (BENCHMARKS.md).
# Longer still saves less and leaves more to copy to a commit that takes the log past AUTOMATIC_PAGES.
CHECKPOINT_INTERVAL = 0.25
# Pages in the log past which a commit of one of the server's connections makes a checkpoint itself (SQLite's
# default: 1,000). The thread's checkpoints leave it little to copy: at 2,000 actions a second about 2,000 pages come
# in a CHECKPOINT_INTERVAL. The log stays within about 16 MB.
AUTOMATIC_PAGES = 4000


def fewer_automatic_checkpoints(sender, connection: BaseDatabaseWrapper, **kwargs) -> None:
    """Let a new SQLite connection checkpoint at AUTOMATIC_PAGES (`connection_created`)."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA wal_autocheckpoint={AUTOMATIC_PAGES}")


class Checkpointer:
    """Checkpoints of one SQLite database file, every `interval` seconds, on a connection of its own."""

    def __init__(self, path: str, interval: float = CHECKPOINT_INTERVAL) -> None:
        self.path, self.interval = path, interval
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, name="tab-sqlite-checkpoints", daemon=True)
        self.checkpoints = 0  # made so far
        self.pages = 0  # copied back to the database file so far

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()

    def run(self) -> None:
        try:
            # The database as it is: never one made here, empty, where it is missing.
            connection = sqlite3.connect(Path(self.path).resolve().as_uri() + "?mode=rw", uri=True)
        except sqlite3.Error:
            logger.exception("No SQLite checkpoints in this process: %s cannot be opened", self.path)
            return
        try:
            while not self.stopping.wait(self.interval):
                try:
                    self.checkpoint(connection)
                except sqlite3.Error:
                    # The next one may succeed (a disk hiccup); meanwhile the commits' own checkpoints do the work.
                    logger.exception("SQLite checkpoint failed")
        finally:
            connection.close()

    def checkpoint(self, connection: sqlite3.Connection) -> None:
        """Make a passive checkpoint, counting the pages it copied back."""
        _, _, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        self.checkpoints += 1
        self.pages += max(copied, 0)  # -1 when the database is not in WAL mode


_checkpointer: Checkpointer | None = None
_started = threading.Lock()


def start() -> None:
    """In a server process on SQLite: start the checkpoints' thread, and from now on let the process's connections
    checkpoint at AUTOMATIC_PAGES (a start-up step, before the database thread opens its connection)."""
    global _checkpointer
    database = connections["default"]
    if database.vendor != "sqlite" or database.is_in_memory_db():
        return
    with _started:
        if _checkpointer is None:
            connection_created.connect(fewer_automatic_checkpoints, dispatch_uid="fewer_automatic_checkpoints")
            _checkpointer = Checkpointer(str(database.settings_dict["NAME"]))
            _checkpointer.start()


def stop() -> None:
    """Stop the checkpoints (a shutdown step); SQLite makes the last one when the process's last connection closes."""
    global _checkpointer
    with _started:
        if _checkpointer is not None:
            _checkpointer.stop()
            connection_created.disconnect(dispatch_uid="fewer_automatic_checkpoints")
            _checkpointer = None
