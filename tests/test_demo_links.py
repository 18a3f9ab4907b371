"""The links the demo's agents declare (memory/demo/links.py): what a framework knows without reading the text."""

from __future__ import annotations

from memory.demo.links import framework_links
from memory.demo.scenarios import ScenarioInteraction


def _turn(kind: str, call_id: str = "") -> ScenarioInteraction:
    return ScenarioInteraction(kind=kind, content=f"{kind} text", metadata={"call_id": call_id} if call_id else {})


def test_results_follow_their_call_calls_their_step_and_answers_the_results_since_the_request() -> None:
    turns = [_turn("user_input"), _turn("agent_thought"), _turn("tool_call", "c1"), _turn("tool_call", "c2"),
             _turn("tool_result", "c2"), _turn("tool_result", "c1"), _turn("assistant_output"),
             _turn("user_input"), _turn("assistant_output"), _turn("tool_result", "unknown")]
    declared = framework_links(turns, "k")
    assert [d.parents for d in declared] == [(), (0,), (1,), (2,), (3,), (2,), (4, 5), (), (7,), ()]
    assert declared[2].external_id == "k:c1:tool_call" and declared[5].external_id == "k:c1:tool_result"
    assert declared[0].external_id == "k:msg:0"
    assert len({d.external_id for d in declared}) == len(declared)  # unique in the session


def test_a_thought_after_a_result_reacts_to_the_result() -> None:
    turns = [_turn("user_input"), _turn("tool_call", "c1"), _turn("tool_result", "c1"), _turn("agent_thought"),
             _turn("tool_call", "c2")]
    assert [d.parents for d in framework_links(turns, "k")] == [(), (0,), (1,), (2,), (3,)]
