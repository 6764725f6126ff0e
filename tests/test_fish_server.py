"""The Fish server as its clients see it: real TCP connections to a real server process (tests/live.py), every action,
answer and error type of the protocol, framing, kicks and the turn timeout."""

import json
import random
import re
import socket
import threading
import time
import uuid

import pytest

from games.rules.fish import COLOURS, ENGINE

from .fish_client import Client, Player
from .live import database_calls

CARD = "4111-1111-1111-1111"


@pytest.fixture(scope="module", params=database_calls())
def server(request, live_databases, tmp_path_factory):
    """A live server; the module's tests run against one for each place its database calls may run."""
    from .live import Server

    server = Server(live_databases.new(), tmp_path_factory.mktemp("fish"), TAB_DATABASE_CALLS=request.param)
    yield server
    server.stop()


@pytest.fixture
def client(server):
    clients = []

    def connect() -> Client:
        clients.append(Client(server.fish_port))
        return clients[-1]

    yield connect
    for each in clients:
        each.close()


def tournament() -> str:
    return f"cup-{uuid.uuid4().hex[:12]}"


def error_type(answer: dict) -> str:
    assert set(answer) == {"error_type", "error_message"} and answer["error_message"], answer
    return answer["error_type"]


def free_tiles(state: dict) -> list[tuple[int, int]]:
    taken = {(place["row"], place["col"]) for player in state["players"] for place in player["places"]}
    return [
        (row, col)
        for row, fish in enumerate(state["board"])
        for col, count in enumerate(fish)
        if count and (row, col) not in taken
    ]


def play_out(players: list[Player], rng: random.Random) -> dict:
    """Play every turn with a legal placement or move chosen at random until the game is over; return the last
    state. Every answer is checked against the rules module on the state the player saw."""
    by_colour = {player.color: player for player in players}
    penguins = len(players) * (6 - len(players))
    for _ in range(200):
        turn = players[0].turn()
        if turn is None:
            break
        player = by_colour[turn]
        state = player.state()
        if sum(len(p["places"]) for p in state["players"]) < penguins:
            row, col = rng.choice(free_tiles(state))
            assert player.ask("check_placement", row=row, col=col) == {"is_valid": True}
            after = player.place(row, col)["result_state"]
            assert {"row": row, "col": col} in next(p for p in after["players"] if p["color"] == turn)["places"]
            continue
        moves = player.ask("get_moves_for_color", color=turn)["reachable_locations"]
        move = rng.choice(moves)
        start, end = (move["start"]["row"], move["start"]["col"]), (move["end"]["row"], move["end"]["col"])
        fields = {"start_row": start[0], "start_col": start[1], "end_row": end[0], "end_col": end[1]}
        assert player.ask("check_move", **fields) == {"is_valid": True}
        fish = state["board"][start[0]][start[1]]
        score = next(p["score"] for p in state["players"] if p["color"] == turn)
        after = player.move(start, end)["result_state"]
        assert after["board"][start[0]][start[1]] == 0
        assert next(p["score"] for p in after["players"] if p["color"] == turn) == score + fish
    else:
        pytest.fail("the game did not end")
    return players[0].state()


