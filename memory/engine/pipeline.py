"""Processing accepted interactions (SPEC §3): score each, and if kept store a memory with its
vector, dimensions, entities and dependency edges. One transaction per interaction, or per batch of
a session's interactions (processed in order; a failed batch is redone one by one). Safe to run
twice (only pending/failed interactions are processed), so a retried job or `?wait=true` is harmless.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from ..errors import NotPromotable, NotRetryable, ProcessingFailed
from ..models import (
    AgentSession,
    EmbeddingSpace,
    Entity,
    EntityMention,
    Interaction,
    InteractionStatus,
    Memory,
    MemoryEmbedding,
    MemoryStatus,
    Relation,
)
from ..providers import get_embedder
from ..providers.base import Embedder, Vector
from .changelog import ENGINE_ACTOR, change_record, changes_deferred
from .cues import speaker_label, turn_speaker
from .entities import entities_named, mentions_link
from .extraction import (
    AttributeValue,
    Dimensions,
    ExtractedEntity,
    extract_dimensions,
    segment,
    term_overlap,
    with_llm_dimensions,
)
from .inference import DEFAULT_EDGE_THRESHOLD, Candidate, Proposal, edges_apply, infer
from .jobs import scheduler
from .layout import layout_soon
from .links import links_settle
from .operations import Op
from .rows import memory_columns
from .scoring import Evidence, Scores, filter_settings, memory_kind, score
from .sensitivity import repeats_sensitive
from .snapshots import interaction_snapshot, memory_snapshot
from .stages import (
    DIMENSIONS,
    EDGES,
    ENTITIES,
    LINKS,
    SCORING,
    SUPERSEDE,
    USE,
    error_text,
    stage_run,
    stages_from,
    storable_check,
)
from .supersede import supersede_apply
from .use import use_edges
from .vector_index import Neighbour, cached_space_for, nearest, vector_literal

logger = logging.getLogger(__name__)
PROCESSABLE = (InteractionStatus.PENDING, InteractionStatus.FAILED)
TOP_K_SIMILAR = 3
SHARED_ENTITY_CANDIDATES = 5


def interaction_process(*, interaction_id: int, promoted_by: str | None = None) -> Interaction:
    """Run the write path for one interaction in one transaction.

    `promoted_by` (a person) keeps a *filtered* interaction whatever its scores say: the filter's
    scores and reason stay on record, the decision is the person's.
    """
    with transaction.atomic(), changes_deferred():
        interaction = _process(interaction_id, promoted_by)
        if interaction.status == InteractionStatus.KEPT:
            layout_soon(interaction.session_id)
        return interaction


TURNS_BEFORE = 2  # how far back "his/her number" may look for the person it means


def _turns_before(interaction: Interaction) -> list[str]:
    """The session's interactions right before this one, oldest first."""
    rows = (Interaction.objects.filter(session_id=interaction.session_id, pk__lt=interaction.pk)
            .order_by("-pk").values_list("content", flat=True)[:TURNS_BEFORE])
    return list(reversed(rows))


def _locked(interaction_ids: list[int]) -> dict[int, Interaction]:
    """Lock the interactions' rows (in id order, so two batches cannot deadlock) and load them."""
    rows = (Interaction.objects.select_for_update(of=("self",)).select_related("session", "project")
            .filter(pk__in=interaction_ids).order_by("pk"))
    found = {interaction.pk: interaction for interaction in rows}
    missing = set(interaction_ids) - set(found)
    if missing:
        raise Interaction.DoesNotExist(f"interaction(s) {sorted(missing)} do not exist")
    return found


