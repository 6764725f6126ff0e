"""English draughts' rules (games/rules/draughts.py): the move generator checked by perft from the start, and a
hand-written position for every rule. Positions are drawn as the protocol's board, row 8 first."""

import gc
import random
import types

import pytest

from games.rules import IllegalAction, draughts, find_engine
from games.rules.draughts import (
    BLACK,
    START,
    WHITE,
    IllegalMove,
    Move,
    State,
    parse_path,
    perft,
    square_index,
    square_name,
)


def position(pieces: str, turn: str = WHITE) -> State:
    """Return the position with the pieces named like "w:d4 W:c3 b:e5 B:h8" (man or king, then square)."""
    board = ["0"] * 64
    for placed in pieces.split():
        piece, name = placed.split(":")
        board[square_index(name)] = piece
    return State.from_board("".join(board), turn)


def paths(state: State) -> set[str]:
    return {str(move) for move in state.legal_moves()}


def test_squares_are_named_as_the_protocol_names_them():
    assert square_name(0) == "a8" and square_name(63) == "h1" and square_name(square_index("c3")) == "c3"
    assert START[square_index("a1")] == "w" and START[square_index("h8")] == "b" and START[square_index("b1")] == "0"
    for bad in ("A3", "i1", "a9", "a0", "c", "c33", ""):
        with pytest.raises(IllegalMove):
            square_index(bad)


@pytest.mark.parametrize("depth, count", list(enumerate([7, 49, 302, 1469, 7361, 36768, 179740], start=1)))
def test_perft_from_the_start(depth, count):
    assert perft(State(), depth) == count


def test_perft_at_depth_8():
    assert perft(State(), 8) == 845931


def test_white_moves_first_and_men_step_forwards_only():
    assert paths(State()) == {"a3 b4", "c3 b4", "c3 d4", "e3 d4", "e3 f4", "g3 f4", "g3 h4"}
    assert paths(position("w:d4 b:a1")) == {"d4 c5", "d4 e5"}
    assert paths(position("w:b2 b:e5 b:g5", BLACK)) == {"e5 d4", "e5 f4", "g5 f4", "g5 h4"}


def test_kings_step_in_all_four_directions():
    assert paths(position("W:d4 b:h8")) == {"d4 c5", "d4 e5", "d4 c3", "d4 e3"}


def test_capture_is_mandatory():
    state = position("w:d4 b:e5 w:b2")
    assert paths(state) == {"d4 f6"}
    with pytest.raises(IllegalMove, match="capture is mandatory"):
        state.find(parse_path(["b2", "a3"]))


def test_a_man_does_not_capture_backwards_but_a_king_does():
    assert paths(position("w:d4 b:e3")) == {"d4 c5", "d4 e5"}
    assert paths(position("W:d4 b:e3")) == {"d4 f2"}


def test_a_multi_jump_is_completed_and_may_change_direction():
    state = position("w:c3 b:d4 b:d6 b:f6")
    # c3 takes d4 landing on e5, then d6 (to c7) or f6 (to g7): the player chooses, but does not stop on e5.
    assert paths(state) == {"c3 e5 c7", "c3 e5 g7"}
    with pytest.raises(IllegalMove, match="go on"):
        state.find(parse_path(["c3", "e5"]))
    with pytest.raises(IllegalMove):
        state.find(parse_path(["c3", "g7"]))
    state.apply(state.find(parse_path(["c3", "e5", "g7"])))
    assert state.text[square_index("g7")] == "w" and state.text[square_index("c3")] == "0"
    assert state.text[square_index("d4")] == "0" and state.text[square_index("f6")] == "0"
    assert state.text[square_index("d6")] == "b" and state.turn == BLACK


def test_looking_for_captures_leaves_no_garbage_for_the_collector():
    # A server process looks for captures on every command: a search that left a reference cycle behind (a closure
    # that called itself) filled the collector's young generation, whose passes then paused the whole server.
    # What the collector finds is kept (DEBUG_SAVEALL) and only the search's own kinds counted: the test process's
    # other threads may leave garbage of their own meanwhile.
    state = position("w:c3 b:d4 b:d6 b:f6")
    gc.collect()
    gc.disable()
    debug = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(100):
            state._moves = None
            assert len(state.legal_moves()) == 2
        gc.collect()
        left = [
            found
            for found in gc.garbage
            if isinstance(found, Move)
            or (isinstance(found, types.FunctionType) and found.__module__ == draughts.__name__)
        ]
    finally:
        gc.set_debug(debug)
        gc.garbage.clear()
        gc.enable()
    assert left == []


def test_a_sequence_need_not_be_the_longest():
    assert paths(position("w:a1 b:b2 b:b4 b:d4 b:d6")) == {"a1 c3 a5", "a1 c3 e5 c7"}


def test_crowning_ends_the_move_even_when_the_new_king_could_jump_on():
    state = position("w:d6 b:e7 b:g7")
    # As a king on f8 it could take g7, but the move ends on crowning.
    assert paths(state) == {"d6 f8"}
    with pytest.raises(IllegalMove):
        state.find(parse_path(["d6", "f8", "h6"]))
    move = state.find(parse_path(["d6", "f8"]))
    assert move.crowned
    state.apply(move)
    assert state.text[square_index("f8")] == "W" and state.text[square_index("e7")] == "0"
    # The new king jumps on its next move.
    state.turn = WHITE
    assert paths(state) == {"f8 h6"}


