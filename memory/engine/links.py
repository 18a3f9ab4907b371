"""Links the agent declares: "this interaction depends on that one", turned into edges of origin `agent`.

The agent knows its dependencies (a tool result answers its call, a step acts on the one before); the
engine only guesses them. A link names its parent by our id (any interaction of the project), or by the
idempotency key or external id of an interaction of the same session. It is recorded at acceptance, bound
to its parent as soon as that arrives (traces often send the child first), and becomes edges between the
two interactions' memories once both are processed. A parent the filter dropped is bridged over: the
child then depends on what that parent depended on. A link that cannot become an edge stays on record
with its status (`waiting`, `no_memory`), never dropped.

Declared edges are like a person's: inference, review, decay and merging leave them alone (KNOWN_ORIGINS).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from ..errors import ValidationFailed
from ..models import (
    Edge,
    EdgeOrigin,
    EdgeStatus,
    Interaction,
    InteractionLink,
    InteractionStatus,
    LinkBy,
    LinkStatus,
    Memory,
    MemoryStatus,
    Relation,
)
from .changelog import ENGINE_ACTOR, change_record
from .operations import Op
from .snapshots import edge_snapshot

# The relations a link may declare: dependencies. Supersedes is the engine's or a person's judgement of a
# value; the structural ones (adjacency, shared entities, summaries) are the engine's own bookkeeping.
LINK_RELATIONS = (Relation.CAUSAL, Relation.CONDITIONAL, Relation.TEMPORAL, Relation.ELABORATES,
                  Relation.PART_OF, Relation.REFERENCES)
MAX_LINKS = 32  # per interaction
BRIDGE_DEPTH = 4  # how many dropped parents in a row a link is carried over
DONE = (InteractionStatus.KEPT, InteractionStatus.FILTERED)


@dataclass(frozen=True)
class LinkInput:
    by: str  # LinkBy
    ref: str
    relation: str = Relation.CAUSAL


def links_check(links: list[LinkInput], where: str = "links") -> None:
    """Engine-level guard (the API's serializer says the same per field): a clear error naming the link."""
    if len(links) > MAX_LINKS:
        raise ValidationFailed(f"{len(links)} links; the limit is {MAX_LINKS} per interaction",
                               {where: [f"at most {MAX_LINKS} links"]})
    for index, link in enumerate(links):
        problem = _link_problem(link)
        if problem:
            raise ValidationFailed(f"{where}[{index}]: {problem}", {where: {str(index): [problem]}})


def _link_problem(link: LinkInput) -> str | None:
    if link.by not in LinkBy.values:
        return f"name the interaction by one of {', '.join(LinkBy.values)}"
    if not link.ref or len(link.ref) > 200:
        return "the reference must be 1 to 200 characters"
    if link.by == LinkBy.ID and not (link.ref.isascii() and link.ref.isdigit() and 0 < int(link.ref) < 2**63):
        return f"{link.ref!r} is not an interaction id"
    if link.relation not in LINK_RELATIONS:
        return f"relation {link.relation!r} cannot be declared; use one of {', '.join(LINK_RELATIONS)}"
    return None


def links_record(child: Interaction, links: list[LinkInput], where: str) -> None:
    """Store a new interaction's links, each bound to its parent when that is already here.

    A link by id must name an interaction of this project received before: an id is ours, so it exists
    or it is wrong. The error is the same for an id of another project as for no id at all."""
    rows = []
    for index, link in enumerate(dict.fromkeys(links)):  # the same link twice is one link
        parent = _parent_of(child, link)
        if link.by == LinkBy.ID and parent is None:
            message = f"no interaction {link.ref} in this project"
            raise ValidationFailed(f"{where}[{index}]: {message}", {where: {str(index): [message]}})
        if parent is not None and parent.pk == child.pk:
            message = "an interaction cannot depend on itself"
            raise ValidationFailed(f"{where}[{index}]: {message}", {where: {str(index): [message]}})
        rows.append(InteractionLink(project_id=child.project_id, session_id=child.session_id, child=child,
                                    by=link.by, ref=link.ref, relation=link.relation, parent=parent))
    InteractionLink.objects.bulk_create(rows)


def _parent_of(child: Interaction, link: LinkInput) -> Interaction | None:
    if link.by == LinkBy.ID:
        return Interaction.objects.filter(project_id=child.project_id, pk=int(link.ref)).first()
    if link.by == LinkBy.IDEMPOTENCY_KEY:
        return Interaction.objects.filter(session_id=child.session_id, idempotency_key=link.ref) \
            .exclude(idempotency_key__isnull=True).first()
    # Excluding "" states the unique index's condition: a prepared statement's generic plan can use it then.
    return Interaction.objects.filter(session_id=child.session_id, external_id=link.ref).exclude(external_id="").first()


def links_bind(interaction: Interaction) -> int:
    """Bind the links of its session that were waiting for this newly accepted interaction (by its key or
    external id). Returns how many."""
    names = Q()
    if interaction.idempotency_key:
        names |= Q(by=LinkBy.IDEMPOTENCY_KEY, ref=interaction.idempotency_key)
    if interaction.external_id:
        names |= Q(by=LinkBy.EXTERNAL_ID, ref=interaction.external_id)
    if not names:
        return 0
    return (InteractionLink.objects.filter(names, session_id=interaction.session_id, parent__isnull=True)
            .exclude(child_id=interaction.pk).update(parent=interaction))


def links_settle(interaction: Interaction) -> list[Edge]:
    """After `interaction` was processed: settle every waiting link it is an end of whose other end is
    processed too (its own links, and those of interactions that depend on it). A dropped interaction whose own
    link just settled lets the links waiting on it bridge over it now, so they are looked at again."""
    edges: list[Edge] = []
    queue, seen = [interaction.pk], {interaction.pk}
    while queue:
        current = queue.pop(0)
        waiting = (InteractionLink.objects.filter(Q(child_id=current) | Q(parent_id=current),
                                                  status=LinkStatus.WAITING, parent__isnull=False)
                   .select_related("child", "parent").order_by("pk"))
        for link in waiting:
            made = _settle(link, done_now=interaction)
            edges += made or []
            if made is not None and link.child_id not in seen and len(seen) <= BRIDGE_DEPTH:
                seen.add(link.child_id)
                queue.append(link.child_id)  # if it was dropped, its dependents may bridge over it now
    return edges


def _done(interaction: Interaction, done_now: Interaction) -> bool:
    return interaction.pk == done_now.pk or interaction.status in DONE


def _settle(link: InteractionLink, done_now: Interaction) -> list[Edge] | None:
    """The edges the link became (settled), or None while it waits."""
    if not (_done(link.child, done_now) and _done(link.parent, done_now)):
        return None
    children = _memories_of([link.child_id])
    parents = _bridged_parents(link.parent_id, done_now.pk)
    if parents is None:  # a dropped parent's own parent is not processed yet
        return None
    if not children or not parents:
        end = "this interaction" if not children else f"interaction {link.parent_id} (and what it depends on)"
        _close(link, LinkStatus.NO_MEMORY, [], f"{end} kept no memory")
        return []
    edges = [edge for parent in parents for child in children if parent.pk != child.pk
             for edge in [_declared_edge(parent, child, link)] if edge is not None]
    note = "" if edges else "both ends are one memory, or a person rejected this pair"
    _close(link, LinkStatus.RESOLVED, [e.pk for e in edges], note)
    return edges


def _close(link: InteractionLink, status: str, edge_ids: list[int], note: str) -> None:
    link.status, link.edge_ids, link.note, link.resolved_at = status, edge_ids, note[:300], timezone.now()
    link.save(update_fields=["status", "edge_ids", "note", "resolved_at"])


def _memories_of(interaction_ids: Iterable[int]) -> list[Memory]:
    return list(Memory.objects.filter(sources__in=list(interaction_ids))
                .exclude(status=MemoryStatus.FORGOTTEN).select_related("project", "session").distinct()
                .order_by("pk"))


def _bridged_parents(parent_id: int, done_now: int) -> list[Memory] | None:
    """The memories a link's parent stands for: its own; if the filter dropped it, those of what it was
    declared to depend on, up to BRIDGE_DEPTH dropped interactions deep. None while one on the way is
    unprocessed or not received yet (the link waits)."""
    found: dict[int, Memory] = {}
    frontier, seen = [parent_id], {parent_id}
    for _ in range(BRIDGE_DEPTH + 1):
        if not frontier:
            break
        if Interaction.objects.filter(pk__in=frontier).exclude(pk=done_now).exclude(status__in=DONE).exists():
            return None
        dropped = []
        for pk in frontier:
            memories = _memories_of([pk])
            found.update((m.pk, m) for m in memories)
            if not memories:
                dropped.append(pk)
        if InteractionLink.objects.filter(child_id__in=dropped, parent__isnull=True).exists():
            return None  # what a dropped one depends on has not arrived: wait for it
        upward = set(InteractionLink.objects.filter(child_id__in=dropped, parent__isnull=False)
                     .values_list("parent_id", flat=True)) - seen
        seen |= upward
        frontier = sorted(upward)
    return sorted(found.values(), key=lambda m: m.pk)


def _declared_edge(parent: Memory, child: Memory, link: InteractionLink) -> Edge | None:
    """The edge parent -> child the link declares: created, or an inferred one of the same relation taken
    over (origin agent, confidence 1). A pair a person rejected stays rejected; a person's edge stays theirs."""
    pair = Edge.objects.filter(source=parent, target=child)
    if pair.filter(status=EdgeStatus.REJECTED).exists():
        return None
    rationale = f"declared by the agent: interaction {link.child_id} depends on {link.parent_id}"
    same = pair.filter(relation=link.relation).first()
    if same is not None:
        if same.origin in (EdgeOrigin.HUMAN, EdgeOrigin.AGENT) or same.status != EdgeStatus.INFERRED:
            return same
        before = edge_snapshot(same)
        same.origin, same.confidence, same.needs_review, same.rationale = EdgeOrigin.AGENT, 1.0, False, rationale
        same.save(update_fields=["origin", "confidence", "needs_review", "rationale", "updated_at"])
        change_record(project=child.project, session=child.session, actor=ENGINE_ACTOR, op=Op.EDGE_UPDATED,
                      object_type="edge", object_id=same.pk, before=before, after=edge_snapshot(same))
        return same
    edge = Edge.objects.create(project_id=child.project_id, session_id=child.session_id, source=parent, target=child,
                               relation=link.relation, confidence=1.0, origin=EdgeOrigin.AGENT,
                               status=EdgeStatus.INFERRED, rationale=rationale)
    change_record(project=child.project, session=child.session, actor=ENGINE_ACTOR, op=Op.EDGE_CREATED,
                  object_type="edge", object_id=edge.pk, after=edge_snapshot(edge))
    return edge
