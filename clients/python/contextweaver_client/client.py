"""The two clients: each drives the shared plans (api.py) with its own HTTP client and clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, TypeVar

import httpx2 as httpx

from .api import Api, Plan, steps
from .exchange import Call, Outcome, Retry

T = TypeVar("T")
USER_AGENT = "contextweaver-client/0.1"


def _http_options(base_url: str, token: str, timeout: float, headers: Mapping[str, str] | None) -> dict[str, Any]:
    if not token:
        raise ValueError("A project API token is needed (create_project prints one; Project settings issue more).")
    return {"base_url": base_url.rstrip("/"), "timeout": timeout,
            "headers": {"Authorization": f"Bearer {token}", "Accept": "application/json",
                        "User-Agent": USER_AGENT, **(headers or {})}}


def _request_args(call: Call[Any]) -> dict[str, Any]:
    return {"params": call.params, "json": call.json, "headers": call.headers}


class Client(Api):
    """ContextWeaver's agent API for one project, blocking.

        with Client("http://127.0.0.1:8000", token, project="travel") as cw:
            session = cw.create_session(title="Trip", task="Plan a trip to Lisbon")
            cw.send(session.id, "user_input", "My budget is 900 EUR")
            print(cw.recall("budget", session_id=session.id).context)
    """

    def __init__(self, base_url: str, token: str, project: str, *, timeout: float = 30.0,
                 retry: Retry | None = None, headers: Mapping[str, str] | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.project = project
        self.retry = retry or Retry()
        self._http = httpx.Client(transport=transport, **_http_options(base_url, token, timeout, headers))

    def _run(self, plan: Plan[T]) -> T:
        stream = steps(plan, self.retry)
        outcome: Outcome = None
        while True:
            try:
                step = stream.send(outcome)
            except StopIteration as done:
                return done.value
            outcome = self._send(step) if isinstance(step, Call) else time.sleep(step)

    def _send(self, call: Call[Any]) -> Outcome:
        try:
            return self._http.request(call.method, call.path, **_request_args(call))
        except httpx.TransportError as exc:
            return exc

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient(Api):
    """The same operations as `Client`, each awaited:

        async with AsyncClient("http://127.0.0.1:8000", token, project="travel") as cw:
            answer = await cw.recall("budget")
    """

    def __init__(self, base_url: str, token: str, project: str, *, timeout: float = 30.0,
                 retry: Retry | None = None, headers: Mapping[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.project = project
        self.retry = retry or Retry()
        self._http = httpx.AsyncClient(transport=transport, **_http_options(base_url, token, timeout, headers))

    async def _run(self, plan: Plan[T]) -> T:
        stream = steps(plan, self.retry)
        outcome: Outcome = None
        while True:
            try:
                step = stream.send(outcome)
            except StopIteration as done:
                return done.value
            outcome = await self._send(step) if isinstance(step, Call) else await asyncio.sleep(step)

    async def _send(self, call: Call[Any]) -> Outcome:
        try:
            return await self._http.request(call.method, call.path, **_request_args(call))
        except httpx.TransportError as exc:
            return exc

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
