"""The Tâb rules (games/rules/tab.py), each rule tested like a move generator.

Positions are drawn as Blue (the initial player) sees the board: the top line is row 3, the bottom line row 0,
one token per cell, left to right. Tokens: `.` empty, `b`/`r` a piece that never moved, `B`/`R` a piece in
motion, `B*`/`R*` a piece that has reached its last row.
"""

import functools
import itertools
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules.tab import (
    BLUE,
    DEFAULT_SIZE,
    RED,
    THROW_PROBABILITIES,
    IllegalMove,
    Move,
    Piece,
    State,
    Throw,
    cell_name,
    cell_of,
    opponent,
    own_path_position,
)

SIZES = (7, 9, 11, 13, 15)
COLORS = (BLUE, RED)
VALUES = (1, 2, 3, 4, 6)

TOKENS: dict[str, Piece | None] = {
    ".": None,
    "b": Piece(BLUE),
    "B": Piece(BLUE, in_motion=True),
    "B*": Piece(BLUE, in_motion=True, reached_last_row=True),
    "r": Piece(RED),
    "R": Piece(RED, in_motion=True),
    "R*": Piece(RED, in_motion=True, reached_last_row=True),
}
SYMBOLS = {piece: token for token, piece in TOKENS.items()}


def cell_at(row: int, column: int, size: int) -> int:
    """Return the cell drawn at `row` (0 = bottom) and `column` (0 = left) of Blue's picture of the board."""
    # The spec's snake: rows 0 and 2 run left to right, rows 1 and 3 right to left.
    return row * size + (column if row % 2 == 0 else size - 1 - column)


def position(diagram: str, turn: str = BLUE, throw: int | None = None) -> State:
    """Return the state drawn in `diagram`, with `turn` to play and a throw of value `throw` if given."""
    lines = [line.split() for line in diagram.strip().splitlines()]
    size = len(lines[0])
    assert len(lines) == 4 and all(len(line) == size for line in lines), diagram
    pieces: list[Piece | None] = [None] * (4 * size)
    for row, line in enumerate(reversed(lines)):
        for column, token in enumerate(line):
            pieces[cell_at(row, column, size)] = TOKENS[token]
    state = State(size=size, pieces=pieces, turn=turn)
    if throw is not None:
        state.throw(Throw.of_value(throw))
    return state


def drawing(state: State) -> str:
    """Return the diagram of `state`'s board, in `position`'s notation."""
    lines = []
    for row in reversed(range(4)):
        tokens = [SYMBOLS[state.pieces[cell_at(row, column, state.size)]] for column in range(state.size)]
        lines.append(" ".join(tokens))
    return "\n".join(lines)


def normalized(diagram: str) -> str:
    """Return `diagram` with its spacing made canonical, for comparisons."""
    return "\n".join(" ".join(line.split()) for line in diagram.strip().splitlines())


def assert_refused(state: State, action: Callable[[], object], message: str) -> None:
    """Assert that `action` raises IllegalMove(message) and leaves `state` exactly as it was."""
    before = state.to_json()
    with pytest.raises(IllegalMove) as refusal:
        action()
    assert str(refusal.value) == message
    assert state.to_json() == before


def visual(cell: int, size: int) -> tuple[int, int]:
    """Return the (row, column) where Blue's picture of the board draws `cell`."""
    row, offset = divmod(cell, size)
    return row, offset if row % 2 == 0 else size - 1 - offset


# The board and the two paths


def test_cells_are_numbered_as_a_snake_from_blues_bottom_left() -> None:
    state = State(size=7, pieces=[None] * 28, turn=BLUE)
    for cell in (0, 1, 7, 14, 21, 22):
        state.pieces[cell] = Piece(BLUE)
    assert drawing(state) == normalized("""
        . . . . . b b
        b . . . . . .
        . . . . . . b
        b b . . . . .
    """)


def test_the_start_puts_blue_on_the_first_cells_and_red_on_the_last() -> None:
    assert drawing(State.new(7)) == normalized("""
        r r r r r r r
        . . . . . . .
        . . . . . . .
        b b b b b b b
    """)
    state = State.new()
    assert state.size == DEFAULT_SIZE and state.turn == BLUE
    assert (state.dice, state.step, state.cell, state.selected, state.winner) == (None, "from", None, None, None)
    assert state.pieces == [Piece(BLUE)] * 9 + [None] * 18 + [Piece(RED)] * 9


@pytest.mark.parametrize("size", SIZES)
def test_new_accepts_every_odd_size_from_7_to_15(size: int) -> None:
    assert len(State.new(size).pieces) == 4 * size


@pytest.mark.parametrize("size", [5, 6, 8, 14, 16, 17, 0, -9, "9", "large", 9.0, True, None])
def test_new_refuses_other_sizes(size: object) -> None:
    with pytest.raises(ValueError, match="invalid size"):
        State.new(size)  # type: ignore[arg-type]


