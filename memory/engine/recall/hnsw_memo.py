"""Which recall scopes lately found HNSW too short, so their next kNN goes exact at once.

The HNSW index spans an embedding space, shared by every project. A small project in a large
space (or a scope filtered to few memories) gets fewer than the pool from the ef_search nearest
candidates and needs the exact search anyway; remembering that for a while saves the wasted
HNSW pass and a round trip on each of its recalls. Exact search over such a scope is cheap
because the scope is small. The memo is per process and expires, so a scope that grows goes back
to HNSW on its own.
"""

from __future__ import annotations

import time

from django.db import connection

from .seeds import Scope

REMEMBER_SECONDS = 600.0
_short: dict[tuple, float] = {}


def _key(scope: Scope, space_id: int) -> tuple:
    return (str(connection.settings_dict["NAME"]), scope.project.pk, space_id, tuple(sorted(scope.statuses)),
            scope.include_sensitive)


def came_up_short(scope: Scope, space_id: int) -> None:
    _short[_key(scope, space_id)] = time.monotonic()


def short_lately(scope: Scope, space_id: int) -> bool:
    if scope.session_id is not None:
        return False  # session searches are exact anyway
    at = _short.get(_key(scope, space_id))
    return at is not None and time.monotonic() - at < REMEMBER_SECONDS


def forget_short_scopes() -> None:
    _short.clear()
