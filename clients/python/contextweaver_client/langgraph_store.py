"""A LangGraph store (`BaseStore`) backed by ContextWeaver: pip install "contextweaver-client[langgraph]".

    from contextweaver_client import Client
    from contextweaver_client.langgraph_store import ContextWeaverStore

    store = ContextWeaverStore(Client(url, token, project="travel"))
    graph = builder.compile(store=store)

It is a key-value store first: `get` returns exactly the value last put, `delete` makes it None. Each put
also goes into ContextWeaver's memory graph (the namespace's session), so `search(..., query=...)` is a
recall by reconstruction mapped back to the items, scored by the recall, and people can see, correct or
mark sensitive what the agent stored in the web app. A value replaced or deleted is forgotten softly, so
it never comes back in recall. `index` names the fields whose text is remembered (`False`: none, so such an
item is found by `search` without a query only); the store's `fields` are the default, else the whole value.

Differences from LangGraph's own stores, on purpose:
- the embedding and the search run on the server (its embedder, its recall): there is no `index=` config
  with an `embed` function;
- the selective filter decides what becomes a memory: a value with no information ("ok") or one repeating
  another is kept as an item but may not be found by a query;
- a value whose memory a curator marked sensitive comes back masked (every field "[sensitive]") to agents;
- TTLs are not supported (`supports_ttl = False`): a put with a ttl raises NotImplementedError, and
  `refresh_ttl` has nothing to refresh;
- ops of one batch run in order, so a get after a put in the same batch sees the put.

`batch` runs on the blocking `Client`, `abatch` on the `AsyncClient` (or, given only a `Client`, on it in a
worker thread). Both turn each op into the same client operation (`_request`) and its result into
LangGraph's types (`_result`), so there is one translation for both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from .client import AsyncClient, Client
from .models import StoreItem

RESERVED_ROOT = "langgraph"  # LangGraph keeps this root label for itself


@dataclass(frozen=True)
class _Request:
    """One client operation for one op, and how its answer becomes LangGraph's result."""

    operation: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Callable[[Any], Result]


class ContextWeaverStore(BaseStore):
    """LangGraph's BaseStore over ContextWeaver's store API (`Client.store_*`).

    `wait` (default True): a put returns once the server has turned it into a memory, so a search right
    after finds it, as with LangGraph's own stores; False hands it to the server's workers instead.
    `fields`: the value's field paths remembered when a put names no `index` (default: the whole value).
    A put after a search by query says it was written from that search (`recall_id`, once): the server links
    the new memory to what the search returned (edges of origin use), as an agent's recall-then-act.
    """

    supports_ttl = False

    def __init__(self, client: Client | None = None, aclient: AsyncClient | None = None, *, wait: bool = True,
                 fields: Sequence[str] | None = None) -> None:
        if client is None and aclient is None:
            raise ValueError("Give a Client (for batch and, in a thread, abatch) or an AsyncClient (abatch), "
                             "or both.")
        self.client, self.aclient = client, aclient
        self.wait = wait
        self.fields = list(fields) if fields is not None else None
        self.last_recall: int | None = None  # the last search by query, until a put uses it

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:
            raise RuntimeError("This store has only an AsyncClient: use the async methods (aget, aput, asearch…) "
                               "or give it a Client too.")
        results = []
        for op in ops:
            request = self._request(op)
            results.append(request.result(getattr(self.client, request.operation)(*request.args, **request.kwargs)))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.aclient is None:
            return await asyncio.to_thread(self.batch, list(ops))
        results = []
        for op in ops:
            request = self._request(op)
            answer = await getattr(self.aclient, request.operation)(*request.args, **request.kwargs)
            results.append(request.result(answer))
        return results

    def _request(self, op: Op) -> _Request:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return _Request("store_get", (op.namespace, str(op.key)), {}, _item)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return _Request("store_search", (op.namespace_prefix,),
                            {"query": op.query, "filter": op.filter, "limit": op.limit, "offset": op.offset},
                            self._searched)
        if isinstance(op, ListNamespacesOp):
            return _Request("store_namespaces", (), _namespace_conditions(op), list)
        raise TypeError(f"Unknown store operation: {type(op).__name__}")

    def _put(self, op: PutOp) -> _Request:
        if op.value is None:
            return _Request("store_delete", (op.namespace, str(op.key)), {}, lambda _: None)
        if not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if op.namespace[0] == RESERVED_ROOT:
            raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {op.namespace}')
        if op.ttl is not None:
            raise NotImplementedError(f"TTL is not supported by {type(self).__name__}; put without ttl "
                                      "(delete the item when it should go).")
        index = self.fields if op.index is None else op.index
        recall, self.last_recall = self.last_recall, None  # a search leads to one put, not to every later one
        return _Request("store_put", (op.namespace, str(op.key), op.value),
                        {"index": index, "wait": self.wait, "recall_id": recall}, lambda _: None)

    def _searched(self, items: list[StoreItem]) -> list[SearchItem]:
        recalls = [item.recall_id for item in items if item.recall_id is not None]
        if recalls:
            self.last_recall = recalls[0]
        return [_search_item(item) for item in items]


def _namespace_conditions(op: ListNamespacesOp) -> dict[str, Any]:
    conditions: dict[str, Any] = {"max_depth": op.max_depth, "limit": op.limit, "offset": op.offset}
    for condition in op.match_conditions or ():
        if condition.match_type not in ("prefix", "suffix"):
            raise ValueError(f"Unsupported match type: {condition.match_type}")
        if condition.match_type in conditions:
            raise ValueError(f"One {condition.match_type} condition at most (got several).")
        conditions[condition.match_type] = tuple(condition.path)
    return conditions


def _item(found: StoreItem | None) -> Item | None:
    if found is None:
        return None
    return Item(value=found.value, key=found.key, namespace=tuple(found.namespace), created_at=found.created_at,
                updated_at=found.updated_at)


def _search_item(found: StoreItem) -> SearchItem:
    return SearchItem(namespace=tuple(found.namespace), key=found.key, value=found.value,
                      created_at=found.created_at, updated_at=found.updated_at, score=found.score)
