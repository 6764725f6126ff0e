"""Hey, That's My Fish!'s rules (games/rules/fish.py): the zig-zag coordinates, straight lines and what blocks them, the
faults in the protocol's order, turns and skips, scoring, removals, the end and its winners, the boards a seed makes,
the example session of the protocol's page, properties of random games with hypothesis, and the engine's interface."""

import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules import IllegalAction, Outcome, Played, find_engine
from games.rules.fish import (
    DIRECTIONS,
    ENGINE,
    LINES,
    MOVEMENT,
    OVER,
    PLACEMENT,
    BadTile,
    IllegalMove,
    Move,
    Place,
    Remove,
    State,
    board_from_seed,
    line,
    neighbour,
    on_board,
)

RED, WHITE, BROWN, BLACK = range(4)

# The board of the protocol page's example session, and its placements: red, white, red, white, …
EXAMPLE_BOARD = "3241 1513 5150 1144 1210 4151 2515 5412 1520 0251"
EXAMPLE_PLACEMENTS = [(0, 1), (4, 2), (2, 1), (7, 3), (9, 1), (5, 0), (3, 3), (8, 2)]
FLAT = "1111 " * 10
# Ten tiles none of which is next to another: no penguin on them can ever move.
ISOLATED = "1010 0000 0101 0000 1010 0000 0101 0000 1010 0000"
# Four such tiles above a row of holes, and an open field below it.
ISLANDS_AND_FIELD = "1010 0000 0101 0000 0000 1111 1111 1111 1111 1111"


def board(text: str) -> list[list[int]]:
    """Return a board written row by row, one digit a tile (0: a hole), rows separated by spaces."""
    rows = [[int(fish) for fish in row] for row in text.split()]
    assert len(rows) == 10 and all(len(row) == 4 for row in rows)
    return rows


def position(
    text: str,
    *penguins: list[tuple[int, int]],
    turn: int | None = RED,
    phase: str = MOVEMENT,
    scores: list[int] | None = None,
    removed: tuple[int, ...] = (),
) -> State:
    """Return a position on the board `text` with each seat's penguins (seat 0 first), checked as a stored one is."""
    seats = len(penguins)
    state = State(
        board(text),
        [list(places) for places in penguins],
        scores or [0] * seats,
        [seat in removed for seat in range(seats)],
        phase,
        turn,
    )
    return State.from_json(state.to_json())


def ends(moves: list[Move]) -> list[tuple[int, int]]:
    return [move.end for move in moves]


def refused(state: State, seat: int, action: Place | Move, error: type[IllegalAction], message: str) -> None:
    """Check that the rules refuse `seat`'s `action` with exactly this error and message, changing nothing."""
    before = state.to_json()
    with pytest.raises(IllegalAction) as caught:
        ENGINE.apply(state, seat, action, random.Random(0))
    assert (type(caught.value), str(caught.value)) == (error, message)
    assert state.to_json() == before


def play(state: State, *actions: tuple[int, Place | Move]) -> State:
    for seat, action in actions:
        ENGINE.apply(state, seat, action, random.Random(0))
    return state


# --- The board -----------------------------------------------------------------------------------------------------


def test_the_neighbours_of_the_pages_picture():
    assert neighbour(0, 0, "southeast") == (1, 0) and neighbour(0, 0, "south") == (2, 0)
    assert [neighbour(1, 0, direction) for direction in ("northwest", "northeast", "southwest", "southeast")] == [
        (0, 0),
        (0, 1),
        (2, 0),
        (2, 1),
    ]


@pytest.mark.parametrize(
    ("tile", "expected"),
    [
        # An even row: the odd rows' tiles beside it have the same column number up-right and down-right.
        ((4, 1), [(2, 1), (3, 1), (5, 1), (6, 1), (5, 0), (3, 0)]),
        # An odd row sits half a step to the right.
        ((5, 1), [(3, 1), (4, 2), (6, 2), (7, 1), (6, 1), (4, 1)]),
    ],
)
def test_the_six_directions_on_even_and_odd_rows(tile, expected):
    assert DIRECTIONS == ("north", "northeast", "southeast", "south", "southwest", "northwest")
    assert [neighbour(*tile, direction) for direction in DIRECTIONS] == expected


def test_each_direction_leads_back_by_its_opposite():
    opposite = dict(zip(DIRECTIONS, DIRECTIONS[3:] + DIRECTIONS[:3], strict=True))
    for row in range(10):
        for col in range(4):
            for direction in DIRECTIONS:
                assert neighbour(*neighbour(row, col, direction), opposite[direction]) == (row, col)


