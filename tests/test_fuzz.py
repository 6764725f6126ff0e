"""Whatever a client sends, every function answers a JSON object with a status of the protocol, never a server
error, and a refused request changes nothing: the game it aimed at stays exactly as it was.

Requests are fired at a game between alice and bob (alice is the initial player), put in a position before each
example (sometimes with the sticks thrown, so that some requests are legal). A 200 may change the game, but only
by the one action the request asked for.
"""

import itertools
import json
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.http import QueryDict
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from games.models import Game, GameEvent, WaitingRoom
from games.rules import tab
from games.rules.tab import Piece, Throw
from rankings.models import Ranking

from .conftest import PASSWORDS

User = get_user_model()

SIZE = 9
POST_FUNCTIONS = ("register", "join", "leave", "roll", "pass", "notify", "ranking")
# A 200 from these is one action on the game they name.
GAME_FUNCTIONS = ("leave", "roll", "pass", "notify")
FIELDS = {
    "register": ("nick", "password"),
    "join": ("group", "nick", "password", "size"),
    "leave": ("nick", "password", "game"),
    "roll": ("nick", "password", "game"),
    "pass": ("nick", "password", "game"),
    "notify": ("nick", "password", "game", "cell"),
    "ranking": ("group", "size"),
}
FIELD_NAMES = ("nick", "password", "game", "group", "size", "cell", "move")

FUZZ = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    # No shrinking: each example makes a game and a dozen requests, so shrinking one failure takes minutes. The
    # failing example is printed draw by draw, and every assertion message shows the request and the answer.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


class Literal(str):
    """JSON text sent as it is: numbers that json.dumps cannot write (or writes otherwise)."""


EDGE_INTEGERS = (
    0,
    -1,
    1,
    7,
    8,
    9,
    15,
    35,
    36,
    2**31 - 1,
    2**31,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    -(2**63) - 1,
    10**18,
    10**30,
)
EDGE_STRINGS = (
    "",
    " ",
    "9",
    " 9 ",
    "+9",
    "9.0",
    "-1",
    "1e3",
    "0x10",
    "999999999999999999",
    "9999999999999999999",
    "alice",
    "ALICE",
    "alice ",
    "\x00",
    "alice\x00",
    "\ud800",
    "\udfff",
    "a" * 33,
    "a" * 129,
    "é",
    "🎲",
    "null",
    "undefined",
    "<script>",
    "'; DROP TABLE games_game; --",
)
EDGE_LITERALS = tuple(
    Literal(text)
    for text in (
        "NaN",
        "Infinity",
        "-Infinity",
        "1e400",
        "-1e400",
        "1e-400",
        "-0",
        "8.0",
        "8e0",
        "0.8e1",
        "1" + "0" * 5000,  # more digits than Python converts
        "-" + "9" * 4301,
    )
)

# Characters that text columns, encoders and hashes treat specially, drawn often enough to be found.
nasty_text = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(["", "alice", "a" * 31]),
        st.sampled_from(["\x00", "\ud800", "\udfff", "\ud83c", "\n", "é", "🎲", " ", "\\", '"', "%", "\u202e"]),
        st.sampled_from(["", "b", "\x00"]),
    ),
)
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(EDGE_INTEGERS),
    st.floats(),  # NaN and ±Infinity too: json.dumps writes them as the tokens Python's json.loads reads
    st.text(st.characters(codec=None, exclude_categories=()), max_size=12),  # lone surrogates too
    nasty_text,
    st.sampled_from(EDGE_STRINGS),
    st.sampled_from(EDGE_LITERALS),
)
edge_values = st.one_of(
    nasty_text, st.sampled_from(EDGE_STRINGS), st.sampled_from(EDGE_INTEGERS), st.sampled_from(EDGE_LITERALS)
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=6,
)


def to_json(value: Any, *, ensure_ascii: bool = True) -> str:
    """Write `value` as JSON text, with Literal values as they are."""
    if isinstance(value, Literal):
        return str(value)
    if isinstance(value, dict):
        items = (
            f"{to_json(key, ensure_ascii=ensure_ascii)}:{to_json(item, ensure_ascii=ensure_ascii)}"
            for key, item in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(item, ensure_ascii=ensure_ascii) for item in value) + "]"
    return json.dumps(value, ensure_ascii=ensure_ascii)


