"""The draughts room server as its clients see it: real TLS connections to a real server process (tests/live.py),
every command, answer and code of the protocol, framing, bad input and clocks."""

import os
import re
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .draughts_client import Client, room, tls_context
from .faults import query
from .live import database_calls

START = "0b0b0b0bb0b0b0b00b0b0b0b0000000000000000w0w0w0w00w0w0w0ww0w0w0w0"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
ROOT = Path(__file__).resolve().parent.parent
VARIABLES = [
    "STATE",
    "PLAYER_TURN",
    "WHITE_WANTS_DRAW",
    "BLACK_WANTS_DRAW",
    "BLACK_TIME",
    "WHITE_TIME",
    "WHITE_ONLINE",
    "BLACK_ONLINE",
    "BOARD",
]


@pytest.fixture(scope="module", params=database_calls())
def server(request, live_databases, tmp_path_factory):
    """A live server; the module's tests run against one for each place its database calls may run."""
    from .live import Server

    server = Server(live_databases.new(), tmp_path_factory.mktemp("draughts"), TAB_DATABASE_CALLS=request.param)
    yield server
    server.stop()


@pytest.fixture
def client(server):
    clients = []

    def connect() -> Client:
        clients.append(Client(server.draughts_port))
        return clients[-1]

    yield connect
    for each in clients:
        each.close()


def code(answer: str) -> str:
    return answer.split(" ", 1)[0]


def test_the_example_session_of_the_protocol(server, client):
    a, b = client(), client()
    created = a.say("CREATE")
    assert re.fullmatch(
        rf"ROOM_CREATED ROOM_ID={UUID.pattern} PLAYER_COLOR_ID={UUID.pattern} ENEMY_COLOR_ID={UUID.pattern}", created
    )
    made = a.variables(created)
    assert len(set(made.values())) == 3
    waiting = a.say("GET_STATE")
    assert waiting.split(" ")[0] == "STATUS_OK" and [part.split("=")[0] for part in waiting.split(" ")[1:]] == VARIABLES
    state = a.variables(waiting)
    assert state["STATE"] == "WAITING" and state["PLAYER_TURN"] == "WHITE" and state["BOARD"] == START
    assert state["WHITE_TIME"] == state["BLACK_TIME"] == "600000"
    # Only the creator's colour is online: that is how it learns its colour.
    creator_white = state["WHITE_ONLINE"] == "TRUE"
    assert {state["WHITE_ONLINE"], state["BLACK_ONLINE"]} == {"TRUE", "FALSE"}
    assert code(a.say("MOVE c3 d4")) == "MOVE_FAIL"
    assert code(a.say("REQUEST_A_DRAW")) == "DRAW_FAIL"  # not while waiting
    assert b.say(f"JOIN {made['ROOM_ID']} {made['ENEMY_COLOR_ID'].upper()}") == "ROOM_JOINED"
    white, black = (a, b) if creator_white else (b, a)
    playing = white.state()
    assert playing["STATE"] == "PLAYING" and playing["WHITE_ONLINE"] == playing["BLACK_ONLINE"] == "TRUE"
    assert int(playing["WHITE_TIME"]) <= 600000 and playing["BLACK_TIME"] == "600000"
    assert black.say("MOVE b6 a5").startswith("MOVE_FAIL")
    assert white.say("MOVE c3 d4") == "MOVE_OK"
    assert black.say("MOVE d6 e5") == "MOVE_OK"
    assert white.say("MOVE g3 h4") == "MOVE_OK"
    assert black.say("MOVE b6 a5").startswith("MOVE_FAIL")  # capture is mandatory
    assert black.say("MOVE e5 c3") == "MOVE_OK"
    state = white.state()
    assert state["BOARD"] == "0b0b0b0bb0b0b0b00b000b0b000000000000000ww0b0w0000w0w0w0ww0w0w0w0"
    assert state["PLAYER_TURN"] == "WHITE" and int(state["BLACK_TIME"]) <= 600000
    assert white.say("MOVE d2 b4") == "MOVE_OK"
    assert black.say("REQUEST_A_DRAW") == "DRAW_OK"
    assert black.say("REQUEST_A_DRAW").startswith("DRAW_FAIL")
    assert code(white.say("CREATE")) == "INVALID_SYNTAX"
    assert white.say("LEAVE") == "ROOM_LEFT"
    state = black.state()
    assert state["BLACK_WANTS_DRAW"] == "TRUE" and state["WHITE_WANTS_DRAW"] == "FALSE"
    assert state["WHITE_ONLINE"] == "FALSE" and state["BLACK_ONLINE"] == "TRUE" and state["PLAYER_TURN"] == "BLACK"
    white_key = made["PLAYER_COLOR_ID"] if creator_white else made["ENEMY_COLOR_ID"]
    black_key = made["ENEMY_COLOR_ID"] if creator_white else made["PLAYER_COLOR_ID"]
    assert white.say(f"JOIN {made['ROOM_ID']} {white_key}") == "ROOM_JOINED"
    assert white.say("REQUEST_A_DRAW") == "DRAW_OK"
    state = white.state()
    assert state["STATE"] == "DRAW" and state["WHITE_WANTS_DRAW"] == state["BLACK_WANTS_DRAW"] == "TRUE"
    # Over: the clocks stand, nothing changes any more.
    assert code(white.say("MOVE a3 b4")) == "MOVE_FAIL"
    assert code(black.say("CANCEL_DRAW_REQUEST")) == "DRAW_CANCEL_FAIL"
    time.sleep(0.05)
    assert white.state() == state
    white.send("QUIT\n")
    assert white.line() == "" and white.closed()
    assert black.say("LEAVE") == "ROOM_LEFT"
    # Neither colour is in the room: it is deleted, for ever.
    assert code(black.say(f"JOIN {made['ROOM_ID']} {black_key}")) == "ROOM_NOT_FOUND"
    assert code(black.say(f"JOIN {made['ROOM_ID']} {white_key}")) == "ROOM_NOT_FOUND"
    # The game stays in the history.
    assert "English draughts" in server.http.get("/games/").text


