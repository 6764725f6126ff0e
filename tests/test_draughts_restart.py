"""kill -9 of the whole server in the middle of draughts games, and a new start on the same database: every room,
board, draw request and clock is there, the players come back with JOIN, and the time the server was down is charged
to nobody. Real TLS sockets against gunicorn as `make run` starts it, on the suite's database (SQLite or
PostgreSQL)."""

import time

from .draughts_client import Client, room

CLOCK_MS = 6000
DOWN_SECONDS = 8  # longer than any clock left: a clock charged for the downtime would have run out


def keys(made: dict[str, str], creator_white: bool) -> tuple[str, str]:
    """Return the white and black colours' UUIDs of a room."""
    if creator_white:
        return made["PLAYER_COLOR_ID"], made["ENEMY_COLOR_ID"]
    return made["ENEMY_COLOR_ID"], made["PLAYER_COLOR_ID"]


def test_a_restart_loses_nothing(live_databases, tmp_path):
    from .live import Gunicorn, free_port

    database_url, port = live_databases.new(), free_port()
    server = Gunicorn(database_url, tmp_path, DRAUGHTS_PORT=str(port), DRAUGHTS_CLOCK_MS=str(CLOCK_MS))
    try:
        # A room waiting for its second player.
        waiting = Client(port)
        waiting_made = waiting.variables(waiting.say("CREATE"))
        # A game in play: two moves, a standing draw request of white's, black's clock running.
        creator, _, white, black, made = room(port)
        assert white.say("MOVE c3 d4") == "MOVE_OK"
        assert black.say("MOVE d6 e5") == "MOVE_OK"
        assert white.say("REQUEST_A_DRAW") == "DRAW_OK"
        assert white.say("MOVE g3 h4") == "MOVE_OK"
        before = black.state()
        read_at = time.monotonic()
        server.kill()
        killed_at = time.monotonic()
        time.sleep(DOWN_SECONDS)

        server = Gunicorn(database_url, tmp_path, DRAUGHTS_PORT=str(port), DRAUGHTS_CLOCK_MS=str(CLOCK_MS))
        white_key, black_key = keys(made, creator is white)
        again = Client(port)
        assert again.say(f"JOIN {made['ROOM_ID']} {black_key}") == "ROOM_JOINED"
        after = again.state()
        # Connections were cut: only the colour that came back is online.
        assert after["WHITE_ONLINE"] == "FALSE" and after["BLACK_ONLINE"] == "TRUE"
        assert after["STATE"] == "PLAYING" and after["BOARD"] == before["BOARD"]
        assert after["PLAYER_TURN"] == "BLACK" and after["WHITE_WANTS_DRAW"] == "TRUE"
        assert after["WHITE_TIME"] == before["WHITE_TIME"]
        # Black's clock lost at most the second before the kill (and what passed between reading and killing), and
        # nothing of the downtime; it may have got back that last second.
        lost = int(before["BLACK_TIME"]) - int(after["BLACK_TIME"])
        assert -1500 <= lost <= 1500 + (killed_at - read_at) * 1000, (before, after)
        # The other colour comes back too; the game goes on.
        back = Client(port)
        assert back.say(f"JOIN {made['ROOM_ID']} {white_key}") == "ROOM_JOINED"
        assert again.say("MOVE e5 c3") == "MOVE_OK"
        assert back.say("MOVE d2 b4") == "MOVE_OK"
        # The waiting room is still there, its creator still in it: its second player can come now.
        joiner = Client(port)
        assert joiner.say(f"JOIN {waiting_made['ROOM_ID']} {waiting_made['ENEMY_COLOR_ID']}") == "ROOM_JOINED"
        assert joiner.state()["STATE"] == "PLAYING"
        for client in (waiting, creator, white, black, again, back, joiner):
            client.close()
    finally:
        server.stop()


def test_a_clean_stop_is_not_a_leave_either(live_databases, tmp_path):
    from .live import Gunicorn, free_port

    database_url, port = live_databases.new(), free_port()
    server = Gunicorn(database_url, tmp_path, DRAUGHTS_PORT=str(port))
    try:
        waiting = Client(port)
        made = waiting.variables(waiting.say("CREATE"))
        server.stop()
        assert waiting.line() == ""
        server = Gunicorn(database_url, tmp_path, DRAUGHTS_PORT=str(port))
        joiner = Client(port)
        assert joiner.say(f"JOIN {made['ROOM_ID']} {made['ENEMY_COLOR_ID']}") == "ROOM_JOINED"
        state = joiner.state()
        assert state["STATE"] == "PLAYING"
        assert "TRUE" in (state["WHITE_ONLINE"], state["BLACK_ONLINE"]) and "FALSE" in (
            state["WHITE_ONLINE"],
            state["BLACK_ONLINE"],
        )
        joiner.close()
    finally:
        server.stop()
