"""OpenTelemetry traces of agents as interactions: one session per trace, the span tree as declared links.

memory/api/otlp.py parses OTLP; this module reads its ExportTraceServiceRequest. A span of the GenAI semantic
conventions (`gen_ai.operation.name`, or `gen_ai.*` attributes) says what a model, an agent or a tool did, and
becomes the interactions it shows, in order: what is new in its input (the messages after the last assistant
message: user turns, tool results), then its output (reasoning, text, tool calls); a tool span gives its call and
its result. Inputs happen at the span's start, outputs at its end. The first interaction of a span is named by
the span id (`external_id`), the others `<span id>:<n>`; the first depends on its parent span's first (a declared
`causal` link: children often arrive before their parent, and the link waits), each other on the one before it.

What a span gives depends on that span alone, so an exporter's retry sends the same interactions again and they
are answered as duplicates. A message two spans both carry (an agent's input is its first model call's input too)
is stored twice and the write path's duplicate rule drops the second; links through it are bridged.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import transaction
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage

from ..conf import memory_settings
from ..errors import IdempotencyConflict, ValidationFailed
from ..models import AgentSession, InteractionKind, Project, Relation
from .changelog import changes_deferred, changes_savepoint
from .ingest import InteractionInput, interactions_accept
from .links import LinkInput
from .projects import session_create

SESSION_PREFIX = "otel:"
SOURCE = "opentelemetry"
# Spans one request may carry: twice the SDKs' default batch (OTEL_BSP_MAX_EXPORT_BATCH_SIZE = 512). Each span is
# accepted through the engine's per-interaction path (about 1-2 ms an interaction, 2-3 interactions a span), so a
# full request stays well within the exporters' default timeout of 10 s.
MAX_SPANS = 1024
META_CHARS = 200  # each metadata value (span name, model, tool name…) is cut to this many characters
TITLE_CHARS = 300
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent", "invoke_workflow"})
TOOL_OPERATION = "execute_tool"
# Span events of earlier versions of the conventions: the role of the message each carries (None: a prompt or
# completion attribute inside it).
INPUT_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool", "gen_ai.content.prompt": None}
OUTPUT_EVENTS = {"gen_ai.choice": "assistant", "gen_ai.content.completion": None}
INDEXED = re.compile(r"gen_ai\.(prompt|completion)\.(\d{1,4})\.(role|content)")
TEXT_PARTS = {"text", "input_text", "output_text"}
REASONING_PARTS = {"reasoning", "thinking"}
CALL_PARTS = {"tool_call", "function_call", "tool_use"}
RESPONSE_PARTS = {"tool_call_response", "tool_result", "function_call_output"}


# --- reading spans --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """What is read of one OTLP span: ids as lower-case hex, times in nanoseconds since the epoch."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: tuple[tuple[str, dict[str, Any]], ...] = ()
    service: str = ""


def span_count(request: ExportTraceServiceRequest) -> int:
    return sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)


def spans_read(request: ExportTraceServiceRequest) -> tuple[list[Span], int]:
    """The request's spans, and how many were left out for an invalid trace, span or parent id."""
    spans, invalid = [], 0
    for resource in request.resource_spans:
        service = _text(attributes_of(resource.resource.attributes).get("service.name"))
        for scope in resource.scope_spans:
            for message in scope.spans:
                span = _span_read(message, service)
                invalid += span is None
                if span is not None:
                    spans.append(span)
    return spans, invalid


def _span_read(message: SpanMessage, service: str) -> Span | None:
    trace_id, span_id, parent_id = message.trace_id, message.span_id, message.parent_span_id
    if len(trace_id) != 16 or not any(trace_id) or len(span_id) != 8 or not any(span_id):
        return None
    if parent_id and len(parent_id) != 8:
        return None
    events = tuple((_clean(event.name), attributes_of(event.attributes)) for event in message.events)
    return Span(trace_id=trace_id.hex(), span_id=span_id.hex(), parent_id=parent_id.hex() if any(parent_id) else "",
                name=_clean(message.name), start_ns=message.start_time_unix_nano,
                end_ns=max(message.end_time_unix_nano, message.start_time_unix_nano),
                attributes=attributes_of(message.attributes), events=events, service=service)


