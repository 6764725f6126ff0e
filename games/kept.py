"""Values read from the database kept in memory until something they were read from changes: a protocol's answer to
its most frequent read (a Plakoto table's status, a draughts room's state), served on the event loop with no trip to the
database thread.

Each kept value depends on channels (a match's, games.publication.channel_name; a protocol's own, such as a table's
or a room's), and every committed change of a channel drops the value that depends on it: `games.publication` tells
`changed` of every change published or announced, in the thread that committed it, right after the commit and before
that change's own answer is sent; a change that publishes nothing (who holds a room's colour) calls `changed_on_commit`
itself. So a client that has its answer to a change never reads the value of before.

A value read while a change was being committed might not show it; it must not be kept. A read notes where the count
of changes stood when it began (`since`), and `keep` takes its value only if none of its channels has changed since
then; a change then drops it whichever comes first.

A change knows the value it leaves (a Plakoto move, the busiest change: both players poll next), and keeps it once
committed (`keep_on_commit`). It holds the rows of the value's channels from its read to its commit, so no other change
can come in between; one committed after it, by another thread, may be heard of before its own value is kept, and then
that value is not kept: only the changes of the change's own thread may have come since it began. What a value takes
from an earlier kept value instead of rows it holds (a draughts move keeps its room's holds as the room's last read had
them) is `settled`: kept only if no change of that channel came since at all, and no longer than the earlier value.

Only a process that commits every change of the site's tables knows when a value is out of date: without REDIS_URL
the server is one process (tabsite/gunicorn.conf.py), and values are kept; with it, other processes change the same
tables (`kept_in_this_process`), and every read goes to the database. A change made by hand outside the server (a
shell on the same database) is seen once the kept value is `LIFETIME` old.
"""

import threading
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import transaction

from .publication import EVERY_CHANNEL

# Seconds a value is kept at most, for the changes no event tells of (made outside the server).
LIFETIME = 10.0
# Keys whose values are kept, by default (the oldest kept goes first).
KEYS = 10_000
# Channels whose latest change is remembered (the oldest is forgotten first).
CHANNELS = 100_000
# Channels whose latest change each thread remembers as its own (those of one transaction, at least).
OWN = 1_000


class Kept[V]:
    """Kept values by key, and the latest change of each channel."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, keys: int = KEYS) -> None:
        self._clock = clock
        self._keys = keys
        self._lock = threading.Lock()
        self._count = 0  # changes seen so far
        # channel -> the count when it last changed; a channel forgotten changed at `_forgotten` at the latest
        self._changed: dict[str, int] = {}
        self._forgotten = 0
        # key -> (when the value expires, the value, the channels it depends on)
        self._values: dict[str, tuple[float, V, tuple[str, ...]]] = {}
        self._key_of: dict[str, str] = {}  # channel -> the key whose kept value depends on it
        self._threads = threading.local()

    def since(self) -> int:
        """Where the count of changes stands: what `keep` compares with."""
        return self._count

    def answer(self, key: str) -> V | None:
        """The value kept for the key, if one is."""
        entry = self.entry(key)
        return None if entry is None else entry[0]

    def entry(self, key: str) -> tuple[V, float] | None:
        """The value kept for the key and when it expires (on the clock given), if one is."""
        kept = self._values.get(key)
        if kept is None or kept[0] < self._clock():
            return None
        return kept[1], kept[0]

    def keep(self, key: str, since: int, channels: Iterable[str], value: V) -> bool:
        """Keep the key's value, read after `since()` gave `since` from what the `channels` tell changes of, unless
        one of them has changed since; return whether it is kept."""
        return self._keep(key, since, tuple(channels), value, {})

    def keep_on_commit(
        self,
        key: str,
        since: int,
        channels: Iterable[str],
        value: V,
        *,
        settled: Iterable[str] = (),
        expires: float | None = None,
    ) -> None:
        """Once the current transaction commits, keep the value that the change it made gives (worked out inside it,
        after `since()` gave `since`, with the rows of the `channels` locked): unless another thread has changed one of
        them since, which only this thread's own changes may have. The `settled` channels, of which the value holds
        what an earlier kept value gave rather than rows it holds locked, must not have changed since at all; the
        value then expires when that one did (`expires`, from `entry`), not later."""
        channels, settled = tuple(channels), frozenset(settled)
        transaction.on_commit(lambda: self._keep(key, since, channels, value, self._own(), settled, expires))

    def _keep(
        self,
        key: str,
        since: int,
        channels: tuple[str, ...],
        value: V,
        own: dict[str, int],
        settled: frozenset[str] = frozenset(),
        expires: float | None = None,
    ) -> bool:
        with self._lock:
            for channel in channels:
                latest = self._changed.get(channel, self._forgotten)
                if latest > since and (channel in settled or latest != own.get(channel)):
                    return False
            self._drop(key)
            if len(self._values) >= self._keys:
                self._drop(next(iter(self._values)))
            lifetime = self._clock() + LIFETIME
            self._values[key] = (lifetime if expires is None else min(expires, lifetime), value, channels)
            for channel in channels:
                self._key_of[channel] = key
            return True

    def changed(self, channel: str) -> None:
        """A change of `channel` was committed (in this thread): drop the value that depends on it (every value, for
        a write that may have changed any match: publication.EVERY_CHANNEL)."""
        if channel == EVERY_CHANNEL:
            self.changed_everywhere()
            return
        with self._lock:
            self._count += 1
            self._changed.pop(channel, None)  # to the end: the latest changed are forgotten last
            self._changed[channel] = count = self._count
            if len(self._changed) > CHANNELS:
                self._forgotten = self._changed.pop(next(iter(self._changed)))
            key = self._key_of.get(channel)
            if key is not None:
                self._drop(key)
        own = self._own()
        if len(own) >= OWN:
            own.clear()  # forgetting them only keeps fewer values
        own[channel] = count

    def changed_on_commit(self, channel: str) -> None:
        """`changed(channel)` once the current transaction commits (at once outside one): for a change that publishes
        nothing."""
        transaction.on_commit(lambda: self.changed(channel))

    def changed_everywhere(self) -> None:
        """A change of many channels at once was committed (in this thread): drop every value, and keep none read
        before."""
        with self._lock:
            self._count += 1
            self._forgotten = self._count
            self._changed.clear()
            self._values.clear()
            self._key_of.clear()

    def _own(self) -> dict[str, int]:
        """This thread's latest change of each channel it changed lately: the count when it committed it."""
        own = getattr(self._threads, "own", None)
        if own is None:
            own = self._threads.own = {}
        return own

    def _drop(self, key: str) -> None:
        kept = self._values.pop(key, None)
        for channel in kept[2] if kept is not None else ():
            if self._key_of.get(channel) == key:
                del self._key_of[channel]


def kept_in_this_process() -> bool:
    """Whether this process commits every change of the site's tables, so that it may keep values: not when other
    server processes change the same tables (REDIS_URL)."""
    return not getattr(settings, "EVENTSTREAM_REDIS", None)