def test_commands_exist_only_where_they_belong(client):
    c = client()
    for line in ("GET_STATE", "MOVE c3 d4", "LEAVE", "REQUEST_A_DRAW", "CANCEL_DRAW_REQUEST"):
        assert code(c.say(line)) == "INVALID_SYNTAX", line
    for line in ("get_state", "Create", "HELLO", "CREATE x", "QUIT please", "JOIN", "JOIN a b", "   ", ""):
        assert code(c.say(line)) == "INVALID_SYNTAX", line
    assert c.say("CREATE").startswith("ROOM_CREATED ")
    for line in (
        "CREATE",
        "JOIN 3f2a8c1e-5b7d-4e09-9a61-0c2d4b8e7f13 3f2a8c1e-5b7d-4e09-9a61-0c2d4b8e7f13",
        "GET_STATE now",
        "LEAVE 1",
        "REQUEST_A_DRAW please",
        "CANCEL_DRAW_REQUEST x",
        "QUIT now",
    ):
        assert code(c.say(line)) == "INVALID_SYNTAX", line
    # Spaces around and between words are fine; a tab is no separator.
    assert c.say("   GET_STATE   ").startswith("STATUS_OK ")
    assert code(c.say("GET_STATE\t")) == "INVALID_SYNTAX"
    assert c.say("LEAVE") == "ROOM_LEFT"