def attributes_of(pairs: Iterable[KeyValue]) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> Any:
    """An AnyValue as plain Python (arrays as lists, key-value lists as dicts, bytes as hex)."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind) if kind else None


# --- messages -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    type: str  # "text", "reasoning", "call" (a tool call) or "response" (a tool's result)
    text: str = ""  # the text, the call as `name(arguments)` or the result
    call_id: str = ""  # a call's or a result's tool call id


@dataclass(frozen=True)
class Message:
    role: str
    parts: tuple[Part, ...]


def messages_of(value: Any, role: str) -> list[Message]:
    """Messages in any of the shapes the conventions used: `{"role", "parts": [...]}` (gen_ai.input.messages),
    `{"role", "content", "tool_calls"}` (gen_ai.prompt, events), a list of them, JSON text of either, or plain text
    (`role` then is the speaker)."""
    value = _json_or_text(value)
    if value is None or value == "":
        return []
    if isinstance(value, dict):
        value = value["messages"] if isinstance(value.get("messages"), list) else [value]
    if not isinstance(value, list):
        return [Message(role, (Part("text", _text(value)),))]
    return [message for item in value for message in [_message(item, role)] if message is not None]


def _message(item: Any, role: str) -> Message | None:
    if isinstance(item, str):
        return Message(role, (Part("text", item),))
    if not isinstance(item, dict):
        return None
    nested = _json_or_text(item.get("message"))  # a gen_ai.choice event's body (an attribute holds it as JSON)
    if isinstance(nested, dict):
        return _message(nested, role)
    role = _text(item.get("role")) or role
    call_id = _text(item.get("tool_call_id") or item.get("id")) if role == "tool" else ""
    parts: list[Part] = []
    if isinstance(item.get("parts"), list):
        parts += [part for raw in item["parts"] for part in [_part(raw)] if part is not None]
    content = item.get("content")
    if isinstance(content, list):
        parts += [part for raw in content for part in [_part(raw)] if part is not None]
    elif content not in (None, ""):
        parts.append(Part("response", _text(content), call_id) if role == "tool" else Part("text", _text(content)))
    calls = _json_or_text(item.get("tool_calls"))
    if isinstance(calls, list):
        parts += [_call(raw) for raw in calls if isinstance(raw, dict)]
    return Message(role, tuple(parts))


def _part(raw: Any) -> Part | None:
    if isinstance(raw, str):
        return Part("text", raw)
    if not isinstance(raw, dict):
        return None
    kind = _text(raw.get("type")) or "text"
    if kind in CALL_PARTS:
        return _call(raw)
    if kind in RESPONSE_PARTS:
        return Part("response", _text(_first(raw, "response", "result", "output", "content")),
                    _text(_first(raw, "id", "tool_call_id", "tool_use_id", "call_id")))
    if kind in REASONING_PARTS:
        return Part("reasoning", _text(_first(raw, "content", "text", "thinking")))
    if kind in TEXT_PARTS:
        return Part("text", _text(_first(raw, "content", "text")))
    return None  # images, audio, files: nothing to remember as text


def _call(raw: dict) -> Part:
    """A tool call as `name(arguments)`, the form the call's own span (execute_tool) gives it too."""
    function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    return Part("call", call_text(function.get("name"), _first(function, "arguments", "input", "args")),
                _text(_first(raw, "id", "call_id", "tool_call_id")))


def call_text(name: Any, arguments: Any) -> str:
    """`name(arguments)`, the arguments as JSON with sorted keys when they are JSON, so the model's call and the
    tool's span of the same call read alike."""
    name, arguments = _text(name), _text(_json_or_text(arguments))
    return f"{name or 'tool'}({arguments})" if name or arguments else ""


