"""Limits on what one client may ask: wrong passwords per nick, requests per address, open streams per nick.

The counters live in Django's cache, so every server process shares them when the cache is Redis (REDIS_URL).
Django's primitives suffice: `cache.add` starts a counter and `cache.incr` counts, both atomic in Redis and in the
local-memory cache, and a counter's key names its one-minute window, so it expires with it. When the cache is
unreachable the limits let requests through: the game never depends on them.

A refusal raises `Throttled`, which the middleware turns into 429 `{"error": …}` with `Retry-After`.
"""

import functools
import hashlib
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from . import notices
from .caching import cache_is_shared, thread_cache
from .errors import Refusal

WINDOW = 60
# The wall clock that windows are cut from (the same in every process).
clock = time.time

# The address of the client being served, set by ClientAddressMiddleware: services check passwords without a request.
current_address: ContextVar[str] = ContextVar("current_address", default="")


class Throttled(Refusal):
    """A client asked too much; str() is the message, `retry_after` the seconds until it may try again."""

    status = 429

    def __init__(self, message: str, retry_after: int):
        super().__init__(message, retry_after=retry_after)


def client_address(request: HttpRequest) -> str:
    """Return the client's address: the peer, or what the trusted proxies in front of us say it is."""
    return address_of(request.META.get("REMOTE_ADDR", ""), request.headers.get("X-Forwarded-For", ""))


def address_of(peer: str, forwarded_for: str) -> str:
    """`client_address` of a request from `peer` with this X-Forwarded-For header ("" if none)."""
    proxies = settings.TRUSTED_PROXIES
    if proxies:
        forwarded = [part.strip() for part in forwarded_for.split(",") if part.strip()]
        # Each proxy appends the address it was reached from: the one our nearest trusted proxies did not add.
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return peer