def test_join_refuses_what_is_not_a_room_or_a_colour_of_it(client):
    a, b, c = client(), client(), client()
    made = a.variables(a.say("CREATE"))
    room_id, enemy, mine = made["ROOM_ID"], made["ENEMY_COLOR_ID"], made["PLAYER_COLOR_ID"]
    for line in (
        f"JOIN {room_id}",
        f"JOIN {room_id} {enemy} x",
        f"JOIN {room_id} {{{enemy}}}",
        f"JOIN {room_id} {enemy.replace('-', '')}",
        f"JOIN {room_id[:-1]} {enemy}",
    ):
        assert code(b.say(line)) == "INVALID_SYNTAX", line
    assert code(b.say(f"JOIN {enemy} {enemy}")) == "ROOM_NOT_FOUND"  # no such room
    assert code(b.say(f"JOIN {room_id} {room_id}")) == "ROOM_NOT_FOUND"  # not a colour of it
    assert code(b.say(f"JOIN {room_id} {mine}")) == "ROOM_NOT_FOUND"  # held by its creator: no take-over
    assert b.say(f"JOIN {room_id} {enemy}") == "ROOM_JOINED"
    assert code(c.say(f"JOIN {room_id} {enemy}")) == "ROOM_NOT_FOUND"
    # A broken connection leaves its room as soon as it is noticed: the colour is free again.
    b.close()
    deadline = time.monotonic() + 30
    while (answer := c.say(f"JOIN {room_id} {enemy}")) != "ROOM_JOINED":
        assert code(answer) == "ROOM_NOT_FOUND" and time.monotonic() < deadline
        time.sleep(0.05)


def test_lines_may_come_together_or_in_pieces_with_any_ending(client):
    c = client()
    c.send("CREATE\nGET_STATE\r\nGET_STATE\rGET_STATE\n")
    assert c.line().startswith("ROOM_CREATED ")
    for _ in range(3):
        assert c.line().startswith("STATUS_OK ")
    # One line over several writes, and a \r\n whose two bytes come apart: one answer each.
    for piece in ("GET_", "ST", "ATE\r"):
        c.send(piece)
        time.sleep(0.05)
    c.send("\nGET_STATE\n")
    assert c.line().startswith("STATUS_OK ") and c.line().startswith("STATUS_OK ")
    assert c.say("LEAVE") == "ROOM_LEFT"


def test_bad_bytes_are_refused_and_the_connection_stays(client):
    c = client()
    c.send(b"\xff\xfe GET_STATE\n")
    assert code(c.line()) == "INVALID_SYNTAX"
    c.send(b"CREATE\x00\n")
    assert code(c.line()) == "INVALID_SYNTAX"
    assert c.say("CREATE").startswith("ROOM_CREATED ")
    c.send("MOVE c3 d4 é\n")
    assert code(c.line()) == "MOVE_FAIL"
    for line in ("MOVE", "MOVE c3", "MOVE C3 D4", "MOVE c3 c3", "MOVE z9 a1", "MOVE " + "c3 d4 " * 150):
        assert code(c.say(line)) == "MOVE_FAIL", line


def test_a_line_too_long_is_refused_and_ends_the_connection_which_leaves_its_room(client):
    a, b = client(), client()
    made = a.variables(a.say("CREATE"))
    a.send("GET_STATE\n" + "x" * 1024 + "\n")  # exactly 1,024 bytes: a line, unknown
    assert a.line().startswith("STATUS_OK ") and code(a.line()) == "INVALID_SYNTAX"
    a.send("G" * 1025)  # no ending yet: the server does not wait for one
    assert code(a.line()) == "INVALID_SYNTAX" and a.closed()
    # The creator left: the waiting room is deleted.
    deadline = time.monotonic() + 30
    while code(answer := b.say(f"JOIN {made['ROOM_ID']} {made['ENEMY_COLOR_ID']}")) != "ROOM_NOT_FOUND":
        assert answer == "ROOM_JOINED" and b.say("LEAVE") == "ROOM_LEFT" and time.monotonic() < deadline
        time.sleep(0.05)


def test_quit_closes_without_an_answer_and_leaves(client):
    a, b = client(), client()
    made = a.variables(a.say("CREATE"))
    a.send("QUIT\n")
    assert a.line() == "" and a.closed()
    assert code(b.say(f"JOIN {made['ROOM_ID']} {made['ENEMY_COLOR_ID']}")) == "ROOM_NOT_FOUND"
    c = client()
    c.send("QUIT\n")
    assert c.line() == ""


