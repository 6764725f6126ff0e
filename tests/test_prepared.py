"""Queries built once (core/prepared.py) give what the ORM gives: each column converted as its iteration does (JSON,
dates, UUIDs, foreign keys), the values in their places, None for no row; and their SQL is built only once."""

import json
import socket
import uuid
from datetime import UTC, timedelta, timezone

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import prepared
from core.prepared import Prepared
from protocols.draughts.models import Room
from protocols.draughts.services import Holder, room_create

pytestmark = pytest.mark.django_db

COLUMNS = ("id", "white_key", "white_held_until", "creator", "game", "game__state", "game__created_at", "game__clocks")
query = Prepared(
    lambda room_id: Room.objects.filter(pk=room_id).values_list(*COLUMNS), [(Room._meta.pk, uuid.UUID(int=1))]
)


def test_a_prepared_query_reads_what_the_orm_reads():
    rooms = [room_create(holder=Holder.new())[0] for _ in range(3)]
    for room in rooms:
        assert query.first(room.pk) == Room.objects.filter(pk=room.pk).values_list(*COLUMNS).get()
    assert query.first(uuid.uuid4()) is None


def test_its_sql_is_the_same_each_time():
    room, _ = room_create(holder=Holder.new())
    with CaptureQueriesContext(connection) as first:
        query.first(room.pk)
    with CaptureQueriesContext(connection) as second:
        query.first(uuid.uuid4())
    assert len(first) == len(second) == 1 and first[0]["sql"].split("WHERE")[0] == second[0]["sql"].split("WHERE")[0]


def test_a_prepared_update_writes_what_the_orm_writes():
    from datetime import datetime

    room, _ = room_create(holder=Holder.new())
    other, _ = room_create(holder=Holder.new())
    key, held = uuid.uuid4(), datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    with CaptureQueriesContext(connection) as written:
        prepared.update(Room, room.pk, {"white_key": key, "white_held_until": held, "white_in": True})
        prepared.update(Room, other.pk, {"white_key": uuid.uuid4(), "white_held_until": None, "white_in": False})
    assert len(written) == 2
    room.refresh_from_db()
    assert (room.white_key, room.white_held_until, room.white_in) == (key, held, True)
    other.refresh_from_db()
    assert other.white_held_until is None and other.white_in is False
    # JSON and foreign keys, as the game's own saves write them.
    game = room.game
    prepared.update(type(game), game.pk, {"state": {"a": [1, "b"]}, "winner": None})
    game.refresh_from_db()
    assert game.state == {"a": [1, "b"]} and game.winner_id is None


# Statements built once run on the driver's own cursor, kept for the connection: what Django's cursor does around
# a statement must hold for them as well.


def test_their_errors_are_djangos_and_undo_only_their_savepoint():
    from django.db import IntegrityError, transaction

    room, _ = room_create(holder=Holder.new())
    with pytest.raises(IntegrityError), transaction.atomic():
        prepared.update(type(room.game), room.game.pk, {"kind": None})  # NOT NULL
    assert query.first(room.pk)[0] == room.pk  # the connection serves on


def test_statements_run_together_write_in_order_and_fail_together_as_djangos():
    from django.db import IntegrityError, transaction

    room, _ = room_create(holder=Holder.new())
    game = room.game
    first, _ = prepared.update_statement(type(game), game.pk, {"pool": "first"})
    then, _ = prepared.update_statement(type(game), game.pk, {"pool": "then", "variant": "v"})
    prepared.run_together([first, then])
    game.refresh_from_db()
    assert (game.pool, game.variant) == ("then", "v")
    # A statement that fails after one that did not: the error is Django's, raised by the call (on PostgreSQL, once
    # the answers are read together), and nothing of the call stays once its block is undone.
    failing, _ = prepared.update_statement(type(game), game.pk, {"kind": None})  # NOT NULL
    with pytest.raises(IntegrityError), transaction.atomic():
        prepared.run_together([first, failing])
    game.refresh_from_db()
    assert game.pool == "then"
    assert query.first(room.pk)[0] == room.pk  # the connection serves on


