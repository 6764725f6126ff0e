"""Whatever a client sends, the Fish server answers as the protocol's page says and changes nothing but what the page
allows (a kick, a timeout), and it never stops serving the other tournaments.

Three layers, each fuzzed with hypothesis:
- the parser alone (`protocol.read`, `Lines`, `fields`, `tournament_name`, `player_count`), against an independent
  reading of the framing and field rules;
- every action through `server.respond` on the test database, against tables in every phase (waiting, placement,
  movement, over): each answer is compared with the one the protocol gives (computed here from the stored game
  with the rules module), and the database with what the answer allows;
- a live server (tests/live.py), fed garbage, over-long lines, half lines and floods of connections while a pair of
  players in another tournament plays on and checks every answer.

Each example of the database layer runs in a savepoint rolled back at its end, so that the tables are built once per
test.
"""

import contextlib
import json
import random
import socket
import struct
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as settings_module
from django.db import DatabaseError, transaction
from django.utils import timezone
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from games.models import Game, GameEvent, Seat
from games.rules.fish import COLOURS, ENGINE, BadTile, IllegalMove, State, board_from_seed
from protocols.fish import server as fish_server
from protocols.fish import services
from protocols.fish.models import Entrant, Tournament
from protocols.fish.protocol import (
    ACTIONS,
    MAX_LINE,
    Fields,
    FishError,
    Lines,
    answer,
    failure,
    fields,
    player_count,
    read,
    tournament_name,
)

from .fish_client import Client, Player

ROWS, COLUMNS = 10, 4
COORDINATES = {
    "check_placement": ("row", "col"),
    "place_penguin": ("row", "col"),
    "get_moves_for_location": ("row", "col"),
    "check_move": ("start_row", "start_col", "end_row", "end_col"),
    "move_penguin": ("start_row", "start_col", "end_row", "end_col"),
}
ACTS = ("place_penguin", "move_penguin")
CHECKS = ("check_placement", "check_move")
# The error types each action may answer, as the protocol's table of errors lists them (Tournament_Error also for
# any request while the database is unreachable, which these tests do not provoke).
ALLOWED_ERRORS = {
    "join_tournament": {"Tournament_Error"},
    "check_placement": {"Incorrect_Token", "Invalid_Coordinate"},
    "check_move": {"Incorrect_Token", "Invalid_Coordinate"},
    "check_turn": {"Incorrect_Token"},
    "get_state": {"Incorrect_Token"},
    "is_game_over": {"Incorrect_Token"},
    "get_moves_for_color": {"Incorrect_Token", "Unknown_Color"},
    "get_moves_for_location": {"Incorrect_Token", "Invalid_Coordinate"},
    "place_penguin": {"Incorrect_Token", "Invalid_Coordinate", "Invalid_Action"},
    "move_penguin": {"Incorrect_Token", "Invalid_Coordinate", "Invalid_Action"},
}
SUCCESS_KEYS = {
    "join_tournament": {"user_token", "color"},
    "check_placement": {"is_valid"},
    "check_move": {"is_valid"},
    "place_penguin": {"result_state"},
    "move_penguin": {"result_state"},
    "check_turn": {"color"},
    "get_state": {"current_state"},
    "get_moves_for_color": {"reachable_locations"},
    "get_moves_for_location": {"reachable_locations"},
    "is_game_over": {"is_game_over", "winners"},
}
HEX = "0123456789abcdef"

FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    # No shrinking: an example is a sequence of requests on a database, and every assertion message shows the
    # request and the answer; the failing example is printed draw by draw.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


# --- JSON as clients may write it -------------------------------------------------------------------------------


class Literal(str):
    """JSON text sent as it is: integers longer than Python reads at once."""


LONG_INTEGERS = tuple(Literal(text) for text in ("1" + "0" * 5000, "-" + "9" * 4301, "4" * 4001, "-" + "1" * 4000))
EDGE_INTEGERS = (
    -1,
    0,
    1,
    2,
    3,
    4,
    5,
    9,
    10,
    11,
    2**31,
    2**63,
    -(2**63) - 1,
    10**63,
    10**64 - 1,
    10**64,
    -(10**63),
    -(10**64) + 1,
    10**100,
)
EDGE_STRINGS = (
    "",
    " ",
    "0",
    "1",
    "3",
    "red",
    "Red",
    "RED",
    " red",
    "white",
    "brown",
    "black",
    "blue",
    "null",
    "\x00",
    "red\x00",
    "é",
    "🐧",
    "\u202e",
    "a" * 64,
    "a" * 65,
    "'; DROP TABLE fish_tournament; --",
)
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(EDGE_INTEGERS),
    st.sampled_from(LONG_INTEGERS),
    # NaN and ±Infinity are not JSON: json.dumps would write them as Python's own tokens (see the test of those).
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 3.0, -1.0, 1e2, 1e400]),  # 1e400 is JSON, read as an infinite float
    st.text(max_size=10),
    st.sampled_from(EDGE_STRINGS),
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=5,
)


def to_json(value: Any, *, ensure_ascii: bool = True) -> str:
    """Write `value` as compact JSON text, Literal values as they are."""
    if isinstance(value, Literal):
        return str(value)
    if isinstance(value, float) and value == float("inf"):
        return "1e400"
    if isinstance(value, dict):
        items = (
            f"{to_json(key, ensure_ascii=ensure_ascii)}:{to_json(item, ensure_ascii=ensure_ascii)}"
            for key, item in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(item, ensure_ascii=ensure_ascii) for item in value) + "]"
    return json.dumps(value, ensure_ascii=ensure_ascii)


# --- An independent reading of the protocol's framing and fields ------------------------------------------------


@dataclass(frozen=True)
class Huge:
    """An integer of 4,000 digits or more (Python reads at most 4,300 at once): never a coordinate nor an id."""

    negative: bool


def _parse_int(text: str) -> int | Huge:
    return Huge(text.startswith("-")) if len(text.lstrip("-")) >= 4000 else int(text)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


BLANK = object()
UNKNOWN = object()


