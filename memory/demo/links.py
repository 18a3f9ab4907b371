"""The links an agent framework knows about its own turns, for the demo's agents (loader and simulator).

A framework links without reading the text: a tool result answers the call with its call id; a tool call or a
thought acts on the request before it; the assistant's answer follows from the results since that request (or
the request itself). The demo sends these as an instrumented agent would, so its graph shows declared edges and a
changed value flags what was done with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .scenarios import ScenarioInteraction


@dataclass(frozen=True)
class DeclaredTurn:
    external_id: str
    parents: tuple[int, ...]  # the indexes of the earlier turns it depends on


def framework_links(interactions: list[ScenarioInteraction], key: str) -> list[DeclaredTurn]:
    """Each turn's framework id (`key`-scoped; a call's own call id) and the earlier turns it depends on."""
    turns: list[DeclaredTurn] = []
    calls: dict[str, int] = {}
    request: int | None = None  # the latest user turn
    results: list[int] = []  # tool results since it
    step: int | None = None  # the latest thought or call: what the next call carries out
    for index, item in enumerate(interactions):
        call_id = str(item.metadata.get("call_id", ""))
        parents: tuple[int, ...] = ()
        if item.kind == "user_input":
            request, results, step = index, [], None
        elif item.kind == "tool_result" and call_id in calls:
            parents = (calls[call_id],)
            results.append(index)
        elif item.kind == "tool_call":
            parents = tuple(i for i in (step if step is not None else request,) if i is not None)
            calls[call_id], step = index, index
        elif item.kind == "agent_thought":
            parents = (results[-1],) if results else ((request,) if request is not None else ())
            step = index
        elif item.kind == "assistant_output":
            parents = tuple(results) or ((request,) if request is not None else ())
        external = f"{key}:{call_id}:{item.kind}" if call_id else f"{key}:msg:{index}"
        turns.append(DeclaredTurn(external, parents))
    return turns
