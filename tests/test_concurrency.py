"""Many requests at the same moment, each from its own thread and database connection: the row locks of the
services let exactly one of them take effect, and the others see its result.

These tests commit for real (transaction=True), so that every thread sees the others' data. On SQLite the test
database is a file and writers queue on IMMEDIATE transactions; on PostgreSQL, on the row locks.
"""

import json
import threading
import traceback
from collections import Counter

import pytest
from django.db import connection
from django.test import Client

from games.models import Game, GameEvent
from games.rules import tab
from games.rules.tab import Piece, Throw
from rankings.models import Ranking

from .conftest import PASSWORDS
from .factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

SIZE = 9
BARRIER_TIMEOUT = 30


def at_once(requests: list[tuple[str, dict]]) -> list[tuple[int, dict]]:
    """POST each (function, payload) from its own thread, all released together; return the answers in order."""
    barrier = threading.Barrier(len(requests))
    answers: list = [None] * len(requests)
    failures: list[str] = []

    def fire(index: int, function: str, payload: dict) -> None:
        client = Client()
        body = json.dumps(payload)
        try:
            # Connect, and load the client's middleware with a preflight (which reads nothing), before the
            # barrier: the requests then meet at the database, not at its door.
            connection.ensure_connection()
            client.options(f"/{function}")
            barrier.wait(timeout=BARRIER_TIMEOUT)
            response = client.post(f"/{function}", body, content_type="application/json")
            answers[index] = (response.status_code, response.json())
        except Exception:
            failures.append(traceback.format_exc())
            barrier.abort()
        finally:
            connection.close()

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


def started_game(api, group: int) -> Game:
    """alice waits first, so she is the initial player and on turn."""
    _, body = api("join", {**credentials("alice"), "group": group, "size": SIZE})
    assert api("join", {**credentials("bob"), "group": group, "size": SIZE}) == (200, body)
    return Game.objects.get(public_id=body["game"])


def arrange(game: Game, state: tab.State) -> None:
    Game.objects.filter(pk=game.pk).update(state=state.to_json())


def statuses(answers: list[tuple[int, dict]]) -> Counter:
    return Counter(status for status, _ in answers)


def test_the_same_move_twenty_times_at_once_is_made_once(api, alice, bob):
    game = started_game(api, group=1)
    state = tab.State.new(SIZE)
    state.dice = Throw.of_value(1)
    arrange(game, state)
    before = Game.objects.get(pk=game.pk)
    events_before = GameEvent.objects.filter(game=game).count()

    answers = at_once([("notify", {**credentials("alice"), "game": game.public_id, "cell": 8})] * 20)

    assert statuses(answers) == {200: 1, 400: 19}, answers
    # The move used the throw: the others find none.
    assert {answer["error"] for status, answer in answers if status == 400} == {"You must roll the dice first"}
    after = Game.objects.get(pk=game.pk)
    state = tab.State.from_json(after.state)
    assert state.pieces[8] is None and state.pieces[9] == Piece(tab.BLUE, in_motion=True)
    assert sum(piece is not None and piece.color == tab.BLUE for piece in state.pieces) == SIZE
    assert (state.turn, state.dice) == (tab.BLUE, None)  # a tâb keeps the turn
    assert after.version == before.version + 1
    assert GameEvent.objects.filter(game=game).count() == events_before + 1
    assert list(GameEvent.objects.filter(game=game, kind="move").values_list("seq", "data")) == [
        (after.version, {"from": 8, "to": 9, "captures": False})
    ]


def test_both_players_rolling_at_once_only_the_player_on_turn_throws(api, alice, bob):
    for group in range(1, 11):
        game = started_game(api, group=group)
        answers = at_once([("roll", {**credentials(nick), "game": game.public_id}) for nick in ("alice", "bob")])
        assert answers[0] == (200, {}) and answers[1] == (400, {"error": "Not your turn to play"}), answers
        throws = GameEvent.objects.filter(game=game, kind="throw")
        assert [event.player_id for event in throws] == [alice.pk]
        game.refresh_from_db()
        assert game.version == 3  # create, start, throw
        state = tab.State.from_json(game.state)
        assert (state.turn, state.dice) == (tab.BLUE, Throw(tuple(throws[0].data["sticks"])))


def test_the_same_join_twenty_times_at_once_waits_once(api, alice):
    assert api("register", credentials("alice")) == (200, {})  # the password is checked now, not in the race
    answers = at_once([("join", {**credentials("alice"), "group": 7, "size": SIZE})] * 20)

    assert statuses(answers) == {200: 20}, answers
    assert len({answer["game"] for _, answer in answers}) == 1
    game = Game.objects.get()
    assert (game.public_id, game.status, game.initial_player_id) == (answers[0][1]["game"], "waiting", alice.pk)
    assert list(GameEvent.objects.values_list("kind", flat=True)) == ["create"]


def test_fifty_players_joining_at_once_make_twenty_five_games(transactional_db):
    nicks = [f"player{index:02}" for index in range(50)]
    users = {nick: UserFactory(username=nick, password="secret").pk for nick in nicks}

    answers = at_once([("join", {"nick": nick, "password": "secret", "group": 3, "size": SIZE}) for nick in nicks])

    assert statuses(answers) == {200: 50}, answers
    games = Game.objects.all()
    assert len(games) == 25
    assert {game.status for game in games} == {"playing"}
    seated = [player for game in games for player in (game.initial_player_id, game.second_player_id)]
    assert sorted(seated) == sorted(users.values())  # everyone plays, nobody twice
    players_of = {game.public_id: {game.initial_player_id, game.second_player_id} for game in games}
    for nick, (_, answer) in zip(nicks, answers, strict=True):
        assert users[nick] in players_of[answer["game"]], (nick, answer)
    assert Counter(GameEvent.objects.values_list("kind", flat=True)) == {"create": 25, "start": 25}


def test_two_players_joining_at_once_always_pair(alice, bob):
    for group in range(1, 21):
        answers = at_once([("join", {**credentials(nick), "group": group, "size": SIZE}) for nick in ("alice", "bob")])
        assert answers[0] == answers[1] and answers[0][0] == 200, answers
        game = Game.objects.get(group=group)
        assert game.public_id == answers[0][1]["game"]
        assert game.status == "playing"
        assert {game.initial_player_id, game.second_player_id} == {alice.pk, bob.pk}


def test_both_players_leaving_at_once_end_the_game_once(api, alice, bob):
    rounds = 5
    for _ in range(rounds):
        game = started_game(api, group=5)
        answers = at_once([("leave", {**credentials(nick), "game": game.public_id}) for nick in ("alice", "bob")])
        assert sorted(answers, key=lambda answer: answer[0]) == [(200, {}), (400, {"error": "The game is over"})]
        leaver, stayer = (alice, bob) if answers[0][0] == 200 else (bob, alice)
        game.refresh_from_db()
        assert (game.status, game.ending, game.winner_id) == ("finished", "leave", stayer.pk)
        assert list(game.events.filter(kind="leave").values_list("player_id", flat=True)) == [leaver.pk]
    rows = {row.player_id: row for row in Ranking.objects.filter(group=5, size=SIZE)}
    assert set(rows) == {alice.pk, bob.pk}
    assert rows[alice.pk].games == rows[bob.pk].games == rounds
    assert rows[alice.pk].victories + rows[bob.pk].victories == rounds
    assert sorted(GameEvent.objects.filter(kind="leave").values_list("game_id", flat=True)) == sorted(
        Game.objects.values_list("pk", flat=True)
    )
