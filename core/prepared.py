"""Queries built once: the ORM writes a query's SQL and its converters the first time, and each later call only
runs it with its own values.

Building a queryset's SQL costs many times what running it does on a hot path (a line protocol's state read, asked
for thousands of times a second). A `Prepared` query is written by an ordinary queryset with `values_list`, built
around stand-in values; each call puts its own values in their places (adapted by the fields, as the ORM would) and
converts the row's columns as the ORM's own iteration would.
"""

from collections.abc import Callable
from functools import cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, Model, QuerySet


def cursor() -> CursorWrapper:
    """Return a cursor of this thread's connection, kept for the statements built once: Django's own cursor (its
    errors, its log of queries when one is kept), made once per connection instead of once per statement, which
    was about half of what Django adds to a statement on a hot path (BENCHMARKS.md). Read each result before the
    next statement."""
    db = connections[DEFAULT_DB_ALIAS]
    kept = getattr(db, "_kept_cursor", None)
    # The connection is replaced when it is closed (CONN_MAX_AGE, an error), and a test that counts queries turns
    # the log on: then a new cursor, of the new connection or with the log.
    if kept is None or kept[0] is not db.connection or kept[1] != db.queries_logged:
        fresh = db.cursor()  # connects first, if need be
        kept = db._kept_cursor = (db.connection, db.queries_logged, fresh)
    return kept[2]


class Prepared:
    """A values_list query whose SQL is built once per database vendor: `build(*stand_ins)` returns it, filtered by
    the fields given with their stand-in values (`fields`: a list of (model field, stand-in value))."""

    def __init__(self, build: Callable[..., QuerySet], fields: list[tuple[Field, Any]]):
        self.build, self.fields = build, fields
        self._built: dict[str, tuple[str, list, list[int], dict]] = {}

    def _compiled(self, connection) -> tuple[str, list, list[int], dict]:
        built = self._built.get(connection.vendor)
        if built is None:
            stand_ins = [value for _, value in self.fields]
            compiler = self.build(*stand_ins).query.get_compiler(connection=connection)
            sql, params = compiler.as_sql()
            prepared = [field.get_db_prep_value(value, connection, prepared=False) for field, value in self.fields]
            places = [list(params).index(value) for value in prepared]
            # {column index: (converters, expression)}, as the ORM's iteration applies them.
            converters = compiler.get_converters([column for column, _, _ in compiler.select])
            built = self._built[connection.vendor] = (sql, list(params), places, converters)
        return built

    def first(self, *values: Any) -> tuple | None:
        """Return the first row with these values in place of the stand-ins, its columns converted, or None."""
        connection = connections[DEFAULT_DB_ALIAS]
        sql, params, places, converters = self._compiled(connection)
        params = params.copy()
        for (field, _), place, value in zip(self.fields, places, values, strict=True):
            params[place] = field.get_db_prep_value(value, connection, prepared=False)
        kept = cursor()
        kept.execute(sql, params)
        row = kept.fetchone()
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


def update(model: type[Model], pk: Any, values: dict[str, Any]) -> list[Any]:
    """Set these fields (by name) of the row `pk` (`model.objects.filter(pk=pk).update(**values)`, for plain
    values), the UPDATE written once per model, fields and database vendor, each value adapted by its field; return
    the values as adapted, in the order given."""
    db = connections[DEFAULT_DB_ALIAS]
    sql, fields = _update(model, tuple(values), db.vendor)
    params = [field.get_db_prep_save(value, db) for field, value in zip(fields, values.values(), strict=True)]
    cursor().execute(sql, [*params, model._meta.pk.get_db_prep_value(pk, db)])
    return params
