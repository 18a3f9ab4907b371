"""The graph engines the mirror writes to, behind one small interface: run a Cypher statement.

Neo4j through its official driver (NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE); FalkorDB
through its client (CW_MIRROR_FALKORDB_URL, CW_MIRROR_GRAPH), which is also what the tests run
against, since no Neo4j server can be installed on every machine. Both clients are optional
dependencies, imported only when their target is configured.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from . import cypher


class GraphTarget(Protocol):
    name: str  # stored with the cursor: another name means another graph, mirrored from scratch

    def run(self, statement: str, params: dict[str, Any] | None = None) -> list[list[Any]]: ...

    def ensure_indexes(self) -> None: ...

    def close(self) -> None: ...


class FalkorTarget:
    def __init__(self, url: str, graph: str) -> None:
        try:
            from falkordb import FalkorDB
        except ImportError as exc:  # pragma: no cover - the dev extras install it
            raise ImproperlyConfigured("CW_MIRROR_FALKORDB_URL is set: pip install falkordb") from exc
        self.name = falkor_name(url, graph)
        self._db = FalkorDB.from_url(url)
        self._graph = self._db.select_graph(graph)

    def run(self, statement: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return self._graph.query(statement, params or {}).result_set

    def ensure_indexes(self) -> None:
        rows = self.run("CALL db.indexes() YIELD label, properties RETURN label, properties")
        existing = {(label, prop) for label, props in rows for prop in props}
        for label, prop in cypher.INDEXED:
            if (label, prop) not in existing:
                self.run(f"CREATE INDEX FOR (n:{label}) ON (n.{prop})")

    def close(self) -> None:
        self._db.connection.close()


class Neo4jTarget:
    def __init__(self, uri: str, user: str, password: str, database: str) -> None:
        try:
            import neo4j
        except ImportError as exc:  # pragma: no cover - `pip install contextweaver[neo4j]`
            raise ImproperlyConfigured("NEO4J_URI is set: pip install 'contextweaver[neo4j]'") from exc
        self.name = neo4j_name(uri, database)
        self._database = database
        self._driver = neo4j.GraphDatabase.driver(uri, auth=(user, password) if password else None)

    def run(self, statement: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        records, _, _ = self._driver.execute_query(statement, params or {}, database_=self._database)
        return [list(record.values()) for record in records]

    def ensure_indexes(self) -> None:
        for label, prop in cypher.INDEXED:
            self.run(f"CREATE INDEX cw_{label.lower()}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})")

    def close(self) -> None:
        self._driver.close()


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"


def falkor_name(url: str, graph: str) -> str:
    return f"falkordb {_without_credentials(url)}/{graph}"  # shown on pages: never a password


def neo4j_name(uri: str, database: str) -> str:
    return f"neo4j {_without_credentials(uri)}/{database}"


def configured_name() -> str | None:
    """The name of the configured target (as its cursors store it), without connecting; None when off."""
    if settings.NEO4J_URI:
        return neo4j_name(settings.NEO4J_URI, settings.NEO4J_DATABASE)
    if settings.MIRROR_FALKORDB_URL:
        return falkor_name(settings.MIRROR_FALKORDB_URL, settings.MIRROR_GRAPH)
    return None


def target_from_settings() -> GraphTarget:
    """The configured target; ImproperlyConfigured (with what to set) when there is none or two."""
    if settings.NEO4J_URI and settings.MIRROR_FALKORDB_URL:
        raise ImproperlyConfigured("Set NEO4J_URI or CW_MIRROR_FALKORDB_URL, not both: the mirror has one target.")
    if settings.NEO4J_URI:
        return Neo4jTarget(settings.NEO4J_URI, settings.NEO4J_USER, settings.NEO4J_PASSWORD, settings.NEO4J_DATABASE)
    if settings.MIRROR_FALKORDB_URL:
        return FalkorTarget(settings.MIRROR_FALKORDB_URL, settings.MIRROR_GRAPH)
    raise ImproperlyConfigured("The graph mirror is off: set NEO4J_URI (or CW_MIRROR_FALKORDB_URL) to turn it on.")
