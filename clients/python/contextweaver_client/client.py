"""The two clients: each drives the shared plans (api.py) with its own HTTP client and clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, TypeVar

import httpx2 as httpx

from .api import Plan, steps
from .curation import CurationApi
from .exchange import Call, Outcome, Retry
from .people import Login, csrf_headers, login_plan

T = TypeVar("T")
USER_AGENT = "contextweaver-client/0.1"


def _http_options(base_url: str, token: str | None, login: Login | None, timeout: float,
                  headers: Mapping[str, str] | None) -> dict[str, Any]:
    if bool(token) == (login is not None):
        raise ValueError("Give a project API token (agents: create_project prints one, Project settings issue "
                         "more) or login=Login(username, password) (people, for curation): one of the two.")
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return {"base_url": base_url.rstrip("/"), "timeout": timeout,
            "headers": {**auth, "Accept": "application/json", "User-Agent": USER_AGENT, **(headers or {})}}


class _Driver(CurationApi):
    """What both clients share: who they are, and a person's login before their first call."""

    def _setup(self, project: str, retry: Retry | None, login: Login | None, base_url: str) -> None:
        if not project:
            raise ValueError("Name the project (its slug, as in /p/<slug>/).")
        self.project = project
        self.retry = retry or Retry()
        self._login = login
        self._logged_in = False
        self._origin = base_url.rstrip("/")

    def _login_first(self, plan: Plan[T]) -> Plan[T]:
        if self._login is not None and not self._logged_in:
            yield from login_plan(self._login)
            self._logged_in = True
        return (yield from plan)

    def _request_args(self, call: Call[Any], cookies: Any) -> dict[str, Any]:
        headers = {**call.headers, **csrf_headers(call.method, cookies, self._origin)}
        return {"params": call.params, "json": call.json, "data": call.form, "headers": headers}


class Client(_Driver):
    """ContextWeaver's agent API for one project, blocking.

        with Client("http://127.0.0.1:8000", token, project="travel") as cw:
            session = cw.create_session(title="Trip", task="Plan a trip to Lisbon")
            cw.send(session.id, "user_input", "My budget is 900 EUR")
            print(cw.recall("budget", session_id=session.id).context)

    A person (curation is for people) logs in instead of a token:

        with Client("http://127.0.0.1:8000", project="travel", login=Login("ana", password)) as cw:
            for edge in cw.review_queue(needs_review=True).results:
                cw.approve_edge(edge.id, reason="checked against the transcript")
    """

    def __init__(self, base_url: str, token: str | None = None, project: str = "", *, login: Login | None = None,
                 timeout: float = 30.0, retry: Retry | None = None, headers: Mapping[str, str] | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._setup(project, retry, login, base_url)
        self._http = httpx.Client(transport=transport, **_http_options(base_url, token, login, timeout, headers))

    def _run(self, plan: Plan[T]) -> T:
        stream = steps(self._login_first(plan), self.retry)
        outcome: Outcome = None
        while True:
            try:
                step = stream.send(outcome)
            except StopIteration as done:
                return done.value
            outcome = self._send(step) if isinstance(step, Call) else time.sleep(step)

    def _send(self, call: Call[Any]) -> Outcome:
        try:
            return self._http.request(call.method, call.path, **self._request_args(call, self._http.cookies))
        except httpx.TransportError as exc:
            return exc

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient(_Driver):
    """The same operations as `Client`, each awaited:

        async with AsyncClient("http://127.0.0.1:8000", token, project="travel") as cw:
            answer = await cw.recall("budget")
    """

    def __init__(self, base_url: str, token: str | None = None, project: str = "", *, login: Login | None = None,
                 timeout: float = 30.0, retry: Retry | None = None, headers: Mapping[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._setup(project, retry, login, base_url)
        self._http = httpx.AsyncClient(transport=transport, **_http_options(base_url, token, login, timeout, headers))

    async def _run(self, plan: Plan[T]) -> T:
        stream = steps(self._login_first(plan), self.retry)
        outcome: Outcome = None
        while True:
            try:
                step = stream.send(outcome)
            except StopIteration as done:
                return done.value
            outcome = await self._send(step) if isinstance(step, Call) else await asyncio.sleep(step)

    async def _send(self, call: Call[Any]) -> Outcome:
        try:
            return await self._http.request(call.method, call.path, **self._request_args(call, self._http.cookies))
        except httpx.TransportError as exc:
            return exc

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
