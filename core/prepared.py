"""Queries built once: the ORM writes a query's SQL and its converters the first time, and each later call only
runs it with its own values.

Building a queryset's SQL costs many times what running it does on a hot path (a line protocol's state read, asked
for thousands of times a second). A `Prepared` query is written by an ordinary queryset with `values_list`, built
around stand-in values; each call puts its own values in their places (adapted by the fields, as the ORM would) and
converts the row's columns as the ORM's own iteration would. Statements built once run on the driver's cursor
(`run`), without the layers Django's cursor puts around each one.
"""

import contextlib
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import cache
from typing import Any

import orjson
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.sqlite3.base import SQLiteCursorWrapper
from django.db.models import (
    BooleanField,
    CharField,
    DateTimeField,
    Field,
    ForeignKey,
    IntegerField,
    JSONField,
    Model,
    QuerySet,
)


class _Kept:
    """A connection's cursor for the statements built once, and their SQL as its driver reads it; on PostgreSQL, while
    writes are deferred (`writes_deferred`), the writes that wait (each with the cursor to run it on) and the pipeline
    that holds those sent but not yet answered."""

    __slots__ = ("connection", "cursor", "sql", "deferring", "waiting", "pipeline", "answers", "answered", "family")

    def __init__(self, connection: Any, cursor: Any):
        self.connection, self.cursor = connection, cursor
        # The address family of the connection's socket, once `corked` has asked (a TCP one can be corked).
        self.family: int | None = None
        self.sql: dict[str, str] = {}
        self.deferring = False
        self.waiting: list[tuple[Any, str, list]] = []
        self.pipeline: contextlib.ExitStack | None = None
        # The cursors of the answers of deferred writes (`run_together`), kept from one block to the next, and how many
        # the current block has taken.
        self.answers: list[Any] = []
        self.answered = 0

    def answer_cursor(self, db: BaseDatabaseWrapper) -> Any:
        """A cursor for the answer of a deferred write: one of the kept ones that this block has not taken yet."""
        if self.answered == len(self.answers):
            self.answers.append(db.create_cursor())
        self.answered += 1
        return self.answers[self.answered - 1]


def _kept(db: BaseDatabaseWrapper) -> _Kept:
    kept: _Kept | None = getattr(db, "_prepared_kept", None)
    # The connection is replaced when it is closed (CONN_MAX_AGE, an error): then a cursor of the new one.
    if kept is None or kept.connection is not db.connection:
        db.ensure_connection()
        # On SQLite a plain cursor of the driver, which reads its own placeholders ("?"), where Django's converts
        # each statement's "%s" on every call; elsewhere the cursor Django's wraps.
        driver_cursor = db.connection.cursor() if db.vendor == "sqlite" else db.create_cursor()
        if db.vendor == "postgresql":
            _lean_loaders(db, driver_cursor)
        kept = _Kept(db.connection, driver_cursor)
        db._prepared_kept = kept  # type: ignore[attr-defined]
    return kept


def _lean_loaders(db: BaseDatabaseWrapper, cursor: Any) -> None:
    """On PostgreSQL, with the connection's time zone UTC and Django's too: the kept cursor reads a timestamp with time
    zone through psycopg's own loader (in C), which gives the very datetime Django's gives (Django's calls it, then
    sets the time zone that it already has, in Python: a game's locking read has six such columns, 1.5 µs each)."""
    from psycopg import adapters, postgres, pq

    if settings.USE_TZ and db.timezone is UTC and db.connection.info.timezone is UTC:
        oid = postgres.types["timestamptz"].oid
        cursor.adapters.register_loader(oid, adapters.get_loader(oid, pq.Format.TEXT))


def _driver_sql(db: BaseDatabaseWrapper, sql: str) -> str:
    """Return `sql` (with Django's "%s" placeholders) as the driver reads it, converted as Django's cursor does."""
    if db.vendor != "sqlite":
        return sql
    return SQLiteCursorWrapper.convert_query(db.connection.cursor(factory=SQLiteCursorWrapper), sql)


