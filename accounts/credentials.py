"""Verified-credentials cache.

Every API call carries the nick and the password. A full password hash costs hundreds of milliseconds of CPU,
so a pair that was verified recently is remembered for a short while under a keyed hash: the cache never holds
the password, a wrong password never matches, and the entry is dropped when the account changes.
"""

import hashlib
import hmac

from django.conf import settings

from core.caching import thread_cache


def _key(nick: str) -> str:
    digest = hmac.new(settings.SECRET_KEY.encode(), b"nick\0" + nick.encode(), hashlib.sha256).hexdigest()
    return f"tab:credentials:{digest[:40]}"


def _fingerprint(nick: str, password: str) -> str:
    message = b"pair\0" + nick.encode() + b"\0" + password.encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def remembered_user_id(nick: str, password: str) -> int | None:
    """Return the user id verified recently for this exact nick and password, else None."""
    entry = thread_cache().get(_key(nick))
    if entry is None:
        return None
    fingerprint, user_id = entry
    if hmac.compare_digest(fingerprint, _fingerprint(nick, password)):
        return user_id
    return None


def remember(nick: str, password: str, user_id: int) -> None:
    thread_cache().set(_key(nick), (_fingerprint(nick, password), user_id), settings.TAB_CREDENTIALS_TTL)


def forget(nick: str) -> None:
    thread_cache().delete(_key(nick))