def test_straight_lines_up_to_the_edges():
    # The page's examples: the southeast line from (0, 1) begins (1, 1), (2, 2), (3, 2), (4, 3), …
    assert list(line(0, 1, "southeast")) == [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3)]
    assert list(line(9, 2, "north")) == [(7, 2), (5, 2), (3, 2), (1, 2)]
    assert list(line(4, 1, "northeast")) == [(3, 1), (2, 2), (1, 2), (0, 3)]
    assert list(line(0, 0, "southeast")) == [(1, 0), (2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (7, 3)]
    assert list(line(9, 3, "northwest")) == [(8, 3), (7, 2), (6, 2), (5, 1), (4, 1), (3, 0), (2, 0)]
    assert list(line(3, 0, "southwest")) == [(4, 0)] and list(line(4, 0, "southwest")) == []
    # Corners and sides.
    assert [list(line(0, 0, direction)) for direction in ("north", "northeast", "southwest", "northwest")] == [[]] * 4
    assert [list(line(9, 3, direction)) for direction in ("northeast", "southeast", "south", "southwest")] == [[]] * 4
    assert list(line(1, 3, "northeast")) == [] and list(line(8, 0, "south")) == []
    assert all(on_board(*tile) for lines in LINES.values() for tiles in lines for tile in tiles)


def test_moves_on_an_open_board_follow_the_lines_in_the_courses_order():
    state = position(FLAT, [], [], phase=PLACEMENT)
    assert ends(state.moves_from(4, 1)) == [tile for tiles in LINES[4, 1] for tile in tiles]
    assert ends(state.moves_from(0, 0)) == [
        *[(1, 0), (2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (7, 3)],  # southeast
        *[(2, 0), (4, 0), (6, 0), (8, 0)],  # south
    ]
    assert all(move.start == (0, 0) for move in state.moves_from(0, 0))


def test_holes_and_penguins_block_a_line_and_the_tile_itself_does_not():
    # A hole on (2, 2) and white's penguin on (1, 0) cut the lines from (0, 1), where no penguin stands.
    text = "1111 1111 1101 " + "1111 " * 7
    state = position(text, [(2, 1)], [(1, 0)], turn=RED, phase=PLACEMENT)
    assert ends(state.moves_from(0, 1)) == [(1, 1)]
    # With red's own penguin on (0, 1), the same.
    state = position(text, [(0, 1)], [(1, 0)], turn=WHITE, phase=PLACEMENT)
    assert ends(state.moves_from(0, 1)) == [(1, 1), (2, 1), (4, 1), (6, 1), (8, 1)]
    assert state.moves_of(RED) == state.moves_from(0, 1)


def test_a_seats_moves_go_by_its_penguins_in_placement_order_whoever_is_on_turn():
    state = position(FLAT, [(9, 3), (0, 0)], [(5, 1), (4, 0), (3, 3)], turn=RED, phase=PLACEMENT)
    assert state.moves_of(RED) == state.moves_from(9, 3) + state.moves_from(0, 0)
    assert state.moves_of(WHITE)[:2] == [Move((5, 1), (3, 1)), Move((5, 1), (1, 1))]
    # Moves are listed in the placement phase, but nobody may make one yet.
    assert ENGINE.legal_actions(state, WHITE) == [] and ENGINE.legal_actions(state, RED)[0] == Place(0, 1)


def test_a_tile_off_the_board_or_a_hole_has_no_moves():
    state = position("1111 1110 " + "1111 " * 8, [], [], phase=PLACEMENT)
    for tile, message in (
        ((12, 0), "row 12 is not on the board (rows 0 to 9)"),
        ((-1, 0), "row -1 is not on the board (rows 0 to 9)"),
        ((0, 4), "column 4 is not on the board (columns 0 to 3)"),
        ((1, 3), "(1, 3) is a hole"),
    ):
        with pytest.raises(BadTile) as caught:
            state.moves_from(*tile)
        assert str(caught.value) == message


# --- Faults, in the protocol's order ---------------------------------------------------------------------------------

HOLE_ON_2_3 = "1111 1111 1110 " + "1111 " * 7


def test_placement_faults_in_order():
    state = position(HOLE_ON_2_3, [(0, 0)], [], turn=WHITE, phase=PLACEMENT)
    # The turn and the phase come before the coordinates.
    refused(state, RED, Place(12, 0), IllegalMove, "it is white's turn, not red's")
    refused(state, WHITE, Move((0, 0), (12, 0)), IllegalMove, "penguins cannot move before every penguin is placed")
    refused(state, WHITE, Place(12, 0), BadTile, "row 12 is not on the board (rows 0 to 9)")
    refused(state, WHITE, Place(0, -1), BadTile, "column -1 is not on the board (columns 0 to 3)")
    refused(state, WHITE, Place(2, 3), BadTile, "(2, 3) is a hole")
    refused(state, WHITE, Place(0, 0), BadTile, "(0, 0) already has a penguin")
    assert state.is_legal_placement(WHITE, 0, 1) and not state.is_legal_placement(WHITE, 2, 3)
    assert not state.is_legal_placement(RED, 0, 1)
    assert (0, 0) not in state.legal_placements(WHITE) and (2, 3) not in state.legal_placements(WHITE)
    assert len(state.legal_placements(WHITE)) == 38 and state.legal_placements(RED) == []


def test_move_faults_in_order():
    state = position(HOLE_ON_2_3, [(0, 0), (4, 1), (4, 3), (9, 0)], [(0, 2), (6, 1), (9, 2), (8, 3)])
    refused(state, WHITE, Move((0, 2), (12, 9)), IllegalMove, "it is red's turn, not white's")
    refused(state, RED, Place(12, 0), IllegalMove, "every penguin is placed: penguins move now")
    refused(state, RED, Move((10, 0), (2, 3)), BadTile, "row 10 is not on the board (rows 0 to 9)")
    refused(state, RED, Move((0, 0), (0, 4)), BadTile, "column 4 is not on the board (columns 0 to 3)")
    # A bad end comes before a start without a penguin.
    refused(state, RED, Move((1, 1), (2, 3)), BadTile, "(2, 3) is a hole")
    refused(state, RED, Move((1, 1), (0, 1)), IllegalMove, "(1, 1) has no red penguin")
    refused(state, RED, Move((0, 2), (1, 1)), IllegalMove, "(0, 2) has no red penguin")
    refused(state, RED, Move((0, 0), (0, 0)), IllegalMove, "a penguin must move at least one tile")
    refused(state, RED, Move((4, 1), (6, 1)), IllegalMove, "(6, 1) already has a penguin")
    refused(state, RED, Move((0, 0), (0, 1)), IllegalMove, "(0, 0) to (0, 1) is not a straight line")
    refused(state, RED, Move((4, 1), (1, 3)), IllegalMove, "(4, 1) to (1, 3) is not a straight line")
    refused(state, RED, Move((4, 1), (8, 1)), IllegalMove, "the way from (4, 1) to (8, 1) crosses a penguin at (6, 1)")
    refused(state, RED, Move((4, 3), (0, 3)), IllegalMove, "the way from (4, 3) to (0, 3) crosses a hole at (2, 3)")
    assert state.is_legal_move(RED, (4, 1), (0, 3)) and not state.is_legal_move(RED, (4, 3), (0, 3))
    assert not state.is_legal_move(WHITE, (0, 2), (1, 2))


def test_a_finished_game_refuses_before_looking_at_anything_else():
    state = position(
        ISOLATED, [(0, 0), (4, 0), (8, 0), (2, 1)], [(0, 2), (4, 2), (8, 2), (2, 3)], turn=None, phase=OVER
    )
    refused(state, RED, Place(12, 0), IllegalMove, "the game is over")
    refused(state, WHITE, Move((0, 2), (1, 1)), IllegalMove, "the game is over")
    with pytest.raises(IllegalMove, match="the game is over"):
        ENGINE.remove(state, RED)


def test_a_removed_seat_and_a_seat_of_no_game_are_refused():
    state = position(FLAT, [(0, 0), (2, 0), (4, 0)], [], [(9, 3), (7, 3), (5, 3)], removed=(WHITE,))
    refused(state, WHITE, Move((0, 0), (12, 0)), IllegalMove, "white was removed from the game")
    refused(state, 3, Move((0, 0), (1, 0)), IllegalMove, "there is no seat 3 in this game of 3")
    with pytest.raises(IllegalMove, match="white was removed from the game already"):
        ENGINE.remove(state, WHITE)


# --- Turns ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_placement_goes_round_in_join_order_then_red_moves_first(players):
    state = ENGINE.new(players, {"seed": 7}, random.Random(0))
    each = 6 - players
    turns = []
    while state.phase == PLACEMENT:
        turns.append(state.turn)
        ENGINE.apply(state, state.turn, ENGINE.legal_actions(state, state.turn)[0], random.Random(0))
    assert turns == list(range(players)) * each
    assert [len(places) for places in state.penguins] == [each] * players
    assert (state.phase, state.turn) == (MOVEMENT, RED)
    assert isinstance(ENGINE.legal_actions(state, RED)[0], Move)


def test_when_placement_ends_the_first_mover_is_the_next_who_can_move():
    # Red's penguins all went to tiles they cannot leave: white moves first.
    state = position(ISLANDS_AND_FIELD, [(0, 0), (0, 2), (2, 1)], [(5, 0), (7, 0), (9, 0)], turn=RED, phase=PLACEMENT)
    play(state, (RED, Place(2, 3)), (WHITE, Place(9, 3)))
    assert (state.phase, state.turn) == (MOVEMENT, WHITE)


def test_a_player_with_no_move_is_skipped():
    # White's penguins are stuck on islands; red and brown have an open field.
    state = position(
        ISLANDS_AND_FIELD,
        [(5, 0), (7, 0), (9, 0)],
        [(0, 0), (0, 2), (2, 1)],
        [(5, 3), (7, 3), (9, 3)],
    )
    assert ENGINE.legal_actions(state, WHITE) == [] and state.moves_of(WHITE) == []
    play(state, (RED, Move((5, 0), (6, 0))))
    assert state.turn == BROWN
    play(state, (BROWN, Move((5, 3), (6, 3))))
    assert state.turn == RED


def test_a_player_whose_opponents_are_stuck_moves_again():
    state = position(ISLANDS_AND_FIELD, [(5, 0), (7, 0), (9, 0), (9, 3)], [(0, 0), (0, 2), (2, 1), (2, 3)])
    play(state, (RED, Move((5, 0), (6, 0))))
    assert state.turn == RED
    play(state, (RED, Move((6, 0), (8, 0))))
    assert (state.turn, state.phase) == (RED, MOVEMENT)


def test_the_tile_left_is_scored_and_becomes_a_hole():
    state = position(EXAMPLE_BOARD, [(0, 1), (2, 1), (9, 1), (3, 3)], [(4, 2), (7, 3), (5, 0), (8, 2)], scores=[3, 0])
    played = ENGINE.apply(state, RED, Move((3, 3), (5, 3)), random.Random(0))
    assert played == Played("move", {"start": {"row": 3, "col": 3}, "end": {"row": 5, "col": 3}, "fish": 4})
    assert state.scores == [7, 0] and state.board[3][3] == 0 and state.penguins[RED][3] == (5, 3)
    with pytest.raises(BadTile, match=r"\(3, 3\) is a hole"):
        state.moves_from(3, 3)


# --- Removals ------------------------------------------------------------------------------------------------------


def test_a_removed_seats_penguins_leave_its_score_stays_and_the_turn_stays_if_it_was_not_its_own():
    state = position(
        FLAT, [(0, 0), (2, 0), (4, 0)], [(0, 3), (2, 3), (4, 3)], [(9, 3), (7, 3), (5, 3)], scores=[3, 99, 2]
    )
    played = ENGINE.remove(state, WHITE)
    assert played == Played("remove", {"places": [{"row": 0, "col": 3}, {"row": 2, "col": 3}, {"row": 4, "col": 3}]})
    assert state.penguins[WHITE] == [] and state.removed == [False, True, False] and state.scores == [3, 99, 2]
    assert state.board[0][3] == 1 and state.is_free(0, 3) and (state.phase, state.turn) == (MOVEMENT, RED)
    assert state.to_json()["removed"] == ["white"]
    assert state.to_json()["players"][WHITE] == {"color": "white", "score": 99, "places": []}
    # The seat on turn removed: the turn passes to the next one still in.
    ENGINE.remove(state, RED)
    assert state.turn == BROWN and state.penguins[RED] == []
    # Brown plays alone to the end, and wins whatever the others had scored.
    while state.turn is not None:
        play(state, (BROWN, ENGINE.legal_actions(state, BROWN)[0]))
    assert state.phase == OVER and state.scores[BROWN] < 99
    assert ENGINE.outcome(state) == Outcome((2, 2, 1), "score") and state.winners() == [BROWN]


def test_removals_in_the_placement_phase():
    state = position(FLAT, [(0, 0)], [], turn=WHITE, phase=PLACEMENT)
    ENGINE.remove(state, WHITE)
    assert (state.phase, state.turn) == (PLACEMENT, RED)
    for col in (1, 2, 3):
        play(state, (RED, Place(0, col)))
    assert (state.phase, state.turn) == (MOVEMENT, RED) and len(state.penguins[RED]) == 4
    # The last seat with penguins to place removed on its turn ends the placement phase.
    state = position(FLAT, [(0, 0), (0, 1), (0, 2), (0, 3)], [(9, 0), (9, 1), (9, 2)], turn=WHITE, phase=PLACEMENT)
    ENGINE.remove(state, WHITE)
    assert (state.phase, state.turn) == (MOVEMENT, RED)
    # And a game where nobody could move would be over at once.
    state = position(ISOLATED, [(0, 0), (0, 2), (2, 1), (2, 3)], [(4, 0), (4, 2), (6, 1)], turn=WHITE, phase=PLACEMENT)
    ENGINE.remove(state, WHITE)
    assert (state.phase, state.turn, state.winners()) == (OVER, None, [RED])


def test_once_every_seat_is_removed_nobody_acts_and_nobody_wins():
    state = ENGINE.new(3, {"seed": 1}, random.Random(0))
    play(state, (RED, ENGINE.legal_actions(state, RED)[0]))
    for seat in (WHITE, RED, BROWN):
        ENGINE.remove(state, seat)
    assert (state.phase, ENGINE.to_act(state), ENGINE.outcome(state), state.winners()) == (OVER, None, None, [])
    assert all(ENGINE.legal_actions(state, seat) == [] for seat in range(3))
    with pytest.raises(IllegalMove, match="the game is over"):
        ENGINE.remove(state, RED)


# --- The end -------------------------------------------------------------------------------------------------------


def test_the_game_is_over_right_after_placement_when_no_penguin_can_move():
    state = position(ISOLATED, [], [], turn=RED, phase=PLACEMENT)
    tiles = [(0, 0), (0, 2), (2, 1), (2, 3), (4, 0), (4, 2), (6, 1), (6, 3)]
    for index, (row, col) in enumerate(tiles):
        assert state.turn == index % 2
        play(state, (index % 2, Place(row, col)))
    assert (state.phase, state.turn) == (OVER, None)
    assert ENGINE.outcome(state) == Outcome((1, 1), "score") and state.winners() == [RED, WHITE]


def test_the_game_ends_when_the_last_penguin_that_could_move_has_moved():
    text = "1010 0000 0101 0000 1010 0000 0101 0000 1010 3000"
    state = position(text, [(0, 0), (0, 2), (2, 1), (8, 0)], [(2, 3), (4, 0), (4, 2), (6, 1)], scores=[4, 6])
    assert ENGINE.legal_actions(state, RED) == [Move((8, 0), (9, 0))]
    play(state, (RED, Move((8, 0), (9, 0))))
    assert (state.phase, state.turn, state.scores) == (OVER, None, [5, 6])
    assert ENGINE.outcome(state) == Outcome((2, 1), "score") and state.winners() == [WHITE]


@pytest.mark.parametrize(
    ("scores", "removed", "ranks"),
    [
        ([7, 9, 9], (), (3, 1, 1)),
        ([9, 9, 9], (), (1, 1, 1)),
        ([7, 9, 12], (BROWN,), (2, 1, 3)),
        ([7, 9, 12], (BROWN, WHITE), (1, 2, 2)),
        ([3, 3, 12], (BROWN,), (1, 1, 3)),
    ],
)
def test_winners_and_ranks(scores, removed, ranks):
    places = [[(0, 0), (0, 2), (2, 1)], [(2, 3), (4, 0), (4, 2)], [(6, 1), (6, 3), (8, 0)]]
    penguins = [[] if seat in removed else tiles for seat, tiles in enumerate(places)]
    state = position(ISOLATED, *penguins, turn=None, phase=OVER, scores=scores, removed=removed)
    assert ENGINE.outcome(state) == Outcome(ranks, "score")
    assert state.winners() == [seat for seat, rank in enumerate(ranks) if rank == 1]


# --- Boards --------------------------------------------------------------------------------------------------------


def test_boards_from_seeds():
    boards = [board_from_seed(seed) for seed in range(300)]
    for each in boards:
        assert len(each) == 10 and all(len(row) == 4 for row in each)
        tiles = [fish for row in each for fish in row]
        assert tiles.count(0) == 4 and all(0 <= fish <= 5 for fish in tiles)
    assert board_from_seed(12345) == board_from_seed(12345) and board_from_seed(2**63 - 1) == board_from_seed(2**63 - 1)
    assert len({json.dumps(each) for each in boards}) == 300
    every = [fish for each in boards for row in each for fish in row]
    # Uniform: each count of fish on about a fifth of the tiles that are not holes.
    assert all(abs(every.count(fish) / (300 * 36) - 0.2) < 0.02 for fish in range(1, 6))
    holes = {(row, col) for each in boards for row in range(10) for col in range(4) if each[row][col] == 0}
    assert len(holes) == 40


# --- The protocol page's example session ---------------------------------------------------------------------------


def test_the_example_session():
    state = ENGINE.new(2, {}, random.Random(0))
    state.board = board(EXAMPLE_BOARD)
    assert not state.is_legal_placement(RED, 2, 3)
    for index, (row, col) in enumerate(EXAMPLE_PLACEMENTS):
        play(state, (index % 2, Place(row, col)))
    assert (state.phase, state.turn) == (MOVEMENT, RED)
    assert [ENGINE.action_to_json(move) for move in state.moves_from(0, 1)] == [
        {"kind": "move", "start": {"row": 0, "col": 1}, "end": {"row": row, "col": col}}
        for row, col in [(1, 1), (2, 2), (3, 2), (1, 0), (2, 0)]
    ]
    play(state, (RED, Move((0, 1), (2, 2))))
    data = state.to_json()
    assert data["players"] == [
        {
            "color": "red",
            "score": 2,
            "places": [{"row": 2, "col": 2}, {"row": 2, "col": 1}, {"row": 9, "col": 1}, {"row": 3, "col": 3}],
        },
        {
            "color": "white",
            "score": 0,
            "places": [{"row": 4, "col": 2}, {"row": 7, "col": 3}, {"row": 5, "col": 0}, {"row": 8, "col": 2}],
        },
    ]
    assert data["board"][0] == [3, 0, 4, 1] and data["board"][1:] == board(EXAMPLE_BOARD)[1:]
    assert not state.is_legal_move(WHITE, (4, 2), (0, 2))
    play(state, (WHITE, Move((7, 3), (5, 3))))
    assert state.scores == [2, 2] and state.board[7] == [5, 4, 1, 0]
    assert state.penguins[WHITE] == [(4, 2), (5, 3), (5, 0), (8, 2)]


# --- Random games --------------------------------------------------------------------------------------------------


def random_game(seed: int, players: int, removal_rate: float):
    """Play a random game with removals at `removal_rate` a step; yield the state after each step."""
    rng = random.Random(seed)
    state = ENGINE.new(players, {}, rng)
    start = state.fish()
    for _ in range(200):
        if state.turn is None:
            return
        if rng.random() < removal_rate:
            ENGINE.remove(state, rng.choice([seat for seat in range(players) if not state.removed[seat]]))
        else:
            play(state, (state.turn, rng.choice(ENGINE.legal_actions(state, state.turn))))
        yield start, state
    raise AssertionError("the game does not end")


@given(st.integers(0, 10**9), st.integers(2, 4), st.sampled_from([0.0, 0.02, 0.1]))
@settings(max_examples=150, deadline=None)
def test_random_games_keep_their_fish_and_penguins_and_always_end(seed, players, removal_rate):
    each = 6 - players
    for start, state in random_game(seed, players, removal_rate):
        assert state.fish() + sum(state.scores) == start
        for seat, places in enumerate(state.penguins):
            if state.removed[seat]:
                assert places == []
            elif state.phase == PLACEMENT:
                assert len(places) <= each
            else:
                assert len(places) == each
        tiles = [tile for places in state.penguins for tile in places]
        assert len(set(tiles)) == len(tiles) and all(state.board[row][col] > 0 for row, col in tiles)
        data = json.loads(json.dumps(state.to_json()))
        assert State.from_json(data) == state and State.from_json(data).to_json() == data
        if state.turn is not None:
            assert ENGINE.legal_actions(state, state.turn)
            assert all(ENGINE.legal_actions(state, seat) == [] for seat in range(players) if seat != state.turn)
    assert state.phase == OVER and state.turn is None
    assert all(not state.can_move(seat) for seat in range(players))
    outcome = ENGINE.outcome(state)
    if all(state.removed):
        assert outcome is None
    else:
        assert outcome is not None and not any(state.removed[seat] for seat in outcome.winners)


def test_random_games_replay_from_their_log():
    for seed in range(10):
        rng = random.Random(seed)
        state = ENGINE.new(2 + seed % 3, {"seed": seed}, rng)
        replayed = ENGINE.new(2 + seed % 3, {"seed": seed}, random.Random(99))
        while (seat := ENGINE.to_act(state)) is not None:
            if rng.random() < 0.03:
                seat = rng.choice([seat for seat in range(state.players) if not state.removed[seat]])
                played = ENGINE.remove(state, seat)
            else:
                played = ENGINE.apply(state, seat, rng.choice(ENGINE.legal_actions(state, seat)), rng)
            logged = json.loads(json.dumps(dict(played.data)))
            ENGINE.apply(replayed, seat, ENGINE.logged_action(Played(played.kind, logged)), rng)
        assert replayed == state


# --- The engine ----------------------------------------------------------------------------------------------------


def test_the_engine_is_registered():
    engine = find_engine("fish")
    assert engine is ENGINE and (engine.title, engine.min_seats, engine.max_seats) == ("Hey, That's My Fish!", 2, 4)
    assert (engine.chance, engine.scored, engine.automatic(engine.new(2, {}, random.Random(0)))) == (False, False, None)
    assert set(engine.action_labels) == {"place", "move", "remove"}


def test_options_and_new():
    # Without a seed, the match gets one of its own (kept in its options, so that a replay deals the same board).
    drawn = [ENGINE.options({})["seed"] for _ in range(3)]
    assert all(0 <= seed < 2**63 for seed in drawn) and len(set(drawn)) == 3
    assert ENGINE.options({"seed": 0}) == {"seed": 0}
    assert ENGINE.options({"seed": 2**63 - 1}) == {"seed": 2**63 - 1}
    for bad in ({"seed": -1}, {"seed": 2**63}, {"seed": True}, {"seed": "5"}, {"seed": 1.0}, {"seed": None}):
        with pytest.raises(ValueError, match="seed"):
            ENGINE.options(bad)
    with pytest.raises(ValueError, match="'size'"):
        ENGINE.options({"size": 9})
    assert ENGINE.variant({"seed": 3}) == ENGINE.variant({}) == "" and ENGINE.variant_label("") == ""
    state = ENGINE.new(3, {"seed": 42}, random.Random(0))
    assert state.board == board_from_seed(42) and state.to_json()["players"][2] == {
        "color": "brown",
        "score": 0,
        "places": [],
    }
    assert (state.phase, state.turn, ENGINE.seats(state)) == (PLACEMENT, RED, 3)
    # Without a seed, the board's seed is drawn from the generator given.
    assert ENGINE.new(2, {}, random.Random(5)).board == ENGINE.new(2, {}, random.Random(5)).board
    assert ENGINE.new(2, {}, random.Random(5)).board != ENGINE.new(2, {}, random.Random(6)).board
    for seats in (1, 5):
        with pytest.raises(ValueError):
            ENGINE.new(seats, {}, random.Random(0))


def test_actions_through_json():
    for action in (Place(3, 1), Move((0, 1), (2, 2)), Remove()):
        assert ENGINE.action_from_json(json.loads(json.dumps(ENGINE.action_to_json(action)))) == action
    assert ENGINE.action_to_json(Move((0, 1), (2, 2))) == {
        "kind": "move",
        "start": {"row": 0, "col": 1},
        "end": {"row": 2, "col": 2},
    }


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"kind": "teleport"},
        {"kind": "place", "row": "1", "col": 2},
        {"kind": "place", "row": True, "col": 2},
        {"kind": "place", "row": 1.0, "col": 2},
        {"kind": "place", "row": 1},
        {"kind": "move", "start": {"row": 1, "col": 2}},
        {"kind": "move", "start": [1, 2], "end": {"row": 1, "col": 2}},
        {"kind": "move", "start": {"row": 1, "col": 2}, "end": {"row": None, "col": 2}},
    ],
)
def test_malformed_actions_are_refused(data):
    with pytest.raises(IllegalAction):
        ENGINE.action_from_json(data)


