"""The failed-token throttle cannot be walked around, and does not refuse tokens that check out.

- the client address is REMOTE_ADDR unless CW_NUM_PROXIES says how many proxies append to
  X-Forwarded-For: a client's own header cannot give each guess a new address;
- large bodies (checked by the request guard before Django reads them) count in the same throttle;
- guesses at the monitoring token (/metrics, /readyz) count there too;
- a token that checks out is accepted from an address over the rate: only failures get the 429;
- an error echoes at most a bounded part of what the request sent (700,000 unknown recall parameters
  were once answered with a 12 MB listing of them).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from contextweaver_site.request_guard import RequestGuard

from .test_monitoring import TOKEN as MONITORING_TOKEN
from .test_throttling import assert_throttled, fresh_counts, rates  # noqa: F401 (fresh_counts: autouse fixture)

pytestmark = pytest.mark.django_db

SESSIONS = "/api/projects/travel/sessions/"
RECALL = "/api/projects/travel/recall/"
ECHO_ITEMS = 20  # memory/api/errors.py: the entries an error shows of a long listing
LARGE = 100 * 1024  # over ANONYMOUS_BODY_BYTES: the request guard checks the token before the body is read


def proxies(count: int) -> override_settings:
    return override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "NUM_PROXIES": count})


def guesser(token: str = "cw_guess") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


# --- a. the client address -------------------------------------------------------------------------

def test_a_forged_x_forwarded_for_does_not_give_each_guess_a_new_address(project):
    client = guesser()
    with rates(auth_failure="3/min"):
        answers = [client.get(SESSIONS, HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code for i in range(6)]
        assert answers == [401] * 3 + [429] * 3
        assert_throttled(client.get(SESSIONS, HTTP_X_FORWARDED_FOR="198.51.100.99"))
    assert settings.REST_FRAMEWORK["NUM_PROXIES"] == 0  # CW_NUM_PROXIES' default: trust no X-Forwarded-For


def test_behind_one_proxy_the_address_is_the_entry_the_proxy_appended(project):
    """CW_NUM_PROXIES=1: whatever the client wrote before it, the proxy's own entry (the last) counts."""
    client = guesser()
    with proxies(1), rates(auth_failure="3/min"):
        answers = [client.get(SESSIONS, HTTP_X_FORWARDED_FOR=f"10.9.9.{i}, 198.51.100.7").status_code
                   for i in range(5)]
        assert answers == [401] * 3 + [429] * 2
        assert client.get(SESSIONS, HTTP_X_FORWARDED_FOR="10.9.9.1, 198.51.100.8").status_code == 401


# --- d. a token that checks out is accepted ---------------------------------------------------------

def test_a_valid_token_is_accepted_from_an_address_over_the_failure_rate(api, project):
    client = guesser()
    with rates(auth_failure="3/min"):
        assert [client.get(SESSIONS).status_code for _ in range(4)] == [401] * 3 + [429]
        # Same address (127.0.0.1): the agent whose token checks out is not locked out with the guesser,
        # on reads and on writes alike.
        for _ in range(3):
            assert api.get(SESSIONS).status_code == 200
        assert api.post(SESSIONS, {"title": "Still working"}, format="json").status_code == 201
        assert_throttled(client.get(SESSIONS))
        assert_throttled(guesser("cw_another_guess").get(SESSIONS))


# --- b. large bodies, checked by the request guard ---------------------------------------------------

async def _stand_in_for_django(scope, receive, send) -> None:
    """The app behind the guard: reads the body, answers 200 (the guard let the request through)."""
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def through_guard(token: str, *, client: tuple[str, int] = ("127.0.0.1", 40000),
                  forwarded_for: str | None = None) -> tuple[int, dict[str, str], dict]:
    """POST a LARGE body with this token through the request guard, in this process (its cache, and
    the test's database connection: async_to_sync runs the guard's database calls in this thread)."""
    headers = [(b"content-type", b"application/json"), (b"content-length", str(LARGE).encode()),
               (b"authorization", f"Bearer {token}".encode())]
    if forwarded_for is not None:
        headers.append((b"x-forwarded-for", forwarded_for.encode()))
    scope = {"type": "http", "method": "POST", "path": "/api/projects/travel/sessions/", "query_string": b"",
             "headers": headers, "client": client}
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b" " * LARGE, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    async_to_sync(RequestGuard(_stand_in_for_django))(scope, receive, send)
    start = sent[0]
    answer = {name.decode(): value.decode() for name, value in start["headers"]}
    return start["status"], answer, json.loads(sent[1]["body"] or b"{}")


@pytest.mark.django_db(transaction=True)  # the guard reads the token from its own (autocommit) use of the connection
def test_large_bodies_with_wrong_tokens_count_in_the_failure_throttle(project, raw_token):
    with rates(auth_failure="3/min"):
        assert [through_guard("cw_guess")[0] for _ in range(3)] == [401] * 3
        status, headers, body = through_guard("cw_guess")
        assert status == 429, body
        assert body["error"]["code"] == "throttled" and int(headers["retry-after"]) >= 1
        # One count with the API's: the same address is over the rate there too ...
        assert_throttled(guesser().get(SESSIONS))
        # ... while a token that checks out still passes the guard, and other addresses are not affected.
        assert through_guard(raw_token)[0] == 200
        assert through_guard("cw_guess", client=("10.0.0.2", 40000))[0] == 401


