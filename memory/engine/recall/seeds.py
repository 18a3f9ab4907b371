"""Seeds (SPEC §4.1): vector kNN + full-text + entities named in the query, fused by RRF.

Each source is an SQL fragment returning (memory id, rank); `rankings()` runs all of them as one
statement, so a recall pays one round trip for its seeds rather than one per source, and gets the
columns ranking needs (occurred_at, importance, whether the memory asks a question, its search terms'
count, its kind) with them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import connection, transaction

from ...conf import memory_settings
from ...models import EmbeddingSpace, Entity, EntityMention, Project
from ...providers.base import Vector
from ..extraction import segment
from ..rows import execute_unprepared
from ..vector_index import hnsw_candidates, search_statement
from .config import RecallConfig
from .terms import informative_terms, scope_rows

TSQUERY_UNSAFE = re.compile(r"[^\w\u4e00-\u9fff]+")
MENTIONS_PER_ENTITY = 200  # newest mentions only: a very common entity must not scan the project
NAMED_ENTITIES_LIMIT = 50
# An entity named in more memories than this (the speakers of a conversation, the agent's main tool)
# seeds nothing: its mentions are everywhere, and the newest of them buried the full-text match.
COMMON_ENTITY_MENTIONS = 100


@dataclass
class Scope:
    """Which memories a recall may touch, as an SQL condition on a memory row."""

    project: Project
    session_id: int | None
    statuses: tuple[str, ...]
    include_sensitive: bool

    def condition(self, alias: str = "m") -> tuple[str, list]:
        """The project id is written into the SQL, not passed: a prepared statement's generic plan then
        knows the project holds most rows and never intersects the full-text matches with them."""
        parts = [f"{alias}.project_id = {int(self.project.pk)}", f"{alias}.status = ANY(%s)"]
        params: list = [list(self.statuses)]
        if self.session_id is not None:
            parts.append(f"{alias}.session_id = %s")
            params.append(self.session_id)
        if not self.include_sensitive:
            parts.append(f"NOT {alias}.sensitive")
        return " AND ".join(parts), params


@dataclass
class Seed:
    memory_id: int
    activation: float
    ranks: dict[str, int] = field(default_factory=dict)  # source -> 1-based rank


# What ranking needs of each seed (RankedRow), selected by every fragment from its memory row `m`.
RANKING_COLUMNS = ("extract(epoch FROM m.occurred_at)::float8 AS at, m.importance, m.asks, m.search_words AS words, "
                   "m.kind")
RANKED_NAMES = ("at", "importance", "asks", "words", "kind")  # their names, in RankedRow's order


def ranked_names(alias: str) -> str:
    """The ranking columns of a subquery or CTE `alias`."""
    return ", ".join(f"{alias}.{name}" for name in RANKED_NAMES)


@dataclass(frozen=True)
class Fragment:
    """One seed source: SQL selecting `id` and the RANKING_COLUMNS in the source's order, at most
    `limit` rows."""

    source: str
    sql: str
    params: list
    limit: int


@dataclass(frozen=True)
class RankedRow:
    """What ranking needs of a memory. The time is epoch seconds: parsing a timestamp per row costs
    more than the whole ranking once a recall touches hundreds of memories."""

    memory_id: int
    occurred_at: float  # epoch seconds
    importance: float
    asks: bool = False  # the memory is a question (rank.py weighs it by question_weight)
    words: int = 0  # its search terms (rank.py weighs a memory of fewer than short_memory_words down)
    kind: str = ""  # its kind (rank.py weighs it by the config's kind_weights)


def vector_fragment(scope: Scope, space: EmbeddingSpace, vector: Vector, limit: int, *,
                    exact: bool = False) -> Fragment:
    sql, params = search_statement(space=space, vector=vector, k=limit, project_id=scope.project.pk,
                                   session_id=scope.session_id, statuses=scope.statuses,
                                   exclude_sensitive=not scope.include_sensitive, exact=exact,
                                   memory_columns=RANKING_COLUMNS)
    return Fragment("vector", f"SELECT memory_id AS id, {ranked_names('v')} FROM ({sql}) v", params, limit)


def lexical_terms(text: str, scope_size: int | None = None) -> list[str]:
    """The query's informative segmented terms, safe for to_tsquery (Chinese via jieba), for a search of
    `scope_size` memories (None: the whole table)."""
    terms = {TSQUERY_UNSAFE.sub("", t).lower() for t in segment(text)}
    terms = {t for t in terms if t}
    return informative_terms(terms, scope_size) if terms else []


def lexical_query(text: str, scope_size: int | None = None) -> str | None:
    """An OR of the query's informative terms."""
    terms = lexical_terms(text, scope_size)
    return " | ".join(terms) if terms else None


