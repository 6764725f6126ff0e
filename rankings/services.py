"""Every write to rankings and ratings: a finished match counted, or everything rebuilt from the matches.

A match's result is a rank for each player (1 is first; equal ranks share a place). A victory is a first place
that not everybody shares. Ratings use Glicko-2 in games for two and Plackett-Luce (openskill) in games for more,
each in its own (game, variant): the two never mix.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connections
from openskill.models import PlackettLuce

from core import prepared
from core.prepared import Prepared

from . import glicko2
from .models import Ranking, Rating

# openskill's model on Glicko's scale (its defaults times 60): a newcomer starts at 1500, as in two-player games.
PLACKETT_LUCE = PlackettLuce(mu=1500.0, sigma=500.0, beta=250.0, tau=5.0)


@dataclass(frozen=True)
class Result:
    """A finished match that counts: its game, variant and pool, each player's rank, and which rating applies."""

    kind: str
    variant: str
    pool: str
    ranks: Mapping[int, int]  # user id → rank
    multiplayer: bool  # the game seats more than two (openskill), else Glicko-2
    # user id → the points scored, in a game that scores its results; else a victory is a point.
    points: Mapping[int, int] | None = None
    # The match's own id, to tell which rating changes are whose when many are rebuilt at once.
    match: int | None = None

    def points_of(self, player_id: int) -> int:
        if self.points is not None:
            return self.points[player_id]
        return int(_victory(self.ranks[player_id], self.ranks.values()))


def _victory(rank: int, ranks: Iterable[int]) -> bool:
    return rank == 1 and any(other != 1 for other in ranks)


# user id → the rating before and after a match.
Changes = dict[int, tuple[float, float]]


# A match's end is counted and rated through statements written once from the models' metadata (SQLite's and
# PostgreSQL's upsert): through the ORM, its nine queries for two players were built anew at every end, about ten
# milliseconds of CPU on a slow machine, most of what ending a game cost (BENCHMARKS.md).
_RANKING_KEY = ("kind", "variant", "pool", "player")
_RANKING_COUNTED = ("games", "victories", "points")
_RATING_KEY = ("player", "kind", "variant")
_RATING_RATED = ("rating", "deviation", "volatility", "games", "victories")


def _upsert(model: type, key: tuple[str, ...], values: tuple[str, ...], update: str | None) -> tuple[str, list]:
    """An INSERT of a row of `model` (its `key` columns, then `values`) that, on a row with that key already, does
    `update` (`{column}` is each column of `values`) to each value column, or nothing."""
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    table = quote(model._meta.db_table)
    fields = [model._meta.get_field(name) for name in (*key, *values)]
    columns = [quote(field.column) for field in fields]
    conflict = ", ".join(columns[: len(key)])
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
    if update is None:
        return f"{head} ON CONFLICT ({conflict}) DO NOTHING", fields
    sets = ", ".join(f"{column} = {update.format(column=column, table=table)}" for column in columns[len(key) :])
    return f"{head} ON CONFLICT ({conflict}) DO UPDATE SET {sets}", fields


@cache
def _ranking_count(vendor: str) -> tuple[str, list]:
    """Add a match to a player's ranking, made if need be: increments, so that two matches of one player finishing at
    once both count."""
    return _upsert(Ranking, _RANKING_KEY, _RANKING_COUNTED, "{table}.{column} + EXCLUDED.{column}")


@cache
def _rating_made(vendor: str) -> tuple[str, list]:
    """Make a player's rating with a newcomer's values, unless it exists (two matches of a newcomer ending at once
    make one row)."""
    return _upsert(Rating, _RATING_KEY, _RATING_RATED, None)


# A player's rating, its row locked until the match's transaction ends (select_for_update()).
_rating_locked = Prepared(
    lambda kind, variant, player: (
        Rating.objects.select_for_update()
        .filter(kind=kind, variant=variant, player=player)
        .values_list("pk", *_RATING_RATED)
    ),
    [
        (Rating._meta.get_field("kind"), "stand-in kind"),
        (Rating._meta.get_field("variant"), "stand-in variant"),
        (Rating._meta.get_field("player"), -1),
    ],
)


def _run(statement: tuple[str, list], values: Iterable) -> None:
    db = connections[DEFAULT_DB_ALIAS]
    sql, fields = statement
    prepared.run(sql, [prepared.save_value(field, value, db) for field, value in zip(fields, values, strict=True)], db)