def run(sql: str, params: list | tuple, db: BaseDatabaseWrapper | None = None) -> Any:
    """Run a statement built once (with Django's "%s" placeholders) on this thread's connection and return the cursor
    to read its result from, before the next statement.

    Straight on the driver's cursor, kept for the connection, the SQL converted to the driver's placeholders once,
    errors raised as Django's (`wrap_database_errors`) and refused in a transaction that must be rolled back, as
    Django's cursor does: its layers cost a statement of an action about as much as SQLite takes to run it
    (BENCHMARKS.md). When Django would see the statement (DEBUG, a test counting queries, an execute wrapper), it
    goes through Django's cursor instead."""
    if db is None:
        db = connections[DEFAULT_DB_ALIAS]
    if _seen_by_django(db):
        django_cursor = db.cursor()
        django_cursor.execute(sql, params)
        return django_cursor
    kept = _kept(db)
    driver_sql = kept.sql.get(sql)
    if driver_sql is None:
        driver_sql = kept.sql[sql] = _driver_sql(db, sql)
    db.validate_no_broken_transaction()
    with db.wrap_database_errors:
        _release(kept)
        kept.cursor.execute(driver_sql, params)
        if kept.pipeline is not None:
            _send(kept)  # this statement and the writes that waited, in one trip; its answer read
    return kept.cursor


def _seen_by_django(db: BaseDatabaseWrapper) -> bool:
    """Whether Django would see the statements run on this connection (DEBUG's query log, a test counting queries,
    an execute wrapper other than `writes_deferred`'s own): then they go through Django's cursor."""
    return bool(db.queries_logged or any(wrapper is not _sent_first for wrapper in db.execute_wrappers))


class Prepared:
    """A values_list query whose SQL is built once per database vendor: `build(*stand_ins)` returns it, filtered by
    the fields given with their stand-in values (`fields`: a list of (model field, stand-in value)). The columns whose
    indexes are `unconverted` come as the database gives them (a JSON column's text, to be compared with a kept
    one: games/positions.py), for `convert` to convert when need be."""

    def __init__(
        self, build: Callable[..., QuerySet], fields: list[tuple[Field, Any]], *, unconverted: tuple[int, ...] = ()
    ):
        self.build, self.fields, self.unconverted = build, fields, frozenset(unconverted)
        self._built: dict[str, tuple[str, list, list[int], dict]] = {}
        self._later: dict[str, dict] = {}  # per vendor, the converters of the unconverted columns

    def _compiled(self, connection) -> tuple[str, list, list[int], dict]:
        built = self._built.get(connection.vendor)
        if built is None:
            stand_ins = [value for _, value in self.fields]
            compiler = self.build(*stand_ins).query.get_compiler(connection=connection)
            sql, params = compiler.as_sql()
            prepared = [field.get_db_prep_value(value, connection, prepared=False) for field, value in self.fields]
            places = [list(params).index(value) for value in prepared]
            # {column index: (converters, expression)}, as the ORM's iteration applies them.
            converters = {
                index: (lean_converters(functions, expression.output_field, connection), expression)
                for index, (functions, expression) in compiler.get_converters(
                    [column for column, _, _ in compiler.select]
                ).items()
            }
            self._later[connection.vendor] = {index: converters.pop(index, ((), None)) for index in self.unconverted}
            built = self._built[connection.vendor] = (sql, list(params), places, converters)
        return built

    def convert(self, index: int, value: Any) -> Any:
        """Return the value of the unconverted column `index` as the ORM gives it."""
        connection = connections[DEFAULT_DB_ALIAS]
        self._compiled(connection)
        functions, expression = self._later[connection.vendor][index]
        for function in functions:
            value = function(value, expression, connection)
        return value

    def first(self, *values: Any) -> tuple | None:
        """Return the first row with these values in place of the stand-ins, its columns converted, or None."""
        connection = connections[DEFAULT_DB_ALIAS]
        sql, params, places, converters = self._compiled(connection)
        params = params.copy()
        for (field, _), place, value in zip(self.fields, places, values, strict=True):
            params[place] = field.get_db_prep_value(value, connection, prepared=False)
        row = run(sql, params, connection).fetchone()
        if row is None:
            return None
        row = list(row)
        for index, (functions, expression) in converters.items():
            for function in functions:
                row[index] = function(row[index], expression, connection)
        return tuple(row)


