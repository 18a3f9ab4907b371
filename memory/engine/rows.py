"""Column lists for the raw statements of the hot paths (recall, the write path), and model
instances from plain cursor rows.

There, building a queryset cost more than running it: `Model.objects.raw()` with these columns
gives the same model instances (field converters applied) without the query compiler, and
`RowReader` does the same for rows that hold the columns of several models (a join), at a
fraction of raw()'s set-up cost per statement.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import connection
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Field, Model
from django.db.models.base import ModelState
from psycopg.types.datetime import TimestamptzLoader

from ..models import Memory

SEARCH_ONLY = ("search_text", "search_vector")  # the segmented text and its tsvector: never read back


def memory_columns(alias: str = "") -> str:
    """Every column of memory_memory but the search-only ones, optionally qualified by a table alias."""
    return memory_reader().columns(alias)


@functools.cache
def memory_reader() -> RowReader:
    """Memory rows without the search-only columns (built once: its converters are looked up once)."""
    return RowReader.for_columns(Memory, skip=SEARCH_ONLY)


class RowReader:
    """Builds instances of one model from a slice of cursor rows, as the ORM would (`from_db`, with
    the fields' database converters, e.g. JSON parsing)."""

    def __init__(self, model: type[Model], fields: Sequence[Field], start: int = 0) -> None:
        self.model, self.fields, self.start, self.stop = model, list(fields), start, start + len(fields)
        self.names = [f.attname for f in fields]
        self.converters = []
        for index, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            found = column.get_db_converters(connection) + connection.ops.get_db_converters(column)
            if found:
                self.converters.append((index, column, found))

    @classmethod
    def for_columns(cls, model: type[Model], start: int = 0, skip: Sequence[str] = ()) -> RowReader:
        return cls(model, [f for f in model._meta.concrete_fields if f.name not in skip], start)

    def columns(self, alias: str = "") -> str:
        """The SELECT list for this reader's fields, optionally qualified by a table alias."""
        prefix = f"{alias}." if alias else ""
        return ", ".join(f"{prefix}{f.column}" for f in self.fields)

    def instance(self, row: Sequence[Any]) -> Model:
        """What `from_db` returns, without `Model.__init__`: its per-field descriptors and init signals
        cost more than the statement once a recall reads a hundred memories (no model here listens to
        pre_init or post_init; tests/test_rows.py checks). A field this reader skips is deferred, as in
        `only()`: loaded on first access."""
        values = list(row[self.start:self.stop])
        for index, column, converters in self.converters:
            for converter in converters:
                values[index] = converter(values[index], column, connection)
        instance = self.model.__new__(self.model)
        instance.__dict__.update(zip(self.names, values, strict=True))
        state = instance._state = ModelState()
        state.adding, state.db = False, connection.alias
        return instance


@contextlib.contextmanager
def reading_cursor() -> Iterator[CursorWrapper]:
    """A cursor whose timestamps are parsed by psycopg's C loader.

    Django registers its own timestamptz loader (a Python subclass, to attach its time zone), which
    parses each value in Python: 600 timestamps, a k=100 recall's rows, took 2 ms of a 2.3 ms fetch.
    The session's time zone is Django's (it sets it on connect), so the values are the same instants
    in the same zone.
    """
    with connection.cursor() as cursor:
        cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        yield cursor


def execute_unprepared(cursor: CursorWrapper, sql: str, params: Sequence[Any]) -> None:
    """Run a statement that PostgreSQL plans for its parameters every time (psycopg's `prepare=False`).

    Every other statement is prepared once it has run `prepare_threshold` times on a connection
    (contextweaver_site/db/base.py), and PostgreSQL may then reuse one generic plan for all parameters.
    For the recall's seed statement that plan was the wrong one: at 100,000 memories (`make bench`'s
    project, 100 queries, the same process) it took p50 8.1 / p95 13.3 ms prepared and 5.0 / 7.3 ms planned
    each time; planning costs about 1 ms of that. Django's execute wrappers and query log still see it.
    """
    def run(sql: str, params: Sequence[Any], many: bool, context: dict) -> None:
        cursor.db.validate_no_broken_transaction()
        with cursor.db.wrap_database_errors:
            cursor.cursor.execute(sql, params, prepare=False)

    logged = (cursor.debug_sql(sql, params, use_last_executed_query=True) if isinstance(cursor, CursorDebugWrapper)
              else contextlib.nullcontext())
    with logged:
        cursor._execute_with_wrappers(sql, params, many=False, executor=run)