def test_they_are_refused_in_a_transaction_that_must_be_rolled_back():
    from django.db import transaction
    from django.db.transaction import TransactionManagementError

    room, _ = room_create(holder=Holder.new())
    with transaction.atomic():
        transaction.set_rollback(True)
        with pytest.raises(TransactionManagementError):
            query.first(room.pk)


def test_djangos_execute_wrappers_and_query_log_see_them():
    room, _ = room_create(holder=Holder.new())
    seen = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        assert query.first(room.pk)[0] == room.pk
    with CaptureQueriesContext(connection) as logged:
        assert query.first(room.pk)[0] == room.pk
    assert len(seen) == 1 and "WHERE" in seen[0] and len(logged) == 1


@pytest.mark.django_db(transaction=True)
def test_a_new_connection_gets_a_cursor_of_its_own():
    room, _ = room_create(holder=Holder.new())
    assert query.first(room.pk)[0] == room.pk
    first = connection.connection
    connection.close()
    assert query.first(room.pk)[0] == room.pk
    assert connection.connection is not first


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(exclude_categories=()), max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=15,
)
moments = st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(json_values, max_size=4) | st.dictionaries(st.text(max_size=6), json_values, max_size=4), moments)
def test_the_values_actions_write_are_adapted_as_django_adapts_them(value, moment):
    from games.models import Game

    state, changed_at = Game._meta.get_field("state"), Game._meta.get_field("changed_at")
    written = prepared.save_value(state, value, connection)
    djangos = state.get_db_prep_save(value, connection)
    if isinstance(djangos, str):  # SQLite: the same JSON value (orjson's text, or Django's where orjson refuses)
        assert json.loads(written) == json.loads(djangos)
    else:  # PostgreSQL: Django's own adapter, its text written by orjson where orjson can: the same JSON value
        assert type(written) is type(djangos) and written.obj == djangos.obj
        assert json.loads(written.dumps(written.obj)) == json.loads(djangos.dumps(djangos.obj))
    # Twice: the second time the same moment's text is remembered (SQLite).
    for _ in range(2):
        assert prepared.save_value(changed_at, moment, connection) == changed_at.get_db_prep_save(moment, connection)
    assert prepared.save_value(changed_at, None, connection) is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.text(max_size=12))
def test_integers_texts_and_nothing_are_written_as_django_writes_them(value):
    from games.models import Game, GameEvent, Seat

    fields = (
        [
            GameEvent._meta.get_field(name)
            for name in ("seq", "kind", "player", "game")  # unsigned, text, foreign keys
        ]
        + [Game._meta.get_field(name) for name in ("version", "status", "ending", "winner")]
        + [Seat._meta.get_field("index")]
    )
    for field in fields:
        try:
            djangos = field.get_db_prep_save(value, connection)
        except (TypeError, ValueError):  # a text in an integer column: refused there, written as it is here
            assert isinstance(value, str)
            continue
        written = prepared.save_value(field, value, connection)
        assert written == djangos and type(written) is type(djangos), field.name


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moments)
def test_datetimes_read_on_the_hot_paths_are_what_django_reads(moment):
    """On SQLite a datetime column of a statement built once is read by `sqlite_utc_datetime` instead of Django's
    converter: from the text Django writes, the same moment, made aware in UTC as Django makes it."""
    from games.models import Game

    field = Game._meta.get_field("changed_at")
    djangos = connection.ops.get_db_converters(field.get_col(Game._meta.db_table))
    functions = prepared.lean_converters(djangos, field, connection)
    stored = field.get_db_prep_save(moment, connection)
    if connection.vendor != "sqlite":
        assert functions == djangos  # PostgreSQL's driver gives aware datetimes itself
        return
    assert functions == [prepared.sqlite_utc_datetime]
    read = prepared.sqlite_utc_datetime(stored, None, connection)
    expected = connection.ops.convert_datetimefield_value(stored, None, connection)
    assert read == expected == moment and read.tzinfo == expected.tzinfo
    assert prepared.sqlite_utc_datetime(None, None, connection) is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moments)