# The digests of the latest names (a nick and an address) asked for: each call of a player asks for theirs.
@functools.lru_cache(maxsize=100_000)
def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _window() -> tuple[int, int]:
    """Return the current window's number and the seconds until it ends."""
    now = clock()
    return int(now // WINDOW), max(1, WINDOW - int(now % WINDOW))


def _counter(name: str, *who: str) -> tuple[str, int]:
    """Return the cache key of the count of `name` for `who` in this minute, and the seconds left."""
    window, left = _window()
    return f"tab:limit:{name}:{_digest(*who)}:{window}", left


def _count(name: str, *who: str, add: bool) -> tuple[int, int]:
    """Return the count of `name` for `who` in this minute (after adding one if `add`) and the seconds left."""
    key, left = _counter(name, *who)
    cache = thread_cache()
    if not add:
        return cache.get(key) or 0, left
    # A little longer than the window, so that a counter never expires while its window is on.
    cache.add(key, 0, WINDOW + 5)
    try:
        count = cache.incr(key)
    except ValueError:  # gone since add(): the cache was cleared or evicted it
        count = 1
    return count or 0, left


def check_login(nick: str) -> None:
    """Refuse a password check for a nick that had too many wrong passwords from this address this minute."""
    failures = login_failures(nick)
    if failures is not None:
        key, _ = failures
        check_login_failures(failures, thread_cache().get(key) or 0)


def login_failures(nick: str) -> tuple[str, int] | None:
    """Return the cache key of the nick's wrong passwords from this address this minute and the seconds left, or None
    when there are none to count: to be read with other keys in one trip, then given to `check_login_failures`."""
    if not settings.TAB_LOGIN_FAILURES_PER_MINUTE:
        return None
    window = _window()[0]
    if _failed_in.get(_digest(nick), -1) < window and _knows_every_failure_of(window):
        return None  # this process knows of every wrong password of this minute, and none for this nick
    return _counter("login", nick, current_address.get())


# The epoch of hearing (core.notices) and the window whose wrong passwords, given before the process began to hear in
# that epoch, it has read from Redis (`_knows_every_failure_of`).
_caught_up: tuple[int, int] | None = None


def _knows_every_failure_of(window: int) -> bool:
    """Whether this process knows of every wrong password given in `window`: with a cache of its own, it counted them
    all; with Redis, it hears every notice of the others (core.notices), and has since before the window began or has
    read the nicks given one in the window before it began to hear (`_failed_nicks`, read once an epoch)."""
    global _caught_up
    if not cache_is_shared():
        return True
    hearing = notices.hearing()
    if hearing is None:
        return False
    epoch, since = hearing
    if since <= window * WINDOW or _caught_up == (epoch, window):
        return True
    # Read after the hearing began: a wrong password given since is heard, one given before was added to the set first.
    nicks = thread_cache().smembers(_failed_nicks(window))
    if nicks is None:  # Redis unreachable (django-redis answers None)
        return False
    for digest in nicks:
        _note_failure(digest, window)
    _caught_up = (epoch, window)
    return True


def _failed_nicks(window: int) -> str:
    """The key of the set of the nicks (their digests) given a wrong password in `window`, by any process."""
    return f"tab:limit:failed-nicks:{window}"


def check_login_failures(failures: tuple[str, int], count: int) -> None:
    """`check_login`, with the count read at the key that `login_failures` gave."""
    _, left = failures
    if count >= settings.TAB_LOGIN_FAILURES_PER_MINUTE:
        raise Throttled(f"Too many wrong passwords for this nick: try again in {left} s", left)


def hash_spent() -> None:
    """Count a password hash for this address, or refuse it past the address's budget for the minute."""
    limit = settings.TAB_HASHES_PER_MINUTE
    if not limit:
        return
    count, left = _count("hash", current_address.get(), add=True)
    if count > limit:
        raise Throttled(f"Too many password checks from your address: try again in {left} s", left)


# The nicks given a wrong password (their digests), each with the window of its latest, as this process counted them
# or heard of them (a notice from the process that counted it, core.notices): a nick not here this minute has no count
# to read while the process knows of every wrong password of the minute (`login_failures`: every call of a player
# checks its nick, and a read of the count is a trip to Redis, or a pickling with a cache of the process's own). At
# most FAILED_KEPT nicks; those of past windows go first.
_failed_in: dict[str, int] = {}
FAILED_KEPT = 100_000
# The notice of a wrong password: "<window> <the nick's digest>".
LOGIN_FAILED = "login-failed"


def login_failed(nick: str) -> None:
    """Count a wrong password for a nick from this address, and tell the other processes of it."""
    if settings.TAB_LOGIN_FAILURES_PER_MINUTE:
        window, digest = _window()[0], _digest(nick)
        _note_failure(digest, window)
        _count("login", nick, current_address.get(), add=True)
        if cache_is_shared():
            # In the window's set first, for a process that begins to hear after the notice (`_knows_every_failure_of`).
            cache = thread_cache()
            cache.sadd(_failed_nicks(window), digest)
            cache.expire(_failed_nicks(window), WINDOW + 5)
            notices.tell(LOGIN_FAILED, f"{window} {digest}")


def _note_failure(digest: str, window: int) -> None:
    """Note a wrong password for the nick of `digest` in `window`; a notice late from an earlier minute moves nothing
    back."""
    if len(_failed_in) >= FAILED_KEPT:
        current = _window()[0]
        for past in [name for name, when in list(_failed_in.items()) if when < current]:
            _failed_in.pop(past, None)
    if _failed_in.get(digest, -1) < window:
        _failed_in[digest] = window


def forget_failures() -> None:
    """Forget the wrong passwords this process knows of and what it read of them (the cache they were counted in was
    emptied)."""
    global _caught_up
    _failed_in.clear()
    _caught_up = None


def failed_elsewhere(text: str) -> None:
    """What a process does when told of a wrong password given to another (a notice): note the nick's minute."""
    window, _, digest = text.partition(" ")
    _note_failure(digest, int(window))


notices.on_notice(LOGIN_FAILED, failed_elsewhere)


def _count_request(request: HttpRequest, name: str, setting: str) -> None:
    limit = getattr(settings, setting)
    if limit and request.method == "POST":
        count, left = _count(name, client_address(request), add=True)
        if count > limit:
            raise Throttled(f"Too many {name} requests from your address: try again in {left} s", left)


def per_address(name: str, setting: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Limit a view (sync or async) to settings.<setting> POST requests per client address and minute."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        if iscoroutinefunction(view):

            @functools.wraps(view)
            async def limited_async(request: HttpRequest, *args, **kwargs) -> HttpResponse:
                await sync_to_async(_count_request, thread_sensitive=False)(request, name, setting)
                return await view(request, *args, **kwargs)

            return limited_async

        @functools.wraps(view)
        def limited(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            _count_request(request, name, setting)
            return view(request, *args, **kwargs)

        return limited

    return decorate


# A stream holds a slot: a cache key that lives STREAM_SLOT_LIFETIMES keep-alive periods and is renewed while the
# stream lasts, so the slots of a server process that was killed free themselves.
STREAM_SLOT_LIFETIMES = 3


def _slot_ttl() -> int:
    return STREAM_SLOT_LIFETIMES * settings.TAB_KEEPALIVE_SECONDS


class StreamSlot:
    """A stream's slot, held while the stream lasts: renewed by the process's keep-alive timer (`renew_slots`), given
    back at its end. Without a key (no limit, or the cache unreachable) it holds nothing."""

    def __init__(self, key: str | None):
        self.key = key
        self.renewed = time.monotonic()

    def is_due(self, renewed_before: float) -> bool:
        """Whether the slot holds a key last renewed at `renewed_before` (time.monotonic()) or earlier: the timer asks
        of every stream, once a second, with `time.monotonic() - TAB_KEEPALIVE_SECONDS` read once for all."""
        return self.key is not None and self.renewed <= renewed_before

    def release(self) -> None:
        if self.key:
            thread_cache().delete(self.key)


def renew_slots(slots: list[StreamSlot]) -> None:
    """Give these slots another lifetime in the cache (blocking: the cache may be Redis)."""
    cache, ttl = thread_cache(), _slot_ttl()
    for slot in slots:
        slot.renewed = time.monotonic()
        cache.touch(slot.key, ttl)


def stream_slot(nick: str, address: str) -> StreamSlot:
    """Take one of the nick's stream slots at this address, or raise Throttled.

    Counted per nick *and address*: a stream needs no password, so a stranger who knows a player's nick and game
    could otherwise hold all of that nick's slots, and the player's own stream would be refused."""
    cap = settings.TAB_STREAMS_PER_NICK
    if not cap:
        return StreamSlot(None)
    nick_key = _digest(nick, address)
    for index in range(cap):
        key = f"tab:stream:{nick_key}:{index}"
        taken = thread_cache().add(key, 1, _slot_ttl())
        if taken is None:  # django-redis answers None when Redis is unreachable: no limit then
            return StreamSlot(None)
        if taken:
            return StreamSlot(key)
    raise Throttled(f"Too many open update streams for this nick (at most {cap})", _slot_ttl())


class LocalSlot(StreamSlot):
    """A slot counted by this process alone, in memory: nothing to renew, and it cannot outlive the process."""

    def __init__(self, counts: Counter, keys: tuple):
        super().__init__(None)
        self.counts, self.keys = counts, keys

    def release(self) -> None:
        for key in self.keys:
            self.counts[key] -= 1
            if self.counts[key] <= 0:
                del self.counts[key]


# The spectators' streams this process serves, by address and by game (read and changed on its event loop only).
_spectators: Counter = Counter()


def spectator_slot(game: str, address: str) -> StreamSlot:
    """Take a spectator's stream slot of this game at this address, or raise Throttled.

    Counted by each server process, in memory (a spectator's stream is cheap, and needs no shared count): at most
    TAB_SPECTATORS_PER_ADDRESS streams from one address, and TAB_SPECTATORS_PER_GAME of one game."""
    per_address, per_game = settings.TAB_SPECTATORS_PER_ADDRESS, settings.TAB_SPECTATORS_PER_GAME
    by_address, by_game = ("address", address), ("game", game)
    if per_address and _spectators[by_address] >= per_address:
        raise Throttled(f"Too many spectator streams from this address (at most {per_address})", _slot_ttl())
    if per_game and _spectators[by_game] >= per_game:
        raise Throttled(f"Too many spectators of this game (at most {per_game})", _slot_ttl())
    _spectators[by_address] += 1
    _spectators[by_game] += 1
    return LocalSlot(_spectators, (by_address, by_game))
