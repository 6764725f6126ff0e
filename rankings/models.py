from django.conf import settings
from django.db import models

from . import glicko2


class Ranking(models.Model):
    """A player's record in one (group, size): games finished and victories, updated when a game ends."""

    group = models.PositiveIntegerField()
    size = models.PositiveSmallIntegerField()
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rankings")
    victories = models.PositiveIntegerField(default=0)
    games = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["group", "size", "player"], name="ranking_player_unique")]
        indexes = [models.Index(fields=["group", "size", "-victories", "games"], name="ranking_order_idx")]

    def __str__(self) -> str:
        return f"{self.player} in group {self.group}, size {self.size}: {self.victories}/{self.games}"


class Rating(models.Model):
    """A player's Glicko-2 rating on one board size (all groups together), with the games it rests on."""

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings")
    size = models.PositiveSmallIntegerField()
    rating = models.FloatField(default=glicko2.DEFAULT_RATING)
    deviation = models.FloatField(default=glicko2.DEFAULT_DEVIATION)
    volatility = models.FloatField(default=glicko2.DEFAULT_VOLATILITY)
    games = models.PositiveIntegerField(default=0)
    victories = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["player", "size"], name="rating_player_size_unique")]

    def __str__(self) -> str:
        return f"{self.player} on size {self.size}: {self.rating:.0f} ± {2 * self.deviation:.0f}"

    @property
    def glicko(self) -> glicko2.Glicko:
        return glicko2.Glicko(self.rating, self.deviation, self.volatility)

    @property
    def win_rate(self) -> float | None:
        return self.victories / self.games if self.games else None
