"""The hot paths cost a fixed, small number of queries, whatever the number of games or the length of the log."""

from contextlib import contextmanager

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games.models import Game, GameEvent
from games.rules.tab import Throw

pytestmark = pytest.mark.django_db


@contextmanager
def assert_queries(expected: int):
    """Count the statements sent, leaving out the savepoints of the test's own transaction."""
    with CaptureQueriesContext(connection) as context:
        yield
    statements = [query["sql"] for query in context.captured_queries if "SAVEPOINT" not in query["sql"]]
    assert len(statements) == expected, "\n".join(statements)


def saved_with_log() -> int:
    """The statements of a game's save and its log entries: together on PostgreSQL (the entries' INSERT in a WITH clause
    of the game's UPDATE), apart elsewhere."""
    return 1 if connection.vendor == "postgresql" else 2


@pytest.fixture
def game(api, alice, bob):
    _, body = api.as_player("alice")("join", group=1, size=9)
    api.as_player("bob")("join", group=1, size=9)
    return body["game"]


def with_dice(game: str, value: int) -> None:
    state = Game.objects.get(public_id=game).state
    Game.objects.filter(public_id=game).update(state={**state, "dice": Throw.of_value(value).to_json()})


def test_each_action_is_three_queries_two_on_postgresql(api, game):
    alice, bob = api.as_player("alice"), api.as_player("bob")
    alice("roll", game=game)  # the credentials are remembered from here on
    bob("roll", game=game)
    with_dice(game, 1)
    # lock and read the game (its players' nicks are remembered by id), update it, insert the log entry
    with assert_queries(1 + saved_with_log()):
        assert alice("notify", game=game, cell=8) == (200, {})
    with assert_queries(1 + saved_with_log()):
        assert alice("roll", game=game) == (200, {})
    with_dice(game, 2)
    Game.objects.filter(public_id=game).update(state={**Game.objects.get(public_id=game).state, "pieces": [None] * 36})
    with assert_queries(1 + saved_with_log()):
        assert alice("pass", game=game) == (200, {})
    # A refusal reads and writes nothing more than the lock.
    with assert_queries(1):
        assert alice("roll", game=game) == (400, {"error": "Not your turn to play"})


def test_join_queries(api, alice, bob):
    api.as_player("alice")("register")
    api.as_player("bob")("register")
    # lock the account's row (two joins of one account take turns), look for a game the player waits in elsewhere
    # (to withdraw from it); the first join of a (group, size) creates its waiting room, then waits: insert the
    # game, its log entry and the player's seat
    with assert_queries(8):
        _, body = api.as_player("alice")("join", group=2, size=9)
    # lock the account's row, look for a game waited in elsewhere, lock the waiting room, lock the waiting game with
    # its seats, take the second seat, start the game, log it, and read the players' nicks for the first snapshot:
    # once per process (accounts.nicks), hence not again below
    with assert_queries(8 + saved_with_log()):
        api.as_player("bob")("join", group=2, size=9)


def test_ranking_is_one_query(api, game):
    api.as_player("alice")("roll", game=game)
    api.as_player("bob")("leave", game=game)
    with assert_queries(1):
        status, body = api("ranking", {"group": 1, "size": 9})
    assert len(body["ranking"]) == 2


def test_a_move_that_ends_a_turn_and_the_roll_that_begins_the_next_save_the_game_once():
    from protocols.plakoto import services as plakoto

    tokens = {colour: plakoto.seat_take(name="queries", colour=colour, username=colour)[0] for colour in "WB"}
    for _ in range(20):
        state = plakoto.table_view("queries").state
        origin, destination = sorted(state.plan())[0]
        ends_the_turn = len(state.dice_left) == 1
        logged = GameEvent.objects.count()
        with CaptureQueriesContext(connection) as context:
            plakoto.piece_move(
                name="queries", token=tokens[state.turn], x=origin, y=len(state.points[origin]), destination=destination
            )
        if ends_the_turn:
            break
    else:
        raise AssertionError("no turn ended")
    statements = [query["sql"] for query in context.captured_queries]
    # the move's entry and the roll's (and a pass's, if the roll gave no move), but one write of the game
    assert GameEvent.objects.count() - logged >= 2
    assert sum('UPDATE "games_game"' in sql for sql in statements) == 1, statements
    # and its entries in one INSERT
    assert sum('INSERT INTO "games_gameevent"' in sql for sql in statements) == 1, statements


def test_entries_past_what_one_insert_adds_are_all_written(game):
    from django.utils import timezone

    from games import store

    row = Game.objects.get(public_id=game)
    logged = GameEvent.objects.filter(game=row).count()
    count = store.ENTRIES_A_STATEMENT * 2 + 3
    for number in range(count):
        row.version += 1  # each entry logs a version of its own
        store.event_pending(game=row, kind="pass", player_id=None, data={"n": number}, at=timezone.now())
    with assert_queries(3):
        store.events_write(row)
    entries = GameEvent.objects.filter(game=row).order_by("seq")
    assert entries.count() == logged + count
    assert [entry.data["n"] for entry in entries[logged:]] == list(range(count))
