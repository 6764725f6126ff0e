"""Verified-credentials cache.

Every API call carries the nick and the password. A full password hash costs hundreds of milliseconds of CPU,
so a pair that was verified recently is remembered for a short while under a keyed hash: the cache never holds
the password, a wrong password never matches, and the entry is dropped when the account changes.

The cache is the shared one (Redis, with REDIS_URL), so that every process knows a pair one of them verified. Each
process also keeps the pairs it verified in a memory of its own, read only while the shared cache is unreachable:
without it, a Redis outage made every call hash again (one to two seconds a call, and players on turn lost on
time). While Redis is reachable, a process believes only Redis or, while it hears every notice of the others, its own
memory (below), so that a changed password or a deactivated account, dropped by any process, is refused by all of
them; during an outage, another process may still let a dropped pair in until it expires (TAB_CREDENTIALS_TTL).

When the cache is the process's own memory (no REDIS_URL: one server process), that memory is all there is, and the
pairs are read from it alone: every call of a player checks their pair, and the local-memory cache pickles what it
holds and checks every key it is asked for, several times the cost of the pair's own check (BENCHMARKS.md).

While the process hears every notice of the others (core/notices.py), it also believes its memory of a pair that
Redis confirmed, or that it verified itself, in the first half of the pair's life, without asking Redis: every
process that forgets a pair tells the others (`forget`), and each drops it when told. So a player's calls ask Redis
once each half TTL in each process, not at every call, with or without company in a batch. Memory learned before the
process last stopped hearing (an outage of its listener) is not believed until Redis confirms it again, nor a pair
read from Redis before its nick's forgetting was told (it may be the forgotten one); and a pair whose account was read
before its nick's forgetting is not remembered at all (its password may have changed while its hash was checked). A
pair forgotten by another process can then be let in here until the notice comes: a trip through Redis, milliseconds,
as long as the listener's connection lives; a connection that dies silently is found by its TCP keep-alive within
about 25 s (games/publication.py), and a notice whose sending fails (Redis unreachable from the forgetting process
alone) is lost, so that memory is believed until the second half of its life. The forgetting process forgets once
more when its change has committed.

A pair in use stays remembered: used in the second half of its life, its life is extended to a whole TTL again (at
most one write to the cache a pair each half TTL, in each process). Otherwise every pair verified in one burst (a
class signing in at the start of a lesson) expired in the same second, and every one of their next calls queued for
a hash at once. Times are the wall clock's, as the caches' own.
"""

import contextlib
import functools
import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator

from django.conf import settings
from django.core.cache import BaseCache

from core import notices
from core.caching import cache_is_shared, thread_cache

# Pairs kept in each process's own memory; the oldest go first.
LOCAL_ENTRIES = 100_000


