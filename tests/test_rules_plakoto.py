"""Plakoto's rules (games/rules/plakoto.py): a hand-written position for every rule, the examples of the API's page,
properties of random games with hypothesis (15 pieces a side, always), and the engine's interface."""

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules import IllegalAction
from games.rules.plakoto import (
    BLACK,
    ENGINE,
    WHITE,
    IllegalMove,
    Move,
    Roll,
    State,
)


def position(pieces: dict[int, str], *, turn: str = WHITE, dice=None, off=None) -> State:
    """Return a position: each point's stack written bottom first ("WB": a W piece pinned under a B one), the pieces
    borne off by count, the dice of the turn (rolled: no roll due). Pieces are numbered as they come."""
    state = State()
    numbers = {WHITE: 0, BLACK: 0}
    for side, count in (off or {}).items():
        state.off[side] = list(range(1, count + 1))
        numbers[side] = count
    for point in sorted(pieces):
        stack = []
        for colour in pieces[point]:
            numbers[colour] += 1
            stack.append((colour, numbers[colour]))
        state.points[point] = tuple(stack)
    state.turn = turn
    if dice is not None:
        state.dice, state.dice_left = dice, sorted(dice * (2 if dice[0] == dice[1] else 1), reverse=True)
        state.roll_due = False
    return state


def pieces(state: State, side: str) -> int:
    return sum(piece[0] == side for stack in state.points for piece in stack) + len(state.off[side])


def test_the_start():
    state = State.new()
    assert state.points[24] == tuple((WHITE, number) for number in range(1, 16))
    assert state.points[1] == tuple((BLACK, number) for number in range(1, 16))
    assert state.turn == WHITE and state.roll_due
    state.roll((3, 2))
    assert state.dice_left == [3, 2] and state.plan() == {(24, 21): 3, (24, 22): 2}
    state.move(24, 21)
    assert state.points[21] == ((WHITE, 15),) and state.dice_left == [2]
    assert state.plan() == {(24, 22): 2, (21, 19): 2}
    with pytest.raises(IllegalMove, match="This move is illegal."):
        state.move(24, 21)
    state.move(24, 22)
    assert state.turn == BLACK and state.roll_due and state.points[22] == ((WHITE, 14),)


def test_a_double_is_four_moves():
    state = State.new()
    state.roll((5, 5))
    assert state.dice_left == [5, 5, 5, 5]
    for _ in range(4):
        state.move(24, 19)
    assert len(state.points[19]) == 4 and state.turn == BLACK


def test_a_lone_piece_is_pinned_and_freed_when_its_pinner_leaves():
    state = position({24: "W" * 13, 20: "B", 10: "W", 1: "B" * 14}, dice=(4, 3))
    state.move(24, 20)
    assert [colour for colour, _ in state.points[20]] == [BLACK, WHITE] and state.pinned(20) == BLACK
    # The pinned piece cannot move; its point is the pinner's door, which black cannot land on.
    state.turn, state.dice, state.dice_left, state._plan = BLACK, (4, 2), [4, 2], None
    assert all(origin != 20 for origin, _ in state.plan())
    assert (16, 20) not in state.plan()
    state = position({20: "BW", 1: "B" * 14, 10: "W" * 14}, dice=(6, 1))
    state.move(20, 14)
    assert state.pinned(20) is None and [colour for colour, _ in state.points[20]] == [BLACK]


def test_doors_block_and_moving_past_them_is_allowed():
    # Black's door on 18 (two pieces) and on 15 (a pinner): white's 21 → 18 and 19 → 15 are blocked; 21 → 15 flies.
    state = position({21: "W" * 10, 19: "W" * 4, 18: "BB", 15: "WB", 1: "B" * 12}, dice=(6, 3))
    plan = state.plan()
    assert (21, 18) not in plan and (19, 15) not in plan
    assert (21, 15) not in plan  # 15 is a door too
    assert (19, 16) in plan and (19, 13) in plan and (21, 15) not in plan


