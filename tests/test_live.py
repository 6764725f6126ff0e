"""Live updates end to end, against real uvicorn processes: pairing, moves, reconnecting, the end of a game,
timeouts, keep-alives, and two server processes sharing PostgreSQL and Redis."""

import contextlib
import itertools
import random
import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest

from games.rules import tab

from .conftest import require
from .faults import query
from .live import (
    REDIS_TEST_URL,
    Server,
    Stream,
    database_calls,
    next_action,
    redis_available,
    redis_flush,
    state_of,
    window_begins,
)

pytestmark = pytest.mark.server

PASSWORDS = {"zp": "secret", "jpleal": "another"}


def register_both(*servers: Server) -> None:
    for nick, password in PASSWORDS.items():
        assert servers[0].call("register", nick=nick, password=password) == (200, {})


def act(server: Server, nick: str, function: str, **payload) -> tuple[int, dict]:
    return server.call(function, nick=nick, password=PASSWORDS[nick], **payload)


def same_next(*streams: Stream, timeout: float = 10) -> dict:
    """Return the next message, checking that every stream received the very same one."""
    messages = [stream.next(timeout) for stream in streams]
    assert all(message == messages[0] for message in messages), messages
    return messages[0]


def paired(server: Server, other: Server | None = None) -> tuple[str, Stream, Stream, dict]:
    """zp joins on `server` and waits; jpleal joins on `other` (or the same server); both streams get the start."""
    other = other or server
    _, body = act(server, "zp", "join", group=99, size=9)
    game = body["game"]
    zp = server.stream("zp", game)
    assert zp.status == 200
    assert zp.headers["content-type"].startswith("text/event-stream")
    assert zp.nothing_for(0.3), "a waiting player's stream sends nothing"
    assert act(other, "jpleal", "join", group=99, size=9) == (200, {"game": game})
    jpleal = other.stream("jpleal", game)
    start = same_next(zp, jpleal)
    return game, zp, jpleal, start


def check_against_rules(before: dict, action: tuple[str, dict], after: dict) -> None:
    """The update after an action is what the rules make of the update before it."""
    function, payload = action
    expected = state_of(before)
    if function == "roll":
        expected.throw(tab.Throw.from_json(after["dice"]))
        assert expected.must_pass == (after["mustPass"] == after["turn"])
    elif function == "pass":
        expected.pass_turn()
    else:
        expected.select(payload["cell"])
    got = state_of(after)
    assert got.pieces == expected.pieces
    assert (got.turn, got.dice, got.step, got.cell, got.selected) == (
        expected.turn,
        expected.dice,
        expected.step,
        expected.cell,
        expected.selected,
    )
    if expected.winner is not None:
        winner = next(nick for nick, color in after["players"].items() if color == expected.winner)
        assert after["winner"] == winner
    else:
        assert "winner" not in after


def play_to_the_end(servers: dict[str, Server], streams: list[Stream], start: dict, game: str, seed: int) -> dict:
    """Both players make random legal requests, each on its own server; return the final message."""
    rng = random.Random(seed)
    message = start
    for _ in range(20_000):
        if "winner" in message:
            return message
        nick = message["turn"]
        function, payload = next_action(message, rng)
        assert act(servers[nick], nick, function, game=game, **payload) == (200, {}), (function, payload, message)
        after = same_next(*streams)
        check_against_rules(message, (function, payload), after)
        message = after
    raise AssertionError("the game did not end")


