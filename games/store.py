"""The three statements of every game action, built once: lock the game, save it, add an entry to its log (on
PostgreSQL the last two are one statement); the users in its seats, read once per game and process; and what a game's
end writes of each seat.

Through the ORM, most of an action's CPU went to building the same SQL again each time (the queryset, its compiler,
the model's save machinery), many times what running the statements costs (BENCHMARKS.md). Here each statement is
written once per database vendor from the models' own metadata (table, columns, quoting, FOR UPDATE where the
database has it), and each action only adapts its values through the fields, as the ORM does, and runs it.
Everything else that writes games (pairing, the admin, recomputations) uses the ORM.

A process holds the games it wrote last, each with the row its write left (`_held`): an action whose locking read gives
that very row takes the game's model as the write left it, instead of converting the row's columns and building the
model again (most of the read's cost). Any other writer, another process or connection, an update that is no action's,
leaves another row, whose columns the game's model then takes (the held one, if any: `_from_row`). On SQLite the row
is compared whole; on PostgreSQL, which rewrites JSON (jsonb) so that the row read back is not the text written, by
the identity of the row's version (the transaction that wrote it and its place, which the action's UPDATE returns),
and the rules' state of its position is held with it (on SQLite games/positions.py keeps it by its text).
"""

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from functools import cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import DateTimeField, Field
from django.db.models.base import ModelState
from django.db.models.expressions import Col

from core import prepared

from . import positions
from .models import Game, GameEvent, Seat
from .rules import find_engine

# A game's columns that actions change; the others are set when the game is created.
GAME_SAVED = (
    "status",
    "state",
    "version",
    "deadline",
    "winner",
    "ending",
    "started_at",
    "finished_at",
    "clocks",
    "draw_offers",
    "changed_at",
    "acted_at",
)
EVENT_FIELDS = ("game", "seq", "kind", "player", "data", "created_at")
_ATTNAMES = {name: Game._meta.get_field(name).attname for name in GAME_SAVED}
_STATE = Game._meta.concrete_fields.index(Game._meta.get_field("state"))  # its place in the locking query's row


# The users in a started game's seats never change: each process remembers them for the latest games it served, so
# that an action reads them once per game, not once per action.
_seated: dict[str, list[int]] = {}
SEATED_REMEMBERED = 50_000


@cache
def _locking(vendor: str) -> tuple[str, list[str], list[tuple[int, Col, list]]]:
    """Return the locking query, the names of the columns it reads, and each column that has converters (and the
    position's, which may be kept) with its place and its converters."""
    db = connections[DEFAULT_DB_ALIAS]
    sql, _ = Game.objects.filter(public_id="").query.sql_with_params()
    # Built outside a transaction, where the ORM refuses FOR UPDATE: the clause is added here, as the ORM would.
    if db.features.has_select_for_update:
        sql = f"{sql} {db.ops.for_update_sql()}"
    if vendor == "postgresql":
        sql = sql.replace("SELECT ", f"SELECT {_VERSION_OF_ROW}, ", 1)
    fields = Game._meta.concrete_fields
    if vendor == "sqlite":
        # A game has six datetime columns, read on every action: read as the text stored, which the driver would
        # otherwise parse at every read (Django registers its parser for the type), where a game this process holds
        # needs none of them (`_held`); converted only for a model built from its row, without Django's layers.
        selected, _, rest = sql.partition(" FROM ")
        for field in fields:
            if isinstance(field, DateTimeField):
                name = f"{db.ops.quote_name(Game._meta.db_table)}.{db.ops.quote_name(field.column)}"
                selected = selected.replace(name, f"CAST({name} AS TEXT)", 1)
        sql = f"{selected} FROM {rest}"
    converters = []
    for index, field in enumerate(fields):
        column = field.get_col(Game._meta.db_table)
        functions = prepared.lean_converters(db.ops.get_db_converters(column) + column.get_db_converters(db), field, db)
        if functions or index == _STATE:
            converters.append((index, column, functions))
    return sql, [field.attname for field in fields], converters