def _process(interaction_id: int, promoted_by: str | None = None, interaction: Interaction | None = None
             ) -> Interaction:
    """The write path for one interaction, inside the caller's transaction (which may have locked and
    loaded it already: `interaction`). The vector and the memory row are the core; each stage after them
    runs on its own (stages.py), so a failed stage is recorded on the interaction and costs only itself."""
    if interaction is None:
        interaction = _locked([interaction_id])[interaction_id]
    allowed = (InteractionStatus.FILTERED,) if promoted_by else PROCESSABLE
    if interaction.status not in allowed:
        return interaction
    before = interaction_snapshot(interaction)
    embedder = get_embedder()
    space = cached_space_for(embedder)
    vector = embedder.embed_one(interaction.content)
    failures: dict[str, str] = {}
    dims, known = stage_run(DIMENSIONS, failures, lambda: _dimensions(interaction), (Dimensions.empty(), {}))
    neighbours = nearest(space=space, vector=vector, k=TOP_K_SIMILAR, project_id=interaction.project_id,
                         session_id=interaction.session_id, statuses=(MemoryStatus.ACTIVE,))
    scored = stage_run(SCORING, failures, lambda: _scored(interaction, embedder, vector, dims, known, neighbours),
                       None)
    scores, dims = scored if scored else (_unscored(interaction, failures[SCORING]), dims)
    if promoted_by:
        scores = replace(scores, keep=True, duplicate_of=None,
                         reason=f"promoted by {promoted_by} (the filter said: {scores.reason})")
    if scores.duplicate_of:
        Memory.objects.get(pk=scores.duplicate_of).sources.add(interaction)
    memory = _memory_create(interaction, scores, dims, vector, space, neighbours, known, failures) \
        if scores.keep else None
    interaction.status = InteractionStatus.KEPT if memory else InteractionStatus.FILTERED
    stage_run(LINKS, failures, lambda: links_settle(interaction), [])  # kept or not: the links' ends are known
    interaction.scores, interaction.reason = scores.to_json(), scores.reason
    interaction.error, interaction.processed_at, interaction.stage_errors = "", timezone.now(), failures
    interaction.save(update_fields=["status", "scores", "reason", "error", "processed_at", "stage_errors"])
    change_record(
        project=interaction.project, session=interaction.session, actor=promoted_by or ENGINE_ACTOR,
        op=Op.INTERACTION_PROMOTED if promoted_by else f"interaction.{interaction.status}",
        object_type="interaction", object_id=interaction.pk, before=before, after=interaction_snapshot(interaction),
    )
    if failures:
        retry_soon(interaction.pk)
    return interaction


def _dimensions(interaction: Interaction) -> tuple[Dimensions, dict[str, Entity]]:
    """The interaction's dimensions, with the tentative names the project knows moved into its entities,
    and those known entities by name."""
    dims = extract_dimensions(interaction.content, now=interaction.occurred_at, kind=interaction.kind,
                              earlier=lambda: _turns_before(interaction))
    storable_check(dims.to_json())
    known = entities_named(project_id=interaction.project_id, found=dims.entities + dims.tentative_entities)
    confirmed = [e for e in dims.tentative_entities if e.normalized in known]  # "Dale" opening a sentence
    return replace(dims, entities=dims.entities + confirmed, tentative_entities=[]), known


def _scored(interaction: Interaction, embedder: Embedder, vector: Vector, dims: Dimensions,
            known: dict[str, Entity], neighbours: list[Neighbour]) -> tuple[Scores, Dimensions]:
    """The filter's scores, and the dimensions with what the LLM judge saw merged in (when one judged)."""
    evidence = Evidence(
        task_similarity=_task_similarity(interaction.session, embedder, vector),
        nearest_memory_id=neighbours[0].memory_id if neighbours else None,
        nearest_similarity=neighbours[0].similarity if neighbours else 0.0,
        dimensions=dims,
        new_entities=len({e.normalized for e in dims.entities}) - len(known),
        values_differ_from_nearest=bool(neighbours) and _values(dims.to_json()) != _values(
            Memory.objects.filter(pk=neighbours[0].memory_id).values_list("dimensions", flat=True).first() or {}),
    )
    scores = score(interaction, evidence, filter_settings(interaction.project, embedder.space_name))
    merged = with_llm_dimensions(dims, scores.extra.get("llm_dimensions"), interaction.content)
    storable_check(merged.to_json())
    return scores, merged


def _unscored(interaction: Interaction, error: str) -> Scores:
    """Kept unjudged when the filter itself failed: dropping what nobody judged could lose it, and a person
    can still forget it. The scores are the middle of the scale until a retry judges it."""
    return Scores(True, memory_kind(interaction, Dimensions.empty()), 3.0, 3.0, 3.0, 3.0,
                  f"kept unjudged: the filter failed ({error})", extra={"judge": "none", "filter_error": error})


