"""docs/eval-links.md: what declared links and links from use change, beside the offline rules and the baselines."""

from __future__ import annotations

from collections import Counter

from .dataset import EvalFile
from .links import BASELINES, PRESETS, Outcome
from .metrics import mean
from .report import RunInfo, _f, _table

TARGETS = "declared+use"  # the targets hold for an agent that sends its links and says what it used


def _chain(outcome: Outcome, attribute: str) -> float | None:
    return mean(getattr(r, attribute) for r in outcome.results if r.question.type == "chain")


def _typed(outcome: Outcome, kind: str) -> float | None:
    return mean(r.r5 for r in outcome.results if r.question.type == kind)


def _share(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _false_share(outcome: Outcome) -> float | None:
    return outcome.false_flags / outcome.flagged if outcome.flagged else (0.0 if outcome.system in PRESETS else None)


def _row(outcome: Outcome) -> list[str]:
    engine = outcome.system in PRESETS
    return [outcome.side, outcome.system, _f(_chain(outcome, "r5")), _f(_chain(outcome, "r10")),
            _f(_chain(outcome, "far5")), _f(_typed(outcome, "fact")), _f(_share(outcome.cascade)),
            f"{_f(_false_share(outcome))} ({outcome.false_flags} of {outcome.flagged})" if engine else "–",
            f"{outcome.steady_flagged} of {outcome.steady}" if engine else "–"]


def _targets(outcomes: list[Outcome]) -> list[list[str]]:
    by = {(o.side, o.system): o for o in outcomes}
    ripple, hybrid = by[(TARGETS, "ripple")], by[(TARGETS, "hybrid")]
    gain = (_chain(ripple, "r5") or 0.0) - (_chain(hybrid, "r5") or 0.0)
    far, cascade, false = _chain(ripple, "far5") or 0.0, _share(ripple.cascade) or 0.0, _false_share(ripple) or 0.0
    single = (_typed(ripple, "fact") or 0.0) - (_typed(hybrid, "fact") or 0.0)

    def held(ok: bool) -> str:
        return "holds" if ok else "**not met**"

    return [["chain R@5: `ripple` − `hybrid` ≥ +0.15", held(gain >= 0.15), f"{gain:+.2f}"],
            ["chain far@5 (`ripple`) ≥ 0.50", held(far >= 0.50), _f(far)],
            ["cascade (`ripple`) ≥ 0.90", held(cascade >= 0.90), _f(cascade)],
            ["false at-risk ≤ 5%", held(false <= 0.05), f"{false:.0%} ({ripple.false_flags} of {ripple.flagged})"],
            ["single-hop R@5 within 0.01 of `hybrid`", held(single >= -0.01), f"{single:+.2f}"]]


def _edges(edges: dict) -> list[list[str]]:
    rows = []
    for side, found in edges.items():
        results = found["edges"]
        scores = sum((r.scores for r in results[1:]), results[0].scores) if results else None
        origins: Counter[str] = Counter()
        for result in results:
            for (rule, _relation), (predicted, _matched) in result.by_rule.items():
                origins[rule if rule in ("agent", "use", "llm", "human") else "rule"] += predicted
        rows.append([side, str(scores.predicted if scores else 0), _f(scores.precision if scores else None),
                     _f(scores.recall if scores else None),
                     ", ".join(f"{name} {n}" for name, n in sorted(origins.items())) or "–"])
    return rows


def _data(files: list[EvalFile]) -> list[list[str]]:
    rows = []
    for spec in files:
        items = spec.interactions
        recalls = [i.recall for i in items if i.recall]
        types = Counter(q.type for q in spec.questions)
        rows.append([spec.name, spec.language, str(len(spec.sessions)), str(len(items)),
                     str(sum(len(i.links) for i in items)),
                     f"{len(recalls)} ({sum(1 for r in recalls if r.used)} with used)",
                     ", ".join(f"{kind} {n}" for kind, n in sorted(types.items())), str(len(spec.edges))])
    return rows


def links_markdown(files: list[EvalFile], outcomes: list[Outcome], edges: dict, info: RunInfo) -> str:
    order = {name: i for i, name in enumerate((*BASELINES, *PRESETS))}
    ordered = sorted(outcomes, key=lambda o: (list(edges).index(o.side), order[o.system]))
    lines = [
        "# Known edges: declared links, links from use, and change propagation",
        "",
        f"Run {info.date} on {info.machine}; commit {info.commit}; embedder **{info.embedder}**; LLM: **{info.llm}**; "
        f"database `{info.database}`. Regenerate with `make eval` (this part alone: `python -m eval.links`).",
        "",
        "Labelled agent traces (`eval/links/*.json`): what the agent's side knows is in the files (its framework's "
        "ids, the links a framework declares without reading the text: a tool result on its call, a reply on the "
        "turn it answers, a step on the one it reacts to; and turns where the agent recalled, then acted). Each "
        "file is ingested three ways through `interactions_accept` + `interaction_process`: **offline** (no links: "
        "the rules alone, what a user without links gets), **declared** (+ `external_id` and `links`), "
        "**declared+use** (+ before a recall-then-act turn, the recall is run and its `recall_id`, and `used` when "
        "the file says, go with the turn). The baselines (`eval/baselines.py`) see the same interactions in the "
        "same run; they ignore edges, so their numbers are the same under every edge source.",
        "",
        "*cascade*: the share of cascade questions (asked after a value changed, about what depended on it) whose "
        "top 5 holds the dependent and the change, or holds the dependent flagged at risk from the changed parent. "
        "*false at-risk*: memories flagged at risk although no parent the flag names changed and lies above them "
        "on the labelled edges. *steady flagged*: questions about a memory whose parents did not change, where "
        "that memory was flagged anyway.",
        "",
        f"## Targets (edge source {TARGETS})",
        "",
        *_table(["target", "", "this run"], _targets(outcomes)),
        "",
        "## By edge source and system",
        "",
        *_table(["edge source", "system", "chain R@5", "chain R@10", "chain far@5", "single-hop R@5", "cascade",
                 "false at-risk", "steady flagged"], [_row(o) for o in ordered]),
        "",
        "## Edges by source (scored against the labelled dependencies)",
        "",
        *_table(["edge source", "predicted", "precision", "recall", "by origin"], _edges(edges)),
        "",
        "## Data",
        "",
        *_table(["file", "lang", "sessions", "interactions", "declared links", "recall turns", "questions",
                 "labelled edges"], _data(files)),
        "",
    ]
    return "\n".join(lines)