def test_the_examples_of_the_api_page():
    # W to play 6-1, last piece outside home on 9, B's doors on 8 and 2, 14 others off: 9 → 3 only; then 3 → 2 is
    # blocked and the turn ends.
    state = position({9: "W", 8: "BB", 2: "BB", 1: "B" * 11}, off={WHITE: 14}, dice=(6, 1))
    assert state.plan() == {(9, 3): 6}
    state.move(9, 3)
    assert state.turn == BLACK and state.roll_due
    # With B's doors on 4 and 3 and the piece on 10: 10 → 4 is blocked, 10 → 9 is allowed and leaves the 6 unplayable.
    state = position({10: "W", 4: "BB", 3: "BB", 1: "B" * 11}, off={WHITE: 14}, dice=(6, 1))
    assert state.plan() == {(10, 9): 1}
    # W to play 5-4 with pieces on 17 and 12, B's doors on 8 and 6: 17 → 12 would leave the 4 unplayable.
    state = position({17: "W", 12: "W", 8: "BB", 6: "BB", 1: "B" * 11}, off={WHITE: 13}, dice=(5, 4))
    assert state.plan() == {(17, 13): 4, (12, 7): 5}


def test_the_larger_die_when_only_one_can_be_used():
    # Either die alone, never both: the 6 must be played.
    state = position({20: "W", 15: "BB", 13: "BB", 1: "B" * 11}, off={WHITE: 14}, dice=(6, 1))
    # 20 → 14 (6) then 14 → 13 is a door; 20 → 19 (1) then 19 → 13 is a door: one die, the larger.
    assert state.plan() == {(20, 14): 6}


def test_bearing_off():
    state = position({6: "W", 4: "WW", 1: "B" * 15}, off={WHITE: 12}, dice=(6, 2))
    # Exactly 6 from 6; the 2 from 4 to 2. No larger die: 6 is the farthest point.
    assert state.plan() == {(6, 0): 6, (4, 2): 2, (6, 4): 2}
    state = position({3: "W", 2: "W", 24: "B" * 15}, off={WHITE: 13}, turn=WHITE, dice=(6, 5))
    # A die larger than the farthest piece's distance bears it off; the smallest such die is used.
    assert state.plan() == {(3, 0): 5}
    state.move(3, 0)
    assert state.dice_left == [6] and state.plan() == {(2, 0): 6}
    # Not while a piece is outside home, nor while one is pinned.
    assert (4, 0) not in position({7: "W", 4: "W", 1: "B" * 15}, off={WHITE: 13}, dice=(4, 1)).plan()
    pinned = position({5: "WB", 4: "W", 1: "B" * 14}, off={WHITE: 13}, dice=(4, 2))
    assert all(destination != 0 for _, destination in pinned.plan())


def test_black_bears_off_to_25_and_wins_single_or_double():
    state = position({24: "B", 20: "W"}, turn=BLACK, off={BLACK: 14, WHITE: 14}, dice=(1, 2))
    state.move(24, 25)
    assert (state.result, state.score, state.turn) == (BLACK, 1, None)
    state = position({24: "B", 20: "W" * 15}, turn=BLACK, off={BLACK: 14}, dice=(1, 2))
    state.move(24, 25)
    assert (state.result, state.score) == (BLACK, 2)
    assert ENGINE.outcome(state).ranks == (2, 1) and ENGINE.outcome(state).reason == "double"
    # The rankings count what the win scored: 2 for a double, 1 for a single.
    assert ENGINE.outcome(state).points == (0, 2)
    single = position({24: "B", 20: "W"}, turn=BLACK, off={BLACK: 14, WHITE: 14}, dice=(1, 2))
    single.move(24, 25)
    assert ENGINE.outcome(single).points == (0, 1)