def _first(raw: dict, *keys: str) -> Any:
    return next((raw[key] for key in keys if raw.get(key) not in (None, "")), None)


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _text(value: Any) -> str:
    """Text as given; anything else as JSON with sorted keys, so the same value always reads the same."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "), default=str)
    except (ValueError, RecursionError):
        return str(value)


def input_messages(span: Span) -> list[Message]:
    return _messages_from(span, ("gen_ai.input.messages", "gen_ai.prompt"), "prompt", INPUT_EVENTS, "user")


def output_messages(span: Span) -> list[Message]:
    return _messages_from(span, ("gen_ai.output.messages", "gen_ai.completion"), "completion", OUTPUT_EVENTS,
                          "assistant")


def _messages_from(span: Span, keys: tuple[str, ...], indexed: str, events: dict[str, str | None],
                   role: str) -> list[Message]:
    """From the first place that has them: the attributes (current, then older names), the indexed attributes
    some instrumentations write (`gen_ai.prompt.0.content`), the span events of earlier conventions."""
    for key in keys:
        if span.attributes.get(key) not in (None, ""):
            return messages_of(span.attributes[key], role)
    numbered = _indexed_messages(span.attributes, indexed, role)
    if numbered:
        return numbered
    found: list[Message] = []
    for name, attributes in span.events:
        if name not in events:
            continue
        event_role = events[name]
        if event_role is None:
            found += messages_of(attributes.get(f"gen_ai.{indexed}"), role)
        else:
            body = _json_or_text(attributes.get("gen_ai.event.content"))
            found += messages_of(body if isinstance(body, (dict, list)) else attributes, event_role)
    return found


def _indexed_messages(attributes: dict[str, Any], prefix: str, role: str) -> list[Message]:
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = INDEXED.fullmatch(key)
        if match and match.group(1) == prefix:
            rows.setdefault(int(match.group(2)), {})[match.group(3)] = value
    return [message for index in sorted(rows) for message in messages_of([rows[index]], role)]


# --- what a span gives ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft:
    kind: str
    content: str
    at_ns: int
    call_id: str = ""  # the tool call a call or a result is of


def operation_of(span: Span) -> str | None:
    """The span's GenAI operation, or None for a span of something else (an HTTP call, a database query)."""
    attributes = span.attributes
    named = attributes.get("gen_ai.operation.name")
    if isinstance(named, str) and named.strip():
        return named.strip()
    if not any(key.startswith("gen_ai.") for key in attributes) and not any(
            name.startswith("gen_ai.") for name, _ in span.events):
        return None
    if attributes.get("gen_ai.tool.name"):
        return TOOL_OPERATION
    if attributes.get("gen_ai.agent.name") and not attributes.get("gen_ai.request.model"):
        return "invoke_agent"
    return "chat"


def span_drafts(span: Span, operation: str) -> tuple[list[Draft], int]:
    """The interactions a GenAI span shows, in order, and how many of its messages were empty."""
    if operation == TOOL_OPERATION:
        attributes = span.attributes
        call_id = _text(attributes.get("gen_ai.tool.call.id"))
        drafts = [Draft(InteractionKind.TOOL_CALL, call_text(attributes.get("gen_ai.tool.name"),
                                                              attributes.get("gen_ai.tool.call.arguments")),
                        span.start_ns, call_id),
                  Draft(InteractionKind.TOOL_RESULT, _text(attributes.get("gen_ai.tool.call.result")), span.end_ns,
                        call_id)]
    else:
        answer = InteractionKind.AGENT_THOUGHT if operation in AGENT_OPERATIONS else InteractionKind.ASSISTANT_OUTPUT
        drafts = [*_input_drafts(input_messages(span), span.start_ns),
                  *[d for message in output_messages(span) for d in _output_drafts(message, answer, span.end_ns)]]
    kept = [d for d in drafts if d.content.strip()]
    return kept, len(drafts) - len(kept)


