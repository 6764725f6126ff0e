"""Nicks by user id, remembered by each process.

A nick never changes once its account exists (the admin shows it read-only), so a game's snapshot can name its
players without joining the users' table into the query that locks the game: that join was a fifth of the
database work of every action.
"""

import functools

from django.contrib.auth import get_user_model


@functools.lru_cache(maxsize=100_000)
def nick_of(user_id: int) -> str:
    """Return the nick of the user with this id."""
    return get_user_model().objects.values_list("username", flat=True).get(pk=user_id)
