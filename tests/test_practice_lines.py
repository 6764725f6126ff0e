"""Practice alone in the games with their own protocols: a room, a table or a tournament where the computer takes
the other seats (made from the web, as the README says), and a protocol client that plays a whole game in it."""

import random
import time

import httpx
import pytest

from games.rules.draughts import State as DraughtsState

from .draughts_client import Client
from .fish_client import Client as FishClient
from .fish_client import Player
from .test_fish_server import free_tiles

pytestmark = pytest.mark.server

# Generous: a whole game, the computer thinking a few milliseconds a move, on a busy machine.
GAME_SECONDS = 240
POLL_SECONDS = 0.05


@pytest.fixture
def server(start_server):
    return start_server(COMPUTER_THINK_MS="20")


def test_a_draughts_line_client_plays_a_whole_game_against_the_computer(server):
    made = httpx.post(f"{server.url}/draughts/rooms/", json={"computer": 1, "colour": "w", "hold": False}).json()
    client = Client(server.draughts_port)
    assert client.say(f"JOIN {made['room']} {made['key']}") == "ROOM_JOINED"
    rng = random.Random(7)
    deadline = time.monotonic() + GAME_SECONDS
    state = client.state()
    while state["STATE"] == "PLAYING" and time.monotonic() < deadline:
        if state["PLAYER_TURN"] == "WHITE":
            position = DraughtsState.from_board(state["BOARD"], "w")
            assert client.say(f"MOVE {rng.choice(position.legal_moves())}") == "MOVE_OK"
        else:
            time.sleep(POLL_SECONDS)  # the computer's turn: ask again soon
        state = client.state()
    assert state["STATE"] in ("WHITE_WON", "BLACK_WON", "DRAW"), state
    client.close()
    assert httpx.post(f"{server.url}/draughts/rooms/", json={"computer": 1, "hold": "no"}).status_code == 400


def test_a_plakoto_rest_client_plays_a_whole_game_against_the_computer(server):
    rng = random.Random(8)
    with httpx.Client(base_url=f"{server.url}/plakoto", timeout=30) as api:
        assert api.post("/solo/board/").status_code == 200
        token = api.put("/solo/players/W", json={"username": "solo"}).json()[0]["token"]
        # Plakoto offers the levels that truly differ, random and greedy play (its search is no stronger).
        refused = httpx.post(f"{server.url}/tables/plakoto/solo/computer", json={"level": 3})
        assert (refused.status_code, refused.json()) == (400, {"errormesg": "level is one of 1, 2."})
        # The table's page: "play the computer" seats it in the free seat, and the game starts.
        seated = httpx.post(f"{server.url}/tables/plakoto/solo/computer", json={"level": 1})
        assert seated.json() == [{"piece_color": "B"}]
        deadline = time.monotonic() + GAME_SECONDS
        status = api.get("/solo/status/").json()[0]
        while status["status"] == "started" and time.monotonic() < deadline:
            if status["p_turn"] == "W":
                cells = api.get("/solo/board/", headers={"X-Token": token}).json()
                moves = [(cell["x"], cell["y"], move["x"]) for cell in cells for move in cell.get("moves", [])]
                x, y, destination = rng.choice(moves)
                moved = api.put(f"/solo/board/piece/{x}/{y}/", json={"x": destination}, headers={"X-Token": token})
                assert moved.status_code == 200, moved.text
            else:
                time.sleep(POLL_SECONDS)
            status = api.get("/solo/status/").json()[0]
    assert status["status"] == "ended" and status["result"] in ("W", "B", "D"), status


def test_a_fish_tcp_client_plays_a_whole_game_against_computers(server):
    name = "practice-cup"
    player = Player(FishClient(server.fish_port), name, players=3)
    for _ in range(2):
        seated = httpx.post(f"{server.url}/tables/fish/{name}/computer", json={"level": 1})
        assert seated.status_code == 200, seated.text
    rng = random.Random(9)
    deadline = time.monotonic() + GAME_SECONDS
    turn = player.turn()
    state = player.state()
    while len(state["players"]) < 3 or turn is not None:
        assert time.monotonic() < deadline, "the game did not end"
        if turn != player.color:
            time.sleep(POLL_SECONDS)
        elif sum(len(p["places"]) for p in state["players"]) < 3 * 3:
            row, col = rng.choice(free_tiles(state))
            assert "result_state" in player.place(row, col)
        else:
            moves = player.ask("get_moves_for_color", color=player.color)["reachable_locations"]
            move = rng.choice(moves)
            start, end = (move["start"]["row"], move["start"]["col"]), (move["end"]["row"], move["end"]["col"])
            assert "result_state" in player.move(start, end)
        turn, state = player.turn(), player.state()
    assert {entry["color"] for entry in state["players"]} == {"red", "white", "brown"}
    player.client.close()
