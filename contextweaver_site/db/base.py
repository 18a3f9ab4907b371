"""PostgreSQL backend that makes sure the embedded server is up before connecting.

Used only when DATABASE_URL is not set. Each process checks the server on its first connection
(the file lock inside `ensure_running` makes racing processes start one server) and again if a
connection fails, e.g. after the server was stopped and needs starting once more. The app
database (CW_DB_NAME) is created if missing; test databases (test_*) are left to Django.
"""

from __future__ import annotations

import psycopg
from django.db.backends.postgresql import base

from contextweaver_site.embedded import server

_checked: set[str] = set()


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
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
