"""OTLP/HTTP traces in (memory/api/otlp.py, memory/engine/traces.py).

An agent's real OpenTelemetry SDK and its OTLP/HTTP exporter send GenAI spans to a live server: each trace becomes
a session, each span its interactions, and the links the spans declare become edges of origin `agent` once the
interactions are processed (here in the test's process: the live server queues them and runs no worker).
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer
from rest_framework.test import APIClient

from bench.otlp_ingest import hex_ids
from memory.engine.pipeline import interaction_process_safely
from memory.engine.projects import project_create, token_issue
from memory.engine.traces import MAX_SPANS, Span, Tally, operation_of, span_drafts, traces_plan
from memory.models import (
    AgentSession,
    Edge,
    EdgeOrigin,
    GraphChange,
    Interaction,
    InteractionLink,
    InteractionStatus,
    Membership,
    Memory,
    Role,
)

REQUEST = "Find me a flight from Shanghai to San Francisco on 14 March, a window seat, under 900 USD"
PLAN = "Searching the flights from Pudong to San Francisco on 2026-03-14 and comparing their fares first"
ARGUMENTS = {"to": "SFO", "from": "PVG", "date": "2026-03-14"}
CALL = 'search_flights({"date": "2026-03-14", "from": "PVG", "to": "SFO"})'
RESULT = "UA858 departs PVG at 15:00 and arrives SFO 10:40 the same day, 812 USD, window seats still free"
ANSWER = "Booked UA858 on 14 March, PVG 15:00 to SFO 10:40, window seat 32A, 812 USD in total"
PAGE = Path(settings.BASE_DIR) / "docs" / "integrations.md"


def text(role: str, content: str, **extra) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": content}], **extra}


def agent_run(tracer: Tracer) -> None:
    """An agent (invoke_agent) with a model call (chat) that asks for a tool, and the tool's run (execute_tool)."""
    with tracer.start_as_current_span("invoke_agent travel-planner") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "travel-planner",
                              "gen_ai.input.messages": json.dumps([text("user", REQUEST)])})
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            call = {"type": "tool_call", "id": "call_1", "name": "search_flights", "arguments": ARGUMENTS}
            chat.set_attributes({
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
                "gen_ai.input.messages": json.dumps([text("system", "You book flights."), text("user", REQUEST)]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "finish_reason": "tool_call",
                                                       "parts": [{"type": "text", "content": PLAN}, call]}])})
        with tracer.start_as_current_span("execute_tool search_flights") as tool:
            tool.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_flights",
                                 "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": json.dumps(ARGUMENTS),
                                 "gen_ai.tool.call.result": RESULT})
        agent.set_attribute("gen_ai.output.messages", json.dumps([text("assistant", ANSWER)]))


def recorded(run: Callable[[Tracer], None] = agent_run) -> list[ReadableSpan]:
    """The spans a run makes, finished, as the SDK hands them to its exporters."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    run(provider.get_tracer("tests.otlp"))
    provider.shutdown()
    return list(memory.get_finished_spans())


def hex_id(span: ReadableSpan, which: str = "span") -> str:
    context = span.get_span_context()
    return format(context.trace_id, "032x") if which == "trace" else format(context.span_id, "016x")


def named(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    return next(span for span in spans if span.name == name)


@pytest.fixture
def otlp(live_server_url):
    project = project_create(name="Traces", slug="traces")
    other = project_create(name="Elsewhere", slug="elsewhere")
    path = f"/api/projects/{project.slug}/otlp/v1/traces"
    return SimpleNamespace(project=project, token=token_issue(project=project)[1], path=path,
                           url=live_server_url + path, other_token=token_issue(project=other)[1], base=live_server_url)


def export(target, spans: list[ReadableSpan], **options) -> SpanExportResult:
    exporter = OTLPSpanExporter(endpoint=target.url, headers={"Authorization": f"Bearer {target.token}"},
                                timeout=30, **options)
    try:
        return exporter.export(spans)
    finally:
        exporter.shutdown()


def post(target, body: bytes, *, content_type: str = "application/x-protobuf", token: str | None = None,
         **headers: str) -> tuple[int, str, bytes]:
    """A raw POST to the live server: (status, Content-Type, body)."""
    parts = urlsplit(target.base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    sent = {"Content-Type": content_type, **headers}
    if token != "":
        sent["Authorization"] = f"Bearer {token or target.token}"
    connection.request("POST", target.path, body=body, headers=sent)
    response = connection.getresponse()
    return response.status, response.getheader("Content-Type", ""), response.read()


def otlp_json(spans: list[ReadableSpan]) -> dict:
    """The spans as OTLP/JSON: protobuf's JSON with the ids in hex (the one place OTLP/JSON differs)."""
    return hex_ids(json_format.MessageToDict(encode_spans(spans)))