@cache
def _locking_together(vendor: str) -> tuple[str, int]:
    """The locking query of several games at once, in the order of their ids (two processes' batches that lock some of
    the same games then take them in the same order), and the place of the public id in its rows."""
    sql, _, _ = _locking(vendor)
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    pk = f"{quote(Game._meta.db_table)}.{quote(Game._meta.pk.column)}"
    filtered, _, locking = sql.partition(" = %s ")
    public_id = Game._meta.concrete_fields.index(Game._meta.get_field("public_id")) + _VERSION_OF_ROW.count(",") + 1
    return f"{filtered} = ANY(%s) ORDER BY {pk} {locking}", public_id


class _Ahead(threading.local):
    """The games of the database thread's batch, locked together by the batch's first locking read (`locked_together`):
    those not read yet, and the rows read for them."""

    games: set[str] | None = None
    rows: dict[str, tuple] | None = None


_ahead = _Ahead()
# The database calls whose game can be told from their arguments, and how (`locks_ahead`).
_games_of: dict[Callable[..., Any], Callable[[tuple, dict], str | None]] = {}


def locks_ahead(function: Callable[..., Any], game_of: Callable[[tuple, dict], str | None]) -> None:
    """Note that `function`, a database call, makes an action in the game whose public id `game_of(args, kwargs)`
    gives (None: not one it can tell), its first statement that game's locking read (`game_locked`)."""
    _games_of[function] = game_of


@contextlib.contextmanager
def locked_together(calls: list[Any]) -> Iterator[None]:
    """Inside the transaction of a batch of database calls (core.dbthread.inside_each_batch): on PostgreSQL, where each
    locking read is a trip to the server, a batch whose calls are all actions (`locks_ahead`) in several games locks
    and reads them all with its first locking read, and each action's own read takes its game's row from it, once:
    a batch of k actions makes two trips instead of k + 1 (its writes and COMMIT, core.prepared.writes_deferred).
    Only the first read of each game is taken so, before any call of the batch has written it: the calls are actions,
    and an action reads its game before it writes it."""
    games: set[str] = set()
    if connections[DEFAULT_DB_ALIAS].vendor == "postgresql":
        for call in calls:
            game_of = _games_of.get(call.function)
            public_id = game_of(call.args, call.kwargs) if game_of is not None else None
            if not isinstance(public_id, str):
                games.clear()
                break
            games.add(public_id)
    _ahead.games, _ahead.rows = (games if len(games) > 1 else None), None
    try:
        yield
    finally:
        _ahead.games = _ahead.rows = None


def _locked_row(public_id: str, sql: str, db: Any) -> tuple | None:
    """The game's row, locked: read alone, or with the other games of the batch (`locked_together`)."""
    games = _ahead.games
    if games is None or public_id not in games:
        return prepared.run(sql, [public_id], db).fetchone()
    if _ahead.rows is None:
        together, place = _locking_together(db.vendor)
        _ahead.rows = {row[place]: row for row in prepared.run(together, [sorted(games)], db).fetchall()}
    games.discard(public_id)
    return _ahead.rows.pop(public_id, None)


@cache
def _seats(vendor: str) -> str:
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    user, game, index = (quote(Seat._meta.get_field(name).column) for name in ("user", "game", "index"))
    return f"SELECT {user} FROM {quote(Seat._meta.db_table)} WHERE {game} = %s ORDER BY {index}"


def seated_remember(game: Game) -> None:
    """Remember the users in the seats of a game that has started (its seats are taken for good)."""
    if game.status != Game.Status.WAITING:
        _remember(game.public_id, list(game.seat_user_ids))


def _remember(public_id: str, users: list[int]) -> None:
    if len(_seated) >= SEATED_REMEMBERED:
        del _seated[next(iter(_seated))]  # the oldest
    _seated[public_id] = users


def seated(public_id: str) -> list[int]:
    """Return the user in each seat of a game that has started, seat 0 first (remembered once read)."""
    users = _seated.get(public_id)
    if users is None:
        users = list(Seat.objects.filter(game__public_id=public_id).order_by("index").values_list("user", flat=True))
        _remember(public_id, users)
    return list(users)


