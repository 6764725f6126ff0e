"""The Plakoto REST API as its clients see it, against a real server (tests/live.py): every path, answer, code and
message of the API's page, a whole game played through it, the turn timeout applied by the server itself, and
simultaneous requests on one table."""

import json
import random
import threading
import time

import httpx
import pytest

from .faults import query
from .live import database_calls, raw_answers

pytestmark = pytest.mark.server


@pytest.fixture(scope="module", params=database_calls())
def server(request, live_databases, tmp_path_factory):
    """A live server; the module's tests run against one for each place its database calls may run."""
    from .live import Server

    server = Server(live_databases.new(), tmp_path_factory.mktemp("plakoto"), TAB_DATABASE_CALLS=request.param)
    yield server
    server.stop()


@pytest.fixture
def api(server):
    with httpx.Client(base_url=server.url + "/plakoto", timeout=30) as client:
        yield client


def fresh(api, name: str) -> str:
    assert api.post(f"/{name}/board/").status_code == 200
    return name


def seated(api, name: str) -> dict[str, str]:
    """Reset the table and take both seats; return the tokens by colour."""
    fresh(api, name)
    tokens = {}
    for colour, username in (("W", "alice"), ("B", "bob")):
        response = api.put(f"/{name}/players/{colour}", json={"username": username, "color": colour})
        assert response.status_code == 200, response.text
        tokens[colour] = response.json()[0]["token"]
    return tokens


def refused(response: httpx.Response, code: int, message: str) -> None:
    assert (response.status_code, response.json()) == (code, {"errormesg": message}), response.text
    assert response.headers["content-type"] == "application/json"


def status(api, name: str) -> dict:
    response = api.get(f"/{name}/status/")
    assert response.status_code == 200
    (answer,) = response.json()
    return answer


def moves_of(api, name: str, token: str) -> list[tuple[int, int, int]]:
    """Return the moves the board offers the player on turn: (x, y, destination)."""
    cells = api.get(f"/{name}/board/", headers={"X-Token": token}).json()
    return [(cell["x"], cell["y"], move["x"]) for cell in cells if "moves" in cell for move in cell["moves"]]


def test_a_table_never_used_is_a_table_just_reset(api, server):
    assert status(api, "never-used") == {
        "status": "not active",
        "p_turn": None,
        "result": None,
        "last_change": None,
        "dice": None,
        "dice_left": None,
        "score": None,
        "passes": [],
    }
    board = api.get("/never-used/board").json()
    assert len(board) == 360 and board[0] == {"x": 1, "y": 1, "b_color": "W", "piece_color": "B", "piece": "P1"}
    assert board[-1] == {"x": 24, "y": 15, "b_color": "B", "piece_color": "W", "piece": "P15"}
    assert [cell["x"] for cell in board] == sorted(cell["x"] for cell in board)
    assert api.get("/never-used/players").json() == [
        {"username": None, "piece_color": "B", "last_action": None},
        {"username": None, "piece_color": "W", "last_action": None},
    ]
    # Reads created nothing.
    assert not query(server.database_url, "SELECT 1 FROM plakoto_table WHERE name = 'never-used'")


def test_the_example_of_the_api_page(api):
    name = fresh(api, "demo")
    assert status(api, name)["status"] == "not active" and status(api, name)["last_change"]
    white = api.put(f"/{name}/players/W", json={"username": "alice", "color": "W"}).json()[0]
    assert set(white) == {"username", "piece_color", "token", "last_action"} and len(white["token"]) == 32
    assert status(api, name)["status"] == "initialized"
    black = api.put(f"/{name}/players/B", content='{"username": "bob"}').json()[0]
    refused(
        api.put(f"/{name}/players/B", json={"username": "carol"}),
        400,
        "Player B is already set. Please select another color.",
    )
    game = status(api, name)
    assert game["status"] == "started" and game["p_turn"] == "W" and game["passes"] == []
    assert sorted(game["dice"], reverse=True) == game["dice_left"][:2]
    # The board shows W's moves to W only.
    offered = moves_of(api, name, white["token"])
    assert offered and all(x == 24 for x, _, _ in offered)
    assert not moves_of(api, name, black["token"]) and not moves_of(api, name, "nobody")
    refused(api.put(f"/{name}/board/piece/1/15/", json={"x": 7, "token": black["token"]}), 400, "It is not your turn.")
    x, y, destination = offered[0]
    answer = api.put(f"/{name}/board/piece/{x}/{y}/", json={"x": destination, "y": 1, "token": white["token"]})
    assert answer.status_code == 200 and len(answer.json()) == 360
    assert api.get(f"/{name}/board/piece/{destination}/1/").json()[0]["piece"] == "P15"
    after = status(api, name)
    assert len(after["dice_left"]) == len(game["dice_left"]) - 1 or after["p_turn"] == "B"
    seats = api.get(f"/{name}/players/").json()
    assert [seat["username"] for seat in seats] == ["bob", "alice"] and "token" not in seats[0]