def expected_read(line: bytes) -> Any:
    """What a line is, by the protocol: BLANK (ignored), UNKNOWN (an Unknown_Action error) or the request object."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if all(byte in b" \t\r\x0b\x0c" for byte in line):
        return BLANK
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return UNKNOWN
    try:
        value = json.loads(text, parse_int=_parse_int, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return UNKNOWN
    if not isinstance(value, dict) or not isinstance(value.get("action"), str) or value["action"] not in ACTIONS:
        return UNKNOWN
    return value


def normalized(value: Any) -> Any:
    """The value as `expected_read` reads it: integers of 4,000 digits or more as Huge."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**3999:
        return Huge(value < 0)
    if isinstance(value, dict):
        return {key: normalized(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalized(item) for item in value]
    return value


def is_integer(value: Any) -> bool:
    return isinstance(value, Huge) or (isinstance(value, int) and not isinstance(value, bool))


def expected_name(request: dict) -> str | None:
    """The tournament a join names, or None for a bad tournament_id. An integer is its decimal text, of at most 64
    digits (a minus sign, if any, not counted)."""
    value = request.get("tournament_id")
    if isinstance(value, Huge):
        return None
    if is_integer(value):
        return str(value) if len(str(abs(value))) <= 64 else None
    if isinstance(value, str) and 1 <= len(value) <= 64:
        return value
    return None


def expected_players(request: dict) -> int | None | bool:
    """The number of players a join asks for: None when absent, False when ill-typed or out of range."""
    if "players" not in request:
        return None
    value = request["players"]
    if isinstance(value, Huge) or not is_integer(value) or not 2 <= value <= 4:
        return False
    return value


def reject(name: str) -> None:
    raise AssertionError(f"the server wrote {name}, which is not JSON")


def strict_json(data: bytes) -> Any:
    return json.loads(data, parse_constant=reject)


# --- 1. The parser alone ------------------------------------------------------------------------------------------

VALID_LINES = (
    {"action": "get_state", "user_token": "0" * 64},
    {"action": "join_tournament", "tournament_id": 42, "players": 3, "credit_card": "4111"},
    {"action": "move_penguin", "user_token": "x", "start_row": 0, "start_col": 1, "end_row": 2, "end_col": 2},
    {"action": "get_moves_for_color", "user_token": "x", "color": "red"},
)


def mutated_lines() -> st.SearchStrategy[bytes]:
    texts = [to_json(request).encode() for request in VALID_LINES]
    text = st.sampled_from(texts)
    return st.one_of(
        st.tuples(text, st.integers(0, 200)).map(lambda pair: pair[0][: pair[1]]),  # cut short
        st.tuples(text, st.integers(0, 200), st.binary(min_size=1, max_size=3)).map(
            lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + 1 :]
        ),
        st.tuples(text, st.binary(max_size=8)).map(lambda pair: pair[0] + pair[1]),
        st.tuples(st.binary(max_size=8), text).map(lambda pair: pair[0] + pair[1]),
    )


NASTY_LINES = (
    b"",
    b"   ",
    b"\t \r",
    b"\r",
    b"\x0b\x0c",
    b"\xc2\xa0",  # a no-break space: not JSON's whitespace
    b"\xef\xbb\xbf" + to_json(VALID_LINES[0]).encode(),  # a byte order mark
    to_json(VALID_LINES[0]).encode("utf-16"),
    b'{"action": "get_state", "user_token": "\xed\xa0\x80"}',  # an encoded surrogate: not UTF-8
    b'{"action": "get_state", "user_token": "\xc3\x28"}',
    b'{"action": "get_state"} {"action": "get_state"}',
    b'{"action": "get_state"}\x00',
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 5000,
    b'{"action": ["get_state"]}',
    b'{"action": "get_state ", "user_token": "x"}',
    b'{"action": "GET_STATE"}',
    b'{"Action": "get_state"}',
    b'{"action": null}',
    b'{"action": "join_tournament", "tournament_id": 1' + b"0" * 5000 + b"}",
    b"1" + b"0" * 5000,
    b'"get_state"',
    b"null",
    b"true",
    b"[]",
)


@settings(max_examples=600, deadline=None)
@given(st.one_of(st.binary(max_size=120), mutated_lines(), st.sampled_from(NASTY_LINES)), st.booleans())
def test_the_parser_reads_any_bytes_as_the_protocol_says(line, carriage_return):
    line = line.replace(b"\n", b"")  # a line, as Lines cuts them
    if carriage_return:
        line += b"\r"
    expected = expected_read(line)
    try:
        request = read(line)
    except FishError as error:
        assert error.error_type == "Unknown_Action" and str(error), (line, error)
        assert expected is UNKNOWN, (line, expected, error)
        return
    if expected is BLANK:
        assert request is None, line
    else:
        assert expected is not UNKNOWN, (line, request)
        assert typed(normalized(dict(request))) == typed(expected), line


def typed(value: Any) -> Any:
    """The value with each scalar's type beside it: 2**64 == float(2**64), but a float is no integer here."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


# Every character, lone surrogates and DEL among them, and integers past 64 bits.
any_text = st.text(st.characters(exclude_categories=()), max_size=8) | st.sampled_from(["\x7f", "\ud800", "é", "\x00"])
any_integer = st.integers() | st.integers(2**63 - 3, 2**64 + 3) | st.integers(-(2**64) - 3, -(2**63) + 3)
flat_values = st.none() | st.booleans() | any_integer | any_text


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(any_text, flat_values, max_size=6), st.booleans())
def test_flat_requests_are_read_as_the_standard_library_reads_them(request, ensure_ascii):
    request = {"action": "get_state", **request}
    line = to_json(request, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")
    expected = expected_read(line)
    try:
        read_request = read(line)
    except FishError:
        assert expected is UNKNOWN, line
        return
    assert typed(normalized(dict(read_request))) == typed(expected), line


answer_values = st.recursive(
    flat_values,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(any_text, answer_values, max_size=5))
def test_answers_are_written_as_the_standard_library_writes_them(payload):
    assert answer(payload) == json.dumps(payload, separators=(",", ":")).encode() + b"\n"


requests = st.fixed_dictionaries(
    {"action": st.sampled_from(sorted(ACTIONS))},
    optional={
        name: json_values
        for name in (
            "tournament_id",
            "players",
            "credit_card",
            "user_token",
            "row",
            "col",
            "start_row",
            "start_col",
            "end_row",
            "end_col",
            "color",
        )
    },
)


@settings(max_examples=400, deadline=None)
@given(requests, st.booleans())
def test_the_fields_of_any_request_are_read_or_refused_as_the_protocol_says(request, ensure_ascii):
    line = to_json(request, ensure_ascii=ensure_ascii).encode()
    parsed = read(line)
    expected = expected_read(line)
    assert normalized(dict(parsed)) == expected
    action = expected["action"]
    # join_tournament: the id, then the number of players.
    name = expected_name(expected)
    try:
        got_name = tournament_name(parsed)
    except FishError as error:
        assert error.error_type == "Tournament_Error" and str(error)
        # A negative integer of 64 digits is 65 characters: either reading of the page is allowed.
        assert name is None or (is_integer(expected["tournament_id"]) and len(name) == 65), (request, error)
    else:
        assert got_name == name, request
    players = expected_players(expected)
    try:
        got_players = player_count(parsed)
    except FishError as error:
        assert error.error_type == "Tournament_Error" and players is False, (request, error)
    else:
        assert got_players == players, request
    # The fields of the other actions: the first ill-typed one is kept as the error.
    given_fields = fields(parsed)
    if action == "get_moves_for_color":
        if isinstance(expected.get("color"), str):
            assert given_fields.error is None and given_fields.color == expected["color"]
        else:
            assert given_fields.error is not None and given_fields.error.error_type == "Unknown_Color"
        return
    names = COORDINATES.get(action, ())
    if all(is_integer(expected.get(name)) for name in names):
        assert given_fields.error is None and normalized(list(given_fields.values)) == [expected[n] for n in names]
    else:
        assert given_fields.error is not None and given_fields.error.error_type == "Invalid_Coordinate", request
        assert str(given_fields.error)


LINE_LENGTHS = (0, 1, 5, MAX_LINE - 1, MAX_LINE, MAX_LINE + 1, MAX_LINE + 2, 2 * MAX_LINE + 3)


@st.composite
def streams(draw) -> tuple[bytes, list[int]]:
    """A byte stream of lines (short ones of any bytes, and some about MAX_LINE long), and where to cut it."""
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 3)) == 0:
            length = draw(st.sampled_from(LINE_LENGTHS))
            parts.append(draw(st.sampled_from([b"x", b"{", b"\xff", b" "])) * length)
        else:
            parts.append(draw(st.binary(max_size=30)).replace(b"\n", b""))
    ending = draw(st.sampled_from([b"\n", b"\r\n", b""]))
    stream = b"\n".join(parts) + ending
    cuts = sorted(set(draw(st.lists(st.integers(0, len(stream)), max_size=10))))
    return stream, cuts


def expected_lines(received: bytes) -> tuple[list[bytes], bool]:
    """The lines complete in `received` up to the first over-long one, and whether a line is known to be too long."""
    *complete, rest = received.split(b"\n")
    lines = []
    for line in complete:
        if len(line) > MAX_LINE:
            return lines, True
        lines.append(line)
    return lines, len(rest) > MAX_LINE


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow])
@given(streams())
def test_lines_are_the_same_however_the_bytes_are_cut(case):
    stream, cuts = case
    lines = Lines()
    got: list[bytes] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += lines.feed(stream[start:end])
        expected, too_long = expected_lines(stream[:end])
        assert (got, lines.too_long) == (expected, too_long), (len(stream), cuts, end)
        if too_long:
            return  # the server answers and closes now
    whole = Lines()
    assert whole.feed(stream) == got and whole.too_long == lines.too_long


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_python_only_constants_are_not_json(constant):
    """NaN and Infinity are Python's json extensions, not JSON: a line holding one is malformed JSON."""
    for line in (
        f'{{"action": "get_state", "user_token": "x", "extra": {constant}}}',
        f'{{"action": "join_tournament", "tournament_id": "nan-cup", "credit_card": {constant}}}',
        f'{{"action": "check_placement", "user_token": "x", "row": {constant}, "col": 0}}',
    ):
        with pytest.raises(FishError) as refused:
            read(line.encode())
        assert refused.value.error_type == "Unknown_Action", line


