"""Aggregate question and edge results, and render them as markdown (docs/eval.md) and a stdout table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .dataset import LANGUAGES, QUESTION_TYPES
from .evaluate import FAR_LINK_KINDS, EdgeResult, QuestionResult
from .ingest import IngestedFile
from .metrics import EMPTY_EDGE_SCORES, EdgeScores, mean
from .targets import beats_baselines, check


@dataclass(frozen=True)
class RunInfo:
    date: str
    machine: str
    embedder: str
    llm: str
    commit: str
    database: str
    command: str
    data: str = "eval/data"  # the folder of the labelled files
    heldout: bool = False  # files never tuned on (eval/heldout)


def aggregate(results: list[QuestionResult]) -> dict[str, Any]:
    """Mean R@5, R@10, R@20, MRR and far-evidence R@5 over the questions, with the ingest losses alongside."""
    stale = [r.stale_above for r in results if r.stale_above is not None]
    return {
        "questions": len(results),
        "answerable": sum(1 for r in results if r.r5 is not None),
        "recall": mean(r.r5 for r in results),
        "r10": mean(r.r10 for r in results),
        "r20": mean(r.r20 for r in results),
        "mrr": mean(r.rr for r in results),
        "far5": mean(r.far5 for r in results),
        "far_questions": sum(1 for r in results if r.far5 is not None),
        "needed": sum(len(r.question.needs) for r in results),
        "lost": sum(len(r.lost) for r in results),
        "stale_above": sum(stale) / len(stale) if stale else None,
    }


def edge_summary(scores: EdgeScores, results: list[EdgeResult]) -> dict[str, Any]:
    return {
        "predicted": scores.predicted, "labelled": scores.labelled, "matched": scores.true_positives,
        "precision": scores.precision, "recall": scores.recall, "f1": scores.f1,
        "relation_accuracy": scores.relation_accuracy,
        "lost_endpoint": sum(r.lost_endpoint for r in results), "reversed": sum(r.reversed for r in results),
    }


def summarize(ingested: list[IngestedFile], questions: list[QuestionResult], edges: list[EdgeResult]) -> dict:
    """The whole evaluation as plain data: per preset (overall, per language, per type), edges, ingest.
    "without_task" is filled in by the runner when it ingested everything again without a session task."""
    presets: dict[str, dict] = {}
    for preset in dict.fromkeys(r.preset for r in questions):
        mine = [r for r in questions if r.preset == preset]
        presets[preset] = {
            "overall": aggregate(mine),
            "by_language": {lang: aggregate([r for r in mine if r.language == lang]) for lang in LANGUAGES},
            "by_type": {t: aggregate([r for r in mine if r.question.type == t]) for t in QUESTION_TYPES},
            "by_language_type": {lang: {t: aggregate([r for r in mine if r.language == lang and r.question.type == t])
                                        for t in QUESTION_TYPES} for lang in LANGUAGES},
        }

    def edges_of(keep: Callable[[EdgeResult], bool]) -> dict[str, Any]:
        chosen = [e for e in edges if keep(e)]
        return edge_summary(sum((e.scores for e in chosen), EMPTY_EDGE_SCORES), chosen)

    return {
        "presets": presets,
        "edges": {
            "overall": edges_of(lambda e: True),
            "by_language": {lang: edges_of(lambda e, lang=lang: e.language == lang) for lang in LANGUAGES},
            "by_file": {e.file: edges_of(lambda x, f=e.file: x.file == f) for e in edges},
            "by_relation": _count_relations(edges),
            "by_rule": _count_rules(edges),
            "far_links": {kind: sum(e.far_links.get(kind, 0) for e in edges) for kind in FAR_LINK_KINDS},
        },
        "ingest": [_ingest_row(i) for i in ingested],
        "without_task": None,
    }


def crowded_summary(times: int, rows: int, ingested: list[IngestedFile], questions: list[QuestionResult],
                    edges: list[EdgeResult]) -> dict[str, Any]:
    """The run beside another project's memories (eval/crowd.py), in the shape the report compares."""
    again = summarize(ingested, questions, edges)
    return {"times": times, "table_rows": rows,
            "presets": {preset: agg["overall"] for preset, agg in again["presets"].items()},
            "edges": again["edges"]["overall"],
            "stale": sum(r["stale"] for r in again["ingest"]),
            "stale_marked": sum(r["stale_marked"] for r in again["ingest"])}