def process(session: AgentSession) -> None:
    for pk in (Interaction.objects.filter(session=session, status=InteractionStatus.PENDING).order_by("pk")
               .values_list("pk", flat=True)):
        interaction_process_safely(interaction_id=pk)


def trace_session(spans: list[ReadableSpan]) -> AgentSession:
    return AgentSession.objects.get(external_id=f"otel:{hex_id(spans[0], 'trace')}")


def stored(session: AgentSession) -> set[tuple[str, str]]:
    return set(session.interactions.values_list("kind", "external_id"))


def memory_of(session: AgentSession, external_id: str) -> int:
    return Memory.objects.get(sources__session=session, sources__external_id=external_id).pk


def agent_edges(session: AgentSession) -> set[tuple[int, int]]:
    return set(Edge.objects.filter(session=session, origin=EdgeOrigin.AGENT).values_list("source_id", "target_id"))


def nothing_stored() -> bool:
    return not AgentSession.objects.filter(external_id__startswith="otel:").exists() and \
        not Interaction.objects.exists()


# --- the real exporter, protobuf ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_agent_run_becomes_one_session_whose_declared_links_become_agent_edges(otlp):
    spans = recorded()
    assert export(otlp, spans) == SpanExportResult.SUCCESS
    session = trace_session(spans)
    assert AgentSession.objects.filter(external_id__startswith="otel:").count() == 1
    assert session.project == otlp.project and session.title == "travel-planner"
    assert session.metadata == {"source": "opentelemetry", "trace_id": hex_id(spans[0], "trace"),
                                "service": "travel-desk"}
    agent, chat, tool = (hex_id(named(spans, name)) for name in
                         ("invoke_agent travel-planner", "chat gpt-4o", "execute_tool search_flights"))
    assert stored(session) == {("user_input", agent), ("agent_thought", f"{agent}:1"), ("user_input", chat),
                               ("assistant_output", f"{chat}:1"), ("tool_call", f"{chat}:2"), ("tool_call", tool),
                               ("tool_result", f"{tool}:1")}
    call = session.interactions.get(external_id=tool)
    assert call.content == CALL and call.metadata == {
        "source": "opentelemetry", "span_name": "execute_tool search_flights", "operation": "execute_tool",
        "tool_name": "search_flights", "tool_call_id": "call_1", "trace_id": hex_id(spans[0], "trace"),
        "span_id": tool}
    assert session.interactions.get(external_id=f"{chat}:1").metadata["model"] == "gpt-4o"
    started = session.interactions.get(external_id=agent).occurred_at
    assert started.timestamp() == pytest.approx(named(spans, "invoke_agent travel-planner").start_time / 1e9, abs=1e-5)

    process(session)
    assert not InteractionLink.objects.filter(session=session).exclude(status="resolved").exists()
    memories = {external_id: memory_of(session, external_id) for external_id in
                (agent, f"{agent}:1", f"{chat}:1", f"{chat}:2", f"{tool}:1")}
    # The chat's copy of the user's request and the tool span's copy of the call are dropped as duplicates of
    # the agent's request and the model's call; what depended on them is linked across (bridged).
    assert session.interactions.get(external_id=chat).status == InteractionStatus.FILTERED
    assert session.interactions.get(external_id=tool).status == InteractionStatus.FILTERED
    edges = agent_edges(session)
    assert {(memories[agent], memories[f"{agent}:1"]), (memories[agent], memories[f"{chat}:1"]),
            (memories[f"{chat}:1"], memories[f"{chat}:2"]), (memories[f"{chat}:2"], memories[f"{tool}:1"])} <= edges


@pytest.mark.django_db(transaction=True)
def test_children_sent_before_their_parent_wait_for_it(otlp):
    spans = recorded()
    agent = named(spans, "invoke_agent travel-planner")
    children = [span for span in spans if span is not agent]
    assert export(otlp, children) == SpanExportResult.SUCCESS
    session = trace_session(spans)
    waiting = InteractionLink.objects.filter(session=session, ref=hex_id(agent)).exclude(
        child__external_id__startswith=hex_id(agent))  # the chat's and the tool's first interactions
    assert waiting.count() == 2 and not waiting.filter(parent__isnull=False).exists()
    assert export(otlp, [agent]) == SpanExportResult.SUCCESS
    assert waiting.filter(parent__isnull=False).count() == 2
    process(session)
    request = memory_of(session, hex_id(agent))
    assert (request, memory_of(session, f"{hex_id(named(spans, 'chat gpt-4o'))}:1")) in agent_edges(session)


