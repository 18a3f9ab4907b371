"""Dependency inference (SPEC §3.5–3.7): which earlier memories a new one depends on, and how.

Candidates: the most similar memories of the session, memories sharing an entity, and the previous
memory. Each candidate gets one relation or none, with a confidence and a rationale: offline rules
(English and Chinese causal cue words, tool call/result pairing, decisions resting on earlier
decisions, values an agent's thought or tool call reuses) or an LLM when configured. Edges at or
above the project's confidence threshold are applied; weaker ones are kept as proposals
(needs_review). Human decisions win: a pair with a human edge, or an edge a human rejected, is never
re-inferred.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from pydantic import BaseModel, Field

from ..errors import ProviderError
from ..models import (
    KNOWN_ORIGINS,
    Edge,
    EdgeOrigin,
    EdgeStatus,
    Interaction,
    InteractionKind,
    Memory,
    MemoryKind,
    Relation,
)
from ..providers import get_llm
from .changelog import ENGINE_ACTOR, change_record
from .operations import Op
from .sensitivity import shareable
from .snapshots import edge_snapshot

logger = logging.getLogger(__name__)

CAUSAL = re.compile(r"\b(because|so that|therefore|thus|as a result|due to|hence|caused by|since)\b"
                    r"|因为|所以|导致|因此|由于|结果|造成", re.I)
DECISION_BASES = {MemoryKind.DECISION, MemoryKind.CONSTRAINT, MemoryKind.PREFERENCE, MemoryKind.ERROR}
# Edges that record where a memory stands (adjacency, one speaker's turns, a shared name), not a dependency.
STRUCTURAL = {Relation.SHARES_ENTITY, Relation.NEXT_IN_SESSION, Relation.NEXT_BY_SPEAKER}
INFERRED = {Relation.CAUSAL, Relation.CONDITIONAL, Relation.TEMPORAL, Relation.ELABORATES, Relation.PART_OF,
            Relation.REFERENCES}
DEFAULT_EDGE_THRESHOLD = 0.6
# Values specific enough that a later memory repeating one is using the earlier memory's result.
SPECIFIC_VALUE_KEYS = ("numbers", "dates", "amounts", "urls", "paths", "identifiers")
SPECIFIC_IDENTIFIER = re.compile(r"[\d.\-/]")  # versions, hosts, ids: not bare words like a function name
CONDITION_KINDS = {MemoryKind.CONSTRAINT, MemoryKind.PREFERENCE}
VALUE_USERS = {InteractionKind.AGENT_THOUGHT, InteractionKind.TOOL_CALL}  # steps that act on a value they got


@dataclass(frozen=True)
class Candidate:
    memory: Memory
    similarity: float
    shared_entities: int
    is_previous: bool

    @property
    def strength(self) -> float:
        return self.similarity + 0.2 * min(self.shared_entities, 2) + (0.15 if self.is_previous else 0.0)


@dataclass(frozen=True)
class Proposal:
    parent: Memory
    relation: str
    confidence: float
    rationale: str
    origin: str = EdgeOrigin.RULE


def _source(memory: Memory) -> Interaction | None:
    """The memory's (first) source interaction; the pipeline attaches it as `source_interaction`."""
    if "source_interaction" in vars(memory):
        return memory.source_interaction
    return memory.sources.order_by("id").first()


def _tool_pair(child_src: Interaction, candidate: Candidate) -> Proposal | None:
    parent_src = _source(candidate.memory)
    if parent_src is None or child_src.kind != InteractionKind.TOOL_RESULT:
        return None
    call_id = child_src.metadata.get("call_id")
    same_call = call_id is not None and parent_src.metadata.get("call_id") == call_id
    if same_call or (candidate.is_previous and parent_src.kind in (InteractionKind.TOOL_CALL,
                                                                   InteractionKind.AGENT_THOUGHT)):
        why = "tool result of this call" if same_call else f"tool result right after the {parent_src.kind}"
        return Proposal(candidate.memory, Relation.CAUSAL, 0.9 if same_call else 0.75, why)
    return None


# An agent's step that reacts to the one right before it: (parent kind, child kind) -> relation, confidence.
# Measured on the labelled sessions (`make eval`): a thought after a tool result builds on it 19 times in 22,
# a tool call right after a request or a thought carries it out 26 times in 54, an observation after a
# result details it 3 in 6. Turn-taking in a conversation (user after user) is no such step: 6 in 1,852.
AGENT_STEPS: dict[tuple[str, str], tuple[str, float]] = {
    (InteractionKind.TOOL_RESULT, InteractionKind.AGENT_THOUGHT): (Relation.CAUSAL, 0.8),
    (InteractionKind.OBSERVATION, InteractionKind.AGENT_THOUGHT): (Relation.CAUSAL, 0.7),
    (InteractionKind.USER_INPUT, InteractionKind.TOOL_CALL): (Relation.CAUSAL, 0.7),
    (InteractionKind.AGENT_THOUGHT, InteractionKind.TOOL_CALL): (Relation.CAUSAL, 0.65),
    (InteractionKind.TOOL_RESULT, InteractionKind.OBSERVATION): (Relation.ELABORATES, 0.65),
}