def lost_rows(ingested: list[IngestedFile]) -> list[dict[str, Any]]:
    """Per file, the needed interactions that became no memory."""
    rows = []
    for one in ingested:
        needed = sorted({n for q in one.spec.questions for n in q.needs}, key=_id_order)
        rows.append({"file": one.spec.name, "needed": len(needed), "lost": [n for n in needed if not one.kept(n)]})
    return rows


def _count_relations(edges: list[EdgeResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for result in edges:
        for relation, n in result.by_relation.items():
            counts[relation] = counts.get(relation, 0) + n
    return counts


def _count_rules(edges: list[EdgeResult]) -> list[dict[str, Any]]:
    """Per rule and relation, over every file: edges predicted, how many stand for a labelled pair, precision."""
    counts: dict[tuple[str, str], list[int]] = {}
    for result in edges:
        for key, (predicted, matched) in result.by_rule.items():
            total = counts.setdefault(key, [0, 0])
            total[0] += predicted
            total[1] += matched
    return [{"rule": rule, "relation": relation, "predicted": n, "matched": m, "precision": m / n if n else 0.0}
            for (rule, relation), (n, m) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))]


def _ingest_row(ingested: IngestedFile) -> dict[str, Any]:
    spec = ingested.spec
    needed = sorted({n for q in spec.questions for n in q.needs}, key=_id_order)
    stale = {n for q in spec.questions for n in q.superseded}
    return {
        "file": spec.name, "language": spec.language, "sessions": len(spec.sessions),
        "interactions": len(spec.interactions), "kept": sum(1 for i in spec.interactions if ingested.kept(i.id)),
        "failed": sum(1 for status in ingested.statuses.values() if status not in ("kept", "filtered")),
        "questions": len(spec.questions), "edges": len(spec.edges), "needed": len(needed),
        "lost": [n for n in needed if not ingested.kept(n)], "seconds": round(ingested.seconds, 1),
        "stale": len(stale), "stale_marked": sum(1 for n in stale if ingested.marked_superseded(n)),
        "asks_superseding": _asks_superseding(ingested),
        "stage_failures": _stage_failures(ingested),
        "across_speakers": _supersedes_across_speakers(ingested),
    }


def _stage_failures(ingested: IngestedFile) -> int:
    """Interactions kept with a failed stage (engine/stages.py; the target: none)."""
    from memory.models import Interaction

    return Interaction.objects.filter(project=ingested.project).exclude(stage_errors={}).count()


def _supersedes_across_speakers(ingested: IngestedFile) -> int:
    """Supersedes applied between two memories whose transcript speakers differ: one person's value replaced by
    another's (the target: none; proposals waiting for review are not applied and not counted)."""
    from memory.engine.subjects import speakers_of
    from memory.models import Edge, EdgeStatus, Memory, Relation

    edges = list(Edge.objects.filter(project=ingested.project, relation=Relation.SUPERSEDES)
                 .exclude(status=EdgeStatus.REJECTED).exclude(needs_review=True, status=EdgeStatus.INFERRED)
                 .values_list("source_id", "target_id"))
    memories = list(Memory.objects.filter(pk__in={pk for pair in edges for pk in pair}))
    speakers = speakers_of(memories) if memories else {}
    return sum(1 for old, new in edges if None not in (speakers.get(old), speakers.get(new))
               and speakers[old] != speakers[new])


def _asks_superseding(ingested: IngestedFile) -> int:
    """Supersedes edges the engine drew from a question or a confirmation (the target: none, ever)."""
    from memory.engine.supersede import asks_or_confirms
    from memory.models import Edge, EdgeOrigin, Relation

    edges = Edge.objects.filter(project=ingested.project, relation=Relation.SUPERSEDES).exclude(
        origin=EdgeOrigin.HUMAN).select_related("target")
    return sum(1 for edge in edges if asks_or_confirms(edge.target))


def _id_order(local_id: str) -> tuple[int, str]:
    digits = "".join(ch for ch in local_id if ch.isdigit())
    return (int(digits) if digits else 0, local_id)


