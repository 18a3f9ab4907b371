"""The Python client (clients/python) against a live uvicorn server on the test database.

Every operation runs through both clients, `Client` and `AsyncClient`, on real HTTP. Network trouble is
made with real parts too: a transport that forwards to the server and then loses the answer, and a
small local HTTP server that throttles before it answers.

The server is this module's own (conftest.module_server_url), and only the first test has it process
interactions.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx2 as httpx
import pytest
from contextweaver_client import (
    AsyncClient,
    BadRequest,
    Client,
    Conflict,
    NewInteraction,
    NotFound,
    RateLimited,
    Retry,
    Unauthorized,
    Unreachable,
)

from memory.engine.projects import project_create, token_issue
from memory.models import AgentSession, Interaction

pytestmark = pytest.mark.django_db(transaction=True)

FAST = Retry(attempts=3, backoff=0.01, max_wait=0.05)


@pytest.fixture
def token(module_server_url) -> str:
    project = project_create(name="SDK", slug="sdk")
    return token_issue(project=project)[1]


@pytest.fixture
def cw(module_server_url, token) -> Iterator[Client]:
    with Client(module_server_url, token, project="sdk", retry=FAST) as client:
        yield client


def test_a_session_lives_through_both_clients(cw, module_server_url, token):
    session = cw.create_session(title="Lisbon", task="Plan a trip to Lisbon within a budget")
    assert session.id > 0 and session.title == "Lisbon" and session.interaction_count == 0
    one = cw.send(session.id, "user_input", "My budget for the Lisbon trip is 900 EUR in total", wait=True)
    assert one.status == "kept" and one.memory_ids and not one.duplicate
    batch = cw.send_batch(session.id, [
        NewInteraction("user_input", "I am allergic to shellfish, so no seafood dinners please"),
        {"kind": "assistant_output", "content": "Booked: the Lisbon hotel near Alfama, 3 nights at 110 EUR a night"},
    ], wait=True)
    assert [a.status for a in batch] == ["kept", "kept"]

    page = cw.interactions(session.id, limit=2)
    assert page.count == 3 and [i.id for i in page.results] == [one.id, batch[0].id]
    assert cw.interaction(session.id, one.id).content.startswith("My budget")
    assert isinstance(page.results[0].received_at, datetime)

    answer = cw.recall("what food must be avoided?", session_id=session.id, k=3, preset="hybrid")
    assert answer.recall_id > 0 and answer.memories[0].rank == 1
    assert any("shellfish" in r.memory.content for r in answer.memories)
    assert "shellfish" in answer.context

    graph = cw.graph(session.id)
    assert graph.session.id == session.id and len(graph.memories) == graph.total_memories == 3  # before the forget
    assert {m.id for m in graph.memories} == {*one.memory_ids, *batch[0].memory_ids, *batch[1].memory_ids}
    assert all(e.source_id in {m.id for m in graph.memories} for e in graph.edges)

    shellfish = next(r.memory.id for r in answer.memories if "shellfish" in r.memory.content)
    assert cw.forget_memory(shellfish).already is False
    assert cw.forget_memory(shellfish).already is True  # repeating it changes nothing
    again = cw.recall("what food must be avoided?", session_id=session.id, k=3, preset="hybrid")
    assert shellfish not in [r.memory.id for r in again.memories]
    with pytest.raises(NotFound):
        cw.forget_memory(999999)

    first = cw.changes(session.id, limit=2)
    assert len(first.changes) == 2 and first.has_more
    everything = cw.changes_since(session.id, page_size=2)
    assert not everything.has_more and len(everything.changes) > 2
    assert [c.id for c in everything.changes] == sorted({c.id for c in everything.changes})
    assert everything.changes[:2] == first.changes
    assert cw.changes(session.id, after=everything.last_change_id).changes == []

    async def the_same_through_asyncio():
        async with AsyncClient(module_server_url, token, project="sdk", retry=FAST) as client:
            sent = await client.send(session.id, "user_input", "The trip moves to 14 May because of the strike",
                                     wait=True, occurred_at=datetime(2026, 5, 1, 9, 0, tzinfo=UTC))
            return sent, *await asyncio.gather(
                client.sessions(), client.recall("when is the trip now?", session_id=session.id),
                client.changes_since(session.id, everything.last_change_id, page_size=1))

    sent, listed, recall, later = asyncio.run(the_same_through_asyncio())
    assert sent.status == "kept" and sent.memory_ids
    assert session.id in [s.id for s in listed]
    assert any("14 May" in r.memory.content for r in recall.memories)
    assert len(later.changes) >= 2 and not later.has_more
    assert later.changes[0].id > everything.last_change_id


def test_api_errors_carry_the_error_body(cw, module_server_url):
    session = cw.create_session(title="errors")
    with pytest.raises(NotFound) as missing:
        cw.interaction(session.id, 999999)
    assert missing.value.status == 404 and "999999" in missing.value.message

    with pytest.raises(BadRequest) as invalid:
        cw.send(session.id, "user_input", "   ")
    assert invalid.value.code == "invalid" and "content" in invalid.value.fields

    cw.send(session.id, "user_input", "Flight LH 1234 leaves at 08:05", idempotency_key="flight-1")
    with pytest.raises(Conflict) as reused:
        cw.send(session.id, "user_input", "Another text under the same key", idempotency_key="flight-1")
    assert reused.value.detail["interaction_id"] == Interaction.objects.get(idempotency_key="flight-1").pk

    with Client(module_server_url, "cw_not-a-real-token", project="sdk", retry=FAST) as stranger:
        with pytest.raises(Unauthorized):
            stranger.sessions()


class LoseFirstAnswer(httpx.BaseTransport):
    """Forwards every request to the real server, but drops the first answer to a request whose path
    ends with `lose` as a timed-out read would."""

    def __init__(self, lose: str) -> None:
        self.real = httpx.HTTPTransport()
        self.lose = lose
        self.sent: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.real.handle_request(request)
        if not request.url.path.endswith(self.lose):
            return response
        self.sent.append(request.headers.get("Idempotency-Key"))
        if len(self.sent) == 1:
            response.read()
            response.close()
            raise httpx.ReadTimeout("answer lost on the way back", request=request)
        return response


def test_a_retry_after_a_lost_answer_reuses_the_key_and_is_stored_once(module_server_url, token):
    transport = LoseFirstAnswer("/interactions/")
    with Client(module_server_url, token, project="sdk", retry=FAST, transport=transport) as cw:
        session = cw.create_session(title="retries")
        accepted = cw.send(session.id, "user_input", "Please book the 10:40 train to Porto")
    assert len(transport.sent) == 2  # the lost send and its retry
    assert transport.sent[0] == transport.sent[1] and transport.sent[0].startswith("cw-")
    assert accepted.duplicate  # the server had stored the first one
    assert Interaction.objects.filter(session_id=session.id).count() == 1


def test_starting_a_session_is_not_replayed_after_a_lost_answer(module_server_url, token):
    with Client(module_server_url, token, project="sdk", retry=FAST, transport=LoseFirstAnswer("/sessions/")) as cw:
        with pytest.raises(Unreachable):
            cw.create_session(title="maybe twice")
    assert AgentSession.objects.filter(title="maybe twice").count() == 1


class Throttling(http.server.BaseHTTPRequestHandler):
    """Answers 429 (Retry-After: 0) to the first `throttle` requests, then 200 with an empty session list."""

    throttle = 2
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).seen.append(self.path)
        throttled = len(type(self).seen) <= type(self).throttle
        body = json.dumps({"error": {"code": "throttled", "message": "Slow down."}} if throttled else []).encode()
        self.send_response(429 if throttled else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if throttled:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def throttling_server() -> Iterator[str]:
    Throttling.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Throttling)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=False)
def test_throttled_calls_wait_and_try_again_until_the_attempts_run_out(throttling_server):
    with Client(throttling_server, "cw_token", project="p", retry=Retry(attempts=3, backoff=0.01)) as cw:
        assert cw.sessions() == []
    assert Throttling.seen == ["/api/projects/p/sessions/"] * 3

    Throttling.seen = []
    with Client(throttling_server, "cw_token", project="p", retry=Retry(attempts=2, backoff=0.01)) as cw:
        with pytest.raises(RateLimited) as throttled:
            cw.sessions()
    assert throttled.value.retry_after == 0 and throttled.value.code == "throttled"


@pytest.mark.django_db(transaction=False)
def test_the_client_imports_without_django():
    code = "import sys, contextweaver_client; assert 'django' not in sys.modules, 'django was imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