def test_pairing_and_a_move_reach_both_players(start_server):
    server = start_server()
    register_both(server)
    game, zp, jpleal, start = paired(server)
    assert start["initial"] == "zp" and start["turn"] == "zp" and start["step"] == "from"
    assert start["players"] == {"zp": "Blue", "jpleal": "Red"}
    assert (start["dice"], start["mustPass"]) == (None, None)
    assert start["pieces"][:9] == [{"color": "Blue", "inMotion": False, "reachedLastRow": False}] * 9
    assert start["pieces"][27:] == [{"color": "Red", "inMotion": False, "reachedLastRow": False}] * 9
    assert start["pieces"][9:27] == [None] * 18
    assert "winner" not in start

    rng = random.Random(1)
    message = start
    # Play until a piece has moved: the first move of the game needs a tâb.
    for _ in range(500):
        nick = message["turn"]
        function, payload = next_action(message, rng)
        assert act(server, nick, function, game=game, **payload) == (200, {})
        after = same_next(zp, jpleal)
        check_against_rules(message, (function, payload), after)
        message = after
        if function == "notify" and len(message.get("selected", [])) == 2 and message["step"] == "from":
            break
    else:
        raise AssertionError("no move in 500 actions")
    moved_from, moved_to = message["selected"]
    assert message["pieces"][moved_from] is None
    assert message["pieces"][moved_to]["inMotion"] is True
    assert message["dice"] is None
    zp.close()
    jpleal.close()


def test_reconnecting_gets_the_snapshot_and_the_end_closes_the_stream(start_server):
    server = start_server()
    register_both(server)
    game, zp, jpleal, start = paired(server)
    assert act(server, "zp", "roll", game=game) == (200, {})
    rolled = same_next(zp, jpleal)
    zp.close()

    again = server.stream("zp", game)
    assert again.next() == rolled
    assert again.nothing_for(0.2)

    assert act(server, "jpleal", "leave", game=game) == (200, {})
    final = same_next(again, jpleal)
    assert final["winner"] == "zp"
    assert {key: value for key, value in final.items() if key != "winner"} == rolled
    assert again.next() is Stream.END
    assert jpleal.next() is Stream.END

    late = server.stream("jpleal", game)
    assert late.next() == final
    assert late.next() is Stream.END
    # An EventSource that saw the last message and reconnects is told to stop (204).
    response = httpx.get(
        f"{server.url}/update", params={"nick": "zp", "game": game}, headers={"Last-Event-ID": late.event_ids[-1]}
    )
    assert response.status_code == 204


def test_leaving_while_waiting_ends_the_stream_without_winner(start_server):
    server = start_server()
    register_both(server)
    _, body = act(server, "zp", "join", group=7, size=7)
    stream = server.stream("zp", body["game"])
    assert act(server, "zp", "leave", game=body["game"]) == (200, {})
    assert stream.next() == {"winner": None}
    assert stream.next() is Stream.END


def test_update_refusals_are_json_errors(start_server):
    server = start_server()
    register_both(server)
    _, body = act(server, "zp", "join", group=7, size=7)
    cases = [
        ({"nick": "zp", "game": "averseda"}, "Invalid game reference"),
        ({"nick": "jpleal", "game": body["game"]}, "You are not a player of this game"),
        ({"game": body["game"]}, "undefined nick"),
        ({"nick": "zp"}, "undefined game"),
    ]
    for params, error in cases:
        response = httpx.get(f"{server.url}/update", params=params)
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/json"
        assert response.headers["access-control-allow-origin"] == "*"
        assert response.json() == {"error": error}


def test_functions_answered_on_the_connection_answer_as_the_lean_handler(start_server):
    """The actions are answered on the ASGI connection itself (core/direct.py); `register`, limited per address, by
    Django's lean handler: the same refusal from both carries the same headers. The limit per address still counts
    the address a trusted proxy gives, and a wrong method is still Django's 405."""
    server = start_server(TRUSTED_PROXIES="1", TAB_REGISTER_PER_MINUTE="2")
    direct, lean = httpx.post(f"{server.url}/roll", json={}), httpx.post(f"{server.url}/register", json={})
    assert (direct.status_code, direct.json()) == (lean.status_code, lean.json()) == (400, {"error": "undefined nick"})

    def kept(response):
        return {key: value for key, value in response.headers.items() if key not in ("content-length", "date")}

    assert kept(direct) == kept(lean) and direct.headers["x-content-type-options"] == "nosniff"
    wrong = httpx.get(f"{server.url}/roll")
    assert (wrong.status_code, wrong.headers["allow"]) == (405, "POST, OPTIONS")
    behind = {"X-Forwarded-For": "203.0.113.9"}
    window_begins(server.http, needed=15)  # the three registrations below counted in one minute
    for nick in ("ann", "bob"):
        assert httpx.post(f"{server.url}/register", json={"nick": nick, "password": "pw"}, headers=behind).is_success
    refused = httpx.post(f"{server.url}/register", json={"nick": "cy", "password": "pw"}, headers=behind)
    assert refused.status_code == 429 and refused.headers["retry-after"]
    assert httpx.post(f"{server.url}/register", json={"nick": "cy", "password": "pw"}).is_success


