"""The rankings and history pages, through Django's test client: what they show, their cost in queries, and
what they do with bad input (a 404 page, or a sensible fallback)."""

import csv
import json
import random
import re

import pytest
from django.contrib.auth import get_user_model

from games.models import Game
from games.services import game_leave
from rankings import pages as ranking_pages

from .conftest import first_throw, play_to_the_end, tab_join
from .factories import UserFactory

pytestmark = pytest.mark.django_db


def html(response) -> str:
    assert response["Content-Type"].startswith("text/html"), response["Content-Type"]
    return response.content.decode()


def rows_of(page: str, table_id: str) -> list[list[str]]:
    """Return the text of each cell of each body row of the table `table_id`."""
    body = page.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    return [
        [re.sub(r"<[^>]+>|\s+", " ", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in rows
    ]


def duel(winner, loser, *, group: int = 1, size: int = 7) -> Game:
    """A game between two players that ends when `loser` leaves it."""
    game = tab_join(user_id=winner.pk, group=group, size=size)
    tab_join(user_id=loser.pk, group=group, size=size)
    first_throw(game.public_id)
    game_leave(public_id=game.public_id, user_id=loser.pk)
    return game


@pytest.fixture
def results(alice, bob, charlie):
    """In group 1, size 7: alice 2/2, bob 1/2, charlie 0/2. In group 2, size 9: bob 1/1, alice 0/1."""
    duel(alice, bob)
    duel(alice, charlie)
    duel(bob, charlie)
    duel(bob, alice, group=2, size=9)


def test_the_rankings_index_lists_every_table(client, results, django_assert_num_queries):
    with django_assert_num_queries(1):  # the page, with the number of tables
        page = html(client.get("/rankings/"))
    assert rows_of(page, "tables") == [
        ["Group 1", "Tâb", "7 columns", "3", "3", "CSV"],
        ["Group 2", "Tâb", "9 columns", "2", "1", "CSV"],
    ]
    assert 'href="/rankings/1/7/"' in page and 'href="/rankings/2/9.csv"' in page


def test_the_rankings_index_without_results(client, db):
    assert "No game has been finished yet." in html(client.get("/rankings/"))


def test_a_ranking_table_in_full_with_ratings(client, results, django_assert_num_queries):
    with django_assert_num_queries(1):  # the page with the number of rows (the ratings are joined in)
        page = html(client.get("/rankings/1/7/"))
    rows = rows_of(page, "ranking")
    assert [row[:5] for row in rows] == [
        ["1", "alice", "2", "2", "100%"],
        ["2", "bob", "1", "2", "50%"],
        ["3", "charlie", "0", "2", "0%"],
    ]
    ratings = [int(row[5].split()[0]) for row in rows]
    assert ratings[0] > 1500 > ratings[2]
    assert all("±" in row[5] for row in rows)


@pytest.fixture
def sortable(alice, bob, charlie):
    """In group 1, size 7, each column orders the players differently:
    alice 1 of 3 (33 %), bob 2 of 2 (100 %), charlie 3 of 6 (50 %), dave 0 of 1; dave's rating on this board size is
    the best, from three wins over bob in group 2."""
    dave = UserFactory(username="dave")
    for winner, loser in [(charlie, alice), (charlie, alice), (charlie, dave), (bob, charlie), (bob, charlie)]:
        duel(winner, loser)
    duel(alice, charlie)
    for _ in range(3):
        duel(dave, bob, group=2)


ORDERS = {
    "nick": ["alice", "bob", "charlie", "dave"],
    "victories": ["charlie", "bob", "alice", "dave"],
    "games": ["charlie", "alice", "bob", "dave"],
    "rate": ["bob", "charlie", "alice", "dave"],
    "rating": ["dave", "bob", "alice", "charlie"],
}


def test_every_column_orders_the_fixture_differently():
    assert len({tuple(order) for order in ORDERS.values()}) == len(ORDERS)


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        *ORDERS.items(),
        *((f"-{column}", order[::-1]) for column, order in ORDERS.items()),
        # Anything else falls back to the ranking function's order.
        ("password", ORDERS["victories"]),
        ("-", ORDERS["victories"]),
        ("", ORDERS["victories"]),
    ],
)
def test_a_ranking_table_sorts_by_any_column(client, sortable, sort, order):
    page = html(client.get("/rankings/1/7/", {"sort": sort}))
    assert [row[1] for row in rows_of(page, "ranking")] == order