@pytest.mark.django_db(transaction=True)
def test_gzip_bodies_are_read_when_the_header_says_so(otlp):
    spans = recorded()
    assert export(otlp, spans, compression=Compression.Gzip) == SpanExportResult.SUCCESS
    assert len(stored(trace_session(spans))) == 7
    other = recorded()
    body = gzip.compress(encode_spans(other).SerializeToString())
    assert post(otlp, body)[0] == 400  # gzip bytes without Content-Encoding are not protobuf
    assert not AgentSession.objects.filter(external_id=f"otel:{hex_id(other[0], 'trace')}").exists()
    assert post(otlp, body, **{"Content-Encoding": "gzip"})[0] == 200
    assert len(stored(trace_session(other))) == 7


@pytest.mark.django_db(transaction=True)
def test_a_resent_batch_stores_nothing_new(otlp):
    spans = recorded()
    assert export(otlp, spans) == SpanExportResult.SUCCESS
    counts = Interaction.objects.count(), GraphChange.objects.count(), InteractionLink.objects.count()
    assert export(otlp, spans) == SpanExportResult.SUCCESS  # an exporter's retry
    status, content_type, body = post(otlp, encode_spans(spans).SerializeToString())
    assert (status, content_type) == (200, "application/x-protobuf")
    assert ExportTraceServiceResponse.FromString(body) == ExportTraceServiceResponse()
    assert (Interaction.objects.count(), GraphChange.objects.count(), InteractionLink.objects.count()) == counts
    assert counts[0] == 7


# --- answers --------------------------------------------------------------------------------------------------


def with_plain_spans(tracer: Tracer) -> None:
    """An agent whose model call runs inside an HTTP client span, beside a database span: two non-GenAI spans."""
    with tracer.start_as_current_span("invoke_agent travel-planner") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "travel-planner",
                              "gen_ai.input.messages": json.dumps([text("user", REQUEST)])})
        with tracer.start_as_current_span("POST api.openai.com", attributes={"http.request.method": "POST"}):
            with tracer.start_as_current_span("chat gpt-4o") as chat:
                chat.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                     "gen_ai.output.messages": json.dumps([text("assistant", PLAN)])})
        with tracer.start_as_current_span("SELECT fares", attributes={"db.system.name": "postgresql"}):
            pass


@pytest.mark.django_db(transaction=True)
def test_non_genai_spans_are_ignored_and_counted_and_links_skip_over_them(otlp):
    spans = recorded(with_plain_spans)
    status, content_type, body = post(otlp, encode_spans(spans).SerializeToString())
    assert (status, content_type) == (200, "application/x-protobuf")
    answer = ExportTraceServiceResponse.FromString(body).partial_success
    assert answer.rejected_spans == 2 and answer.error_message == "ignored 2 spans that are not GenAI spans"
    session = trace_session(spans)
    chat, agent = hex_id(named(spans, "chat gpt-4o")), hex_id(named(spans, "invoke_agent travel-planner"))
    assert stored(session) == {("user_input", agent), ("assistant_output", chat)}
    link = InteractionLink.objects.get(child__external_id=chat)
    assert (link.ref, link.parent.external_id) == (agent, agent)  # the nearest GenAI ancestor, past the HTTP span


@pytest.mark.django_db(transaction=True)
def test_json_is_read_and_answered_in_json(otlp):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {otlp.token}")
    spans = recorded(with_plain_spans)
    body = otlp_json(spans)
    assert re.fullmatch(r"[0-9a-f]{32}", body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"])
    response = client.post(otlp.path, json.dumps(body), content_type="application/json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json() == {"partialSuccess": {"rejectedSpans": "2",
                                                  "errorMessage": "ignored 2 spans that are not GenAI spans"}}
    assert stored(trace_session(spans)) == {("user_input", hex_id(named(spans, "invoke_agent travel-planner"))),
                                            ("assistant_output", hex_id(named(spans, "chat gpt-4o")))}
    clean = otlp_json(recorded())
    response = client.post(otlp.path, json.dumps(clean), content_type="application/json; charset=utf-8")
    assert (response.status_code, response.content) == (200, b"{}")


