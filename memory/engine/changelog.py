"""Appending to the change log, in the caller's transaction, in commit order.

Ids come from a sequence, so two concurrent transactions could commit their changes out of id
order and a reader polling "after id N" would skip the late one. To make the id order the commit
order, a writer takes a per-project transaction-level advisory lock before its first change; it
is released at commit, so changes of one project are numbered in the order they become visible.

A long write (the pipeline's) collects its changes with `changes_deferred()` and appends them all
in one statement at the end: the project lock is then held only from that statement to the
commit, so workers of one project overlap everything else, and one round trip replaces several.
A write of tens of thousands of rows (a hard forget) has the server build their change rows from
the rows themselves (`changes_append_select`): nothing is read into Python or sent back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from ..models import AgentSession, GraphChange, Project
from . import events
from .operations import ENGINE_ACTOR, Op  # noqa: F401 - ENGINE_ACTOR is imported from here too

LOCK_NAMESPACE = 0x4357  # "CW": keeps our advisory locks apart from other users of the database
COLUMNS = "project_id, session_id, actor, op, object_type, object_id, before, after, created_at"
ARRAY_TYPES = "bigint[], bigint[], text[], text[], text[], bigint[], jsonb[], jsonb[], timestamptz[]"


def _append_sql() -> str:
    """Lock and append in one round trip: the lock is taken in FROM, before any row (and id) is made.

    The rows come as one array per column (a short statement whatever the number of rows, parsed once)
    and are inserted in their given order (WITH ORDINALITY … ORDER BY n), so their ids ascend in it.
    """
    arrays = ", ".join(f"%s::{kind}" for kind in ARRAY_TYPES.split(", "))
    return (
        f"INSERT INTO {GraphChange._meta.db_table} ({COLUMNS}) "
        f"SELECT {COLUMNS} FROM (SELECT pg_advisory_xact_lock(%s, %s)) AS lock, "
        f"unnest({arrays}) WITH ORDINALITY AS v ({COLUMNS}, n) ORDER BY n RETURNING id"
    )


class _Pending(threading.local):
    changes: list[GraphChange] | None = None


_pending = _Pending()


def change_record(
    *, project: Project, session: AgentSession | None, actor: str, op: str, object_type: str,
    object_id: int | None, before: dict[str, Any] | None = None, after: dict[str, Any] | None = None,
) -> GraphChange:
    """Append one change (or, inside `changes_deferred`, queue it for the block's end); it is
    published to live listeners only after the commit."""
    if not connection.in_atomic_block:
        raise RuntimeError("change_record must run inside the transaction of the change it records")
    op = Op(op)  # the contract (engine/operations.py): an unknown name is a bug, not a new kind of change
    change = GraphChange(project=project, session=session, actor=actor, op=op, object_type=object_type,
                         object_id=object_id, before=before, after=after, created_at=timezone.now())
    if _pending.changes is not None:
        _pending.changes.append(change)
    else:
        _append([change])
    return change


@contextmanager
def changes_deferred() -> Iterator[None]:
    """Collect the block's changes and append them in one statement when it ends without error.

    Use inside the transaction (the block must end before the commit); the changes' ids are set
    at the block's end. Nested use joins the outer block. A change recorded inside a savepoint that
    is then rolled back would still be appended, so a savepoint that records changes is opened with
    `changes_savepoint`, which drops them with it.
    """
    if _pending.changes is not None:
        yield
        return
    _pending.changes = []
    try:
        yield
        changes = _pending.changes
    finally:
        _pending.changes = None
    if changes:
        _append(changes)


@contextmanager
def changes_savepoint() -> Iterator[None]:
    """A savepoint whose changes are dropped with it when the block raises: the pipeline runs each stage in
    one, so a failed stage leaves neither rows nor change-log entries behind, and the rest is kept."""
    queued = len(_pending.changes) if _pending.changes is not None else None
    try:
        with transaction.atomic():
            yield
    except BaseException:
        if queued is not None and _pending.changes is not None:
            del _pending.changes[queued:]
        raise


def changes_append_select(*, project: Project, actor: str, op: str, object_type: str, rows_sql: str,
                          params: list[Any]) -> list[int]:
    """Append one change per row of `rows_sql`, a SELECT of (session_id, object_id, before, after, n)
    built by the server (n orders them), after the changes queued so far, so ids keep the order in which
    the changes were made. Returns their ids; they are published after the commit."""
    op = Op(op)
    if _pending.changes:
        _append(_pending.changes)
        _pending.changes = []
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {GraphChange._meta.db_table} ({COLUMNS}) "
            f"SELECT %s, v.session_id, %s, %s, %s, v.object_id, v.before, v.after, now() "
            f"FROM (SELECT pg_advisory_xact_lock(%s, %s)) AS lock, ({rows_sql}) AS v ORDER BY v.n RETURNING id",
            [project.pk, actor, str(op), object_type, LOCK_NAMESPACE, project.pk, *params])
        ids = sorted(row[0] for row in cursor.fetchall())
    events.publish_stored_on_commit(ids)
    return ids


APPEND_ROWS = 10_000  # rows per statement (one array per column), so a huge forget still sends bounded messages


def _append(changes: list[GraphChange]) -> None:
    """Append changes of one project (the lock is per project) and publish them after the commit."""
    project_id = changes[0].project_id
    if any(change.project_id != project_id for change in changes):
        raise ValueError("changes of several projects cannot be appended under one lock")
    for start in range(0, len(changes), APPEND_ROWS):  # the lock is held to the commit: ids stay in order
        chunk = changes[start:start + APPEND_ROWS]
        columns = [[project_id] * len(chunk), [c.session_id for c in chunk], [c.actor for c in chunk],
                   [str(c.op) for c in chunk], [c.object_type for c in chunk], [c.object_id for c in chunk],
                   [None if c.before is None else Jsonb(c.before) for c in chunk],
                   [None if c.after is None else Jsonb(c.after) for c in chunk], [c.created_at for c in chunk]]
        with connection.cursor() as cursor:
            cursor.execute(_append_sql(), [LOCK_NAMESPACE, project_id, *columns])
            ids = sorted(row[0] for row in cursor.fetchall())
        for change, change_id in zip(chunk, ids, strict=True):
            change.id = change_id
    events.publish_on_commit(changes)
