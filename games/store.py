"""The three statements of every game action, built once: lock the game, save it, add an entry to its log; the
users in its seats, read once per game and process; and what a game's end writes of each seat.

Through the ORM, most of an action's CPU went to building the same SQL again each time (the queryset, its compiler,
the model's save machinery), many times what running the statements costs (BENCHMARKS.md). Here each statement is
written once per database vendor from the models' own metadata (table, columns, quoting, FOR UPDATE where the
database has it), and each action only adapts its values through the fields, as the ORM does, and runs it.
Everything else that writes games (pairing, the admin, recomputations) uses the ORM.

On SQLite, the connection where the process runs its database calls (core/dbthread.py) holds the games it wrote last,
as its commits left them (`_Held`): an action on such a game takes it instead of reading its row and building the model
again, the largest part of the locking read. What is held is what is stored as long as nothing else wrote: another
connection's commit changes SQLite's `data_version` (read in the action's transaction, which holds the write lock
from its BEGIN IMMEDIATE), and then nothing held is used; on that connection every write of a game's row is
`game_save`'s, which holds the game once its transaction commits, or else forgets it (`held_forget`: an ORM save
does so itself).
"""

from collections.abc import Sequence
from datetime import datetime
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Field
from django.db.models.base import ModelState
from django.db.models.expressions import Col
from django.db.models.signals import post_save
from django.dispatch import receiver

from core import prepared
from core.dbthread import serves_database_calls

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
def _locking(vendor: str) -> tuple[str, list[str], list[tuple[Col, list]]]:
    """Return the locking query, the names of the columns it reads, and each column with its converters."""
    db = connections[DEFAULT_DB_ALIAS]
    sql, _ = Game.objects.filter(public_id="").query.sql_with_params()
    # Built outside a transaction, where the ORM refuses FOR UPDATE: the clause is added here, as the ORM would.
    if db.features.has_select_for_update:
        sql = f"{sql} {db.ops.for_update_sql()}"
    fields = Game._meta.concrete_fields
    converters = []
    for field in fields:
        column = field.get_col(Game._meta.db_table)
        # A game has six datetime columns, read on every action: on SQLite, converted without Django's layers.
        functions = prepared.lean_converters(db.ops.get_db_converters(column) + column.get_db_converters(db), field, db)
        converters.append((column, functions))
    return sql, [field.attname for field in fields], converters


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
def _insert(vendor: str) -> tuple[str, list[Field]]:
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    fields = [GameEvent._meta.get_field(name) for name in EVENT_FIELDS]
    columns = ", ".join(quote(field.column) for field in fields)
    values = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {quote(GameEvent._meta.db_table)} ({columns}) VALUES ({values})", fields


# How many games the connection of the database calls holds at most (the latest it wrote).
HELD = 10_000
# The transactions of SQLite that take its write lock when they begin (Django's transaction_mode).
_WRITE_LOCKED = frozenset({"IMMEDIATE", "EXCLUSIVE"})


class _Held:
    """The games in play that a connection wrote last, each as its last commit left it (a model of its own, which no
    one else has), and the `data_version` of the database when it was last read in a transaction."""

    __slots__ = ("connection", "data_version", "games", "barred")

    def __init__(self, connection: object):
        self.connection = connection  # the driver's connection (a new one holds nothing)
        self.data_version: int | None = None
        self.games: dict[str, Game] = {}
        # Games whose row the current transaction wrote other than by `game_save`: not held when it commits (a
        # transaction undone leaves its games here: they are no longer held, which costs only their reads).
        self.barred: set[str] = set()

    def hold(self, game: Game) -> None:
        public_id = game.public_id
        if public_id in self.barred:
            return
        self.games.pop(public_id, None)
        if len(self.games) >= HELD:
            del self.games[next(iter(self.games))]  # the oldest
        self.games[public_id] = game


def _held(db, *, look: bool) -> _Held | None:
    """What `db` holds, if it is the connection of the database calls, on SQLite, in a transaction that holds the write
    lock. With `look`, emptied first if another connection wrote since the last look: a game is taken only after one,
    in its own transaction (a game is held after its commit, fresh then: the next look judges it with the rest)."""
    if db.vendor != "sqlite" or not db.in_atomic_block or not serves_database_calls(db):
        return None
    if db.transaction_mode not in _WRITE_LOCKED:
        return None  # another writer could commit between this look and the action's writes
    held = getattr(db, "_held_games", None)
    if held is None or held.connection is not db.connection:
        held = db._held_games = _Held(db.connection)
    if look:
        (version,) = prepared.run("PRAGMA data_version", (), db).fetchone()
        if version != held.data_version:
            held.games.clear()
            held.data_version = version
    return held


