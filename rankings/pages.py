"""The rankings pages: every table that has results, one table in full (sortable, paginated, as CSV), a player.

A table is one pool of one game and variant. Tâb's keep the addresses they always had, /rankings/<group>/<size>/;
every game's tables are at /rankings/<game>/?variant=…&pool=….
"""

import csv
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from core.pagination import page_of
from games.rules import labels
from games.selectors import started_games

from . import selectors

ROWS_PER_PAGE = 50
TABLES_PER_PAGE = 100
RECENT_GAMES = 10


def _is_tab_table(kind: str, variant: str, pool: str) -> bool:
    return kind == "tab" and variant.isdigit() and pool.isdigit()


def table_url(kind: str, variant: str, pool: str, *, csv: bool = False) -> str:
    """Return the address of a table, or of its CSV."""
    if _is_tab_table(kind, variant, pool):
        return reverse("ranking-csv" if csv else "ranking", args=[int(pool), int(variant)])
    return (
        reverse("game-ranking-csv" if csv else "game-ranking", args=[kind])
        + "?"
        + urlencode({"variant": variant, "pool": pool})
    )


def describe(kind: str, variant: str, pool: str = "") -> dict[str, str]:
    """Return what a table shows of its game, variant and pool, for people."""
    title, variant_label = labels(kind, variant)
    return {"title": title, "variant_label": variant_label, "pool_label": f"Group {pool}" if pool else ""}


def tables(request: HttpRequest) -> HttpResponse:
    """GET /rankings/: every game, variant and pool that has results."""
    listed = [
        {
            **row,
            **describe(row["kind"], row["variant"], row["pool"]),
            "url": table_url(row["kind"], row["variant"], row["pool"]),
            "csv": table_url(row["kind"], row["variant"], row["pool"], csv=True),
        }
        for row in selectors.ranking_tables()
    ]
    # A list (the tables are few, and sorted in Python): Django's paginator clamps any page number to a real page.
    page = Paginator(listed, TABLES_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "rankings/tables.html", {"page": page, "section": "rankings"})


def _key(request: HttpRequest, kind: str) -> tuple[str, str, str]:
    return kind, request.GET.get("variant", "")[:20], request.GET.get("pool", "")[:40]


def _columns(kind: str) -> tuple[list[str], str]:
    """Return a table's columns and its default order: by points in a game that scores its results."""
    if selectors.scores_points(kind):
        return ["nick", "points", "victories", "games", "rate", "rating"], "points"
    return ["nick", "victories", "games", "rate", "rating"], selectors.DEFAULT_ORDER


def _table(request: HttpRequest, kind: str, variant: str, pool: str) -> HttpResponse:
    keys, default = _columns(kind)
    sort = selectors.table_order(request.GET.get("sort"), default)
    rows = selectors.ranking_table(kind=kind, variant=variant, pool=pool, sort=sort)
    page = page_of(rows, request.GET.get("page"), ROWS_PER_PAGE)
    if page.paginator.count == 0:
        raise Http404("No results in this table")
    columns = [(key, sort == key) for key in keys]
    context = {
        "scored": "points" in keys,
        **describe(kind, variant, pool),
        "csv": table_url(kind, variant, pool, csv=True),
        "page": page,
        "sort": sort,
        "columns": columns,
        "section": "rankings",
    }
    # The table's own key stays in the links that sort and page it.
    kept = {} if _is_tab_table(kind, variant, pool) else {"variant": variant, "pool": pool}
    context["key_query"] = urlencode(kept) + "&" if kept else ""
    context["query"] = context["key_query"] + urlencode({"sort": sort}) + "&"
    return render(request, "rankings/table.html", context)


def table(request: HttpRequest, group: int, size: int) -> HttpResponse:
    """GET /rankings/<group>/<size>/: the whole ranking of a Tâb group and board size, sorted by any column."""
    return _table(request, "tab", str(size), str(group))


def game_table(request: HttpRequest, kind: str) -> HttpResponse:
    """GET /rankings/<game>/?variant=…&pool=…: the whole ranking of one pool of any game."""
    return _table(request, *_key(request, kind))


def _csv(kind: str, variant: str, pool: str, filename: str) -> HttpResponse:
    keys, default = _columns(kind)
    scored = "points" in keys
    rows = list(selectors.ranking_table(kind=kind, variant=variant, pool=pool, sort=default))
    if not rows:
        raise Http404("No results in this table")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    points = ["points"] if scored else []
    writer.writerow(["position", "nick", *points, "victories", "games", "win_rate", "rating", "deviation"])
    for position, row in enumerate(rows, start=1):
        rating, deviation = row["rating"], row["deviation"]
        writer.writerow(
            [
                position,
                row["nick"],
                *([row["points"]] if scored else []),
                row["victories"],
                row["games"],
                f"{row['rate']:.4f}",
                "" if rating is None else f"{rating:.1f}",
                "" if deviation is None else f"{deviation:.1f}",
            ]
        )
    return response


def table_csv(request: HttpRequest, group: int, size: int) -> HttpResponse:
    """GET /rankings/<group>/<size>.csv: a Tâb table as CSV, in the ranking function's order."""
    return _csv("tab", str(size), str(group), f"ranking-group{group}-size{size}.csv")


def game_table_csv(request: HttpRequest, kind: str) -> HttpResponse:
    """GET /rankings/<game>.csv?variant=…&pool=…: any table as CSV."""
    kind, variant, pool = _key(request, kind)
    name = "-".join(part for part in (kind, variant, pool) if part.isalnum())
    return _csv(kind, variant, pool, f"ranking-{name}.csv")


def player(request: HttpRequest, nick: str) -> HttpResponse:
    """GET /players/<nick>/: a player's record and rating in each game and variant, and their latest games."""
    user = selectors.player_by_nick(nick)
    if user is None:
        raise Http404("No player with this nick")
    ratings = selectors.player_ratings(user.pk)
    totals = {"games": sum(r.games for r in ratings), "victories": sum(r.victories for r in ratings)}
    totals["rate"] = totals["victories"] / totals["games"] if totals["games"] else None
    rated = [{"rating": rating, **describe(rating.kind, rating.variant)} for rating in ratings]
    recent = list(started_games(player_id=user.pk)[:RECENT_GAMES])
    context = {"player": user, "ratings": rated, "totals": totals, "games": recent, "section": "rankings"}
    return render(request, "rankings/player.html", context)