def _agent_step(child_src: Interaction, candidate: Candidate) -> Proposal | None:
    """The child is the agent's next step after its previous memory (a thought on a result, a call for a request)."""
    parent_src = _source(candidate.memory) if candidate.is_previous else None
    step = AGENT_STEPS.get((parent_src.kind, child_src.kind)) if parent_src is not None else None
    if step is None:
        return None
    relation, confidence = step
    return Proposal(candidate.memory, relation, confidence,
                    f"agent step: {child_src.kind} right after the {parent_src.kind}")


def _cue_relation(text: str) -> tuple[str, str] | None:
    """A causal cue word ("because", "所以"). "If", "then", "after" linked the closest memory too, but were
    wrong 49 times in 50 on the labelled edges (`make eval`), and recall lost nothing without them."""
    match = CAUSAL.search(text)
    return (Relation.CAUSAL, match.group(0)) if match else None


def infer_offline(child: Memory, candidates: list[Candidate]) -> list[Proposal]:
    child_src = _source(child)
    proposals: dict[int, Proposal] = {}
    for candidate in candidates:
        paired = (_tool_pair(child_src, candidate) or _agent_step(child_src, candidate)) if child_src else None
        if paired:
            proposals[candidate.memory.pk] = paired
    cue = _cue_relation(child.content)
    ranked = sorted((c for c in candidates if c.memory.pk not in proposals), key=lambda c: -c.strength)
    if cue and ranked:
        best = ranked[0]
        confidence = min(0.9, 0.5 + 0.1 * min(best.shared_entities, 2) + 0.3 * max(best.similarity, 0.0))
        proposals[best.memory.pk] = Proposal(best.memory, cue[0], round(confidence, 3),
                                             f"cue '{cue[1]}' and the closest related memory")
    owners = _value_owners(child, ranked)
    for candidate in ranked:
        if candidate.memory.pk in proposals:
            continue
        proposal = _content_rule(child, candidate, owners.get(candidate.memory.pk, set()))
        if proposal:
            proposals[candidate.memory.pk] = proposal
    return list(proposals.values())


def specific_values(memory: Memory) -> set[str]:
    """Numbers of two digits or more, dates, amounts, URLs, paths and identifiers with digits or dots."""
    dims = memory.dimensions or {}
    values = set()
    for key in SPECIFIC_VALUE_KEYS:
        for value in dims.get(key, []):
            text = str(value)
            if key == "numbers" and len(text.replace(".", "").lstrip("0")) < 2:
                continue
            if key == "identifiers" and not SPECIFIC_IDENTIFIER.search(text):
                continue
            values.add(f"{key}:{text}")
    return values


def _value_owners(child: Memory, ranked: list[Candidate]) -> dict[int, set[str]]:
    """Each value the child shares goes to one candidate only: a constraint or preference that set it,
    else the strongest candidate that has it. A value repeated all through a session (a version, a
    date) must not link the child to every repetition; `make eval` scored "strongest" above "earliest"."""
    mine = specific_values(child)
    owners: dict[int, set[str]] = {}
    for candidate in sorted(ranked, key=lambda c: c.memory.kind not in CONDITION_KINDS):  # stable: strongest first
        found = (mine & specific_values(candidate.memory)) - set().union(*owners.values())
        if found:
            owners[candidate.memory.pk] = found
    return owners


def _value_rule(child: Memory, candidate: Candidate, shared: set[str]) -> Proposal | None:
    """The agent acting on an earlier memory's specific values depends on it: on a user's constraint as
    a condition, as the action a request asked for, as a thought working with that result.

    Elsewhere a repeated value is an echo or a coincidence, not a dependency. On the labelled edges
    (`make eval`) a value repeated by a conversation turn, a tool result, a reply or another tool call
    stood for a dependency 2 times in 138, one reasoned over by a thought 7 in 10; a constraint's value
    in anything but a thought or a tool call 0 in 17. Recall lost nothing measurable without them."""
    parent = candidate.memory
    child_src = _source(child)
    if not shared or child_src is None or child_src.kind not in VALUE_USERS:
        return None
    confidence = round(min(0.85, 0.55 + 0.1 * len(shared) + 0.1 * max(candidate.similarity, 0.0)), 3)
    shown = ", ".join(sorted(v.split(":", 1)[1] for v in shared)[:3])
    parent_src = _source(parent)
    if parent.kind in CONDITION_KINDS:
        return Proposal(parent, Relation.CONDITIONAL, confidence, f"bound by the earlier {parent.kind} ({shown})")
    if child_src.kind == InteractionKind.TOOL_CALL:
        if parent_src is not None and parent_src.kind == InteractionKind.USER_INPUT:
            return Proposal(parent, Relation.CAUSAL, confidence, f"tool call carrying out the request ({shown})")
        return None
    return Proposal(parent, Relation.REFERENCES, confidence, f"reuses {shown}")


