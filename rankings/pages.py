"""The rankings pages: every table that has results, one table in full (sortable, paginated, as CSV), a player."""

import csv
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from core.pagination import page_of
from games.selectors import started_games

from . import selectors

ROWS_PER_PAGE = 50
TABLES_PER_PAGE = 100
RECENT_GAMES = 10


def tables(request: HttpRequest) -> HttpResponse:
    """GET /rankings/: every group and board size that has results."""
    page = page_of(selectors.ranking_tables(), request.GET.get("page"), TABLES_PER_PAGE)
    return render(request, "rankings/tables.html", {"page": page, "section": "rankings"})


def table(request: HttpRequest, group: int, size: int) -> HttpResponse:
    """GET /rankings/<group>/<size>/: the whole ranking of a group and board size, sorted by any column."""
    sort = selectors.table_order(request.GET.get("sort"))
    page = page_of(selectors.ranking_table(group=group, size=size, sort=sort), request.GET.get("page"), ROWS_PER_PAGE)
    if page.paginator.count == 0:
        raise Http404("No results in this group and board size")
    columns = [(key, sort == key) for key in ("nick", "victories", "games", "rate", "rating")]
    context = {"group": group, "size": size, "page": page, "sort": sort, "columns": columns, "section": "rankings"}
    context["query"] = urlencode({"sort": sort}) + "&"
    return render(request, "rankings/table.html", context)


def table_csv(request: HttpRequest, group: int, size: int) -> HttpResponse:
    """GET /rankings/<group>/<size>.csv: the whole ranking as CSV, in the ranking function's order."""
    rows = list(selectors.ranking_table(group=group, size=size))
    if not rows:
        raise Http404("No results in this group and board size")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="ranking-group{group}-size{size}.csv"'
    writer = csv.writer(response)
    writer.writerow(["position", "nick", "victories", "games", "win_rate", "rating", "deviation"])
    for position, row in enumerate(rows, start=1):
        rating, deviation = row["rating"], row["deviation"]
        writer.writerow(
            [
                position,
                row["nick"],
                row["victories"],
                row["games"],
                f"{row['rate']:.4f}",
                "" if rating is None else f"{rating:.1f}",
                "" if deviation is None else f"{deviation:.1f}",
            ]
        )
    return response


def player(request: HttpRequest, nick: str) -> HttpResponse:
    """GET /players/<nick>/: a player's record and rating on each board size, and their latest games."""
    user = selectors.player_by_nick(nick)
    if user is None:
        raise Http404("No player with this nick")
    ratings = selectors.player_ratings(user.pk)
    totals = {"games": sum(r.games for r in ratings), "victories": sum(r.victories for r in ratings)}
    totals["rate"] = totals["victories"] / totals["games"] if totals["games"] else None
    recent = list(started_games(player_id=user.pk)[:RECENT_GAMES])
    context = {"player": user, "ratings": ratings, "totals": totals, "games": recent, "section": "rankings"}
    return render(request, "rankings/player.html", context)
