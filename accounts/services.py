"""Accounts: registration and the password check that every API call makes.

Both are coroutines, because they run in two kinds of thread: the database work in the process's database thread
(core/dbthread.py), and password hashing, hundreds of milliseconds of CPU that releases the GIL, in
a worker thread, so that hashing never holds up the games of other players.
"""

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, make_password
from django.db import IntegrityError, transaction
from django.utils import timezone

from core import limits
from core.caching import cache_is_shared
from core.dbthread import Call
from core.dbthread import in_database_thread as _in_database_thread
from core.errors import Refusal

from . import credentials, hashing
from .models import NickKey, SignedInSession
from .nickrule import NICK_RULE_TEXT, nick_is_valid, nick_key

User = get_user_model()

PASSWORD_MAX_LENGTH = 128


class AuthenticationFailed(Refusal):
    """The nick and password do not match an active account; str() is the message for the client."""

    status = 401


class InvalidNick(Refusal):
    """A new account's nick breaks the rule; str() is the message for the client (400)."""


def remembered_user_id(nick: str, password: str) -> int | None:
    """Return the user id verified recently for this nick and password, unless the nick is throttled."""
    # The nick's wrong passwords and its remembered pair in one trip to the cache (Redis: each action asks).
    failures = limits.login_failures(nick)
    also = () if failures is None else (failures[0],)
    user_id, found = credentials.remembered_user_id_with(nick, password, also)
    # Before the remembered pair's answer: while a nick is throttled, a right guess must not be told from a wrong one.
    if failures is not None:
        limits.check_login_failures(failures, found.get(failures[0]) or 0)
    return user_id


def checks_login[F: Callable[..., Any]](function: F) -> F:
    """Mark a database call whose first argument is the (nick, password) it checks with `remembered_user_id`: the
    credentials of a batch's calls so marked are read from the shared cache together (`read_ahead`)."""
    function.checks_login = True  # type: ignore[attr-defined]
    return function


def read_ahead(calls: list[Call]) -> contextlib.AbstractContextManager[None]:
    """Around a batch of database calls (core.dbthread.around_each_batch): with a shared cache (Redis), the remembered
    pairs and wrong-password counts of the players of its calls marked `checks_login`, read in one trip, where each
    call made its own, one after the other, each waited for by the whole batch."""
    keys: list[str] = []
    for call in calls if len(calls) > 1 and cache_is_shared() else ():
        login = call.args[0] if call.args and getattr(call.function, "checks_login", False) else None
        if isinstance(login, tuple) and len(login) == 2 and isinstance(login[0], str):
            # The count's key names the client's address, which the call's own context holds.
            failures = call.context.run(limits.login_failures, login[0])
            if failures is not None:
                keys.append(failures[0])
            elif credentials.believed_user_id(*login) is not None:
                continue  # nothing to read for this call (`remembered_user_id`)
            keys.append(credentials.key_of(login[0]))
    return credentials.reading_ahead(keys) if len(keys) > 1 else contextlib.nullcontext()


@dataclass(frozen=True)
class StoredAccount:
    user_id: int
    password: str  # the encoded hash
    is_active: bool


def _stored_account(nick: str) -> StoredAccount | None:
    row = User.objects.filter(username=nick).values_list("id", "password", "is_active").first()
    return None if row is None else StoredAccount(*row)


def _nick_taken_as(nick: str) -> str | None:
    """Return the nick of the account whose nick is the same as `nick` under the nick rule, if there is one."""
    return NickKey.objects.filter(key=nick_key(nick)).values_list("user__username", flat=True).first()


def _registration(nick: str) -> tuple[StoredAccount | None, str | None]:
    """Return the account of this exact nick, if any, and the nick of an account that is the same nick."""
    account = _stored_account(nick)
    return account, None if account is not None else _nick_taken_as(nick)


def _account_create(nick: str, encoded: str) -> int | None:
    """Create the account with an already hashed password; return its id, or None if the nick is taken."""
    user = User(username=nick, password=encoded)
    # The nick's key is taken with it, or not at all (accounts/signals.py).
    user._nick_key_strict = True
    try:
        with transaction.atomic():
            user.save()
            return user.pk
    except IntegrityError:
        return None


def _password_store(user_id: int, encoded: str) -> None:
    User.objects.filter(pk=user_id).update(password=encoded)


def password_check(password: str, encoded: str) -> tuple[bool, str | None]:
    """Return whether the password matches, and its new hash when the stored one uses outdated parameters."""
    upgraded: list[str] = []
    matches = check_password(password, encoded, setter=lambda raw: upgraded.append(make_password(raw)))
    return matches, upgraded[0] if upgraded else None


async def _hashing(password: str) -> str:
    await _in_database_thread(limits.hash_spent)()
    return await hashing.gate().run(make_password, password)


async def _checking(password: str, encoded: str) -> tuple[bool, str | None]:
    await _in_database_thread(limits.hash_spent)()
    return await hashing.gate().run(password_check, password, encoded)