def interaction_promote(*, interaction_id: int, actor: str) -> Interaction:
    """A person keeps an interaction the filter dropped: it goes through the write path as kept.

    Raises NotPromotable unless the interaction is filtered (kept, pending or failed ones are not).
    """
    status = Interaction.objects.filter(pk=interaction_id).values_list("status", flat=True).first()
    if status != InteractionStatus.FILTERED:
        raise NotPromotable(f"Interaction {interaction_id} is {status or 'unknown'}; only filtered ones can be "
                            "promoted.")
    return interaction_process(interaction_id=interaction_id, promoted_by=actor)


def interaction_process_safely(*, interaction_id: int) -> Interaction | None:
    """Process, and on failure record the error on the interaction (kept, retried later)."""
    try:
        return interaction_process(interaction_id=interaction_id)
    except Exception as exc:  # noqa: BLE001 - any failure must leave the interaction visible
        logger.exception("processing interaction %s failed", interaction_id)
        interaction_mark_failed(interaction_id=interaction_id, error=exc)
        return None


def interactions_process_batch(interaction_ids: list[int]) -> None:
    """Process interactions of one session in order, in one transaction, their texts embedded in one
    model call first. One BEGIN/COMMIT and one change-log append serve them all, and the project's
    change-log lock is held once. If anything fails, nothing of the batch is kept and each
    interaction is processed on its own, so one bad interaction cannot hold back the others."""
    if len(interaction_ids) > 1:
        try:
            with transaction.atomic(), changes_deferred():
                locked = _locked(interaction_ids)
                _embed_ahead([i.content for i in locked.values() if i.status in PROCESSABLE])
                done = [_process(pk, interaction=locked[pk]) for pk in interaction_ids]
                for session_id in {i.session_id for i in done if i.status == InteractionStatus.KEPT}:
                    layout_soon(session_id)
            return
        except Exception:  # noqa: BLE001 - retried one by one below, where each failure is recorded
            logger.warning("batch of %d interactions failed; processing them one by one", len(interaction_ids),
                           exc_info=True)
    for interaction_id in interaction_ids:
        interaction_process_safely(interaction_id=interaction_id)


def interaction_process_with_followers(*, interaction_id: int, followers: int) -> Interaction | None:
    """A worker's job: this interaction, plus up to `followers` pending interactions of its session
    after it, in one batch. Their own jobs then find them processed and return at once (None). Raises if
    this interaction fails (the queue retries it); a failing follower is recorded on itself."""
    status, session_id = Interaction.objects.filter(pk=interaction_id).values_list("status", "session_id").get()
    if status in (InteractionStatus.KEPT, InteractionStatus.FILTERED):  # done by an earlier job's batch
        return None
    if status != InteractionStatus.PENDING:  # a retry after a failure: on its own
        return interaction_process(interaction_id=interaction_id)
    later = list(Interaction.objects.filter(session_id=session_id, status=InteractionStatus.PENDING,
                                            pk__gt=interaction_id).order_by("pk").values_list("pk", flat=True)
                 [:followers])
    interactions_process_batch([interaction_id, *later])
    interaction = Interaction.objects.get(pk=interaction_id)
    if interaction.status == InteractionStatus.FAILED:
        raise ProcessingFailed(f"interaction {interaction_id} failed: {interaction.error}")
    return interaction


def _embed_ahead(contents: list[str]) -> None:
    """One batched embedder call for many texts: the model is several times faster per text in batches,
    and the pipeline's per-interaction embed_one() then hits the embedder's cache."""
    if len(contents) > 1:
        get_embedder().embed(contents)


def interaction_mark_failed(*, interaction_id: int, error: BaseException) -> None:
    """Record that processing raised: the interaction stays as it came (`failed`, retried), with a readable
    reason, and the change log tells the agent's and people's views at once."""
    with transaction.atomic():
        interaction = (Interaction.objects.select_for_update(of=("self",)).select_related("session", "project")
                       .filter(pk=interaction_id, status__in=PROCESSABLE).first())
        if interaction is None:
            return
        before = interaction_snapshot(interaction)
        interaction.status, interaction.error = InteractionStatus.FAILED, error_text(error)
        interaction.attempts += 1
        interaction.save(update_fields=["status", "error", "attempts"])
        change_record(project=interaction.project, session=interaction.session, actor=ENGINE_ACTOR,
                      op=Op.INTERACTION_FAILED, object_type="interaction", object_id=interaction.pk,
                      before=before, after=interaction_snapshot(interaction))


