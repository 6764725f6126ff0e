from django.conf import settings
from django.db import models

from . import glicko2


class Ranking(models.Model):
    """A player's record in one pool of one game (Tâb: a course group and board size): games finished, victories
    and points, updated when a game ends."""

    kind = models.CharField(max_length=20, default="tab")
    variant = models.CharField(max_length=20, blank=True, default="")
    pool = models.CharField(max_length=40, blank=True, default="")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rankings")
    victories = models.PositiveIntegerField(default=0)
    games = models.PositiveIntegerField(default=0)
    # What the player's results scored, in games that score them (Plakoto: 1 for a single win, 2 for a double);
    # elsewhere one a victory.
    points = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "variant", "pool", "player"], name="ranking_player_unique")
        ]
        indexes = [models.Index(fields=["kind", "variant", "pool", "-victories", "games"], name="ranking_order_idx")]

    def __str__(self) -> str:
        return f"{self.player} in {self.kind} {self.variant} {self.pool}: {self.victories}/{self.games}"


class Rating(models.Model):
    """A player's rating in one variant of one game (Tâb: a board size, all groups together), with the games it
    rests on: Glicko-2 for two-player games, Plackett-Luce (openskill) for games of more; both on the same scale
    (1500 to start, the deviation as uncertainty), so that tables read alike."""

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings")
    kind = models.CharField(max_length=20, default="tab")
    variant = models.CharField(max_length=20, blank=True, default="")
    rating = models.FloatField(default=glicko2.DEFAULT_RATING)
    deviation = models.FloatField(default=glicko2.DEFAULT_DEVIATION)
    volatility = models.FloatField(default=glicko2.DEFAULT_VOLATILITY)
    games = models.PositiveIntegerField(default=0)
    victories = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "kind", "variant"], name="rating_player_variant_unique")
        ]

    def __str__(self) -> str:
        return f"{self.player} in {self.kind} {self.variant}: {self.rating:.0f} ± {2 * self.deviation:.0f}"

    @property
    def glicko(self) -> glicko2.Glicko:
        return glicko2.Glicko(self.rating, self.deviation, self.volatility)

    @property
    def win_rate(self) -> float | None:
        return self.victories / self.games if self.games else None
