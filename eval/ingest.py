"""Play one labelled file through the real write path and map its local ids to memory ids."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.text import slugify

from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.links import LinkInput
from memory.engine.pipeline import interaction_process
from memory.engine.projects import project_create, session_create
from memory.models import AgentSession, Interaction, Memory, Project

from .dataset import DeclaredLink, EvalFile, EvalInteraction

logger = logging.getLogger(__name__)
ACTOR = "eval"
TURN_SECONDS = 30  # interactions of a session are spaced like a real exchange…
SESSION_GAP = timedelta(days=1)  # …and each session of a project happens a day after the previous one


@dataclass
class IngestedFile:
    spec: EvalFile
    project: Project
    sessions: dict[str, AgentSession]
    memories: dict[str, list[int]]  # local id -> ids of the memories the interaction became part of
    statuses: dict[str, str]  # local id -> interaction status (kept / filtered / failed / pending)
    seconds: float = 0.0
    sources: dict[int, list[str]] = field(default_factory=dict)  # memory id -> local ids of its sources, in order
    memory_status: dict[int, str] = field(default_factory=dict)  # memory id -> active / superseded / …

    def kept(self, local_id: str) -> bool:
        return bool(self.memories.get(local_id))

    def marked_superseded(self, local_id: str) -> bool:
        """True when every memory carrying the interaction has been marked superseded by the engine."""
        ids = self.memories.get(local_id) or []
        return bool(ids) and all(self.memory_status.get(m) == "superseded" for m in ids)

    def label(self, memory_id: int, prefer: set[str] | frozenset[str] = frozenset()) -> str:
        """The local id a returned memory stands for: a preferred (e.g. needed) source if it has one, else its
        first source; "#<id>" for a memory made from no interaction of the file (e.g. a summary)."""
        sources = self.sources.get(memory_id, [])
        return next((s for s in sources if s in prefer), sources[0] if sources else f"#{memory_id}")


def project_slug(spec: EvalFile) -> str:
    return slugify(f"eval-{spec.name}")[:100]


# What of the agent's side an ingest sends (eval/links files): nothing (offline rules only), the declared links
# with the framework's ids, or those and the recall-then-act turns (a recall run before the turn, its id and
# what it used sent with it).
AGENT_SIDES = ("offline", "declared", "declared+use")


def ingest_file(spec: EvalFile, progress: Callable[[int], None] | None = None, *,
                with_task: bool = True, agent_side: str = "offline") -> IngestedFile:
    """Delete and recreate the file's project, then accept + process every interaction in file order.

    `with_task=False` gives every session an empty task focus (agents often send none). `agent_side`: one of
    AGENT_SIDES."""
    if agent_side not in AGENT_SIDES:
        raise ValueError(f"agent_side must be one of {AGENT_SIDES}")
    started = time.perf_counter()
    slug = project_slug(spec)
    Project.objects.filter(slug=slug).delete()
    project = project_create(name=spec.project, slug=slug)
    first_day = timezone.now() - SESSION_GAP * len(spec.sessions)
    sessions: dict[str, AgentSession] = {}
    for index, eval_session in enumerate(spec.sessions):
        session = session_create(
            project=project, title=eval_session.title, task=eval_session.task if with_task else "",
            external_id=f"eval-{eval_session.key}", actor=ACTOR,
            metadata={"language": spec.language, "eval_file": spec.name, "eval_session": eval_session.key},
        )
        sessions[eval_session.key] = session
        start = _session_start(eval_session.date) if eval_session.date else first_day + SESSION_GAP * index
        for turn, item in enumerate(eval_session.interactions):
            extra = _agent_side(project, session, item, agent_side)
            _ingest_one(session, item.kind, item.content, item.metadata, item.id,
                        start + timedelta(seconds=TURN_SECONDS * turn), **extra)
            if progress:
                progress(1)
    ingested = IngestedFile(spec=spec, project=project, sessions=sessions, memories={}, statuses={})
    _map_ids(ingested)
    ingested.seconds = time.perf_counter() - started
    return ingested


def _session_start(day: str) -> datetime:
    """A dated session starts at 19:00 UTC that day."""
    return datetime.fromisoformat(f"{day}T19:00:00+00:00")


def _agent_side(project: Project, session: AgentSession, item: EvalInteraction, side: str) -> dict:
    """What the agent sends beside the turn: its framework id and declared links (a link names the earlier
    turn by its idempotency key, the local id); with use, the recall it ran first and what it used of it."""
    if side == "offline":
        return {}
    extra: dict = {"external_id": item.external_id,
                   "links": tuple(_link(project, session, link) for link in item.links)}
    if side == "declared+use" and item.recall is not None:
        from memory.engine.recall import RecallQuery, memory_recall

        recall = memory_recall(project=project, actor=ACTOR,
                               query=RecallQuery(text=item.recall.query, k=RECALL_K, session=session))
        used = Memory.objects.filter(project=project, sources__idempotency_key__in=item.recall.used,
                                     sources__project=project).exclude(status="forgotten")
        extra.update(recall_id=recall.trace.pk, used=tuple(sorted(set(used.values_list("pk", flat=True)))))
    return extra


RECALL_K = 5  # what an agent recalls before it acts


def _link(project: Project, session: AgentSession, link: DeclaredLink) -> LinkInput:
    """By the earlier turn's idempotency key in its own session; by our id when it is in another session."""
    found = (Interaction.objects.filter(project=project, idempotency_key=link.to)
             .values_list("pk", "session_id").first())
    if found and found[1] != session.pk:
        return LinkInput("id", str(found[0]), link.relation)
    return LinkInput("idempotency_key", link.to, link.relation)


def _ingest_one(session: AgentSession, kind: str, content: str, metadata: dict, local_id: str,
                occurred_at: datetime, **agent_side) -> None:
    item = InteractionInput(kind=kind, content=content, metadata=metadata, occurred_at=occurred_at,
                            idempotency_key=local_id, **agent_side)
    accepted = interactions_accept(session=session, items=[item], actor=ACTOR)
    # Inline mode has processed it on commit already (then this is a no-op); in queue mode it does the work.
    try:
        interaction_process(interaction_id=accepted[0].interaction.pk)
    except Exception as exc:  # noqa: BLE001 - a failed interaction is an engine error to report, not a crash
        logger.warning("interaction %s failed to process: %s: %s", local_id, type(exc).__name__, exc)


def _map_ids(ingested: IngestedFile) -> None:
    rows = Interaction.objects.filter(project=ingested.project).prefetch_related("memories").order_by("occurred_at")
    for interaction in rows:
        local_id = interaction.idempotency_key or ""
        memory_ids = sorted(m.pk for m in interaction.memories.all())
        ingested.memories[local_id] = memory_ids
        ingested.statuses[local_id] = interaction.status
        ingested.memory_status.update({m.pk: m.status for m in interaction.memories.all()})
        for memory_id in memory_ids:
            ingested.sources.setdefault(memory_id, []).append(local_id)