# Full-text seeds ranked by the summed inverse document frequency of the query terms each memory
# holds (BM25's idf; a memory holds a term at most a few times, so term frequency and length are left
# to ts_rank, the tie-break). A term's document frequency is counted among the matches, which are
# exactly the memories in scope that contain a query term; N is the scope's size (terms.scope_rows).
# ts_rank alone weighs every term alike, so a memory sharing two common words with the question
# outranked the one sharing its rare, telling word.
# Each match is tested against each term once (columns h0…hN of the matches), and the frequencies are
# one aggregate over them: counting per term with a pass over the matches, then summing per match with a
# subquery, tested every pair twice (make bench at 100,000 memories: p50 4.9 -> 3.1 ms, p95 12.1 -> 6.5 ms,
# the same order for all 200 queries).
def lexical_idf_sql(term_count: int, where: str) -> str:
    """The statement for `term_count` terms; parameters: the OR of them, each term, the scope's
    parameters, N, the limit."""
    holds = ", ".join(f"m.search_vector @@ to_tsquery('simple', %s) AS h{i}" for i in range(term_count))
    counts = ", ".join(f"count(*) FILTER (WHERE h{i})::float8 AS d{i}" for i in range(term_count))
    score = " + ".join(f"CASE WHEN hits.h{i} THEN ln(1 + (greatest(idf.n, idf.d{i}) - idf.d{i} + 0.5) / "
                       f"(idf.d{i} + 0.5)) ELSE 0 END" for i in range(term_count))
    return (
        f"WITH query AS (SELECT to_tsquery('simple', %s) AS q), "
        f"hits AS MATERIALIZED (SELECT m.id, {RANKING_COLUMNS}, ts_rank(m.search_vector, query.q) AS tr, {holds} "
        f"FROM memory_memory m, query WHERE m.search_vector @@ query.q AND {where}), "
        f"idf AS (SELECT %s::float8 AS n, {counts} FROM hits) "
        f"SELECT hits.id, {ranked_names('hits')} FROM hits, idf "
        f"ORDER BY {score} DESC, hits.tr DESC, hits.importance DESC, hits.id LIMIT %s"
    )


# One term (often the rarest of a question whose every word is common, so thousands of matches): every
# match holds it, its idf orders nothing, and counting it cost a pass over all the matches (make bench:
# the slowest full-text seeds at 100,000 memories, 26 ms).
LEXICAL_ONE_TERM_SQL = (
    "SELECT m.id, {columns} FROM memory_memory m, to_tsquery('simple', %s) q WHERE m.search_vector @@ q "
    "AND {where} ORDER BY ts_rank(m.search_vector, q) DESC, m.importance DESC, m.id LIMIT %s"
)


def lexical_fragment(scope: Scope, text: str, limit: int) -> Fragment | None:
    size = scope_rows(scope.project.pk, scope.session_id)
    terms = lexical_terms(text, size)
    if not terms:
        return None
    raw = " | ".join(terms)
    where, params = scope.condition("m")
    if len(terms) == 1:
        sql = LEXICAL_ONE_TERM_SQL.format(columns=RANKING_COLUMNS, where=where)
        return Fragment("lexical", sql, [raw, *params, limit], limit)
    return Fragment("lexical", lexical_idf_sql(len(terms), where), [raw, *terms, *params, max(size, 1), limit], limit)


# Entities of the project named in the (casefolded) text: ASCII names as whole words ("use" is not
# in "because"), other names (CJK has no word breaks) as substrings. strpos() picks the few
# candidates cheaply; the regex, with the name's non-word characters escaped, confirms the word.
NAMED_ENTITIES = (
    f"SELECT id FROM {Entity._meta.db_table} WHERE project_id = %s AND length(normalized_name) >= 2 "
    "AND strpos(%s, normalized_name) > 0 AND (octet_length(normalized_name) > char_length(normalized_name) "
    r"OR %s ~ ('(^|\W)' || regexp_replace(normalized_name, '(\W)', '\\\1', 'g') || '(\W|$)')) "
    "AND (SELECT count(*) FROM (SELECT 1 FROM memory_entitymention c WHERE c.entity_id = memory_entity.id "
    "LIMIT %s) common) < %s ORDER BY id LIMIT %s"
)


