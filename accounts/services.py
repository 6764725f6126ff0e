"""Accounts: registration and the password check that every API call makes."""

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from . import credentials

User = get_user_model()

NICK_MAX_LENGTH = 32
PASSWORD_MAX_LENGTH = 128


class AuthenticationFailed(Exception):
    """The nick and password do not match an active account; str() is the message for the client."""


def user_register(*, nick: str, password: str) -> int:
    """Create the account, or confirm the password of an existing one; return the user id."""
    user_id = credentials.remembered_user_id(nick, password)
    if user_id is not None:
        return user_id
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
    user_id = credentials.remembered_user_id(nick, password)
    if user_id is not None:
        return user_id
    user = User.objects.filter(username=nick).only("id", "username", "password", "is_active").first()
    if user is None:
        raise AuthenticationFailed("User not registered")
    if not user.is_active:
        raise AuthenticationFailed("This account is disabled")
    if not user.check_password(password):
        raise AuthenticationFailed("User registered with a different password")
    credentials.remember(nick, password, user.pk)
    return user.pk


def user_set_active(*, user_ids: list[int], active: bool) -> int:
    """Activate or deactivate accounts; return how many changed. A deactivated account's API calls get 401."""
    with transaction.atomic():
        users = list(User.objects.select_for_update().filter(pk__in=user_ids, is_active=not active))
        for user in users:
            user.is_active = active
            # save(), not update(): its post_save signal drops the remembered credentials of the account.
            user.save(update_fields=["is_active"])
    return len(users)