def test_the_log_entries():
    assert ENGINE.logged_action(Played("place", {"row": 1, "col": 2})) == Place(1, 2)
    move = {"start": {"row": 0, "col": 1}, "end": {"row": 2, "col": 2}, "fish": 2}
    assert ENGINE.logged_action(Played("move", move)) == Move((0, 1), (2, 2))
    assert ENGINE.logged_action(Played("remove", {"places": []})) == Remove()
    for bad in (Played("throw", {}), Played("move", {"start": {"row": 0}})):
        with pytest.raises(IllegalAction):
            ENGINE.logged_action(bad)


def stored(**changes) -> dict:
    data = position(FLAT, [(0, 0)], [], turn=WHITE, phase=PLACEMENT).to_json()
    data.update(changes)
    return data


@pytest.mark.parametrize(
    "data",
    [
        {},
        stored(board=[[1] * 4] * 9),
        stored(board=[[1] * 4] * 9 + [[1] * 5]),
        stored(board=[[1] * 4] * 9 + [[1, 1, 1, 6]]),
        stored(board=[[1] * 4] * 9 + [[1, 1, 1, True]]),
        stored(players=[{"color": "red", "score": 0, "places": []}]),
        stored(players=[{"color": "red", "score": 0, "places": []}, {"color": "blue", "score": 0, "places": []}]),
        stored(players=[{"color": "red", "score": -1, "places": []}, {"color": "white", "score": 0, "places": []}]),
        stored(players=[{"color": "red", "score": 0, "places": [{"row": 10, "col": 0}]}, stored()["players"][1]]),
        stored(players=[{"color": "red", "score": 0, "places": [{"row": 0}]}, stored()["players"][1]]),
        stored(players=[{"color": "red", "score": 0, "places": "0,0"}, stored()["players"][1]]),
        stored(players=[stored()["players"][0], {"color": "white", "score": 0, "places": [{"row": 0, "col": 0}]}]),
        stored(board=[[0, 1, 1, 1]] + [[1] * 4] * 9),
        stored(phase="setup"),
        stored(phase="movement"),
        stored(phase="over"),
        stored(turn="blue"),
        stored(turn="brown"),
        stored(turn=None),
        stored(removed=["white"]),
        stored(removed=["red"]),
        stored(removed=[["white"]]),
        stored(players="red"),
        [],
    ],
)
def test_malformed_states_are_refused(data):
    with pytest.raises(ValueError):
        ENGINE.state_from_json(data)