def test_only_tls_is_spoken_and_a_silent_client_delays_nobody(server, client):
    plain = socket.create_connection(("127.0.0.1", server.draughts_port), timeout=30)
    plain.sendall(b"CREATE\n")
    # Not a TLS handshake: dropped (after a TLS alert at most), and never answered in plain text.
    received = b""
    while chunk := plain.recv(4096):
        received += chunk
    assert b"ROOM" not in received and len(received) < 100
    plain.close()
    silent = [socket.create_connection(("127.0.0.1", server.draughts_port), timeout=30) for _ in range(300)]
    half = socket.create_connection(("127.0.0.1", server.draughts_port), timeout=30)
    half.sendall(b"\x16\x03\x01\x00\xff")  # the start of a ClientHello, and no more
    c = client()
    assert c.say("CREATE").startswith("ROOM_CREATED ")
    for sock in [*silent, half]:
        sock.close()


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_tls_1_2_and_1_3_are_spoken(server, version):
    context = tls_context()
    context.minimum_version = context.maximum_version = version
    with context.wrap_socket(socket.create_connection(("127.0.0.1", server.draughts_port), timeout=30)) as sock:
        assert sock.version() == version.name.replace("v1_", "v1.")
        sock.sendall(b"CREATE\n")
        assert sock.recv(100).startswith(b"ROOM_CREATED ")


def test_nothing_older_than_tls_1_2_is_accepted(tmp_path):
    import dataclasses

    from core.lineservers import registered, self_signed_certificate

    (draughts,) = [server for server in registered() if server.name == "draughts"]
    self_signed_certificate(tmp_path / "cert.pem", tmp_path / "key.pem", ["localhost"])
    draughts = dataclasses.replace(draughts, certificate=str(tmp_path / "cert.pem"), key=str(tmp_path / "key.pem"))
    assert draughts.tls().minimum_version == ssl.TLSVersion.TLSv1_2


def test_the_certificate_is_made_once_and_kept(server):
    first = (server.workdir / "draughts_tls_cert.pem").read_bytes()
    key = server.workdir / "draughts_tls_key.pem"
    assert key.stat().st_mode & 0o777 == 0o600
    pem = ssl.get_server_certificate(("127.0.0.1", server.draughts_port))
    assert ssl.PEM_cert_to_DER_cert(pem) == ssl.PEM_cert_to_DER_cert(first.decode())


def test_a_game_played_to_its_end_and_its_result_kept(server, client):
    _, _, white, black, made = room(server.draughts_port)
    # A short game: black gives its pieces away until white has taken them all (a fixed line of forced captures is
    # not needed: the server is asked for the state and each side plays its first legal-looking move).
    from games.rules.draughts import State

    state = State()
    players = {"w": white, "b": black}
    import random

    rng = random.Random(3)
    for _ in range(400):
        if state.winner() is not None:
            break
        move = rng.choice(state.legal_moves())
        assert players[state.turn].say(f"MOVE {move}") == "MOVE_OK"
        state.apply(move)
    assert state.winner() is not None, "a random game of 400 plies"
    final = white.state()
    assert final["STATE"] == ("WHITE_WON" if state.winner() == "w" else "BLACK_WON")
    assert final["BOARD"] == state.text and final["PLAYER_TURN"] == ("WHITE" if state.turn == "w" else "BLACK")
    assert code(white.say("REQUEST_A_DRAW")) == "DRAW_FAIL"
    rows = query(
        server.database_url,
        "SELECT status, ending FROM games_game WHERE kind = 'draughts' AND status = 'finished' AND ending = 'no-move'",
    )
    assert rows