def _r5_r10(block: dict) -> str:
    return f"{_f(block['recall'])} / {_f(block['r10'])}"


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def stdout_table(summary: dict) -> str:
    """A compact fixed-width table: one row per system (baselines, then presets), then edges and ingest."""
    head = ["system", "n", "R@5", "R@10", "R@20", "MRR", "far@5", "R@5 en", "R@5 zh",
            *(f"{t} R@5" for t in QUESTION_TYPES), "lost"]
    rows = [head]
    for preset, agg in summary["presets"].items():
        overall = agg["overall"]
        rows.append([preset, str(overall["answerable"]), _f(overall["recall"]), _f(overall["r10"]), _f(overall["r20"]),
                     _f(overall["mrr"]), _f(agg["by_type"]["chain"]["far5"]),
                     *(_f(agg["by_language"][lang]["recall"]) for lang in LANGUAGES),
                     *(_f(agg["by_type"][t]["recall"]) for t in QUESTION_TYPES),
                     f"{overall['lost']}/{overall['needed']}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.append("edges (P/R/F1, relation acc.): " + " | ".join(
        f"{name} {_f(e['precision'])}/{_f(e['recall'])}/{_f(e['f1'])} rel {_f(e['relation_accuracy'])} "
        f"({e['matched']} of {e['labelled']} labelled, {e['predicted']} predicted)"
        for name, e in [*summary["edges"]["by_language"].items(), ("all", summary["edges"]["overall"])]))
    rows_in = summary["ingest"]
    lines.append(f"ingest: {sum(r['kept'] for r in rows_in)} of {sum(r['interactions'] for r in rows_in)} "
                 f"interactions kept, {sum(r['failed'] for r in rows_in)} failed; needed interactions lost: "
                 f"{sum(len(r['lost']) for r in rows_in)} of {sum(r['needed'] for r in rows_in)}; stale memories "
                 f"marked superseded: {sum(r['stale_marked'] for r in rows_in)} of {sum(r['stale'] for r in rows_in)}")
    crowded = summary.get("crowded")
    if crowded:
        lines.append(f"beside {crowded['table_rows']:,} memories (R@5/R@10): " + ", ".join(
            f"{preset} {_f(agg['recall'])}/{_f(agg['r10'])}" for preset, agg in crowded["presets"].items())
            + f"; edges matched {crowded['edges']['matched']}; stale marked {crowded['stale_marked']}")
    larger = summary.get("larger")
    if larger:
        lines.append("larger projects (R@5/R@10): " + ", ".join(
            f"{preset} {_f(agg['overall']['recall'])}/{_f(agg['overall']['r10'])}"
            for preset, agg in larger["presets"].items()))
    targets = check(summary)
    lines.append(f"targets: {sum(1 for t in targets if t.holds)} of {len(targets)} hold; not met: "
                 + (", ".join(t.name for t in targets if t.holds is False) or "none"))
    return "\n".join(lines)


def markdown(summary: dict, info: RunInfo, questions: list[QuestionResult], ingested: list[IngestedFile]) -> str:
    """The report written to docs/eval.md."""
    lines = [
        "# Recall and dependency-graph evaluation" + (": held-out files" if info.heldout else ""),
        "",
        f"Run {info.date} on {info.machine}; commit {info.commit}; embedder **{info.embedder}**; "
        f"LLM: **{info.llm}**; database `{info.database}` (embedded server). Regenerate with `{info.command}`.",
        "",
        *_heldout_note(info),
        f"Labelled data: `{info.data}/*.json` (hand-written agent sessions and two-person conversations in English",
        "and Chinese, ingested through",
        "`interactions_accept` + `interaction_process`). Every system returns its top 20 for each question; R@5,",
        "R@10 and R@20 are the share of the needed interactions in the top 5 / 10 / 20, MRR the reciprocal rank of",
        "the first needed one within the top 10 (0 if none). A needed interaction the engine filtered out at",
        "ingest counts as a miss (and is listed as *lost at ingest*). *far@5*: R@5 over the needed interactions",
        "that share no content word with the question, which a search cannot find and only a link can reach.",
        "",
        "**Baselines**, over the same interactions in the same run (`eval/baselines.py`): `bm25` is Okapi BM25",
        "over every interaction of the question's scope (unfiltered; Chinese segmented with jieba), `bm25+vector`",
        "fuses that ranking with the embedder's cosine ranking by reciprocal-rank fusion (k 60), and",
        "`bm25+vector+neighbours` follows each of its hits with the turns right before and after it in its session",
        "(the rule a graph of dependencies has to beat on chain questions; the targets compare with the first two).",
        "",
        *_targets_section(summary),
        *_data_section(summary),
        *_recall_section(summary),
        *_edge_section(summary),
        *_crowded_section(summary),
        *_larger_section(summary),
        *_integrity_section(summary),
        *_lost_section(summary, ingested),
        *_misses_section(questions, ingested),
    ]
    return "\n".join(lines) + "\n"


