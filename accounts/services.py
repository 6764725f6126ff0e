"""Accounts: registration and the password check that every API call makes."""

import re

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from tabsite import limits

from . import credentials

User = get_user_model()

NICK_MAX_LENGTH = 32
PASSWORD_MAX_LENGTH = 128
# A new nick: letters of any script, digits, '.', '_' and '-' (\w is Unicode-aware: letters, digits and '_').
NICK_RULE = re.compile(rf"[\w.-]{{1,{NICK_MAX_LENGTH}}}")
NICK_RULE_TEXT = f"a nick is 1 to {NICK_MAX_LENGTH} letters, digits, '.', '_' or '-'"


class AuthenticationFailed(Exception):
    """The nick and password do not match an active account; str() is the message for the client."""


class InvalidNick(ValueError):
    """A new account's nick breaks the rule; str() is the message for the client (400)."""


def nick_is_valid(nick: str) -> bool:
    return NICK_RULE.fullmatch(nick) is not None


def user_register(*, nick: str, password: str) -> int:
    """Create the account, or confirm the password of an existing one; return the user id."""
    limits.check_login(nick)
    user_id = credentials.remembered_user_id(nick, password)
    if user_id is not None:
        return user_id
    if not nick_is_valid(nick):
        # Accounts made before the rule keep working: for them, registering again is a password check.
        if User.objects.filter(username=nick).exists():
            return user_authenticate(nick=nick, password=password)
        raise InvalidNick(f"Invalid nick: {NICK_RULE_TEXT}")
    user = User(username=nick)
    # Hash before the transaction: on SQLite a transaction holds the write lock, and a hash takes long.
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:
        # Registered meanwhile (or before): then this is a password check.
        return user_authenticate(nick=nick, password=password)
    credentials.remember(nick, password, user.pk)
    return user.pk


def user_authenticate(*, nick: str, password: str) -> int:
    """Return the id of the active user with this nick and password, or raise AuthenticationFailed."""
    # Before the remembered pairs: while a nick is throttled, a right guess must not be told from a wrong one.
    limits.check_login(nick)
    user_id = credentials.remembered_user_id(nick, password)
    if user_id is not None:
        return user_id
    user = User.objects.filter(username=nick).only("id", "username", "password", "is_active").first()
    if user is None:
        raise AuthenticationFailed("User not registered")
    if not user.is_active:
        raise AuthenticationFailed("This account is disabled")
    if not user.check_password(password):
        limits.login_failed(nick)
        raise AuthenticationFailed("User registered with a different password")
    credentials.remember(nick, password, user.pk)
    return user.pk