def test_pinning_the_mother_wins_double_once_ones_own_start_is_empty():
    # Black's last piece on 1 (its mother) gets pinned by white, whose own start (24) is empty: white wins double.
    state = position({3: "W", 1: "B", 10: "W" * 14, 12: "B" * 14}, dice=(2, 1))
    state.move(3, 1)
    assert state.mother_pinned(BLACK) and (state.result, state.score) == (WHITE, 2)
    # With a white piece still on 24, the game goes on, until it leaves.
    state = position({3: "W", 1: "B", 24: "W", 10: "W" * 13, 12: "B" * 14}, dice=(2, 1))
    state.move(3, 1)
    assert state.result is None and state.dice_left == [1]
    state.move(24, 23)
    assert (state.result, state.score) == (WHITE, 2)


def test_both_mothers_pinned_is_a_draw():
    state = position({24: "WB", 3: "W", 1: "B", 12: "W" * 13, 13: "B" * 13}, dice=(2, 1))
    state.move(3, 1)
    assert (state.result, state.score) == ("D", 0) and ENGINE.outcome(state).is_draw


def test_a_player_who_cannot_move_passes():
    # White's last piece is pinned: whatever the roll, white passes, and black's turn begins.
    state = position({10: "WB", 20: "B" * 14}, off={WHITE: 14})
    assert state.roll_due and state.roll((3, 2)) is False
    assert state.passes == [{"color": WHITE, "dice": [3, 2]}] and state.turn == BLACK and state.roll_due
    assert state.result is None
    assert state.roll((1, 1)) is True and state.passes == [{"color": WHITE, "dice": [3, 2]}]
    # The next accepted move empties the passes.
    origin, destination = next(iter(state.plan()))
    state.move(origin, destination)
    assert state.passes == []


def test_refusals_change_nothing():
    state = State.new()
    state.roll((6, 5))
    before = state.to_json()
    refused = [
        (1, 7, "cannot move"),
        (24, 17, "illegal"),
        (24, 24, "illegal"),
        (30, 1, "cannot move"),
        (24, 0, "illegal"),
    ]
    for origin, destination, message in refused:
        with pytest.raises(IllegalMove, match=message):
            state.move(origin, destination)
    assert state.to_json() == before


def play_random(seed: int, limit: int = 3000):
    """Play a random game; yield each state after every action."""
    rng = random.Random(seed)
    state = ENGINE.new(2, {}, rng)
    for _ in range(limit):
        seat = ENGINE.to_act(state)
        if seat is None:
            return
        automatic = ENGINE.automatic(state)
        action = automatic if automatic is not None else rng.choice(ENGINE.legal_actions(state, seat))
        ENGINE.apply(state, seat, action, rng)
        yield state
    raise AssertionError("the game does not end")


@given(st.integers(min_value=0, max_value=10_000))
@settings(max_examples=40, deadline=None)
def test_pieces_are_conserved_and_stacks_are_well_formed(seed):
    for state in play_random(seed):
        for side in (WHITE, BLACK):
            assert pieces(state, side) == 15
            numbers = [n for stack in state.points for c, n in stack if c == side] + state.off[side]
            assert sorted(numbers) == list(range(1, 16))
        for stack in state.points:
            # A point holds one colour, or one pinned piece under the other colour's pieces.
            colours = [colour for colour, _ in stack]
            assert len(set(colours[1:])) <= 1
        assert sorted(state.dice_left, reverse=True) == state.dice_left
    assert state.result in (WHITE, BLACK, "D") and state.score in (0, 1, 2)


def plain_plan(state: State) -> dict[tuple[int, int], int]:
    """The moves allowed, read from the rules as plainly as they are written: every sequence of the turn's dice tried
    on copies, kept if it uses the most dice (all of them if it ends the game), the larger die when only one of two
    can be used; a move is allowed if some kept sequence begins with it (by its smallest die, for a bearing off)."""
    side, dice = state.turn, tuple(state.dice_left)

    def sequences(position: State, left: tuple[int, ...]) -> list[list[tuple[int, int, int]]]:
        found: list[list[tuple[int, int, int]]] = [[]]
        for die in set(left):
            rest = list(left)
            rest.remove(die)
            for step in position.steps(side, die):
                after = position.copy()
                after.apply_step(step)
                if after.ending(side) is not None:
                    found.append([(step.origin, step.destination, die)] + [(0, 0, 0)] * len(rest))
                    continue
                found += [[(step.origin, step.destination, die), *tail] for tail in sequences(after, tuple(rest))]
        return found

    every = sequences(state, dice)
    most = max(len(sequence) for sequence in every)
    kept = [sequence for sequence in every if len(sequence) == most and most]
    if most == 1 and len(dice) == 2 and dice[0] != dice[1] and any(s[0][2] == dice[0] for s in kept):
        kept = [sequence for sequence in kept if sequence[0][2] == dice[0]]
    plan: dict[tuple[int, int], int] = {}
    for (origin, destination, die), *_ in kept:
        plan[(origin, destination)] = min(die, plan.get((origin, destination), 7))
    return plan