def test_refusals_have_the_originals_messages_and_change_nothing(api, server):
    tokens = seated(api, "refusals")
    before = status(api, "refusals"), api.get("/refusals/board").json()
    mover = tokens[before[0]["p_turn"]]
    other = tokens["B" if before[0]["p_turn"] == "W" else "W"]
    cases = [
        (api.get("/Refusals/status"), 404, "Unknown table."),
        (api.get("/" + "x" * 33 + "/status"), 404, "Unknown table."),
        (api.get("/refusals/nothing"), 404, "Not found."),
        (api.get("/refusals/board/piece/1"), 404, "Not found."),
        (api.get("/refusals/players/w"), 404, "Player w not found."),
        (api.delete("/refusals/board"), 400, "Method DELETE not allowed here."),
        (api.post("/refusals/status"), 400, "Method POST not allowed here."),
        (api.put("/refusals/players", json={}), 400, "Method PUT not allowed here."),
        (api.get("/refusals/board/piece/0/1"), 400, "Invalid coordinates."),
        (api.get("/refusals/board/piece/25/1"), 400, "Invalid coordinates."),
        (api.get("/refusals/board/piece/1/17"), 400, "Invalid coordinates."),
        (api.get("/refusals/board/piece/x/1"), 400, "Invalid coordinates."),
        (api.put("/refusals/board/piece/24/15", json={"x": -1, "token": mover}), 400, "Invalid coordinates."),
        (api.put("/refusals/board/piece/24/15", json={"x": 7.5, "token": mover}), 400, "Invalid coordinates."),
        (api.put("/refusals/board/piece/24/15", json={"x": True, "token": mover}), 400, "Invalid coordinates."),
        (api.put("/refusals/board/piece/24/15", json={"x": 20, "y": 17, "token": mover}), 400, "Invalid coordinates."),
        (api.put("/refusals/board/piece/24/15", content="{not json"), 400, "Invalid JSON body."),
        (api.put("/refusals/board/piece/24/15", content="[1]"), 400, "The body must be a JSON object."),
        (api.put("/refusals/board/piece/24/15", json={"x": 20}), 400, "token is not set."),
        (
            api.put("/refusals/board/piece/24/15", json={"x": 20, "token": "0" * 32}),
            400,
            "You are not a player of this game.",
        ),
        (api.put("/refusals/board/piece/24/15", json={"x": 20, "token": other}), 400, "It is not your turn."),
        (api.put("/refusals/board/piece/12/1", json={"x": 10, "token": mover}), 400, "This piece cannot move."),
        (api.put("/refusals/board/piece/24/15", json={"x": 24, "token": mover}), 400, "This move is illegal."),
        (api.put("/refusals/players/W", json={}), 400, "No username given."),
        (api.put("/refusals/players/W", json={"username": ""}), 400, "No username given."),
        (api.put("/refusals/players/W", json={"username": 7}), 400, "Invalid username."),
        (api.put("/refusals/players/W", json={"username": "   "}), 400, "Invalid username."),
        (api.put("/refusals/players/W", json={"username": "a\nb"}), 400, "Invalid username."),
        (api.put("/refusals/players/W", json={"username": "x" * 21}), 400, "Invalid username."),
        (
            api.put("/refusals/players/W", json={"username": "eve", "color": "B"}),
            400,
            "Color B does not match player W.",
        ),
        (
            api.put("/refusals/players/W", json={"username": "eve"}),
            400,
            "Player W is already set. Please select another color.",
        ),
        (api.post("/refusals/board"), 400, "token is not set."),
        (api.post("/refusals/board", json={"token": "0" * 32}), 400, "You are not a player of this game."),
    ]
    for response, code, message in cases:
        refused(response, code, message)
    assert (status(api, "refusals"), api.get("/refusals/board").json()) == before


def test_coordinates_as_strings_and_the_token_in_a_header(api):
    tokens = seated(api, "strings")
    game = status(api, "strings")
    mover = tokens[game["p_turn"]]
    x, y, destination = moves_of(api, "strings", mover)[0]
    # The header wins over the body's token; coordinates may be strings of digits; y may be any value in range.
    response = api.put(
        f"/strings/board/piece/{x}/{y - 3}/",
        json={"x": str(destination), "y": "0", "token": "0" * 32},
        headers={"X-Token": mover},
    )
    assert response.status_code == 200, response.text