def _heldout_note(info: RunInfo) -> list[str]:
    if not info.heldout:
        return []
    return [
        "**Held-out**: these files were written after the engine's weights and thresholds were set, by writers who",
        "had not read the engine, and nothing is tuned on them (`eval/heldout/README.md`): they tell whether what",
        "`docs/eval.md` shows carries over to conversations the engine was not shaped on. Same systems, metrics and",
        "targets; no crowded or larger run.",
        "",
    ]


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


def _data_section(summary: dict) -> list[str]:
    rows = [[r["file"], r["language"], str(r["sessions"]), str(r["interactions"]), str(r["kept"]), str(r["failed"]),
             str(r["questions"]), str(r["edges"]), f"{r['seconds']} s"] for r in summary["ingest"]]
    return ["## Data and ingest", "",
            *_table(["file", "lang", "sessions", "interactions", "kept as memories", "failed", "questions",
                     "labelled edges", "ingest time"], rows), ""]


def _recall_section(summary: dict) -> list[str]:
    overall_rows = []
    type_rows = []
    for preset, agg in summary["presets"].items():
        o = agg["overall"]
        chain = agg["by_type"]["chain"]
        overall_rows.append([preset, str(o["answerable"]), _f(o["recall"]), _f(o["r10"]), _f(o["r20"]), _f(o["mrr"]),
                             f"{_f(chain['far5'])} (n={chain['far_questions']})",
                             *(_r5_r10(agg["by_language"][g]) for g in LANGUAGES),
                             f"{o['lost']} of {o['needed']}", _f(agg["by_type"]["superseded"]["stale_above"])])
        type_rows.append([preset, *(f"{_r5_r10(agg['by_type'][t])} / {_f(agg['by_type'][t]['mrr'])} "
                                    f"(n={agg['by_type'][t]['answerable']})" for t in QUESTION_TYPES)])
    stale = sum(r["stale"] for r in summary["ingest"])
    marked = sum(r["stale_marked"] for r in summary["ingest"])
    return [
        "## Recall", "",
        *_table(["system", "questions", "R@5", "R@10", "R@20", "MRR", "chain far@5",
                 *(f"{g}: R@5 / R@10" for g in LANGUAGES), "needed lost at ingest", "stale outranks current"],
                overall_rows),
        "",
        "*Stale outranks current*: share of `superseded` questions where a superseded one is in the top 5 and",
        f"above every current one (lower is better). The engine marked {marked} of the {stale} labelled stale",
        "interactions' memories as superseded.",
        "",
        "### By question type (R@5 / R@10 / MRR)", "",
        *_table(["system", *QUESTION_TYPES], type_rows), "",
        "### By language and question type (R@5 / R@10)", "",
        *_table(["system", "lang", *QUESTION_TYPES], _language_type_rows(summary)), "",
    ]


def _language_type_rows(summary: dict) -> list[list[str]]:
    rows = []
    for language in LANGUAGES:
        for preset, agg in summary["presets"].items():
            cells = agg["by_language_type"][language]
            rows.append([preset, language, *(f"{_r5_r10(cells[t])} (n={cells[t]['answerable']})"
                                             for t in QUESTION_TYPES)])
    return rows


def _targets_section(summary: dict) -> list[str]:
    marks = {True: "holds", False: "**not met**", None: "not measured"}
    rows = [[t.name, marks[t.holds], t.detail] for t in check(summary)]
    return ["## Targets", "", *_table(["target", "", "this run"], rows), ""]