def test_a_man_is_crowned_by_a_plain_step_too():
    state = position("w:c7 b:h2")
    assert paths(state) == {"c7 b8", "c7 d8"}
    state.apply(state.find(parse_path(["c7", "d8"])))
    assert state.text[square_index("d8")] == "W"
    black = position("b:f2 w:a7", BLACK)
    black.apply(black.find(parse_path(["f2", "g1"])))
    assert black.text[square_index("g1")] == "B"


def test_a_king_may_land_again_on_its_own_starting_square():
    state = position("W:d4 b:e5 b:e7 b:c7 b:c5")
    moves = state.legal_moves()
    assert {move.path[-1] for move in moves} == {square_index("d4")}
    assert all(len(move.captured) == 4 for move in moves)
    assert "d4 f6 d8 b6 d4" in paths(state)


def test_a_piece_is_not_jumped_twice():
    assert paths(position("W:c3 b:d4")) == {"c3 e5"}


def test_a_side_without_a_legal_move_loses():
    engine = find_engine("draughts")
    blocked = position("b:b6 w:a5 w:c5 w:d4", BLACK)
    assert blocked.legal_moves() == [] and blocked.winner() == WHITE
    assert engine.to_act(blocked) is None and engine.outcome(blocked).ranks == (1, 2)
    cornered = position("B:h8 w:g7 w:f6", BLACK)
    assert cornered.legal_moves() == [] and engine.outcome(cornered).winner == 0
    gone = position("w:d4", BLACK)
    assert engine.outcome(gone).winner == 0 and engine.outcome(gone).reason == "no-move"


def test_refusals_name_the_reason_and_change_nothing():
    state = State()
    before = state.text
    for names, reason in [
        (["c3"], "at least two"),
        (["c3", "c3"], "twice"),
        (["b6", "a5"], "no piece of yours"),
        (["d4", "e5"], "no piece of yours"),
        (["c3", "e5"], "not a legal move"),
        (["a1", "b2"], "not a legal move"),
    ]:
        with pytest.raises(IllegalMove, match=reason):
            state.find(parse_path(names))
    assert state.text == before and state.turn == WHITE


def test_a_copy_takes_the_moves_found_and_each_position_keeps_its_own():
    state = position("w:c3 b:d4 b:d6 b:f6")
    moves = state.legal_moves()
    copy = state.copy()
    assert copy.legal_moves() is moves  # not looked for again
    copy.apply(copy.find(parse_path(["c3", "e5", "g7"])))
    assert copy.turn == BLACK and all(move.path[0] != square_index("c3") for move in copy.legal_moves())
    assert state.legal_moves() is moves and paths(state) == {"c3 e5 c7", "c3 e5 g7"}


def test_the_engine_plays_logs_and_replays_random_games():
    engine, rng = find_engine("draughts"), random.Random(7)
    for _ in range(20):
        state, replayed, plies = engine.new(2, {}, rng), engine.new(2, {}, rng), 0
        while engine.to_act(state) is not None and plies < 300:
            seat = engine.to_act(state)
            assert engine.legal_actions(state, 1 - seat) == []
            action = rng.choice(engine.legal_actions(state, seat))
            played = engine.apply(state, seat, Move(action.path), rng)
            engine.apply(replayed, seat, engine.logged_action(played), rng)
            again = engine.action_from_json(engine.action_to_json(action))
            assert again.path == action.path
            plies += 1
        assert engine.state_to_json(replayed) == engine.state_to_json(state)
        assert engine.state_from_json(engine.state_to_json(state)).text == state.text
        assert -1.0 <= engine.heuristic(state, 0) <= 1.0


@pytest.mark.parametrize(
    "data",
    [{}, {"path": "c3 d4"}, {"path": ["c3"]}, {"path": ["c3", 4]}, {"path": ["c3"] * 14}, {"path": ["C3", "D4"]}],
)
def test_bad_actions_are_refused(data):
    with pytest.raises(IllegalAction):
        find_engine("draughts").action_from_json(data)


@pytest.mark.parametrize(
    "data", [{"board": START[:63], "turn": "w"}, {"board": START, "turn": "x"}, {"board": "w" + START[1:], "turn": "w"}]
)
def test_bad_states_are_refused(data):
    with pytest.raises(ValueError):
        State.from_json(data)


def test_the_stored_vectors_are_what_the_rules_give_now():
    from games.management.commands.rules_vectors import read_vectors
    from games.rules.draughts_vectors import generate, render, summary

    vectors = generate()
    # Not an `assert ==`: on a difference, pytest would diff megabytes.
    if read_vectors("draughts") != render(vectors):
        pytest.fail("tests/vectors/draughts.json.gz is out of date: run `python manage.py rules_vectors draughts`")
    counts = summary(vectors)
    assert counts["positions"] >= 3000 and counts["multi-jumps"] >= 100 and counts["crownings"] >= 100
    assert counts["over"] >= 50 and counts["kings"] >= 1000 and counts["refusals"] >= 5000
