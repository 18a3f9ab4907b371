"""The selective filter without a task focus: it has no judge of relevance, so it keeps what it would
otherwise drop for low novelty; chit-chat and true duplicates are still dropped (issue 11)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.engine.extraction import extract_dimensions
from memory.engine.scoring import FILTER_DEFAULTS, Evidence, score_offline
from memory.models import Interaction, InteractionKind

TEXT = "The hotel in Lisbon is near the river, like the one we had in Porto"


def evidence(*, task_similarity: float | None, nearest_similarity: float, nearest: int | None = 7) -> Evidence:
    return Evidence(task_similarity=task_similarity, nearest_memory_id=nearest, nearest_similarity=nearest_similarity,
                    dimensions=extract_dimensions(TEXT, now=datetime.now(UTC)), new_entities=0)


def interaction(content: str = TEXT) -> Interaction:
    return Interaction(kind=InteractionKind.ASSISTANT_OUTPUT, content=content)


@pytest.mark.parametrize("similar", [0.9, 0.92])
def test_a_turn_like_an_earlier_one_is_kept_when_the_session_has_no_task(similar):
    with_task = score_offline(interaction(), evidence(task_similarity=0.05, nearest_similarity=similar),
                              FILTER_DEFAULTS)
    assert not with_task.keep, "with a task focus, an off-focus turn that repeats much is dropped"
    without = score_offline(interaction(), evidence(task_similarity=None, nearest_similarity=similar),
                            FILTER_DEFAULTS)
    assert without.keep and "no task focus" in without.reason
    assert without.total < FILTER_DEFAULTS["keep_threshold"], "its scores alone would have dropped it"


def test_without_a_task_chit_chat_and_true_duplicates_are_still_dropped():
    hello = score_offline(interaction("Hi!"), evidence(task_similarity=None, nearest_similarity=0.1), FILTER_DEFAULTS)
    assert not hello.keep
    duplicate = score_offline(interaction(), evidence(task_similarity=None, nearest_similarity=0.97), FILTER_DEFAULTS)
    assert not duplicate.keep and duplicate.duplicate_of == 7


def test_each_decision_carries_its_code_and_values_for_the_pages():
    """The English reason is for logs and the API; pages say the decision in the reader's language from the
    code (frontend/src/reasons.js), so every rule's decision has one, with the values the sentence needs."""
    cases = {
        "chit_chat": score_offline(interaction("ok thanks"), evidence(task_similarity=0.5, nearest_similarity=0.1),
                                   FILTER_DEFAULTS),
        "duplicate": score_offline(interaction(), evidence(task_similarity=0.5, nearest_similarity=0.97),
                                   FILTER_DEFAULTS),
        "off_task": score_offline(interaction(), evidence(task_similarity=0.1, nearest_similarity=0.1),
                                  FILTER_DEFAULTS | {"coarse_min_similarity": 0.2}),  # that stage is off by default
        "dropped": score_offline(interaction(), evidence(task_similarity=0.05, nearest_similarity=0.9),
                                 FILTER_DEFAULTS),
        "kept_without_focus": score_offline(interaction(), evidence(task_similarity=None, nearest_similarity=0.9),
                                            FILTER_DEFAULTS),
        "kept": score_offline(interaction(), evidence(task_similarity=0.9, nearest_similarity=0.1), FILTER_DEFAULTS),
    }
    assert {code: scores.extra["verdict"]["code"] for code, scores in cases.items()} == {c: c for c in cases}
    assert cases["duplicate"].extra["verdict"]["memory"] == 7
    dropped = cases["dropped"].extra["verdict"]
    assert (dropped["total"], dropped["threshold"], dropped["kind"]) == (
        cases["dropped"].total, FILTER_DEFAULTS["keep_threshold"], cases["dropped"].kind)
    assert cases["kept_without_focus"].extra["verdict"]["total"] == cases["kept_without_focus"].total
    assert cases["kept"].keep and not cases["dropped"].keep