def _edge_section(summary: dict) -> list[str]:
    edges = summary["edges"]
    rows = [[name, str(e["labelled"]), str(e["predicted"]), str(e["matched"]), _f(e["precision"]),
             _f(e["recall"]), _f(e["f1"]), _f(e["relation_accuracy"]), str(e["reversed"]), str(e["lost_endpoint"])]
            for name, e in [*edges["by_language"].items(), ("all", edges["overall"])]]
    relations = ", ".join(f"{rel} {n}" for rel, n in sorted(edges["by_relation"].items())) or "none"
    return [
        "## Dependency edges", "",
        "Engine edges of each project (the structural next_in_session, next_by_speaker, shares_entity and summarizes",
        "excluded), mapped to the interactions their memories came from, against the labelled edges: directed",
        "(parent, child) pairs, ignoring the relation; relation accuracy is over the matched pairs. Precision is 0",
        "when the engine predicts no edge. *Reversed*: predicted pairs labelled the other way round.", "",
        *_table(["language", "labelled", "predicted", "matched", "precision", "recall", "F1", "relation acc.",
                 "reversed", "labelled with a lost endpoint"], rows),
        "", f"Predicted edges by relation: {relations}.", "",
        "By the rule that made them (an edge counts as matched when it stands for a labelled pair):", "",
        *_table(["rule", "relation", "predicted", "matched", "precision"],
                [[r["rule"], r["relation"], str(r["predicted"]), str(r["matched"]), _f(r["precision"])]
                 for r in edges["by_rule"]]), "",
        *_far_links_lines(edges["far_links"]),
    ]


def _far_links_lines(far: dict[str, int]) -> list[str]:
    """Whether chain questions' far evidence is out of the spread's reach (no link) or only outranked."""
    return [
        f"Far needs of the chain questions ({sum(far.values())}; they share no content word with their question, so",
        "only a link reaches them), by their strongest link to another need of the same question: an inferred",
        f"edge {far['inferred']}, a structural edge only {far['structural']}, no edge {far['none']}.", "",
    ]


def _crowded_section(summary: dict) -> list[str]:
    crowded = summary.get("crowded")
    if not crowded:
        return ["## Beside other projects' memories", "", "Not run (`--crowd 0`).", ""]
    alone = summary["presets"]
    rows = [[preset, _r5_r10(alone[preset]["overall"]), _r5_r10(agg)] for preset, agg in crowded["presets"].items()]
    edges, crowded_edges = summary["edges"]["overall"], crowded["edges"]
    rows.append(["edges matched (precision / recall)",
                 f"{edges['matched']} ({_f(edges['precision'])} / {_f(edges['recall'])})",
                 f"{crowded_edges['matched']} ({_f(crowded_edges['precision'])} / {_f(crowded_edges['recall'])})"])
    rows.append(["stale interactions marked superseded",
                 f"{sum(r['stale_marked'] for r in summary['ingest'])} of {sum(r['stale'] for r in summary['ingest'])}",
                 f"{crowded['stale_marked']} of {crowded['stale']}"])
    return [
        "## Beside other projects' memories", "",
        "A product database holds many projects, and the statistics full-text search uses to leave out words too",
        f"common to search for count them all. So everything was ingested and asked again with {crowded['times']}",
        f"copies of the eval's memories in one more project ({crowded['table_rows']:,} memories in the table), then",
        "the copies were removed (`eval/crowd.py`). The two columns should agree; a drop means another project's",
        "words changed what this one finds.", "",
        *_table(["engine", "alone: R@5 / R@10", "crowded: R@5 / R@10"], rows), "",
    ]


def _larger_section(summary: dict) -> list[str]:
    larger = summary.get("larger")
    if not larger:
        return ["## Larger projects", "", "Not run (`--no-larger`).", ""]
    sizes = larger["interactions"].values()
    rows = []
    for preset, agg in larger["presets"].items():
        o, chain = agg["overall"], agg["by_type"]["chain"]
        rows.append([preset, _f(o["recall"]), _f(o["r10"]), _f(o["r20"]), _f(o["mrr"]), _f(chain["far5"]),
                     *(_r5_r10(agg["by_language"][g]) for g in LANGUAGES),
                     *(_r5_r10(agg["by_type"][t]) for t in QUESTION_TYPES)])
    beats = beats_baselines(larger["presets"])
    verdict = "holds" if beats.holds else "**not met**" if beats.holds is False else "not measured"
    return [
        "## Larger projects", "",
        "The same questions with each file played into its project after every session of the other files in its",
        f"language (`eval/larger.py`): {min(sizes):,}-{max(sizes):,} interactions a project instead of "
        f"{min(r['interactions'] for r in summary['ingest'])}-{max(r['interactions'] for r in summary['ingest'])},",
        "the other files' turns filed, linked and searched like the file's own, by the engine and the baselines.", "",
        *_table(["system", "R@5", "R@10", "R@20", "MRR", "chain far@5", *(f"{g}: R@5 / R@10" for g in LANGUAGES),
                 *(f"{t} R@5 / R@10" for t in QUESTION_TYPES)], rows), "",
        f"{beats.name}: {verdict} ({beats.detail}).", "",
    ]