def test_the_heuristic_favours_the_seat_ahead():
    state = position(EXAMPLE_BOARD, [(0, 1), (2, 1), (9, 1), (3, 3)], [(4, 2), (7, 3), (5, 0), (8, 2)], scores=[30, 0])
    assert 0 < ENGINE.heuristic(state, RED) <= 1 and -1 <= ENGINE.heuristic(state, WHITE) < 0
    ENGINE.remove(state, WHITE)
    assert ENGINE.heuristic(state, WHITE) == -1
    for _, each in random_game(3, 4, 0.0):
        assert all(-1 <= ENGINE.heuristic(each, seat) <= 1 for seat in range(4))


def test_the_stored_vectors_are_what_the_rules_give_now():
    from games.management.commands.rules_vectors import read_vectors
    from games.rules.fish_vectors import generate, render, summary

    vectors = generate()
    # Not an `assert ==`: on a difference, pytest would diff megabytes.
    if read_vectors("fish") != render(vectors):
        pytest.fail("tests/vectors/fish.json.gz is out of date: run `python manage.py rules_vectors fish`")
    counts = summary(vectors)
    assert counts["positions"] >= 2500 and min(counts[f"players {players}"] for players in (2, 3, 4)) >= 500
    assert counts["places"] >= 500 and counts["moves"] >= 1000 and counts["removes"] >= 50
    assert counts["removals of the seat on turn"] >= 20 and counts["same seat again"] >= 100
    assert (
        counts["ends"] >= 100
        and counts["ends right after placement"] >= 1
        and counts["ends with every seat removed"] >= 1
    )
    # Every kind of refusal, with its message (numbers aside).
    kinds = {
        re.sub(r"-?[0-9]+", "N", refusal["message"]) for vector in vectors["positions"] for refusal in vector["refused"]
    }
    assert {
        "row N is not on the board (rows N to N)",
        "column N is not on the board (columns N to N)",
        "(N, N) is a hole",
        "(N, N) already has a penguin",
        "(N, N) has no red penguin",
        "a penguin must move at least one tile",
        "(N, N) to (N, N) is not a straight line",
        "the way from (N, N) to (N, N) crosses a hole at (N, N)",
        "the way from (N, N) to (N, N) crosses a penguin at (N, N)",
        "it is red's turn, not white's",
        "every penguin is placed: penguins move now",
        "penguins cannot move before every penguin is placed",
        "brown was removed from the game",
    } <= kinds
    assert counts["refused: BadTile"] >= 500 and counts["refused: IllegalMove"] >= 500
