"""Computer players seated in matches (games/bots/runner.py): they play their turns by themselves, through the same
services as a person, and their games count for no ranking."""

import random
import time

import pytest

from accounts.nicks import account_of
from games.bots import runner
from games.models import Game, GameEvent
from games.rules import find_engine
from games.services import game_act, match_against_computer, seat_on_turn
from rankings.models import Ranking, Rating

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 60  # seconds a computer may take for a move on a busy machine before the test gives up


@pytest.fixture(autouse=True)
def settled(transactional_db):
    """After each test, the computers' moves still under way are played before the database is emptied (which waits
    for no thread, and fails when one holds a table)."""
    yield
    assert runner.settle(WAIT), "the computer players did not settle"


def wait_for_turn(public_id: str, user_id: int) -> Game:
    """Wait until the game is over or it is the user's turn again."""
    give_up = time.monotonic() + WAIT
    while True:
        game = Game.objects.get(public_id=public_id)
        if game.status == Game.Status.FINISHED or seat_on_turn(game)[1] == user_id:
            return game
        assert time.monotonic() < give_up, "the computer did not play"
        time.sleep(0.02)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_game_against_the_computer_is_played_to_its_end(settings, alice, level):
    settings.COMPUTER_THINK_MS = 20
    game = match_against_computer(user_id=alice.pk, kind="tab", options={"size": 7}, level=level)
    computer = runner.computer_user(level)
    engine, rng = find_engine("tab"), random.Random(level)
    for _ in range(5000):
        game = wait_for_turn(game.public_id, alice.pk)
        if game.status == Game.Status.FINISHED:
            break
        state = engine.state_from_json(game.state)
        game_act(public_id=game.public_id, user_id=alice.pk, action=rng.choice(engine.legal_actions(state, 0)))
    assert game.status == Game.Status.FINISHED and game.winner_id in (alice.pk, computer.pk)
    played = GameEvent.objects.filter(game=game, player=computer).exclude(kind="start")
    assert played.exists() and set(played.values_list("kind", flat=True)) <= {"throw", "move", "pass"}
    # Practice: no ranking, no rating.
    assert not Ranking.objects.exists() and not Rating.objects.exists()


def test_the_computer_account_cannot_log_in_and_is_known_as_a_computer(alice):
    computer = runner.computer_user(3)
    assert computer.username == "computer-search" and not computer.has_usable_password()
    assert runner.computer_user(3) == computer
    assert account_of(computer.pk).computer and not account_of(alice.pk).computer


def test_a_computer_on_turn_after_a_restart_plays_when_resumed(settings, alice):
    settings.COMPUTER_THINK_MS = 20
    game = match_against_computer(user_id=alice.pk, kind="tab", options={"size": 7}, level=2)
    # The computer is on turn, and the process that was to play its move is gone: put the game in that state behind
    # the runner's back.
    engine = find_engine("tab")
    state = engine.state_from_json(game.state)
    state.turn = "Red"  # the computer's seat
    Game.objects.filter(pk=game.pk).update(state=engine.state_to_json(state))
    assert runner.resume() == 1
    give_up = time.monotonic() + WAIT
    while Game.objects.get(pk=game.pk).version == game.version:
        assert time.monotonic() < give_up, "the computer did not play after the restart"
        time.sleep(0.02)
    assert GameEvent.objects.filter(game=game).latest("seq").player_id == runner.computer_user(2).pk
    # Settling waits for the computer's whole turn (its throw schedules its move), not just the first action of it.
    assert runner.settle(WAIT)
    game = Game.objects.get(pk=game.pk)
    assert game.status == Game.Status.FINISHED or seat_on_turn(game)[1] == alice.pk