@cache
def _update(model: type[Model], names: tuple[str, ...], vendor: str) -> tuple[str, list[Field]]:
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    fields = [model._meta.get_field(name) for name in names]
    columns = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    return f"UPDATE {quote(model._meta.db_table)} SET {columns} WHERE {quote(model._meta.pk.column)} = %s", fields


def sqlite_utc_datetime(value: object, expression: object, db: object) -> datetime | None:
    """What Django's SQLite converter of a datetime column gives when the database's time is UTC (the stored text,
    parsed and made aware in UTC), without its general `make_aware`."""
    if value is None:
        return None
    # The SQLite driver parses the column (Django registers its parser for the type); text if it did not.
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# A text's UTF-8 bytes with each digit as "0" and every other byte as " " (a digit is one byte in UTF-8, and no byte
# of another character is one): a run of 19 "0" there is a run of 19 digits, a number that may be past 64 bits, which
# orjson reads as a float where the standard library reads an integer. Found so in a tenth of the time a regular
# expression takes (`\d{19}` tried at every place of a position's text: 26 µs for 1.4 KB, this 2.6 µs).
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def _long_number(text: str) -> bool:
    """Whether `text` has a run of 19 digits or more, or is no UTF-8 (a lone surrogate, which orjson refuses too)."""
    if len(text) < len(_LONG_RUN):
        return False  # a short text (two clocks' readings, the offers of a draw) cannot hold one
    try:
        return _LONG_RUN in text.encode().translate(_DIGITS_AS_ZERO)
    except UnicodeEncodeError:
        return True