def _input_drafts(messages: list[Message], at_ns: int) -> list[Draft]:
    """What is new in a model call's input: the user turns and tool results after the last assistant message
    (what came before was the input of an earlier call, or its output)."""
    last = max((i for i, m in enumerate(messages) if m.role in ("assistant", "model")), default=-1)
    drafts = []
    for message in messages[last + 1:]:
        if message.role == "tool":
            call_id = next((p.call_id for p in message.parts if p.call_id), "")
            drafts.append(Draft(InteractionKind.TOOL_RESULT, _joined(message, {"text", "response"}), at_ns, call_id))
        elif message.role == "user":  # a user turn; tool results sent as the user's content blocks apart
            if any(p.type == "text" for p in message.parts) or not message.parts:
                drafts.append(Draft(InteractionKind.USER_INPUT, _joined(message, {"text"}), at_ns))
            drafts += [Draft(InteractionKind.TOOL_RESULT, p.text, at_ns, p.call_id) for p in message.parts
                       if p.type == "response"]
    return drafts


def _output_drafts(message: Message, answer: str, at_ns: int) -> list[Draft]:
    drafts = []
    if any(p.type == "reasoning" for p in message.parts):
        drafts.append(Draft(InteractionKind.AGENT_THOUGHT, _joined(message, {"reasoning"}), at_ns))
    if any(p.type == "text" for p in message.parts) or not message.parts:
        drafts.append(Draft(answer, _joined(message, {"text"}), at_ns))
    drafts += [Draft(InteractionKind.TOOL_CALL, p.text, at_ns, p.call_id) for p in message.parts if p.type == "call"]
    return drafts


def _joined(message: Message, types: set[str]) -> str:
    return "\n".join(p.text for p in message.parts if p.type in types and p.text.strip())


# --- a request's plan -----------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What became of a request's spans, for the OTLP answer (partial success) and the logs."""

    spans: int = 0
    rejected: Counter = field(default_factory=Counter)  # reason -> spans: not_genai, no_content, invalid, conflict
    empty_messages: int = 0
    truncated: int = 0
    created: int = 0
    duplicates: int = 0
    session_ids: list[int] = field(default_factory=list)

    @property
    def rejected_spans(self) -> int:
        return sum(self.rejected.values())

    def message(self) -> str:
        """Why spans were left out (and what was cut), for OTLP's partial_success.error_message."""
        parts = [text.format(n=count) for reason, text in REJECTIONS.items() if (count := self.rejected[reason])]
        if self.empty_messages:
            parts.append(f"skipped {self.empty_messages} empty messages")
        if self.truncated:
            parts.append(f"cut {self.truncated} messages to the limit of {memory_settings.MAX_CONTENT_BYTES} bytes")
        return "; ".join(parts)


REJECTIONS = {
    "not_genai": "ignored {n} spans that are not GenAI spans",
    "no_content": "ignored {n} GenAI spans without message content",
    "invalid": "ignored {n} spans with an invalid trace, span or parent id",
    "conflict": "ignored {n} spans whose id was used before for different content",
    "repeated": "ignored {n} spans repeated in the request",
}


@dataclass(frozen=True)
class TracePlan:
    trace_id: str
    title: str
    service: str
    items: tuple[InteractionInput, ...]


def traces_plan(spans: list[Span], tally: Tally) -> list[TracePlan]:
    """The interactions of the request's GenAI spans, per trace in order of time, with their links."""
    unique: dict[tuple[str, str], Span] = {}
    for span in spans:  # a span sent twice in one request counts once, as first sent
        unique.setdefault((span.trace_id, span.span_id), span)
    tally.rejected["repeated"] += len(spans) - len(unique)
    operations, drafts = {}, {}
    for key, span in unique.items():
        operations[key] = operation_of(span)
        if operations[key] is None:
            tally.rejected["not_genai"] += 1
            continue
        drafts[key], empty = span_drafts(span, operations[key])
        tally.empty_messages += empty
        tally.rejected["no_content"] += not drafts[key]
    by_trace: dict[str, list[Span]] = {}
    for span in unique.values():
        by_trace.setdefault(span.trace_id, []).append(span)
    plans = []
    for trace_id, members in by_trace.items():
        giving = [span for span in members if drafts.get((trace_id, span.span_id))]
        if giving:
            items = _trace_items(members, giving, drafts, operations, tally)
            plans.append(TracePlan(trace_id, _title(giving), members[0].service, tuple(items)))
    return plans


