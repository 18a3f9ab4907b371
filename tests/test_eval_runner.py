"""The evaluation harness (eval/): metrics on hand-made inputs, the labelled data files, one real run."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter

import pytest

from eval.dataset import (
    DATA_DIR,
    EDGE_RELATIONS,
    HELDOUT_DIR,
    KINDS,
    LANGUAGES,
    LIMITS,
    QUESTION_TYPES,
    load_file,
    load_files,
    validate,
)
from eval.metrics import EMPTY_EDGE_SCORES, EdgeScores, edge_scores, mean, recall_at_k, reciprocal_rank
from eval.run import parse_args

DATA_PATHS = sorted(DATA_DIR.glob("*.json"))
HELDOUT_PATHS = sorted(HELDOUT_DIR.glob("*.json"))


# --- metrics -------------------------------------------------------------------------------------

def test_recall_at_k_counts_relevant_items_in_the_first_k():
    ranked = [10, 20, 30, 40, 50]
    assert recall_at_k(ranked, {20, 99}, k=5) == 0.5
    assert recall_at_k(ranked, {20, 40}, k=3) == 0.5
    assert recall_at_k(ranked, {20, 40}, k=4) == 1.0
    assert recall_at_k(ranked, {60}, k=5) == 0.0
    assert recall_at_k(ranked, [20, 20], k=2) == 1.0  # duplicates in the labels count once
    assert recall_at_k(ranked, set(), k=5) is None


def test_reciprocal_rank_uses_the_first_relevant_item():
    assert reciprocal_rank([5, 2, 7], {7, 2}) == 0.5
    assert reciprocal_rank([5, 2, 7], {5}) == 1.0
    assert reciprocal_rank([5, 2, 7], {7}) == pytest.approx(1 / 3)
    assert reciprocal_rank([5, 2, 7], {7}, k=2) == 0.0
    assert reciprocal_rank([5, 2, 7], {8}) == 0.0
    assert reciprocal_rank([5, 2, 7], []) is None


def test_mean_ignores_undefined_values():
    assert mean([1.0, None, 0.0]) == 0.5
    assert mean([None, None]) is None


def test_edge_scores_precision_recall_f1_and_relation_accuracy():
    predicted = {(1, 2): {"causal"}, (2, 3): {"temporal"}, (3, 4): {"references"}, (4, 1): {"causal"}}
    labelled = {(1, 2): "causal", (2, 3): "causal", (5, 6): "supersedes"}
    scores = edge_scores(predicted, labelled)
    assert (scores.true_positives, scores.predicted, scores.labelled) == (2, 4, 3)
    assert scores.precision == 0.5
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert scores.relation_accuracy == 0.5


def test_edge_scores_direction_matters_and_no_prediction_scores_zero():
    reversed_only = edge_scores({(2, 1): {"causal"}}, {(1, 2): "causal"})
    assert (reversed_only.true_positives, reversed_only.precision, reversed_only.recall) == (0, 0.0, 0.0)
    nothing = edge_scores({}, {(1, 2): "causal"})
    assert (nothing.precision, nothing.recall, nothing.f1, nothing.relation_accuracy) == (0.0, 0.0, 0.0, None)
    perfect = edge_scores({(1, 2): {"causal", "temporal"}}, {(1, 2): "temporal"})
    assert (perfect.precision, perfect.recall, perfect.f1, perfect.relation_accuracy) == (1.0, 1.0, 1.0, 1.0)


def test_edge_scores_add_up_as_micro_averages():
    total = EdgeScores(1, 2, 4, 1) + EdgeScores(3, 4, 4, 2) + EMPTY_EDGE_SCORES
    assert total == EdgeScores(4, 6, 8, 3)
    assert (total.precision, total.recall, total.relation_accuracy) == (4 / 6, 0.5, 0.75)


# --- the labelled data ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", DATA_PATHS + HELDOUT_PATHS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_data_file_is_valid(path):
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert validate(raw) == []
    spec = load_file(path)
    ids = [i.id for i in spec.interactions]
    assert len(ids) == len(set(ids)), "interaction ids must be unique in the file"
    assert all(i.kind in KINDS for i in spec.interactions)
    style = raw.get("style", "agent")
    limits = LIMITS[style]
    assert all(limits["interactions"][0] <= len(s.interactions) <= limits["interactions"][1] for s in spec.sessions)
    assert limits["questions"][0] <= len(spec.questions) <= limits["questions"][1]
    assert limits["edges"][0] <= len(spec.edges) <= limits["edges"][1]
    known = set(ids)
    for question in spec.questions:
        assert question.type in QUESTION_TYPES
        assert set(question.needs) <= known and set(question.superseded) <= known
        assert not set(question.needs) & set(question.superseded)
    for edge in spec.edges:
        assert {edge.parent, edge.child} <= known and edge.relation in EDGE_RELATIONS
    # Every session is dated, in order: an undated one is placed before the day the eval runs, and its
    # yearless dates ("3 月 18 日", "1 April") then resolved to another year on every run.
    dates = [s.date for s in spec.sessions]
    assert all(dates) and dates == sorted(dates)
    kinds = Counter(i.kind for i in spec.interactions)
    if style == "agent":
        assert kinds["tool_call"] and kinds["tool_call"] == kinds["tool_result"], "tool calls come in pairs"
    else:  # two people talking: every turn names its speaker
        assert set(kinds) == {"user_input"}
        assert all(i.content.startswith(f"{i.metadata['speaker']}") for i in spec.interactions)


def test_conversations_are_long_enough_in_both_languages():
    """The long multi-session conversations: at least 1,500 turns in all, in English and in Chinese."""
    conversations = [f for f in load_files() if f.style == "conversation"]
    turns = Counter()
    for spec in conversations:
        turns[spec.language] += len(spec.interactions)
    assert sum(turns.values()) >= 1500 and turns["en"] >= 700 and turns["zh"] >= 700, turns
    types = Counter(q.type for f in conversations for q in f.questions)
    assert {"fact", "chain", "temporal", "superseded", "cross_session"} <= set(types), types


def test_data_set_covers_both_languages_and_every_question_type():
    files = load_files()
    languages = Counter(f.language for f in files)
    assert all(languages[lang] >= 3 for lang in LANGUAGES), languages
    assert any(len(f.sessions) >= 2 for f in files if f.language == "en")
    assert any(len(f.sessions) >= 2 for f in files if f.language == "zh")
    types = Counter(q.type for f in files for q in f.questions)
    assert set(types) == set(QUESTION_TYPES)
    assert all(q.superseded for f in files for q in f.questions if q.type == "superseded")
    kinds = {i.kind for f in files for i in f.interactions}
    assert kinds == set(KINDS)


@pytest.fixture
def valid_raw():
    return json.loads(DATA_PATHS[0].read_text(encoding="utf-8"))


def test_validate_reports_duplicate_ids_unknown_references_and_bad_kinds(valid_raw):
    broken = copy.deepcopy(valid_raw)
    rows = broken["sessions"][0]["interactions"]
    rows[1]["id"] = rows[0]["id"]
    rows[2]["kind"] = "telepathy"
    broken["questions"][0]["needs"].append("t999")
    broken["edges"][0]["child"] = "t998"
    problems = " | ".join(validate(broken))
    assert "not unique" in problems
    assert "telepathy" in problems
    assert "t999" in problems
    assert "unknown interaction" in problems


def test_validate_rejects_bad_scope_type_and_backward_edges(valid_raw):
    broken = copy.deepcopy(valid_raw)
    broken["questions"][0]["scope"] = "s9"
    broken["questions"][1]["type"] = "vibes"
    first = broken["sessions"][0]["interactions"]
    broken["edges"][0] = {"parent": first[5]["id"], "child": first[2]["id"], "relation": "causal"}
    broken["edges"][1]["relation"] = "next_in_session"
    problems = " | ".join(validate(broken))
    assert "s9" in problems and "vibes" in problems
    assert "parent must come before" in problems
    assert "relation must be one of" in problems


def test_validate_rejects_an_unanswered_tool_result(valid_raw):
    broken = copy.deepcopy(valid_raw)
    result = next(i for s in broken["sessions"] for i in s["interactions"] if i["kind"] == "tool_result")
    result["metadata"]["call_id"] = "nobody-called-this"
    assert any("answers no earlier" in p for p in validate(broken))


def test_validate_wants_every_tool_result_labelled_as_depending_on_its_call(valid_raw):
    broken = copy.deepcopy(valid_raw)
    rows = [i for s in broken["sessions"] for i in s["interactions"]]
    call_of = {i["metadata"]["call_id"]: i["id"] for i in rows if i["kind"] == "tool_call"}
    pairs = {(call_of[i["metadata"]["call_id"]], i["id"]) for i in rows if i["kind"] == "tool_result"}
    dropped = next(e for e in broken["edges"] if (e["parent"], e["child"]) in pairs)
    broken["edges"].remove(dropped)
    assert validate(broken) == [f"tool_result {dropped['child']}: label the edge from its call {dropped['parent']}"]


def test_neighbours_baseline_follows_each_hit_with_the_turns_around_it_in_its_session():
    from eval.baselines import BaselineIndex
    from eval.dataset import EvalFile, EvalInteraction, EvalSession, Question
    from memory.providers.hashing import HashingEmbedder

    def session(key: str, texts: list[str], first: int) -> EvalSession:
        rows = [EvalInteraction(f"t{first + n}", "user_input", text) for n, text in enumerate(texts)]
        return EvalSession(key, key, "", rows)

    spec = EvalFile("f", "p", "en", [
        session("s1", ["We landed in Porto.", "The ferry to the island was cancelled.", "Storm warning all day."], 1),
        session("s2", ["Dinner at the harbour.", "Nobody else showed up.", "The ferry left at dawn."], 4),
    ], [], [])
    index = BaselineIndex(spec, HashingEmbedder())
    question = Question("q1", "Why was the ferry cancelled?", "project", ["t2", "t3"], "chain")
    fused = index.rank(question, "bm25+vector", 6)
    around = index.rank(question, "bm25+vector+neighbours", 6)
    assert around[:3] == [fused[0], "t1", "t3"] and fused[0] == "t2"
    assert len(around) == 6 == len(set(around))
    # Neighbours never cross a session, and a question scoped to one session keeps to it.
    scoped = index.rank(Question("q2", "ferry", "s2", ["t6"], "fact"), "bm25+vector+neighbours", 3)
    assert scoped[:2] == ["t6", "t5"] and set(scoped) <= {"t4", "t5", "t6"}


def test_held_out_files_cover_both_languages_and_both_styles_apart_from_the_tuned_set():
    held_out = load_files(directory=HELDOUT_DIR)
    assert {(f.language, f.style) for f in held_out} == {(lang, style) for lang in LANGUAGES for style in LIMITS}
    assert not {f.name for f in held_out} & {p.stem for p in DATA_PATHS}, "a held-out file is no tuned file"
    types = Counter(q.type for f in held_out for q in f.questions)
    assert set(types) == set(QUESTION_TYPES), types


def test_parse_args_defaults_and_preset_list():
    args = parse_args([])
    assert args.presets == ["vector", "hybrid", "ripple"] and args.k is None and args.out == "docs/eval.md"
    assert not args.heldout
    held_out = parse_args(["--heldout"])
    assert (held_out.out, held_out.crowd, held_out.larger) == ("docs/eval-heldout.md", 0, False)
    assert parse_args(["--heldout", "--crowd", "2", "--larger", "--out", "x.md"]).crowd == 2
    args = parse_args(["--preset", "vector, ripple", "--k", "3", "--files", "travel_*"])
    assert (args.presets, args.k, args.files) == (["vector", "ripple"], 3, "travel_*")
    with pytest.raises(SystemExit):
        parse_args(["--k", "0"])


# --- one real run: ingest + evaluate + report on the test database ---------------------------------

@pytest.mark.django_db(transaction=True)
def test_end_to_end_run_on_one_file():
    from eval.baselines import BASELINES
    from eval.report import RunInfo, markdown, stdout_table
    from eval.run import DEFAULT_PRESETS, run

    files = load_files("travel_yunnan_zh")
    summary, questions, ingested = run(files, list(DEFAULT_PRESETS), progress=False, check_without_task=True)

    (only,) = ingested
    spec = files[0]
    assert set(only.statuses) == {i.id for i in spec.interactions}, "every local id maps to its interaction"
    assert set(only.statuses.values()) <= {"kept", "filtered"}, "nothing failed or stayed pending"
    assert any(only.kept(i.id) for i in spec.interactions)
    systems = [*BASELINES, *DEFAULT_PRESETS]
    assert len(questions) == len(spec.questions) * len(systems)

    assert set(summary) == {"presets", "edges", "ingest", "without_task"}
    (again,) = summary["without_task"]
    assert again["file"] == spec.name and again["needed"] == len({n for q in spec.questions for n in q.needs})
    assert summary["ingest"][0]["asks_superseding"] == 0
    assert list(summary["presets"]) == systems, "the baselines are computed in the same run, beside every preset"
    for agg in summary["presets"].values():
        assert set(agg) == {"overall", "by_language", "by_type", "by_language_type"}
        assert agg["by_language_type"]["zh"]["chain"]["questions"] == agg["by_type"]["chain"]["questions"]
        assert set(agg["by_language"]) == set(LANGUAGES) and set(agg["by_type"]) == set(QUESTION_TYPES)
        assert agg["overall"]["questions"] == len(spec.questions)
        assert agg["by_language"]["en"]["questions"] == 0
        for block in [agg["overall"], *agg["by_language"].values(), *agg["by_type"].values()]:
            for key in ("recall", "r10", "r20", "mrr", "far5", "stale_above"):
                assert block[key] is None or 0.0 <= block[key] <= 1.0, (key, block)
            assert 0 <= block["lost"] <= block["needed"]
    for result in questions:
        assert result.recall is None or 0.0 <= result.recall <= 1.0
        assert result.r10 is None or result.recall <= result.r10 <= result.r20 <= 1.0
        assert result.rr is None or 0.0 <= result.rr <= 1.0
        assert len(result.ranked) <= result.k == 20
    bm25 = [r for r in questions if r.preset == "bm25"]
    assert any(r.r5 for r in bm25), "BM25 finds some evidence"
    edges = summary["edges"]
    for block in [edges["overall"], *edges["by_language"].values()]:
        for key in ("precision", "recall", "f1"):
            assert 0.0 <= block[key] <= 1.0
        assert block["relation_accuracy"] is None or 0.0 <= block["relation_accuracy"] <= 1.0
    assert edges["overall"]["labelled"] == len(spec.edges)
    rules = edges["by_rule"]
    assert sum(r["predicted"] for r in rules) == sum(edges["by_relation"].values()), "every scored edge has its rule"
    assert all(0 <= r["matched"] <= r["predicted"] and r["precision"] == r["matched"] / r["predicted"] for r in rules)
    tool = [r for r in rules if r["rule"] == "tool call → result"]
    assert tool and tool[0]["matched"] > 0, "the file's tool results are labelled as depending on their calls"
    (row,) = summary["ingest"]
    assert row["interactions"] == len(spec.interactions) and 0 < row["kept"] <= row["interactions"]
    assert row["failed"] == 0 and 0 <= row["stale_marked"] <= row["stale"] == 1

    info = RunInfo(date="today", machine="test", embedder="hashing", llm="none", commit="abc", database="test",
                   command="pytest")
    report = markdown(summary, info, questions, ingested)
    assert "By the rule that made them" in report and "| tool call → result |" in report
    for heading in ("# Recall and dependency-graph evaluation", "## Targets", "## Recall", "### By question type",
                    "### By language and question type",
                    "## Dependency edges", "## Needed interactions lost at ingest", "## Per question",
                    "## Misses per system"):
        assert heading in report
    assert "Labelled data: `eval/data/*.json`" in report and "Held-out" not in report
    held_out = markdown(summary, dataclasses.replace(info, data="eval/heldout", heldout=True), questions, ingested)
    assert held_out.startswith("# Recall and dependency-graph evaluation: held-out files")
    assert "nothing is tuned on them" in held_out and "Labelled data: `eval/heldout/*.json`" in held_out
    table = stdout_table(summary)
    assert all(system in table for system in systems) and "edges (P/R/F1" in table
    assert "stale memories marked superseded" in table and "targets: " in table
    assert "Far needs of the chain questions" in report

    # Far needs of chain questions, by their strongest link to another need of the question.
    from eval.baselines import is_far
    from eval.evaluate import evaluate_edges
    from eval.ingest import ingest_file
    from memory.models import Edge, Relation

    contents = {i.id: i.content for i in spec.interactions}
    far = [(q, n) for q in spec.questions if q.type == "chain" for n in q.needs if is_far(q.text, contents[n])]
    assert far and sum(edges["far_links"].values()) == len(far)
    fresh = ingest_file(spec)  # the run's second ingest (without a task) replaced the project `only` stands for
    assert evaluate_edges(fresh).far_links == edges["far_links"]
    Edge.objects.filter(project=fresh.project).delete()
    assert evaluate_edges(fresh).far_links == {"inferred": 0, "structural": 0, "none": len(far)}
    question, need = next((q, n) for q, n in far if fresh.kept(n) and any(fresh.kept(m) for m in q.needs if m != n))
    other = next(m for m in question.needs if m != need and fresh.kept(m))
    source, target = fresh.memories[other][0], fresh.memories[need][0]
    Edge.objects.create(project=fresh.project, source_id=source, target_id=target, relation=Relation.NEXT_IN_SESSION)
    assert evaluate_edges(fresh).far_links == {"inferred": 0, "structural": 1, "none": len(far) - 1}
    Edge.objects.create(project=fresh.project, source_id=target, target_id=source, relation=Relation.CAUSAL)
    assert evaluate_edges(fresh).far_links == {"inferred": 1, "structural": 0, "none": len(far) - 1}


@pytest.mark.django_db(transaction=True)
def test_crowded_run_asks_again_beside_another_projects_copies_and_removes_them():
    from eval.crowd import CROWD_SLUG
    from eval.report import RunInfo, markdown, stdout_table
    from eval.run import run
    from memory.models import Memory, Project

    files = load_files("event_gala_zh")
    summary, questions, ingested = run(files, ["hybrid", "ripple"], progress=False, crowd=3)

    crowded = summary["crowded"]
    kept = sum(1 for i in files[0].interactions if ingested[0].kept(i.id))
    assert crowded["times"] == 3 and crowded["table_rows"] >= 4 * kept, "three copies of every memory beside it"
    assert list(crowded["presets"]) == ["hybrid", "ripple"], "the baselines do not read the database: not asked again"
    for agg in crowded["presets"].values():
        assert agg["questions"] == len(files[0].questions) and 0.0 <= agg["recall"] <= agg["r10"] <= 1.0
    assert crowded["edges"]["labelled"] == len(files[0].edges) and 0 <= crowded["stale_marked"] <= crowded["stale"]
    assert not Project.objects.filter(slug=CROWD_SLUG).exists(), "the copies are removed after the run"
    assert Memory.objects.count() == Memory.objects.filter(project__slug="eval-event_gala_zh").count()

    info = RunInfo(date="today", machine="test", embedder="hashing", llm="none", commit="abc", database="test",
                   command="pytest")
    report = markdown(summary, info, questions, ingested)
    section = report.split("## Beside other projects' memories", 1)[1].split("\n## ", 1)[0]
    assert f"{crowded['table_rows']:,} memories in the table" in section
    ripple = crowded["presets"]["ripple"]
    assert "| ripple | " in section and f"{ripple['recall']:.2f} / {ripple['r10']:.2f} |" in section
    assert "stale interactions marked superseded" in section
    assert f"beside {crowded['table_rows']:,} memories" in stdout_table(summary)


def test_larger_files_put_the_other_files_of_the_language_first():
    from eval.larger import beside_others

    files = load_files("*.json")
    bigger = {spec.name: spec for spec in beside_others(files)}
    for spec in files:
        big = bigger[spec.name]
        others = [o for o in files if o.language == spec.language and o.name != spec.name]
        assert len(big.interactions) == len(spec.interactions) + sum(len(o.interactions) for o in others)
        assert big.sessions[-len(spec.sessions):] == spec.sessions, "the file's own sessions come last, unchanged"
        assert big.questions == spec.questions and big.edges == spec.edges
        ids = [i.id for i in big.interactions]
        assert len(ids) == len(set(ids)), "the other files' ids are prefixed, so none collides"
        keys = [s.key for s in big.sessions]
        assert len(keys) == len(set(keys))


@pytest.mark.django_db(transaction=True)
def test_larger_run_asks_each_files_questions_beside_the_others_with_the_baselines():
    from eval.report import RunInfo, markdown, stdout_table
    from eval.run import run

    files = load_files("*_zh.json")[:2]
    summary, questions, ingested = run(files, ["hybrid", "ripple"], progress=False, larger=True)

    larger = summary["larger"]
    assert larger["interactions"] == {f.name: sum(len(g.interactions) for g in files) for f in files}
    assert list(larger["presets"]) == ["bm25", "bm25+vector", "bm25+vector+neighbours", "hybrid", "ripple"]
    for agg in larger["presets"].values():
        assert agg["overall"]["questions"] == sum(len(f.questions) for f in files)
    info = RunInfo(date="today", machine="test", embedder="hashing", llm="none", commit="abc", database="test",
                   command="pytest")
    section = markdown(summary, info, questions, ingested).split("## Larger projects", 1)[1].split("\n## ", 1)[0]
    ripple = larger["presets"]["ripple"]["overall"]
    assert f"| ripple | {ripple['recall']:.2f} | {ripple['r10']:.2f} |" in section
    assert "beats both baselines" in section
    assert "larger projects (R@5/R@10)" in stdout_table(summary)


def test_crowd_option_is_bounded():
    assert parse_args([]).crowd == 25 and parse_args(["--crowd", "0"]).crowd == 0
    assert parse_args([]).larger and not parse_args(["--no-larger"]).larger
    with pytest.raises(SystemExit):
        parse_args(["--crowd", "-1"])


def _aggregate(recall: float, r10: float, far5: float | None = None, answerable: int = 4) -> dict:
    return {"questions": answerable, "answerable": answerable, "recall": recall, "r10": r10, "r20": r10, "mrr": recall,
            "far5": far5, "far_questions": 2, "needed": 8, "lost": 0, "stale_above": None}


def _summary(ripple: float, baseline: float, *, far5: float = 0.5, precision: float = 0.6, marked: int = 9,
             asks: int = 0, lost_without_task: list[str] | None = None) -> dict:
    def preset(value: float) -> dict:
        cell = _aggregate(value, value, far5)
        return {"overall": cell, "by_type": {t: cell for t in QUESTION_TYPES},
                "by_language_type": {lang: {t: cell for t in QUESTION_TYPES} for lang in LANGUAGES}}

    return {"presets": {"bm25": preset(baseline), "bm25+vector": preset(baseline), "hybrid": preset(ripple - 0.2),
                        "ripple": preset(ripple)},
            "edges": {"overall": {"precision": precision, "recall": 0.7}},
            "ingest": [{"stale": 10, "stale_marked": marked, "asks_superseding": asks}],
            "without_task": [{"file": "f", "needed": 12, "lost": lost_without_task or []}]}


def test_edge_rule_is_told_by_the_rationale_or_the_origin():
    from eval.evaluate import edge_rule

    assert edge_rule("rule", "tool result of this call") == "tool call → result"
    assert edge_rule("rule", "returns to painters, clutch") == "topic returned to"
    assert edge_rule("rule", "reuses 14:00") == "reused value"
    assert edge_rule("rule", "something new") == "other rule"
    assert edge_rule("human", "tool result of this call") == "human"


def test_targets_hold_only_when_every_number_clears_its_bar():
    from eval.targets import check

    assert all(t.holds for t in check(_summary(0.6, 0.5))), [t for t in check(_summary(0.6, 0.5)) if not t.holds]
    failing = {t.name: t for t in check(_summary(0.5, 0.5, far5=0.2, precision=0.3, marked=5)) if t.holds is False}
    beats = next(t for name, t in failing.items() if name.startswith("`ripple` beats"))
    assert "en chain R@5 0.50 vs bm25 0.50" in beats.detail, "a tie is not a win"
    assert any(name.startswith("chain far@5") for name in failing)
    assert any(name.startswith("inferred edges") for name in failing)
    assert any("superseded" in name for name in failing)
    failing = {t.name: t for t in check(_summary(0.6, 0.5, asks=1, lost_without_task=["t7"])) if t.holds is False}
    assert set(failing) == {"no question or confirmation supersedes anything",
                            "no needed interaction lost at ingest without a session task"}
    lost = failing["no needed interaction lost at ingest without a session task"]
    assert lost.detail == "1 of 12 distinct needed interactions: f t7"
    summary = _summary(0.6, 0.5)
    summary["without_task"] = None
    (skipped,) = [t for t in check(summary) if t.holds is None]
    assert "not run" in skipped.detail
    (fact,) = [t for t in check(_summary(0.6, 0.5)) if t.name.startswith("single-hop")]
    assert fact.holds  # ripple is 0.2 above hybrid there


def test_targets_are_not_measured_without_the_baselines():
    from eval.targets import check

    summary = _summary(0.6, 0.5)
    del summary["presets"]["bm25"]
    (only,) = check(summary)
    assert only.holds is None and "bm25" in only.detail


def test_stale_above_only_when_a_superseded_memory_outranks_every_current_one():
    from eval.evaluate import _stale_above

    assert _stale_above(["t1", "t9", "t2"], relevant={"t2"}, stale={"t9"}) is True
    assert _stale_above(["t2", "t9"], relevant={"t2"}, stale={"t9"}) is False
    assert _stale_above(["t1", "t9"], relevant={"t2"}, stale={"t9"}) is True  # current one not even returned
    assert _stale_above(["t1", "t2"], relevant={"t2"}, stale={"t9"}) is False
