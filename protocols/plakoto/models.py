from django.conf import settings
from django.db import models

from games.models import Game


class Table(models.Model):
    """A Plakoto table of the REST API: its name, its two seats (W and B: a username, the hash of the seat's token,
    the account playing it, the last action) and its current game, made when both seats are taken.

    A table never used has no row: reads show it as just reset, and the first change makes the row."""

    name = models.CharField(max_length=32, unique=True)
    game = models.ForeignKey(Game, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    w_username = models.CharField(max_length=20, blank=True, default="")
    b_username = models.CharField(max_length=20, blank=True, default="")
    # SHA-256 of each seat's token (the token itself is shown once, to the player who took the seat).
    w_token = models.CharField(max_length=64, blank=True, default="")
    b_token = models.CharField(max_length=64, blank=True, default="")
    w_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    b_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    w_last_action = models.DateTimeField(null=True, blank=True)
    b_last_action = models.DateTimeField(null=True, blank=True)
    # When the table last changed through its API (reset, seat, move); an end by the clock is its game's.
    last_change = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name
