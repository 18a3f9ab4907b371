"""PostgreSQL backend: Django's, with server-side binding and a connection pool (settings: OPTIONS),
per-connection settings (SESSION_SETTINGS), and for the embedded database the server started on demand.

Prepared statements: with server-side binding psycopg prepares a statement once it has run
`prepare_threshold` times on a connection, so PostgreSQL parses and plans it once instead of on
every call (half the time of the short recall and write-path statements). PostgreSQL then reuses a
generic plan when its estimated cost is no worse than the custom plans', so a value that decides
the plan must be written into the SQL rather than passed (the recall scope's project id:
`recall/seeds.Scope.condition`).

Embedded (settings_dict "EMBEDDED"): each process checks the server on its first connection (the
file lock inside `ensure_running` makes racing processes start one server) and again if a
connection fails, e.g. after the server was stopped and needs starting once more. The app database
(CW_DB_NAME) is created if missing; test databases (test_*) are left to Django.
"""

from __future__ import annotations

import psycopg
from django.db.backends.postgresql import base

from contextweaver_site.embedded import server

_checked: set[str] = set()


class DatabaseWrapper(base.DatabaseWrapper):
    def _configure_connection(self, connection) -> bool:
        """Once per server connection (the pool calls this for each new one, Django for unpooled ones):
        the settings of DATABASES[...]["SESSION_SETTINGS"], e.g. hnsw.ef_search, so no request pays a
        round trip to set them."""
        commit = super()._configure_connection(connection)
        settings_to_apply = self.settings_dict.get("SESSION_SETTINGS") or {}
        if settings_to_apply:
            with connection.cursor() as cursor:
                for name, value in settings_to_apply.items():
                    cursor.execute("SELECT set_config(%s, %s, false)", [name, str(value)])
            commit = True
        return commit

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