def test_a_ranking_table_is_paginated(client, results, monkeypatch):
    monkeypatch.setattr(ranking_pages, "ROWS_PER_PAGE", 2)
    first = html(client.get("/rankings/1/7/", {"sort": "-nick"}))
    assert [row[:2] for row in rows_of(first, "ranking")] == [["1", "charlie"], ["2", "bob"]]
    assert 'href="?sort=-nick&amp;page=2"' in first and "Page 1 of 2" in first
    second = html(client.get("/rankings/1/7/", {"sort": "-nick", "page": "2"}))
    assert [row[:2] for row in rows_of(second, "ranking")] == [["3", "alice"]]
    # A page past the end shows the last one; a page that is not a number, the first.
    assert rows_of(html(client.get("/rankings/1/7/", {"page": "99"})), "ranking")[0][1] == "charlie"
    assert rows_of(html(client.get("/rankings/1/7/", {"page": "two"})), "ranking")[0][1] == "alice"


@pytest.mark.parametrize(
    "url",
    [
        "/rankings/1/9/",
        "/rankings/3/7/",
        "/rankings/99999999999999999999/7/",
        "/rankings/1/9.csv",
        "/rankings/one/7/",
        "/players/nobody/",
        "/games/0123456789abcdef0123456789abcdef/",
        "/games/?player=nobody",
        "/games/nothing-like-an-id/stream",
    ],
)
def test_unknown_things_get_a_404_page(client, results, url):
    response = client.get(url)
    assert response.status_code == 404
    assert "<h1>Not found</h1>" in html(response)


def test_the_api_still_answers_unknown_functions_in_json(client, db):
    response = client.get("/rankingz")
    assert (response.status_code, response.json()) == (404, {"error": "Unknown function 'rankingz'"})


def test_a_ranking_table_as_csv(client, results, django_assert_num_queries):
    with django_assert_num_queries(1):
        response = client.get("/rankings/1/7.csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="ranking-group1-size7.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(response.content.decode().splitlines()))
    assert rows[0] == ["position", "nick", "victories", "games", "win_rate", "rating", "deviation"]
    assert [row[:5] for row in rows[1:]] == [
        ["1", "alice", "2", "2", "1.0000"],
        ["2", "bob", "1", "2", "0.5000"],
        ["3", "charlie", "0", "2", "0.0000"],
    ]
    assert float(rows[1][5]) > 1500 and float(rows[1][6]) < 350


def test_a_players_page(client, results, django_assert_num_queries):
    with django_assert_num_queries(4):  # the player, their ratings, their latest games and their players
        page = html(client.get("/players/bob/"))
    assert "<h1>bob</h1>" in page
    assert rows_of(page, "sizes")[0][:5] == ["Tâb", "7 columns", "2", "1", "50%"]
    assert rows_of(page, "sizes")[1][:5] == ["Tâb", "9 columns", "1", "1", "100%"]
    assert '<dd id="total-games">3</dd>' in page and '<dd id="total-victories">2</dd>' in page
    assert page.count('href="/games/') >= 3 and 'href="/games/?player=bob"' in page


def test_a_player_with_an_awkward_nick(client, db):
    UserFactory(username="a b/c?d")
    page = html(client.get("/players/a%20b/c%3Fd/"))
    assert "<h1>a b/c?d</h1>" in page and "No game finished yet." in page


def test_the_games_list_of_everyone_and_of_a_player(client, alice, bob, charlie, results, django_assert_num_queries):
    live = tab_join(user_id=charlie.pk, group=5, size=7)
    tab_join(user_id=bob.pk, group=5, size=7)
    with django_assert_num_queries(2):  # the page with the number of games, their players
        page = html(client.get("/games/"))
    assert page.count('<a class="badge badge-live"') == 1 and f"/games/{live.public_id}/" in page
    assert page.count("won</span>") == 4
    with django_assert_num_queries(3):  # the player too
        mine = html(client.get("/games/", {"player": "charlie"}))
    assert mine.count("<tr>") == 1 + 3  # the head, then charlie's three games
    assert "Games of charlie" in mine