def result_record(result: Result) -> Changes:
    """Count a finished match for every player, a victory for each winner, and rate them (called inside the match's
    transaction); return each player's rating before and after."""
    vendor = connections[DEFAULT_DB_ALIAS].vendor
    # Always in the same order, so that two matches of the same players finishing at once cannot deadlock.
    for player_id in sorted(result.ranks):
        victory = int(_victory(result.ranks[player_id], result.ranks.values()))
        key = (result.kind, result.variant, result.pool, player_id)
        _run(_ranking_count(vendor), (*key, 1, victory, result.points_of(player_id)))
    return _rating_record(result)


def _starting(result: Result) -> dict[str, float]:
    """Return a newcomer's rating in the match's rating system (Glicko-2's are the model's defaults)."""
    return {"rating": PLACKETT_LUCE.mu, "deviation": PLACKETT_LUCE.sigma} if result.multiplayer else {}


def _new_rating(result: Result, player_id: int) -> Rating:
    return Rating(kind=result.kind, variant=result.variant, player_id=player_id, **_starting(result))


def _rate(result: Result, ratings: Mapping[int, Rating]) -> Changes:
    """Apply the match to the players' ratings (in memory): each new rating depends on the others' before it. Return
    each player's rating before and after."""
    players = sorted(result.ranks)
    before = {player_id: ratings[player_id].rating for player_id in players}
    if result.multiplayer:
        teams = [[PLACKETT_LUCE.rating(mu=ratings[p].rating, sigma=ratings[p].deviation)] for p in players]
        after = PLACKETT_LUCE.rate(teams, ranks=[float(result.ranks[p]) for p in players])
        for player_id, (new,) in zip(players, after, strict=True):
            ratings[player_id].rating, ratings[player_id].deviation = new.mu, new.sigma
    else:
        first, second = players
        rank_first, rank_second = result.ranks[first], result.ranks[second]
        score = 1.0 if rank_first < rank_second else 0.0 if rank_first > rank_second else 0.5
        for player_id, new in zip(
            players, glicko2.rate_game(ratings[first].glicko, ratings[second].glicko, score), strict=True
        ):
            rating = ratings[player_id]
            rating.rating, rating.deviation, rating.volatility = new.rating, new.deviation, new.volatility
    for player_id in players:
        ratings[player_id].games += 1
        ratings[player_id].victories += _victory(result.ranks[player_id], result.ranks.values())
    return {player_id: (before[player_id], ratings[player_id].rating) for player_id in players}


def _rating_record(result: Result) -> Changes:
    vendor = connections[DEFAULT_DB_ALIAS].vendor
    players = sorted(result.ranks)
    for player_id in players:
        new = _new_rating(result, player_id)
        _run(_rating_made(vendor), (player_id, result.kind, result.variant, *(getattr(new, n) for n in _RATING_RATED)))
    # Every player's row locked, in a fixed order.
    ratings = {}
    for player_id in players:
        row = _rating_locked.first(result.kind, result.variant, player_id)
        assert row is not None  # made just above
        pk, *rated = row
        ratings[player_id] = Rating(
            pk=pk,
            player_id=player_id,
            kind=result.kind,
            variant=result.variant,
            **dict(zip(_RATING_RATED, rated, strict=True)),
        )
    changes = _rate(result, ratings)
    for rating in ratings.values():
        prepared.update(Rating, rating.pk, {name: getattr(rating, name) for name in _RATING_RATED})
    return changes


def rankings_rebuild(results: Iterable[Result]) -> dict[int, Changes]:
    """Replace every ranking and rating by those of `results`, the matches that count in the order they finished
    (ratings depend on it); return each match's rating changes, by its `match` id."""
    changes: dict[int, Changes] = {}
    rankings: dict[tuple[str, str, str, int], Ranking] = {}
    ratings: dict[tuple[str, str, int], Rating] = {}
    for result in results:
        for player_id, rank in result.ranks.items():
            ranking = rankings.setdefault(
                (result.kind, result.variant, result.pool, player_id),
                Ranking(kind=result.kind, variant=result.variant, pool=result.pool, player_id=player_id),
            )
            ranking.games += 1
            ranking.victories += _victory(rank, result.ranks.values())
            ranking.points += result.points_of(player_id)
        changed = _rate(
            result,
            {
                player_id: ratings.setdefault((result.kind, result.variant, player_id), _new_rating(result, player_id))
                for player_id in result.ranks
            },
        )
        if result.match is not None:
            changes[result.match] = changed
    Ranking.objects.all().delete()
    Rating.objects.all().delete()
    Ranking.objects.bulk_create(rankings.values(), batch_size=500)
    Rating.objects.bulk_create(ratings.values(), batch_size=500)
    return changes