def _integrity_section(summary: dict) -> list[str]:
    """Nothing lost or corrupted at ingest: failures, and supersedes across people (issue 45)."""
    rows = summary["ingest"]
    lines = [
        "## Ingest integrity", "",
        f"Interactions failed at ingest: **{sum(r['failed'] for r in rows)}** of "
        f"{sum(r['interactions'] for r in rows)}; kept with a failed stage (engine/stages.py): "
        f"**{sum(r.get('stage_failures', 0) for r in rows)}**; supersedes applied across two transcript speakers: "
        f"**{sum(r.get('across_speakers', 0) for r in rows)}** (the target for all three: 0).", "",
    ]
    audit = summary.get("subjects")
    if audit:
        lines += [
            f"The demo's travel desk (`eval/subjects.py`: its scenario sessions and {audit['episodes']} live "
            "episodes a language through the pipeline, each episode one traveller): supersedes within one "
            f"traveller **{audit['right']}**, across travellers **{audit['wrong']}**, proposed for review "
            f"(whose values, not known) {audit['proposed']}; interactions failed {audit['failed']} of "
            f"{audit['interactions']}.", "",
        ]
    return lines


def _lost_section(summary: dict, ingested: list[IngestedFile]) -> list[str]:
    contents = {(i.spec.name, x.id): x.content for i in ingested for x in i.spec.interactions}
    lines = ["## Needed interactions lost at ingest", ""]
    runs = [("With each session's task", summary["ingest"]), ("Without a session task (every file ingested again "
            "with an empty task focus, as agents that send none)", summary.get("without_task"))]
    for title, rows in runs:
        if rows is None:
            lines += [f"{title}: not run (`--with-task-only`).", ""]
            continue
        lost = [(r["file"], n) for r in rows for n in r["lost"]]
        if not lost:
            lines += [f"{title}: none, every interaction a question needs became a memory.", ""]
        else:
            lines += [f"{title}:", "", *(f"- `{f}` {n}: {_excerpt(contents[(f, n)])}" for f, n in lost), ""]
    return lines


def _misses_section(questions: list[QuestionResult], ingested: list[IngestedFile]) -> list[str]:
    contents = {(i.spec.name, x.id): x.content for i in ingested for x in i.spec.interactions}
    presets = list(dict.fromkeys(r.preset for r in questions))
    by_key = {(r.file, r.question.id, r.preset): r for r in questions}
    keys = list(dict.fromkeys((r.file, r.question.id) for r in questions))
    rows = [[f"`{f}` {q}", by_key[(f, q, presets[0])].question.type,
             *(f"{_f(by_key[(f, q, p)].r5)} / {_f(by_key[(f, q, p)].rr)}" for p in presets)] for f, q in keys]
    lines = ["## Per question", "", *_table(["question", "type", *(f"{p}: R@5 / RR" for p in presets)], rows),
             "", "## Misses per system", "",
             "Questions whose needed interactions were not all in the top 5: the needed ids missing, then the local",
             "ids of what came back, best first.", ""]
    for index, preset in enumerate(presets):
        mine = [r for r in questions if r.preset == preset]
        misses = [r for r in mine if r.recall is not None and r.recall < 1]
        lines += [f"### {preset}: {len(misses)} of {len(mine)} questions", ""]
        if index and all(r.ranked == by_key[(r.file, r.question.id, presets[0])].ranked for r in mine):
            lines += [f"Same rankings as {presets[0]} for every question.", ""]
            continue
        for r in misses:
            missing = "; ".join(f"{n} “{_excerpt(contents[(r.file, n)], 60)}”" for n in r.missing)
            lines.append(f"- `{r.file}` {r.question.id} ({r.question.type}, R@5 {_f(r.recall)}): "
                         f"“{r.question.text}” — missing {missing} — got {', '.join(r.ranked[:5]) or 'nothing'}")
        lines.append("")
    return lines


def _excerpt(text: str, limit: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