def _trace_items(members: list[Span], giving: list[Span], drafts: dict, operations: dict,
                 tally: Tally) -> list[InteractionInput]:
    by_id = {span.span_id: span for span in members}
    gives = {span.span_id for span in giving}
    first_of_call = _first_of_calls(giving, drafts)
    rows: list[tuple[int, str, int, InteractionInput]] = []
    for span in giving:
        previous = _parent_ref(span, by_id, gives)
        metadata = _metadata(span, operations[(span.trace_id, span.span_id)])
        for index, draft in enumerate(drafts[(span.trace_id, span.span_id)]):
            external_id = _external_id(span, index)
            refs = [previous] if previous else []
            earlier = first_of_call.get((draft.kind, draft.call_id)) if draft.call_id else None
            if earlier is not None and earlier[1] != span.span_id:
                refs.append(earlier[3])  # the same call (or result) as another span shows it first
            content, cut_from = _storable(draft.content)
            tally.truncated += cut_from is not None
            item = InteractionInput(
                kind=draft.kind, content=content, occurred_at=_time(draft.at_ns), external_id=external_id,
                links=tuple(LinkInput(by="external_id", ref=ref, relation=Relation.CAUSAL) for ref in refs),
                metadata={**metadata, **({"cut_from_bytes": cut_from} if cut_from else {})})
            rows.append((draft.at_ns, span.span_id, index, item))
            previous = external_id
    return [row[3] for row in sorted(rows, key=lambda row: row[:3])]


def _external_id(span: Span, index: int) -> str:
    return span.span_id if index == 0 else f"{span.span_id}:{index}"


def _first_of_calls(giving: list[Span], drafts: dict) -> dict[tuple[str, str], tuple[int, str, int, str]]:
    """Per (kind, tool call id): where the request shows it first. A model's call is shown again by the tool's
    span, the tool's result again in the next model call's input; the later one then depends on the first."""
    first: dict[tuple[str, str], tuple[int, str, int, str]] = {}
    for span in giving:
        for index, draft in enumerate(drafts[(span.trace_id, span.span_id)]):
            if draft.call_id:
                here = (draft.at_ns, span.span_id, index, _external_id(span, index))
                key = (draft.kind, draft.call_id)
                first[key] = min(first.get(key, here), here)
    return first


def _parent_ref(span: Span, by_id: dict[str, Span], gives: set[str]) -> str:
    """The span id the span's first interaction depends on: its nearest ancestor in the request that gives
    interactions; past the request's spans, the first ancestor not in it (it may come later). "" for a root."""
    seen, parent_id = {span.span_id}, span.parent_id
    while parent_id and parent_id not in seen:
        if parent_id in gives or parent_id not in by_id:
            return parent_id
        seen.add(parent_id)
        parent_id = by_id[parent_id].parent_id
    return ""


def _metadata(span: Span, operation: str) -> dict[str, str]:
    """What the span says of itself, bounded (never its raw attributes: they repeat the content, and more)."""
    attributes = span.attributes
    values = {"source": SOURCE, "span_name": span.name, "operation": operation,
              "model": attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model"),
              "provider": attributes.get("gen_ai.provider.name") or attributes.get("gen_ai.system"),
              "agent_name": attributes.get("gen_ai.agent.name"), "tool_name": attributes.get("gen_ai.tool.name"),
              "tool_call_id": attributes.get("gen_ai.tool.call.id"), "trace_id": span.trace_id,
              "span_id": span.span_id}
    return {key: _clean(_text(value))[:META_CHARS] for key, value in values.items()
            if value not in (None, "") and not isinstance(value, (dict, list))}