def test_on_postgresql_statements_built_once_read_datetimes_as_django_reads_them(moment):
    """On PostgreSQL the kept cursor reads a timestamp with time zone through psycopg's own loader, not Django's:
    the same moment, in the same time zone object."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's loaders")
    sql = "SELECT %s::timestamptz, NULL::timestamptz"
    read = prepared.run(sql, [moment]).fetchone()
    with connection.cursor() as cursor:
        cursor.execute(sql, [moment])
        djangos = cursor.fetchone()
    assert read == djangos and read[0] == moment and read[0].tzinfo is djangos[0].tzinfo is UTC


@settings(max_examples=500, deadline=None)
@given(
    st.recursive(
        json_values | st.floats() | st.integers(min_value=-(2**80), max_value=2**80),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
        max_leaves=10,
    )
    # Written with characters past ASCII escaped and as they are (a lone surrogate then stays one in the text).
    .flatmap(lambda value: st.sampled_from([json.dumps(value), json.dumps(value, ensure_ascii=False)]))
    .flatmap(
        lambda text: st.sampled_from([text, text[:-1], f'"{text}"', "NaN", '"\\ud800"', '"\ud800"', '{"a": 1, "a": 2}'])
    )
)
def test_json_columns_read_on_the_hot_paths_are_what_django_reads(text):
    """A JSON column of a statement built once is read by orjson where it reads what the standard library reads, and
    by Django's converter otherwise: the same values, of the same types, for any text."""
    from games.models import Game

    field = Game._meta.get_field("state")
    column = field.get_col(Game._meta.db_table)
    djangos = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
    (function,) = prepared.lean_converters(djangos, field, connection)
    assert djangos == [field.from_db_value] and function is not field.from_db_value
    read, expected = function(text, column, connection), field.from_db_value(text, column, connection)
    assert _same(read, expected)
    assert function(None, column, connection) is None


def _same(read, expected) -> bool:
    """Equal, of the same types all the way down (NaN equal to NaN)."""
    if type(read) is not type(expected):
        return False
    if isinstance(read, list):
        return len(read) == len(expected) and all(_same(a, b) for a, b in zip(read, expected, strict=True))
    if isinstance(read, dict):
        return list(read) == list(expected) and all(_same(read[key], expected[key]) for key in read)
    if isinstance(read, float) and read != read:
        return expected != expected
    return read == expected


# Writes deferred (`writes_deferred`, the database thread's batches): on PostgreSQL an action's writes go with the next
# statement of the transaction, or with its COMMIT at the block's end. Each test commits for real, as a batch does.


def _game_update(game, **values):
    statement, _ = prepared.update_statement(type(game), game.pk, values)
    return statement


@pytest.mark.django_db(transaction=True)
def test_deferred_writes_are_read_back_in_order_and_committed_at_the_blocks_end():
    from django.db import transaction

    room, _ = room_create(holder=Holder.new())
    game = room.game
    committed = []
    with transaction.atomic(), prepared.writes_deferred():
        transaction.on_commit(lambda: committed.append(True))
        prepared.run_together([_game_update(game, pool="first"), _game_update(game, pool="second")])
        assert query.first(room.pk)[0] == room.pk  # a statement built once, after them
        assert type(game).objects.get(pk=game.pk).pool == "second"  # one of Django's
        prepared.run_together([_game_update(game, variant="v")])
        # Django reads a statement's row count at once: right, after writes that waited.
        assert type(game).objects.filter(pk=game.pk).update(kind=game.kind) == 1
        prepared.run_together([_game_update(game, pool="last")])
        assert not committed
    assert committed == [True] and connection.get_autocommit() and not connection.in_atomic_block
    game.refresh_from_db()
    assert (game.pool, game.variant) == ("last", "v")
    # The connection serves on, outside any batch: a write alone, then a read.
    prepared.run_together([_game_update(game, pool="after")])
    assert type(game).objects.get(pk=game.pk).pool == "after"


@pytest.mark.django_db(transaction=True)
def test_each_deferred_write_answers_with_its_own_row_block_after_block():
    from django.db import transaction

    games = [room_create(holder=Holder.new())[0].game for _ in range(3)]
    for block in range(3):
        answers, read = [], []
        with transaction.atomic(), prepared.writes_deferred():
            for game in games[: block + 1]:
                sql, params = _game_update(game, pool=f"{block}-{game.pk}")
                answers.append(prepared.run_together([(f"{sql} RETURNING pool", params)], answer=True))
            transaction.on_commit(lambda answers=answers, read=read: read.extend(answer() for answer in answers))
        assert read == [(f"{block}-{game.pk}",) for game in games[: block + 1]]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("then", ["a statement built once", "one of Django's", "the commit"])