def body_of(value: Any, ensure_ascii: bool = True) -> bytes:
    # surrogatepass: a lone surrogate written raw is not UTF-8, which the server must refuse, not choke on.
    return to_json(value, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")


# --- The game under fire ----------------------------------------------------------------------------------------

_groups = itertools.count(7_000_001)


def post(client, function: str, body: bytes) -> tuple[int, Any]:
    # A savepoint: on PostgreSQL a failed query would otherwise abort the test's transaction for every later example.
    with transaction.atomic():
        response = client.post(f"/{function}", data=body, content_type="application/json")
    assert response["Content-Type"] == "application/json", (function, body, response.status_code, response.content)
    return response.status_code, response.json()


def start_game(client) -> Game:
    """Pair alice (the initial player) and bob through `join`, in a (group, size) nobody else waits in."""
    group = next(_groups)
    while Game.objects.filter(pool=str(group)).exists():
        group = next(_groups)
    answers = [
        post(client, "join", body_of({"group": group, "nick": nick, "password": PASSWORDS[nick], "size": SIZE}))
        for nick in ("alice", "bob")
    ]
    assert answers[0] == answers[1] and answers[0][0] == 200
    game = Game.objects.get(public_id=answers[0][1]["game"])
    assert (game.status, [user.username for user in game.players]) == ("playing", ["alice", "bob"])
    return game


POSITIONS = (
    [("start", color, value) for color in tab.COLORS for value in (None, 1, 2, 3, 4, 6)]
    # alice's piece on 25 selected, a 3 thrown: she chooses between 28 and 10 (the fork at the end of row 2).
    + [("fork", tab.BLUE, 3)]
)


def arrange(game: Game, position: tuple[str, str, int | None]) -> None:
    kind, turn, value = position
    state = tab.State.new(SIZE)
    state.turn = turn
    state.dice = None if value is None else Throw.of_value(value)
    if kind == "fork":
        state.pieces = [None] * (4 * SIZE)
        state.pieces[25] = Piece(tab.BLUE, in_motion=True)
        state.pieces[30] = Piece(tab.RED, in_motion=True)
        state.step, state.cell, state.selected = tab.TO, 25, state.destinations(25, 3)
    Game.objects.filter(pk=game.pk).update(state=state.to_json())


def game_row(game: Game) -> tuple[dict, int]:
    return Game.objects.filter(pk=game.pk).values().get(), GameEvent.objects.filter(game=game).count()


def world() -> tuple:
    """A fingerprint of every table a request may write: a new row or a counted action changes it."""
    tables = {model: model._meta.db_table for model in (User, Game, GameEvent, WaitingRoom, Ranking)}
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT (SELECT COUNT(*) FROM {tables[User]}),
                       (SELECT COUNT(*) FROM {tables[Game]}), (SELECT SUM(version) FROM {tables[Game]}),
                       (SELECT COUNT(*) FROM {tables[GameEvent]}), (SELECT COUNT(*) FROM {tables[WaitingRoom]}),
                       (SELECT COUNT(*) FROM {tables[Ranking]}), (SELECT SUM(games) FROM {tables[Ranking]})"""
        )
        return cursor.fetchone()


class Referee:
    """Fires requests at one game and checks each answer against the database."""

    def __init__(self, client, game: Game):
        self.client = client
        self.game = game
        self.row = game_row(game)

    def send(self, function: str, body: bytes) -> tuple[int, Any]:
        before = world()
        status, answer = post(self.client, function, body)
        shown = f"{function} {body[:300]!r} -> {status} {answer!r}"
        assert status in (200, 400, 401), shown
        assert isinstance(answer, dict), shown
        row = game_row(self.game)
        if status != 200:
            assert list(answer) == ["error"] and isinstance(answer["error"], str) and answer["error"], shown
            assert world() == before, f"a refusal wrote to the database: {shown}"
            return status, answer
        if function in GAME_FUNCTIONS:
            assert answer == {}, shown
            # The only game whose id a payload can carry is this one: a 200 is one action on it, logged once.
            assert row[0]["version"] == self.row[0]["version"] + 1, shown
            assert row[1] == self.row[1] + 1, shown
        else:
            if function == "join":
                assert list(answer) == ["game"] and isinstance(answer["game"], str) and len(answer["game"]) == 32
            elif function == "ranking":
                assert list(answer) == ["ranking"] and isinstance(answer["ranking"], list), shown
            else:
                assert answer == {}, shown
            assert row == self.row, f"{function} changed a game it does not name: {shown}"
        self.row = row
        return status, answer


@pytest.fixture
def players(alice, bob, charlie):
    return alice, bob, charlie


@pytest.fixture
def table(client, players):
    """Return `game_in(position)`: the game of the previous call while it is on (cheaper than a new one), else a
    new game; either way in `position`."""
    games: list[Game] = []

    def game_in(position: tuple[str, str, int | None]) -> Game:
        if not games or not Game.objects.filter(pk=games[-1].pk, status=Game.Status.PLAYING).exists():
            games.append(start_game(client))
        arrange(games[-1], position)
        return games[-1]

    return game_in


# --- Arbitrary JSON ---------------------------------------------------------------------------------------------


top_level_values = json_values | st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=6)


@FUZZ
@given(data=st.data())
def test_arbitrary_json_never_breaks_the_server_nor_the_game(client, table, data):
    game = table(data.draw(st.sampled_from(POSITIONS), label="position"))
    referee = Referee(client, game)
    requests = st.tuples(st.sampled_from(POST_FUNCTIONS), top_level_values, st.booleans())
    for function, value, ensure_ascii in data.draw(st.lists(requests, min_size=3, max_size=8), label="requests"):
        referee.send(function, body_of(value, ensure_ascii))


# --- Valid requests with something wrong ------------------------------------------------------------------------


def valid_payload(function: str, nick: str, game: Game, cell: int) -> dict:
    values = {
        "nick": nick,
        "password": PASSWORDS[nick],
        "game": game.public_id,
        "group": int(game.pool),
        "size": SIZE,
        "cell": cell,
    }
    return {field: values[field] for field in FIELDS[function]}


def wrapped(value: Any) -> st.SearchStrategy:
    """The value in another type or shape than the one expected."""
    return st.sampled_from(
        [
            [value],
            {"value": value},
            {"$gt": ""},
            json.dumps(value) if not isinstance(value, Literal) else str(value),
            str(value) + " ",
            None,
            True,
            False,
            0,
            1.5,
            [],
            {},
        ]
    )


REMOVED = object()


@st.composite
def mutated(draw, payload: dict) -> dict:
    """The payload with one field spoiled (wrong value, type or shape, empty or missing), maybe more changes."""
    payload = dict(payload)
    field = draw(st.sampled_from([*payload, "move"]), label="field")
    value = draw(
        st.one_of(edge_values, json_values, wrapped(payload.get(field)), st.just(""), st.just(REMOVED)), label="value"
    )
    if value is REMOVED:
        payload.pop(field, None)
    else:
        payload[field] = value
    for operation in draw(st.lists(st.sampled_from(["extra", "password", "alias", "duplicate"]), max_size=2)):
        if operation == "extra":
            payload[draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=8))] = draw(json_values)
        elif operation == "password":
            payload["password"] = draw(st.sampled_from(sorted(PASSWORDS.values())))
        elif operation == "alias" and "cell" in payload:
            payload["move"] = payload.pop("cell")
        elif operation == "duplicate" and payload:
            # The same value under another field: a nick as a game id, a group as a cell, …
            source, target = draw(st.sampled_from(sorted(payload))), draw(st.sampled_from(FIELD_NAMES))
            payload[target] = payload[source]
    return payload


@FUZZ
@given(data=st.data())
def test_valid_requests_with_a_bad_field_are_refused_cleanly(client, table, data):
    game = table(data.draw(st.sampled_from(POSITIONS), label="position"))
    referee = Referee(client, game)
    for _ in range(data.draw(st.integers(3, 8), label="how many")):
        function = data.draw(st.sampled_from(POST_FUNCTIONS), label="function")
        nick = data.draw(st.sampled_from(sorted(PASSWORDS)), label="nick")
        cell = data.draw(st.integers(0, 4 * SIZE - 1) | st.sampled_from([8, 25, 27, 28]), label="cell")
        payload = valid_payload(function, nick, game, cell)
        # Hypothesis starts from the simplest choices: False here, so most requests are spoiled.
        if not data.draw(st.booleans(), label="keep it valid"):
            payload = data.draw(mutated(payload), label="payload")
        referee.send(function, body_of(payload, data.draw(st.booleans(), label="ensure_ascii")))


# The fields whose value reaches different code in each function; nick and password go through the same check in
# every game function, so roll stands for leave, pass and notify.
EDGE_FIELDS = {
    "register": ("nick", "password"),
    "join": ("group", "nick", "password", "size"),
    "leave": ("game",),
    "roll": ("nick", "password", "game"),
    "pass": ("game",),
    "notify": ("game", "cell", "move"),
    "ranking": ("group", "size"),
}


@pytest.mark.parametrize("function", POST_FUNCTIONS)
def test_every_field_with_every_edge_value(client, table, function):
    """Each field of alice's valid request, one at a time, set to each edge value, with alice on turn and a 1
    thrown, so that the value goes as deep as it can: all failures listed at once."""
    values = [*EDGE_INTEGERS, *EDGE_STRINGS, *EDGE_LITERALS, None, True, 1.5, [], {}, [9], {"nick": "alice"}]
    failures = []
    for field in EDGE_FIELDS[function]:
        for value in values:
            game = table(("start", tab.BLUE, 1))
            payload = {**valid_payload(function, "alice", game, 8), field: value}
            if field == "move":
                del payload["cell"]
            try:
                Referee(client, game).send(function, body_of(payload))
            except Exception as error:  # collect them all, then fail once
                failures.append(f"{field}={shown_value(value)}: {type(error).__name__}: {str(error)[:160]}")
    assert not failures, f"{len(failures)} bad answers from {function}:\n" + "\n".join(failures)


def shown_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# --- Bodies that are not JSON -----------------------------------------------------------------------------------


def raw_bodies(game_id: str) -> st.SearchStrategy[bytes]:
    valid = {"nick": "alice", "password": PASSWORDS["alice"], "game": game_id, "group": 1, "size": SIZE, "cell": 8}
    text = json.dumps(valid).encode()
    return st.one_of(
        st.binary(max_size=64),
        st.binary(max_size=16).map(lambda noise: text + noise),
        st.integers(0, len(text)).map(lambda end: text[:end]),  # truncated
        st.tuples(st.integers(0, len(text) - 1), st.binary(min_size=1, max_size=3)).map(
            lambda cut: text[: cut[0]] + cut[1] + text[cut[0] + 1 :]
        ),
        st.sampled_from(
            [
                b"\xef\xbb\xbf" + text,  # a byte order mark
                json.dumps(valid).encode("utf-16"),
                json.dumps(valid).encode("utf-32"),
                text.replace(b'"alice"', b'"\xc3\x28"'),  # invalid UTF-8 inside a string
                text.replace(b'"alice"', b'"\xed\xa0\x80"'),  # an encoded surrogate
                text.replace(b'"alice"', b"'alice'"),
                b'{"nick": "alice", "nick": "bob", "password": "bob-secret"}',
                b'{"nick": "alice"',
                b"{" * 30_000,
                b'{"a":' * 10_000,
                b"[" * 30_000 + b"]" * 30_000,
                b" \t\r\n ",
                b"\x00",
                b"{}\x00",
                b"{} {}",
                b"nick=alice&password=alice-secret",
            ]
        ),
    )


@FUZZ
@given(data=st.data())
def test_bodies_that_are_not_json_objects_are_refused(client, table, data):
    game = table(("start", tab.BLUE, 1))
    referee = Referee(client, game)
    for _ in range(data.draw(st.integers(2, 6), label="how many")):
        function = data.draw(st.sampled_from(POST_FUNCTIONS), label="function")
        referee.send(function, data.draw(raw_bodies(game.public_id), label="body"))


@pytest.mark.parametrize("function", POST_FUNCTIONS)
def test_huge_body_is_refused_with_413(client, players, function):
    game = start_game(client)
    body = b'{"nick": "alice", "password": "' + b"x" * 3_000_000 + b'"}'
    before = world()
    status, answer = post(client, function, body)
    assert (status, list(answer)) == (413, ["error"])
    assert world() == before
    assert game_row(game)[0]["version"] == game.version


# --- GET /update ------------------------------------------------------------------------------------------------


@pytest.fixture
def started_game(transactional_db, client, players) -> Game:
    # Committed, so that the update view (which reads in a thread of its own) sees it.
    return start_game(client)


def query_strings(game_id: str) -> st.SearchStrategy[str]:
    names = st.sampled_from(["nick", "game", "Nick", "GAME", "nick[]", "game ", "", "x"]) | st.text(max_size=6)
    values = (
        st.sampled_from(["alice", "bob", "charlie", "nobody", game_id, game_id.upper(), game_id + "0", game_id[:-1]])
        | st.sampled_from([text for text in EDGE_STRINGS if text.isprintable() or "\x00" in text])
        | st.text(st.characters(codec="utf-8"), max_size=40)
    )
    quoted = st.tuples(names, values).map(lambda pair: f"{quote(pair[0], safe='')}={quote(pair[1], safe='')}")
    odd = st.sampled_from(
        ["nick", "game", "nick=", "game=", "=", "&", "nick=%", "game=%ZZ", "nick=%FF%FE", "game=%00", "nick=charlie"]
    )
    raw = st.tuples(names, values).map(lambda pair: f"{pair[0]}={pair[1]}".replace("#", "%23"))
    return st.lists(quoted | odd | raw, max_size=6).map("&".join)


def effective_params(path: str) -> tuple[str | None, str | None]:
    """Return the nick and game that the view reads: the last value of a repeated name."""
    params = QueryDict(urlsplit(path).query)
    return params.get("nick"), params.get("game")


def assert_update_refused(client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 400, (path, response.status_code)
    assert response["Content-Type"] == "application/json", path
    answer = response.json()
    assert list(answer) == ["error"] and isinstance(answer["error"], str), (path, answer)


@FUZZ
@pytest.mark.django_db(transaction=True)
@given(data=st.data())
def test_update_without_a_valid_nick_and_game_is_a_json_error(client, started_game, data):
    path = f"/update?{data.draw(query_strings(started_game.public_id), label='query')}"
    # A player with the real id would open a stream, which never ends.
    assume(effective_params(path) not in {("alice", started_game.public_id), ("bob", started_game.public_id)})
    assert_update_refused(client, path)


UPDATE_REFUSALS = (
    "",
    "nick=alice",
    "game={id}",
    "nick=&game={id}",
    "nick=alice&game=",
    "nick=charlie&game={id}",
    "nick=Alice&game={id}",
    "nick=alice&game={ID}",
    "nick=alice&game=averseda",
    "nick=alice&game={id}&nick=charlie",
    "nick=alice&game={id}&game=averseda",
    "nick=alice&game={id}%00",
    "nick=alice&game=%00",
    "nick=alice%00&game={id}",
    "nick=%FF&game=%FE",
    "nick=alice&game=" + "a" * 5000,
    "nick[]=alice&game[]={id}",
)


@pytest.mark.django_db(transaction=True)
def test_update_refusals(client, started_game):
    """Each known way to get `update` wrong, one request each: all failures listed at once."""
    failures = []
    for query in UPDATE_REFUSALS:
        path = "/update?" + query.format(id=started_game.public_id, ID=started_game.public_id.upper())
        try:
            assert_update_refused(client, path)
        except Exception as error:  # collect them all, then fail once
            failures.append(f"{path[:60]}: {type(error).__name__}: {str(error)[:160]}")
    assert not failures, f"{len(failures)} bad answers from update:\n" + "\n".join(failures)
