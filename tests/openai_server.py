"""A small OpenAI-compatible HTTP server, so the OpenAI path is tested over real HTTP without mocks.

The real `openai` client talks to it through OPENAI_BASE_URL. Each test scripts what the server does
with its next requests (answer, HTTP error, rate limit, slow answer, broken JSON, empty choices) and
then asserts on the requests it recorded. Embeddings are deterministic vectors derived from a hash
of the text, so tests can compute the expected vector themselves.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

CHAT_PATH = "/v1/chat/completions"
EMBEDDINGS_PATH = "/v1/embeddings"
API_KEY = "sk-test-contextweaver-local"
ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
               429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}


@dataclass(frozen=True)
class Behaviour:
    """What the server does with one request. Build these with the helper functions below.

    status: the HTTP status; content: the assistant message content of a chat answer (None keeps
    the field null); choices: False answers with "choices": []; delay: seconds to wait before
    answering (longer than the client timeout makes the client give up); headers: extra response
    headers; body: a JSON body sent as is instead of the generated one.
    """

    status: int = 200
    content: str | None = None
    choices: bool = True
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


def answer_json(payload: Any, **kwargs: Any) -> Behaviour:
    """A chat answer whose content is `payload` serialised as JSON (valid or not for the schema)."""
    return Behaviour(content=json.dumps(payload), **kwargs)


def answer_text(text: str) -> Behaviour:
    """A chat answer whose content is plain text, e.g. malformed JSON."""
    return Behaviour(content=text)


def empty_choices() -> Behaviour:
    return Behaviour(choices=False)


def http_error(status: int = 500, message: str = "The server had an error while processing your request.",
               *, retry_after_ms: int | None = 1) -> Behaviour:
    """An OpenAI-style error body; `retry-after-ms` keeps the client's back-off short in tests."""
    headers = {} if retry_after_ms is None else {"retry-after-ms": str(retry_after_ms)}
    return Behaviour(status=status, headers=headers, body=_error_body(status, message))


def rate_limited(*, retry_after_ms: int | None = 1) -> Behaviour:
    """HTTP 429 with `retry-after: 0`. The SDK ignores a zero retry-after and falls back to its
    own ~0.5 s back-off, so `retry-after-ms` (which it prefers) is sent too unless disabled."""
    behaviour = http_error(429, "Rate limit reached for requests", retry_after_ms=retry_after_ms)
    return Behaviour(status=429, headers={"retry-after": "0", **behaviour.headers}, body=behaviour.body)


