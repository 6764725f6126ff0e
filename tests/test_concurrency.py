"""Many requests at the same moment against a real server process, each on its own connection: the row locks of the
services let exactly one of them take effect, and the others see its result.

The server is started as production runs it (tests/live.py): the API's lean handler hands the calls to the database
thread, which runs those that arrive together in one transaction (group commit), each service in a savepoint of its
own. On SQLite the database is a file; on PostgreSQL, a database of its own.
"""

import json
import threading
import traceback
from collections import Counter

import httpx
import pytest

from games.rules import tab
from games.rules.tab import Piece, Throw

from .faults import query
from .live import Server

pytestmark = pytest.mark.server

SIZE = 9
BARRIER_TIMEOUT = 30
PASSWORDS = {"alice": "alice-secret", "bob": "bob-secret"}
# The limits per address are not under test here: every request comes from 127.0.0.1.
NO_LIMITS = {"TAB_JOIN_PER_MINUTE": "0", "TAB_REGISTER_PER_MINUTE": "0", "TAB_LOGIN_FAILURES_PER_MINUTE": "0"}


@pytest.fixture
def server(start_server) -> Server:
    server = start_server(**NO_LIMITS)
    for nick, password in PASSWORDS.items():
        assert server.call("register", nick=nick, password=password) == (200, {})
    return server


def at_once(server: Server, requests: list[tuple[str, dict]]) -> list[tuple[int, dict]]:
    """POST each (function, payload) from its own thread, all released together; return the answers in order."""
    barrier = threading.Barrier(len(requests))
    answers: list = [None] * len(requests)
    failures: list[str] = []

    def fire(index: int, function: str, payload: dict) -> None:
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                # Open the connection first: the requests then meet at the server, not at its door.
                client.options(f"/{function}")
                barrier.wait(timeout=BARRIER_TIMEOUT)
                response = client.post(f"/{function}", content=json.dumps(payload))
                answers[index] = (response.status_code, response.json())
        except Exception:
            failures.append(traceback.format_exc())
            barrier.abort()

    threads = [threading.Thread(target=fire, args=(index, *request)) for index, request in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * BARRIER_TIMEOUT)
    assert not any(thread.is_alive() for thread in threads), "a request never finished"
    assert not failures, failures[0]
    return answers


def credentials(nick: str) -> dict:
    return {"nick": nick, "password": PASSWORDS[nick]}


def started_game(server: Server, group: int) -> str:
    """alice waits first, so she is the initial player and on turn; return the game's id."""
    _, body = server.call("join", **credentials("alice"), group=group, size=SIZE)
    assert server.call("join", **credentials("bob"), group=group, size=SIZE) == (200, body)
    return body["game"]


def game_row(server: Server, game: str) -> tuple[int, str, int, tab.State | None]:
    """Return the game's (id, status, version, rules state) as the server stored them."""
    [(pk, status, version, state)] = query(
        server.database_url, "SELECT id, status, version, state FROM games_game WHERE public_id = %s", (game,)
    )
    if isinstance(state, str):  # SQLite keeps JSON as text
        state = json.loads(state)
    return pk, status, version, state and tab.State.from_json(state)


def arrange(server: Server, game: str, state: tab.State) -> None:
    """Put the game in `state` behind the server's back (it reads the row afresh on every action)."""
    placeholder = "%s::jsonb" if server.database_url.startswith("postgres") else "%s"
    query(
        server.database_url,
        f"UPDATE games_game SET state = {placeholder} WHERE public_id = %s",
        (json.dumps(state.to_json()), game),
    )


def events(server: Server, game_pk: int, kind: str | None = None) -> list[tuple]:
    """Return the game's log as (seq, kind, player nick, data) rows, in order."""
    rows = query(
        server.database_url,
        "SELECT e.seq, e.kind, u.username, e.data FROM games_gameevent e LEFT JOIN auth_user u ON u.id = e.player_id"
        " WHERE e.game_id = %s ORDER BY e.seq",
        (game_pk,),
    )
    rows = [(seq, kind, nick, json.loads(data) if isinstance(data, str) else data) for seq, kind, nick, data in rows]
    return [row for row in rows if kind is None or row[1] == kind]


def statuses(answers: list[tuple[int, dict]]) -> Counter:
    return Counter(status for status, _ in answers)


def test_the_same_move_twenty_times_at_once_is_made_once(server):
    game = started_game(server, group=1)
    state = tab.State.new(SIZE)
    state.dice = Throw.of_value(1)
    arrange(server, game, state)
    pk, _, version_before, _ = game_row(server, game)
    logged_before = len(events(server, pk))

    answers = at_once(server, [("notify", {**credentials("alice"), "game": game, "cell": 8})] * 20)

    assert statuses(answers) == {200: 1, 400: 19}, answers
    # The move used the throw: the others find none.
    assert {answer["error"] for status, answer in answers if status == 400} == {"You must roll the dice first"}
    _, _, version, state = game_row(server, game)
    assert state.pieces[8] is None and state.pieces[9] == Piece(tab.BLUE, in_motion=True)
    assert sum(piece is not None and piece.color == tab.BLUE for piece in state.pieces) == SIZE
    assert (state.turn, state.dice) == (tab.BLUE, None)  # a tâb keeps the turn
    assert version == version_before + 1
    assert len(events(server, pk)) == logged_before + 1
    assert events(server, pk, "move") == [(version, "move", "alice", {"from": 8, "to": 9, "captures": False})]


