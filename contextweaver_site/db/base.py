"""PostgreSQL backend that makes sure the embedded server is up before connecting.

Used only when DATABASE_URL is not set. Every process (web server, workers, commands, tests)
calls `ensure_running` on its first connection; the file lock inside it makes a race between
processes start one server.
"""

from __future__ import annotations

from django.db.backends.postgresql import base

from contextweaver_site.embedded import server


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        server.ensure_running(database=server.DEFAULT_DATABASE)
        return super().get_new_connection(conn_params)