def test_a_whole_game_through_the_api(api):
    rng = random.Random(5)
    tokens = seated(api, "whole")
    passes_seen = 0
    for _ in range(3000):
        game = status(api, "whole")
        passes_seen += len(game["passes"])
        if game["status"] != "started":
            break
        mover = tokens[game["p_turn"]]
        x, y, destination = rng.choice(moves_of(api, "whole", mover))
        response = api.put(f"/whole/board/piece/{x}/{y}/", json={"x": destination}, headers={"X-Token": mover})
        assert response.status_code == 200, response.text
    assert game["status"] == "ended" and game["p_turn"] is None and game["dice"] is None
    assert (game["result"], game["score"]) in {("W", 1), ("W", 2), ("B", 1), ("B", 2), ("D", 0)}
    board = api.get("/whole/board").json()
    on_board = sum(cell["piece"] is not None for cell in board)
    assert on_board <= 30
    refused(api.put("/whole/board/piece/24/1", json={"x": 20, "token": tokens["W"]}), 400, "Game is not in action.")
    # The game is in the history with its log (every roll and move), and the next game starts on a reset.
    assert status(api, "whole")["status"] == "ended"
    assert api.post("/whole/board", json={}).status_code == 200 and status(api, "whole")["status"] == "not active"


def test_a_poll_shows_every_change_made_before_it(api, server):
    """Polls are answered from memory between changes (protocols/plakoto/polls.py): whichever part of the server made
    a change (the API, the page's views, the computer player), the next poll shows it."""
    fresh(api, "polled")
    assert [status(api, "polled")["status"] for _ in range(3)] == ["not active"] * 3
    with httpx.Client(base_url=server.url) as site:
        assert site.put("/tables/plakoto/polled/seat/B", json={"username": "ann"}).status_code == 200
        assert status(api, "polled")["status"] == "initialized"
        assert site.post("/tables/plakoto/polled/computer", json={"level": 1}).status_code == 200
    assert status(api, "polled")["status"] == "started"
    # The computer (White) moves first, in a thread of its own: its moves reach the polls too.
    deadline = time.monotonic() + 60
    while (game := status(api, "polled"))["p_turn"] != "B":
        assert game["status"] == "started" and time.monotonic() < deadline
        time.sleep(0.05)


def test_a_reset_of_a_started_game_takes_one_of_its_players(api):
    tokens = seated(api, "reset")
    assert api.post("/reset/board/", headers={"X-Token": tokens["B"]}).status_code == 200
    assert status(api, "reset")["status"] == "not active"
    refused(
        api.put("/reset/board/piece/24/15", json={"x": 20, "token": tokens["W"]}),
        400,
        "You are not a player of this game.",
    )