def test_idle_streams_get_keepalive_comments(start_server):
    server = start_server(TAB_KEEPALIVE_SECONDS="1")
    register_both(server)
    _, body = act(server, "zp", "join", group=7, size=7)
    stream = server.stream("zp", body["game"])
    # The first comment comes after a second of silence; a busy machine may take longer, never forever.
    give_up = time.monotonic() + 30
    while ": ping" not in stream.comments:
        assert time.monotonic() < give_up, "no keep-alive comment"
        assert stream.nothing_for(0.05), "a waiting player's stream sends no message"
    assert stream.comments[0] == ": ping"


def test_the_player_on_turn_who_does_nothing_loses(start_server):
    timeout = 2
    server = start_server(TAB_TURN_TIMEOUT=str(timeout))
    register_both(server)
    # The deadline is set when the game starts, after this instant: the game cannot end sooner than `timeout` later.
    before_pairing = time.monotonic()
    game, zp, jpleal, start = paired(server)
    # zp throws (a game nobody played would count for no one), then does nothing: the server's own timer ends the
    # game (however long a busy machine takes to get there).
    assert act(server, "zp", "roll", game=game)[0] == 200
    same_next(zp, jpleal)
    final = same_next(zp, jpleal, timeout=timeout + 30)
    assert time.monotonic() - before_pairing >= timeout
    assert final["winner"] == "jpleal"
    assert zp.next() is Stream.END and jpleal.next() is Stream.END
    assert server.call("ranking", group=99, size=9) == (
        200,
        {"ranking": [{"nick": "jpleal", "victories": 1, "games": 1}, {"nick": "zp", "victories": 0, "games": 1}]},
    )
    assert act(server, "zp", "roll", game=game) == (400, {"error": "The game is over"})


def deadline_of(server: Server, game: str) -> datetime:
    """Return a game's turn deadline as the server stored it."""
    [(deadline,)] = query(server.database_url, "SELECT deadline FROM games_game WHERE public_id = %s", (game,))
    if isinstance(deadline, str):  # SQLite keeps it as text
        deadline = datetime.fromisoformat(deadline)
    return deadline


def test_acting_restarts_the_clock_and_a_lonely_wait_expires(start_server):
    timeout = 2
    server = start_server(TAB_TURN_TIMEOUT=str(timeout))
    register_both(server)
    game, zp, jpleal, message = paired(server)
    started = deadline_of(server, game)
    # Each action sets the deadline `timeout` after the moment it was made, later than the one before it.
    deadlines, rng = [started], random.Random(0)
    for _ in range(3):
        time.sleep(0.05)
        function, payload = next_action(message, rng)
        assert act(server, message["turn"], function, game=game, **payload) == (200, {})
        message = same_next(zp, jpleal)
        deadlines.append(deadline_of(server, game))
    assert all(later - earlier >= timedelta(seconds=0.05) for earlier, later in itertools.pairwise(deadlines))

    _, body = act(server, "zp", "join", group=8, size=7)
    lonely = server.stream("zp", body["game"])
    assert lonely.next(timeout + 30) == {"winner": None}
    assert lonely.next() is Stream.END


@contextlib.contextmanager
def two_processes(database_url: str, tmp_path) -> Iterator[tuple[Server, Server]]:
    """Two server processes sharing a database and the tests' Redis (emptied first), stopped when the block ends."""
    require(redis_available(), "Redis")
    redis_flush()
    first = Server(database_url, tmp_path, REDIS_URL=REDIS_TEST_URL)
    second = Server(database_url, tmp_path, REDIS_URL=REDIS_TEST_URL)
    try:
        yield first, second
    finally:
        first.stop()
        second.stop()


