from django.db.models import F

from . import glicko2
from .models import Ranking, Rating


def ranking_record(*, group: int, size: int, player_ids: list[int], winner_id: int | None) -> None:
    """Count a finished game for both players, and a victory for its winner (called inside the game's transaction)."""
    # Always in the same order, so that two games of the same players finishing at once cannot deadlock.
    for player_id in sorted(player_ids):
        Ranking.objects.get_or_create(group=group, size=size, player_id=player_id)
        # F() increments: two games of the same player finishing at once both count.
        Ranking.objects.filter(group=group, size=size, player_id=player_id).update(
            games=F("games") + 1, victories=F("victories") + (1 if player_id == winner_id else 0)
        )
    rating_record(size=size, player_ids=player_ids, winner_id=winner_id)


def rating_record(*, size: int, player_ids: list[int], winner_id: int | None) -> None:
    """Update both players' Glicko-2 ratings on this board size after their game (no winner counts as a draw)."""
    first, second = player_ids
    for player_id in sorted(player_ids):
        Rating.objects.get_or_create(size=size, player_id=player_id)
    # Both rows locked, in a fixed order: each new rating depends on the other player's rating before the game.
    ratings = {
        rating.player_id: rating
        for rating in Rating.objects.select_for_update().filter(size=size, player_id__in=player_ids).order_by("player")
    }
    score = 1.0 if winner_id == first else 0.0 if winner_id == second else 0.5
    after = glicko2.rate_game(ratings[first].glicko, ratings[second].glicko, score)
    for player_id, new in zip(player_ids, after, strict=True):
        rating = ratings[player_id]
        rating.rating, rating.deviation, rating.volatility = new.rating, new.deviation, new.volatility
        rating.games += 1
        rating.victories += 1 if player_id == winner_id else 0
        rating.save()


def rankings_rebuild(results: list[tuple[int, int, int, int, int]]) -> None:
    """Replace every ranking and rating by those of `results`: (group, size, initial, second, winner) user ids of
    the games that count, in the order they finished (ratings depend on it)."""
    rankings: dict[tuple[int, int, int], Ranking] = {}
    ratings: dict[tuple[int, int], Rating] = {}
    for group, size, initial, second, winner in results:
        for player in (initial, second):
            ranking = rankings.setdefault((group, size, player), Ranking(group=group, size=size, player_id=player))
            ranking.games += 1
            ranking.victories += player == winner
        first, other = (ratings.setdefault((size, p), Rating(size=size, player_id=p)) for p in (initial, second))
        after = glicko2.rate_game(first.glicko, other.glicko, 1.0 if winner == initial else 0.0)
        for rating, new in ((first, after[0]), (other, after[1])):
            rating.rating, rating.deviation, rating.volatility = new.rating, new.deviation, new.volatility
            rating.games += 1
            rating.victories += rating.player_id == winner
    Ranking.objects.all().delete()
    Rating.objects.all().delete()
    Ranking.objects.bulk_create(rankings.values(), batch_size=500)
    Rating.objects.bulk_create(ratings.values(), batch_size=500)