def _json_reader(from_db_value: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    """A JSON column's converter that gives what Django's (`from_db_value`) gives: a text read by orjson (a position in
    a fifth of the standard library's time), and by Django's converter whatever orjson would read otherwise or
    refuses (a number past 64 bits, NaN, a lone surrogate, what is no JSON) and what is not a text."""

    def read(value: Any, expression: Any, db: Any) -> Any:
        if value.__class__ is str and not _long_number(value):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass
        return from_db_value(value, expression, db)

    return read


def lean_converters(functions: list, field: object, db: BaseDatabaseWrapper) -> list:
    """The converters of a column read on a hot path: Django's (`functions`), but on SQLite with the database's time
    in UTC a datetime column's converter is `sqlite_utc_datetime`, and a JSON column's without a decoder of its own
    is `_json_reader`'s, each of which gives the same for less."""
    sqlite_utc = db.vendor == "sqlite" and db.timezone == UTC and settings.USE_TZ
    if sqlite_utc and isinstance(field, DateTimeField) and functions == [db.ops.convert_datetimefield_value]:
        return [sqlite_utc_datetime]
    if isinstance(field, JSONField) and field.decoder is None and functions == [field.from_db_value]:
        return [_json_reader(field.from_db_value)]
    return functions


@cache
def _plain(field: Field, vendor: str) -> tuple[type | None, type[int] | None]:
    """The class of the values the field writes as they are given, or nearly, as None too: int in an integer or foreign
    key column, str in a text column; or None. Most values an action writes are such. For an integer column, also
    what Django's adaptation makes of an integer on this database: the integer itself (int), or the integer in a class
    of the column's size (psycopg 3's Int2, Int4 or Int8, which Django uses on PostgreSQL for all but automatic keys);
    None if neither. Learned once from Django's own adaptation of an integer."""
    target = field.target_field if isinstance(field, ForeignKey) else field
    if isinstance(target, IntegerField) and not isinstance(target, BooleanField):
        adapted = field.get_db_prep_save(1, connections[DEFAULT_DB_ALIAS])
        kind = type(adapted)
        integer = kind if issubclass(kind, int) and not issubclass(kind, bool) and adapted == 1 else None
        return int, integer
    return (str if isinstance(target, CharField) else None), None


# The latest datetime written on SQLite, and its text: an action writes the same moment several times (when it was
# made, in its log's entries, and as the game's change), each 2 us to write out. Held, so that its id is not reused.
_last_utc: tuple[datetime, str] = (datetime.min.replace(tzinfo=UTC), str(datetime.min))


def _utc_text(value: datetime) -> str:
    """The text Django writes on SQLite of an aware datetime in UTC: `str(value.replace(tzinfo=None))`."""
    global _last_utc
    last = _last_utc
    if last[0] is value:
        return last[1]
    text = value.isoformat(" ")[:-6]  # without its offset, "+00:00"
    _last_utc = (value, text)
    return text


def save_value(field: Field, value: Any, db: BaseDatabaseWrapper) -> Any:
    """Return `field.get_db_prep_save(value, db)`. A text or None in a text column, and None in an integer or
    foreign key column, are written as they are, whatever the database; an integer there as Django's adaptation
    leaves it (`_plain`). On PostgreSQL an aware datetime is written as it is, as Django's adaptation leaves it
    there. On SQLite, the values every action writes are adapted without Django's layers: an aware datetime in UTC as
    the text Django writes, and a JSON object or array as its JSON text, written by orjson (a position in a tenth of
    the standard library's time; compact, and characters past ASCII as they are, where Django escapes them: the same
    JSON value). On PostgreSQL, a JSON object or array is Django's adapter with its text written by orjson. orjson
    refuses what is not plain JSON (a key that is not text, an integer past 64 bits, a lone surrogate), and Django
    writes those; a number that is not finite, which PostgreSQL refuses too, is no value of a game."""
    kind = value.__class__
    plain, integer = _plain(field, db.vendor)
    if plain is not None and (value is None or kind is plain):
        if kind is not int or integer is int:
            return value
        if integer is not None:
            return integer(value)
    if db.vendor == "sqlite":
        if kind is datetime and value.tzinfo is UTC and isinstance(field, DateTimeField):
            # The connection's time zone is UTC only while USE_TZ is on (Django forgets it when the setting changes).
            if db.timezone is UTC:
                return _utc_text(value)
        elif (kind is dict or kind is list) and isinstance(field, JSONField) and field.encoder is None:
            try:
                return orjson.dumps(value).decode()
            except TypeError:  # orjson.JSONEncodeError
                pass
    elif db.vendor == "postgresql" and kind is datetime and value.tzinfo is not None:
        if isinstance(field, DateTimeField):
            return value  # an aware datetime: Django's adaptation on PostgreSQL leaves it as it is
    elif db.vendor == "postgresql" and (kind is dict or kind is list) and isinstance(field, JSONField):
        try:
            text = None if field.encoder is not None else orjson.dumps(value)
        except TypeError:  # orjson.JSONEncodeError
            text = None
        if text is not None:
            # Django's adapter, its text written now (psycopg would write it with the standard library when the
            # statement runs): the same JSON value in a jsonb column.
            adapted = field.get_db_prep_save(value, db)
            adapted.dumps = lambda obj: text
            return adapted
    return field.get_db_prep_save(value, db)


def update(model: type[Model], pk: Any, values: dict[str, Any]) -> list[Any]:
    """Set these fields (by name) of the row `pk` (`model.objects.filter(pk=pk).update(**values)`, for plain
    values), the UPDATE written once per model, fields and database vendor, each value adapted by its field; return
    the values as adapted, in the order given."""
    statement, params = update_statement(model, pk, values)
    run(*statement)
    return params


def update_statement(model: type[Model], pk: Any, values: dict[str, Any]) -> tuple[tuple[str, list], list[Any]]:
    """`update`'s statement (its SQL and parameters) to be run later (`run_together`), and the values as adapted."""
    db = connections[DEFAULT_DB_ALIAS]
    sql, fields = _update(model, tuple(values), db.vendor)
    params = [save_value(field, value, db) for field, value in zip(fields, values.values(), strict=True)]
    return (sql, [*params, model._meta.pk.get_db_prep_value(pk, db)]), params


def run_together(statements: list[tuple[str, list]], *, answer: bool = False) -> Callable[[], Any] | None:
    """Run statements built once whose results no one reads (writes), in their order, on this thread's connection;
    with `answer`, return a function that gives the last statement's row (what its RETURNING clause returns) once it
    has been sent: at once, or once the transaction has committed where the writes were deferred (`writes_deferred`),
    and then only until the next such block begins (its cursor serves that block's answers).

    On PostgreSQL in one trip to the server (psycopg's pipeline mode): each statement is sent without waiting for the
    answer of the one before, and the answers are read together at the end, where an error of any of them is raised,
    as Django's. A write of an action waited for its own answer, each trip a wake-up of the server's process and of
    ours. On SQLite, which waits for no network, one after the other (`run`), as when Django sees them."""
    if not statements:
        return None
    db = connections[DEFAULT_DB_ALIAS]
    kept = _kept(db) if db.vendor == "postgresql" and not _seen_by_django(db) else None
    deferred = kept is not None and kept.deferring
    if not deferred and (len(statements) == 1 or kept is None):
        cursor = None
        for sql, params in statements:
            cursor = run(sql, params, db)
        if answer and cursor is not None:
            row = cursor.fetchone()
            return lambda: row
        return None
    db.validate_no_broken_transaction()
    # The answer's statement on a cursor of its own: the kept one's result is the next statement's. While writes are
    # deferred, one kept for such answers: each is read by the block's commit (its on_commit), before the next block.
    last = kept.cursor if not answer else kept.answer_cursor(db) if deferred else db.create_cursor()
    with db.wrap_database_errors:
        if deferred:
            # Sent with what comes next in the transaction (`writes_deferred`).
            kept.waiting.extend((kept.cursor, sql, params) for sql, params in statements[:-1])
            kept.waiting.append((last, *statements[-1]))
        else:
            with kept.connection.pipeline():
                for sql, params in statements[:-1]:
                    kept.cursor.execute(sql, params)
                last.execute(*statements[-1])
    return last.fetchone if answer else None


@contextlib.contextmanager
def writes_deferred(db: BaseDatabaseWrapper | None = None) -> Iterator[None]:
    """Inside a transaction that the block ends with its commit (the database thread's batch of calls, within its
    `transaction.atomic()`): on PostgreSQL, the writes of `run_together` wait to be sent with the statement that comes
    next, in one trip to the server: the next action's locking read (`run`), a statement of Django's (an execute
    wrapper sends them first), or the transaction's COMMIT, sent at the block's end. The transaction's BEGIN goes with
    its first statement. A batch of k actions then makes k + 1 trips instead of 2k + 2, each a wake-up of the server's
    process and of ours (BENCHMARKS.md). An error of a write is raised where it is sent, as Django's: in what comes
    next, which fails the transaction as a whole (the database thread then runs each call again, alone). Elsewhere,
    and when Django sees the statements (`run`), nothing is deferred."""
    db = db if db is not None else connections[DEFAULT_DB_ALIAS]
    # Directly inside the transaction's own block (the outermost, which commits), not inside a savepoint's.
    outermost = db.in_atomic_block and db.commit_on_exit and not db.savepoint_ids
    if db.vendor != "postgresql" or not outermost or _seen_by_django(db):
        yield
        return
    kept = _kept(db)
    kept.deferring = True
    kept.answered = 0
    _open(kept)
    try:
        with db.execute_wrapper(_sent_first):
            yield
        if kept.pipeline is not None or kept.waiting:
            with db.wrap_database_errors:
                with corked(kept):
                    _release(kept)
                    if kept.connection.info.transaction_status != _idle():
                        # Django's commit then finds the transaction ended and has nothing to send.
                        kept.cursor.execute("COMMIT", prepare=False)
                _send(kept)
    finally:
        kept.deferring = False
        # If the block failed: the writes that wait are dropped, what was sent is answered (its errors, if any, not
        # raised over the block's own), and the transaction rolls back.
        kept.waiting.clear()
        _send(kept, abandoned=True)


# Linux's TCP_CORK: a socket so set holds what is written to it until it is unset (or for 200 ms at most).
_TCP_CORK = getattr(socket, "TCP_CORK", None)


@contextlib.contextmanager
def corked(kept: _Kept) -> Iterator[None]:
    """Hold what the block writes to the connection's socket until it ends, then send it at once: the writes that wait
    at a batch's end and its COMMIT. psycopg's pipeline sends each statement as it is executed, and on TCP each `send`
    carries its statement through the kernel to the server and wakes the server's process: those at the end of a batch
    of eight actions took about a seventh of the database thread's time (BENCHMARKS.md). Corked, they are copied to the
    socket and leave together. Only on TCP and where the system has TCP_CORK (Linux); elsewhere the block runs as it
    is. The block must not wait for an answer: what it asks would not leave."""
    if _TCP_CORK is None:
        yield
        return
    # Socket objects over the connection's descriptor, detached again after: the descriptor stays libpq's.
    fd = kept.connection.fileno()
    if kept.family is None:
        probe = socket.socket(fileno=fd)
        kept.family = probe.family
        probe.detach()
    if kept.family not in (socket.AF_INET, socket.AF_INET6):
        yield
        return
    sock = socket.socket(kept.family, socket.SOCK_STREAM, 0, fd)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, _TCP_CORK, 1)
        yield
    finally:
        with contextlib.suppress(OSError):  # the connection broke meanwhile: its error is the block's
            sock.setsockopt(socket.IPPROTO_TCP, _TCP_CORK, 0)
        sock.detach()