def _snapshot(game: Game) -> Game:
    """A model of its own with what `game` holds now (its columns, its seats' users, what is stored of it)."""
    copy = Game.__new__(Game)
    copy.__dict__.update(game.__dict__)
    copy._state = ModelState()
    copy._state.db, copy._state.adding = game._state.db, False
    for transient in ("_kept_state", "_prefetched_objects_cache"):
        copy.__dict__.pop(transient, None)
    copy._seat_user_ids = list(game.seat_user_ids)
    copy._stored_values = dict(game._stored_values)
    return copy


def held_forget(public_id: str, using: str = DEFAULT_DB_ALIAS) -> None:
    """Forget what the connection holds of a game whose row is written other than by `game_save` (a queryset's
    update), and hold nothing of it when the current transaction commits."""
    held = getattr(connections[using], "_held_games", None)
    if held is not None:
        held.games.pop(public_id, None)
        if connections[using].in_atomic_block:
            held.barred.add(public_id)
            transaction.on_commit(lambda: held.barred.discard(public_id), using=using)


@receiver(post_save, sender=Game, dispatch_uid="games.store.held_forget")
def _saved_by_the_orm(sender, instance: Game, using: str, **kwargs) -> None:
    held_forget(instance.public_id, using)


def game_locked(public_id: str) -> Game | None:
    """Return the game, its row locked until the transaction ends (select_for_update()), with the user id in each of
    its seats (`Game.seat_user_ids`: read once a game has started, then remembered), or None."""
    db = connections[DEFAULT_DB_ALIAS]
    held = _held(db, look=True)
    game = None if held is None else held.games.pop(public_id, None)
    if game is not None:
        kept = positions.take_written(public_id, game.state)
        game._kept_state = None
        if kept is not None:
            game._kept_state = find_engine(game.kind).copy(kept[1]) if kept[2] else kept[1]
        return game
    sql, names, converters = _locking(db.vendor)
    row = prepared.run(sql, [public_id], db).fetchone()
    if row is None:
        return None
    # The position this process wrote last, if it is still the one stored: taken as kept, not decoded again.
    kept = positions.take(public_id, row[_STATE])
    values = []
    for index, (value, (column, functions)) in enumerate(zip(row, converters, strict=True)):
        if index == _STATE and kept is not None:
            value = kept[0]
        else:
            for function in functions:
                value = function(value, column, db)
        values.append(value)
    game = Game.from_db(DEFAULT_DB_ALIAS, names, values)
    game._kept_state = None
    if kept is not None:
        # A state that reads have is theirs to keep: the action changes a copy (far cheaper than decoding one).
        game._kept_state = find_engine(game.kind).copy(kept[1]) if kept[2] else kept[1]
    # Remembered only for a game that has started: a start undone by its transaction may have left its seats here.
    seated = _seated.get(public_id) if game.status != Game.Status.WAITING else None
    if seated is None:
        rows = prepared.run(_seats(db.vendor), [game.pk], db).fetchall()
        game._seat_user_ids = [user_id for (user_id,) in rows]
        seated_remember(game)
    else:
        game._seat_user_ids = list(seated)
    _remember_stored(game)
    return game


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
    written = prepared.update(Game, game.pk, {name: getattr(game, _ATTNAMES[name]) for name in names})
    _remember_stored(game)
    if state is not None and game.status == Game.Status.PLAYING and "state" in names:
        text = written[names.index("state")]
        if isinstance(text, str):  # the text stored, as the database will give it back (not so for PostgreSQL)
            positions.keep_on_commit(game.public_id, text, game.state, state)
    if game.status == Game.Status.PLAYING:
        held = _held(connections[DEFAULT_DB_ALIAS], look=False)
        if held is not None and game.public_id not in held.barred:
            snapshot = _snapshot(game)
            transaction.on_commit(lambda: held.hold(snapshot))


def kept_state(game: Game) -> object:
    """Return the rules' state that this process kept for the game it has just locked (`game_locked`), or None; once:
    the caller owns it from then on, and the rules may change it."""
    state, game._kept_state = getattr(game, "_kept_state", None), None
    return state


def event_add(*, game: Game, kind: str, player_id: int | None, data: dict, at: datetime) -> None:
    """Add the entry of the game's current version to its log (`GameEvent.objects.create(…)`)."""
    db = connections[DEFAULT_DB_ALIAS]
    sql, fields = _insert(db.vendor)
    values = (game.pk, game.version, kind, player_id, data, at)
    prepared.run(sql, [prepared.save_value(field, value, db) for field, value in zip(fields, values, strict=True)], db)


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
