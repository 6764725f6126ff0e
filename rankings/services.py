from django.db.models import F

from .models import Ranking


def ranking_record(*, group: int, size: int, player_ids: list[int], winner_id: int | None) -> None:
    """Count a finished game for both players, and a victory for its winner (called inside the game's transaction)."""
    # Always in the same order, so that two games of the same players finishing at once cannot deadlock.
    for player_id in sorted(player_ids):
        Ranking.objects.get_or_create(group=group, size=size, player_id=player_id)
        # F() increments: two games of the same player finishing at once both count.
        Ranking.objects.filter(group=group, size=size, player_id=player_id).update(
            games=F("games") + 1, victories=F("victories") + (1 if player_id == winner_id else 0)
        )
