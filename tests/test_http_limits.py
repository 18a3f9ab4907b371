"""Request limits over real HTTP (uvicorn + the request guard in front of Django).

The Django test client never goes through ASGI, so these talk to a live server on the test
database: oversized bodies are a JSON 413 before they are read, anonymous uploads are refused from
their headers, and a client that sends its body too slowly is answered and disconnected.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from urllib.parse import urlsplit

import pytest
from django.conf import settings

from memory.engine.projects import project_create, session_create, token_issue
from memory.models import Interaction

from .conftest import LIVE_BODY_TIMEOUT

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def target(live_server_url):
    project = project_create(name="Limits", slug="limits")
    session = session_create(project=project, title="limits", actor="test")
    token = token_issue(project=project)[1]
    parts = urlsplit(live_server_url)
    return {"host": parts.hostname, "port": parts.port, "token": token,
            "path": f"/api/projects/limits/sessions/{session.pk}/interactions/"}


def connect(target) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(target["host"], target["port"], timeout=30)


def post(target, body: bytes, *, token: str | None = "own", chunked: bool = False):
    conn = connect(target)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {target['token'] if token == 'own' else token}"
    if chunked:
        conn.putrequest("POST", target["path"])
        for name, value in {**headers, "Transfer-Encoding": "chunked"}.items():
            conn.putheader(name, value)
        conn.endheaders()
        try:
            for start in range(0, len(body), 65536):
                piece = body[start:start + 65536]
                conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            conn.send(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered early and closed its side (as the refusals do): read that answer
    else:
        conn.request("POST", target["path"], body=body, headers=headers)
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def error_of(body: bytes) -> dict:
    return json.loads(body)["error"]


def raw_exchange(target, head: str, body: bytes = b"") -> tuple[str, bytes]:
    """Send a request head (and maybe part of a body) on a plain socket; the answer's head and body."""
    sock = socket.create_connection((target["host"], target["port"]), timeout=10)
    sock.sendall(head.encode() + body)
    answer = read_answer(sock)
    sock.close()
    top, _, rest = answer.partition(b"\r\n\r\n")
    return top.decode().lower(), rest


def read_answer(sock: socket.socket) -> bytes:
    """One whole HTTP answer: a server may send its head and body in separate packets."""
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < _length(answer):
        piece = sock.recv(65536)
        if not piece:
            break
        answer += piece
    return answer


def _length(answer: bytes) -> int:
    for line in answer.partition(b"\r\n\r\n")[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


def test_a_body_over_the_limit_is_a_json_413_naming_it_before_it_is_sent(target):
    limit = settings.MAX_REQUEST_BODY_BYTES
    head, body = raw_exchange(target, f"POST {target['path']} HTTP/1.1\r\nHost: x\r\n"
                                      f"Authorization: Bearer {target['token']}\r\nContent-Type: application/json\r\n"
                                      f"Content-Length: {limit + 1}\r\n\r\n")
    assert head.startswith("http/1.1 413"), head
    assert "content-type: application/json" in head
    assert error_of(body)["code"] == "too_large"
    assert str(limit) in error_of(body)["message"]
    assert Interaction.objects.count() == 0


def test_a_chunked_body_over_the_limit_is_cut_off_with_a_413(target):
    status, _, body = post(target, b" " * (settings.MAX_REQUEST_BODY_BYTES + 70_000), chunked=True)
    assert status == 413, body
    assert error_of(body)["code"] == "too_large"


def test_an_anonymous_upload_is_refused_from_its_headers_before_its_body_is_read(target):
    """A declared 300 MB body without credentials gets its 401 at once: nothing of it is sent."""
    sock = socket.create_connection((target["host"], target["port"]), timeout=10)
    started = time.monotonic()
    sock.sendall(f"POST {target['path']} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {300 * 1024 * 1024}\r\n\r\n".encode())
    answer = read_answer(sock).decode()
    sock.close()
    assert answer.startswith("HTTP/1.1 413") or answer.startswith("HTTP/1.1 401"), answer
    assert answer.startswith("HTTP/1.1 413"), "over MAX_REQUEST_BODY_BYTES is a 413 whoever sends it"
    assert time.monotonic() - started < 5


def test_a_large_body_with_a_bad_token_is_a_401_before_reading(target):
    size = settings.ANONYMOUS_BODY_BYTES + 1
    sock = socket.create_connection((target["host"], target["port"]), timeout=10)
    sock.sendall(f"POST {target['path']} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer cw_wrong\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode())
    answer = read_answer(sock).decode()  # no byte of the body was sent
    sock.close()
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 401"), answer
    assert 'www-authenticate: bearer realm="api"' in head.lower()
    assert error_of(body.encode())["code"] == "not_authenticated"


def test_an_anonymous_chunked_upload_is_stopped_at_the_anonymous_limit(target):
    status, _, body = post(target, b"x" * (settings.ANONYMOUS_BODY_BYTES * 4), token=None, chunked=True)
    assert status == 401, body


def test_a_valid_large_batch_with_a_token_is_accepted(target):
    items = [{"kind": "user_input", "content": f"Constraint {i}: " + "budget detail " * 1500} for i in range(20)]
    body = json.dumps({"interactions": items}).encode()
    assert len(body) > settings.ANONYMOUS_BODY_BYTES
    status, _, answer = post(target, body, chunked=True)
    assert status == 202, answer
    assert Interaction.objects.count() == 20


def test_a_small_body_without_credentials_still_gets_the_apis_401(target):
    status, headers, body = post(target, b'{"kind": "user_input", "content": "hello"}', token=None)
    assert status == 401
    assert error_of(body)["code"] == "not_authenticated"


def test_a_slow_body_is_answered_408_and_the_connection_closed(target):
    sock = socket.create_connection((target["host"], target["port"]), timeout=LIVE_BODY_TIMEOUT + 10)
    sock.sendall(f"POST {target['path']} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {target['token']}\r\n"
                 "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"kind\": ".encode())
    started = time.monotonic()
    answer = read_answer(sock).decode()
    waited = time.monotonic() - started
    closed = sock.recv(1) == b""
    sock.close()
    assert answer.startswith("HTTP/1.1 408"), answer
    assert LIVE_BODY_TIMEOUT - 1 <= waited <= LIVE_BODY_TIMEOUT + 5
    assert closed
    assert Interaction.objects.count() == 0