@cache
def _insert(vendor: str, rows: int = 1) -> tuple[str, list[Field]]:
    """The INSERT of `rows` entries of a game's log, and the fields of each entry's values."""
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    fields = [GameEvent._meta.get_field(name) for name in EVENT_FIELDS]
    columns = ", ".join(quote(field.column) for field in fields)
    values = ", ".join([f"({', '.join(['%s'] * len(fields))})"] * rows)
    return f"INSERT INTO {quote(GameEvent._meta.db_table)} ({columns}) VALUES {values}", fields


@cache
def _logged_with(rows: int, update: str) -> str:
    """On PostgreSQL, one statement that adds `rows` entries to a game's log and runs the game's `update`."""
    sql, _ = _insert("postgresql", rows)
    return f"WITH {connections[DEFAULT_DB_ALIAS].ops.quote_name('logged')} AS ({sql}) {update}"


# How many games a process holds at most (the latest it wrote), each with what tells the row its write left (SQLite: the
# row as its read gives it; PostgreSQL: the row version's identity, `_VERSION_OF_ROW`), and on PostgreSQL the rules'
# state of its position.
HELD = 10_000
_held: dict[str, tuple[tuple, Game, object]] = {}
# On PostgreSQL, which version of a row a read gives: the transaction that wrote it and its place in the table. Any
# UPDATE, by any transaction (the writer's own included), writes a new version in a new place; a place freed by VACUUM
# and taken again is taken by another transaction. An action's UPDATE returns it; its locking read reads it.
_VERSION_OF_ROW = "xmin::text, ctid::text"


# The place of each column an action saves in the locking query's row.
_PLACES = {name: Game._meta.concrete_fields.index(Game._meta.get_field(name)) for name in GAME_SAVED}


def _written_row(row: tuple, names: tuple[str, ...], written: list) -> tuple:
    """On SQLite, the row the locking query gives once `row` has these columns written with these values (as adapted:
    the locking query reads every column as the value written, datetime columns included)."""
    values = list(row)
    for name, value in zip(names, written, strict=True):
        values[_PLACES[name]] = value
    return tuple(values)


def _snapshot(game: Game) -> Game:
    """A model of its own with what `game` holds now (its columns, its seats' users, what is stored of it)."""
    copy = Game.__new__(Game)
    copy.__dict__.update(game.__dict__)
    copy._state = ModelState()
    copy._state.db, copy._state.adding = game._state.db, False
    # What is stored of it is what it holds now: noted again when an action takes it (`game_locked`), not held meanwhile
    # (a dictionary a held game less for the garbage collector to walk).
    for transient in ("_kept_state", "_prefetched_objects_cache", "_row", "_stored_values"):
        copy.__dict__.pop(transient, None)
    copy._seat_user_ids = list(game.seat_user_ids)
    return copy


def _hold(public_id: str, row: tuple, game: Game, state: object = None) -> None:
    _held.pop(public_id, None)
    if len(_held) >= HELD:
        del _held[next(iter(_held))]  # the oldest
    _held[public_id] = (row, game, state)


def game_locked(public_id: str) -> Game | None:
    """Return the game, its row locked until the transaction ends (select_for_update()), with the user id in each of
    its seats (`Game.seat_user_ids`: read once a game has started, then remembered), or None."""
    db = connections[DEFAULT_DB_ALIAS]
    sql, names, converters = _locking(db.vendor)
    row = _locked_row(public_id, sql, db)
    held = _held.pop(public_id, None)
    if row is None:
        return None
    if db.vendor == "postgresql":
        # The version of the row it is, then the row; PostgreSQL rewrites JSON (jsonb): no position text is kept.
        written, row = row[:2], row[2:]
        kept = None
    else:
        written = row
        # The position this process wrote last, if it is still the one stored: taken as kept, not decoded again.
        kept = positions.take(public_id, row[_STATE])
    if held is not None and held[0] == written:
        # The very row this process wrote last: its model, as that write left it, instead of building it again.
        game = held[1]
        game._row = written
        _remember_stored(game)
        if held[2] is not None:
            game._kept_state = held[2]  # no read has it: reads peek at positions, which hold none of these
        else:
            _give_kept(game, kept)
        return game
    values = list(row)
    for index, column, functions in converters:
        if index == _STATE and kept is not None:
            values[index] = kept[0]
            continue
        value = values[index]
        for function in functions:
            value = function(value, column, db)
        values[index] = value
    game = _from_row(None if held is None else held[1], names, values)
    _give_kept(game, kept)
    # Remembered only for a game that has started: a start undone by its transaction may have left its seats here.
    seated = _seated.get(public_id) if game.status != Game.Status.WAITING else None
    if seated is None:
        rows = prepared.run(_seats(db.vendor), [game.pk], db).fetchall()
        game._seat_user_ids = [user_id for (user_id,) in rows]
        seated_remember(game)
    else:
        game._seat_user_ids = list(seated)
    _remember_stored(game)
    game._row = written
    return game


