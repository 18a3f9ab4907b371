"""eval/linker_probe.py: candidates, scoring and the threshold on hand-made inputs, then one real probe."""

from __future__ import annotations

from collections import Counter

import numpy as np

from eval.dataset import DATA_DIR, HELDOUT_DIR, load_file
from eval.linker_probe import (
    CROSS_TOP,
    FEATURES,
    GROUPS,
    MIN_PRECISION,
    THRESHOLDS,
    WINDOW,
    Pairs,
    Turn,
    candidates,
    chosen_threshold,
    markdown,
    probe,
    score,
)


def _turn(index: int, session: int, position: int) -> Turn:
    return Turn(f"t{index}", session, position, "user_input", "A", frozenset(), frozenset(), False, False, False)


def _pairs(labelled: list[bool], groups: list[str] | None = None) -> Pairs:
    groups = groups or [GROUPS[0]] * len(labelled)
    return Pairs(np.zeros((len(labelled), len(FEATURES))), np.array(labelled), groups, ["f"] * len(labelled),
                 Counter(g for g, y in zip(groups, labelled, strict=True) if y))


def test_candidates_are_earlier_turns_of_the_window_and_the_most_similar_of_other_sessions():
    turns = [_turn(i, 0, i) for i in range(12)] + [_turn(12 + i, 1, i) for i in range(12)]
    child = 20  # session 1, position 8
    cosines = np.linspace(0.0, 1.0, len(turns))  # later turns more similar
    chosen = candidates(turns, cosines, child)
    same = [i for i in chosen if turns[i].session == 1]
    other = [i for i in chosen if turns[i].session == 0]
    assert same == list(range(12, 20))[-WINDOW:] and all(i < child for i in chosen)
    assert other == [11, 10, 9, 8, 7, 6][:CROSS_TOP]  # session 0's most similar first


def test_score_counts_found_linked_and_every_labelled_dependency():
    pairs = _pairs([True, False, True, False])
    pairs.labels[GROUPS[0]] += 2  # two more labelled dependencies that no candidate reaches
    result = score(np.array([0.9, 0.8, 0.2, 0.1]), pairs, 0.5)
    assert (result.true_positives, result.predicted, result.labelled) == (1, 2, 4)
    assert result.precision == 0.5 and result.recall == 0.25


def test_score_by_group_counts_that_group_only():
    pairs = _pairs([True, True, False], [GROUPS[0], GROUPS[1], GROUPS[1]])
    result = score(np.array([0.9, 0.9, 0.9]), pairs, 0.5, GROUPS[1])
    assert (result.true_positives, result.predicted, result.labelled) == (1, 2, 1)


def test_chosen_threshold_is_the_lowest_that_reaches_the_precision_bar():
    pairs = _pairs([True, False, False, False, True])
    probabilities = np.array([0.9, 0.6, 0.3, 0.3, 0.1])  # precision 2 of 5, then 1 of 4, then 1 of 2
    threshold = chosen_threshold(probabilities, pairs)
    assert score(probabilities, pairs, threshold).precision >= MIN_PRECISION
    lower = [t for t in THRESHOLDS if t < threshold]
    assert all(score(probabilities, pairs, t).precision < MIN_PRECISION for t in lower)
    assert threshold == 0.31


def test_probe_on_real_files_learns_the_tool_results_and_reports_both_sets():
    from memory.providers.hashing import HashingEmbedder

    embedder = HashingEmbedder()
    tuned = [load_file(DATA_DIR / f"{name}.json") for name in (
        "coding_billing_en", "coding_export_zh", "travel_lisbon_en", "insurance_claim_zh", "analysis_churn_en")]
    heldout = [load_file(HELDOUT_DIR / "procurement_laptops_en.json")]
    train, test, results = probe(tuned, heldout, lambda texts: np.asarray(embedder.embed(texts), dtype=float))
    dependencies = sum(1 for spec in tuned for e in spec.edges if e.relation != "supersedes")
    assert train.total == dependencies and int(train.labelled.sum()) <= dependencies
    assert train.features.shape == (len(train.groups), len(FEATURES))
    for result in results:
        assert result.tuned.precision >= MIN_PRECISION  # the threshold was chosen for it
        same_session = result.heldout_groups["agent, same session"]
        assert same_session.true_positives > same_session.labelled / 2  # a tool's result follows its call: learnable
        assert sum(s.labelled for s in result.heldout_groups.values()) == test.total
    report = markdown(train, test, results, "header")
    assert "| logistic regression | held-out |" in report and "agent, same session" in report
