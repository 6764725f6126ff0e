from django.db import models

from games.models import Game


class Tournament(models.Model):
    """A tournament of the Fish protocol: one game for 2 to 4 players, named by its clients, made at its first join
    with its board's seed; its match (`game`) starts when its last seat is taken."""

    # The tournament_id as its clients name it (an integer as its decimal text; a NUL, which PostgreSQL cannot store,
    # shown as U+FFFD), and the SHA-256 of its exact text, by which it is found.
    name = models.CharField(max_length=65)
    key = models.CharField(max_length=64, unique=True)
    players = models.PositiveSmallIntegerField()
    # The board is a function of this seed (games/rules/fish.py), so that it is known before the game starts.
    seed = models.BigIntegerField()
    game = models.OneToOneField(Game, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Entrant(models.Model):
    """A player of a tournament: its seat (0 is red) and the SHA-256 of its token, which names it in every request
    (the token itself is shown once, to the client that joined)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entrants")
    seat = models.PositiveSmallIntegerField()
    token = models.CharField(max_length=64, unique=True)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tournament", "seat"]
        constraints = [models.UniqueConstraint(fields=["tournament", "seat"], name="fish_entrant_seat_unique")]

    def __str__(self) -> str:
        return f"seat {self.seat} of {self.tournament_id}"
