from django.contrib.auth import get_user_model
from django.db.models import Count, F, FilteredRelation, FloatField, Q, QuerySet, Sum
from django.db.models.expressions import OrderBy
from django.db.models.functions import Cast, NullIf

from .models import Ranking, Rating

# The orders of a ranking table, by the column named in `?sort=`, each with its tie-breaks. The first is the
# ranking function's own order (most victories, then fewer games, then nick).
TABLE_ORDERS = {
    "victories": ("-victories", "games", "nick"),
    "games": ("-games", "-victories", "nick"),
    "rate": ("-rate", "-games", "nick"),
    "rating": ("-rating", "deviation", "nick"),
    "nick": ("nick",),
}
DEFAULT_ORDER = "victories"


def ranking_top(*, group: int, size: int, limit: int = 10) -> list[dict]:
    """Return the best players of a (group, size): most victories first, then fewer games, then nick."""
    rows = (
        Ranking.objects.filter(group=group, size=size)
        .order_by("-victories", "games", "player__username")
        .values_list("player__username", "victories", "games")[:limit]
    )
    return [{"nick": nick, "victories": victories, "games": games} for nick, victories, games in rows]


def table_order(sort: str | None) -> str:
    """Return a valid `?sort=` value: a column of TABLE_ORDERS, reversed with a leading '-'; else the default."""
    if sort and sort.removeprefix("-") in TABLE_ORDERS:
        return sort
    return DEFAULT_ORDER


def _reversed(field: str) -> str:
    return field[1:] if field.startswith("-") else f"-{field}"


def _order_by(field: str) -> OrderBy:
    # Players without a rating yet (games finished before ratings existed) come last, whatever the direction.
    if field.startswith("-"):
        return F(field[1:]).desc(nulls_last=True)
    return F(field).asc(nulls_last=True)


def ranking_table(*, group: int, size: int, sort: str = DEFAULT_ORDER) -> QuerySet:
    """Return the whole ranking of a (group, size) in the order `sort` names, each row with the player's rating
    on that board size (one query: the rating is joined in)."""
    order = TABLE_ORDERS[sort.removeprefix("-")]
    if sort.startswith("-"):
        order = tuple(_reversed(field) for field in order)
    return (
        Ranking.objects.filter(group=group, size=size)
        .annotate(
            sized=FilteredRelation("player__ratings", condition=Q(player__ratings__size=F("size"))),
            nick=F("player__username"),
            rate=Cast("victories", FloatField()) / NullIf(Cast("games", FloatField()), 0.0),
            rating=F("sized__rating"),
            deviation=F("sized__deviation"),
        )
        .order_by(*(_order_by(field) for field in order))
        .values("nick", "victories", "games", "rate", "rating", "deviation")
    )


def ranking_tables() -> QuerySet:
    """Return every (group, size) that has results, with its number of players and of games."""
    return (
        Ranking.objects.values("group", "size")
        .annotate(players=Count("id"), games=Sum("games") / 2)
        .order_by("group", "size")
    )


def player_ratings(player_id: int) -> list[Rating]:
    """Return a player's record on each board size they played: rating, games and victories."""
    return list(Rating.objects.filter(player_id=player_id).order_by("size"))


def player_by_nick(nick: str):
    """Return the user with this nick, or None."""
    return get_user_model().objects.filter(username=nick).only("id", "username", "date_joined", "is_active").first()
