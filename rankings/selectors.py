from django.contrib.auth import get_user_model
from django.db.models import Count, F, FilteredRelation, FloatField, Q, QuerySet, Sum
from django.db.models.expressions import OrderBy
from django.db.models.functions import Cast, NullIf

from games.rules import UnknownGame, find_engine

from .models import Ranking, Rating

# The orders of a ranking table, by the column named in `?sort=`, each with its tie-breaks. The first is the
# ranking function's own order (most victories, then fewer games, then nick).
TABLE_ORDERS = {
    "victories": ("-victories", "games", "nick"),
    "points": ("-points", "games", "nick"),
    "games": ("-games", "-victories", "nick"),
    "rate": ("-rate", "-games", "nick"),
    "rating": ("-rating", "deviation", "nick"),
    "nick": ("nick",),
}
DEFAULT_ORDER = "victories"


def scores_points(kind: str) -> bool:
    """Whether the game scores its results (Plakoto's single and double wins): its tables then rank by points."""
    try:
        return find_engine(kind).scored
    except UnknownGame:
        return False


def ranking_top(*, kind: str, variant: str, pool: str, limit: int = 10) -> list[dict]:
    """Return the best players of a pool: most victories first, then fewer games, then nick."""
    rows = (
        Ranking.objects.filter(kind=kind, variant=variant, pool=pool)
        .order_by("-victories", "games", "player__username")
        .values_list("player__username", "victories", "games")[:limit]
    )
    return [{"nick": nick, "victories": victories, "games": games} for nick, victories, games in rows]


def table_order(sort: str | None, default: str = DEFAULT_ORDER) -> str:
    """Return a valid `?sort=` value: a column of TABLE_ORDERS, reversed with a leading '-'; else the default."""
    if sort and sort.removeprefix("-") in TABLE_ORDERS:
        return sort
    return default


def _reversed(field: str) -> str:
    return field[1:] if field.startswith("-") else f"-{field}"


def _order_by(field: str) -> OrderBy:
    # Players without a rating yet (games finished before ratings existed) come last, whatever the direction.
    if field.startswith("-"):
        return F(field[1:]).desc(nulls_last=True)
    return F(field).asc(nulls_last=True)


def ranking_table(*, kind: str, variant: str, pool: str, sort: str = DEFAULT_ORDER) -> QuerySet:
    """Return the whole ranking of a pool in the order `sort` names, each row with the player's rating in that
    game and variant (one query: the rating is joined in)."""
    order = TABLE_ORDERS[sort.removeprefix("-")]
    if sort.startswith("-"):
        order = tuple(_reversed(field) for field in order)
    return (
        Ranking.objects.filter(kind=kind, variant=variant, pool=pool)
        .annotate(
            sized=FilteredRelation(
                "player__ratings",
                condition=Q(player__ratings__kind=F("kind"), player__ratings__variant=F("variant")),
            ),
            nick=F("player__username"),
            rate=Cast("victories", FloatField()) / NullIf(Cast("games", FloatField()), 0.0),
            rating=F("sized__rating"),
            deviation=F("sized__deviation"),
        )
        .order_by(*(_order_by(field) for field in order))
        .values("nick", "points", "victories", "games", "rate", "rating", "deviation")
    )


def _number_first(text: str) -> tuple[int, int | str]:
    # "9" before "11", and numbers before names.
    return (0, int(text)) if text.isdigit() else (1, text)


def _games(kind: str, results: int) -> int | None:
    """Return how many matches `results` player results are, in a game whose matches all have as many seats."""
    try:
        engine = find_engine(kind)
    except UnknownGame:
        return None
    return results // engine.min_seats if engine.min_seats == engine.max_seats else None


def ranking_tables() -> list[dict]:
    """Return every pool that has results, game by game, with its number of players, of results (one per player
    of a match) and of matches where that follows from the results."""
    tables = Ranking.objects.values("kind", "variant", "pool").annotate(players=Count("id"), results=Sum("games"))
    listed = [{**table, "games": _games(table["kind"], table["results"])} for table in tables]
    return sorted(listed, key=lambda t: (t["kind"], _number_first(t["pool"]), _number_first(t["variant"])))


def player_ratings(player_id: int) -> list[Rating]:
    """Return a player's record in each game and variant they played: rating, games and victories."""
    return sorted(Rating.objects.filter(player_id=player_id), key=lambda r: (r.kind, _number_first(r.variant)))


def player_by_nick(nick: str):
    """Return the user with this nick, or None."""
    return get_user_model().objects.filter(username=nick).only("id", "username", "date_joined", "is_active").first()