def test_of_two_simultaneous_seat_requests_one_gets_the_seat(api, server):
    fresh(api, "race")
    answers = []
    barrier = threading.Barrier(8)

    def take(index: int) -> None:
        with httpx.Client(base_url=server.url + "/plakoto", timeout=30) as client:
            barrier.wait()
            answers.append(client.put("/race/players/W", json={"username": f"p{index}"}).status_code)

    threads = [threading.Thread(target=take, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [200] + [400] * 7


def test_the_turn_timeout_is_applied_by_the_server_itself(live_databases, tmp_path):
    from .live import Server

    server = Server(live_databases.new(), tmp_path, PLAKOTO_TURN_TIMEOUT="1", TAB_SWEEP_INTERVAL_MS="100")
    try:
        with httpx.Client(base_url=server.url + "/plakoto", timeout=30) as api:
            seated(api, "idle")
            deadline = time.monotonic() + 60
            # Nobody moves: within a second or so of the deadline the server ends the game (reads change nothing).
            while (game := status(api, "idle"))["status"] == "started":
                assert time.monotonic() < deadline
                time.sleep(0.2)
            on_turn = "W" if not game["passes"] else None
            assert game["status"] == "aborded" and game["score"] == 1 and game["p_turn"] is None
            assert game["result"] in ("W", "B") and (on_turn is None or game["result"] == "B")
            assert game["dice"] is None and game["dice_left"] is None
    finally:
        server.stop()


def test_preflights_and_cors(api):
    response = api.options("/demo/board/piece/1/1/")
    assert response.status_code == 204
    assert response.headers["access-control-allow-methods"] == "GET, POST, PUT, OPTIONS"
    assert response.headers["access-control-allow-headers"] == "Content-Type, X-Token"
    assert api.get("/demo/status").headers["access-control-allow-origin"] == "*"
    assert api.get("/Bad/status").headers["access-control-allow-origin"] == "*"


def same_headers(direct: httpx.Response, lean: httpx.Response) -> None:
    """Two answers carry the same headers, but for their lengths and dates."""

    def kept(response):
        return {key: value for key, value in response.headers.items() if key not in ("content-length", "date")}

    assert kept(direct) == kept(lean)


def test_the_api_answered_on_the_connection_has_the_lean_handlers_headers(api):
    """The API answers on the ASGI connection itself (core/direct.py), and leaves to Django's lean handler what is no
    path of a table (here /plakoto/ itself): both answers carry the same headers."""
    direct, lean = api.get("/Bad!/status/"), api.get("/")
    assert (direct.status_code, direct.json()) == (404, {"errormesg": "Unknown table."})
    assert (lean.status_code, lean.json()) == (404, {"errormesg": "Not found."})
    same_headers(direct, lean)
    assert direct.headers["x-content-type-options"] == "nosniff"
    assert direct.headers["access-control-allow-origin"] == "*"


def test_a_status_kept_in_memory_is_answered_as_the_database_read_was_and_in_the_requests_order(api, server):
    """A poll whose answer is kept is written as soon as its headers are read (core/server.py): the same bytes as the
    poll before it, answered from the database; and a poll sent right behind a move, on the same connection, is
    answered after it, with the status the move left."""
    name = "early"
    poll = f"GET /plakoto/{name}/status/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    fresh(api, name)  # a reset: the status read next comes from the database
    read, kept = raw_answers(server.port, poll + poll, 2)
    assert read == kept and json.loads(read[1])[0]["status"] == "not active"
    assert b"content-type: application/json" in read[0] and b"x-content-type-options: nosniff" in read[0]
    tokens = seated(api, name)
    before = status(api, name)
    x, y, destination = moves_of(api, name, tokens["W"])[0]
    body = json.dumps({"x": destination}).encode()
    move = (
        f"PUT /plakoto/{name}/board/piece/{x}/{y}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Token: {tokens['W']}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    (moved, board), (_, after) = raw_answers(server.port, move + poll, 2)
    assert moved[0].startswith(b"HTTP/1.1 200") and len(json.loads(board)) == 360
    assert (
        len(json.loads(after)[0]["dice_left"]) == len(before["dice_left"]) - 1 or json.loads(after)[0]["p_turn"] == "B"
    )


def test_behind_an_https_proxy_the_api_is_redirected_or_answered_with_hsts(live_databases, tmp_path):
    """With HTTPS on, a request that came over plain HTTP is redirected (by Django's security middleware, which the
    lean handler runs), and one that the trusted proxy says came over HTTPS is answered with Strict-Transport-Security,
    as the lean handler answers."""
    from .live import Server

    server = Server(live_databases.new(), tmp_path, HTTPS="true", TRUSTED_PROXIES="1")
    try:
        with httpx.Client(base_url=server.url + "/plakoto") as client:
            plain = client.get("/demo/status/")
            assert plain.status_code == 301 and plain.headers["location"].startswith("https://")
            secure = {"X-Forwarded-Proto": "https"}
            direct, lean = client.get("/demo/status/", headers=secure), client.get("/", headers=secure)
            assert direct.status_code == 200 and direct.json()[0]["status"] == "not active"
            assert direct.headers["strict-transport-security"].startswith("max-age=")
            assert lean.status_code == 404
            same_headers(direct, lean)
    finally:
        server.stop()


def test_a_restart_loses_nothing(live_databases, tmp_path):
    from .live import Gunicorn

    database_url = live_databases.new()
    server = Gunicorn(database_url, tmp_path)
    try:
        with httpx.Client(base_url=server.url + "/plakoto", timeout=30) as api:
            tokens = seated(api, "restart")
            game = status(api, "restart")
            mover = tokens[game["p_turn"]]
            x, y, destination = moves_of(api, "restart", mover)[0]
            assert api.put(f"/restart/board/piece/{x}/{y}", json={"x": destination, "token": mover}).status_code == 200
            before = status(api, "restart"), api.get("/restart/board").json(), api.get("/restart/players").json()
            deadline = query(database_url, "SELECT deadline FROM games_game WHERE kind = 'plakoto'")
        server.kill()
        server = Gunicorn(database_url, tmp_path)
        with httpx.Client(base_url=server.url + "/plakoto", timeout=30) as api:
            assert (
                status(api, "restart"),
                api.get("/restart/board").json(),
                api.get("/restart/players").json(),
            ) == before
            assert query(database_url, "SELECT deadline FROM games_game WHERE kind = 'plakoto'") == deadline
            # The same tokens play on.
            game = before[0]
            mover = tokens[game["p_turn"]]
            x, y, destination = moves_of(api, "restart", mover)[0]
            assert api.put(f"/restart/board/piece/{x}/{y}", json={"x": destination, "token": mover}).status_code == 200
    finally:
        server.stop()


def test_requests_of_djangos_own_handler_keep_no_connection_each(api):
    # Each such request runs in a thread of its own: a connection kept after it would pile up, one per request,
    # until PostgreSQL refuses more clients (100 here).
    fresh(api, "many")
    for _ in range(250):
        assert api.get("/many/status/").status_code == 200


def test_the_tables_stream_follows_the_table_and_its_game(api, server):
    """What pages and spectators follow: the table's status at every change (seats, moves, resets), each as it is
    made: a stream that missed one would next send its keep-alive comment (20 s later), not the status."""
    from .test_draughts_web import Events

    name = fresh(api, "streamed")
    stream = Events(f"{server.url}/tables/plakoto/{name}/stream")

    def next_status() -> dict:
        kind, data = stream.next()
        assert kind == "data", (kind, data)
        return data[0]

    assert next_status()["status"] == "not active"
    white = api.put(f"/{name}/players/W", json={"username": "alice"}).json()[0]["token"]
    assert next_status()["status"] == "initialized"
    black = api.put(f"/{name}/players/B", json={"username": "bob"}).json()[0]["token"]
    started = next_status()
    assert started["status"] == "started" and started["p_turn"] == "W" and started == status(api, name)
    x, y, destination = moves_of(api, name, white)[0]
    moved = api.put(f"/{name}/board/piece/{x}/{y}/", json={"x": destination}, headers={"X-Token": white})
    assert moved.status_code == 200
    assert next_status() == status(api, name)
    # A reset moves the stream on to the table's next game, which it follows as well.
    assert api.post(f"/{name}/board/", headers={"X-Token": black}).status_code == 200
    assert next_status()["status"] == "not active"
    api.put(f"/{name}/players/W", json={"username": "carol"})
    assert next_status()["status"] == "initialized"
    api.put(f"/{name}/players/B", json={"username": "dan"})
    assert next_status()["status"] == "started"
    stream.close()
    # A game in play's page leads to its table.
    with httpx.Client(base_url=server.url) as site:
        sql = "SELECT g.public_id FROM plakoto_table t JOIN games_game g ON g.id = t.game_id WHERE t.name = %s"
        game = query(server.database_url, sql, (name,))[0][0]
        page = site.get(f"/games/{game}/").text
        assert f'href="/tables/plakoto/_game/{game}"' in page
        answer = site.get(f"/tables/plakoto/_game/{game}")
        assert answer.status_code == 302 and answer.headers["location"] == f"/play/plakoto/?table={name}"
        assert site.get("/tables/plakoto/_game/nosuch").status_code == 404
        assert site.get("/tables/plakoto/Bad_Name/stream").status_code == 404


def test_the_lean_handler_keeps_the_matches_of_the_latest_paths_only(monkeypatch):
    """A path's view and arguments are resolved once and kept (clients poll the same paths), the latest short paths
    only: any path may be asked, and a process keeps no more than MATCHES_KEPT."""
    from django.test import RequestFactory

    from protocols.course_api import handler
    from protocols.plakoto import views

    monkeypatch.setattr(handler, "MATCHES_KEPT", 3)
    lean = handler.ApiHandler()
    factory = RequestFactory()
    for number in range(5):
        match = lean.resolve_request(factory.get(f"/plakoto/t{number}/status/"))
        assert (match.func, match.kwargs) == (views.table, {"name": f"t{number}", "rest": "status/"})
    assert list(lean._matches) == ["/plakoto/t2/status/", "/plakoto/t3/status/", "/plakoto/t4/status/"]
    assert lean.resolve_request(factory.get("/plakoto/t4/status/")) is lean._matches["/plakoto/t4/status/"]
    long = "/plakoto/t5/" + "x" * handler.MATCHED_PATH_MAX
    assert lean.resolve_request(factory.get(long)).kwargs["rest"] == "x" * handler.MATCHED_PATH_MAX
    assert long not in lean._matches
    assert lean.resolve_request(factory.get("/join")).func.__name__ == "join"
