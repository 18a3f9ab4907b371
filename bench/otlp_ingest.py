"""Accepting one OTLP/HTTP batch of 1,000 GenAI spans (POST …/otlp/v1/traces) on a real uvicorn server, queue mode.

The spans come from the OpenTelemetry SDK, as an instrumented agent makes them: agent runs of ten spans each (an
invoke_agent span, five chat spans that answer and call a tool, four execute_tool spans), every text distinct, then
encoded as the OTLP/HTTP exporter encodes them (binary protobuf). Timed: the whole request, from sending the body
to the answer (parsing, one session per trace, every interaction and its links stored, their jobs queued, one
commit). Processing is the workers' and is measured by `ingest`. Each batch is new traces; then the last batch is
sent again (an exporter's retry: every interaction a duplicate), then as OTLP/JSON, then gzip-compressed.

    python -m bench.otlp_ingest            prints the numbers as JSON
"""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import os
import time
from urllib.parse import urlsplit

from contextweaver_site.serve import running_server

from .setup_django import BENCH_DB, percentile

SPANS = 1000
RUN_SPANS = 10  # per agent run (trace): 1 agent + 5 chat + 4 tool spans
TARGET_S = 1.0
SLUG = "bench-otlp"


def agent_runs(count: int, batch: int):
    """The finished spans of `count` agent runs, texts numbered by batch and run so none repeats."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "bench-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench.otlp_ingest")
    for run in range(count):
        _agent_run(tracer, f"{batch}-{run}")
    provider.shutdown()
    return list(memory.get_finished_spans())


def _said(role: str, content: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": content}]}])


def _agent_run(tracer, tag: str) -> None:
    with tracer.start_as_current_span("invoke_agent trip-planner") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "trip-planner",
                              "gen_ai.input.messages": _said("user", f"Plan trip {tag}: three days in Kyoto, "
                                                                     f"budget {len(tag) * 700} EUR, no flights")})
        for step in range(5):
            call = {"type": "tool_call", "id": f"call-{tag}-{step}", "name": "search",
                    "arguments": {"query": f"Kyoto day {step} for trip {tag}", "limit": 5}}
            with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
                history = [{"role": "user", "parts": [{"type": "text", "content": f"Plan trip {tag}"}]}]
                if step:
                    history += [{"role": "assistant", "parts": [dict(call, id=f"call-{tag}-{step - 1}")]},
                                {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call-{tag}-"
                                                            f"{step - 1}", "response": f"Result {step - 1} of "
                                                                                        f"trip {tag}: temples"}]}]
                parts = [{"type": "text", "content": f"Step {step} of trip {tag}: looking at day {step} next"}]
                chat.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                                     "gen_ai.input.messages": json.dumps(history),
                                     "gen_ai.output.messages": json.dumps([{"role": "assistant",
                                                                            "parts": parts + [call] * (step < 4)}])})
            if step < 4:
                with tracer.start_as_current_span("execute_tool search") as tool:
                    tool.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                                         "gen_ai.tool.call.id": call["id"],
                                         "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
                                         "gen_ai.tool.call.result": f"Result {step} of trip {tag}: temples"})
        agent.set_attribute("gen_ai.output.messages", _said("assistant", f"Trip {tag} planned: Fushimi Inari, "
                                                                         "Arashiyama and Gion"))


def _as_json(body: bytes) -> bytes:
    """The same request as OTLP/JSON (ids in hex)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    data = json_format.MessageToDict(ExportTraceServiceRequest.FromString(body))
    return json.dumps(hex_ids(data)).encode()


def hex_ids(data: dict) -> dict:
    """Protobuf's JSON of a request with the span and trace ids in hex (the one place OTLP/JSON differs)."""
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for name in ("traceId", "spanId", "parentSpanId"):
                    if name in span:
                        span[name] = base64.b64decode(span[name]).hex()
    return data


def _post(connection: http.client.HTTPConnection, path: str, token: str, body: bytes,
          content_type: str = "application/x-protobuf", **headers: str) -> tuple[float, int, bytes]:
    started = time.perf_counter()
    connection.request("POST", path, body=body, headers={"Authorization": f"Bearer {token}",
                                                         "Content-Type": content_type, **headers})
    response = connection.getresponse()
    answer = response.read()
    return time.perf_counter() - started, response.status, answer


def run(batches: int = 5, spans: int = SPANS) -> dict:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from memory.engine.projects import project_create, token_issue
    from memory.models import Interaction

    _project_delete()
    project = project_create(name="bench otlp", slug=SLUG)
    token = token_issue(project=project)[1]
    # The measured batches, then one each for the warm-up, the JSON body and the compressed body.
    bodies = [encode_spans(agent_runs(spans // RUN_SPANS, batch)).SerializeToString() for batch in range(batches + 3)]
    path = f"/api/projects/{SLUG}/otlp/v1/traces"
    env = {**os.environ, "CW_DB_NAME": BENCH_DB, "CW_INGEST_MODE": "queue"}
    with running_server(env) as url:
        connection = http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port, timeout=120)
        _post(connection, path, token, bodies[-1])  # warm-up: imports, connections, the first session
        seconds = []
        for body in bodies[:batches]:
            elapsed, status, answer = _post(connection, path, token, body)
            if status != 200:
                raise RuntimeError(f"unexpected status {status}: {answer[:300]!r}")
            seconds.append(elapsed)
        resend, _, _ = _post(connection, path, token, bodies[batches - 1])
        as_json, json_status, _ = _post(connection, path, token, _as_json(bodies[-2]), "application/json")
        gzipped, gzip_status, _ = _post(connection, path, token, gzip.compress(bodies[-3]),
                                        **{"Content-Encoding": "gzip"})
    if (json_status, gzip_status) != (200, 200):
        raise RuntimeError(f"unexpected statuses: JSON {json_status}, gzip {gzip_status}")
    interactions = Interaction.objects.filter(project=project).count() // (batches + 3)
    _project_delete()
    return {"spans": spans, "batches": batches, "interactions_per_batch": interactions,
            "body_bytes": len(bodies[0]), "gzip_bytes": len(gzip.compress(bodies[0])),
            "accept_p50_s": round(percentile(seconds, 50), 3), "accept_max_s": round(max(seconds), 3),
            "accept_runs_s": [round(s, 3) for s in seconds], "resend_s": round(resend, 3),
            "json_s": round(as_json, 3), "gzip_s": round(gzipped, 3), "target_s": TARGET_S,
            "met": max(seconds) <= TARGET_S}


def _project_delete() -> None:
    """The benchmark's project and all it holds (the ORM's cascade: links reference interactions both ways)."""
    from memory.models import Project

    Project.objects.filter(slug=SLUG).delete()


if __name__ == "__main__":
    from . import setup_django

    setup_django.setup(embedder="hashing")
    print(json.dumps(run(), indent=1))