def test_a_game_for_two_from_join_to_winners(client):
    a, b = client(), client()
    name = tournament()
    red = Player(a, name, credit_card=CARD)
    assert red.color == "red" and len(red.token) == 64 and int(red.token, 16) >= 0
    assert red.turn() is None
    waiting = red.state()
    assert waiting["players"] == [{"color": "red", "score": 0, "places": []}]
    board = waiting["board"]
    assert len(board) == 10 and all(len(row) == 4 for row in board)
    assert sum(fish == 0 for row in board for fish in row) == 4
    assert all(0 <= fish <= 5 for row in board for fish in row)
    # Before the start: no turn, no placement, nothing over; the bare board's moves.
    assert red.ask("is_game_over") == {"is_game_over": False, "winners": []}
    row, col = free_tiles(waiting)[0]
    assert red.ask("check_placement", row=row, col=col) == {"is_valid": False}
    assert error_type(red.place(row, col)) == "Invalid_Action"
    assert red.ask("get_moves_for_color", color="red") == {"reachable_locations": []}
    assert red.ask("get_moves_for_color", color="white") == {"reachable_locations": []}
    assert error_type(red.ask("get_moves_for_color", color="brown")) == "Unknown_Color"
    white = Player(b, name)
    assert white.color == "white" and white.token != red.token
    # The early placement removed nobody: the game has started now, with red on turn.
    assert red.turn() == "red" == white.turn()
    state = white.state()
    assert state["board"] == board and [p["color"] for p in state["players"]] == ["red", "white"]
    # A third join finds the tournament full.
    assert error_type(client().ask("join_tournament", tournament_id=name)) == "Tournament_Error"
    last = play_out([red, white], random.Random(5))
    assert red.turn() is None
    over = red.ask("is_game_over")
    scores = {p["color"]: p["score"] for p in last["players"]}
    best = max(scores.values())
    assert over == {"is_game_over": True, "winners": [c for c in ("red", "white") if scores[c] == best]}
    # Fish are conserved: those on the board and those scored are the board's at the start.
    assert sum(map(sum, last["board"])) + sum(scores.values()) == sum(map(sum, board))
    # A finished game never changes; its tokens still read, and acting removes nobody.
    assert error_type(white.place(0, 0)) == "Invalid_Action"
    assert white.ask("is_game_over") == over


def test_answers_have_exactly_the_keys_of_the_protocol(client):
    name = tournament()
    red, white = Player(client(), name), Player(client(), name)
    assert set(red.ask("check_turn")) == {"color"}
    assert set(red.ask("get_state")) == {"current_state"}
    assert set(red.ask("get_state")["current_state"]) == {"players", "board"}
    row, col = free_tiles(red.state())[0]
    assert set(red.ask("check_placement", row=row, col=col)) == {"is_valid"}
    placed = red.place(row, col)
    assert set(placed) == {"result_state"} and set(placed["result_state"]) == {"players", "board"}
    assert set(placed["result_state"]["players"][0]) == {"color", "score", "places"}
    moves = white.ask("get_moves_for_location", row=row, col=col)
    assert set(moves) == {"reachable_locations"}
    assert all(set(move) == {"start", "end"} for move in moves["reachable_locations"])
    # What the rules module says of that tile, on the state the server shows.
    state = ENGINE.state_from_json({**white.state(), "removed": [], "phase": "placement", "turn": "white"})
    expected = [
        {"start": {"row": m.start[0], "col": m.start[1]}, "end": {"row": m.end[0], "col": m.end[1]}}
        for m in state.moves_from(row, col)
    ]
    assert moves["reachable_locations"] == expected


def test_players_three_and_four_and_the_colours_in_join_order(client):
    for count in (3, 4):
        name = tournament()
        players = [Player(client(), name, players=count if index == 0 else 2) for index in range(count)]
        assert [p.color for p in players] == list(COLOURS[:count])
        assert players[0].turn() == "red"
        assert error_type(client().ask("join_tournament", tournament_id=name)) == "Tournament_Error"
        last = play_out(players, random.Random(count))
        assert [p["color"] for p in last["players"]] == list(COLOURS[:count])
        assert all(len(p["places"]) == 6 - count for p in last["players"])
    # 42 and "42" name one tournament; "042" another.
    number = random.randrange(10**9, 10**10)
    first = client().ask("join_tournament", tournament_id=number)
    second = client().ask("join_tournament", tournament_id=str(number))
    third = client().ask("join_tournament", tournament_id="0" + str(number))
    assert (first["color"], second["color"], third["color"]) == ("red", "white", "red")


def test_every_fault_of_a_line_is_unknown_action_and_the_connection_goes_on(client):
    c = client()
    for line in (
        b"{not json",
        b"\xff\xfe",
        b"[1]",
        b'"x"',
        b"42",
        b"null",
        b"{}",
        b'{"action": 5}',
        b'{"action": "Get_State"}',
        b'{"action": "fly"}',
    ):
        c.send(line + b"\n")
        assert error_type(c.answer()) == "Unknown_Action", line
    # Blank lines are ignored; "\r\n" endings too.
    c.send(b"\n   \r\n\t\n" + json.dumps({"action": "check_turn"}).encode() + b"\r\n")
    assert error_type(c.answer()) == "Incorrect_Token"