@pytest.mark.django_db(transaction=True)
def test_failures_counted_by_the_api_refuse_large_bodies_too(project):
    with rates(auth_failure="3/min"):
        client = guesser()
        assert [client.get(SESSIONS).status_code for _ in range(3)] == [401] * 3
        status, _, body = through_guard("cw_guess")
        assert status == 429, body
        # The guard finds the address as the API does: a forged X-Forwarded-For changes nothing.
        assert through_guard("cw_guess", forwarded_for="203.0.113.50")[0] == 429


@pytest.mark.django_db(transaction=True)
def test_a_wrong_token_with_a_chunked_body_is_counted_once(project):
    """Chunked: the guard checks the token (size unknown) and hands the body on to Django; DRF then
    answers the 401 without counting the failure a second time."""
    from django.core.asgi import get_asgi_application

    headers = [(b"content-type", b"application/json"), (b"transfer-encoding", b"chunked"),
               (b"authorization", b"Bearer cw_guess"), (b"host", b"localhost")]
    scope = {"type": "http", "method": "POST", "path": SESSIONS, "query_string": b"", "headers": headers,
             "client": ("127.0.0.1", 40000), "server": ("localhost", 80), "scheme": "http",
             "http_version": "1.1", "asgi": {"version": "3.0"}}
    pieces = [{"type": "http.request", "body": b'{"title":', "more_body": True},
              {"type": "http.request", "body": b' "x"}', "more_body": False}]
    sent: list[dict] = []

    async def receive() -> dict:
        if pieces:
            return pieces.pop(0)
        await asyncio.Event().wait()  # the client stays connected until the answer
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    with rates(auth_failure="3/min"):
        async_to_sync(RequestGuard(get_asgi_application()))(scope, receive, send)
        assert sent[0]["status"] == 401, sent
        client = guesser()
        assert [client.get(SESSIONS).status_code for _ in range(3)] == [401, 401, 429]


# --- c. the monitoring token -----------------------------------------------------------------------

@override_settings(MONITORING_TOKEN=MONITORING_TOKEN)
def test_guesses_at_the_monitoring_token_are_throttled(client, db):
    with rates(auth_failure="3/min"):
        answers = [client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer guess-{i}").status_code for i in range(4)]
        assert answers == [401] * 3 + [429]
        assert_throttled(client.get("/metrics", HTTP_AUTHORIZATION="Bearer guess-again"))
        assert_throttled(client.get("/readyz", HTTP_AUTHORIZATION="Bearer guess-again"))
        # The same count as the API's failed token checks.
        assert_throttled(guesser().get(SESSIONS))
        # The right token is still accepted from the same address; other addresses are not affected.
        assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {MONITORING_TOKEN}").status_code == 200
        assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer guess", REMOTE_ADDR="10.0.0.2").status_code == 401


# --- e. what an error echoes -------------------------------------------------------------------------

def test_an_error_listing_unknown_parameters_names_a_few_and_counts_the_rest(api, project):
    unknown = {f"unknown_parameter_{i:06d}": 1 for i in range(50_000)}
    long_key = "a" * 100_000  # sorted first: shown, but cut
    response = api.post(RECALL, {"query": "budget", "params": {**unknown, long_key: 1}}, format="json")
    assert response.status_code == 400, response.content[:500]
    assert len(response.content) < 16 * 1024, len(response.content)
    error = response.json()["error"]
    message = error["message"]
    assert message.startswith("unknown recall parameter(s): aaaa")
    assert "a" * 200 not in message and "(100,029 characters)" in message  # the key with the message's start
    assert message.count("unknown_parameter_") == ECHO_ITEMS - 1
    assert message.endswith(f", unknown_parameter_000018, … and {50_001 - ECHO_ITEMS:,} more")
    listing = error["fields"]["params"][0]
    assert listing.count("unknown_parameter_") == ECHO_ITEMS - 1 and "(100,009 characters)" in listing
    assert f"and {50_001 - ECHO_ITEMS:,} more; known: " in listing and "max_hops" in listing  # kept whole


def test_an_invalid_batch_echoes_its_errors_within_a_bound(agent_session, api):
    url = f"/api/projects/travel/sessions/{agent_session.pk}/interactions/"
    batch = {"interactions": [{"kind": "no_such_kind", "content": "x"} for _ in range(2_000)]}
    response = api.post(url, batch, format="json")
    assert response.status_code == 400, response.content[:500]
    assert len(response.content) < 16 * 1024, len(response.content)
    errors = response.json()["error"]["fields"]["interactions"]  # by index: the first ones, then a count
    assert errors["0"] == {"kind": ['"no_such_kind" is not a valid choice.']}
    assert errors["…"] == [f"and {2_000 - ECHO_ITEMS:,} more"]