# --- 2. Every action against the database -------------------------------------------------------------------------


@dataclass
class Table:
    """A tournament of the tests: its name, number of players, tokens in seat order and game."""

    name: str
    players: int
    tokens: list[str]
    game_id: int
    seed: int
    # For the tables in play: positions their game may be put in (engine states as JSON), none over.
    positions: list[dict] = field(default_factory=list)


def join(name: str, players: int | None = None) -> str:
    return services.tournament_join(name=name, players=players)[0]


def table_of(name: str, tokens: list[str]) -> Table:
    tournament = Tournament.objects.get(name=name)
    return Table(name, tournament.players, tokens, tournament.game_id, tournament.seed)


def trajectory(board: list[list[int]], players: int, rng: random.Random) -> list[dict]:
    """The positions of one game played at random, with now and then a player removed, up to its end (excluded)."""
    state = State.new(board, players)
    positions = []
    while state.phase != "over":
        positions.append(ENGINE.state_to_json(state))
        seat = state.turn
        if rng.random() < 0.06 and not all(state.removed):
            state.remove(rng.choice([s for s in range(players) if not state.removed[s]]))
        elif state.phase == "placement":
            state.place(seat, *rng.choice(state.legal_placements(seat)))
        else:
            move = rng.choice(state.legal_moves(seat))
            state.move(seat, move.start, move.end)
    return positions


MISSING = Fields(error=FishError("Invalid_Coordinate", "row is missing"))


def play_out(tokens: list[str], refuse: frozenset[int] = frozenset()) -> None:
    """Play the game of `tokens` to its end with the first legal action; the seats in `refuse` err at their first
    turn (and are removed)."""
    for _ in range(300):
        found = None
        for token in tokens:
            try:
                found = services.reading(token)
                break
            except FishError:
                continue
        seat = None if found is None else found.turn()
        if seat is None:
            return
        state = found.state
        if seat in refuse:
            assert isinstance(services.penguin_act(token=tokens[seat], kind="place", fields=MISSING), FishError)
            refuse = refuse - {seat}
            continue
        if state.phase == "placement":
            kind, values = "place", state.legal_placements(seat)[0]
        else:
            move = state.legal_moves(seat)[0]
            kind, values = "move", (*move.start, *move.end)
        result = services.penguin_act(token=tokens[seat], kind=kind, fields=Fields(values=tuple(values)))
        assert not isinstance(result, FishError), result
    pytest.fail("the game did not end")


@dataclass
class World:
    """The tables and who each token is."""

    tables: dict[str, Table]
    owners: dict[str, tuple[str, int]]
    running: list[str]  # the tables in play, put in one of their positions by each example


@pytest.fixture
def world(db) -> World:
    rng = random.Random(20)
    tables: dict[str, Table] = {}
    # Waiting for players.
    tables["fz-wait"] = table_of("fz-wait", [join("fz-wait", 3), join("fz-wait")])
    tables["4242"] = table_of("4242", [join("4242", 2)])
    # In play: put in one of their positions by each example.
    for players in (2, 3, 4):
        name = f"fz-play{players}"
        tokens = [join(name, players)] + [join(name) for _ in range(players - 1)]
        table = table_of(name, tokens)
        table.positions = trajectory(board_from_seed(table.seed), players, rng)
        table.positions += trajectory(board_from_seed(table.seed), players, rng)
        tables[name] = table
    # Over: played to the end; one with a player removed; one with every player removed.
    over = [join("fz-over", 2), join("fz-over")]
    play_out(over)
    tables["fz-over"] = table_of("fz-over", over)
    over3 = [join("fz-over3", 3), join("fz-over3"), join("fz-over3")]
    play_out(over3, refuse=frozenset({1}))
    tables["fz-over3"] = table_of("fz-over3", over3)
    gone = [join("fz-gone", 2), join("fz-gone")]
    for seat in (1, 0):
        assert isinstance(services.penguin_act(token=gone[seat], kind="place", fields=MISSING), FishError)
    tables["fz-gone"] = table_of("fz-gone", gone)
    assert Game.objects.filter(pk=tables["fz-gone"].game_id, status=Game.Status.FINISHED).exists()
    owners = {token: (table.name, seat) for table in tables.values() for seat, token in enumerate(table.tokens)}
    return World(tables, owners, [name for name, table in tables.items() if table.positions])


