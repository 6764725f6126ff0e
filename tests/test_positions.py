"""games/positions.py: the position a committed action left is kept decoded for the game's next action, and taken only
while the stored text is still the one this process wrote. Run on SQLite and on PostgreSQL (whose jsonb rewrites the
text, so that nothing is kept there by its text: an action's game is held with its row's version instead, and its
position with it, games/store.py)."""

import random

import pytest
from django.db import connection, transaction

from games import positions, services, store
from games.models import Game
from games.rules import find_engine

pytestmark = pytest.mark.django_db

TAB = find_engine("tab")
KEPT = connection.vendor == "sqlite"


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """What is done inside is committed: the callbacks the transaction held run at its end."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def locked(public_id: str) -> tuple[Game, object]:
    with transaction.atomic():
        game = store.game_locked(public_id)
        return game, store.kept_state(game)


def act(public_id: str) -> None:
    """The player on turn makes some legal action of theirs."""
    game = Game.objects.get(public_id=public_id)
    state = TAB.state_from_json(game.state)
    seat = TAB.to_act(state)
    action = random.Random(1).choice(TAB.legal_actions(state, seat))
    services.game_act(public_id=public_id, user_id=game.seat_user_ids[seat], action=action)


def test_the_next_action_takes_the_position_the_last_one_left(alice, bob, start_game, committed):
    game = start_game(size=9)
    with committed():
        act(game)
    read, kept = locked(game)
    assert read.state == Game.objects.get(public_id=game).state
    # Kept on both: on SQLite by its text; on PostgreSQL, whose jsonb rewrites the text, with the game's row as this
    # process wrote it (games/store.py).
    assert TAB.state_to_json(kept) == read.state
    # Taken: the action after it decodes the row again.
    assert locked(game)[1] is None
    with committed():
        act(game)
    assert locked(game)[0].state == Game.objects.get(public_id=game).state


def test_a_position_written_by_another_is_not_taken(alice, bob, start_game, committed):
    game = start_game(size=9)
    with committed():
        act(game)
    other = TAB.state_to_json(TAB.new(2, TAB.options({"size": 9}), random.Random(2)))
    Game.objects.filter(public_id=game).update(state=other)
    read, kept = locked(game)
    assert kept is None and read.state == other


def test_an_action_undone_leaves_nothing_kept(alice, bob, start_game, committed):
    game = start_game(size=9)
    with committed():
        act(game)
    stored = Game.objects.get(public_id=game).state
    with committed(), pytest.raises(RuntimeError), transaction.atomic():
        act(game)  # takes the kept state, and the rules change it
        raise RuntimeError("undone")
    read, kept = locked(game)
    assert kept is None and read.state == stored


def test_a_process_keeps_a_bounded_number_of_positions(monkeypatch):
    monkeypatch.setattr(positions, "KEPT", 3)
    monkeypatch.setattr(positions, "_kept", {})
    for index in range(5):
        positions._keep(f"game-{index}", "text", {}, object())
    assert list(positions._kept) == ["game-2", "game-3", "game-4"]
    assert positions.take("game-2", "other text") is None and "game-2" not in positions._kept
    assert positions.take("game-3", "text") is not None and positions.take("game-3", "text") is None


def test_a_read_peeks_without_taking(alice, bob, start_game, committed):
    game = start_game(size=9)
    with committed():
        act(game)
    stored = Game.objects.filter(public_id=game).values_list("state", flat=True).get()
    text = Game.objects.filter(public_id=game).extra(select={"text": "state"}).values_list("text", flat=True).get()
    peeked = positions.peek(game, text)
    assert positions.peek(game, text + " ") is None
    if KEPT:
        assert peeked is not None and peeked[0] == stored and TAB.state_to_json(peeked[1]) == stored
        # The next action takes the value and a copy of the state that reads have.
        read, kept = locked(game)
        assert read.state is peeked[0] and kept is not peeked[1] and TAB.state_to_json(kept) == stored
        assert positions.peek(game, text) is None  # taken
    else:
        assert peeked is None


def test_a_plakoto_table_is_read_as_stored_whether_kept_or_not(client, committed):
    import json

    from games.rules.plakoto import State
    from protocols.plakoto import services as plakoto
    from protocols.plakoto.models import Table

    base = "/plakoto/peeked"
    client.post(base + "/board/", "", content_type="application/json")
    tokens = {
        colour: client.put(f"{base}/players/{colour}", json.dumps({"username": colour}), "application/json").json()[0][
            "token"
        ]
        for colour in ("W", "B")
    }
    turn = plakoto.table_view("peeked").state.turn
    cells = client.get(base + "/board/", HTTP_X_TOKEN=tokens[turn]).json()
    cell = next(cell for cell in cells if cell.get("moves"))
    with committed():
        moved = client.put(
            f"{base}/board/piece/{cell['x']}/{cell['y']}/",
            json.dumps({"x": cell["moves"][0]["x"]}),
            "application/json",
            HTTP_X_TOKEN=tokens[turn],
        )
    assert moved.status_code == 200
    game = Table.objects.get(name="peeked").game
    assert plakoto.table_view("peeked").state.to_json() == game.state
    # Kept where the text read back is the one written: both reads then have the very state the move left.
    assert (plakoto.table_view("peeked").state is plakoto.table_view("peeked").state) == KEPT
    assert client.get(base + "/status/").json()[0]["dice_left"] == game.state["dice_left"]
    # Written by another process: the reads decode what is stored.
    other = State.from_json(game.state)
    other.passes = [{"player": "W", "dice": [6, 6]}]
    Game.objects.filter(pk=game.pk).update(state=other.to_json())
    assert plakoto.table_view("peeked").state.passes == other.passes


def test_a_kept_state_goes_to_reads_or_to_one_action_never_to_both():
    value, state = {"v": 1}, object()
    positions._keep("shared", "text", value, state)
    assert positions.peek("shared", "text") == (value, state)
    assert positions.peek("shared", "text") == (value, state)  # every read has the same
    # The action after reads is told so (it changes a copy): a read may still be using this one.
    assert positions.take("shared", "text") == (value, state, True)
    fresh = object()
    positions._keep("shared", "newer", {"v": 2}, fresh)
    assert positions.take("shared", "newer") == ({"v": 2}, fresh, False)  # no read had it: the action's own
    assert positions.peek("shared", "newer") is None