def _title(spans: list[Span]) -> str:
    """The agent's name if a span gives it, else the first span's name."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.span_id))
    agent = next((s.attributes["gen_ai.agent.name"] for s in ordered
                  if isinstance(s.attributes.get("gen_ai.agent.name"), str) and s.attributes["gen_ai.agent.name"]),
                 None)
    return _clean(agent or ordered[0].name or "OpenTelemetry trace")[:TITLE_CHARS]


def _time(ns: int) -> datetime:
    return datetime.fromtimestamp(ns // 1_000_000_000, UTC) + timedelta(microseconds=ns % 1_000_000_000 // 1000)


def _clean(text: str) -> str:
    """Text PostgreSQL can store: no NUL, no lone surrogate (JSON inside an attribute may carry both)."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _storable(text: str) -> tuple[str, int | None]:
    """The text cleaned and within MAX_CONTENT_BYTES (cut at a character boundary), and its size if it was cut."""
    text = _clean(text)
    data = text.encode("utf-8")
    limit = memory_settings.MAX_CONTENT_BYTES
    if len(data) <= limit:
        return text, None
    return data[:limit].decode("utf-8", "ignore"), len(data)


# --- accepting ------------------------------------------------------------------------------------------------


def traces_accept(*, project: Project, request: ExportTraceServiceRequest, actor: str,
                  may_see_sensitive: bool) -> Tally:
    """Accept the GenAI spans of an OTLP request, all or nothing, and say what became of every span.

    Each trace's session (`otel:<trace id>`) is started on its first spans. A span whose id was used before
    for other content is left out (counted), not the whole request: an exporter's retry must not fail for it."""
    spans, invalid = spans_read(request)
    tally = Tally(spans=span_count(request))
    tally.rejected["invalid"] += invalid
    plans = traces_plan(spans, tally)
    with transaction.atomic(), changes_deferred():
        for plan in plans:
            session = trace_session(project, plan, actor)
            tally.session_ids.append(session.pk)
            for start in range(0, len(plan.items), memory_settings.MAX_BATCH):
                _accept_chunk(session, list(plan.items[start:start + memory_settings.MAX_BATCH]), actor,
                              may_see_sensitive, tally)
    return tally


def trace_session(project: Project, plan: TracePlan, actor: str) -> AgentSession:
    external_id = f"{SESSION_PREFIX}{plan.trace_id}"
    session = AgentSession.objects.filter(project=project, external_id=external_id).first()
    if session is not None:
        return session
    metadata = {"source": SOURCE, "trace_id": plan.trace_id, **({"service": plan.service[:META_CHARS]}
                                                                  if plan.service else {})}
    try:
        with transaction.atomic():
            return session_create(project=project, external_id=external_id, title=plan.title,
                                  metadata={k: _clean(v) for k, v in metadata.items()}, actor=actor)
    except ValidationFailed:  # another request started it meanwhile
        return AgentSession.objects.get(project=project, external_id=external_id)


def _accept_chunk(session: AgentSession, items: list[InteractionInput], actor: str, may_see_sensitive: bool,
                  tally: Tally) -> None:
    try:
        with changes_savepoint():
            accepted = interactions_accept(session=session, items=items, actor=actor,
                                           may_see_sensitive=may_see_sensitive)
    except IdempotencyConflict:  # one by one, leaving out the spans that conflict
        accepted, conflicting = [], set()
        for item in items:
            try:
                with changes_savepoint():
                    accepted += interactions_accept(session=session, items=[item], actor=actor,
                                                    may_see_sensitive=may_see_sensitive)
            except IdempotencyConflict:
                conflicting.add(item.metadata["span_id"])
        tally.rejected["conflict"] += len(conflicting)
    tally.created += sum(entry.created for entry in accepted)
    tally.duplicates += sum(not entry.created for entry in accepted)
