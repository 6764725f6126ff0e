"""Practice through the course API, unchanged: a join in group 900 + L pairs the client at once with the server's
computer player of level L, who plays through the same services as a person; the game counts for no one."""

import random

import pytest

from .live import Stream, next_action

pytestmark = pytest.mark.server

PASSWORD = "practice-secret"
MAX_MESSAGES = 3000


@pytest.mark.parametrize(("group", "computer"), [(901, "computer-random"), (903, "computer-search")])
def test_a_course_client_plays_a_whole_game_alone_against_the_server(start_server, group, computer):
    server = start_server(COMPUTER_THINK_MS="20")
    assert server.call("register", nick="solo", password=PASSWORD) == (200, {})
    # Waiting in a real group first: practising withdraws the player from it, as a join elsewhere does.
    _, waiting = server.call("join", nick="solo", password=PASSWORD, group=4, size=7)
    status, body = server.call("join", nick="solo", password=PASSWORD, group=group, size=7)
    assert status == 200 and body["game"] != waiting["game"]
    assert server.stream("solo", waiting["game"]).next() == {"winner": None}
    game = body["game"]
    stream: Stream = server.stream("solo", game)
    rng = random.Random(group)
    message = stream.next()
    assert message["players"] == {"solo": "Blue", computer: "Red"} and message["initial"] == "solo"
    seen_computer_act = False
    for _ in range(MAX_MESSAGES):
        if "winner" in message:
            break
        if message["turn"] == "solo":
            function, payload = next_action(message, rng)
            assert server.call(function, nick="solo", password=PASSWORD, game=game, **payload)[0] == 200
        else:
            seen_computer_act = True
        message = stream.next(timeout=30)
    assert "winner" in message and message["winner"] in ("solo", computer)
    assert seen_computer_act
    assert stream.next() is Stream.END
    # Practice: no ranking in the group, whoever won.
    assert server.call("ranking", group=group, size=7) == (200, {"ranking": []})
    stream.close()
