"""Translated display names of the engine's enum values, for templates and the graph page's config."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

KINDS = {
    "fact": _("fact"), "preference": _("preference"), "constraint": _("constraint"), "intent": _("intent"),
    "decision": _("decision"), "action": _("action"), "result": _("result"), "error": _("error"),
    "event": _("event"), "summary": _("summary"),
}
MEMORY_STATUSES = {"active": _("active"), "superseded": _("superseded"), "archived": _("archived")}
RELATIONS = {
    "causal": _("causal"), "temporal": _("temporal"), "conditional": _("conditional"),
    "elaborates": _("elaborates"), "supersedes": _("supersedes"), "part_of": _("part of"),
    "references": _("references"), "shares_entity": _("shares entity"),
    "next_in_session": _("next in session"), "next_by_speaker": _("same speaker, next turn"),
    "summarizes": _("summarizes"),
}
# Where an edge came from: guessed (a rule, an LLM) or known (a person, the agent's declared link, its use of a recall).
ORIGINS = {"rule": _("rule"), "llm": _("LLM"), "human": _("human"), "agent": _("declared by the agent"),
           "use": _("learned from use")}
EDGE_STATUSES = {"inferred": _("inferred"), "approved": _("approved"), "rejected": _("rejected")}
INTENTS = {
    "inform": _("inform"), "request": _("request"), "question": _("question"), "decide": _("decide"),
    "prefer": _("prefer"), "constrain": _("constrain"), "plan": _("plan"), "act": _("act"),
    "report_result": _("report a result"), "report_error": _("report an error"), "chit_chat": _("chit-chat"),
}
INTERACTION_KINDS = {
    "user_input": _("user input"), "assistant_output": _("assistant output"), "agent_thought": _("agent thought"),
    "tool_call": _("tool call"), "tool_result": _("tool result"), "observation": _("observation"),
    "system": _("system"),
}
INTERACTION_STATUSES = {"pending": _("pending"), "kept": _("kept"), "filtered": _("filtered"), "failed": _("failed")}
ENTITY_TYPES = {
    "person": _("person"), "place": _("place"), "organization": _("organization"), "product": _("product"),
    "file": _("file"), "concept": _("concept"), "other": _("other"),
}
# The write path's stages after the memory row (engine/stages.py), named for a person reading why one failed.
STAGES = {
    "dimensions": _("extracting dimensions"), "scoring": _("scoring"), "entities": _("linking entities"),
    "edges": _("inferring edges"), "supersede": _("superseding older values"),
    "use": _("edges from the recall it used"), "links": _("declared links"),
}
SENTIMENTS = {"positive": _("positive"), "negative": _("negative"), "neutral": _("neutral")}
DIMENSIONS = {
    "topics": _("Topics"), "keywords": _("Keywords"), "dates": _("Dates"), "times": _("Times"),
    "amounts": _("Amounts"), "numbers": _("Numbers"), "urls": _("URLs"), "paths": _("Paths"),
    "identifiers": _("Identifiers"),
}


def choices(mapping: dict) -> list[dict[str, str]]:
    return [{"value": value, "label": str(label)} for value, label in mapping.items()]


def all_choices() -> dict[str, list[dict[str, str]]]:
    """Every enum the graph page shows, translated into the request's language."""
    return {
        "kinds": choices(KINDS), "statuses": choices(MEMORY_STATUSES), "relations": choices(RELATIONS),
        "origins": choices(ORIGINS), "edgeStatuses": choices(EDGE_STATUSES), "intents": choices(INTENTS),
        "interactionKinds": choices(INTERACTION_KINDS), "interactionStatuses": choices(INTERACTION_STATUSES),
        "dimensions": choices(DIMENSIONS), "entityTypes": choices(ENTITY_TYPES),
        "sentiments": choices(SENTIMENTS), "stages": choices(STAGES),
    }