def _content_rule(child: Memory, candidate: Candidate, values: set[str]) -> Proposal | None:
    parent, sim, shared = candidate.memory, candidate.similarity, candidate.shared_entities
    if child.kind == MemoryKind.DECISION and parent.kind in DECISION_BASES and (shared or sim >= 0.35):
        return Proposal(parent, Relation.CAUSAL, round(min(0.85, 0.45 + 0.3 * sim + 0.1 * min(shared, 2)), 3),
                        f"decision resting on an earlier {parent.kind}")
    by_value = _value_rule(child, candidate, values)
    if by_value:
        return by_value
    # "Similar and sharing an entity" was no dependency: 5 of 177 such "elaborates" edges were labelled
    # (`make eval`), and recall lost nothing without them. Such a pair shares an entity, no more.
    if shared:
        return Proposal(parent, Relation.SHARES_ENTITY, 1.0, f"{shared} shared entit{'y' if shared == 1 else 'ies'}")
    return None


class LLMLink(BaseModel):
    candidate: int = Field(ge=0)
    relation: str
    confidence: float = Field(ge=0, le=1)
    rationale: str = Field(max_length=300)


class LLMLinks(BaseModel):
    links: list[LLMLink]


LLM_SYSTEM = (
    "You link a new memory of an AI agent to earlier memories it depends on. For each numbered candidate "
    "decide one relation or none: causal (new is a result of it), temporal (happens after and builds on it), "
    "conditional (holds only if it holds), elaborates (details it), part_of (a step of it), references. "
    'Answer JSON {"links": [{"candidate": n, "relation": "...", "confidence": 0-1, "rationale": "..."}]}.'
)


def infer(child: Memory, candidates: list[Candidate]) -> list[Proposal]:
    """Offline rules always; an LLM's links (when configured) replace the rules' for the pairs it names."""
    offline = infer_offline(child, candidates)
    llm = get_llm()
    if not llm.available or not candidates or not shareable([child]):  # sensitive text never reaches an LLM
        return offline
    allowed = {m.pk for m in shareable([c.memory for c in candidates])}
    sent = [c for c in candidates if c.memory.pk in allowed]
    if not sent:
        return offline
    listing = "\n".join(f"[{i}] ({c.memory.kind}) {c.memory.content[:400]}" for i, c in enumerate(sent))
    try:
        answer = llm.complete_json(system=LLM_SYSTEM, user=f"New memory ({child.kind}): {child.content[:800]}\n"
                                   f"Candidates:\n{listing}", schema=LLMLinks)
    except ProviderError as exc:
        logger.warning("LLM relation inference failed for memory %s: %s", child.pk, exc)
        return offline
    by_parent = {p.parent.pk: p for p in offline}
    for link in answer.links:
        if link.candidate < len(sent) and link.relation in INFERRED:
            parent = sent[link.candidate].memory
            by_parent[parent.pk] = Proposal(parent, link.relation, round(link.confidence, 3), link.rationale,
                                            EdgeOrigin.LLM)
    return list(by_parent.values())


def edges_apply(child: Memory, proposals: list[Proposal], threshold: float, *, new_child: bool = False) -> list[Edge]:
    """Create the proposed edges unless a person already decided about that pair.

    `new_child`: the child was created in this transaction, so no edge can point at it yet and the
    check for earlier (human) edges is skipped. The edges go in with one INSERT.
    """
    existing = list(Edge.objects.filter(source__in=[p.parent for p in proposals], target=child)
                    .values_list("source_id", "relation", "origin", "status")) if proposals and not new_child else []
    # A pair a person decided about (drew, approved, rejected, relabelled) is theirs: nothing is inferred on it.
    decided = {source for source, _, origin, status in existing
               if origin in KNOWN_ORIGINS or status != EdgeStatus.INFERRED}
    taken = {(source, relation) for source, relation, _, _ in existing}
    edges = []
    for proposal in proposals:
        if proposal.parent.pk in decided or (proposal.parent.pk, proposal.relation) in taken:
            continue
        structural = proposal.relation in STRUCTURAL
        edges.append(Edge(
            project_id=child.project_id, session_id=child.session_id, source=proposal.parent, target=child,
            relation=proposal.relation, weight=1.0, confidence=proposal.confidence, origin=proposal.origin,
            status=EdgeStatus.INFERRED, needs_review=not structural and proposal.confidence < threshold,
            rationale=proposal.rationale,
        ))
    created = Edge.objects.bulk_create(edges) if edges else []
    for edge in created:
        change_record(project=child.project, session=child.session, actor=ENGINE_ACTOR, op=Op.EDGE_CREATED,
                      object_type="edge", object_id=edge.pk, after=edge_snapshot(edge))
    return created
