"""Part of `make eval`: the agent traces of eval/links, each ingested three ways (offline rules only; + the links
the agent declares; + what it did with its recalls), every question asked of the baselines and the engine's
presets in the same run. Writes docs/eval-links.md.

    python -m eval.links [--files pattern] [--out docs/eval-links.md]

Measures, per edge source and system: chain R@5 / R@10 and far@5, single-hop R@5, and two questions only a graph
of dependencies answers: *cascade* (after a value changed, a question about what depended on it: the top 5 holds
the dependent and the change, or flags the dependent at risk from the changed parent) and *false at-risk*
(memories flagged although nothing they depend on changed, by the labelled edges).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .dataset import EvalFile, Question
    from .evaluate import QuestionResult
    from .ingest import IngestedFile

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ("hybrid", "ripple")
BASELINES = ("bm25", "bm25+vector")
FLAG_HOPS = 3  # how far up the labelled edges a flag may find a changed parent and still be a true one


@dataclass
class Outcome:
    """One (edge source, system): the question results and, for the engine, its flags."""

    side: str
    system: str
    results: list[QuestionResult] = field(default_factory=list)
    cascade: list[bool] = field(default_factory=list)
    flagged: int = 0  # memories at risk after the ingest (engine systems only)
    false_flags: int = 0
    steady_flagged: int = 0  # steady questions whose memory was flagged
    steady: int = 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m eval.links", description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="*.json", help="glob in the folder (default: %(default)s)")
    parser.add_argument("--dir", default=None, help="the folder of the files (default: eval/links)")
    parser.add_argument("--out", default="docs/eval-links.md")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from .dataset import LINKS_DIR, load_files
    from .setup_django import setup

    files = load_files(args.files, Path(args.dir) if args.dir else LINKS_DIR, links=True)
    setup()
    from .ingest import AGENT_SIDES
    from .links_report import links_markdown
    from .run import run_info

    outcomes, edges = [], {}
    for side in AGENT_SIDES:
        found, edges[side] = evaluate_side(files, side)
        outcomes += found
        print(f"eval.links: {side}: done", file=sys.stderr, flush=True)
    info = run_info(["-m", "eval.links", *(sys.argv[1:] if argv is None else argv)], "eval/links")
    out = Path(args.out) if Path(args.out).is_absolute() else ROOT / args.out
    out.write_text(links_markdown(files, outcomes, edges, info), encoding="utf-8")
    print(f"wrote {out}")


def evaluate_side(files: list[EvalFile], side: str) -> tuple[list[Outcome], dict]:
    """Ingest every file sending `side` of the agent, then ask every question of every system."""
    from .evaluate import evaluate_edges, evaluate_questions
    from .ingest import ingest_file

    outcomes = {system: Outcome(side, system) for system in (*BASELINES, *PRESETS)}
    edge_results = []
    for spec in files:
        ingested = ingest_file(spec, agent_side=side)
        flags = flagged_parents(ingested)
        edge_results.append(evaluate_edges(ingested))
        for result in evaluate_questions(ingested, list(PRESETS), baselines=BASELINES):
            outcome = outcomes[result.preset]
            outcome.results.append(result)
            if result.question.type == "cascade":
                outcome.cascade.append(cascade_hit(spec, result, flags if result.preset in PRESETS else {}))
            if result.question.type == "steady" and result.preset in PRESETS:
                outcome.steady += 1
                outcome.steady_flagged += any(flags.get(need) for need in result.question.needs)
        for preset in PRESETS:
            outcomes[preset].flagged += len(flags)
            outcomes[preset].false_flags += sum(1 for local, parents in flags.items()
                                                if not _truly_changed(spec, local, parents))
    return list(outcomes.values()), {"edges": edge_results}


def flagged_parents(ingested: IngestedFile) -> dict[str, set[str]]:
    """Local id of each at-risk memory's source -> the local ids of the changed parents its flags name."""
    from memory.models import AtRisk, RiskStatus

    flags: dict[str, set[str]] = defaultdict(set)
    for memory_id, parent_id in AtRisk.objects.filter(project=ingested.project, status=RiskStatus.OPEN) \
            .values_list("memory_id", "parent_id"):
        for local in ingested.sources.get(memory_id, []):
            flags[local].update(ingested.sources.get(parent_id, []))
    return dict(flags)


def _change_of(spec: EvalFile, question: Question) -> str:
    """The need that states the change: the one a labelled supersedes edge leads to from a changed parent."""
    changed = set(question.changed)
    return next((e.child for e in spec.edges if e.relation == "supersedes" and e.parent in changed
                 and e.child in question.needs), question.needs[-1])


def cascade_hit(spec: EvalFile, result: QuestionResult, flags: dict[str, set[str]]) -> bool:
    """The dependents are in the top 5, and so is the change, or each dependent is flagged from a changed parent."""
    change = _change_of(spec, result.question)
    top = set(result.ranked[:5])
    dependents = [n for n in result.question.needs if n != change]
    changed = set(result.question.changed)
    return all(d in top for d in dependents) and (change in top or all(flags.get(d, set()) & changed
                                                                       for d in dependents))


def _truly_changed(spec: EvalFile, local: str, parents: set[str]) -> bool:
    """A flag is true when one of the parents it names did change (a labelled supersedes edge leaves it, or a
    question says so) and the flagged turn depends on it along labelled edges, FLAG_HOPS at most."""
    changed = {e.parent for e in spec.edges if e.relation == "supersedes"} | {
        c for q in spec.questions for c in (*q.changed, *q.superseded)}
    above, frontier = set(), {local}
    for _ in range(FLAG_HOPS):
        frontier = {e.parent for e in spec.edges if e.child in frontier and e.relation != "supersedes"} - above
        above |= frontier
    return bool(parents & changed & above)


if __name__ == "__main__":
    main()
