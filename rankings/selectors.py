from .models import Ranking


def ranking_top(*, group: int, size: int, limit: int = 10) -> list[dict]:
    """Return the best players of a (group, size): most victories first, then fewer games, then nick."""
    rows = (
        Ranking.objects.filter(group=group, size=size)
        .order_by("-victories", "games", "player__username")
        .values_list("player__username", "victories", "games")[:limit]
    )
    return [{"nick": nick, "victories": victories, "games": games} for nick, victories, games in rows]
