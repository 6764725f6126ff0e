"""Nicks by user id, remembered by each process, with whether the account is a computer player's.

A nick never changes once its account exists (the admin shows it read-only), so a game's snapshot can name its
players without joining the users' table into the query that locks the game: that join was a fifth of the
database work of every action. Whether an account plays by itself (games/bots/runner.py) is read in the same query.
"""

import functools
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import Exists, OuterRef

# The group of the computer players' accounts.
COMPUTER_PLAYERS = "computer players"


class Account(NamedTuple):
    nick: str
    computer: bool


# Stands for the user's id while the query is built, to find its place among the query's parameters.
_USER_ID = -1


@functools.cache
def _query(vendor: str) -> tuple[str, list, int]:
    """Return the query of a user's nick and computer flag, built once by the ORM (building it each time cost many
    times what running it does), its parameters, and the place of the user's id among them."""
    computer = Group.objects.filter(name=COMPUTER_PLAYERS, user=OuterRef("pk"))
    query = get_user_model().objects.filter(pk=_USER_ID).values_list("username", Exists(computer)).query
    sql, params = query.sql_with_params()
    return sql, list(params), list(params).index(_USER_ID)


@functools.lru_cache(maxsize=100_000)
def account_of(user_id: int) -> Account:
    """Return the nick of the user with this id, and whether it is a computer player."""
    sql, params, user_at = _query(connection.vendor)
    params = params.copy()
    params[user_at] = user_id
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise get_user_model().DoesNotExist(f"no user {user_id}")
    return Account(row[0], bool(row[1]))


def nick_of(user_id: int) -> str:
    """Return the nick of the user with this id."""
    return account_of(user_id).nick


def is_computer(user_id: int | None) -> bool:
    """Return whether the account with this id is a computer player's."""
    return user_id is not None and account_of(user_id).computer