def test_bad_fields_get_the_error_of_the_first_fault(client):
    c = client()
    for fields in (
        {},
        {"tournament_id": ""},
        {"tournament_id": "x" * 65},
        {"tournament_id": None},
        {"tournament_id": 1.5},
        {"tournament_id": True},
        {"tournament_id": 10**70},
        {"tournament_id": tournament(), "players": 1},
        {"tournament_id": tournament(), "players": 5},
        {"tournament_id": tournament(), "players": None},
        {"tournament_id": tournament(), "players": "3"},
        {"tournament_id": tournament(), "players": 3.0},
        {"tournament_id": tournament(), "players": True},
    ):
        assert error_type(c.ask("join_tournament", **fields)) == "Tournament_Error", fields
    # A refused join made no tournament: the same id, well asked, is a new one.
    name = tournament()
    assert error_type(c.ask("join_tournament", tournament_id=name, players=7)) == "Tournament_Error"
    assert c.ask("join_tournament", tournament_id=name)["color"] == "red"
    for token in (None, 5, "", "0" * 64, ["x"]):
        fields = {} if token is None else {"user_token": token}
        assert error_type(c.ask("get_state", **fields)) == "Incorrect_Token", token
        # The token's fault comes before the fields'.
        assert error_type(c.ask("place_penguin", row="x", **fields)) == "Incorrect_Token"
    name = tournament()
    red, white = Player(c, name), Player(client(), name)
    for bad in ("3", 3.0, True, None, [3]):
        assert error_type(white.ask("check_placement", row=bad, col=0)) == "Invalid_Coordinate", bad
        assert error_type(white.ask("get_moves_for_location", row=0, col=bad)) == "Invalid_Coordinate"
        assert error_type(white.ask("check_move", start_row=0, start_col=0, end_row=bad, end_col=0)) == (
            "Invalid_Coordinate"
        )
    assert error_type(white.ask("check_placement", row=0)) == "Invalid_Coordinate"
    for color in ("black", "blue", "Red", 5, None):
        assert error_type(white.ask("get_moves_for_color", color=color)) == "Unknown_Color", color
    for row, col in ((10, 0), (-1, 0), (0, 4), (10**30, 0)):
        assert error_type(white.ask("get_moves_for_location", row=row, col=col)) == "Invalid_Coordinate"
        assert white.ask("check_placement", row=row, col=col) == {"is_valid": False}
    # An integer of any size is an integer: one of 5,000 digits is off the board.
    huge = "1" + "0" * 5000
    white.client.send(
        f'{{"action": "get_moves_for_location", "user_token": "{white.token}", "row": -{huge}, "col": 0}}\n'
    )
    assert error_type(white.client.answer()) == "Invalid_Coordinate"
    # None of this removed anybody.
    assert red.turn() == "red" and white.turn() == "red"


def test_a_refused_placement_or_move_removes_its_sender(client):
    name = tournament()
    red, white = Player(client(), name), Player(client(), name)
    tiles = free_tiles(red.state())
    red.place(*tiles[0])
    assert white.turn() == "white"
    # Out of turn: red is removed; its penguin leaves the board; white plays on alone.
    refused = red.place(*tiles[1])
    assert error_type(refused) == "Invalid_Action" and "turn" in refused["error_message"]
    for action in ("get_state", "check_turn", "is_game_over"):
        gone = red.ask(action)
        assert error_type(gone) == "Incorrect_Token" and "removed" in gone["error_message"]
    state = white.state()
    assert state["players"][0] == {"color": "red", "score": 0, "places": []}
    assert white.turn() == "white"
    assert white.ask("get_moves_for_color", color="red") == {"reachable_locations": []}
    # White places all its penguins, then moves until nothing can move; white alone wins.
    for _ in range(4):
        white.place(*free_tiles(white.state())[0])
    for _ in range(40):
        if white.turn() is None:
            break
        move = white.ask("get_moves_for_color", color="white")["reachable_locations"][0]
        white.move((move["start"]["row"], move["start"]["col"]), (move["end"]["row"], move["end"]["col"]))
    assert white.ask("is_game_over") == {"is_game_over": True, "winners": ["white"]}


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({"row": "0", "col": 0}, "Invalid_Coordinate"),  # ill-typed
        ({"row": 11, "col": 0}, "Invalid_Coordinate"),  # off the board
        ("hole", "Invalid_Coordinate"),
        ("taken", "Invalid_Coordinate"),
    ],
)
def test_each_bad_placement_is_answered_and_removes(client, fields, expected):
    name = tournament()
    red, white = Player(client(), name), Player(client(), name)
    state = red.state()
    first = free_tiles(state)[0]
    red.place(*first)
    if fields == "hole":
        row, col = next((r, c) for r, line in enumerate(state["board"]) for c, fish in enumerate(line) if not fish)
        fields = {"row": row, "col": col}
    elif fields == "taken":
        fields = {"row": first[0], "col": first[1]}
    assert white.ask("check_placement", **fields) == {"is_valid": False} or expected == "Invalid_Coordinate"
    assert error_type(white.ask("place_penguin", **fields)) == expected
    assert error_type(white.ask("get_state")) == "Incorrect_Token"
    # Red is alone now, and on turn again.
    assert red.turn() == "red"