def test_own_path_position_follows_the_spec_formula() -> None:
    assert [own_path_position(cell, BLUE, 7) for cell in range(28)] == list(range(28))
    # Red's home row is board row 3, and its last row is board row 0, Blue's home.
    assert [cell_of(position, RED, 7) for position in range(28)] == [
        *range(21, 28),
        *range(14, 21),
        *range(7, 14),
        *range(0, 7),
    ]
    assert own_path_position(25, RED, 9) == (3 - 25 // 9) * 9 + 25 % 9 == 16
    assert opponent(BLUE) == RED and opponent(RED) == BLUE


@given(size=st.sampled_from(SIZES), color=st.sampled_from(COLORS))
def test_own_path_position_and_cell_of_are_inverse_bijections(size: int, color: str) -> None:
    cells = range(4 * size)
    assert sorted(own_path_position(cell, color, size) for cell in cells) == list(cells)
    for cell in cells:
        assert cell_of(own_path_position(cell, color, size), color, size) == cell
        assert own_path_position(cell_of(cell, color, size), color, size) == cell


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("color", COLORS)
def test_every_step_of_both_paths_goes_to_a_neighbouring_square(size: int, color: str) -> None:
    for cell in range(4 * size):
        for reached in (False, True):
            state = State(size=size, pieces=[None] * (4 * size), turn=color)
            state.pieces[cell] = Piece(color, in_motion=True, reached_last_row=reached)
            for destination in state.destinations(cell, 1):
                (row, column), (row2, column2) = visual(cell, size), visual(destination, size)
                assert abs(row - row2) + abs(column - column2) == 1, (cell, destination)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("color", COLORS)
def test_no_path_leads_back_to_the_first_row(size: int, color: str) -> None:
    first_row = {cell_of(position, color, size) for position in range(size)}
    for cell, value, reached in itertools.product(range(4 * size), VALUES, (False, True)):
        if cell not in first_row:
            state = State(size=size, pieces=[None] * (4 * size), turn=color)
            state.pieces[cell] = Piece(color, in_motion=True, reached_last_row=reached)
            assert first_row.isdisjoint(state.destinations(cell, value)), (cell, value)


def test_blue_walks_its_path_one_step_at_a_time() -> None:
    state = position(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        B . . . . . .
        """,
        throw=1,
    )
    path = [0]
    while len(path) < 28:
        # At the fork, the row-3 branch comes first; the piece takes it, as it has not been in row 3 yet.
        path.append(state.destinations(path[-1], 1)[0])
        state.pieces[path[-2]], state.pieces[path[-1]] = None, Piece(BLUE, True, path[-1] >= 21)
    assert path == list(range(28))
    assert state.destinations(27, 1) == [14]


def test_red_walks_its_path_one_step_at_a_time() -> None:
    state = position(
        """
        . . . . . . R
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """,
        turn=RED,
        throw=1,
    )
    path = [21]
    while len(path) < 28:
        path.append(state.destinations(path[-1], 1)[0])
        state.pieces[path[-2]], state.pieces[path[-1]] = None, Piece(RED, True, path[-1] < 7)
    assert path == [*range(21, 28), *range(14, 21), *range(7, 14), *range(0, 7)]
    assert state.destinations(6, 1) == [7]


# Which moves are legal


def test_seed_example_fork_on_size_9() -> None:
    state = position(
        """
        r r r r r r r r r
        . . . . . . . B .
        . . . . . . . . .
        b b b b b b b b b
        """,
        throw=3,
    )
    assert state.pieces[25] == Piece(BLUE, in_motion=True)
    assert state.destinations(25, 3) == [28, 10]
    assert state.legal_moves() == [Move(25, 28, captures=True), Move(25, 10, captures=False)]
    assert state.select(25) is None
    assert (state.step, state.cell, state.selected, state.turn) == ("to", 25, [28, 10], BLUE)
    assert_refused(state, lambda: state.select(26), "Invalid move: must play the dice's value")
    assert state.select(28) == Move(25, 28, captures=True)
    assert (state.step, state.cell, state.selected, state.turn, state.dice) == ("from", 25, [25, 28], RED, None)
    assert state.pieces[28] == Piece(BLUE, in_motion=True, reached_last_row=True)


def test_seed_example_first_tab_on_size_9() -> None:
    state = State.new(9)
    state.throw(Throw.of_value(1))
    assert state.legal_moves() == [Move(8, 9, captures=False)]
    assert_refused(state, lambda: state.select(0), "cannot capture to your own piece")
    assert state.select(8) == Move(8, 9, captures=False)
    assert drawing(state) == normalized("""
        r r r r r r r r r
        . . . . . . . . .
        . . . . . . . . B
        b b b b b b b b .
    """)
    assert (state.turn, state.dice, state.step, state.cell, state.selected) == (BLUE, None, "from", 8, [8, 9])
    state.throw(Throw.of_value(2))
    assert state.select(9) == Move(9, 11, captures=False)
    assert (state.turn, state.dice, state.step, state.cell, state.selected) == (RED, None, "from", 9, [9, 11])


@pytest.mark.parametrize(
    ("color", "moves"),
    [(BLUE, [Move(6, 7, captures=False)]), (RED, [Move(27, 14, captures=False)])],
)
def test_from_the_start_only_the_front_piece_moves_with_a_tab(color: str, moves: list[Move]) -> None:
    state = State.new(7)
    state.turn = color
    state.throw(Throw.of_value(1))
    assert state.legal_moves() == moves
    for value in (2, 3, 4, 6):
        state.dice = Throw.of_value(value)
        assert state.legal_moves() == []


def test_a_first_move_needs_a_tab() -> None:
    state = position(
        """
        . . . . . . r
        . . . . . . .
        . . . . . . .
        . . . B . . b
        """,
        throw=2,
    )
    assert state.destinations(6, 2) == []
    assert state.destinations(6, 1) == [7]
    assert state.legal_moves() == [Move(3, 5, captures=False)]
    assert_refused(state, lambda: state.select(6), "A piece's first move must be a tâb (1)")


def test_a_piece_moved_within_the_first_row_then_moves_with_any_value() -> None:
    state = position(
        """
        . . . . . . r
        . . . . . . .
        . . . . . . .
        . . . b . . .
        """,
        throw=1,
    )
    state.select(3)
    assert state.pieces[4] == Piece(BLUE, in_motion=True)
    state.throw(Throw.of_value(3))
    assert state.legal_moves() == [Move(4, 7, captures=False)]


def test_a_piece_cannot_land_on_its_own_piece_but_may_pass_over_it() -> None:
    state = position(
        """
        . . . . . . r
        . . . . . . .
        . . . B . B B
        . . . . . . .
        """,
        throw=2,
    )
    # Row 1 runs right to left: the three pieces are on 7, 8 and 10.
    assert state.legal_moves() == [Move(7, 9, captures=False), Move(10, 12, captures=False)]
    assert_refused(state, lambda: state.select(8), "cannot capture to your own piece")
    state.dice = Throw.of_value(3)
    assert state.destinations(7, 3) == [] and state.destinations(8, 3) == [11]


def test_landing_on_an_opponent_piece_captures_it() -> None:
    state = position(
        """
        . . . . . . r
        . . . . . . .
        . . . R . B .
        . . . . . . .
        """,
        throw=2,
    )
    assert state.legal_moves() == [Move(8, 10, captures=True)]
    assert state.select(8) == Move(8, 10, captures=True)
    assert drawing(state) == normalized("""
        . . . . . . r
        . . . . . . .
        . . . B . . .
        . . . . . . .
    """)
    assert (state.turn, state.winner) == (RED, None)


def test_red_captures_in_blues_home_row_and_so_reaches_its_last_row() -> None:
    state = position(
        """
        . . . . . . .
        . . . . . . .
        R . . . . . .
        b . . . . . b
        """,
        turn=RED,
        throw=1,
    )
    assert state.legal_moves() == [Move(13, 0, captures=True), Move(13, 14, captures=False)]
    assert state.select(13) is None
    assert state.select(0) == Move(13, 0, captures=True)
    assert drawing(state) == normalized("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        R* . . . . . b
    """)
    assert state.turn == RED


@pytest.mark.parametrize(
    ("value", "destinations"),
    [(1, [21, 7]), (2, [22, 8]), (3, [23, 9]), (4, [24, 10]), (6, [26, 12])],
)
def test_the_fork_at_the_end_of_row_2_offers_row_3_then_row_1(value: int, destinations: list[int]) -> None:
    state = position(
        """
        r . . . . . .
        . . . . . . B
        . . . . . . .
        . . . . . . .
        """,
        throw=value,
    )
    assert state.destinations(20, value) == destinations


def test_the_fork_is_reached_within_a_move() -> None:
    state = position(
        """
        r . . . . . .
        . . . . B . .
        . . . . . . .
        . . . . . . .
        """,
        throw=4,
    )
    assert state.legal_moves() == [Move(18, 22, captures=False), Move(18, 8, captures=False)]
    state.dice = Throw.of_value(2)
    assert state.legal_moves() == [Move(18, 20, captures=False)]


def test_a_piece_enters_row_3_only_once() -> None:
    state = position(
        """
        r . . . . . .
        . . . . B* . B*
        . . . . . . .
        . . . . . . .
        """,
        throw=1,
    )
    assert state.destinations(20, 1) == [7]
    assert state.legal_moves() == [Move(18, 19, captures=False), Move(20, 7, captures=False)]
    state.dice = Throw.of_value(4)
    assert state.destinations(18, 4) == [8]
    assert state.select(20) == Move(20, 10, captures=False)
    assert state.pieces[10] == Piece(BLUE, in_motion=True, reached_last_row=True)


def test_reaching_row_3_is_remembered_after_leaving_it() -> None:
    state = position(
        """
        . . . . . B* .
        . . . . . . .
        R . . . . . .
        . . . . . . .
        """,
        throw=6,
    )
    assert state.select(22) == Move(22, 14, captures=False)
    assert state.pieces[14] == Piece(BLUE, in_motion=True, reached_last_row=True)


def test_the_end_of_row_3_leads_to_row_2() -> None:
    blue = position(
        """
        B* . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """,
        throw=2,
    )
    assert blue.destinations(27, 1) == [14] and blue.destinations(27, 2) == [15]
    red = position(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . R*
        """,
        turn=RED,
        throw=2,
    )
    assert red.destinations(6, 1) == [7] and red.destinations(6, 2) == [8]


def test_reds_fork_offers_blues_home_row_then_row_2() -> None:
    state = position(
        """
        . . . . . . .
        . . . . . . .
        R . . . . . R*
        . . . . . . .
        """,
        turn=RED,
        throw=2,
    )
    # Red's row 2 is board row 1, walked right to left as Blue sees it: 13 is the fork, 7 a veteran.
    assert state.legal_moves() == [Move(7, 9, captures=False), Move(13, 1, captures=False), Move(13, 15, False)]
    state.pieces[13] = Piece(RED, in_motion=True, reached_last_row=True)
    assert state.destinations(13, 2) == [15]


def test_a_piece_in_the_last_row_is_frozen_while_its_player_has_pieces_in_the_first_row() -> None:
    state = position(
        """
        . . . B* . . .
        . . . . . . B
        . . . . . . .
        b . . . . . R*
        """,
        throw=1,
    )
    assert state.destinations(24, 1) == []
    # Entering row 3 stays allowed: only moving a piece that stands there is held back.
    assert state.legal_moves() == [Move(0, 1, captures=False), Move(20, 21, False), Move(20, 7, False)]
    message = "You can't move in the last row while you have pieces in the first row"
    assert_refused(state, lambda: state.select(24), message)
    state.pieces[0] = None
    assert state.destinations(24, 1) == [25]
    state.pieces[3] = Piece(BLUE, in_motion=True)
    assert state.destinations(24, 1) == []


def test_reds_last_row_piece_is_frozen_while_red_has_pieces_in_its_first_row() -> None:
    state = position(
        """
        . r . . . . .
        . . . . . . .
        . . . . . . .
        . . . R* . . .
        """,
        turn=RED,
        throw=1,
    )
    assert state.legal_moves() == [Move(26, 27, captures=False)]
    assert_refused(
        state, lambda: state.select(3), "You can't move in the last row while you have pieces in the first row"
    )
    state.pieces[26] = None
    assert state.legal_moves() == [Move(3, 4, captures=False)]


def test_a_fork_with_one_branch_blocked_moves_at_once() -> None:
    state = position(
        """
        . . . . . . B*
        . . . . . . B
        R . . . . . .
        . . . . . . .
        """,
        throw=1,
    )
    assert state.legal_moves() == [Move(20, 7, captures=False), Move(21, 22, captures=False)]
    assert state.select(20) == Move(20, 7, captures=False)
    assert (state.step, state.cell, state.selected) == ("from", 20, [20, 7])


# The fork, click by click


def fork_position() -> State:
    return position(
        """
        r . . . . . .
        . . . . . . B
        . . . . . . .
        . . . . . . .
        """,
        throw=1,
    )


def test_selecting_a_piece_at_the_fork_asks_for_the_destination() -> None:
    state = fork_position()
    board = list(state.pieces)
    assert state.select(20) is None
    assert (state.step, state.cell, state.selected, state.turn) == ("to", 20, [21, 7], BLUE)
    assert state.pieces == board
    assert state.select(21) == Move(20, 21, captures=False)
    assert state.pieces[21] == Piece(BLUE, in_motion=True, reached_last_row=True)
    assert (state.step, state.cell, state.selected, state.dice) == ("from", 20, [20, 21], None)


def test_the_other_destination_at_the_fork() -> None:
    state = fork_position()
    state.select(20)
    assert state.select(7) == Move(20, 7, captures=False)
    assert state.pieces[7] == Piece(BLUE, in_motion=True)


def test_selecting_the_origin_again_cancels_the_selection() -> None:
    state = fork_position()
    state.select(20)
    assert state.select(20) is None
    assert (state.step, state.cell, state.selected, state.dice) == ("from", None, None, Throw.of_value(1))
    assert state.select(20) is None
    assert state.step == "to"


@pytest.mark.parametrize("cell", [0, 8, 22, 27])
def test_at_the_fork_any_other_cell_is_refused(cell: int) -> None:
    state = fork_position()
    state.select(20)
    assert_refused(state, lambda: state.select(cell), "Invalid move: must play the dice's value")


def test_apply_makes_a_move_even_while_a_piece_is_selected() -> None:
    state = fork_position()
    state.select(20)
    state.apply(Move(20, 7, captures=False))
    assert (state.step, state.selected) == ("from", [20, 7])


# Refusals


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (True, "cell is not an integer"),
        ("3", "cell is not an integer"),
        (2.0, "cell is not an integer"),
        (None, "cell is not an integer"),
        (-1, "cell is negative"),
        (28, "cell is out of the board"),
        (10, "No piece on that cell"),
        (21, "That piece is not yours"),
    ],
)
def test_select_refuses_bad_cells(cell: object, message: str) -> None:
    state = position(
        """
        . . . . . . r
        . . . . . . .
        . . . . . . .
        . . . . . . b
        """,
        throw=1,
    )
    assert_refused(state, lambda: state.select(cell), message)  # type: ignore[arg-type]


def test_select_checks_the_cell_before_the_dice() -> None:
    state = State.new(7)
    assert_refused(state, lambda: state.select(-1), "cell is negative")
    assert_refused(state, lambda: state.select(6), "You must roll the dice first")


def test_throwing_again_is_refused_while_a_move_is_possible() -> None:
    state = State.new(7)
    state.throw(Throw.of_value(1))
    assert not state.can_throw and not state.must_pass
    assert_refused(state, lambda: state.throw(Throw.of_value(2)), "You already rolled the dice and have valid moves")
    assert_refused(state, state.pass_turn, "You already rolled the dice and have valid moves")


@pytest.mark.parametrize("value", [2, 3])
def test_without_a_move_a_2_or_3_must_be_passed(value: int) -> None:
    state = State.new(7)
    state.throw(Throw.of_value(value))
    assert state.legal_moves() == [] and state.must_pass and not state.can_throw
    assert_refused(state, lambda: state.throw(Throw.of_value(1)), "You already rolled the dice and must pass")
    state.pass_turn()
    assert (state.turn, state.dice, state.step) == (RED, None, "from")
    assert state.can_throw and not state.must_pass


@pytest.mark.parametrize("value", [4, 6])
def test_without_a_move_a_4_or_6_is_thrown_again(value: int) -> None:
    state = State.new(7)
    state.throw(Throw.of_value(value))
    assert state.legal_moves() == [] and state.can_throw and not state.must_pass
    assert_refused(state, state.pass_turn, "You already rolled the dice but can roll it again")
    state.throw(Throw.of_value(1))
    assert (state.turn, state.dice) == (BLUE, Throw.of_value(1))


def test_passing_needs_a_throw() -> None:
    state = State.new(7)
    assert state.can_throw and not state.must_pass and state.legal_moves() == []
    assert_refused(state, state.pass_turn, "You must roll the dice first")


def test_a_throw_or_a_pass_starts_a_new_play() -> None:
    state = State.new(7)
    state.throw(Throw.of_value(1))
    state.select(6)
    assert (state.cell, state.selected) == (6, [6, 7])
    state.throw(Throw.of_value(2))
    assert (state.cell, state.selected) == (None, None)
    state.select(7)
    assert (state.turn, state.cell, state.selected) == (RED, 7, [7, 9])
    state.throw(Throw.of_value(2))
    assert state.must_pass
    state.pass_turn()
    assert (state.turn, state.cell, state.selected) == (BLUE, None, None)


def test_apply_refuses_a_move_that_is_not_legal() -> None:
    state = fork_position()
    for move in (Move(20, 22, False), Move(20, 21, True), Move(27, 26, False), Move(3, 4, False)):
        assert_refused(state, functools.partial(state.apply, move), "Invalid move")
    state.dice = None
    assert_refused(state, lambda: state.apply(Move(20, 21, False)), "Invalid move")


# Turns and the end of the game


@pytest.mark.parametrize(("value", "next_turn"), [(1, BLUE), (2, RED), (3, RED), (4, BLUE), (6, BLUE)])
def test_after_a_move_1_4_and_6_play_again(value: int, next_turn: str) -> None:
    state = position(
        """
        . . . . . . r
        . . . . . . .
        . . . . . B .
        . . . . . . .
        """,
        throw=value,
    )
    [move] = state.legal_moves()
    state.apply(move)
    assert (state.turn, state.dice, state.winner) == (next_turn, None, None)


@pytest.mark.parametrize("value", VALUES)
def test_capturing_the_last_piece_wins_and_ends_the_game(value: int) -> None:
    state = position(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . B
        . . . . . . .
        """,
        throw=value,
    )
    state.pieces[7 + value] = Piece(RED, in_motion=True)
    assert state.outcome() is None
    assert state.select(7) == Move(7, 7 + value, captures=True)
    assert (state.winner, state.outcome(), state.turn, state.dice) == (BLUE, BLUE, BLUE, None)
    assert not state.can_throw and not state.must_pass and state.legal_moves() == []
    assert_refused(state, lambda: state.throw(Throw.of_value(1)), "The game is over")
    assert_refused(state, state.pass_turn, "The game is over")
    assert_refused(state, lambda: state.select(7 + value), "The game is over")
    assert_refused(state, lambda: state.select(-1), "The game is over")


def test_red_wins_by_capturing_blues_last_piece_at_the_fork() -> None:
    state = position(
        """
        . . . . . . .
        . . . . . . .
        R . . . . . .
        . b . . . . .
        """,
        turn=RED,
        throw=2,
    )
    assert state.select(13) is None
    assert state.selected == [1, 15]
    state.select(1)
    assert state.outcome() == RED


# The sticks


@pytest.mark.parametrize("sticks", list(itertools.product((False, True), repeat=4)))
def test_every_throw_of_the_sticks(sticks: tuple[bool, bool, bool, bool]) -> None:
    throw = Throw(sticks)
    value, keep_playing = {0: (6, True), 1: (1, True), 2: (2, False), 3: (3, False), 4: (4, True)}[sum(sticks)]
    assert (throw.value, throw.keep_playing) == (value, keep_playing)
    assert throw.to_json() == {"stickValues": list(sticks), "value": throw.value, "keepPlaying": throw.keep_playing}
    assert Throw.from_json(json.loads(json.dumps(throw.to_json()))) == throw
    # Each of the sixteen throws is made once and shared, however it comes: read back, of its value, thrown.
    shared = Throw.of_sticks(sticks)
    assert Throw.from_json(throw.to_json()) is shared
    assert Throw.of_bits(sum(1 << index for index, light in enumerate(sticks) if light)) is shared
    assert Throw.of_value(throw.value).value == throw.value and Throw.of_value(throw.value) is Throw.of_value(value)


def test_the_probabilities_are_those_of_four_fair_sticks() -> None:
    patterns = Counter(Throw((a, b, c, d)).value for a, b, c, d in itertools.product((False, True), repeat=4))
    assert {value: Fraction(times, 16) for value, times in patterns.items()} == dict(THROW_PROBABILITIES)
    assert sum(THROW_PROBABILITIES.values()) == 1
    assert THROW_PROBABILITIES[2] == Fraction(3, 8)


@pytest.mark.parametrize("value", VALUES)
def test_of_value(value: int) -> None:
    assert Throw.of_value(value).value == value


@pytest.mark.parametrize("value", [0, 5, 7, -1])
def test_of_value_refuses_impossible_values(value: int) -> None:
    with pytest.raises(ValueError):
        Throw.of_value(value)


def test_random_throws_show_every_value_at_about_its_probability() -> None:
    rng = random.Random(20240611)
    values = Counter(Throw.random(rng).value for _ in range(16000))
    for value, probability in THROW_PROBABILITIES.items():
        assert abs(values[value] / 16000 - probability) < 0.015
    assert Throw.random().value in VALUES
    assert len({id(Throw.random(rng)) for _ in range(1000)}) == 16  # the sixteen shared throws, no new one


# JSON


def test_the_json_of_a_new_game() -> None:
    data = State.new(7).to_json()
    assert data == {
        "size": 7,
        "pieces": [{"color": "Blue", "inMotion": False, "reachedLastRow": False}] * 7
        + [None] * 14
        + [{"color": "Red", "inMotion": False, "reachedLastRow": False}] * 7,
        "turn": "Blue",
        "dice": None,
        "step": "from",
        "cell": None,
        "selected": None,
        "winner": None,
    }
    assert State.from_json(json.loads(json.dumps(data))) == State.new(7)


def test_the_json_round_trip_at_the_fork() -> None:
    state = fork_position()
    state.select(20)
    data = state.to_json()
    assert (data["step"], data["cell"], data["selected"]) == ("to", 20, [21, 7])
    assert data["dice"] == {"stickValues": [True, False, False, False], "value": 1, "keepPlaying": True}
    assert State.from_json(json.loads(json.dumps(data))) == state


def test_from_json_refuses_a_board_of_the_wrong_length() -> None:
    data = State.new(7).to_json()
    data["pieces"].append(None)
    with pytest.raises(ValueError):
        State.from_json(data)


@pytest.mark.parametrize("color", COLORS)
@pytest.mark.parametrize("in_motion", [False, True])
@pytest.mark.parametrize("reached_last_row", [False, True])
def test_pieces_rebuilt_from_json_are_the_same_values_shared(color, in_motion, reached_last_row) -> None:
    piece = Piece(color, in_motion, reached_last_row)
    rebuilt = Piece.from_json(json.loads(json.dumps(piece.to_json())))
    assert rebuilt == piece and rebuilt is Piece.from_json(piece.to_json())
    with pytest.raises(ValueError):
        Piece.from_json({**piece.to_json(), "color": "green"})
    with pytest.raises(ValueError):
        Piece.from_json({**piece.to_json(), "color": ["unhashable"]})


def test_a_board_decoded_shares_its_pieces_and_checks_what_is_not_one() -> None:
    state = fork_position()
    decoded = State.from_json(json.loads(json.dumps(state.to_json())))
    assert decoded == state
    assert all(piece is None or piece is Piece.from_json(piece.to_json()) for piece in decoded.pieces)
    # Values that are not a piece's JSON as written are read as Piece.from_json reads them, or refused as it refuses.
    data = state.to_json()
    first = next(index for index, piece in enumerate(data["pieces"]) if piece is not None)
    data["pieces"][first] = {**data["pieces"][first], "inMotion": 1, "reachedLastRow": []}
    loose = State.from_json(data).pieces[first]
    assert (loose.in_motion, loose.reached_last_row) == (True, False)
    for wrong in ({**data["pieces"][first], "color": "green"}, {"color": state.turn}, ["blue", True, False], "blue"):
        data["pieces"][first] = wrong
        with pytest.raises((ValueError, KeyError, TypeError)):
            State.from_json(data)


def test_copy_is_independent() -> None:
    state = fork_position()
    state.select(20)
    twin = state.copy()
    assert twin == state
    twin.select(7)
    assert twin != state and state.step == "to" and state.pieces[20] == Piece(BLUE, in_motion=True)


# A second, naive move generator written from the spec's words, to cross-check legal_moves


@functools.cache
def reference_paths(size: int, color: str) -> tuple[int, ...]:
    """Return the cells of `color`'s path in order: Blue's snake, or the same picture turned by 180° for Red."""
    blue = [
        cell_at(row, column if row % 2 == 0 else size - 1 - column, size) for row in range(4) for column in range(size)
    ]
    if color == BLUE:
        return tuple(blue)
    return tuple(cell_at(3 - visual(cell, size)[0], size - 1 - visual(cell, size)[1], size) for cell in blue)


def reference_moves(state: State) -> list[Move]:
    """Return the legal moves of the player on turn, by a plain reading of the rules."""
    if state.dice is None or state.winner is not None:
        return []
    n, color, value = state.size, state.turn, state.dice.value
    path = reference_paths(n, color)
    index = {cell: position for position, cell in enumerate(path)}
    mine = {cell for cell, piece in enumerate(state.pieces) if piece is not None and piece.color == color}
    home_occupied = any(index[cell] < n for cell in mine)
    moves = []
    for cell in sorted(mine):
        piece = state.pieces[cell]
        assert piece is not None
        if not piece.in_motion and value != 1:
            continue
        if index[cell] >= 3 * n and home_occupied:
            continue
        walks = [(index[cell], piece.reached_last_row)]
        for _ in range(value):
            next_walks = []
            for at, reached in walks:
                if at == 3 * n - 1 and not reached:
                    next_walks += [(3 * n, True), (n, reached)]
                elif at == 3 * n - 1:
                    next_walks.append((n, reached))
                elif at == 4 * n - 1:
                    next_walks.append((2 * n, reached))
                else:
                    next_walks.append((at + 1, reached))
            walks = next_walks
        for at, _ in walks:
            target = path[at]
            if target not in mine:
                moves.append(Move(cell, target, state.pieces[target] is not None))
    return moves


# Random playouts


def check_invariants(state: State) -> None:
    """Check what holds in every state that play can reach."""
    n = state.size
    assert len(state.pieces) == 4 * n
    assert state.turn in COLORS and state.step in ("from", "to")
    counts = Counter(piece.color for piece in state.pieces if piece is not None)
    assert counts.keys() <= set(COLORS) and max(counts.values()) <= n
    for cell, piece in enumerate(state.pieces):
        if piece is None:
            continue
        row = own_path_position(cell, piece.color, n) // n
        assert piece.in_motion or row == 0, (cell, piece)
        assert not piece.reached_last_row or piece.in_motion, (cell, piece)
        assert row != 3 or piece.reached_last_row, (cell, piece)
    if state.winner is not None:
        assert counts[opponent(state.winner)] == 0 and counts[state.winner] > 0
        assert state.dice is None and state.step == "from" and state.turn == state.winner
        assert not state.can_throw and not state.must_pass and state.legal_moves() == []
        return
    assert counts[BLUE] > 0 and counts[RED] > 0
    moves = state.legal_moves()
    assert moves == reference_moves(state)
    for move in moves:
        assert state.destinations(move.origin, state.dice.value if state.dice else 0).count(move.destination) == 1
    if state.dice is None:
        assert state.step == "from" and state.can_throw and not state.must_pass
    elif moves:
        assert not state.can_throw and not state.must_pass
    else:
        assert state.can_throw == state.dice.keep_playing != state.must_pass
    if state.step == "to":
        assert state.dice is not None and state.cell is not None and state.selected is not None
        origin = state.pieces[state.cell]
        assert origin is not None and origin.color == state.turn
        assert len(state.selected) == 2 and state.selected == state.destinations(state.cell, state.dice.value)


def check_transition(before: State, after: State, made: Move | None) -> None:
    """Check what one action may change: a move changes two cells, anything else no cell."""
    mover = before.turn
    if made is None:
        assert after.pieces == before.pieces
        assert after.turn == before.turn or (after.turn == opponent(before.turn) and after.dice is None)
        return
    n = before.size
    piece, landed = before.pieces[made.origin], after.pieces[made.destination]
    assert piece is not None and piece.color == mover and landed is not None
    assert made in before.legal_moves()
    assert [cell for cell in range(4 * n) if after.pieces[cell] != before.pieces[cell]] == sorted(
        (made.origin, made.destination)
    )
    assert after.pieces[made.origin] is None
    assert landed == Piece(
        mover, True, piece.reached_last_row or own_path_position(made.destination, mover, n) >= 3 * n
    )
    origin_row = own_path_position(made.origin, mover, n) // n
    assert origin_row == 0 or own_path_position(made.destination, mover, n) >= n
    captured = before.pieces[made.destination]
    assert made.captures == (captured is not None) and (captured is None or captured.color != mover)
    assert before.dice is not None
    assert (after.dice, after.step, after.cell, after.selected) == (
        None,
        "from",
        made.origin,
        [made.origin, made.destination],
    )
    expected_turn = mover if before.dice.keep_playing or after.winner else opponent(mover)
    assert after.turn == expected_turn


def play_one_action(state: State, rng: random.Random) -> Move | None:
    """Take one action for the player on turn, chosen at random among the legal ones, through the public interface."""
    if state.can_throw:
        state.throw(Throw.random(rng))
        return None
    if state.must_pass:
        state.pass_turn()
        return None
    if state.step == "to":
        assert state.selected is not None and state.cell is not None
        return state.select(rng.choice([*state.selected, state.cell]))
    move = rng.choice(state.legal_moves())
    if rng.random() < 0.5:
        state.apply(move)
        return move
    return state.select(move.origin)


def play(state: State, rng: random.Random, actions: int, check: bool = True) -> int:
    """Play up to `actions` random actions or to the end of the game; return how many were played."""
    for played in range(actions):
        if state.winner is not None:
            return played
        before = state.copy()
        made = play_one_action(state, rng)
        if check:
            check_transition(before, state, made)
            check_invariants(state)
    return actions


# The longest of a thousand unchecked random games of size 15 took under 2,500 actions.
ACTION_CAP = 50_000
# For random.Random(size) and this file's way of choosing actions: games played, games Blue won, actions in all.
# They must stay stable, so that any change to the rules or to their move order shows here; update them only
# for an intended change.
PLAYOUTS = {
    7: (60, 23, 17_203),
    9: (50, 28, 21_112),
    11: (40, 17, 23_367),
    13: (35, 18, 27_757),
    15: (30, 7, 29_637),
}


@pytest.mark.parametrize("size", SIZES)
def test_random_playouts_keep_the_invariants_and_always_end(size: int) -> None:
    games, _, _ = PLAYOUTS[size]
    rng = random.Random(size)
    lengths, blue_wins = [], 0
    for _ in range(games):
        state = State.new(size)
        check_invariants(state)
        played = play(state, rng, ACTION_CAP)
        assert state.winner is not None, f"no winner after {played} actions:\n{drawing(state)}"
        assert State.from_json(json.loads(json.dumps(state.to_json()))) == state
        lengths.append(played)
        blue_wins += state.winner == BLUE
    assert (games, blue_wins, sum(lengths)) == PLAYOUTS[size]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), actions=st.integers(0, 600), size=st.sampled_from(SIZES))