@pytest.mark.postgres
@pytest.mark.redis
def test_two_processes_sharing_postgres_and_redis_play_a_game_to_its_end(postgres_databases, tmp_path):
    with two_processes(postgres_databases.new(), tmp_path) as (first, second):
        register_both(first)
        game, zp, jpleal, start = paired(first, second)
        # A third stream, on the other process, sees the same game.
        watcher = second.stream("zp", game)
        assert watcher.next() == start
        final = play_to_the_end({"zp": first, "jpleal": second}, [zp, jpleal, watcher], start, game, seed=7)
        assert final["winner"] in PASSWORDS
        for stream in (zp, jpleal, watcher):
            assert stream.next() is Stream.END
        loser = next(nick for nick in PASSWORDS if nick != final["winner"])
        assert second.call("ranking", group=99, size=9) == (
            200,
            {
                "ranking": [
                    {"nick": final["winner"], "victories": 1, "games": 1},
                    {"nick": loser, "victories": 0, "games": 1},
                ]
            },
        )


@pytest.mark.redis
def test_a_password_changed_anywhere_is_refused_by_a_process_that_believed_the_old_pair(live_databases, tmp_path):
    """A process that hears the others' notices believes its memory of a pair without asking Redis (core/notices.py):
    a password changed by another process (here a management command's) must be refused there all the same."""
    with two_processes(live_databases.new(), tmp_path) as (first, second):
        register_both(first)
        paired(second, first)  # zp plays and streams on the second process, which then hears every notice
        for _ in range(5):  # and checks zp's pair again and again: believed there from its own memory
            assert act(second, "zp", "register") == (200, {})
        first.manage(
            "shell",
            "-c",
            "from django.contrib.auth.models import User; zp = User.objects.get(username='zp'); "
            "zp.set_password('changed'); zp.save()",
        )
        # The notice travels through Redis: refused as soon as it comes (a remembered pair lives 300 s).
        deadline = time.monotonic() + 10
        while (answer := act(second, "zp", "register")) == (200, {}) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert answer == (401, {"error": "User registered with a different password"})
        assert second.call("register", nick="zp", password="changed") == (200, {})


@pytest.mark.parametrize("calls", database_calls())
def test_complete_games_on_every_board_size_at_once(start_server, calls):
    """Five games, one per board size, played at the same time to their end, every update checked; with the server's
    database calls in their thread, and on its event loop."""
    from concurrent.futures import ThreadPoolExecutor

    server = start_server(TAB_DATABASE_CALLS=calls)

    def play(size: int) -> dict:
        nicks = {f"blue{size}": f"pw-{size}", f"red{size}": f"pw-{size}"}
        for nick, password in nicks.items():
            assert server.call("register", nick=nick, password=password) == (200, {})
        blue, red = nicks
        _, body = server.call("join", group=size, size=size, nick=blue, password=nicks[blue])
        game = body["game"]
        assert server.call("join", group=size, size=size, nick=red, password=nicks[red]) == (200, body)
        streams = [server.stream(blue, game), server.stream(red, game)]
        message = same_next(*streams)
        assert len(message["pieces"]) == 4 * size
        rng = random.Random(size)
        for _ in range(20_000):
            if "winner" in message:
                break
            nick = message["turn"]
            function, payload = next_action(message, rng)
            response = server.call(function, nick=nick, password=nicks[nick], game=game, **payload)
            assert response == (200, {}), (function, payload, message, response)
            after = same_next(*streams)
            check_against_rules(message, (function, payload), after)
            message = after
        assert message["winner"] in nicks
        assert all(stream.next() is Stream.END for stream in streams)
        return message

    with ThreadPoolExecutor(max_workers=5) as pool:
        finals = list(pool.map(play, [7, 9, 11, 13, 15]))
    assert [len(final["pieces"]) for final in finals] == [28, 36, 44, 52, 60]