def interaction_retry(*, interaction_id: int, actor: str = ENGINE_ACTOR) -> Interaction:
    """Run again what failed: a failed interaction through the whole write path, a kept one's failed stages
    on its memory (stages.stages_from). Whatever still fails is recorded again; nothing kept is dropped.

    Raises NotRetryable when nothing failed (pending, filtered, or kept whole)."""
    status, errors = Interaction.objects.filter(pk=interaction_id).values_list("status", "stage_errors").get()
    if status == InteractionStatus.FAILED:
        interaction_process_safely(interaction_id=interaction_id)
        return Interaction.objects.get(pk=interaction_id)
    if status != InteractionStatus.KEPT or not errors:
        raise NotRetryable(f"Interaction {interaction_id} is {status} and nothing of it failed; only failed "
                           "interactions and kept ones with failed stages can be retried.")
    with transaction.atomic(), changes_deferred():
        interaction = _locked([interaction_id])[interaction_id]
        memory = Memory.objects.select_related("project", "session").filter(
            sources=interaction).exclude(status=MemoryStatus.FORGOTTEN).order_by("pk").first()
        if not interaction.stage_errors or memory is None:
            return interaction  # done by another retry meanwhile, or its memory was forgotten
        before = interaction_snapshot(interaction)
        _stages_rerun(interaction, memory, stages_from(interaction.stage_errors))
        change_record(project=interaction.project, session=interaction.session, actor=actor, op=Op.INTERACTION_RETRIED,
                      object_type="interaction", object_id=interaction.pk, before=before,
                      after=interaction_snapshot(interaction))
        layout_soon(interaction.session_id)
        return interaction


def _stages_rerun(interaction: Interaction, memory: Memory, stages: tuple[str, ...]) -> None:
    """The failed stages of a kept interaction, on the memory made from it (the caller's transaction)."""
    failures: dict[str, str] = {}
    embedder = get_embedder()
    space = cached_space_for(embedder)
    vector = embedder.embed_one(memory.content)
    memory_before = memory_snapshot(memory)
    if DIMENSIONS in stages:
        dims, known = stage_run(DIMENSIONS, failures, lambda: _dimensions(interaction), (None, {}))
        if dims is not None:
            memory.dimensions = {**dims.to_json(), "source_kind": interaction.kind}
    else:
        dims, known = _stored_dimensions(memory), {}
    neighbours = [n for n in nearest(space=space, vector=vector, k=TOP_K_SIMILAR + 1, project_id=memory.project_id,
                                     session_id=memory.session_id, statuses=(MemoryStatus.ACTIVE,))
                  if n.memory_id != memory.pk][:TOP_K_SIMILAR]
    if SCORING in stages:
        judged = dims or Dimensions.empty()
        scored = stage_run(SCORING, failures, lambda: _scored(interaction, embedder, vector, judged, known, neighbours),
                           None)
        if scored:  # judged now; kept all the same (a person forgets what should not stay)
            scores, dims = scored
            memory.kind, memory.importance = scores.kind, scores.importance
            memory.relevance, memory.novelty = scores.relevance, scores.novelty
            interaction.scores, interaction.reason = scores.to_json(), scores.reason
    if memory_snapshot(memory) != memory_before:
        memory.save(update_fields=["dimensions", "kind", "importance", "relevance", "novelty", "updated_at"])
        change_record(project=memory.project, session=memory.session, actor=ENGINE_ACTOR, op=Op.MEMORY_UPDATED,
                      object_type="memory", object_id=memory.pk, before=memory_before, after=memory_snapshot(memory))
    if dims is not None:
        memory.source_interaction = interaction
        _memory_link(Linking(memory, interaction, dims, vector, space, neighbours, known, new=False), stages, failures)
    else:
        failures.update({stage: failures[DIMENSIONS] for stage in stages if stage not in (DIMENSIONS, LINKS)})
    if LINKS in stages:
        stage_run(LINKS, failures, lambda: links_settle(interaction), [])
    interaction.stage_errors = failures
    interaction.save(update_fields=["stage_errors", "scores", "reason"])


