"""Forget (SPEC §5, §6): soft (status `forgotten`) or hard (deleted, with everything derived from it).

Selection by filter — ids, sessions, entity, kind, happened after / before a date, text contains,
sensitive only — all combined with AND; at least one is required. Summaries are selected only by id,
by kind `summary` or with a whole session (below): otherwise they are derived data, which a hard forget
rewrites rather than deletes.
Always dry-run first: the dry run does the real work in a transaction that is rolled back, so its
counts are exactly what the real run will do, and a real run can insist on the count it was shown
(`expect_memories`) so the selection cannot grow between the two.

Soft: the memories become `forgotten`: out of recall and of the session graph, content kept
(summaries quoting them are left as they are; a later hard forget handles those).

Hard, in one transaction (all or nothing), what SPEC calls the cascade:
- the memories, plus any duplicates merged into them, are deleted with their edges, entity mentions
  and vectors; entities no other memory mentions are deleted too (their names came from this text);
- summaries that summarised them are rewritten from their remaining members (extractively: no
  network call inside the deletion's transaction; `summarise_cluster` can ask the LLM again later),
  or deleted when nothing else remains;
- their source interactions lose content and metadata (unless they also back a surviving memory),
  and any interaction backing no memory loses the forgotten text it repeats;
- recall traces and change-log snapshots keep their ids but every occurrence of the forgotten text
  (whole or one of its sentences, and the full names of the entities deleted) is replaced by
  "[forgotten]"; a recall that reached a forgotten memory loses its whole query, context and
  narrative (a question about the locker code names the code, in words no sentence of the memory has);
- free text other apps registered (a curator's reason quoting the memory) loses it the same way;
- the change log records each deletion without content, plus one `maintenance.forget` audit row.

A whole session (`ForgetFilter.whole_sessions`): a hard forget whose filter names sessions and nothing
else (no memory ids, entity, kinds, time range, text or sensitive-only) chose the sessions, not some of
their memories. Besides the cascade above for all their memories (summaries included), it deletes every
interaction of theirs whatever its status (kept, filtered, failed, pending), their store items and
recall traces, and the session rows themselves (`session.deleted`); earlier change-log rows about them
(the session's title and task, its interactions' snapshots) lose their content, and the interactions'
longer texts are scrubbed wherever else they were copied. Any other selection keeps the sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from ...errors import NotFoundError, ValidationFailed
from ...models import (
    AgentSession,
    Edge,
    Entity,
    EntityMention,
    GraphChange,
    Interaction,
    InteractionLink,
    Memory,
    MemoryEmbedding,
    MemoryKind,
    MemoryStatus,
    NodePosition,
    Project,
    RecallTrace,
    Relation,
    RiskChange,
    StoreItem,
)
from ...models.lookups import id_array
from ...providers import get_embedder
from ..changelog import change_record, changes_append_select, changes_deferred
from ..operations import Op
from ..risk import risk_propagate, risks_drop
from ..snapshots import EDGE_FIELDS, memory_snapshot, snapshot_sql
from .common import (
    REDACTED,
    JobReport,
    Progress,
    audit_record,
    entity_in,
    kinds_checked,
    memories_in,
    no_progress,
    rolled_back_if,
    session_in,
)
from .scrub import Needles, changes_scrub, free_text_scrub, ids_matching, interactions_scrub, traces_scrub
from .summarise import extractive_text, summary_rewrite

MODES = ("soft", "hard")
MIN_TEXT_FILTER = 2


@dataclass(frozen=True)
class ForgetFilter:
    memory_ids: tuple[int, ...] = ()
    session_id: int | None = None
    entity: int | str | None = None
    kinds: tuple[str, ...] = ()
    before: datetime | None = None
    text_contains: str = ""
    session_ids: tuple[int, ...] = ()  # any of these sessions (with session_id: that one too)
    after: datetime | None = None  # happened at or after
    sensitive_only: bool = False

    def empty(self) -> bool:
        return not (self.memory_ids or self.session_id is not None or self.session_ids
                    or self.entity not in (None, "") or self.kinds or self.before is not None
                    or self.after is not None or self.text_contains or self.sensitive_only)

    def sessions(self) -> tuple[int, ...]:
        both = (*self.session_ids, *(() if self.session_id is None else (self.session_id,)))
        return tuple(sorted(set(both)))

    def whole_sessions(self) -> tuple[int, ...]:
        """The sessions this filter covers whole: those it names when nothing else narrows it (no memory
        ids, entity, kinds, time range, text or sensitive-only). A hard forget deletes them with everything
        in them; naming no session is never "every session whole"."""
        narrowed = (self.memory_ids or self.entity not in (None, "") or self.kinds or self.before is not None
                    or self.after is not None or self.text_contains or self.sensitive_only)
        return () if narrowed else self.sessions()

    def audit_json(self) -> dict:
        """The filter as the audit trail keeps it: a text or entity name may be the forgotten data itself."""
        named = isinstance(self.entity, str)
        return {"memory_ids": list(self.memory_ids), "session_ids": list(self.sessions()),
                "entity": REDACTED if named else self.entity, "kinds": list(self.kinds),
                "after": self.after.isoformat() if self.after else None,
                "before": self.before.isoformat() if self.before else None,
                "text_contains": REDACTED if self.text_contains else "", "sensitive_only": self.sensitive_only}

    def to_json(self) -> dict:
        """The whole filter, for a queued job to read back (forgetting.py erases it once the job ends)."""
        return {"memory_ids": list(self.memory_ids), "session_ids": list(self.sessions()), "entity": self.entity,
                "kinds": list(self.kinds), "after": self.after.isoformat() if self.after else None,
                "before": self.before.isoformat() if self.before else None, "text_contains": self.text_contains,
                "sensitive_only": self.sensitive_only}

    @classmethod
    def from_json(cls, data: dict) -> ForgetFilter:
        moment = lambda value: datetime.fromisoformat(value) if value else None  # noqa: E731
        return cls(memory_ids=tuple(data.get("memory_ids", ())), session_ids=tuple(data.get("session_ids", ())),
                   entity=data.get("entity"), kinds=tuple(data.get("kinds", ())), after=moment(data.get("after")),
                   before=moment(data.get("before")), text_contains=data.get("text_contains", ""),
                   sensitive_only=bool(data.get("sensitive_only")))


def forget_selection(project: Project, selection: ForgetFilter, *, mode: str) -> list[int]:
    """The ids the filter selects (checked: a bad filter is a 400 and nothing is written)."""
    if mode not in MODES:
        raise ValidationFailed(f"unknown mode {mode!r}", {"mode": ["use soft or hard"]})
    if selection.empty():
        raise ValidationFailed("say what to forget: memory ids, session, entity, kinds, before or text",
                               {"non_field_errors": ["at least one filter is required"]})
    if selection.text_contains and len(selection.text_contains.strip()) < MIN_TEXT_FILTER:
        raise ValidationFailed("the text filter is too short", {"text_contains": ["at least 2 characters"]})
    queryset = Memory.objects.filter(project=project)
    if selection.memory_ids:
        memories_in(project, selection.memory_ids, allow_forgotten=mode == "hard")
        queryset = queryset.filter(pk__in=selection.memory_ids)
    if selection.sessions():
        queryset = queryset.filter(session__in=[session_in(project, pk) for pk in selection.sessions()])
    entity = entity_in(project, selection.entity)
    if entity is not None:
        queryset = queryset.filter(mentions__entity=entity)
    if selection.kinds:
        queryset = queryset.filter(kind__in=kinds_checked(selection.kinds))
    if selection.after is not None and selection.before is not None and selection.after >= selection.before:
        raise ValidationFailed("the time range is empty: 'after' must be earlier than 'before'",
                               {"after": ["must be earlier than before"]})
    if selection.after is not None:
        queryset = queryset.filter(occurred_at__gte=_aware(selection.after))
    if selection.before is not None:
        queryset = queryset.filter(occurred_at__lt=_aware(selection.before))
    if selection.sensitive_only:
        queryset = queryset.filter(sensitive=True)
    if selection.text_contains:
        queryset = queryset.filter(content__icontains=selection.text_contains.strip())
    if mode == "soft":
        queryset = queryset.exclude(status=MemoryStatus.FORGOTTEN)
    if MemoryKind.SUMMARY not in selection.kinds and not (mode == "hard" and selection.whole_sessions()):
        # Summaries are derived: a hard forget rewrites them; only ids or kinds=summary select them.
        queryset = queryset.filter(Q(pk__in=selection.memory_ids) | ~Q(kind=MemoryKind.SUMMARY))
    return sorted(set(queryset.values_list("id", flat=True)))


def _aware(moment: datetime) -> datetime:
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment)


def forget_run(*, project: Project, actor: str, selection: ForgetFilter, mode: str = "soft",
               expect_memories: int | None = None, dry_run: bool = False,
               progress: Progress = no_progress) -> JobReport:
    ids = forget_selection(project, selection, mode=mode)
    if expect_memories is not None and expect_memories != len(ids):
        raise ValidationFailed(f"the selection now holds {len(ids)} memories, not the {expect_memories} expected; "
                               "run the dry run again", {"expect_memories": [f"selection holds {len(ids)}"]})
    report = JobReport("forget", dry_run, counts={"memories": len(ids)}, params={"mode": mode})
    with rolled_back_if(dry_run), transaction.atomic():
        if mode == "soft":
            _soft(project, actor, ids, report, progress)
        else:
            with changes_deferred():  # tens of thousands of deletions: appended in a few statements
                _Hard(project, actor, report, progress, embed=not dry_run).run(ids, selection.whole_sessions())
        audit_record(project, actor, report, {"mode": mode, "filter": selection.audit_json()})
    return report


def memory_forget(*, project: Project, actor: str, memory_id: int) -> bool:
    """An agent's forget of one memory: soft (hidden from recall, pages and the mirror, the row kept until an
    admin deletes it for good). True when it was forgotten now, False when it already was."""
    status = Memory.objects.filter(project=project, pk=memory_id).values_list("status", flat=True).first()
    if status is None:
        raise NotFoundError(f"No memory {memory_id} in project {project.slug!r}.")
    if status == MemoryStatus.FORGOTTEN:
        return False
    forget_run(project=project, actor=actor, selection=ForgetFilter(memory_ids=(memory_id,)), mode="soft")
    return True


def _soft(project: Project, actor: str, ids: list[int], report: JobReport, progress: Progress) -> None:
    locked = Memory.objects.select_for_update(of=("self",)).select_related("session").filter(pk__any_of=ids)
    for done, memory in enumerate(locked.order_by("id"), start=1):
        before = memory_snapshot(memory)
        memory.status = MemoryStatus.FORGOTTEN
        memory.save(update_fields=["status", "updated_at"])
        change_record(project=project, session=memory.session, actor=actor, op=Op.MEMORY_FORGOTTEN,
                      object_type="memory", object_id=memory.pk, before=before, after=memory_snapshot(memory))
        risk_propagate(memory, RiskChange.FORGOTTEN, actor=actor)  # told without its text
        report.touch("forgotten", memory.pk)
        progress(done, len(ids))


def _rows_delete(model: type, column: str, ids: list[int]) -> None:
    """One DELETE for thousands of rows. The ORM's delete() would load every row and its dependents to
    cascade in Python; the cascade here deletes each dependent table first (_Hard._memories_delete)."""
    if ids:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE {column} = ANY(%s::bigint[])", [id_array(ids)])


TOMBSTONE_FIELDS = ("id", "session_id", "kind", "status", "content")  # a deleted memory's snapshot


def _tombstone(memory: Memory) -> dict:
    return {**{name: getattr(memory, name) for name in TOMBSTONE_FIELDS}, "content": REDACTED}


@dataclass
class _Hard:
    """One hard forget, step by step, inside the caller's transaction."""

    project: Project
    actor: str
    report: JobReport
    progress: Progress
    embed: bool
    doomed: set[int] = field(default_factory=set)
    rewritten: set[int] = field(default_factory=set)
    needles: Needles = field(default_factory=Needles)
    sessions: dict[int, AgentSession] = field(default_factory=dict)
    whole: tuple[int, ...] = ()  # the sessions deleted whole (ForgetFilter.whole_sessions)

    def run(self, ids: list[int], whole_sessions: tuple[int, ...] = ()) -> None:
        self.whole = tuple(sorted(whole_sessions))
        session_texts = self._sessions_lock()
        self.doomed = self._with_merged(set(ids))
        self.report.counts["merged_duplicates"] = len(self.doomed) - len(ids)
        texts = list(Memory.objects.select_for_update(of=("self",)).filter(pk__any_of=self.doomed).order_by("id")
                     .values_list("content", flat=True))  # locked: no edge or mention can be added meanwhile
        sources = self._sources_only_of_doomed()
        last_change_id = GraphChange.objects.filter(project=self.project).order_by("-id") \
            .values_list("id", flat=True).first() or 0
        source_texts = list(Interaction.objects.filter(pk__any_of=sources).values_list("content", flat=True))
        self.needles.add_texts(texts + source_texts)
        # What the whole sessions' other interactions said (filtered chit-chat may hold personal data): their
        # rows go, and copies of their specific texts elsewhere are scrubbed; "ok" and "thanks" are everyone's
        # words, so short ones are no needles (the change rows about those interactions are blanked by id).
        self.needles.add_texts(session_texts, short=False)
        entity_ids = set(EntityMention.objects.filter(memory_id__any_of=self.doomed)
                         .values_list("entity_id", flat=True))
        entity_ids |= self._summaries()
        edge_ids = self._edges_delete()
        self._memories_delete()
        self._entities_delete(entity_ids)
        deleted = self._sessions_interactions_delete()
        scrubbed = interactions_scrub(self.project, self.needles, whole_ids=sources, repeats=texts + source_texts)
        self.report.touch("interactions_redacted", *scrubbed)
        changes_append_select(
            project=self.project, actor=self.actor, op=Op.INTERACTION_REDACTED, object_type="interaction",
            rows_sql=f"SELECT i.session_id, i.id AS object_id, NULL::jsonb AS before, "
                     f"jsonb_build_object('content', %s::text) AS after, i.id AS n "
                     f"FROM {Interaction._meta.db_table} i WHERE i.id = ANY(%s::bigint[])",
            params=[REDACTED, id_array(scrubbed)])
        self.report.counts["interactions_redacted"] = len(scrubbed)
        self.report.counts["traces_scrubbed"] = traces_scrub(self.project, self.needles, reached=self.doomed)
        self.report.counts["notes_scrubbed"] = free_text_scrub(
            self.project, self.needles, gone={"memory": self.doomed, "edge": edge_ids, "interaction": deleted})
        self.report.counts["changes_scrubbed"] = changes_scrub(
            self.project, self.needles, memory_ids=self.doomed | self.rewritten, edge_ids=edge_ids,
            interaction_ids=scrubbed | deleted, session_ids=set(self.whole), up_to_id=last_change_id)
        self._sessions_delete()

    def _sessions_lock(self) -> list[str]:
        """Lock the whole sessions' interactions (in id order, as the write path does, so a batch being
        processed finishes first), then the sessions' rows: until the commit nothing can be added to them
        (an insert's foreign-key check waits for the lock, then finds the session gone). Returns the texts of
        their interactions that back none of their memories (filtered, failed, pending)."""
        if not self.whole:
            return []
        table, sources = Interaction._meta.db_table, Memory.sources.through._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT i.content, EXISTS (SELECT 1 FROM {sources} s WHERE s.interaction_id = i.id) "
                           f"FROM {table} i WHERE i.session_id = ANY(%s::bigint[]) ORDER BY i.id FOR UPDATE",
                           [id_array(self.whole)])
            texts = [content for content, backs in cursor.fetchall() if not backs]
        list(AgentSession.objects.select_for_update().filter(pk__in=self.whole).order_by("id").values_list("id"))
        return texts

    def _sessions_interactions_delete(self) -> set[int]:
        """Every interaction of the whole sessions, whatever its status, goes (after their memories): links
        from memories of other sessions (a duplicate merged there kept its provenance) and from store items
        included. Returns their ids."""
        if not self.whole:
            return set()
        table = Interaction._meta.db_table
        theirs = f"SELECT id FROM {table} WHERE session_id = ANY(%s::bigint[])"
        whole = id_array(self.whole)
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {Memory.sources.through._meta.db_table} WHERE interaction_id IN ({theirs})",
                           [whole])
            cursor.execute(f"UPDATE {StoreItem._meta.db_table} SET interaction_id = NULL "
                           f"WHERE interaction_id IN ({theirs})", [whole])
            cursor.execute(f"DELETE FROM {InteractionLink._meta.db_table} WHERE child_id IN ({theirs}) "
                           f"OR parent_id IN ({theirs})", [whole, whole])
            cursor.execute(f"DELETE FROM {table} WHERE session_id = ANY(%s::bigint[]) RETURNING id", [whole])
            deleted = {row[0] for row in cursor.fetchall()}
        self.report.counts["interactions_deleted"] = len(deleted)
        return deleted

    def _sessions_delete(self) -> None:
        """The session rows, last, with what Django's cascade still holds of them (their store items, recall
        traces and layout are deleted, curators' acts and change-log rows keep theirs without the session);
        one `session.deleted` change each, without content."""
        if not self.whole:
            return
        changes_append_select(
            project=self.project, actor=self.actor, op=Op.SESSION_DELETED, object_type="session",
            rows_sql=f"SELECT NULL::bigint AS session_id, s.id AS object_id, jsonb_build_object('id', s.id) AS before, "
                     f"NULL::jsonb AS after, s.id AS n FROM {AgentSession._meta.db_table} s "
                     f"WHERE s.id = ANY(%s::bigint[])",
            params=[id_array(self.whole)])
        _, deleted = AgentSession.objects.filter(project=self.project, pk__in=self.whole).delete()
        self.report.counts.update(sessions_deleted=deleted.get(AgentSession._meta.label, 0),
                                  traces_deleted=deleted.get(RecallTrace._meta.label, 0),
                                  store_items_deleted=deleted.get(StoreItem._meta.label, 0))
        self.report.touch("sessions_deleted", *self.whole)

    def _with_merged(self, ids: set[int]) -> set[int]:
        """Duplicates merged into a forgotten memory hold the same text: they go with it."""
        into = dict(Memory.objects.filter(project=self.project, dimensions__has_key="merged_into")
                    .values_list("id", "dimensions__merged_into"))  # few: read them all, follow them here
        frontier = set(ids)
        while frontier:
            merged = {pk for pk, target in into.items() if target in frontier} - ids
            ids |= merged
            frontier = merged
        return ids

    def _sources_only_of_doomed(self) -> set[int]:
        through = Memory.sources.through
        sources = set(through.objects.filter(memory_id__any_of=self.doomed).values_list("interaction_id", flat=True))
        backed = through.objects.filter(interaction_id__any_of=sources).values_list("interaction_id", "memory_id")
        # Compared here: `NOT memory_id = ANY(ten thousand ids)` is a linear search of the array per row.
        shared = {interaction for interaction, memory in backed if memory not in self.doomed}
        return sources - shared

    def _summaries(self) -> set[int]:
        """Rewrite (or delete) every summary built from forgotten text, until none is left; returns the
        entities their old mentions pointed at (candidates for orphan removal)."""
        entity_ids: set[int] = set()
        self.report.counts.update(summaries_rewritten=0, summaries_deleted=0)
        while True:
            affected = self._affected_summaries()
            if not affected:
                return entity_ids
            for summary in affected:
                entity_ids |= set(summary.mentions.values_list("entity_id", flat=True))
                self._summary_fix(summary)

    def _affected_summaries(self) -> list[Memory]:
        derived = Q(in_edges__relation=Relation.SUMMARIZES, in_edges__source_id__any_of=self.doomed)
        quoting = Q(pk__in=ids_matching(Memory._meta.db_table, self.project, ("content",), (), self.needles,
                                        where=f"kind = '{MemoryKind.SUMMARY.value}'"))
        queryset = Memory.objects.filter(project=self.project, kind=MemoryKind.SUMMARY).exclude(pk__any_of=self.doomed)
        return list(queryset.filter(derived | quoting).exclude(pk__in=self.rewritten).distinct().order_by("id"))

    def _summary_fix(self, summary: Memory) -> None:
        parents = Edge.objects.filter(target=summary, relation=Relation.SUMMARIZES).values_list("source_id", flat=True)
        had_parents = parents.exists()
        members = list(Memory.objects.filter(pk__in=list(parents)).exclude(pk__any_of=self.doomed)
                       .exclude(status=MemoryStatus.FORGOTTEN).order_by("occurred_at", "id"))
        self.needles.add_texts([summary.content], sentences=False)
        if had_parents and not members:
            self.doomed.add(summary.pk)
            self.report.add("summaries_deleted")
            return
        before = _tombstone(summary)
        if members:
            text = extractive_text(self.project, members, note="rewritten without forgotten memories")
            vector = get_embedder().embed_one(text.text) if self.embed else None
            after = summary_rewrite(self.project, summary, members, text, vector)
        else:  # a summary nobody linked: only the quoted text goes
            summary.content = self.needles.redact(summary.content)
            summary.save(update_fields=["content", "updated_at"])
            after = memory_snapshot(summary)
        self.rewritten.add(summary.pk)
        self.report.add("summaries_rewritten")
        change_record(project=self.project, session=self._session(summary.session_id), actor=self.actor,
                      op=Op.MEMORY_UPDATED, object_type="memory", object_id=summary.pk, before=before, after=after)

    def _edges_delete(self) -> set[int]:
        """Tens of thousands of edges: their change rows (snapshot without the rationale) are built by the
        server from the edges themselves before the one DELETE. The doomed memories are locked, so no edge
        can be added to them in between."""
        doomed = id_array(self.doomed)
        table = Edge._meta.db_table
        # Each side through its own index: `source_id = ANY(a) OR target_id = ANY(a)` is one linear search
        # of the array per edge (3.5 s for 10,000 memories). Edges recorded in a session deleted whole go too.
        touching = (f"id IN (SELECT id FROM {table} WHERE source_id = ANY(%s::bigint[]) "
                    f"UNION SELECT id FROM {table} WHERE target_id = ANY(%s::bigint[]) "
                    f"UNION SELECT id FROM {table} WHERE session_id = ANY(%s::bigint[]))")
        changes_append_select(
            project=self.project, actor=self.actor, op=Op.EDGE_DELETED, object_type="edge",
            rows_sql=f"SELECT e.session_id, e.id AS object_id, "
                     f"{snapshot_sql(Edge, EDGE_FIELDS, 'e', replaced=('rationale',))} AS before, "
                     f"NULL::jsonb AS after, e.id AS n FROM {table} e WHERE e.{touching}",
            params=[REDACTED, doomed, doomed, id_array(self.whole)])
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE {touching} RETURNING id", [doomed, doomed, id_array(self.whole)])
            edge_ids = {row[0] for row in cursor.fetchall()}
        self.report.counts["edges"] = len(edge_ids)
        return edge_ids

    def _memories_delete(self) -> None:
        doomed = sorted(self.doomed)
        self.report.counts["mentions"] = EntityMention.objects.filter(memory_id__any_of=doomed).count()
        self.report.counts["embeddings"] = MemoryEmbedding.objects.filter(memory_id__any_of=doomed).count()
        self.progress(0, len(doomed))
        deleted = changes_append_select(
            project=self.project, actor=self.actor, op=Op.MEMORY_DELETED, object_type="memory",
            rows_sql=f"SELECT m.session_id, m.id AS object_id, "
                     f"{snapshot_sql(Memory, TOMBSTONE_FIELDS, 'm', replaced=('content',))} AS before, "
                     f"NULL::jsonb AS after, m.id AS n FROM {Memory._meta.db_table} m WHERE m.id = ANY(%s::bigint[])",
            params=[REDACTED, id_array(doomed)])
        for model in (EntityMention, MemoryEmbedding, NodePosition, Memory.sources.through):
            _rows_delete(model, "memory_id", doomed)
        risks_drop(doomed, actor=self.actor)
        _rows_delete(Memory, "id", doomed)
        self.progress(len(doomed), len(doomed))
        self.report.counts["deleted"] = len(deleted)
        self.report.touch("deleted", *self.doomed)

    def _entities_delete(self, candidates: set[int]) -> None:
        orphans = list(Entity.objects.filter(pk__any_of=candidates).annotate(n=Count("mentions")).filter(n=0)
                       .order_by("id"))
        self.needles.add_names([name for e in orphans for name in [e.name, *e.aliases]])
        for entity in orphans:
            change_record(project=self.project, session=None, actor=self.actor, op=Op.ENTITY_DELETED,
                          object_type="entity", object_id=entity.pk, before={"id": entity.pk, "type": entity.type})
        Entity.objects.filter(pk__in=[e.pk for e in orphans]).delete()
        self.report.counts["entities"] = len(orphans)

    def _session(self, session_id: int | None) -> AgentSession | None:
        if session_id is None:
            return None
        if session_id not in self.sessions:
            self.sessions[session_id] = AgentSession.objects.get(pk=session_id)
        return self.sessions[session_id]