def slow(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Wait before answering; with `seconds` above the client timeout the client times out."""
    then = then or answer_json({})
    return Behaviour(status=then.status, content=then.content, choices=then.choices, delay=seconds,
                     headers=then.headers, body=then.body)


def raw_json(body: Any, status: int = 200) -> Behaviour:
    """Send this JSON body verbatim (e.g. an embeddings answer with a missing vector)."""
    return Behaviour(status=status, body=body)


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector for `text`: hash bytes mapped to [-1, 1], then normalised."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend(b / 127.5 - 1.0 for b in digest)
        counter += 1
    values = values[:dimensions]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _error_body(status: int, message: str) -> dict[str, Any]:
    error_type = ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": error_type, "param": None, "code": error_type}}


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    body: Any
    headers: dict[str, str]


class FakeOpenAI:
    """The server: start(), script_chat()/script_embeddings(), inspect `requests`, stop()."""

    def __init__(self, *, embedding_dimensions: int = 16) -> None:
        self.embedding_dimensions = embedding_dimensions
        self.requests: list[RecordedRequest] = []
        self._chat: deque[Behaviour] = deque()
        self._embeddings: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers that are sleeping for a "slow" behaviour
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.close_connections()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------
    def script_chat(self, *behaviours: Behaviour) -> None:
        """Queue what the next chat requests get, in order. An unscripted chat request is an error."""
        with self._lock:
            self._chat.extend(behaviours)

    def script_embeddings(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next embedding requests; unscripted ones get hash vectors."""
        with self._lock:
            self._embeddings.extend(behaviours)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == CHAT_PATH]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == EMBEDDINGS_PATH]

    def pending(self) -> int:
        """Scripted behaviours not consumed yet (a test can check its script was fully used)."""
        with self._lock:
            return len(self._chat) + len(self._embeddings)

    # -- request handling (called from handler threads) ------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next(self, path: str) -> Behaviour | None:
        with self._lock:
            queue = self._chat if path == CHAT_PATH else self._embeddings
            return queue.popleft() if queue else None

    def _wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _chat_body(self, request: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
        choices = []
        if behaviour.choices:
            message = {"role": "assistant", "content": behaviour.content, "refusal": None}
            choices = [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}]
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
        completion_tokens = len((behaviour.content or "").split())
        return {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", "unknown"), "system_fingerprint": "fp_local_test", "choices": choices,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    def _embeddings_body(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        texts = request.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return 400, _error_body(400, "'input' must be a non-empty string or array of strings")
        dimensions = int(request.get("dimensions") or self.embedding_dimensions)
        data = []
        for index, text in enumerate(texts):
            vector = fake_embedding(text, dimensions)
            encoded: Any = vector
            if request.get("encoding_format") == "base64":  # what the SDK asks for by default
                encoded = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(t.split()) for t in texts)
        return 200, {"object": "list", "data": data, "model": request.get("model", "unknown"),
                     "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def _respond(self, path: str, request: Any) -> tuple[int, dict[str, str], Any]:
        behaviour = self._next(path)
        if behaviour is None:
            if path == CHAT_PATH:
                return 500, {"x-should-retry": "false"}, _error_body(500, "fake OpenAI: no chat behaviour scripted")
            behaviour = Behaviour()
        if behaviour.delay:
            self._wait(behaviour.delay)
        if behaviour.body is not None or behaviour.status != 200:
            body = behaviour.body if behaviour.body is not None else _error_body(behaviour.status, "error")
            return behaviour.status, behaviour.headers, body
        if path == CHAT_PATH:
            return 200, behaviour.headers, self._chat_body(request, behaviour)
        status, body = self._embeddings_body(request)
        return status, behaviour.headers, body


class _Server(ThreadingHTTPServer):
    """Tracks open connections so stop() can close keep-alive ones the client pool still holds."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out and hung up is expected here, not a test failure to print."""


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        """Quiet: pytest output should show test results, not access logs."""

    def do_POST(self) -> None:  # noqa: N802 - name required by BaseHTTPRequestHandler
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = raw.decode(errors="replace")
        self.fake._record(RecordedRequest(self.path, body, {k.lower(): v for k, v in self.headers.items()}))
        if self.headers.get("authorization") != f"Bearer {API_KEY}":
            self._send(401, {}, _error_body(401, "Incorrect API key provided."))
        elif self.path not in (CHAT_PATH, EMBEDDINGS_PATH):
            self._send(404, {}, _error_body(404, f"Unknown path {self.path}"))
        elif not isinstance(body, dict):
            self._send(400, {}, _error_body(400, "We could not parse the JSON body of your request."))
        else:
            self._send(*self.fake._respond(self.path, body))

    def _send(self, status: int, headers: dict[str, str], body: Any) -> None:
        payload = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.send_header("x-request-id", f"req_local_{len(self.fake.requests)}")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout) before the answer


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A running fake OpenAI with the client's environment pointed at it; providers rebuilt around it."""
    from memory.providers import reset_providers

    server = FakeOpenAI().start()
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    for name in ("OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_CUSTOM_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    for name in ("NO_PROXY", "no_proxy"):  # never send 127.0.0.1 through a proxy from the environment
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    reset_providers()
    try:
        yield server
    finally:
        reset_providers()
        server.stop()