def snapshot() -> dict[str, Any]:
    """Everything a request may write: tournaments, entrants, games, their seats and their logs."""
    return {
        "tournaments": list(Tournament.objects.order_by("pk").values_list("pk", "name", "players", "seed", "game_id")),
        "entrants": list(Entrant.objects.order_by("pk").values_list("pk", "tournament_id", "seat", "token")),
        "games": {
            row[0]: row[1:]
            for row in Game.objects.order_by("pk").values_list(
                "pk", "status", "state", "version", "deadline", "winner_id", "ending"
            )
        },
        "events": list(GameEvent.objects.order_by("pk").values_list("pk", "game_id", "kind")),
        "seats": list(Seat.objects.order_by("pk").values_list("pk", "game_id", "index", "user_id", "rank")),
    }


@dataclass
class View:
    """What the database says of a table now."""

    table: Table
    status: str
    state: State | None  # None until the game starts
    joined: int
    overdue: bool  # the turn's time is up (and no sweeper has come yet)

    @property
    def running(self) -> bool:
        return self.status == Game.Status.PLAYING and self.state is not None

    def board(self) -> list[list[int]]:
        return self.state.board if self.state is not None else board_from_seed(self.table.seed)


def view(table: Table) -> View:
    game = Game.objects.get(pk=table.game_id)
    state = ENGINE.state_from_json(game.state) if game.state else None
    joined = Entrant.objects.filter(tournament__name=table.name).count()
    overdue = game.deadline is not None and game.deadline <= timezone.now()
    return View(table, game.status, state, joined, overdue)


@dataclass
class Expected:
    """The protocol's answer to a request: an error type, or the success payload, and what it may change."""

    error: str | None = None
    payload: Any = None
    # A placement or move accepted, a kick or a timeout: the table's state after it, and whether the turn's clock
    # starts again (a new turn) or stays as it was.
    change: tuple[str, State] | None = None
    restart: bool = False
    join: tuple[str, int | None] | None = None  # an accepted join: the tournament, and its players if it is new
    either: bool = False  # a join whose id's reading the page leaves open: refused or accepted


def moves_json(moves) -> list[dict]:
    return [{"start": {"row": m.start[0], "col": m.start[1]}, "end": {"row": m.end[0], "col": m.end[1]}} for m in moves]


def state_payload(state: State) -> dict:
    full = state.to_json()
    return {"players": full["players"], "board": full["board"]}


def expect(request: Any, world: World, owners: dict[str, tuple[str, int]]) -> Expected:
    """The answer the protocol gives to `request` (as `expected_read` read it) on the database as it is now."""
    if request is UNKNOWN:
        return Expected(error="Unknown_Action")
    action = request["action"]
    if action == "join_tournament":
        return expect_join(request)
    token = request.get("user_token")
    if not isinstance(token, str) or token not in owners:
        return Expected(error="Incorrect_Token")
    name, seat = owners[token]
    now = view(world.tables[name])
    state = now.state
    if state is not None and state.removed[seat]:
        return Expected(error="Incorrect_Token")
    if action in ACTS:
        return expect_act(request, name, seat, now)
    state, running, timed_out, refusal = turn_timed_out(name, seat, now)
    if refusal is not None:
        return refusal
    finished = now.status == Game.Status.FINISHED or (timed_out is not None and not running)

    def reading(**answer: Any) -> Expected:
        return Expected(**answer, change=timed_out, restart=timed_out is not None)

    if not all(is_integer(request.get(n)) for n in COORDINATES.get(action, ())):
        return reading(error="Invalid_Coordinate")
    values = coordinates(request)
    if action == "get_moves_for_color" and not isinstance(request.get("color"), str):
        return reading(error="Unknown_Color")
    on_turn = running and state.turn == seat
    match action:
        case "check_placement":
            valid = on_turn and state.is_legal_placement(seat, *values)
            return reading(payload={"is_valid": valid})
        case "check_move":
            tiles = (values[0], values[1]), (values[2], values[3])
            valid = on_turn and state.is_legal_move(seat, *tiles)
            return reading(payload={"is_valid": valid})
        case "check_turn":
            return reading(payload={"color": COLOURS[state.turn] if running else None})
        case "get_state":
            if state is None:
                players = [{"color": COLOURS[s], "score": 0, "places": []} for s in range(now.joined)]
                return reading(payload={"current_state": {"players": players, "board": now.board()}})
            return reading(payload={"current_state": state_payload(state)})
        case "is_game_over":
            if not finished:
                return reading(payload={"is_game_over": False, "winners": []})
            return reading(payload={"is_game_over": True, "winners": [COLOURS[s] for s in state.winners()]})
        case "get_moves_for_color":
            color = request["color"]
            if color not in COLOURS[: now.table.players]:
                return reading(error="Unknown_Color")
            colour_seat = COLOURS.index(color)
            if state is None or state.removed[colour_seat]:
                return reading(payload={"reachable_locations": []})
            return reading(payload={"reachable_locations": moves_json(state.moves_of(colour_seat))})
    # get_moves_for_location
    bare = state if state is not None else State.new(now.board(), now.table.players)
    if not (0 <= values[0] < ROWS and 0 <= values[1] < COLUMNS) or bare.board[values[0]][values[1]] == 0:
        return reading(error="Invalid_Coordinate")
    return reading(payload={"reachable_locations": moves_json(bare.moves_from(*values))})


def turn_timed_out(
    name: str, seat: int, now: View
) -> tuple[State | None, bool, tuple[str, State] | None, Expected | None]:
    """A turn whose time is up ends first, for a reading as for an action (its player removed): the position then,
    whether the game still runs, the change the timeout makes (None without one), and the refusal of a request of
    the late player itself (None otherwise)."""
    if not (now.running and now.overdue):
        return now.state, now.running, None, None
    state = now.state.copy()
    late = state.turn
    state.remove(late)
    change = (name, state)
    refusal = Expected(error="Incorrect_Token", change=change, restart=True) if late == seat else None
    return state, state.phase != "over", change, refusal


def coordinates(request: dict) -> list[int]:
    # An integer too long to read is off the board like any other far away.
    return [-1 if isinstance(request[n], Huge) else request[n] for n in COORDINATES.get(request["action"], ())]


def expect_act(request: dict, name: str, seat: int, now: View) -> Expected:
    """place_penguin and move_penguin: a turn whose time is up ends first (its player removed), then the fields'
    types, the phase and the turn, the tiles and the rest of the rules (the rules module's order); while the game
    runs, a refusal removes its sender."""
    state, running, timed_out, refusal = turn_timed_out(name, seat, now)
    if refusal is not None:
        return refusal

    def refused(error: str) -> Expected:
        if not running:
            return Expected(error=error, change=timed_out, restart=True)
        after = state.copy()
        after.remove(seat)
        return Expected(error=error, change=(name, after), restart=timed_out is not None or state.turn == seat)

    if not all(is_integer(request.get(n)) for n in COORDINATES[request["action"]]):
        return refused("Invalid_Coordinate")
    if not running:
        return refused("Invalid_Action")
    values = coordinates(request)
    after = state.copy()
    try:
        if request["action"] == "place_penguin":
            after.place(seat, *values)
        else:
            after.move(seat, (values[0], values[1]), (values[2], values[3]))
    except BadTile:
        return refused("Invalid_Coordinate")
    except IllegalMove:
        return refused("Invalid_Action")
    return Expected(payload={"result_state": state_payload(after)}, change=(name, after), restart=True)