def _stored_dimensions(memory: Memory) -> Dimensions:
    """The dimensions a memory holds, as the stages after extraction read them (entities, attributes)."""
    data = memory.dimensions or {}
    entities = [ExtractedEntity(**e) for e in data.get("entities", []) if isinstance(e, dict)]
    attributes = [AttributeValue(**a) for a in data.get("attributes", []) if isinstance(a, dict)]
    return replace(Dimensions.empty(), entities=entities, attributes=attributes)


def retry_soon(interaction_id: int) -> None:
    """Run a kept interaction's failed stages again later: a job on the queue with back-off once this
    transaction commits (queue mode; inline ingest leaves it to the retry button and API)."""
    from ..conf import memory_settings

    if memory_settings.INGEST_MODE != "queue":
        return

    transaction.on_commit(lambda: scheduler().retry(interaction_id))


VALUE_KEYS = ("numbers", "dates", "times", "amounts", "identifiers", "urls", "paths")


def _values(dimensions: dict) -> set[str]:
    return {f"{key}:{value}" for key in VALUE_KEYS for value in dimensions.get(key, [])}


def _task_similarity(session: AgentSession, embedder: Embedder, vector: Vector) -> float | None:
    if not session.task.strip():
        return None
    return float(np.dot(embedder.embed_one(session.task), vector))


def _memory_create(interaction: Interaction, scores: Scores, dims: Dimensions, vector: Vector,
                   space: EmbeddingSpace, neighbours: list[Neighbour], known: dict[str, Entity],
                   failures: dict[str, str]) -> Memory:
    session, project = interaction.session, interaction.project
    recent = _recent(session.pk)  # before the memory exists: the latest of the session are its predecessors
    memory = Memory.objects.create(
        project=project, session=session, content=interaction.content,
        search_text=" ".join(segment(interaction.content)),
        kind=scores.kind, importance=scores.importance, relevance=scores.relevance, novelty=scores.novelty,
        occurred_at=interaction.occurred_at, dimensions={**dims.to_json(), "source_kind": interaction.kind},
        sensitive=repeats_sensitive(project.pk, interaction.content),  # a marked memory's value said again
    )
    _source_and_vector_add(memory, interaction, space, vector)
    memory.source_interaction = interaction  # read by inference instead of querying memory.sources
    change_record(project=project, session=session, actor=ENGINE_ACTOR, op=Op.MEMORY_CREATED,
                  object_type="memory", object_id=memory.pk, after=memory_snapshot(memory))
    _memory_link(Linking(memory, interaction, dims, vector, space, neighbours, known, new=True, _recent=recent),
                 (ENTITIES, EDGES, USE, SUPERSEDE), failures)
    return memory


@dataclass
class Linking:
    """What the stages after the memory row read: the memory, its source, its dimensions and vector, the
    session's most similar memories and the entities known by name. `new`: created in this transaction."""

    memory: Memory
    interaction: Interaction
    dims: Dimensions
    vector: Vector
    space: EmbeddingSpace
    neighbours: list[Neighbour]
    known: dict[str, Entity]
    new: bool
    _candidates: list[Candidate] | None = None
    _recent: list[Memory] | None = None

    def recent(self) -> list[Memory]:
        if self._recent is None:  # a memory made earlier: the session's memories before it
            self._recent = _recent(self.memory.session_id, before=self.memory)
        return self._recent

    def candidates(self, entities: list[Entity]) -> list[Candidate]:
        if self._candidates is None:
            recent = self.recent()
            found = _candidates(self.memory, self.vector, self.space, self.neighbours,
                                _topical(entities, self.memory.content), recent[0] if recent else None)
            if not get_embedder().understands(self.memory.content):
                found = _lexically_compared(self.memory, found)
            self._candidates = found
        return self._candidates