@cache
def _idle() -> Any:
    from psycopg.pq import TransactionStatus

    return TransactionStatus.IDLE


class DeferredWritesAbandoned(Exception):
    """What a pipeline of deferred writes is told when the transaction they belong to fails before they are sent."""


def _release(kept: _Kept) -> None:
    """Send the writes that wait (`run_together`), one right after the other: in the pipeline, unanswered until it is
    closed (`_send`), which the caller does with what it sends next. Held back until then, rather than sent as each
    action makes them, they reach the server together: each statement sent on its own woke its process (and the
    server's process, woken, took the core from ours), once per action instead of once per batch."""
    if not kept.waiting:
        return
    if kept.pipeline is None:
        _open(kept)
    waiting, kept.waiting = kept.waiting, []
    for cursor, sql, params in waiting:
        cursor.execute(sql, params)


def _open(kept: _Kept) -> None:
    pipeline = contextlib.ExitStack()
    pipeline.enter_context(kept.connection.pipeline())
    kept.pipeline = pipeline


def _send(kept: _Kept, *, abandoned: bool = False) -> None:
    """Send what waits in the pipeline and read every answer, an error among them raised here (unless the transaction
    is `abandoned`: then it is not raised over the error that abandoned it)."""
    pipeline, kept.pipeline = kept.pipeline, None
    if pipeline is not None and abandoned:
        pipeline.__exit__(DeferredWritesAbandoned, DeferredWritesAbandoned(), None)
    elif pipeline is not None:
        pipeline.close()


def _sent_first(execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
    """Django's statements while writes are deferred: those are sent first (and their answers read: Django reads a
    statement's row count right away, which a pipeline does not give)."""
    db = context["connection"]
    kept = getattr(db, "_prepared_kept", None)
    if kept is not None and (kept.pipeline is not None or kept.waiting):
        with db.wrap_database_errors:
            _release(kept)
            _send(kept)
    return execute(sql, params, many, context)