@given(st.integers(min_value=0, max_value=10_000))
@settings(max_examples=25, deadline=None)
def test_the_plan_is_what_the_rules_say_at_every_move_of_random_games(seed):
    for state in play_random(seed):
        if state.result is None and not state.roll_due:
            assert state.plan() == plain_plan(state.copy())


def test_the_plan_never_changes_the_position_even_for_a_moment():
    # Positions are shared by readers in other threads: the search moves pieces on a board of its own. A position whose
    # points and pieces borne off cannot change (tuples) would fail it if it moved them there.
    for state in play_random(7):
        if state.result is None and not state.roll_due:
            frozen = state.copy()
            frozen._plan = None
            frozen.points = tuple(frozen.points)  # type: ignore[assignment]
            frozen.off = {side: tuple(numbers) for side, numbers in frozen.off.items()}  # type: ignore[misc]
            assert frozen.plan() == state.plan()


def test_random_games_replay_from_their_log():
    for seed in range(10):
        rng = random.Random(seed)
        state, replayed = ENGINE.new(2, {}, rng), ENGINE.new(2, {}, rng)
        while (seat := ENGINE.to_act(state)) is not None:
            automatic = ENGINE.automatic(state)
            action = automatic if automatic is not None else rng.choice(ENGINE.legal_actions(state, seat))
            played = ENGINE.apply(state, seat, action, rng)
            logged = json.loads(json.dumps(dict(played.data)))
            ENGINE.apply(replayed, seat, ENGINE.logged_action(type(played)(played.kind, logged)), rng)
        assert ENGINE.state_to_json(replayed) == ENGINE.state_to_json(state)
        assert ENGINE.state_from_json(json.loads(json.dumps(ENGINE.state_to_json(state)))).to_json() == state.to_json()


@pytest.mark.parametrize(
    "data", [{}, {"kind": "move", "from": -1, "to": 3}, {"kind": "move", "from": 3}, {"kind": "roll", "dice": [0, 7]}]
)
def test_bad_actions_are_refused(data):
    with pytest.raises(IllegalAction):
        ENGINE.action_from_json(data)


def test_the_engine_rolls_when_a_turn_begins():
    state = ENGINE.new(2, {}, random.Random(1))
    assert ENGINE.automatic(state) == Roll() and ENGINE.legal_actions(state, 0) == [Roll()]
    ENGINE.apply(state, 0, Roll((4, 2)), random.Random(1))
    assert ENGINE.automatic(state) is None
    assert ENGINE.legal_actions(state, 0) == [Move(24, 20), Move(24, 22)] and ENGINE.legal_actions(state, 1) == []


def test_the_stored_vectors_are_what_the_rules_give_now():
    from games.management.commands.rules_vectors import read_vectors
    from games.rules.plakoto_vectors import generate, render, summary

    vectors = generate()
    # Not an `assert ==`: on a difference, pytest would diff megabytes.
    if read_vectors("plakoto") != render(vectors):
        pytest.fail("tests/vectors/plakoto.json.gz is out of date: run `python manage.py rules_vectors plakoto`")
    counts = summary(vectors)
    assert counts["positions"] >= 2500 and counts["passes"] >= 20 and counts["ends"] >= 20
    assert counts["bearing off"] >= 50 and counts["doubles"] >= 300 and counts["one die of two"] >= 50