def expect_join(request: dict) -> Expected:
    name = expected_name(request)
    either = is_integer(request.get("tournament_id")) and name is not None and len(name) == 65
    if name is None:
        return Expected(error="Tournament_Error")
    players = expected_players(request)
    if players is False:
        return Expected(error="Tournament_Error")
    tournament = Tournament.objects.filter(name=name).first()
    if tournament is None:
        return Expected(join=(name, players or 2), either=either)
    if Entrant.objects.filter(tournament=tournament).count() >= tournament.players:
        return Expected(error="Tournament_Error")
    return Expected(join=(name, None), either=either)


def ask(line: bytes) -> dict | None:
    """The server's answer to one line, as a connection writes it (None for an ignored line)."""
    try:
        request = read(line)
        if request is None:
            return None
        data = answer(fish_server.respond(request))
    except FishError as error:
        data = failure(error)
    except DatabaseError:
        data = failure(FishError("Tournament_Error", fish_server.UNREACHABLE))
    assert data.endswith(b"\n") and data.count(b"\n") == 1, data[:200]
    reply = strict_json(data)
    assert isinstance(reply, dict), reply
    return reply


def check_answer(line: bytes, reply: dict | None, expected: Expected, request: Any) -> None:
    shown = f"{line[:300]!r} -> {reply!r}"[:1500]
    assert reply is not None, shown
    action = request["action"] if isinstance(request, dict) else None
    if "error_type" in reply:
        assert set(reply) == {"error_type", "error_message"}, shown
        assert isinstance(reply["error_message"], str) and reply["error_message"].strip(), shown
        if action is not None:
            assert reply["error_type"] in ALLOWED_ERRORS[action], shown
        if expected.either:
            assert reply["error_type"] == "Tournament_Error", shown
            return
        assert reply["error_type"] == expected.error, f"expected {expected.error}: {shown}"
        # A card number is never echoed. Only a number is checked: a short or word-like text may be in a message by
        # chance (a card "black" in "black is removed from the game").
        card = request.get("credit_card") if isinstance(request, dict) else None
        if isinstance(card, str) and sum(character.isdigit() for character in card) >= 12:
            assert card not in reply["error_message"], shown
        return
    assert expected.error is None, f"expected {expected.error}: {shown}"
    assert set(reply) == SUCCESS_KEYS[action], shown
    if action == "join_tournament":
        token = reply["user_token"]
        assert len(token) == 64 and all(c in HEX for c in token), shown
        return
    assert reply == expected.payload, f"expected {expected.payload!r}: {shown}"


def check_changes(before: dict, after: dict, expected: Expected, reply: dict, world: World) -> None:
    """The database changed only as the answer allows."""
    joined = expected.join is not None and "error_type" not in reply
    if expected.change is None and not joined:
        assert after == before, "a refusal or a reading changed the database"
        return
    assert after["entrants"][: len(before["entrants"])] == before["entrants"]
    if joined:
        name, players = expected.join
        tournament = Tournament.objects.get(name=name)
        if players is not None:
            assert tournament.players == players
            assert after["tournaments"][:-1] == before["tournaments"] and after["tournaments"][-1][1] == name
        else:
            assert after["tournaments"] == before["tournaments"]
        assert len(after["entrants"]) == len(before["entrants"]) + 1 and after["entrants"][-1][1] == tournament.pk
        count = Entrant.objects.filter(tournament=tournament).count()
        assert reply["color"] == COLOURS[count - 1]
        game = Game.objects.get(pk=tournament.game_id)
        if count == tournament.players:
            state = ENGINE.state_from_json(game.state)
            assert game.status == Game.Status.PLAYING and (state.phase, state.turn) == ("placement", 0)
            assert_new_turn(game)
        else:
            assert game.status == Game.Status.WAITING and game.state is None
        changed = tournament.game_id
    else:
        name, state = expected.change
        changed = world.tables[name].game_id
        assert after["tournaments"] == before["tournaments"] and after["entrants"] == before["entrants"]
        game = Game.objects.get(pk=changed)
        stored = ENGINE.state_from_json(game.state)
        assert stored.to_json() == state.to_json(), "the game changed otherwise than the answer says"
        assert (game.status == Game.Status.FINISHED) == (state.phase == "over")
        if game.status == Game.Status.PLAYING:
            if expected.restart:
                assert_new_turn(game)
            else:
                assert game.deadline == before["games"][changed][3], "a turn's clock changed without a new turn"
    new_events = after["events"][len(before["events"]) :]
    assert after["events"][: len(before["events"])] == before["events"]
    assert {game_id for _, game_id, _ in new_events} <= {changed}
    assert new_events or joined, "a change of a game that its log does not hold"
    for game_id, row in before["games"].items():
        if game_id != changed:
            assert after["games"][game_id] == row, "a request changed another game"


def assert_new_turn(game: Game) -> None:
    """The player on turn has the whole period from now."""
    period = timedelta(seconds=settings_module.FISH_TURN_TIMEOUT)
    assert timezone.now() + period - timedelta(seconds=10) < game.deadline <= timezone.now() + period


def arrange(world: World, name: str, phase: str, index: int, late: bool) -> None:
    """Put a table's game in one of its positions of that phase; the turn's time up if `late`, else far from it."""
    table = world.tables[name]
    positions = [position for position in table.positions if position["phase"] == phase]
    position = positions[index % len(positions)]
    deadline = timezone.now() + (timedelta(seconds=-1) if late else timedelta(hours=1))
    Game.objects.filter(pk=table.game_id).update(state=position, deadline=deadline)


OTHER_ACTIONS = ("Get_State", "get_state ", "join", "fly", "", "place", "MOVE_PENGUIN", "is_game_over\x00")
EXTRA_NAMES = ("tournament_id", "players", "credit_card", "user_token", "color", "row", "state", "id", "")


@st.composite
def coordinate(draw, legal: int | None, clean: bool) -> Any:
    choice = draw(st.integers(0, 9))
    if choice <= (6 if clean else 3) and legal is not None:
        return legal
    if clean or choice <= 6:
        return draw(st.integers(-1, 10))
    return draw(json_values)