async def user_register(*, nick: str, password: str) -> int:
    """Create the account, or confirm the password of an existing one; return the user id."""
    user_id = await _in_database_thread(remembered_user_id)(nick, password)
    if user_id is not None:
        return user_id
    account, taken_as = await _in_database_thread(_registration)(nick)
    if account is None:
        # Accounts made before the rule keep working: for them, registering again is a password check.
        if not nick_is_valid(nick):
            raise InvalidNick(f"Invalid nick: {NICK_RULE_TEXT}")
        _refuse_taken(nick, taken_as)
        user_id = await _in_database_thread(_account_create)(nick, await _hashing(password))
        if user_id is not None:
            await _in_database_thread(credentials.remember)(nick, password, user_id)
            return user_id
        _refuse_taken(nick, await _in_database_thread(_nick_taken_as)(nick))
    # Registered before, or meanwhile: then this is a password check (the remembered pairs were looked up above).
    return await user_verify(nick=nick, password=password)


def _refuse_taken(nick: str, other: str | None) -> None:
    if other is not None and other != nick:
        raise InvalidNick(f"Invalid nick: the same nick as '{other}', already registered")


async def user_authenticate(*, nick: str, password: str) -> int:
    """Return the id of the active user with this nick and password, or raise AuthenticationFailed."""
    user_id = await _in_database_thread(remembered_user_id)(nick, password)
    if user_id is not None:
        return user_id
    return await user_verify(nick=nick, password=password)


async def user_verify(*, nick: str, password: str) -> int:
    """Check the password against its stored hash (not the cache of verified pairs); return the user id.

    The caller has checked that the nick is not throttled (`remembered_user_id`)."""
    # What was forgotten so far: a pair whose account changes while its hash is checked must not be believed after.
    before = credentials.learning()
    account = await _in_database_thread(_stored_account)(nick)
    if account is None:
        raise AuthenticationFailed("User not registered")
    if not account.is_active:
        raise AuthenticationFailed("This account is disabled")
    matches, upgraded = await _checking(password, account.password)
    if not matches:
        await _in_database_thread(limits.login_failed)(nick)
        raise AuthenticationFailed("User registered with a different password")
    if upgraded is not None:
        await _in_database_thread(_password_store)(account.user_id, upgraded)
    await _in_database_thread(credentials.remember)(nick, password, account.user_id, before)
    return account.user_id


def user_set_active(*, user_ids: list[int], active: bool) -> int:
    """Activate or deactivate accounts; return how many changed. A deactivated account's API calls get 401."""
    with transaction.atomic():
        users = list(User.objects.select_for_update().filter(pk__in=user_ids, is_active=not active))
        for user in users:
            user.is_active = active
            # save(), not update(): its post_save signal drops the remembered credentials of the account.
            user.save(update_fields=["is_active"])
    return len(users)


# The accounts in the seats of games whose players are anonymous (draughts rooms, Plakoto tables taken by a
# username, Fish tournaments): seat 0's, seat 1's, and so on. Whoever holds a seat's secret plays it; these accounts
# never log in.
ANONYMOUS = ("anonymous-white", "anonymous-black", "anonymous-3", "anonymous-4")


def anonymous_players(count: int = 2) -> tuple[int, ...]:
    """Return the ids of the anonymous accounts of the first `count` seats (made on first use)."""
    User = get_user_model()
    names = ANONYMOUS[:count]
    found = dict(User.objects.filter(username__in=names).values_list("username", "pk"))
    for username in names:
        if username not in found:
            found[username] = User.objects.get_or_create(username=username, defaults={"password": make_password(None)})[
                0
            ].pk
    return tuple(found[username] for username in names)


def _session_store():
    return import_module(settings.SESSION_ENGINE).SessionStore


def session_signed_in(*, user_id: int, session_key: str) -> None:
    """Note that the account signed in to this session, forgetting its sessions that have ended since."""
    store = _session_store()
    ended = [
        key
        for key in SignedInSession.objects.filter(user_id=user_id).values_list("session_key", flat=True)
        if not store().exists(key)
    ]
    SignedInSession.objects.filter(session_key__in=[*ended, session_key]).delete()
    SignedInSession.objects.create(user_id=user_id, session_key=session_key)


def session_signed_out(*, session_key: str) -> None:
    SignedInSession.objects.filter(session_key=session_key).delete()


def sessions_end(*, user_id: int) -> int:
    """Sign the account out of every session it signed in to, on every browser and device; return how many."""
    store = _session_store()
    keys = list(SignedInSession.objects.filter(user_id=user_id).values_list("session_key", flat=True))
    for key in keys:
        store(session_key=key).delete()
    SignedInSession.objects.filter(session_key__in=keys).delete()
    return len(keys)


def sessions_clean() -> int:
    """Delete the sessions that have expired (the session engine's own cleanup) and the notes of those an account
    signed in to; return how many notes went. A session lives SESSION_COOKIE_AGE after its last change: only notes
    older than that are looked at."""
    store = _session_store()
    store.clear_expired()
    since = timezone.now() - timedelta(seconds=settings.SESSION_COOKIE_AGE)
    old = SignedInSession.objects.filter(signed_in_at__lt=since)
    ended = [key for key in old.values_list("session_key", flat=True) if not store().exists(key)]
    return SignedInSession.objects.filter(session_key__in=ended).delete()[0]