def entity_fragment(scope: Scope, text: str, limit: int) -> Fragment:
    """Memories mentioning the entities named in the text: those naming more of them first, then newest.

    The mentions are counted before any memory row is read, so only the memories that make the
    limit are looked up (rather than every memory the entities' newest mentions point at).
    """
    lowered = text.casefold()
    where, params = scope.condition("m")
    sql = (
        f"SELECT x.memory_id AS id, {RANKING_COLUMNS} FROM (SELECT mention.memory_id, count(*) AS named "
        f"FROM ({NAMED_ENTITIES}) ent CROSS JOIN LATERAL (SELECT memory_id FROM {EntityMention._meta.db_table} "
        "WHERE entity_id = ent.id ORDER BY memory_id DESC LIMIT %s) mention "
        "GROUP BY mention.memory_id ORDER BY named DESC, mention.memory_id DESC) x "
        f"JOIN memory_memory m ON m.id = x.memory_id WHERE {where} ORDER BY x.named DESC, x.memory_id DESC LIMIT %s"
    )
    return Fragment("entities", sql, [scope.project.pk, lowered, lowered, COMMON_ENTITY_MENTIONS,
                                      COMMON_ENTITY_MENTIONS, NAMED_ENTITIES_LIMIT, MENTIONS_PER_ENTITY, *params,
                                      limit], limit)


def rankings(fragments: list[Fragment | None]) -> tuple[dict[str, list[int]], dict[int, RankedRow]]:
    """Run the sources as one statement: each source's ids in order, and the rows' ranking columns."""
    fragments = [f for f in fragments if f is not None]
    order: dict[str, list[int]] = {f.source: [] for f in fragments}
    if not fragments:
        return order, {}
    parts, params = [], []
    for fragment in fragments:
        parts.append(f"SELECT %s AS source, s.id, row_number() OVER () AS r, {ranked_names('s')} "
                     f"FROM ({fragment.sql}) s")
        params += [fragment.source, *fragment.params]
    sql = f"SELECT u.source, u.id, u.r, {ranked_names('u')} FROM ({' UNION ALL '.join(parts)}) u ORDER BY u.source, u.r"
    vector_limit = max((f.limit for f in fragments if f.source == "vector"), default=0)
    rows = _fetch(sql, params, candidates=hnsw_candidates(vector_limit) if vector_limit else 0)
    columns: dict[int, RankedRow] = {}
    for source, memory_id, _, *ranking in rows:
        order[source].append(memory_id)
        columns[memory_id] = RankedRow(memory_id, *ranking)
    return order, columns


def _fetch(sql: str, params: list, *, candidates: int) -> list[tuple]:
    """The connection's hnsw.ef_search (set at connect) suffices unless more candidates are asked for.
    Never prepared: a generic plan of this statement cost 60% more (rows.execute_unprepared)."""
    if candidates <= int(memory_settings.HNSW_EF_SEARCH):
        with connection.cursor() as cursor:
            execute_unprepared(cursor, sql, params)
            return cursor.fetchall()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {int(candidates)}")
        execute_unprepared(cursor, sql, params)
        return cursor.fetchall()


def fuse(rankings: dict[str, list[int]], config: RecallConfig, k: int = 0,
         weights: dict[str, float] | None = None) -> list[Seed]:
    """Reciprocal-rank fusion (each source's share times its weight, default 1) into max(seed_count, k)
    seeds, so a preset without hops can fill k; the best seed gets activation 1.0, others in proportion."""
    scores: dict[int, float] = defaultdict(float)
    ranks: dict[int, dict[str, int]] = defaultdict(dict)
    for source, ids in rankings.items():
        weight = (weights or {}).get(source, 1.0)
        if weight <= 0:  # a source weighted 0 (the vector ranking of a script the model cannot read) seeds nothing
            continue
        for position, memory_id in enumerate(ids, start=1):
            scores[memory_id] += weight / (config.rrf_k + position)
            ranks[memory_id][source] = position
    ordered = sorted(scores, key=lambda m: (-scores[m], m))[: max(config.seed_count, k)]
    if not ordered:
        return []
    top = scores[ordered[0]]
    return [Seed(m, round(scores[m] / top, 6), ranks[m]) for m in ordered]
