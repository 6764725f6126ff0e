"""The answers of `GET status/` kept in memory, so that a poll is answered on the event loop, with no trip to the
database thread.

Clients of this API poll a table's status several times a second each, and most polls find it as it was. An answer
read from the database is kept for its table, and the next polls get it, until the table or its game changes: every
change of either is published (a table's own changes with `announce_on_commit`, its game's with `publish_on_commit`:
the same events that wake the table's stream), and `games.publication` tells `changed` of each one in the thread that
committed it, right after the commit and before that change's own answer is sent. So a client that has its answer to a
move, a seat or a reset never polls the answer of before.

An answer read while a change was being committed might not show it; it must not be kept. A poll notes where the count
of changes stood when it arrived (`since`), before its read began; `keep` takes its answer only if neither its table
nor its game has changed since then, and keeps it otherwise unseen. A change then drops it whichever comes first.

A move knows the status it leaves (the API's busiest change: both players poll next), and keeps it once committed
(`keep_on_commit`). It holds the rows of its table and game from its read to its commit, so no other change can come
in between; one committed after it, by another thread, may be heard of before its own answer is kept, and then that
answer is not kept: only the changes of the move's own thread may have come since it began.

Only a process that commits every change of the site's tables knows when an answer is out of date: without REDIS_URL
the server is one process (tabsite/gunicorn.conf.py), and answers are kept; with it, other processes change the same
tables, and every poll reads the database. A change made by hand outside the server (a shell on the same database)
is seen once the kept answer is `LIFETIME` old.
"""

import threading
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import transaction

# Seconds an answer is kept at most, for the changes no event tells of (made outside the server).
LIFETIME = 10.0
# Tables whose answers are kept (the oldest kept goes first); a kept answer is about 300 bytes.
TABLES = 10_000
# Channels whose latest change is remembered (one a table and one a game at most; the oldest is forgotten first).
CHANNELS = 100_000
# Channels whose latest change each thread remembers as its own (those of one transaction, at least).
OWN = 1_000


class Polls:
    """Kept answers by table, and the latest change of each channel."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._count = 0  # changes seen so far
        # channel -> the count when it last changed; a channel forgotten changed at `_forgotten` at the latest
        self._changed: dict[str, int] = {}
        self._forgotten = 0
        # table -> (when the answer expires, its text, the channels it depends on)
        self._answers: dict[str, tuple[float, bytes, tuple[str, ...]]] = {}
        self._table_of: dict[str, str] = {}  # channel -> the table whose kept answer depends on it
        self._threads = threading.local()

    def since(self) -> int:
        """Where the count of changes stands: what `keep` compares with."""
        return self._count

    def answer(self, table: str) -> bytes | None:
        """The kept answer of the table, if one is."""
        kept = self._answers.get(table)
        if kept is None or kept[0] < self._clock():
            return None
        return kept[1]

    def keep(self, table: str, since: int, channels: Iterable[str], text: bytes) -> bool:
        """Keep the table's answer, read after `since()` gave `since` from the table and the game of `channels`,
        unless one of them has changed since; return whether it is kept."""
        return self._keep(table, since, tuple(channels), text, {})

    def keep_on_commit(self, table: str, since: int, channels: Iterable[str], text: bytes) -> None:
        """Once the current transaction commits, keep the answer that the change it made gives (`text`, worked out
        inside it, after `since()` gave `since`, and with the rows of the table and the game of `channels` locked):
        unless another thread has changed one of them since, which only this thread's own changes may have."""
        channels = tuple(channels)
        transaction.on_commit(lambda: self._keep(table, since, channels, text, self._own()))

    def _keep(self, table: str, since: int, channels: tuple[str, ...], text: bytes, own: dict[str, int]) -> bool:
        with self._lock:
            for channel in channels:
                latest = self._changed.get(channel, self._forgotten)
                if latest > since and latest != own.get(channel):
                    return False
            self._drop(table)
            if len(self._answers) >= TABLES:
                self._drop(next(iter(self._answers)))
            self._answers[table] = (self._clock() + LIFETIME, text, channels)
            for channel in channels:
                self._table_of[channel] = table
            return True

    def changed(self, channel: str) -> None:
        """A change of `channel` was committed (in this thread): drop the answer that depends on it."""
        with self._lock:
            self._count += 1
            self._changed.pop(channel, None)  # to the end: the latest changed are forgotten last
            self._changed[channel] = count = self._count
            if len(self._changed) > CHANNELS:
                self._forgotten = self._changed.pop(next(iter(self._changed)))
            table = self._table_of.get(channel)
            if table is not None:
                self._drop(table)
        own = self._own()
        if len(own) >= OWN:
            own.clear()  # forgetting them only keeps fewer answers
        own[channel] = count

    def _own(self) -> dict[str, int]:
        """This thread's latest change of each channel it changed lately: the count when it committed it."""
        own = getattr(self._threads, "own", None)
        if own is None:
            own = self._threads.own = {}
        return own

    def _drop(self, table: str) -> None:
        kept = self._answers.pop(table, None)
        for channel in kept[2] if kept is not None else ():
            if self._table_of.get(channel) == table:
                del self._table_of[channel]


# This process's kept answers, or None when other processes change the tables too.
polls: Polls | None = None


def install() -> None:
    """Keep answers in this process if it is the site's only server process (no REDIS_URL), and hear of every change."""
    global polls
    from games import publication

    if getattr(settings, "EVENTSTREAM_REDIS", None) or polls is not None:
        return
    polls = Polls()
    publication.observe_changes(_changed)


def _changed(channel: str) -> None:
    if polls is not None:
        polls.changed(channel)