class _LocalPairs:
    """The pairs this process verified or Redis confirmed, by nick: each pair's fingerprint, user id, when it expires
    and the epoch of hearing (core.notices) in which it was learned, if learned while hearing every notice."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: OrderedDict[str, tuple[str, int, float, int | None]] = OrderedDict()
        # How many forgettings this process has made or heard, and the count at each nick's latest (the latest
        # LOCAL_ENTRIES nicks): what was read of a pair before its nick's forgetting is not believed after it.
        self.forgettings = 0
        self.forgotten_at: OrderedDict[str, int] = OrderedDict()

    def forget(self, key: str) -> None:
        """Forget the pair at `key`, and that it was forgotten now (`forgotten_since`)."""
        with self.lock:
            self.forgettings += 1
            self.forgotten_at[key] = self.forgettings
            self.forgotten_at.move_to_end(key)
            while len(self.forgotten_at) > LOCAL_ENTRIES:
                self.forgotten_at.popitem(last=False)
            self.entries.pop(key, None)

    def forgotten_since(self, key: str, before: tuple[int | None, int]) -> bool:
        """Whether the pair at `key` was forgotten since `before` (`learning()`), or may have been."""
        with self.lock:
            return self._forgotten_since(key, before[1])

    def _forgotten_since(self, key: str, count: int) -> bool:
        at = self.forgotten_at.get(key)
        if at is None and len(self.forgotten_at) >= LOCAL_ENTRIES:
            at = next(iter(self.forgotten_at.values()))  # the record is full: it may have held the nick
        return at is not None and at > count

    def _epoch_of(self, key: str, before: tuple[int | None, int] | None) -> int | None:
        """The epoch of hearing in which what was read of the pair at `key` after `before` may be believed (under the
        lock, so that a forgetting comes either before, and is seen, or after, and drops what was stored)."""
        if before is None or before[0] is None or before[0] != notices.epoch():
            return None
        return None if self._forgotten_since(key, before[1]) else before[0]

    def get(self, key: str) -> tuple[str, int] | None:
        with self.lock:
            entry = self.entries.get(key)
        if entry is None or entry[2] < time.time():
            return None
        return entry[0], entry[1]

    def set(self, key: str, fingerprint: str, user_id: int, before: tuple[int | None, int] | None = None) -> None:
        """Remember the pair at `key`, believed (`believed`) if it was read after `before` and still may be."""
        with self.lock:
            epoch = self._epoch_of(key, before)
            self.entries[key] = (fingerprint, user_id, time.time() + settings.TAB_CREDENTIALS_TTL, epoch)
            self.entries.move_to_end(key)
            while len(self.entries) > LOCAL_ENTRIES:
                self.entries.popitem(last=False)

    def half_gone(self, key: str) -> bool:
        """Whether this process last remembered the pair at `key` more than half a TTL ago, or never."""
        with self.lock:
            entry = self.entries.get(key)
        return entry is None or entry[2] - time.time() < settings.TAB_CREDENTIALS_TTL / 2

    def believed(self, key: str, fingerprint: str, epoch: int) -> int | None:
        """Return the user id of the pair at `key` if it is remembered with this fingerprint, in the first half of its
        life, and was learned in this `epoch` of hearing."""
        with self.lock:
            entry = self.entries.get(key)
        if entry is None or entry[3] != epoch or entry[2] - time.time() < settings.TAB_CREDENTIALS_TTL / 2:
            return None
        return entry[1] if hmac.compare_digest(entry[0], fingerprint) else None

    def confirm(self, key: str, fingerprint: str, before: tuple[int | None, int]) -> bool:
        """Note that the pair at `key`, if remembered with this fingerprint, was confirmed by what was read after
        `before`; return whether it is remembered so."""
        with self.lock:
            entry = self.entries.get(key)
            if entry is None or not hmac.compare_digest(entry[0], fingerprint):
                return False
            epoch = self._epoch_of(key, before)
            if entry[3] != epoch:
                self.entries[key] = (entry[0], entry[1], entry[2], epoch)
            return True

    def used(self, key: str, fingerprint: str) -> int | None:
        """Return the user id of the pair at `key` if it is remembered with this fingerprint; a pair used in the second
        half of its life is given a whole TTL again."""
        now = time.time()
        with self.lock:
            entry = self.entries.get(key)
            if entry is None or entry[2] < now or not hmac.compare_digest(entry[0], fingerprint):
                return None
            ttl = settings.TAB_CREDENTIALS_TTL
            if entry[2] - now < ttl / 2:
                self.entries[key] = (entry[0], entry[1], now + ttl, entry[3])
                self.entries.move_to_end(key)
        return entry[1]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.forgotten_at.clear()


local_pairs = _LocalPairs()


def key_of(nick: str) -> str:
    """The shared cache's key of the nick's remembered pair."""
    return _key_of(settings.SECRET_KEY, nick)


# The keys of the latest nicks asked for (each call of a player asks for its nick's once or twice).
@functools.lru_cache(maxsize=LOCAL_ENTRIES)
def _key_of(secret: str, nick: str) -> str:
    digest = _hmac(secret, b"nick\0" + nick.encode())
    return f"tab:credentials:{digest[:40]}"


def _fingerprint(nick: str, password: str) -> str:
    return _hmac(settings.SECRET_KEY, b"pair\0" + nick.encode() + b"\0" + password.encode())


def _hmac(secret: str, message: bytes) -> str:
    """HMAC-SHA256 of the message, in hex. Not `hmac.digest`, which gives up the GIL around OpenSSL's work: in the
    database thread of a server process each give-up waits for the busy event loop to hand the GIL back (up to the
    interpreter's switch interval, 5 ms; core/randomness.py says more). An HMAC object keeps it for a message this
    short; the digest is the same. The object keyed with the secret is made once and copied for each message (every
    call of a player asks for its pair's: 4.7 -> 2.4 us)."""
    mac = _keyed(secret).copy()
    mac.update(message)
    return mac.hexdigest()


@functools.lru_cache(maxsize=4)
def _keyed(secret: str) -> hmac.HMAC:
    return hmac.new(secret.encode(), digestmod=hashlib.sha256)


def remembered_user_id(nick: str, password: str) -> int | None:
    """Return the user id verified recently for this exact nick and password, else None."""
    return remembered_user_id_with(nick, password, ())[0]


# What the shared cache held at the keys read ahead by this thread (`reading_ahead`), MISSING where it held nothing,
# and what was heard when they were read (`learning`).
_ahead = threading.local()
MISSING = object()

# The notice (core.notices) by which a process that forgets a pair tells the others to forget it too.
FORGET = "credentials-forget"


def learning() -> tuple[int | None, int]:
    """What was heard before a read (of Redis, of an account): the epoch of hearing and the forgettings so far."""
    return notices.epoch(), local_pairs.forgettings


@contextlib.contextmanager
def reading_ahead(keys: list[str]) -> Iterator[None]:
    """Read the shared cache (Redis) at these keys now, in one trip, and answer the reads of this thread inside the
    block that ask for no other key from what was read (a batch of database calls: one trip for all its players' pairs
    instead of one each). What this thread remembers or forgets meanwhile is read afresh."""
    before = learning()
    held = thread_cache().get_many(keys)
    _ahead.values = {key: held.get(key, MISSING) for key in keys}
    _ahead.before = before
    try:
        yield
    finally:
        _ahead.values = None


def _read(cache: BaseCache, keys: list[str]) -> tuple[dict, tuple[int | None, int]]:
    """What the cache holds at `keys`, and what was heard before it was read (`learning`)."""
    ahead: dict | None = getattr(_ahead, "values", None)
    if ahead is not None and all(key in ahead for key in keys):
        return {key: value for key in keys if (value := ahead[key]) is not MISSING}, _ahead.before
    before = learning()
    return cache.get_many(keys), before


def _forget_ahead(key: str) -> None:
    ahead: dict | None = getattr(_ahead, "values", None)
    if ahead is not None:
        ahead.pop(key, None)


def believed_user_id(nick: str, password: str) -> int | None:
    """The user id of this exact pair if this process may believe its own memory of it now, without asking Redis:
    while it hears every notice, a pair it learned in this epoch of hearing, in the first half of its life."""
    epoch = notices.epoch()
    if epoch is None or not isinstance(password, str) or not cache_is_shared():
        return None
    return local_pairs.believed(nick, _fingerprint(nick, password), epoch)


def remembered_user_id_with(nick: str, password: str, keys: tuple[str, ...]) -> tuple[int | None, dict]:
    """`remembered_user_id`, and what the cache holds at other `keys`, read in the same trip (a dict without the keys
    it does not hold). With no other keys, a pair this process may believe (`believed_user_id`) costs no trip."""
    cache = thread_cache()
    if not cache_is_shared():
        # The process's own cache: what this process remembered is all there is.
        return local_pairs.used(nick, _fingerprint(nick, password)), cache.get_many(keys) if keys else {}
    if not keys and (believed := believed_user_id(nick, password)) is not None:
        return believed, {}
    key = key_of(nick)
    found, before = _read(cache, [key, *keys])
    entry = found.pop(key, None)
    # A miss, or the shared cache unreachable? django-redis answers None for both, but has_key answers None only for
    # the latter (a bool otherwise): asked on a miss alone, which is rare.
    if entry is None and cache.has_key(key) is None:
        return _user_id(local_pairs.get(nick), nick, password), found
    user_id = _user_id(entry, nick, password)
    if user_id is not None:
        # Extended, not written again: a pair forgotten meanwhile (a changed password) stays forgotten. A pair this
        # process does not hold (another verified it) is extended too: held here, it is believed for half a TTL.
        renew = local_pairs.half_gone(nick) or not local_pairs.confirm(nick, entry[0], before)
        if renew and cache.touch(key, settings.TAB_CREDENTIALS_TTL):
            local_pairs.set(nick, entry[0], user_id, before)
    return user_id, found


def _user_id(entry: tuple | None, nick: str, password: str) -> int | None:
    if entry is None or not hmac.compare_digest(entry[0], _fingerprint(nick, password)):
        return None
    user_id: int = entry[1]
    return user_id


def remember(nick: str, password: str, user_id: int, before: tuple[int | None, int] | None = None) -> None:
    """Remember a pair just verified, here and in Redis, unless its nick was forgotten since `before` (`learning()`,
    taken before its account was read: its password may have changed meanwhile, and the next call checks it again)."""
    before = learning() if before is None else before
    if local_pairs.forgotten_since(nick, before):
        return
    fingerprint = _fingerprint(nick, password)
    if cache_is_shared():
        key = key_of(nick)
        thread_cache().set(key, (fingerprint, user_id), settings.TAB_CREDENTIALS_TTL)
        _forget_ahead(key)
        if local_pairs.forgotten_since(nick, before):  # forgotten while it was written: not left in Redis either
            thread_cache().delete(key)
            return
    local_pairs.set(nick, fingerprint, user_id, before)


def forget(nick: str) -> None:
    """Forget the nick's remembered pair, here, in Redis, and (told) in every other process."""
    local_pairs.forget(nick)
    if cache_is_shared():
        key = key_of(nick)
        thread_cache().delete(key)
        _forget_ahead(key)
    notices.tell(FORGET, nick)


def forgotten_elsewhere(nick: str) -> None:
    """What a process does when told that a pair was forgotten (a notice, core.notices): forget it here too."""
    local_pairs.forget(nick)


notices.on_notice(FORGET, forgotten_elsewhere)
