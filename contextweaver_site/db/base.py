"""PostgreSQL backend: Django's, with server-side binding and prepared statements that a statement
can opt out of, and (for the embedded database) the server started on demand.

Prepared statements: with server-side binding psycopg prepares a statement once it has run
`prepare_threshold` times on a connection, so PostgreSQL parses and plans it once instead of on
every call (half the time of the short recall and write-path statements). PostgreSQL may then
reuse a generic plan, which is wrong for a statement whose best plan depends on its values (the
recall seed search: how many rows a full-text query matches decides between its indexes). Such a
statement starts with PLANNED_PER_CALL and is never prepared.

Embedded (settings_dict "EMBEDDED"): each process checks the server on its first connection (the
file lock inside `ensure_running` makes racing processes start one server) and again if a
connection fails, e.g. after the server was stopped and needs starting once more. The app database
(CW_DB_NAME) is created if missing; test databases (test_*) are left to Django.
"""

from __future__ import annotations

import psycopg
from django.db.backends.postgresql import base

from contextweaver_site.db import PLANNED_PER_CALL
from contextweaver_site.embedded import server

_checked: set[str] = set()


class ServerBindingCursor(base.ServerBindingCursor):
    def execute(self, query, params=None, *, prepare=None, binary=None):
        if prepare is None and isinstance(query, str) and query.startswith(PLANNED_PER_CALL):
            prepare = False
        return super().execute(query, params, prepare=prepare, binary=binary)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        if params.get("cursor_factory") is base.ServerBindingCursor:
            params["cursor_factory"] = ServerBindingCursor
        return params

    def get_new_connection(self, conn_params):
        if not self.settings_dict.get("EMBEDDED"):
            return super().get_new_connection(conn_params)
        name = self.settings_dict["NAME"] or server.DEFAULT_DATABASE
        if name not in _checked:
            self._ensure_server(name)
        try:
            return super().get_new_connection(conn_params)
        except psycopg.OperationalError:
            self._ensure_server(name)
            return super().get_new_connection(conn_params)

    @staticmethod
    def _ensure_server(name: str) -> None:
        create = None if name.startswith("test_") or name == "postgres" else name
        server.ensure_running(database=create)
        _checked.add(name)
