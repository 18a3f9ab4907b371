"""Ask every labelled question through memory_recall, and compare the engine's edges with the labels."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.models import Edge, Relation
from memory.providers import get_embedder

from .baselines import BASELINES, BaselineIndex, is_far
from .dataset import Question
from .ingest import ACTOR, IngestedFile
from .metrics import EdgeScores, edge_scores, recall_at_k, reciprocal_rank

# Structural edges say nothing about dependencies (adjacency, a shared name, a summary's parts): not scored.
UNSCORED_RELATIONS = (Relation.NEXT_IN_SESSION, Relation.NEXT_BY_SPEAKER, Relation.SHARES_ENTITY, Relation.SUMMARIZES)


DEPTH = 20  # every system returns its top 20; R@5, R@10, R@20 and MRR (within 10) are read from that list


@dataclass
class QuestionResult:
    file: str
    language: str
    question: Question
    preset: str  # an engine preset, or a baseline (eval/baselines.py)
    k: int  # how deep the ranking was read
    lost: list[str]  # needed interactions the engine filtered out at ingest (misses, for the engine)
    r5: float | None  # share of the needed interactions in the top 5; None when the question needs none
    r10: float | None
    r20: float | None
    rr: float | None  # 1 / rank of the first needed interaction within the top 10 (0 if none)
    far5: float | None  # share of the *far* needed interactions (no content word shared with the question) in top 5
    stale_above: bool | None  # superseded questions: a stale interaction outranks every current one in the top 5
    ranked: list[str] = field(default_factory=list)  # local ids returned, best first
    missing: list[str] = field(default_factory=list)  # needed interactions not in the top 5

    @property
    def recall(self) -> float | None:
        return self.r5


@dataclass
class EdgeResult:
    file: str
    language: str
    scores: EdgeScores
    lost_endpoint: int  # labelled edges with an endpoint that never became a memory
    reversed: int  # predicted pairs that are labelled the other way round
    by_relation: dict[str, int] = field(default_factory=dict)  # predicted (scored) edges per relation
    # (rule, relation) -> [edges predicted, edges standing for a labelled pair]: which rules earn their edges
    by_rule: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    # The far needs of chain questions by how the engine's graph links them to another need of their question:
    # "inferred", "structural" only, or "none". Ripple reaches a far need only along a link.
    far_links: dict[str, int] = field(default_factory=dict)


# How a far need is linked to another need of its question, strongest first.
FAR_LINK_KINDS = ("inferred", "structural", "none")


# The rule that made an edge, told by how its rationale begins (memory/engine/inference.py, pipeline.py,
# supersede.py write them); "human" and "llm" edges are named by their origin.
RULE_PREFIXES = (("tool result", "tool call → result"), ("cue ", "causal cue word"),
                 ("decision resting", "decision on an earlier one"), ("bound by", "value set by a constraint"),
                 ("tool call carrying", "tool call for a request"), ("reuses", "reused value"),
                 ("returns to", "topic returned to"), ("new ", "new value of an attribute"),
                 ("announced change", "announced change of a value"),
                 ("agent step", "agent's next step"))


def edge_rule(origin: str, rationale: str) -> str:
    if origin != "rule":
        return origin
    return next((name for prefix, name in RULE_PREFIXES if rationale.startswith(prefix)), "other rule")


def evaluate_questions(ingested: IngestedFile, presets: list[str], k: int | None = None,
                       baselines: tuple[str, ...] = BASELINES) -> list[QuestionResult]:
    """One result per (question, system): the baselines first, then each engine preset. `k` overrides the depth."""
    depth = max(k or DEPTH, 1)
    index = BaselineIndex(ingested.spec, get_embedder()) if baselines else None
    results = []
    for question in ingested.spec.questions:
        for baseline in baselines:
            results.append(_score(ingested, question, baseline, depth, index.rank(question, baseline, depth)))
        for preset in presets:
            results.append(_score(ingested, question, preset, depth, _engine_ranking(ingested, question, preset,
                                                                                      depth)))
    return results


def _engine_ranking(ingested: IngestedFile, question: Question, preset: str, depth: int) -> list[str]:
    """Recall, in local-id space: each returned memory stands for the interaction it came from."""
    from memory.engine.recall import RecallQuery, memory_recall  # the read path is being rebuilt: late import

    session = None if question.scope == "project" else ingested.sessions[question.scope]
    result = memory_recall(project=ingested.project, actor=ACTOR,
                           query=RecallQuery(text=question.text, k=depth, session=session, preset=preset))
    prefer = set(question.needs) | set(question.superseded)
    ranked = [ingested.label(item.memory.pk, prefer=prefer) for item in result.items]
    return list(dict.fromkeys(ranked))[:depth]


def _score(ingested: IngestedFile, question: Question, preset: str, depth: int, ranked: list[str]) -> QuestionResult:
    """Every needed interaction counts, also one the engine dropped at ingest: a lost one is a miss."""
    needs = set(question.needs)
    contents = {i.id: i.content for i in ingested.spec.interactions}
    far = {n for n in needs if is_far(question.text, contents[n])}
    stale = set(question.superseded)
    return QuestionResult(
        file=ingested.spec.name, language=ingested.spec.language, question=question, preset=preset, k=depth,
        lost=[n for n in question.needs if not ingested.kept(n)],
        r5=recall_at_k(ranked, needs, 5), r10=recall_at_k(ranked, needs, 10), r20=recall_at_k(ranked, needs, 20),
        rr=reciprocal_rank(ranked, needs, 10),
        far5=recall_at_k(ranked, far, 5), stale_above=_stale_above(ranked[:5], needs, stale) if stale else None,
        ranked=ranked, missing=[n for n in question.needs if n not in ranked[:5]],
    )


def _stale_above(ranked: list[str], relevant: set[str], stale: set[str]) -> bool:
    first_stale = next((i for i, label in enumerate(ranked) if label in stale), None)
    first_current = next((i for i, label in enumerate(ranked) if label in relevant), len(ranked))
    return first_stale is not None and first_stale < first_current


def evaluate_edges(ingested: IngestedFile) -> EdgeResult:
    """Directed (parent, child) pairs of local ids: an engine edge stands for every pair of its endpoints' sources."""
    predicted: dict[tuple[str, str], set[str]] = {}
    by_relation: dict[str, int] = {}
    linked: dict[frozenset[str], set[str]] = {}  # either direction, every relation: what a spread can follow
    labelled = {(e.parent, e.child): e.relation for e in ingested.spec.edges}
    by_rule: dict[tuple[str, str], list[int]] = {}
    for source_id, target_id, relation, origin, rationale in Edge.objects.filter(project=ingested.project).values_list(
            "source_id", "target_id", "relation", "origin", "rationale"):
        parents = ingested.sources.get(source_id) or [f"#{source_id}"]
        children = ingested.sources.get(target_id) or [f"#{target_id}"]
        pairs = {(parent, child) for parent in parents for child in children if parent != child}
        scored = relation not in UNSCORED_RELATIONS
        for pair in pairs:
            linked.setdefault(frozenset(pair), set()).add("inferred" if scored else "structural")
        if not scored:
            continue
        by_relation[relation] = by_relation.get(relation, 0) + 1
        for pair in pairs:
            predicted.setdefault(pair, set()).add(relation)
        counts = by_rule.setdefault((edge_rule(origin, rationale), relation), [0, 0])
        counts[0] += 1
        counts[1] += bool(pairs & labelled.keys())
    lost = sum(1 for e in ingested.spec.edges if not (ingested.kept(e.parent) and ingested.kept(e.child)))
    reversed_pairs = sum(1 for (a, b) in predicted if (b, a) in labelled and (a, b) not in labelled)
    return EdgeResult(file=ingested.spec.name, language=ingested.spec.language,
                      scores=edge_scores(predicted, labelled), lost_endpoint=lost, reversed=reversed_pairs,
                      by_relation=by_relation, by_rule=by_rule, far_links=_far_links(ingested, linked))


def _far_links(ingested: IngestedFile, linked: dict[frozenset[str], set[str]]) -> dict[str, int]:
    """Each far need of a chain question, by the strongest link to another need of its question."""
    contents = {i.id: i.content for i in ingested.spec.interactions}
    counts = dict.fromkeys(FAR_LINK_KINDS, 0)
    for question in ingested.spec.questions:
        if question.type != "chain":
            continue
        for need in (n for n in question.needs if is_far(question.text, contents[n])):
            kinds = set().union(*(linked.get(frozenset((need, other)), set())
                                  for other in question.needs if other != need))
            counts[next((kind for kind in FAR_LINK_KINDS if kind in kinds), "none")] += 1
    return counts
