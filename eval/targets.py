"""The recall targets the product holds itself to, checked on one run's summary (see docs/eval.md).

Each check says whether it holds and, when it does not, where: a target that fails quietly in a table
of numbers is a target nobody notices missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dataset import LANGUAGES, QUESTION_TYPES

DEFAULT_PRESET = "ripple"  # what the recall API uses when no preset is given
BASELINES = ("bm25", "bm25+vector")
CHAIN_MARGIN = 0.10  # ripple over the engine's own hybrid on chain questions, R@5
FAR_AT_5 = 0.35
SINGLE_HOP_LOSS = 0.01  # ripple may lose at most this much against hybrid on fact questions
EDGE_PRECISION, EDGE_RECALL = 0.5, 0.6
SUPERSEDED_SHARE = 0.8


@dataclass(frozen=True)
class Target:
    name: str
    holds: bool | None  # None: not measurable in this run (a preset or baseline was not run)
    detail: str


def check(summary: dict[str, Any]) -> list[Target]:
    presets = summary["presets"]
    if DEFAULT_PRESET not in presets or any(b not in presets for b in BASELINES):
        missing = [p for p in (DEFAULT_PRESET, *BASELINES) if p not in presets]
        return [Target("all targets", None, f"not run: {', '.join(missing)}")]
    return [beats_baselines(presets), *_chain_targets(presets), *_graph_targets(summary), _nothing_lost(presets),
            _nothing_lost_without_task(summary.get("without_task"))]


def beats_baselines(presets: dict) -> Target:
    """Strictly better than each baseline at R@5 and R@10, per language and question type."""
    name = f"`{DEFAULT_PRESET}` beats both baselines at R@5 and R@10 on every type, EN and ZH"
    missing = [p for p in (DEFAULT_PRESET, *BASELINES) if p not in presets]
    if missing:
        return Target(name, None, f"not run: {', '.join(missing)}")
    misses = []
    for language in LANGUAGES:
        for kind in QUESTION_TYPES:
            mine = presets[DEFAULT_PRESET]["by_language_type"][language][kind]
            if not mine["answerable"]:
                continue
            for baseline in BASELINES:
                theirs = presets[baseline]["by_language_type"][language][kind]
                for metric, label in (("recall", "R@5"), ("r10", "R@10")):
                    if (mine[metric] or 0.0) <= (theirs[metric] or 0.0):
                        misses.append(f"{language} {kind} {label} {mine[metric] or 0:.2f} "
                                      f"vs {baseline} {theirs[metric] or 0:.2f}")
    return Target(name, not misses, "; ".join(misses) or "every type in both languages")


def _chain_targets(presets: dict) -> list[Target]:
    targets = []
    hybrid = presets.get("hybrid")
    ripple = presets[DEFAULT_PRESET]["by_type"]
    if hybrid:
        margin = (ripple["chain"]["recall"] or 0.0) - (hybrid["by_type"]["chain"]["recall"] or 0.0)
        targets.append(Target(f"chain R@5: `{DEFAULT_PRESET}` − `hybrid` ≥ {CHAIN_MARGIN:.2f}",
                              margin >= CHAIN_MARGIN, f"{margin:+.2f}"))
        loss = (hybrid["by_type"]["fact"]["recall"] or 0.0) - (ripple["fact"]["recall"] or 0.0)
        targets.append(Target(f"single-hop (fact) R@5 lost against `hybrid` ≤ {SINGLE_HOP_LOSS:.2f}",
                              loss <= SINGLE_HOP_LOSS, f"{loss:+.2f}"))
    far = ripple["chain"]["far5"] or 0.0
    targets.append(Target(f"chain far@5 ≥ {FAR_AT_5:.2f}", far >= FAR_AT_5, f"{far:.2f}"))
    return targets


def _graph_targets(summary: dict) -> list[Target]:
    edges = summary["edges"]["overall"]
    stale = sum(r["stale"] for r in summary["ingest"])
    marked = sum(r["stale_marked"] for r in summary["ingest"])
    share = marked / stale if stale else 0.0
    asks = sum(r.get("asks_superseding", 0) for r in summary["ingest"])
    return [
        Target(f"inferred edges: precision ≥ {EDGE_PRECISION} and recall ≥ {EDGE_RECALL}",
               edges["precision"] >= EDGE_PRECISION and edges["recall"] >= EDGE_RECALL,
               f"precision {edges['precision']:.2f}, recall {edges['recall']:.2f}"),
        Target(f"labelled stale values marked superseded ≥ {SUPERSEDED_SHARE:.0%}", share >= SUPERSEDED_SHARE,
               f"{marked} of {stale} ({share:.0%})"),
        Target("no question or confirmation supersedes anything", asks == 0,
               f"{asks} supersedes edge{'' if asks == 1 else 's'} from a question or a confirmation"),
    ]


def _nothing_lost(presets: dict) -> Target:
    overall = presets[DEFAULT_PRESET]["overall"]
    return Target("no needed interaction lost at ingest", overall["lost"] == 0,
                  f"{overall['lost']} of {overall['needed']} needs of the questions")


def _nothing_lost_without_task(rows: list[dict] | None) -> Target:
    name = "no needed interaction lost at ingest without a session task"
    if rows is None:
        return Target(name, None, "not run (--with-task-only)")
    lost = [f"{r['file']} {n}" for r in rows for n in r["lost"]]
    needed = sum(r["needed"] for r in rows)
    return Target(name, not lost, f"{len(lost)} of {needed} distinct needed interactions"
                  + (f": {', '.join(lost[:8])}" if lost else ""))
