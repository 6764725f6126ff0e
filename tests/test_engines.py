"""The engine interface (games/rules/base.py), checked the same way for every registered game: random games played
only through it, every state and action through JSON and back, refusals that change nothing."""

import json
import random
from fractions import Fraction

import pytest

from games.rules import ENGINES, IllegalAction, Outcome, UnknownGame, find_engine, tab

GAMES = sorted(ENGINES)


def through_json(data):
    return json.loads(json.dumps(data))


def play_randomly(engine, seats: int, seed: int, max_actions: int = 20_000):
    """Play random legal actions through the interface alone; yield (state before, seat, action) at each step."""
    rng = random.Random(seed)
    state = engine.new(seats, engine.options({}), rng)
    for _ in range(max_actions):
        seat = engine.to_act(state)
        if seat is None:
            return
        yield state, seat
        action = rng.choice(engine.legal_actions(state, seat))
        engine.apply(state, seat, action, rng)
    raise AssertionError("the game does not end")


@pytest.mark.parametrize("kind", GAMES)
def test_a_states_json_does_not_change_with_the_state(kind):
    # The platform keeps a game's JSON and its state side by side between actions (games/positions.py).
    engine = find_engine(kind)
    for seats in range(engine.min_seats, engine.max_seats + 1):
        earlier = []  # each position's JSON, and its text when it was made
        for state, _ in play_randomly(engine, seats, seed=seats):
            data = engine.state_to_json(state)
            earlier.append((data, json.dumps(data)))
        assert len(earlier) > 1 and all(json.dumps(data) == text for data, text in earlier)


@pytest.mark.parametrize("kind", GAMES)
def test_every_engine_says_who_it_is(kind):
    engine = find_engine(kind)
    assert engine.kind == kind and engine.title
    assert 2 <= engine.min_seats <= engine.max_seats <= 4


@pytest.mark.parametrize("kind", GAMES)
@pytest.mark.parametrize("seed", range(5))
def test_random_games_through_the_interface(kind, seed):
    engine = find_engine(kind)
    rng = random.Random(seed)
    for seats in range(engine.min_seats, engine.max_seats + 1):
        actions = 0
        for state, seat in play_randomly(engine, seats, seed):
            actions += 1
            # Only the seat on turn may act, and it always can.
            assert all(bool(engine.legal_actions(state, other)) == (other == seat) for other in range(seats))
            assert engine.outcome(state) is None
            stored = through_json(engine.state_to_json(state))
            assert engine.state_to_json(engine.state_from_json(stored)) == stored
            for action in engine.legal_actions(state, seat):
                assert engine.action_from_json(through_json(engine.action_to_json(action))) == action
            # A copy is independent of the original.
            copy = engine.copy(state)
            engine.apply(copy, seat, rng.choice(engine.legal_actions(copy, seat)), rng)
            assert engine.state_to_json(state) == stored
        outcome = engine.outcome(state)
        assert isinstance(outcome, Outcome) and len(outcome.ranks) == seats and actions > 0
        assert all(not engine.legal_actions(state, seat) for seat in range(seats))


@pytest.mark.parametrize("kind", GAMES)
def test_a_refused_action_changes_nothing(kind):
    engine = find_engine(kind)
    rng = random.Random(1)
    for step, (state, seat) in enumerate(play_randomly(engine, engine.min_seats, 1)):
        if step % 7:
            continue
        before = engine.state_to_json(state)
        other = (seat + 1) % engine.min_seats
        with pytest.raises(IllegalAction):
            engine.apply(state, other, engine.legal_actions(state, seat)[0], rng)
        assert engine.state_to_json(state) == before
        with pytest.raises(IllegalAction):
            engine.action_from_json({"kind": "teleport"})


@pytest.mark.parametrize("kind", GAMES)
def test_chances_are_probabilities_of_fixed_results(kind):
    engine = find_engine(kind)
    for state, seat in play_randomly(engine, engine.min_seats, 2):
        for action in engine.legal_actions(state, seat):
            results = engine.chances(state, seat, action)
            if results is None:
                continue
            assert sum(probability for probability, _ in results) == 1
            for _, result in results:
                assert engine.chances(state, seat, result) is None


def test_an_unknown_game():
    with pytest.raises(UnknownGame):
        find_engine("chess")


def test_outcomes():
    assert Outcome.win(1, 2) == Outcome((2, 1), "win")
    assert (Outcome.win(1, 2).winner, Outcome.draw(3).winner, Outcome.draw(3).is_draw) == (1, None, True)
    assert Outcome.by_score([3, 7, 7, 1]) == Outcome((3, 1, 1, 4), "score")
    assert Outcome.by_score([3, 7, 7, 1]).winners == (1, 2)
    with pytest.raises(ValueError):
        Outcome((2, 2), "nobody first")


# --- Tâb behind the interface ----------------------------------------------------------------------------------


def test_tab_seats_options_and_actions():
    engine = tab.ENGINE
    assert engine.options({}) == {"size": tab.DEFAULT_SIZE}
    with pytest.raises(ValueError):
        engine.options({"size": 8})
    state = engine.new(2, {"size": 7}, random.Random(0))
    assert (engine.to_act(state), engine.legal_actions(state, 0), engine.legal_actions(state, 1)) == (
        0,
        [tab.Roll()],
        [],
    )
    with pytest.raises(IllegalAction, match="Not your turn to play"):
        engine.apply(state, 1, tab.Roll(), random.Random(0))
    played = engine.apply(state, 0, tab.Roll(tab.Throw.of_value(1)), random.Random(0))
    assert (played.kind, dict(played.data)) == ("throw", {"sticks": [True, False, False, False], "value": 1})
    assert engine.apply(state, 0, tab.Select(6), random.Random(0)).kind == "move"
    assert engine.chances(state, 0, tab.Roll()) == [
        (Fraction(4, 16), tab.Roll(tab.Throw.of_value(1))),
        (Fraction(6, 16), tab.Roll(tab.Throw.of_value(2))),
        (Fraction(4, 16), tab.Roll(tab.Throw.of_value(3))),
        (Fraction(1, 16), tab.Roll(tab.Throw.of_value(4))),
        (Fraction(1, 16), tab.Roll(tab.Throw.of_value(6))),
    ]