def test_both_players_rolling_at_once_only_the_player_on_turn_throws(server):
    for group in range(1, 11):
        game = started_game(server, group=group)
        answers = at_once(server, [("roll", {**credentials(nick), "game": game}) for nick in ("alice", "bob")])
        assert answers[0] == (200, {}) and answers[1] == (400, {"error": "Not your turn to play"}), answers
        pk, _, version, state = game_row(server, game)
        throws = events(server, pk, "throw")
        assert [nick for _, _, nick, _ in throws] == ["alice"]
        assert version == 3  # create, start, throw
        assert (state.turn, state.dice) == (tab.BLUE, Throw(tuple(throws[0][3]["sticks"])))


def test_the_same_join_twenty_times_at_once_waits_once(server):
    answers = at_once(server, [("join", {**credentials("alice"), "group": 7, "size": SIZE})] * 20)

    assert statuses(answers) == {200: 20}, answers
    assert len({answer["game"] for _, answer in answers}) == 1
    [(public_id, status, initial)] = query(
        server.database_url,
        "SELECT g.public_id, g.status, u.username FROM games_game g"
        ' JOIN games_seat s ON s.game_id = g.id AND s."index" = 0 JOIN auth_user u ON u.id = s.user_id',
    )
    assert (public_id, status, initial) == (answers[0][1]["game"], "waiting", "alice")
    assert query(server.database_url, "SELECT kind FROM games_gameevent") == [("create",)]


# The players in seats 0 and 1 of each game (seat 1 empty while it waits).
PLAYERS = (
    ' JOIN games_seat sa ON sa.game_id = g.id AND sa."index" = 0 JOIN auth_user a ON a.id = sa.user_id'
    ' LEFT JOIN games_seat sb ON sb.game_id = g.id AND sb."index" = 1 LEFT JOIN auth_user b ON b.id = sb.user_id'
)


def test_fifty_players_joining_at_once_make_twenty_five_games(start_server):
    server = start_server(**NO_LIMITS)
    nicks = [f"player{index:02}" for index in range(50)]
    for nick in nicks:
        assert server.call("register", nick=nick, password="secret") == (200, {})

    answers = at_once(
        server, [("join", {"nick": nick, "password": "secret", "group": 3, "size": SIZE}) for nick in nicks]
    )

    assert statuses(answers) == {200: 50}, answers
    games = query(
        server.database_url,
        "SELECT g.public_id, g.status, a.username, b.username FROM games_game g" + PLAYERS,
    )
    assert len(games) == 25
    assert {status for _, status, _, _ in games} == {"playing"}
    assert sorted(nick for _, _, *players in games for nick in players) == nicks  # everyone plays, nobody twice
    players_of = {public_id: set(players) for public_id, _, *players in games}
    for nick, (_, answer) in zip(nicks, answers, strict=True):
        assert nick in players_of[answer["game"]], (nick, answer)
    kinds = query(server.database_url, "SELECT kind FROM games_gameevent")
    assert Counter(kind for (kind,) in kinds) == {"create": 25, "start": 25}


def test_two_players_joining_at_once_always_pair(server):
    for group in range(1, 21):
        answers = at_once(server, [("join", {**credentials(nick), "group": group, "size": SIZE}) for nick in PASSWORDS])
        assert answers[0] == answers[1] and answers[0][0] == 200, answers
        [(public_id, status, *players)] = query(
            server.database_url,
            "SELECT g.public_id, g.status, a.username, b.username FROM games_game g" + PLAYERS + " WHERE g.pool = %s",
            (str(group),),
        )
        assert (public_id, status, set(players)) == (answers[0][1]["game"], "playing", set(PASSWORDS))


def test_both_players_leaving_at_once_end_the_game_once(server):
    rounds = 5
    for _ in range(rounds):
        game = started_game(server, group=5)
        assert server.call("roll", **credentials("alice"), game=game) == (200, {})  # played: the result counts
        answers = at_once(server, [("leave", {**credentials(nick), "game": game}) for nick in ("alice", "bob")])
        assert sorted(answers, key=lambda answer: answer[0]) == [(200, {}), (400, {"error": "The game is over"})]
        leaver, stayer = ("alice", "bob") if answers[0][0] == 200 else ("bob", "alice")
        [(ending, winner)] = query(
            server.database_url,
            "SELECT g.ending, u.username FROM games_game g JOIN auth_user u ON u.id = g.winner_id"
            " WHERE g.public_id = %s AND g.status = 'finished'",
            (game,),
        )
        assert (ending, winner) == ("leave", stayer)
        pk = game_row(server, game)[0]
        assert [nick for _, _, nick, _ in events(server, pk, "leave")] == [leaver]
    status, body = server.call("ranking", group=5, size=SIZE)
    assert status == 200
    rows = {row["nick"]: row for row in body["ranking"]}
    assert set(rows) == set(PASSWORDS)
    assert rows["alice"]["games"] == rows["bob"]["games"] == rounds
    assert rows["alice"]["victories"] + rows["bob"]["victories"] == rounds