@pytest.mark.django_db(transaction=True)
def test_malformed_bodies_are_400_with_a_status_in_their_encoding_and_store_nothing(otlp):
    good = otlp_json(recorded())
    bad_id = json.loads(json.dumps(good))
    bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][-1]["spanId"] = "not-hex!"
    wrong_type = json.loads(json.dumps(good))
    wrong_type["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = {"at": "noon"}
    protobuf = encode_spans(recorded()).SerializeToString()
    cases = [
        (b"\x0a\xff\xff\xff", "application/x-protobuf", {}),  # a length running past the end
        (protobuf[:-3], "application/x-protobuf", {}),  # cut short
        (gzip.compress(protobuf)[:-8], "application/x-protobuf", {"Content-Encoding": "gzip"}),
        (b'{"resourceSpans": [', "application/json", {}),
        (b"[1, 2]", "application/json", {}),
        (json.dumps(bad_id).encode(), "application/json", {}),
        (json.dumps(wrong_type).encode(), "application/json", {}),
    ]
    for body, content_type, headers in cases:
        status, answered_type, answer = post(otlp, body, content_type=content_type, **headers)
        assert (status, answered_type) == (400, content_type), (body[:60], answer)
        refusal = (status_pb2.Status.FromString(answer) if content_type == "application/x-protobuf"
                   else json_format.Parse(answer, status_pb2.Status()))
        assert refusal.code == 3 and refusal.message, answer
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_other_media_types_and_encodings_are_415(otlp):
    protobuf = encode_spans(recorded()).SerializeToString()
    assert post(otlp, protobuf, content_type="text/plain")[0] == 415
    assert post(otlp, protobuf, **{"Content-Encoding": "br"})[0] == 415
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_who_may_send(otlp, django_user_model):
    protobuf = encode_spans(recorded()).SerializeToString()
    assert post(otlp, protobuf, token="")[0] == 401
    assert post(otlp, protobuf, token="cw_not-a-token")[0] == 401
    assert post(otlp, protobuf, token=otlp.other_token)[0] == 404
    exporter = OTLPSpanExporter(endpoint=otlp.url, headers={"Authorization": f"Bearer {otlp.other_token}"})
    assert exporter.export(recorded()) == SpanExportResult.FAILURE
    assert nothing_stored()
    people = {}
    for role in (Role.VIEWER, Role.CURATOR):
        user = django_user_model.objects.create_user(f"otlp-{role}", password="a-long-password-1")
        Membership.objects.create(project=otlp.project, user=user, role=role)
        people[role] = APIClient()
        people[role].force_login(user)
    body = json.dumps(otlp_json(recorded()))
    assert people[Role.VIEWER].post(otlp.path, body, content_type="application/json").status_code == 403
    assert nothing_stored()
    assert people[Role.CURATOR].post(otlp.path, body, content_type="application/json").status_code == 200
    assert Interaction.objects.count() == 7


@pytest.mark.django_db(transaction=True)
def test_over_the_span_limit_is_413(otlp):
    export_request = encode_spans(recorded())
    spans = export_request.resource_spans[0].scope_spans[0].spans
    template = spans[0]
    for number in range(MAX_SPANS):
        copy = spans.add()
        copy.CopyFrom(template)
        copy.span_id = (number + 1).to_bytes(8, "big")
    status, content_type, body = post(otlp, export_request.SerializeToString())
    assert (status, content_type) == (413, "application/x-protobuf")
    assert str(MAX_SPANS) in status_pb2.Status.FromString(body).message
    assert nothing_stored()


def empty_output(tracer: Tracer) -> None:
    with tracer.start_as_current_span("chat gpt-4o") as chat:
        chat.set_attributes({"gen_ai.operation.name": "chat",
                             "gen_ai.input.messages": json.dumps([text("user", REQUEST)]),
                             "gen_ai.output.messages": json.dumps([text("assistant", "   ")])})
    with tracer.start_as_current_span("embeddings text-embedding-3-small") as embed:
        embed.set_attribute("gen_ai.operation.name", "embeddings")


@pytest.mark.django_db(transaction=True)
def test_empty_messages_are_skipped_and_a_span_without_any_is_counted(otlp):
    spans = recorded(empty_output)
    status, _, body = post(otlp, encode_spans(spans).SerializeToString())
    answer = ExportTraceServiceResponse.FromString(body).partial_success
    assert status == 200 and answer.rejected_spans == 1
    assert answer.error_message == "ignored 1 GenAI spans without message content; skipped 1 empty messages"
    assert stored(trace_session(spans)) == {("user_input", hex_id(named(spans, "chat gpt-4o")))}


# --- the conventions' older shapes, span by span (no HTTP) ----------------------------------------------------


def span(attributes: dict, events: tuple = ()) -> Span:
    return Span(trace_id="1" * 32, span_id="2" * 16, parent_id="", name="chat", start_ns=10, end_ns=20,
                attributes=attributes, events=events)


@pytest.mark.parametrize(("attributes", "events", "expected"), [
    ({"gen_ai.system": "openai", "gen_ai.prompt": json.dumps([{"role": "user", "content": REQUEST}]),
      "gen_ai.completion": json.dumps([{"role": "assistant", "content": PLAN}])}, (),
     [("user_input", REQUEST, 10), ("assistant_output", PLAN, 20)]),
    ({"gen_ai.operation.name": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": REQUEST,
      "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": PLAN}, (),
     [("user_input", REQUEST, 10), ("assistant_output", PLAN, 20)]),
    ({"gen_ai.operation.name": "chat"},
     (("gen_ai.system.message", {"content": "You book flights."}), ("gen_ai.user.message", {"content": REQUEST}),
      ("gen_ai.assistant.message", {"tool_calls": json.dumps([{"id": "c1", "function": {
          "name": "search_flights", "arguments": json.dumps(ARGUMENTS)}}])}),
      ("gen_ai.tool.message", {"content": RESULT, "id": "c1"}),
      ("gen_ai.choice", {"message": json.dumps({"role": "assistant", "content": ANSWER}), "index": 0})),
     [("tool_result", RESULT, 10), ("assistant_output", ANSWER, 20)]),
    ({"gen_ai.operation.name": "invoke_agent", "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
        {"type": "reasoning", "content": PLAN}, {"type": "text", "content": ANSWER}]}])}, (),
     [("agent_thought", PLAN, 20), ("agent_thought", ANSWER, 20)]),
    ({"gen_ai.tool.name": "search_flights", "gen_ai.tool.call.arguments": ARGUMENTS.__repr__(),
      "gen_ai.tool.call.result": RESULT}, (),
     [("tool_call", f"search_flights({ARGUMENTS!r})", 10), ("tool_result", RESULT, 20)]),
])
def test_the_shapes_of_each_version_of_the_conventions(attributes, events, expected):
    found = span(attributes, events)
    drafts, empty = span_drafts(found, operation_of(found))
    assert [(d.kind, d.content, d.at_ns) for d in drafts] == expected and empty == 0


