"""Any path, method, header and body under /plakoto/: a JSON array or `{"errormesg": …}` with 400 or 404, never a
500, and a refused request changes nothing (hypothesis, through Django's test client)."""

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.django_db

SEGMENTS = ["board", "piece", "players", "status", "W", "B", "1", "24", "15", "0", "25", "-1", "x", "", "16", "P1"]
paths = st.lists(st.one_of(st.sampled_from(SEGMENTS), st.text(max_size=8)), max_size=5).map("/".join)
tables = st.one_of(st.sampled_from(["demo", "fuzz-1", "Bad", "a" * 33, ""]), st.text(max_size=10))
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 30), st.floats(allow_nan=False), st.text(max_size=10)),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)
bodies = st.one_of(
    st.dictionaries(st.sampled_from(["x", "y", "token", "username", "color", "piece_color"]), values, max_size=4).map(
        json.dumps
    ),
    st.text(max_size=20),
    st.just(""),
)


@given(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]), tables, paths, bodies, st.booleans())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_request_gets_a_500(client, method, table, path, body, token_header):
    headers = {"HTTP_X_TOKEN": "0" * 32} if token_header else {}
    url = f"/plakoto/{table}/{path}"
    if any(ord(character) < 32 for character in url) or "?" in url or "#" in url:
        return
    response = client.generic(method, url, body, content_type="application/json", **headers)
    assert response.status_code in (200, 400, 404), (url, response.status_code)
    data = response.json()
    if response.status_code == 200:
        assert isinstance(data, list)
    else:
        assert set(data) == {"errormesg"} and isinstance(data["errormesg"], str)


def test_a_started_table_refuses_every_bad_move_and_stays_as_it_was(client):
    base = "/plakoto/fuzzed"
    client.post(base + "/board/", "", content_type="application/json")
    tokens = {
        colour: client.put(
            base + f"/players/{colour}", json.dumps({"username": colour}), content_type="application/json"
        ).json()[0]["token"]
        for colour in ("W", "B")
    }
    before = client.get(base + "/status").json(), client.get(base + "/board").json()
    mover = tokens[before[0][0]["p_turn"]]
    cells = client.get(base + "/board", HTTP_X_TOKEN=mover).json()
    legal = {(cell["x"], move["x"]) for cell in cells for move in cell.get("moves", [])}

    @given(st.integers(0, 26), st.integers(0, 17), values, st.sampled_from([*tokens.values(), "", None]))
    @settings(max_examples=300, deadline=None)
    def move(x, y, destination, token):
        # The API takes strings of digits for integers: a legal move may come as one.
        as_number = (
            int(destination)
            if isinstance(destination, str) and destination.isascii() and destination.isdigit()
            else destination
        )
        assume(not any(x == origin and as_number == target for origin, target in legal))
        body = {"x": destination} if token is None else {"x": destination, "token": token}
        response = client.put(f"{base}/board/piece/{x}/{y}/", json.dumps(body), content_type="application/json")
        assert response.status_code == 400 and set(response.json()) == {"errormesg"}

    move()
    assert (client.get(base + "/status").json(), client.get(base + "/board").json()) == before


def test_the_admin_lists_resets_and_ends_tables(admin_client, client):
    from games.models import Game

    for name in ("stuck", "other"):
        client.post(f"/plakoto/{name}/board/", "", content_type="application/json")
        for colour in ("W", "B"):
            client.put(
                f"/plakoto/{name}/players/{colour}", json.dumps({"username": "x"}), content_type="application/json"
            )
    from protocols.plakoto.models import Table

    stuck, other = Table.objects.get(name="stuck"), Table.objects.get(name="other")
    page = admin_client.get("/admin/plakoto/table/?game__status=playing").content.decode()
    assert "stuck" in page and "started" in page
    change = admin_client.get(f"/admin/plakoto/table/{stuck.pk}/change/").content.decode()
    assert stuck.w_token not in change and stuck.b_token not in change  # not even the tokens' hashes
    admin_client.post("/admin/plakoto/table/", {"action": "end_player_on_turn_loses", "_selected_action": [stuck.pk]})
    ended = Game.objects.filter(kind="plakoto", status=Game.Status.FINISHED).get()
    assert ended.ending == Game.Ending.ENDED and ended.winner is not None
    admin_client.post("/admin/plakoto/table/", {"action": "reset", "_selected_action": [stuck.pk, other.pk]})
    assert [client.get(f"/plakoto/{name}/status").json()[0]["status"] for name in ("stuck", "other")] == [
        "not active",
        "not active",
    ]


def test_the_board_written_fast_is_the_board(client):
    import random

    from protocols.plakoto import services

    base = "/plakoto/written"
    client.post(base + "/board/", "", content_type="application/json")
    tokens = {
        colour: client.put(
            f"{base}/players/{colour}", json.dumps({"username": colour}), content_type="application/json"
        ).json()[0]["token"]
        for colour in ("W", "B")
    }
    rng = random.Random(4)
    for _ in range(60):
        view = services.table_view("written")
        for token in (None, tokens["W"], tokens["B"]):
            mover = services.mover(view, token)
            # The very text the standard library writes of the board's cells (a client may compare answers as text).
            assert services.board_json(view.state, mover) == json.dumps(services.board(view.state, mover))
        if view.status != "started":
            break
        mover = tokens[view.state.turn]
        origin, destination = rng.choice(sorted(view.state.plan()))
        height = len(view.state.points[origin])
        client.put(
            f"{base}/board/piece/{origin}/{height}/",
            json.dumps({"x": destination, "token": mover}),
            content_type="application/json",
        )


@pytest.mark.parametrize("seed", range(4))
def test_the_board_written_fast_is_the_board_throughout_whole_games(seed):
    import random

    from games.rules.plakoto import ENGINE
    from protocols.plakoto import services

    rng = random.Random(seed)
    state = ENGINE.new(2, {}, rng)
    while True:
        while (roll := ENGINE.automatic(state)) is not None:
            ENGINE.apply(state, ENGINE.to_act(state), roll, rng)
        for mover in (state.turn, None):
            assert services.board_json(state, mover) == json.dumps(services.board(state, mover))
        if ENGINE.outcome(state) is not None:
            break
        seat = ENGINE.to_act(state)
        ENGINE.apply(state, seat, rng.choice(ENGINE.legal_actions(state, seat)), rng)