def token_for(draw, owners: dict, table: Table, on_turn: int | None, clean: bool) -> Any:
    choice = draw(st.integers(0, 6 if clean else 11))
    if choice <= 3 and on_turn is not None:
        return table.tokens[on_turn]
    if choice <= 6:
        return draw(st.sampled_from(table.tokens))
    if choice == 7:
        return draw(st.sampled_from(sorted(owners)))
    if choice == 8:
        real = draw(st.sampled_from(table.tokens))
        return draw(st.sampled_from(spoiled_tokens(real)))
    if choice == 9:
        return draw(st.sampled_from(["", "0" * 64, "f" * 64, "red"]) | st.text(max_size=70))
    if choice == 10:
        return draw(json_values)
    return None  # missing


def spoiled_tokens(token: str) -> list[str]:
    """A token with one digit changed, its capitals, cut, lengthened, padded, and the hash the database keeps."""

    def other(digit: str) -> str:
        return HEX[(HEX.index(digit) + 1) % 16]

    return [
        token[:-1] + other(token[-1]),
        other(token[0]) + token[1:],
        token.upper(),
        token[:-1],
        token + "0",
        " " + token,
        token + "\n",
        services.token_hash(token),
        token[:32],
    ]


@st.composite
def fish_request(draw, world: World, owners: dict) -> dict:
    """A request at one of the tables: a clean one (well-typed, by a player of the table, often legal) or one with
    anything spoiled."""
    clean = draw(st.booleans(), label="clean")
    names = sorted(world.tables)
    table = world.tables[draw(st.sampled_from(world.running) if draw(st.booleans()) else st.sampled_from(names))]
    now = view(table)
    state = now.state
    on_turn = state.turn if now.running else None
    actions = st.sampled_from([*sorted(ACTIONS), *ACTS, *ACTS, *CHECKS, *CHECKS])
    action = draw(actions if clean or draw(st.integers(0, 5)) < 5 else st.sampled_from(OTHER_ACTIONS))
    request: dict[str, Any] = {"action": action}
    if action == "join_tournament":
        known = [*names, 4242, "04242", f"fz-new-{draw(st.integers(0, 3))}"]
        request["tournament_id"] = draw(st.sampled_from(known) if clean else st.sampled_from(known) | json_values)
        if draw(st.booleans()):
            request["players"] = draw(st.integers(2, 4) if clean else st.integers(1, 5) | json_values)
        if draw(st.booleans()):
            request["credit_card"] = draw(st.sampled_from(["4111-1111-1111-1111", "4929123456781234"]) | json_values)
    token = None
    if action != "join_tournament":
        token = token_for(draw, owners, table, on_turn, clean)
        if token is not None:
            request["user_token"] = token
    # Coordinates that the sender could play if it were its turn in the right phase: free tiles, or its own moves.
    legal: list[int] | None = None
    if state is not None and action in COORDINATES:
        owner = owners.get(token) if isinstance(token, str) else None
        seat = owner[1] if owner is not None and owner[0] == table.name else on_turn
        if len(COORDINATES[action]) == 2:
            free = [(row, col) for row in range(ROWS) for col in range(COLUMNS) if state.is_free(row, col)]
            legal = list(draw(st.sampled_from(free or [(0, 0)])))
        else:
            moves = state.moves_of(seat if seat is not None else 0) or state.moves_of(state.turn or 0)
            if moves:
                move = draw(st.sampled_from(moves))
                legal = [*move.start, *move.end]
    aimed = legal is not None and clean and draw(st.integers(0, 9)) < 6
    for index, name in enumerate(COORDINATES.get(action, ())):
        if aimed:
            request[name] = legal[index]
        elif clean or draw(st.integers(0, 9)) < 9:  # now and then missing
            request[name] = draw(coordinate(None if legal is None else legal[index], clean))
    if action == "get_moves_for_color" and (clean or draw(st.integers(0, 9)) < 9):
        colours = st.sampled_from(COLOURS)
        request["color"] = draw(colours if clean else colours | st.sampled_from(EDGE_STRINGS) | json_values)
    for _ in range(draw(st.integers(0, 2))):
        request.setdefault(draw(st.sampled_from(EXTRA_NAMES) | st.text(max_size=5)), draw(json_values))
    if draw(st.booleans()):
        request = dict(draw(st.permutations(list(request.items()))))
    return request


@settings(FUZZ, max_examples=160)
@given(data=st.data())
def test_every_action_gets_the_protocols_answer_and_changes_only_what_it_may(world, data):
    made: list[str] = []
    # A join may seat a player at a table the world had (one waiting for players): its tokens grow with the example.
    tokens_before = {name: list(table.tokens) for name, table in world.tables.items()}
    try:
        with transaction.atomic():
            for name in world.running:
                phase = data.draw(st.sampled_from(["placement", "movement"]), label=f"phase of {name}")
                index = data.draw(st.integers(0, 100), label="position")
                arrange(world, name, phase, index, late=data.draw(st.integers(0, 4), label="late") == 4)
            owners = dict(world.owners)
            for _ in range(data.draw(st.integers(1, 6), label="requests")):
                request = data.draw(fish_request(world, owners), label="request")
                line = to_json(request, ensure_ascii=data.draw(st.booleans(), label="ensure_ascii")).encode()
                if data.draw(st.booleans(), label="\\r"):
                    line += b"\r"
                parsed = expected_read(line)
                expected = expect(parsed, world, owners)
                before = snapshot()
                reply = ask(line)
                check_answer(line, reply, expected, parsed)
                check_changes(before, snapshot(), expected, reply, world)
                outcome = reply.get("error_type", "ok") + (" (change)" if expected.change else "")
                event(f"{'?' if parsed is UNKNOWN else parsed['action']}: {outcome}")
                if expected.join is not None and "user_token" in reply:
                    name = expected.join[0]
                    owners[reply["user_token"]] = (name, COLOURS.index(reply["color"]))
                    if name in world.tables:
                        world.tables[name].tokens.append(reply["user_token"])
                    else:
                        made.append(name)
                        world.tables[name] = table_of(name, [reply["user_token"]])
            transaction.set_rollback(True)
    finally:
        # The tournaments made by joins are gone with the example, and so are the games it started and the seats it
        # took.
        for name in made:
            del world.tables[name]
        for name, tokens in tokens_before.items():
            world.tables[name].tokens = tokens


# --- 3. Stolen, stale and spoiled tokens ----------------------------------------------------------------------------


def well_formed(action: str, token: str) -> dict:
    """A request of `action` with well-typed fields (a tile on the board, a colour of every game)."""
    request = {"action": action, "user_token": token}
    for name in COORDINATES.get(action, ()):
        request[name] = 1
    if action == "get_moves_for_color":
        request["color"] = "red"
    return request


TOKEN_ACTIONS = tuple(sorted(ACTIONS - {"join_tournament"}))