def test_a_span_repeated_in_one_request_counts_once():
    chat = span({"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps([text("assistant", PLAN)])})
    tally = Tally()
    (plan,) = traces_plan([chat, chat], tally)
    assert [item.external_id for item in plan.items] == ["2" * 16]
    assert tally.message() == "ignored 1 spans repeated in the request"


def test_a_span_without_gen_ai_attributes_is_not_genai():
    assert operation_of(span({"http.request.method": "GET"})) is None
    assert operation_of(span({"gen_ai.tool.name": "search"})) == "execute_tool"


# --- docs/integrations.md -------------------------------------------------------------------------------------


def doc_example() -> str:
    section = PAGE.read_text().split("\n## OpenTelemetry", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.S | re.M)[0]


@pytest.mark.django_db(transaction=True)
def test_the_documented_example_agent_sends_its_trace(otlp):
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env.update({"CW_URL": otlp.base, "CW_TOKEN": otlp.token, "CW_PROJECT": otlp.project.slug})
    result = subprocess.run([sys.executable, "-c", doc_example()], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    session = AgentSession.objects.get(external_id=re.search(r"otel:[0-9a-f]{32}", result.stdout).group(0))
    process(session)
    reader = APIClient()
    reader.credentials(HTTP_AUTHORIZATION=f"Bearer {otlp.token}")
    graph = reader.get(f"/api/projects/{otlp.project.slug}/sessions/{session.pk}/graph/").json()
    contents = {memory["id"]: memory["content"] for memory in graph["memories"]}
    declared = {(contents[e["source_id"]][:20], contents[e["target_id"]][:20]) for e in graph["edges"]
                if e["origin"] == "agent"}
    request, call = "Find a quiet hotel i", 'search_hotels({"city'
    assert {(request, call), (call, "Casa do Largo in Alf"), (request, "Booked Casa do Largo")} <= declared, declared
