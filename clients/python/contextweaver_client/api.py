"""The API's operations, written once for both clients.

Each operation is a plan: a generator that yields the `Call`s it needs and gets each parsed answer
back, so one that follows a cursor over several pages is written as plainly as a single request. The
`operation` decorator hands the plan to the client's `_run`: the sync client runs it to the end and
returns the result, the async client returns a coroutine.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar
from urllib.parse import quote

from .exchange import Call, Outcome, Retry, Step, exchange
from .models import (
    JSON,
    Accepted,
    ChangePage,
    Forgotten,
    Graph,
    Interaction,
    InteractionPage,
    Link,
    Memory,
    MemoryPage,
    NewInteraction,
    Recall,
    Result,
    Risk,
    Session,
    StoreDeleted,
    StoreItem,
    StorePut,
)

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R", bound=Result)
Plan = Generator[Call[Any], Any, T]
# What an operation returns: the result itself from `Client`, an awaitable of it from `AsyncClient`.
Reply = T | Awaitable[T]

PRESETS = ("vector", "hybrid", "ripple")
MAX_BATCH = 100  # the server's default batch limit (MEMORY["MAX_BATCH"]): send_many splits at it


def operation(plan: Callable[Concatenate[Any, P], Plan[T]]) -> Callable[Concatenate[Any, P], Reply[T]]:
    @functools.wraps(plan)
    def run(self: Any, *args: P.args, **kwargs: P.kwargs) -> Reply[T]:
        return self._run(plan(self, *args, **kwargs))

    return run


def steps(plan: Plan[T], retry: Retry) -> Generator[Step, Outcome, T]:
    """The plan's calls, each through `exchange` (retries and all), as one stream of steps for a driver."""
    answer: Any = None
    while True:
        try:
            call = plan.send(answer)
        except StopIteration as done:
            return done.value
        answer = yield from exchange(call, retry)


def _one(kind: type[R]) -> Callable[[Any], R]:
    return kind.from_json


def _many(kind: type[R], key: str | None = None) -> Callable[[Any], list[R]]:
    return lambda body: [kind.from_json(row) for row in (body[key] if key else body)]


def _optional(kind: type[R], key: str) -> Callable[[Any], R | None]:
    return lambda body: None if body[key] is None else kind.from_json(body[key])


def _query(**values: Any) -> dict[str, Any]:
    """Query parameters without the unset ones; booleans as the API spells them."""
    return {name: ("true" if value is True else value) for name, value in values.items()
            if value is not None and value is not False}


def _interaction_json(item: NewInteraction | Mapping[str, Any]) -> JSON:
    return item.to_json() if isinstance(item, NewInteraction) else dict(item)