def _from_row(held: Game | None, names: list[str], values: list) -> Game:
    """The model of a game from its row's values (converted), as `Game.from_db` builds it. A game this process held,
    which another process (or connection) wrote since, takes the row's columns into the held model: a third of the
    cost of a new one, where two processes serve the players of each game in turn (its seats are the same: a game is
    held once it has started; and a state of its own, with no related object read before)."""
    if held is None:
        return Game.from_db(DEFAULT_DB_ALIAS, names, values)
    held.__dict__.update(zip(names, values, strict=True))
    held._state = ModelState()
    held._state.db, held._state.adding = DEFAULT_DB_ALIAS, False
    return held


def _changed(value: object, stored: object) -> bool:
    """Whether a column's value is not the one read: a JSON column's (a dict or a list, which an action replaces
    rather than changes in place) by identity, where comparing the position's contents cost more than writing it."""
    if isinstance(value, dict | list):
        return value is not stored
    return value != stored


def _remember_stored(game: Game) -> None:
    """Note what the database holds of the game, so that saving it writes only what changed."""
    game._stored_values = {name: getattr(game, _ATTNAMES[name]) for name in GAME_SAVED}


def game_save(game: Game, state: object = None) -> None:
    """Write what an action changed of a game that exists (`game.save(update_fields=…)`); `state` is the rules' state
    that `game.state` was made from, if the caller has it: kept for the game's next action once this one commits.

    Only the columns that changed since the game was read: an index on a column that is left out is not touched."""
    stored = getattr(game, "_stored_values", None)
    names = tuple(
        name for name in GAME_SAVED if stored is None or _changed(getattr(game, _ATTNAMES[name]), stored[name])
    )
    if not names:
        # Nothing changed: no UPDATE (it would set no column), as `save(update_fields=[])` writes nothing; the log's
        # entries still pending are written.
        events_write(game)
        return
    update, written = prepared.update_statement(Game, game.pk, {name: getattr(game, _ATTNAMES[name]) for name in names})
    row = getattr(game, "_row", None)
    held = row is not None and game.status == Game.Status.PLAYING
    db = connections[DEFAULT_DB_ALIAS]
    postgresql = db.vendor == "postgresql"
    # The log's entries of this change and the game's row together: on PostgreSQL in one statement (the entries'
    # INSERT in a WITH clause of the game's UPDATE; each statement costs the driver about as much as the server), whose
    # UPDATE returns the version of the row it leaves, for the game to be held with.
    if postgresql:
        sql, params = update
        if held:
            sql = f"{sql} RETURNING {_VERSION_OF_ROW}"
        entries = _entries_taken(game, db)
        if entries:
            sql, params = _logged_with(len(entries), sql), [value for entry in entries for value in entry] + params
        statements = [(sql, params)]
    else:
        statements = [*_inserts(_entries_taken(game, db), db), update]
    version_of_row = prepared.run_together(statements, answer=held and postgresql)
    _remember_stored(game)
    if state is not None and game.status == Game.Status.PLAYING and "state" in names:
        text = written[names.index("state")]
        if isinstance(text, str):  # the text stored, as the database will give it back (not so for PostgreSQL)
            positions.keep_on_commit(game.public_id, text, game.state, state)
    if row is not None and not postgresql:
        game._row = row = _written_row(row, names, written)
    if not held:
        return
    # Held once the transaction commits, with the row it is then, for the game's next action to compare.
    snapshot, public_id = _snapshot(game), game.public_id
    if version_of_row is not None:
        # Robust: whatever went wrong there would only leave the game not held, never fail what has committed.
        transaction.on_commit(lambda: _hold(public_id, version_of_row(), snapshot, state), robust=True)
    else:
        transaction.on_commit(lambda: _hold(public_id, row, snapshot))


