"""Nicks by user id, remembered by each process, with whether the account is a computer player's.

A nick never changes once its account exists (the admin shows it read-only), so a game's snapshot can name its
players without joining the users' table into the query that locks the game: that join was a fifth of the
database work of every action. Whether an account plays by itself (games/bots/runner.py) is read in the same query.
"""

import functools
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

# The group of the computer players' accounts.
COMPUTER_PLAYERS = "computer players"


class Account(NamedTuple):
    nick: str
    computer: bool


@functools.lru_cache(maxsize=100_000)
def account_of(user_id: int) -> Account:
    """Return the nick of the user with this id, and whether it is a computer player."""
    User = get_user_model()
    computer = Group.objects.filter(name=COMPUTER_PLAYERS, user=OuterRef("pk"))
    nick, is_computer = User.objects.filter(pk=user_id).values_list("username", Exists(computer)).get()
    return Account(nick, is_computer)


def nick_of(user_id: int) -> str:
    """Return the nick of the user with this id."""
    return account_of(user_id).nick


def is_computer(user_id: int | None) -> bool:
    """Return whether the account with this id is a computer player's."""
    return user_id is not None and account_of(user_id).computer