def test_a_bad_move_removes_and_the_opponent_moves_on(client):
    name = tournament()
    red, white = Player(client(), name), Player(client(), name)
    players = {"red": red, "white": white}
    while len(sum((p["places"] for p in red.state()["players"]), [])) < 8:
        turn = red.turn()
        players[turn].place(*free_tiles(red.state())[0])
    assert red.turn() == "red"
    state = red.state()
    white_penguin = state["players"][1]["places"][0]
    # Red tries to move white's penguin: Invalid_Action, and red is out.
    refused = red.move((white_penguin["row"], white_penguin["col"]), (0, 0))
    assert error_type(refused) in ("Invalid_Action", "Invalid_Coordinate")
    assert error_type(red.ask("check_turn")) == "Incorrect_Token"
    assert white.turn() in ("white", None)


def test_pipelined_requests_are_answered_in_order(client):
    c = client()
    name = tournament()
    lines = [json.dumps({"action": "join_tournament", "tournament_id": name}), "{bad", ""]
    c.send("\n".join(lines) + "\n")
    joined, bad = c.answer(), c.answer()
    assert joined["color"] == "red" and error_type(bad) == "Unknown_Action"
    token = joined["user_token"]
    requests = [{"action": "check_turn", "user_token": token}, {"action": "get_state", "user_token": token}] * 50
    c.send("".join(json.dumps(request) + "\n" for request in requests))
    answers = [c.answer() for _ in requests]
    assert all(set(answer) == ({"color"} if i % 2 == 0 else {"current_state"}) for i, answer in enumerate(answers))


def test_a_client_that_sends_faster_than_it_reads_gets_every_answer_in_order(client):
    c = client()
    player = Player(c, tournament())
    # Far more than the connection holds unanswered: the server stops reading while its answers wait to be read, and
    # goes on as the client reads them (sent from a thread of its own, as the client's reading lags behind).
    requests = [{"action": action, "user_token": player.token} for action in ("check_turn", "get_state")]
    count = 3000
    text = "".join(json.dumps(requests[n % 2]) + "\n" for n in range(count))
    sender = threading.Thread(target=c.send, args=(text,))
    sender.start()
    time.sleep(0.5)  # the client reads nothing for a while
    answers = [c.answer() for _ in range(count)]
    sender.join()
    assert all(set(answer) == ({"color"} if n % 2 == 0 else {"current_state"}) for n, answer in enumerate(answers))
    assert set(player.ask("get_state")) == {"current_state"}


def test_lines_sent_before_the_client_ends_its_sending_are_all_answered(client):
    c = client()
    name = tournament()
    c.send(json.dumps({"action": "join_tournament", "tournament_id": name}) + "\n" + "{bad\n")
    c.sock.shutdown(socket.SHUT_WR)
    assert c.answer()["color"] == "red" and error_type(c.answer()) == "Unknown_Action"
    assert c.closed()


def test_the_lines_before_one_too_long_are_answered_first(client):
    c = client()
    token = Player(c, tournament()).token
    c.send(json.dumps({"action": "check_turn", "user_token": token}) + "\n" + "x" * 70000)
    assert c.answer() == {"color": None}  # the game waits for its second player
    assert error_type(c.answer()) == "Unknown_Action"
    assert c.closed()