def _give_kept(game: Game, kept: tuple[object, object, bool] | None) -> None:
    """Give the game just locked the rules' state kept of its stored position (`positions.take`), if there is one: a
    state that reads have is theirs to keep, and the action changes a copy (far cheaper than decoding one)."""
    game._kept_state = None
    if kept is not None:
        game._kept_state = find_engine(game.kind).copy(kept[1]) if kept[2] else kept[1]


def kept_state(game: Game) -> object:
    """Return the rules' state that this process kept for the game it has just locked (`game_locked`), or None; once:
    the caller owns it from then on, and the rules may change it."""
    state, game._kept_state = getattr(game, "_kept_state", None), None
    return state


def event_pending(*, game: Game, kind: str, player_id: int | None, data: dict, at: datetime) -> None:
    """Add the entry of the game's current version to its log (`GameEvent.objects.create(…)`), written with the game's
    next save (`game_save`, or `events_write` after the game's first save), which must come in the same transaction:
    an action logs one entry or several, then saves the game once."""
    pending: list[tuple] = game.__dict__.setdefault("_entries_pending", [])
    pending.append((game.version, kind, player_id, data, at))


def events_write(game: Game) -> None:
    """Write the game's log entries still pending (`event_pending`)."""
    db = connections[DEFAULT_DB_ALIAS]
    prepared.run_together(_inserts(_entries_taken(game, db), db))


def _entries_taken(game: Game, db: Any) -> list[list]:
    """The parameters of the INSERT (`_insert`) of each of the game's pending log entries, which are no longer
    pending."""
    pending: list[tuple] = game.__dict__.pop("_entries_pending", [])
    if not pending:
        return []
    _, fields = _insert(db.vendor)
    return [
        [prepared.save_value(field, value, db) for field, value in zip(fields, (game.pk, *entry), strict=True)]
        for entry in pending
    ]


# The most entries of a game's log one INSERT adds (a change logs one to a few: a move that ends a turn, the roll that
# begins the next, a pass; a statement of SQLite takes at most 32,766 values).
ENTRIES_A_STATEMENT = 64


def _inserts(rows: list[list], db: Any) -> list[tuple[str, list]]:
    """The INSERT of the entries' parameters (`_entries_taken`): one statement for the change's entries (each
    statement costs the driver about as much as SQLite takes to run it)."""
    statements = []
    for start in range(0, len(rows), ENTRIES_A_STATEMENT):
        chunk = rows[start : start + ENTRIES_A_STATEMENT]
        sql, _ = _insert(db.vendor, len(chunk))
        statements.append((sql, [value for row in chunk for value in row]))
    return statements


@cache
def _seat_update(names: tuple[str, ...], vendor: str) -> tuple[str, list[Field]]:
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    fields = [Seat._meta.get_field(name) for name in names]
    columns = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    game, index = (quote(Seat._meta.get_field(name).column) for name in ("game", "index"))
    return f"UPDATE {quote(Seat._meta.db_table)} SET {columns} WHERE {game} = %s AND {index} = %s", fields


def seats_write(game: Game, **columns: Sequence) -> None:
    """Set these columns (by field name) of every seat of the game, each column given as its values seat 0 first
    (`Seat.objects.filter(game=game, index=i).update(…)` for each seat i). The ORM's one statement for all seats (an
    update by cases of the seat's index) cost a game's end about half of its CPU (BENCHMARKS.md); this statement is
    written once per set of columns, and each value adapted by its field."""
    db = connections[DEFAULT_DB_ALIAS]
    sql, fields = _seat_update(tuple(columns), db.vendor)
    values = list(columns.values())
    for index in range(len(values[0])):
        params = [prepared.save_value(field, column[index], db) for field, column in zip(fields, values, strict=True)]
        prepared.run(sql, [*params, game.pk, index], db)