def test_spoiled_removed_and_hashed_tokens_are_incorrect_and_change_nothing(world):
    play = world.tables["fz-play2"]
    # White places out of turn while the game runs: removed.
    refused = ask(to_json(well_formed("place_penguin", play.tokens[1])).encode())
    assert refused["error_type"] == "Invalid_Action"
    removed = [play.tokens[1], *world.tables["fz-gone"].tokens, world.tables["fz-over3"].tokens[1]]
    spoiled = [bad for table in world.tables.values() for token in table.tokens for bad in spoiled_tokens(token)]
    before = snapshot()
    failures = []
    for token in removed + spoiled:
        for action in TOKEN_ACTIONS:
            reply = ask(to_json(well_formed(action, token)).encode())
            if reply.get("error_type") != "Incorrect_Token" or set(reply) != {"error_type", "error_message"}:
                failures.append(f"{action} with {token!r}: {reply}")
            elif token in removed and "removed" not in reply["error_message"]:
                failures.append(f"{action} with the removed {token!r} does not say so: {reply}")
    assert not failures, "\n".join(failures[:20])
    assert snapshot() == before


def test_a_token_acts_in_its_own_tournament_only_whatever_the_request_aims_at(world):
    """Tokens name a seat, not a connection nor a tournament: red of one game placing on a tile of another game's
    board places in its own game, and the other game stays as it was."""
    two, three = world.tables["fz-play2"], world.tables["fz-play3"]
    before = snapshot()
    state = view(three).state
    row, col = state.legal_placements(0)[0]
    request = {**well_formed("place_penguin", three.tokens[0]), "row": row, "col": col, "tournament_id": two.name}
    reply = ask(to_json(request).encode())
    assert "result_state" in reply, reply
    after = snapshot()
    assert after["games"][two.game_id] == before["games"][two.game_id]
    assert view(three).state.penguins[0] == [(row, col)]


# A JSON string may escape a lone surrogate ("\\ud800"): valid JSON text, but no text that UTF-8 can encode.
SURROGATE_FIELDS = {
    "user_token": ("get_state", {"Incorrect_Token"}),
    "tournament_id": ("join_tournament", {"Tournament_Error", None}),  # None: accepted
    "color": ("get_moves_for_color", {"Unknown_Color"}),
}


@pytest.mark.parametrize("name", sorted(SURROGATE_FIELDS))
def test_a_lone_surrogate_in_a_field_is_answered_and_changes_nothing(world, name):
    action, allowed = SURROGATE_FIELDS[name]
    request = {"action": action}
    if name != "user_token":
        request["user_token"] = world.tables["fz-play2"].tokens[0]
    line = (to_json(request)[:-1] + f', "{name}": "\\ud800x"}}').encode()
    before = snapshot()
    reply = ask(line)
    assert reply.get("error_type") in allowed, reply
    if "error_type" in reply:
        assert snapshot() == before


@pytest.mark.parametrize("tournament_id", ["fz\x00cup", "\x00", "🐧" * 64, -(10**63), -(10**64) + 1])
def test_every_tournament_id_of_the_page_names_a_tournament(world, tournament_id):
    """Any text of 1 to 64 characters is a tournament's id (a NUL is a character too), and an integer of up to 64
    digits is one: joined twice, it is one tournament. A negative one is a sign and 64 digits, 65 characters: the
    page may be read as refusing it, but then as a bad tournament_id, not as a database out of reach."""
    line = to_json({"action": "join_tournament", "tournament_id": tournament_id}).encode()
    first, second = ask(line), ask(line)
    if isinstance(tournament_id, int) and "error_type" in first:
        assert first["error_type"] == "Tournament_Error" and first["error_message"] != fish_server.UNREACHABLE
        return
    assert (first.get("color"), second.get("color")) == ("red", "white"), (first, second)


def test_a_join_undone_by_its_transaction_leaves_its_seat_free(world):
    """A join whose change is not committed (the database failed at its end: "nothing was changed; try again") has
    not started the game: the same join again takes the seat."""
    waiting = world.tables["4242"]
    line = to_json({"action": "join_tournament", "tournament_id": 4242}).encode()
    with transaction.atomic():
        assert ask(line)["color"] == "white"
        transaction.set_rollback(True)
    assert view(waiting).status == Game.Status.WAITING
    assert ask(line).get("color") == "white"


# --- 4. A live server under fire keeps serving ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(live_databases, tmp_path_factory):
    from .live import Server

    # A turn lasts as long as the module: the players of these tests are never timed out.
    server = Server(live_databases.new(), tmp_path_factory.mktemp("fish-fuzz"), FISH_TURN_TIMEOUT="3600")
    yield server
    server.stop()


class Pair:
    """Red and white in a tournament of their own, each on its own connection, who play legal actions chosen at
    random and check every answer against the rules."""

    def __init__(self, port: int, seed: int):
        name = f"pair-{uuid.uuid4().hex[:12]}"
        self.clients = [Client(port), Client(port)]
        self.players = [Player(self.clients[0], name), Player(self.clients[1], name)]
        assert [player.color for player in self.players] == ["red", "white"]
        self.state = State.new(self.players[0].state()["board"], 2)
        self.rng = random.Random(seed)

    def close(self) -> None:
        for client in self.clients:
            client.close()

    def check(self) -> None:
        """Every player sees the game as the rules say it is."""
        turn = None if self.state.turn is None else COLOURS[self.state.turn]
        for player in self.players:
            assert player.turn() == turn
            assert player.state() == state_payload(self.state)

    def step(self) -> bool:
        """Check the game, then play the next action; return False once the game is over."""
        self.check()
        seat = self.state.turn
        if seat is None:
            winners = [COLOURS[s] for s in self.state.winners()]
            assert self.players[1].ask("is_game_over") == {"is_game_over": True, "winners": winners}
            return False
        player = self.players[seat]
        assert player.ask("is_game_over") == {"is_game_over": False, "winners": []}
        if self.state.phase == "placement":
            row, col = self.rng.choice(self.state.legal_placements(seat))
            assert player.ask("check_placement", row=row, col=col) == {"is_valid": True}
            self.state.place(seat, row, col)
            reply = player.place(row, col)
        else:
            move = self.rng.choice(self.state.legal_moves(seat))
            wanted = {"start_row": move.start[0], "start_col": move.start[1], "end_row": move.end[0]}
            wanted["end_col"] = move.end[1]
            assert player.ask("check_move", **wanted) == {"is_valid": True}
            self.state.move(seat, move.start, move.end)
            reply = player.move(move.start, move.end)
        assert reply == {"result_state": state_payload(self.state)}
        return True


@pytest.fixture(scope="module")
def pair(server):
    pairs = [Pair(server.fish_port, 0)]

    def playing() -> Pair:
        if not pairs[-1].step():
            pairs[-1].close()
            pairs.append(Pair(server.fish_port, len(pairs)))
            assert pairs[-1].step()
        return pairs[-1]

    yield playing
    pairs[-1].close()


SENTINEL = b'{"action": "check_turn"}'


