"""kill -9 of the whole server in the middle of Fish tournaments, and a new start on the same database: boards, scores,
penguins, removals, turns and tokens are all there, and a turn whose deadline passed while the server was down ends at
once (a restart neither extends nor resets it). Real TCP sockets against gunicorn as `make run` starts it, on the
suite's database (SQLite or PostgreSQL)."""

import time
import uuid

from .fish_client import Client, Player

TIMEOUT = 10
DOWN_SECONDS = TIMEOUT + 2  # the turn on at the kill is overdue when the server is back


def test_a_restart_loses_nothing(live_databases, tmp_path):
    from .live import Gunicorn, free_port

    database_url, port = live_databases.new(), free_port()
    environment = {"FISH_PORT": str(port), "FISH_TURN_TIMEOUT": str(TIMEOUT)}
    server = Gunicorn(database_url, tmp_path, **environment)
    try:
        # A tournament for three that waits for its third player (no clock runs while it waits).
        waiting_name = f"waiting-{uuid.uuid4().hex[:8]}"
        waiting = [Player(Client(port), waiting_name, players=3), Player(Client(port), waiting_name)]
        # A game for three: brown removed for playing out of turn, red and white placing; then one placement each.
        name = f"cup-{uuid.uuid4().hex[:8]}"
        red, white, brown = (
            Player(Client(port), name, players=3),
            Player(Client(port), name),
            Player(Client(port), name),
        )
        board = red.state()["board"]
        free = [(r, c) for r, line in enumerate(board) for c, fish in enumerate(line) if fish]
        assert "error_type" in brown.place(*free[0])
        red.place(*free[1])
        white.place(*free[2])
        before = red.state()
        turn = red.turn()
        assert turn == "red"
        server.kill()
        time.sleep(DOWN_SECONDS)

        server = Gunicorn(database_url, tmp_path, **environment)
        for player in (red, white, brown, *waiting):
            player.client = Client(port)
        # The turn that was on when the server died was overdue when it came back: red is out, at once.
        deadline = time.monotonic() + 5
        while "error_type" not in (gone := red.ask("get_state")):
            assert time.monotonic() < deadline, "the overdue turn did not end when the server came back"
            time.sleep(0.1)
        assert gone["error_type"] == "Incorrect_Token"
        after = white.state()
        assert after["board"] == before["board"] == board
        assert after["players"][1] == before["players"][1]
        assert after["players"][0] == {**before["players"][0], "places": []}
        assert after["players"][2] == {"color": "brown", "score": 0, "places": []}
        assert brown.ask("check_turn")["error_type"] == "Incorrect_Token"
        # White plays on alone, with its token from before the restart.
        assert white.turn() == "white"
        assert "result_state" in white.place(*free[3])
        # The waiting tournament kept its seats and its board, and starts with its third player.
        assert [p["color"] for p in waiting[1].state()["players"]] == ["red", "white"]
        third = Player(Client(port), waiting_name)
        assert third.color == "brown" and waiting[0].turn() == "red"
    finally:
        server.stop()