def test_a_line_of_64_kib_is_read_and_a_longer_one_ends_the_connection(client):
    c = client()
    request = json.dumps({"action": "check_turn", "user_token": "x", "padding": ""})
    padded = request[:-2] + "y" * (65536 - len(request)) + '"}'
    assert len(padded.encode()) == 65536
    c.send(padded + "\n")
    assert error_type(c.answer()) == "Incorrect_Token"
    # One byte more: answered as soon as that byte arrives, without the line's end, and closed.
    c.send("z" * 65537)
    assert error_type(c.answer()) == "Unknown_Action"
    assert c.closed()
    # The server serves the others as before.
    assert client().ask("join_tournament", tournament_id=tournament())["color"] == "red"


def test_closing_a_connection_changes_nothing_and_a_token_works_from_another(client):
    first = client()
    name = tournament()
    red = Player(first, name)
    first.close()
    white = Player(client(), name)
    red.client = client()
    assert red.turn() == "red"
    assert "result_state" in red.place(*free_tiles(red.state())[0])
    assert white.turn() == "white"


def test_the_card_number_is_never_stored_nor_logged(server, client):
    # Its last four start with a zero, so no JSON number, timestamp or id in the dump can read as them.
    digits = "4929123456780042"
    name = tournament()
    Player(client(), name, credit_card=digits)
    Player(client(), name, credit_card={"number": digits, "cvc": 123})
    dump = server.manage("dumpdata", "--all")
    assert name in dump
    # A trace is a run of digits of its own (a masked "****0042" too); hex digests and dates that merely
    # contain the same four digits somewhere are not.
    traces = {digits, digits[-4:], digits[:6]}
    assert not traces & set(re.findall(r"[0-9A-Fa-f]+", dump.replace(name, " ")))
    assert not traces & set(re.findall(r"[0-9A-Fa-f]+", server.log.read_text()))


def test_the_turn_timeout_removes_the_player_on_turn(start_server):
    server = start_server(FISH_TURN_TIMEOUT="1.5")
    name = tournament()
    red, white = Player(Client(server.fish_port), name), Player(Client(server.fish_port), name)
    assert red.turn() == "red"
    # Nobody asks anything: the server's own timer removes red, and white's turn begins.
    deadline = time.monotonic() + 30
    while white.turn() != "white":
        assert time.monotonic() < deadline, "the timer did not fire"
        time.sleep(0.2)
    gone = red.ask("get_state")
    assert error_type(gone) == "Incorrect_Token" and "time" in gone["error_message"]
    # White places a penguin in time (a full period of its own), then lets its time run out too.
    assert "result_state" in white.place(*free_tiles(white.state())[0])
    while True:
        answer = white.ask("check_turn")
        if "error_type" in answer:
            break
        assert time.monotonic() < deadline + 30, "the second timeout did not fire"
        time.sleep(0.2)
    assert error_type(answer) == "Incorrect_Token"


def test_many_connections_and_a_silent_one_does_not_delay_the_others(server, client):
    silent = socket.create_connection(("127.0.0.1", server.fish_port))
    silent.sendall(b'{"action": "check_turn"')  # never ended
    others = [client() for _ in range(100)]
    for each in others:
        assert each.ask("join_tournament", tournament_id=tournament())["color"] == "red"
    silent.close()


@pytest.mark.parametrize(
    "environment, named",
    [
        ({"FISH_TURN_TIMEOUT": "0"}, "FISH_TURN_TIMEOUT"),
        ({"FISH_TURN_TIMEOUT": "-3"}, "FISH_TURN_TIMEOUT"),
        ({"FISH_TURN_TIMEOUT": "a minute"}, "FISH_TURN_TIMEOUT"),
        ({"FISH_TURN_TIMEOUT": "nan"}, "FISH_TURN_TIMEOUT"),
        ({"FISH_PORT": "port"}, "FISH_PORT"),
    ],
)
def test_a_bad_setting_stops_the_server_with_a_message_naming_it(tmp_path, environment, named):
    from .test_draughts_server import manage_check

    result = manage_check(tmp_path, **environment)
    assert result.returncode != 0 and named in result.stderr, result.stderr[-2000:]


def test_a_turn_timeout_may_have_decimals(tmp_path):
    from .test_draughts_server import manage_check

    assert manage_check(tmp_path, FISH_TURN_TIMEOUT="2.5").returncode == 0