def test_a_finished_game_with_its_log_and_replay(client, api, alice, bob, start_game, django_assert_num_queries):
    game = start_game(size=7)
    play_to_the_end(api, game, random.Random(4))
    finished = Game.objects.select_related("winner").get(public_id=game)
    with django_assert_num_queries(3):  # the game, its players, its log
        page = html(client.get(f"/games/{game}/"))
    assert f"{finished.winner.username} won</span>" in page and "On the board." in page
    log = rows_of(page, "log")
    assert len(log) == finished.version - 1  # every entry but the creation
    kinds = {row.split('data-kind="')[1].split('"')[0] for row in page.split("<tr data-step=")[1:]}
    assert {"start", "throw", "move"} <= kinds
    assert any(row[2].startswith("threw") for row in log) and any(row[2].startswith("moved") for row in log)
    data = json.loads(page.split('<script id="replay-data" type="application/json">')[1].split("</script>")[0])
    assert data["size"] == 7 and data["options"] == {"size": 7} and data["players"] == ["alice", "bob"]
    assert data["winner"] == (0 if finished.winner.username == "alice" else 1)
    assert len(data["log"]) == len(log) and data["log"][0]["kind"] == "start"
    assert 'src="/static/js/replay.js"' in page


def test_a_game_in_play_is_watched_through_its_own_stream(client, alice, bob, start_game):
    game = start_game()
    page = html(client.get(f"/games/{game}/"))
    assert f'data-stream="/games/{game}/stream"' in page and 'src="/static/js/watch.js"' in page
    assert "replay-data" not in page


def test_a_game_that_never_started(client, alice):
    game = tab_join(user_id=alice.pk, group=1, size=7)
    game_leave(public_id=game.public_id, user_id=alice.pk)
    page = html(client.get(f"/games/{game.public_id}/"))
    assert "No result" in page and "Left while waiting." in page and "<canvas" not in page


def test_a_deactivated_player_still_has_a_page(client, results):
    get_user_model().objects.filter(username="charlie").update(is_active=False)
    assert "This account is deactivated." in html(client.get("/players/charlie/"))


@pytest.mark.parametrize("sort", ["rating", "-rating"])
def test_players_without_a_rating_yet_come_last(client, results, sort):
    # As after an upgrade, before tab_recompute has rated the games finished earlier.
    from rankings.models import Rating

    Rating.objects.filter(player__username="bob").delete()
    rows = rows_of(html(client.get("/rankings/1/7/", {"sort": sort})), "ranking")
    assert rows[-1][1] == "bob" and rows[-1][5] == "—"


@pytest.mark.parametrize(
    "url",
    ["/rankings/?page=100000000000000000", "/games/?page=9223372036854775807", "/games/?page=99999999999999999999"],
)
def test_a_page_number_past_any_database_integer_shows_the_last_page(client, results, url):
    assert client.get(url).status_code == 200


def test_pages_are_for_this_site_and_the_api_for_every_site(client, admin_client, results):
    # The site's pages and the admin: no cross-origin reading, and a content security policy.
    for response in (client.get("/"), client.get("/rankings/"), client.get("/games/"), admin_client.get("/admin/")):
        assert response.status_code == 200
        assert "Access-Control-Allow-Origin" not in response
        policy = response["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe" not in policy
    # The protocol's answers: any origin, preflights included.
    for response in (
        client.post("/ranking", {"group": 1, "size": 7}, content_type="application/json"),
        client.get("/no-such-function"),
        client.options("/register"),
    ):
        assert response["Access-Control-Allow-Origin"] == "*"
    # The calls our own pages make with the visitor's session (a protocol's app mounts them as not cross-origin).
    for response in (client.post("/tables/plakoto/t1/seat/W"), client.options("/tables/plakoto/t1/computer")):
        assert "Access-Control-Allow-Origin" not in response
    # Each protocol's preflight allows what its mount says: Plakoto's token header, the course API's defaults.
    assert client.options("/plakoto/t1/board/")["Access-Control-Allow-Headers"] == "Content-Type, X-Token"
    assert client.options("/update")["Access-Control-Allow-Methods"] == "GET, POST, OPTIONS"
