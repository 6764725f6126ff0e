"""games/positions.py: the position a committed action left is kept decoded for the game's next action, and taken only
while the stored text is still the one this process wrote. Run on SQLite and on PostgreSQL (whose jsonb rewrites the
text, so that nothing is kept there)."""

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
    if KEPT:
        assert TAB.state_to_json(kept) == read.state
    else:
        assert kept is None
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