def test_a_deferred_write_that_fails_fails_its_transaction_where_it_is_sent(then):
    from django.db import IntegrityError, transaction

    room, _ = room_create(holder=Holder.new())
    game = room.game
    sent_at = []
    with pytest.raises(IntegrityError), transaction.atomic(), prepared.writes_deferred():
        prepared.run_together([_game_update(game, pool="lost")])
        prepared.run_together([_game_update(game, kind=None)])  # NOT NULL
        sent_at.append("not yet")  # on PostgreSQL: SQLite, which defers nothing, raised it above
        if then == "a statement built once":
            query.first(room.pk)
        elif then == "one of Django's":
            type(game).objects.filter(pk=game.pk).update(variant="lost")
    assert sent_at == (["not yet"] if connection.vendor == "postgresql" else [])
    game.refresh_from_db()
    assert game.pool != "lost" and game.variant != "lost"  # nothing of the transaction stays
    assert query.first(room.pk)[0] == room.pk and connection.get_autocommit()  # the connection serves on


@pytest.mark.django_db(transaction=True)
def test_nothing_is_deferred_inside_a_savepoint_nor_where_django_sees_the_statements():
    from django.db import IntegrityError, transaction

    room, _ = room_create(holder=Holder.new())
    game = room.game
    failing = _game_update(game, kind=None)  # NOT NULL
    # Inside a savepoint the block would not end the transaction: its COMMIT is not the block's to send.
    with transaction.atomic(), transaction.atomic(), prepared.writes_deferred():  # noqa: SIM117 - the error's place
        with pytest.raises(IntegrityError), transaction.atomic():
            prepared.run_together([failing])  # raised here, inside its savepoint
    # A query log sees every statement as it runs.
    with CaptureQueriesContext(connection) as logged, transaction.atomic(), prepared.writes_deferred():  # noqa: SIM117
        with pytest.raises(IntegrityError), transaction.atomic():
            prepared.run_together([failing])
    assert any("UPDATE" in query["sql"] for query in logged)


class Driver:
    """What `corked` asks of the driver's connection (psycopg's): the descriptor of its socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def fileno(self) -> int:
        return self.sock.fileno()


def received(peer: socket.socket, size: int) -> bytes:
    peer.settimeout(30)
    data = b""
    while len(data) < size:
        data += peer.recv(size - len(data))
    return data


@pytest.mark.skipif(not hasattr(socket, "TCP_CORK"), reason="TCP_CORK is Linux's")
def test_a_tcp_socket_corked_holds_what_is_written_and_sends_it_when_the_block_ends():
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        peer, _ = server.accept()
        with peer:
            kept = prepared._Kept(Driver(client), None)
            for _ in range(2):  # the second time with the socket's family known
                with prepared.corked(kept):
                    assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_CORK) == 1
                    client.sendall(b"one ")
                    client.sendall(b"two ")
                assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_CORK) == 0
                assert received(peer, 8) == b"one two "
            assert kept.family == socket.AF_INET
            client.sendall(b"!")  # the descriptor is still the connection's own, open
            assert received(peer, 1) == b"!"


def test_a_unix_socket_is_left_as_it_is():
    one, other = socket.socketpair()
    with one, other:
        kept = prepared._Kept(Driver(one), None)
        with prepared.corked(kept):
            one.sendall(b"x")
        assert kept.family == socket.AF_UNIX
        assert received(other, 1) == b"x"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="writes are deferred on PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_blocks_end_leaves_the_connection_uncorked():
    from django.db import transaction

    game = room_create(holder=Holder.new())[0].game
    with transaction.atomic(), prepared.writes_deferred():
        prepared.run_together([_game_update(game, pool="corked")])
    sock = socket.socket(fileno=connection.connection.fileno())
    try:
        if sock.family != socket.AF_UNIX:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CORK) == 0
    finally:
        sock.detach()
    game.refresh_from_db()
    assert game.pool == "corked"