def test_a_clock_runs_out_on_the_servers_own_timer(live_databases, tmp_path):
    from .live import Server

    server = Server(live_databases.new(), tmp_path, DRAUGHTS_CLOCK_MS="3000", TAB_SWEEP_INTERVAL_MS="100")
    try:
        creator, joiner, white, black, made = room(server.draughts_port)
        assert white.say("MOVE c3 d4") == "MOVE_OK"
        # Nobody says anything: the server ends the game when black's clock reaches 0, and writes it down.
        deadline = time.monotonic() + 60
        while not query(server.database_url, "SELECT 1 FROM games_game WHERE kind = 'draughts' AND ending = 'flag'"):
            assert time.monotonic() < deadline, "the clock did not end the game"
            time.sleep(0.1)
        state = white.state()
        assert state["STATE"] == "WHITE_WON" and state["BLACK_TIME"] == "0" and state["PLAYER_TURN"] == "BLACK"
        assert 0 < int(state["WHITE_TIME"]) <= 3000
        assert code(black.say("MOVE d6 e5")) == "MOVE_FAIL"
        assert white.state() == state
    finally:
        server.stop()


def test_a_move_after_the_clock_ran_out_is_refused_even_before_the_sweep(live_databases, tmp_path):
    from .live import Server

    # The sweeper looks once a minute here: the move itself finds the clock run out.
    server = Server(live_databases.new(), tmp_path, DRAUGHTS_CLOCK_MS="3000", TAB_SWEEP_INTERVAL_MS="60000")
    try:
        _, _, white, _, _ = room(server.draughts_port)
        time.sleep(3.2)
        assert code(white.say("MOVE c3 d4")) == "MOVE_FAIL"
        state = white.state()
        assert state["STATE"] == "BLACK_WON" and state["WHITE_TIME"] == "0"
    finally:
        server.stop()


def manage_check(tmp_path, **environment: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TAB_VAR_DIR": str(tmp_path), **environment}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "environment, named",
    [
        ({"DRAUGHTS_TLS_CERT": "cert.pem"}, "DRAUGHTS_TLS_KEY"),
        ({"DRAUGHTS_TLS_KEY": "key.pem"}, "DRAUGHTS_TLS_CERT"),
        ({"DRAUGHTS_TLS_CERT": "missing.pem", "DRAUGHTS_TLS_KEY": "key.pem"}, "DRAUGHTS_TLS_CERT"),
        ({"DRAUGHTS_TLS_CERT": "cert.pem", "DRAUGHTS_TLS_KEY": "cert.pem"}, "DRAUGHTS_TLS_KEY"),
        ({"DRAUGHTS_TLS_CERT": "key.pem", "DRAUGHTS_TLS_KEY": "key.pem"}, "DRAUGHTS_TLS_CERT"),
        ({"DRAUGHTS_TLS_CERT": "cert.pem", "DRAUGHTS_TLS_KEY": "other.key"}, "DRAUGHTS_TLS_KEY"),
        ({"DRAUGHTS_CLOCK_MS": "0"}, "DRAUGHTS_CLOCK_MS"),
        ({"DRAUGHTS_CLOCK_MS": "ten"}, "DRAUGHTS_CLOCK_MS"),
        ({"DRAUGHTS_PORT": "port"}, "DRAUGHTS_PORT"),
    ],
)
def test_a_bad_setting_stops_the_server_with_a_message_naming_it(tmp_path, environment, named):
    from core.lineservers import self_signed_certificate

    self_signed_certificate(tmp_path / "cert.pem", tmp_path / "key.pem", ["localhost"])
    self_signed_certificate(tmp_path / "other.crt", tmp_path / "other.key", ["localhost"])
    paths = {
        name: str(tmp_path / value) if name.endswith(("CERT", "KEY")) else value for name, value in environment.items()
    }
    result = manage_check(tmp_path, **paths)
    assert result.returncode != 0 and named in result.stderr, result.stderr[-2000:]


def test_given_certificate_files_are_used(tmp_path):
    from core.lineservers import self_signed_certificate

    self_signed_certificate(tmp_path / "cert.pem", tmp_path / "key.pem", ["localhost"])
    result = manage_check(
        tmp_path, DRAUGHTS_TLS_CERT=str(tmp_path / "cert.pem"), DRAUGHTS_TLS_KEY=str(tmp_path / "key.pem")
    )
    assert result.returncode == 0, result.stderr