def send_garbage(port: int, lines: list[bytes]) -> None:
    """Send lines (pipelined, each followed by a request whose answer is known) and check each answer."""
    client = Client(port)
    try:
        client.send(b"".join(line + b"\n" + SENTINEL + b"\n" for line in lines))
        for line in lines:
            expected = expected_read(line)
            if expected is not BLANK:
                reply = strict_json(client.line())
                assert isinstance(reply, dict), (line, reply)
                if expected is UNKNOWN:
                    assert set(reply) == {"error_type", "error_message"}, (line, reply)
                    assert reply["error_type"] == "Unknown_Action", (line, reply)
                elif "error_type" in reply:
                    assert reply["error_type"] in ALLOWED_ERRORS[expected["action"]], (line, reply)
                else:
                    assert set(reply) == SUCCESS_KEYS[expected["action"]], (line, reply)
            assert client.answer()["error_type"] == "Incorrect_Token", line
    finally:
        client.close()


def send_too_long(port: int, extra: int, first: bool, ending: bytes) -> None:
    """A line of MAX_LINE + extra bytes, maybe after a request: the request's answer, Unknown_Action, the end."""
    client = Client(port)
    try:
        if first:
            client.send(SENTINEL + b"\n")
        long = b'{"action": "get_state", "user_token": "' + b"7" * MAX_LINE
        long = long[: MAX_LINE + extra]
        for start in range(0, len(long), 20_000):
            client.send(long[start : start + 20_000])
        with contextlib.suppress(OSError):  # closed by the server already
            client.send(ending)
        if first:
            assert client.answer()["error_type"] == "Incorrect_Token"
        assert client.answer()["error_type"] == "Unknown_Action"
        # Closed; with bytes of ours unread, the server's system resets the connection.
        with contextlib.suppress(ConnectionResetError):
            assert client.closed()
    finally:
        client.close()


def send_half(port: int, line: bytes, cut: int, reset: bool) -> None:
    """Part of a line, then the connection closed (or reset)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(line[: max(1, min(cut, len(line) - 1))])
    if reset:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def flood(port: int, count: int) -> None:
    """`count` connections open at once: silent ones, ones in the middle of a line, ones that ask and read the
    answer; then all closed (some reset)."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(count)]
    for index, sock in enumerate(socks):
        if index % 3 == 1:
            sock.sendall(SENTINEL[: index % len(SENTINEL)])
        elif index % 3 == 2:
            sock.sendall(SENTINEL + b"\n")
    for index, sock in enumerate(socks):
        if index % 3 == 2:
            assert strict_json(sock.makefile("rb").readline())["error_type"] == "Incorrect_Token"
        elif index % 2:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()


def new_log(server, start: int) -> str:
    """What the server logged since `start` (a size of its log)."""
    with server.log.open("rb") as log:
        log.seek(start)
        return log.read().decode(errors="replace")


VALID_TEXTS = [to_json(request).encode() for request in VALID_LINES]
garbage_lines = st.one_of(
    st.binary(max_size=80).map(lambda line: line.replace(b"\n", b"")),
    mutated_lines().map(lambda line: line.replace(b"\n", b"")),
    st.sampled_from([line for line in NASTY_LINES if b"\n" not in line]),
    st.builds(lambda request: to_json(request).encode(), requests),
)
abuse = st.one_of(
    st.tuples(st.just("garbage"), st.lists(garbage_lines, min_size=1, max_size=12)),
    st.tuples(st.just("too long"), st.integers(1, 40_000), st.booleans(), st.sampled_from([b"", b"\n", b"x\n"])),
    st.tuples(st.just("half"), st.sampled_from(VALID_TEXTS), st.integers(1, 200), st.booleans()),
    st.tuples(st.just("flood"), st.integers(5, 60)),
    st.tuples(st.just("stolen"), st.integers(0, 63), st.sampled_from(TOKEN_ACTIONS)),
)


@settings(max_examples=20, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(abuse, min_size=1, max_size=5))
def test_a_game_goes_on_whatever_other_connections_send(server, pair, attacks):
    logged = server.log.stat().st_size
    playing = pair()
    port = server.fish_port
    # A silent connection in the middle of a line, all along.
    silent = socket.create_connection(("127.0.0.1", port), timeout=30)
    silent.sendall(b'{"action": "get_st')
    try:
        for attack in attacks:
            event(attack[0])
            match attack:
                case ("garbage", lines):
                    send_garbage(port, lines)
                case ("too long", extra, first, ending):
                    send_too_long(port, extra, first, ending)
                case ("half", line, cut, reset):
                    send_half(port, line, cut, reset)
                case ("flood", count):
                    flood(port, count)
                case ("stolen", digit, action):
                    # The token of the player on turn with one digit changed: refused, and the game is as it was.
                    token = playing.players[playing.state.turn or 0].token
                    spoiled = token[:digit] + HEX[(HEX.index(token[digit]) + 1) % 16] + token[digit + 1 :]
                    client = Client(port)
                    try:
                        request = well_formed(action, spoiled)
                        assert client.ask(request.pop("action"), **request)["error_type"] == "Incorrect_Token"
                    finally:
                        client.close()
            # The players of the game in progress are served as before, with correct answers.
            playing = pair()
    finally:
        silent.close()
    assert "Traceback" not in new_log(server, logged)


def test_hundreds_of_connections_at_once_do_not_stop_a_game(server, pair):
    logged = server.log.stat().st_size
    playing = pair()
    port = server.fish_port
    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(300)]
    try:
        for index, sock in enumerate(socks):
            if index % 3 == 1:
                sock.sendall(b'{"action": "join_tourn')
            elif index % 3 == 2:
                sock.sendall(b"\xff\xfe garbage\n")
        started = time.monotonic()
        playing = pair()
        playing.check()
        assert time.monotonic() - started < 10
        for sock in socks[2::3]:
            assert strict_json(sock.makefile("rb").readline())["error_type"] == "Unknown_Action"
    finally:
        for sock in socks:
            sock.close()
    playing = pair()
    for _ in range(3):
        flood(port, 100)
        playing = pair()
    assert "Traceback" not in new_log(server, logged)


def test_a_lone_surrogate_escape_gets_an_answer_and_the_connection_goes_on(server):
    logged = server.log.stat().st_size
    client = Client(server.fish_port)
    try:
        client.send(b'{"action": "get_state", "user_token": "\\ud800"}\n' + SENTINEL + b"\n")
        assert client.answer()["error_type"] == "Incorrect_Token"
        assert client.answer()["error_type"] == "Incorrect_Token"
    finally:
        client.close()
    assert "Traceback" not in new_log(server, logged)


def test_a_client_gone_before_its_answer_is_not_an_error_of_the_server(server, pair):
    """Clients that ask and leave at once (the connection reset) are no fault of the server's: nothing to log as an
    error, and the others are served."""
    logged = server.log.stat().st_size
    for _ in range(40):
        sock = socket.create_connection(("127.0.0.1", server.fish_port), timeout=30)
        sock.sendall((SENTINEL + b"\n") * 20)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    pair()
    assert "a connection failed" not in new_log(server, logged)
