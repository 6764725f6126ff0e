from django.conf import settings
from django.db import models


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