class Api:
    """Operations on one project's agent API (a token belongs to one project)."""

    project: str
    retry: Retry

    def _run(self, plan: Plan[T]) -> Any:  # pragma: no cover - each client defines it
        raise NotImplementedError

    def _path(self, *parts: object) -> str:
        tail = "".join(f"{quote(str(part), safe='')}/" for part in parts)
        return f"/api/projects/{quote(self.project, safe='')}/{tail}"

    # Sessions -----------------------------------------------------------------------------------------

    @operation
    def sessions(self) -> Plan[list[Session]]:
        """The project's sessions, most recently active first."""
        return (yield Call("GET", self._path("sessions"), parse=_many(Session)))

    @operation
    def create_session(self, *, title: str = "", task: str = "", external_id: str = "",
                       metadata: JSON | None = None, subject: str = "") -> Plan[Session]:
        """Start a session. `task` focuses the selective filter on what matters for it; `subject` says whom
        it is for (a name or your user id): a value stated in it replaces another session's value only when
        both sessions name the same subject (or the same person), else such a replacement is proposed."""
        body = {"title": title, "task": task, "external_id": external_id, "metadata": metadata or {},
                "subject": subject}
        return (yield Call("POST", self._path("sessions"), parse=_one(Session), json=body, replayable=False))

    # Interactions -------------------------------------------------------------------------------------

    @operation
    def send(self, session_id: int, kind: str, content: str, *, metadata: JSON | None = None,
             occurred_at: datetime | None = None, idempotency_key: str | None = None, external_id: str = "",
             links: Sequence[Link | Mapping[str, Any]] = (), recall_id: int | None = None,
             used: Sequence[int] = (), wait: bool = False) -> Plan[Accepted]:
        """Send one interaction. Without `idempotency_key` one is made up, so every retry of this call
        is stored once. `wait=True` asks the server to process it before answering.

        `external_id` (your framework's message, tool-call or span id) makes a resend a duplicate and lets
        later interactions' `links` name it; `links` are what this one depends on (edges of origin `agent`);
        `recall_id` / `used` say which recall and which of its memories it acted on (edges of origin `use`)."""
        item = NewInteraction(kind, content, metadata, occurred_at, idempotency_key, external_id, tuple(links),
                              recall_id, tuple(used))
        accepted = yield self._accept(session_id, [item.to_json()], idempotency_key, wait, batch=False)
        return accepted[0]

    @operation
    def send_batch(self, session_id: int, interactions: Iterable[NewInteraction | Mapping[str, Any]], *,
                   idempotency_key: str | None = None, wait: bool = False) -> Plan[list[Accepted]]:
        """Send up to the server's batch limit (100 by default) in one request, in order. Items without
        a key of their own get `<idempotency_key>:<index>` from the server."""
        rows = [_interaction_json(item) for item in interactions]
        return (yield self._accept(session_id, rows, idempotency_key, wait, batch=True))

    @operation
    def send_many(self, session_id: int, interactions: Iterable[NewInteraction | Mapping[str, Any]], *,
                  batch_size: int = MAX_BATCH, wait: bool = False) -> Plan[list[Accepted]]:
        """Send any number of interactions in order, `batch_size` per request (nothing is sent for none).
        Each request has its own idempotency key; give the items external ids (the adapters do) so that
        sending them all again stores each once. Links between items of different requests resolve too:
        a link to one not yet sent waits for it."""
        rows = [_interaction_json(item) for item in interactions]
        accepted: list[Accepted] = []
        for start in range(0, len(rows), max(batch_size, 1)):
            accepted += yield self._accept(session_id, rows[start:start + max(batch_size, 1)], None, wait,
                                           batch=True)
        return accepted

    def _accept(self, session_id: int, rows: list[JSON], key: str | None, wait: bool,
                *, batch: bool) -> Call[list[Accepted]]:
        headers = {"Idempotency-Key": key or f"cw-{uuid.uuid4().hex}"}
        body: Any = {"interactions": rows} if batch else rows[0]
        return Call("POST", self._path("sessions", session_id, "interactions"), parse=_many(Accepted, "interactions"),
                    params=_query(wait=wait), json=body, headers=headers)

    @operation
    def interactions(self, session_id: int, *, limit: int = 100, offset: int = 0) -> Plan[InteractionPage]:
        """A page of the session's interactions, oldest first."""
        return (yield Call("GET", self._path("sessions", session_id, "interactions"), parse=_one(InteractionPage),
                           params=_query(limit=limit, offset=offset)))

    @operation
    def interaction(self, session_id: int, interaction_id: int) -> Plan[Interaction]:
        """One interaction with its processing status (pending, kept, filtered, failed)."""
        return (yield Call("GET", self._path("sessions", session_id, "interactions", interaction_id),
                           parse=_one(Interaction)))

    @operation
    def retry_interaction(self, session_id: int, interaction_id: int) -> Plan[Interaction]:
        """Run again what failed of an interaction: a failed one through the whole write path, a kept one's
        failed stages (`stage_errors`) on its memory. Answers the interaction as it is now (whatever still
        fails is recorded again); `Conflict` (409) when nothing of it failed. For the project's agent token,
        curators and admins."""
        return (yield Call("POST", self._path("sessions", session_id, "interactions", interaction_id, "retry"),
                           parse=_one(Interaction)))

    @operation
    def forget_memory(self, memory_id: int) -> Plan[Forgotten]:
        """Forget one memory softly: out of recall, pages and the mirror (an admin may delete it for good).
        Safe to repeat."""
        return (yield Call("POST", self._path("memories", memory_id, "forget"), parse=_one(Forgotten)))

    # Memories at risk --------------------------------------------------------------------------------

    @operation
    def memories_page(self, *, at_risk: bool | None = None, session_id: int | None = None, limit: int = 100,
                      offset: int = 0) -> Plan[MemoryPage]:
        """One page of the project's memories (not forgotten), newest first; `at_risk=True` keeps those a change
        to what they depend on may have made out of date, most at risk first, each with `at_risk_why`."""
        return (yield self._memories(at_risk, session_id, limit, offset))

    @operation
    def memories(self, *, at_risk: bool | None = None, session_id: int | None = None, page_size: int = 100,
                 max_memories: int = 10_000) -> Plan[list[Memory]]:
        """The project's memories as `memories_page` lists them, following the pages (up to `max_memories`).
        `memories(at_risk=True, session_id=…)` is what to check again after a value changed."""
        collected: list[Memory] = []
        while len(collected) < max_memories:
            page = yield self._memories(at_risk, session_id, page_size, len(collected))
            collected += page.results
            if page.next is None or not page.results:
                break
        return collected[:max_memories]

    def _memories(self, at_risk: bool | None, session_id: int | None, limit: int, offset: int) -> Call[MemoryPage]:
        flag = None if at_risk is None else str(at_risk).lower()
        return Call("GET", self._path("memories"), parse=_one(MemoryPage),
                    params=_query(at_risk=flag, session=session_id, limit=limit, offset=offset))

    @operation
    def risks(self, memory_id: int) -> Plan[list[Risk]]:
        """Why a memory is at risk: what it depends on changed, how, through which edges (empty: it is not)."""
        return (yield Call("GET", self._path("memories", memory_id, "risks"), parse=_many(Risk)))

    # Recall, graph and change log ---------------------------------------------------------------------

    @operation
    def recall(self, query: str, *, session_id: int | None = None, k: int | None = None,
               preset: str | None = None, params: JSON | None = None) -> Plan[Recall]:
        """Recall by reconstruction. `preset`: vector, hybrid or ripple (default: the project's); `params`
        overrides the preset's knobs, e.g. {"max_hops": 3}."""
        body: JSON = {"query": query, "params": params or {}}
        body.update(_query(session_id=session_id, k=k, preset=preset))
        return (yield Call("POST", self._path("recall"), parse=_one(Recall), json=body))

    @operation
    def graph(self, session_id: int, *, around: int | None = None, hops: int | None = None,
              limit: int | None = None) -> Plan[Graph]:
        """The session's memories, edges and entities; `around` takes only a memory's neighbourhood."""
        return (yield Call("GET", self._path("sessions", session_id, "graph"), parse=_one(Graph),
                           params=_query(around=around, hops=hops, limit=limit)))

    @operation
    def changes(self, session_id: int, *, after: int = 0, limit: int = 500, memory: int | None = None,
                edge: int | None = None) -> Plan[ChangePage]:
        """One page of the change log after the cursor `after`."""
        return (yield self._changes(session_id, after, limit, memory, edge))

    @operation
    def changes_since(self, session_id: int, after: int = 0, *, page_size: int = 500,
                      max_changes: int = 100_000) -> Plan[ChangePage]:
        """Every change after `after`, following the cursor page by page (stopping at `max_changes`;
        `has_more` then says there is more)."""
        collected = []
        while True:
            page = yield self._changes(session_id, after, page_size, None, None)
            collected.extend(page.changes)
            after = page.last_change_id
            if not page.has_more or len(collected) >= max_changes:
                return ChangePage(changes=collected, last_change_id=after, has_more=page.has_more)

    def _changes(self, session_id: int, after: int, limit: int, memory: int | None,
                 edge: int | None) -> Call[ChangePage]:
        return Call("GET", self._path("sessions", session_id, "changes"), parse=_one(ChangePage),
                    params=_query(after=after, limit=limit, memory=memory, edge=edge))

    # Store --------------------------------------------------------------------------------------------
    # The key-value store behind langgraph_store.py: items in namespaces (lists of labels), each put also
    # remembered in the namespace's session, so a search with a query is a recall. Every call is safe to
    # repeat: a put of the same value changes nothing, a delete of a missing item says deleted=False.

    @operation
    def store_get(self, namespace: Sequence[str], key: str) -> Plan[StoreItem | None]:
        """The item, or None when there is none."""
        body = {"namespace": list(namespace), "key": key}
        return (yield Call("POST", self._path("store", "get"), parse=_optional(StoreItem, "item"), json=body))

    @operation
    def store_put(self, namespace: Sequence[str], key: str, value: Mapping[str, Any], *,
                  index: Sequence[str] | Literal[False] | None = None, wait: bool = False,
                  recall_id: int | None = None, used: Sequence[int] = ()) -> Plan[StorePut]:
        """Put the item. `index`: the field paths to remember ("a.b", "items[*].text"), False for none, None
        for the whole value. `wait=True` has the server process it first, so a search right after finds it.
        `recall_id` (a search's items carry it) and `used`: what the value was written from (edges of origin use)."""
        body = {"namespace": list(namespace), "key": key, "value": dict(value),
                "index": index if index is None or index is False else list(index),
                **({"recall_id": recall_id} if recall_id is not None else {}), **({"used": list(used)} if used else {})}
        return (yield Call("POST", self._path("store", "put"), parse=_one(StorePut), params=_query(wait=wait),
                           json=body))

    @operation
    def store_delete(self, namespace: Sequence[str], key: str) -> Plan[StoreDeleted]:
        """Delete the item; its memories are forgotten softly."""
        body = {"namespace": list(namespace), "key": key}
        return (yield Call("POST", self._path("store", "delete"), parse=_one(StoreDeleted), json=body))

    @operation
    def store_search(self, namespace_prefix: Sequence[str] = (), *, query: str | None = None,
                     filter: JSON | None = None, limit: int = 10, offset: int = 0) -> Plan[list[StoreItem]]:
        """Items under the prefix: recalled by `query` (best first, with scores), else newest first. `filter`
        matches value fields: {"field": v} or {"field": {"$gt": 3}}."""
        body = {"namespace_prefix": list(namespace_prefix), "query": query, "filter": filter, "limit": limit,
                "offset": offset}
        return (yield Call("POST", self._path("store", "search"), parse=_many(StoreItem, "items"), json=body))

    @operation
    def store_namespaces(self, *, prefix: Sequence[str] = (), suffix: Sequence[str] = (),
                         max_depth: int | None = None, limit: int = 100,
                         offset: int = 0) -> Plan[list[tuple[str, ...]]]:
        """The namespaces holding items ("*" in `prefix`/`suffix` matches any label), cut to `max_depth`."""
        body = {"prefix": list(prefix), "suffix": list(suffix), "max_depth": max_depth, "limit": limit,
                "offset": offset}
        return (yield Call("POST", self._path("store", "namespaces"),
                           parse=lambda answer: [tuple(ns) for ns in answer["namespaces"]], json=body))