def _memory_link(linking: Linking, stages: tuple[str, ...], failures: dict[str, str]) -> None:
    """The stages after the memory row: its entities, its dependency edges, the values it supersedes."""
    memory = linking.memory
    if ENTITIES in stages:
        entities = stage_run(ENTITIES, failures, lambda: mentions_link(memory=memory, found=linking.dims.entities,
                                                                       known=linking.known)[0], [])
    else:
        entities = list(Entity.objects.filter(mentions__memory=memory))
    if EDGES in stages:
        stage_run(EDGES, failures, lambda: _edges_add(linking, entities), None)
    if USE in stages and (linking.interaction.recall_id or linking.interaction.used):
        stage_run(USE, failures, lambda: use_edges(memory, linking.interaction), [])
    if SUPERSEDE in stages:
        stage_run(SUPERSEDE, failures,
                  lambda: supersede_apply(memory, linking.dims.attributes, linking.candidates(entities)), [])


def _edges_add(linking: Linking, entities: list[Entity]) -> None:
    memory, interaction = linking.memory, linking.interaction
    recent = linking.recent()
    previous = recent[0] if recent else None
    threshold = float((memory.project.settings or {}).get("edge_confidence_threshold", DEFAULT_EDGE_THRESHOLD))
    adjacent = [Proposal(previous, Relation.NEXT_IN_SESSION, 1.0, "adjacent in the session")] if previous else []
    told_before = _speaker_previous(interaction, recent[1:])
    if told_before:
        adjacent.append(Proposal(told_before, Relation.NEXT_BY_SPEAKER, 1.0, "the speaker's previous turn"))
    edges_apply(memory, infer(memory, linking.candidates(entities)) + adjacent, threshold, new_child=linking.new)


def _source_and_vector_add(memory: Memory, interaction: Interaction, space: EmbeddingSpace, vector: Vector) -> None:
    """The new memory's provenance row and its vector, in one statement (both are plain inserts)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH source AS (INSERT INTO {Memory.sources.through._meta.db_table} (memory_id, interaction_id) "
            f"VALUES (%s, %s)) INSERT INTO {MemoryEmbedding._meta.db_table} "
            "(memory_id, space_id, project_id, session_id, vector) VALUES (%s, %s, %s, %s, %s)",
            [memory.pk, interaction.pk, memory.pk, space.pk, memory.project_id, memory.session_id,
             vector_literal(vector)],
        )


def _topical(entities: list[Entity], content: str) -> list[Entity]:
    """The entities a memory is about: not its speaker's label. Every turn of a speaker names them, so
    sharing them linked each turn to that speaker's last turns, whatever they said (shares_entity edges
    that flooded the spread: `make eval`)."""
    speaker = speaker_label(content)
    if not speaker:
        return entities
    return [e for e in entities if e.normalized_name != speaker and e.name.casefold() != speaker]


def _candidates(memory: Memory, vector: Vector, space: EmbeddingSpace, neighbours: list[Neighbour],
                entities: list[Entity], previous: Memory | None) -> list[Candidate]:
    """Top-K similar + sharing an entity + the previous memory, each with similarity and overlap.

    One raw statement: the memories sharing an entity are found in it, and each candidate comes with
    its similarity to the new memory, its shared-entity count and the fields inference reads of its
    first source interaction, so no stored vector is parsed in Python and no query runs per candidate.
    """
    ids = {n.memory_id for n in neighbours} | ({previous.pk} if previous else set())
    entity_ids = [e.pk for e in entities]
    if not ids and not entity_ids:
        return []
    dims = int(space.dimensions)
    sql = (
        f"WITH sharing AS (SELECT m.id FROM {Memory._meta.db_table} m "
        f"JOIN {EntityMention._meta.db_table} em ON em.memory_id = m.id WHERE m.session_id = %(session)s "
        "AND em.entity_id = ANY(%(entities)s) AND m.id <> %(me)s AND m.status <> %(forgotten)s "
        "GROUP BY m.id, m.occurred_at ORDER BY m.occurred_at DESC LIMIT %(sharing)s) "
        f"SELECT {memory_columns('m')}, 1 - (e.vector::vector({dims}) <=> %(vector)s::vector({dims})) AS similarity, "
        f"(SELECT count(DISTINCT x.entity_id) FROM {EntityMention._meta.db_table} x WHERE x.memory_id = m.id "
        "AND x.entity_id = ANY(%(entities)s)) AS overlap, src.id AS src_id, src.kind AS src_kind, "
        f"src.metadata AS src_metadata FROM {Memory._meta.db_table} m "
        f"LEFT JOIN {MemoryEmbedding._meta.db_table} e ON e.memory_id = m.id AND e.space_id = %(space)s "
        f"LEFT JOIN LATERAL (SELECT i.id, i.kind, i.metadata FROM {Memory.sources.through._meta.db_table} s "
        f"JOIN {Interaction._meta.db_table} i ON i.id = s.interaction_id WHERE s.memory_id = m.id "
        "ORDER BY i.id LIMIT 1) src ON true "
        "WHERE m.id IN (SELECT unnest(%(ids)s::bigint[]) UNION SELECT id FROM sharing) AND m.id <> %(me)s "
        "ORDER BY m.occurred_at, m.id"
    )
    rows = list(Memory.objects.raw(sql, {
        "session": memory.session_id, "entities": entity_ids, "me": memory.pk, "forgotten": MemoryStatus.FORGOTTEN,
        "sharing": SHARED_ENTITY_CANDIDATES, "vector": vector_literal(vector), "space": space.pk, "ids": sorted(ids),
    }))
    for m in rows:  # the fields inference reads of a candidate's source
        metadata = json.loads(m.src_metadata) if isinstance(m.src_metadata, str) else m.src_metadata
        m.source_interaction = Interaction(pk=m.src_id, kind=m.src_kind, metadata=metadata or {}) \
            if m.src_id else None
    return [Candidate(m, float(m.similarity or 0.0), int(m.overlap), previous is not None and m.pk == previous.pk)
            for m in rows]


def _lexically_compared(memory: Memory, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates with their similarity taken from shared search terms: the embedder was not trained
    on the memory's script (MiniLM on Chinese), and its cosine there says little ("elaborates" from it
    linked most Chinese turns to most others: precision 0.02 in `make eval`)."""
    return [replace(c, similarity=term_overlap(memory.content, c.memory.content)) for c in candidates]


