"""Ask every labelled question through memory_recall, and compare the engine's edges with the labels."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.models import Edge, Relation

from .dataset import Question
from .ingest import ACTOR, IngestedFile
from .metrics import EdgeScores, edge_scores, recall_at_k, reciprocal_rank

# Structural edges say nothing about dependencies (adjacency, a shared name, a summary's parts): not scored.
UNSCORED_RELATIONS = (Relation.NEXT_IN_SESSION, Relation.SHARES_ENTITY, Relation.SUMMARIZES)


@dataclass
class QuestionResult:
    file: str
    language: str
    question: Question
    preset: str
    k: int
    lost: list[str]  # needed interactions the engine filtered out at ingest
    recall: float | None  # over the needed memories that exist; None when every needed interaction was lost
    rr: float | None
    stale_above: bool | None  # superseded questions: a stale memory outranks every current one in the top k
    ranked: list[str] = field(default_factory=list)  # local ids of the returned memories, best first
    missing: list[str] = field(default_factory=list)  # kept needed interactions not in the top k


@dataclass
class EdgeResult:
    file: str
    language: str
    scores: EdgeScores
    lost_endpoint: int  # labelled edges with an endpoint that never became a memory
    reversed: int  # predicted pairs that are labelled the other way round
    by_relation: dict[str, int] = field(default_factory=dict)  # predicted (scored) edges per relation


def evaluate_questions(ingested: IngestedFile, presets: list[str], k: int | None = None) -> list[QuestionResult]:
    """One result per (question, preset); `k` overrides each question's own k."""
    return [_ask(ingested, question, preset, k or question.k)
            for question in ingested.spec.questions for preset in presets]


def _ask(ingested: IngestedFile, question: Question, preset: str, k: int) -> QuestionResult:
    """Recall, then score in local-id space: each returned memory stands for the interaction it came from."""
    from memory.engine.recall import RecallQuery, memory_recall  # the read path is being rebuilt: late import

    session = None if question.scope == "project" else ingested.sessions[question.scope]
    result = memory_recall(project=ingested.project, actor=ACTOR,
                           query=RecallQuery(text=question.text, k=k, session=session, preset=preset))
    relevant = {n for n in question.needs if ingested.kept(n)}
    stale = {s for s in question.superseded if ingested.kept(s)}
    ranked = [ingested.label(item.memory.pk, prefer=relevant | stale) for item in result.items][:k]
    return QuestionResult(
        file=ingested.spec.name, language=ingested.spec.language, question=question, preset=preset, k=k,
        lost=[n for n in question.needs if n not in relevant],
        recall=recall_at_k(ranked, relevant, k), rr=reciprocal_rank(ranked, relevant, k),
        stale_above=_stale_above(ranked, relevant, stale) if stale else None,
        ranked=ranked, missing=[n for n in question.needs if n in relevant and n not in ranked],
    )


def _stale_above(ranked: list[str], relevant: set[str], stale: set[str]) -> bool:
    first_stale = next((i for i, label in enumerate(ranked) if label in stale), None)
    first_current = next((i for i, label in enumerate(ranked) if label in relevant), len(ranked))
    return first_stale is not None and first_stale < first_current


def evaluate_edges(ingested: IngestedFile) -> EdgeResult:
    """Directed (parent, child) pairs of local ids: an engine edge stands for every pair of its endpoints' sources."""
    predicted: dict[tuple[str, str], set[str]] = {}
    by_relation: dict[str, int] = {}
    edges = Edge.objects.filter(project=ingested.project).exclude(relation__in=UNSCORED_RELATIONS)
    for source_id, target_id, relation in edges.values_list("source_id", "target_id", "relation"):
        by_relation[relation] = by_relation.get(relation, 0) + 1
        parents = ingested.sources.get(source_id) or [f"#{source_id}"]
        children = ingested.sources.get(target_id) or [f"#{target_id}"]
        for parent in parents:
            for child in children:
                if parent != child:
                    predicted.setdefault((parent, child), set()).add(relation)
    labelled = {(e.parent, e.child): e.relation for e in ingested.spec.edges}
    lost = sum(1 for e in ingested.spec.edges if not (ingested.kept(e.parent) and ingested.kept(e.child)))
    reversed_pairs = sum(1 for (a, b) in predicted if (b, a) in labelled and (a, b) not in labelled)
    return EdgeResult(file=ingested.spec.name, language=ingested.spec.language,
                      scores=edge_scores(predicted, labelled), lost_endpoint=lost, reversed=reversed_pairs,
                      by_relation=by_relation)