def test_states_reached_by_play_survive_a_json_round_trip(seed: int, actions: int, size: int) -> None:
    state = State.new(size)
    play(state, random.Random(seed), actions, check=False)
    assert State.from_json(json.loads(json.dumps(state.to_json()))) == state
    assert state.copy() == state


def probes(size: int) -> Iterable[tuple[str, object]]:
    yield from (("throw", value) for value in VALUES)
    yield ("pass", None)
    yield from (("select", cell) for cell in range(-1, 4 * size + 1))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), actions=st.integers(0, 400), size=st.sampled_from(SIZES), data=st.data())
def test_any_action_either_succeeds_or_changes_nothing(seed: int, actions: int, size: int, data: st.DataObject) -> None:
    state = State.new(size)
    play(state, random.Random(seed), actions, check=False)
    kind, argument = data.draw(st.sampled_from(list(probes(size))))
    before = state.copy()
    try:
        if kind == "throw":
            assert isinstance(argument, int)
            state.throw(Throw.of_value(argument))
            made = None
        elif kind == "pass":
            state.pass_turn()
            made = None
        else:
            assert isinstance(argument, int)
            made = state.select(argument)
    except IllegalMove:
        assert state == before
        return
    check_transition(before, state, made)
    check_invariants(state)


def test_a_cell_is_named_by_its_row_and_column_as_the_board_is_drawn():
    # Seven columns: the first row runs left to right from the initial player's side, the second back, and so on.
    assert cell_name(0, 7) == "row 1, column 1"
    assert cell_name(6, 7) == "row 1, column 7"
    assert cell_name(7, 7) == "row 2, column 7"
    assert cell_name(13, 7) == "row 2, column 1"
    assert cell_name(14, 7) == "row 3, column 1"
    assert cell_name(27, 7) == "row 4, column 1"
