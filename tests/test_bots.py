"""The computer player (games/bots): legal at every level in every registered game, greedy about what it can see,
and searching well enough to matter. Budgets are counted in positions, not seconds, so results are the same on any
machine."""

import math
import random
from dataclasses import dataclass

import pytest

from games import bots
from games.rules import ENGINES, IllegalAction, Outcome, Played, find_engine, tab

UNTIMED = math.inf


def budget(positions: int) -> bots.Budget:
    return bots.Budget(seconds=UNTIMED, positions=positions)


def play(engine, levels, seed, positions=300, options=None):
    """Play a game between computer players of `levels` (one per seat); return its outcome."""
    rng = random.Random(seed)
    state = engine.new(len(levels), engine.options(options or {}), rng)
    while (seat := engine.to_act(state)) is not None:
        action = bots.choose(engine, state, seat, levels[seat], rng, budget(positions))
        assert action in engine.legal_actions(state, seat)
        engine.apply(state, seat, action, rng)
    return engine.outcome(state)


@pytest.mark.parametrize("kind", sorted(ENGINES))
@pytest.mark.parametrize("level", sorted(bots.LEVELS))
def test_every_level_plays_legal_games_to_their_end(kind, level):
    engine = find_engine(kind)
    for seats in range(engine.min_seats, engine.max_seats + 1):
        # Against random play, which ends a game sooner than a player of the same level would.
        outcome = play(engine, [level] + [bots.RANDOM] * (seats - 1), seed=level, positions=60)
        assert len(outcome.ranks) == seats


def test_a_tiny_budget_still_gives_a_legal_action():
    engine, rng = tab.ENGINE, random.Random(3)
    state = engine.new(2, {"size": 9}, rng)
    engine.apply(state, 0, tab.Roll(tab.Throw.of_value(1)), rng)
    assert bots.choose(engine, state, 0, bots.SEARCH, rng, budget(1)) in engine.legal_actions(state, 0)


def test_the_greedy_player_takes_the_capture_that_wins():
    engine = tab.ENGINE
    state = tab.State.new(7)
    state.pieces = [None] * 28
    state.pieces[10] = tab.Piece(tab.BLUE, in_motion=True)
    state.pieces[3] = tab.Piece(tab.BLUE, in_motion=True)
    state.pieces[12] = tab.Piece(tab.RED, in_motion=True)
    state.dice = tab.Throw.of_value(2)
    assert {move.destination for move in engine.legal_actions(state, 0)} >= {12}
    for seed in range(5):
        move = bots.choose(engine, state, 0, bots.GREEDY, random.Random(seed))
        assert (move.origin, move.destination, move.captures) == (10, 12, True)


def test_the_searching_player_beats_random_play_at_tab():
    wins = 0
    for seed in range(8):
        searcher = seed % 2  # each side half of the games
        levels = [bots.RANDOM, bots.RANDOM]
        levels[searcher] = bots.SEARCH
        wins += play(tab.ENGINE, levels, seed, positions=500, options={"size": 7}).winner == searcher
    assert wins >= 7, wins


# --- A game without chance, for the tree search: Nim (take 1 to 3 from one pile; who takes the last wins) ---------


@dataclass
class Nim:
    piles: list[int]
    turn: int = 0


class NimEngine:
    kind, title, min_seats, max_seats, chance = "nim", "Nim", 2, 2, False

    def seats(self, state):
        return 2

    def to_act(self, state):
        return None if not any(state.piles) else state.turn

    def legal_actions(self, state, seat):
        if seat != self.to_act(state):
            return []
        return [(pile, take) for pile, size in enumerate(state.piles) for take in range(1, min(3, size) + 1)]

    def apply(self, state, seat, action, rng):
        if action not in self.legal_actions(state, seat):
            raise IllegalAction("no")
        pile, take = action
        state.piles[pile] -= take
        if any(state.piles):
            state.turn = 1 - seat
        else:
            state.turn = seat  # the winner
        return Played("take", {"pile": pile, "take": take})

    def chances(self, state, seat, action):
        return None

    def outcome(self, state):
        return None if any(state.piles) else Outcome.win(state.turn, 2)

    def heuristic(self, state, seat):
        return 0.0

    def copy(self, state):
        return Nim(list(state.piles), state.turn)


def test_the_tree_search_finds_the_winning_take_where_nothing_is_left_to_chance():
    # One pile of 9: taking 1 leaves a multiple of 4, and the opponent loses however it plays.
    engine = NimEngine()
    for seed in range(3):
        action = bots.choose(engine, Nim([9]), 0, bots.SEARCH, random.Random(seed), budget(3000))
        assert action == (0, 1)


def test_a_game_offers_only_levels_that_truly_differ():
    levels_of = bots.levels_of
    assert levels_of("tab") == levels_of("draughts") == levels_of("fish") == tuple(bots.LEVELS)
    # Plakoto's search wins no more than greedy play (BENCHMARKS.md): a seated level 3 plays greedily.
    assert levels_of("plakoto") == (bots.RANDOM, bots.GREEDY)
    engine = find_engine("plakoto")
    for seed in range(3):
        state = engine.new(2, {}, random.Random(seed))
        engine.apply(state, engine.to_act(state), engine.automatic(state), random.Random(seed))
        seat = engine.to_act(state)
        greedy = bots.choose(engine, state, seat, bots.GREEDY, random.Random(seed))
        searched = bots.choose(
            engine, state, seat, bots.SEARCH, random.Random(seed), bots.Budget(seconds=math.inf, positions=50)
        )
        assert searched == greedy