# Memories of the session looked back over for the speaker's previous turn: in a dialogue it is two turns
# back, after the other person's reply; a reply of two or three lines still leaves it in reach.
SPEAKER_LOOKBACK = 4


def _recent(session_id: int, before: Memory | None = None) -> list[Memory]:
    """The session's latest memories that are not forgotten (those before `before`, when given), newest
    first (the first is next_in_session's parent), each with the speaker its first source interaction names
    in its metadata (`said_by`, a string only, as `turn_speaker` reads it); one query."""
    sources = Memory.sources.through._meta.db_table
    earlier, params = "", [session_id, MemoryStatus.FORGOTTEN]
    if before is not None:
        earlier, params = " AND (m.occurred_at, m.id) < (%s, %s)", [*params, before.occurred_at, before.pk]
    return list(Memory.objects.raw(
        f"SELECT {memory_columns('m')}, (SELECT CASE WHEN jsonb_typeof(i.metadata -> 'speaker') = 'string' "
        f"THEN i.metadata ->> 'speaker' END FROM {sources} s "
        f"JOIN {Interaction._meta.db_table} i ON i.id = s.interaction_id WHERE s.memory_id = m.id "
        f"ORDER BY i.id LIMIT 1) AS said_by FROM {Memory._meta.db_table} m WHERE m.session_id = %s "
        f"AND m.status <> %s{earlier} ORDER BY m.occurred_at DESC, m.id DESC LIMIT %s",
        [*params, SPEAKER_LOOKBACK]))


def _speaker_previous(interaction: Interaction, earlier: list[Memory]) -> Memory | None:
    """The speaker's own latest turn before the other person's reply: a speaker goes on with their own
    story ("Survey came back: damp." … "So the quote's £6,500"), and next_in_session reaches it only
    through the reply between (measured in `make eval`: docs/eval.md)."""
    speaker = turn_speaker(interaction.content, interaction.metadata)
    if not speaker:
        return None
    return next((m for m in earlier if turn_speaker(m.content, {"speaker": m.said_by}) == speaker), None)
