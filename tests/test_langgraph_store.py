"""The LangGraph store (clients/python/contextweaver_client/langgraph_store.py) against a live server.

LangGraph ships no contract tests for stores, so this is the equivalent: every BaseStore method (put,
get, search, delete, list_namespaces and their async forms, batch/abatch with mixed ops) on the
blocking Client and on the AsyncClient, with overwrite, filters, prefix/suffix/depth, limit/offset, TTL
refused and namespace rules; and a real StateGraph compiled with the store, whose node writes memories
and searches them. The contract is written once, as coroutines: the sync run hands them the store's
blocking methods behind `Blocking` (so batch runs on the Client), the async run the store's own
async methods (abatch on the AsyncClient).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypedDict

import pytest
from contextweaver_client import AsyncClient, BadRequest, Client, Retry
from contextweaver_client.langgraph_store import ContextWeaverStore
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

from curation.services import memory_update
from memory.engine.projects import project_create, token_issue
from memory.engine.vector_index import space_for
from memory.models import EmbeddingSpace, Interaction, Memory, MemoryStatus, StoreItem
from memory.providers import get_embedder
from memory.visibility import SENSITIVE_MASK

pytestmark = pytest.mark.django_db(transaction=True)

FAST = Retry(attempts=3, backoff=0.01, max_wait=0.05)
_server_space: dict[str, tuple[int, int]] = {}  # the embedding space row the module's server has cached


@pytest.fixture(autouse=True)
def server_embedding_space(module_server_url):
    """The server process caches its embedding space's row id; the flush after each test deletes the row.
    Creating the row once and putting it back with the same id before each test keeps the server's id valid,
    so every test here may have the server make memories (the HNSW index of that id survives a flush)."""
    embedder = get_embedder()
    if embedder.space_name not in _server_space:
        space = space_for(embedder)  # with its HNSW index, which outlives the rows
        _server_space[embedder.space_name] = (space.pk, space.dimensions)
    pk, dimensions = _server_space[embedder.space_name]
    EmbeddingSpace.objects.get_or_create(pk=pk, defaults={"name": embedder.space_name, "dimensions": dimensions})


@pytest.fixture
def token(module_server_url) -> str:
    return token_issue(project=project_create(name="LangGraph", slug="lg"))[1]


class Blocking:
    """The store's blocking methods as coroutines, so one contract drives both kinds of call."""

    def __init__(self, store: ContextWeaverStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        method = self.store.batch if name == "abatch" else getattr(self.store, name.removeprefix("a"))

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        return call


def run_contract(mode: str, url: str, token: str, contract: Callable[[Any], Awaitable[None]]) -> None:
    if mode == "sync":
        with Client(url, token, project="lg", retry=FAST) as client:
            asyncio.run(contract(Blocking(ContextWeaverStore(client))))
        return

    async def with_async_client() -> None:
        async with AsyncClient(url, token, project="lg", retry=FAST) as aclient:
            await contract(ContextWeaverStore(aclient=aclient))

    asyncio.run(with_async_client())


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


@MODES
def test_put_get_overwrite_delete(mode, module_server_url, token):
    async def contract(store) -> None:
        ns = ("users", "alice")
        assert await store.aget(ns, "food") is None
        value = {"text": "Alice loves grilled sardines", "stars": 5, "tags": ["fish", "porto"], "n": {"x": None}}
        await store.aput(ns, "food", value)
        item = await store.aget(ns, "food")
        assert isinstance(item, Item) and item.value == value and item.key == "food" and item.namespace == ns
        assert isinstance(item.created_at, datetime) and item.created_at <= item.updated_at
        await store.aput(ns, "food", {"text": "Alice no longer eats fish; she is vegetarian now"})
        again = await store.aget(ns, "food")
        assert again.value == {"text": "Alice no longer eats fish; she is vegetarian now"}
        assert again.created_at == item.created_at and again.updated_at > item.updated_at
        await store.adelete(ns, "food")
        assert await store.aget(ns, "food") is None
        await store.adelete(ns, "food")  # deleting what is gone is fine
        await store.aput(ns, "food", {"text": "Alice is back to eating fish"})
        assert (await store.aget(ns, "food")).value == {"text": "Alice is back to eating fish"}

    run_contract(mode, module_server_url, token, contract)
    replaced = Interaction.objects.filter(content__contains="sardines").get()
    assert Memory.objects.get(sources=replaced).status == MemoryStatus.FORGOTTEN
    assert StoreItem.objects.get().value == {"text": "Alice is back to eating fish"}


@MODES
def test_search_by_query_is_a_recall_of_current_values(mode, module_server_url, token):
    async def contract(store) -> None:
        ns = ("memories", "bob")
        await store.aput(ns, "hotel", {"text": "Bob booked the Alfama hotel in Lisbon for three nights"})
        await store.aput(ns, "allergy", {"text": "Bob is allergic to shellfish, so no seafood restaurants"})
        await store.aput(ns, "car", {"text": "Bob rented a small electric car for the Douro valley day trip"})
        await store.aput(ns, "secret", {"text": "Bob's shellfish note is private"}, index=False)
        found = await store.asearch(("memories",), query="which food is Bob allergic to?", limit=2)
        assert all(isinstance(hit, SearchItem) for hit in found) and found[0].key == "allergy"
        assert found[0].score is not None and found[0].score > 0
        assert "secret" not in [hit.key for hit in await store.asearch(("memories",), query="shellfish note", limit=5)]
        await store.aput(ns, "allergy", {"text": "Bob's allergy test was negative, he eats anything now"})
        after = await store.asearch(("memories", "bob"), query="shellfish seafood allergy", limit=3)
        assert all("so no seafood" not in hit.value["text"] for hit in after)
        assert await store.asearch(("memories", "bob"), query="electric car", filter={"text": "nothing"}) == []
        await store.aput(("other",), "car", {"text": "Carol rented an electric car too"})
        both = await store.asearch((), query="rented an electric car", limit=5)
        assert {("memories", "bob"), ("other",)} <= {hit.namespace for hit in both}

    run_contract(mode, module_server_url, token, contract)


@MODES
def test_search_without_query_filters_orders_and_pages(mode, module_server_url, token):
    async def contract(store) -> None:
        for number, (colour, size) in enumerate([("red", 1), ("blue", 5), ("red", 9)]):
            await store.aput(("shop", "items"), f"i{number}", {"colour": colour, "size": size}, index=False)
        await store.aput(("shop", "archive"), "old", {"colour": "red", "size": 20}, index=["colour"])

        async def keys(prefix, **kwargs):
            return [hit.key for hit in await store.asearch(prefix, **kwargs)]

        assert await keys(("shop",)) == ["old", "i2", "i1", "i0"]
        assert await keys(("shop", "items"), filter={"colour": "red"}) == ["i2", "i0"]
        assert await keys(("shop",), filter={"size": {"$gte": 5, "$lt": 20}}) == ["i2", "i1"]
        assert await keys(("shop",), filter={"colour": {"$ne": "red"}}) == ["i1"]
        assert await keys(("shop",), limit=2, offset=1) == ["i2", "i1"]
        assert all(hit.score is None for hit in await store.asearch(("shop",)))
        with pytest.raises(BadRequest):
            await store.asearch(("shop",), filter={"size": {"$gt": "big"}})

    run_contract(mode, module_server_url, token, contract)


@MODES
def test_list_namespaces(mode, module_server_url, token):
    async def contract(store) -> None:
        for namespace in (("a", "b", "c"), ("a", "b", "d"), ("a", "x", "c"), ("z", "c")):
            await store.aput(namespace, "k", {"v": 1}, index=False)
        assert await store.alist_namespaces() == [("a", "b", "c"), ("a", "b", "d"), ("a", "x", "c"), ("z", "c")]
        assert await store.alist_namespaces(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d")]
        assert await store.alist_namespaces(prefix=("a", "*", "c")) == [("a", "b", "c"), ("a", "x", "c")]
        assert await store.alist_namespaces(suffix=("c",)) == [("a", "b", "c"), ("a", "x", "c"), ("z", "c")]
        assert await store.alist_namespaces(prefix=("a",), suffix=("d",)) == [("a", "b", "d")]
        assert await store.alist_namespaces(max_depth=2) == [("a", "b"), ("a", "x"), ("z", "c")]
        assert await store.alist_namespaces(limit=1, offset=2) == [("a", "x", "c")]

    run_contract(mode, module_server_url, token, contract)


@MODES
def test_batch_runs_mixed_ops_in_order(mode, module_server_url, token):
    async def contract(store) -> None:
        ns = ("batch",)
        results = await store.abatch([
            PutOp(ns, "one", {"text": "The first note is about Lisbon trams"}),
            GetOp(ns, "one"),
            PutOp(ns, "two", {"text": "The second note is about Porto wine"}, index=False),
            SearchOp(ns, filter={"text": "The second note is about Porto wine"}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("batch",)),)),
            PutOp(ns, "one", None),
            GetOp(ns, "one"),
            GetOp(ns, "two", refresh_ttl=False),
        ])
        assert results[0] is None and results[2] is None and results[5] is None
        assert results[1].value == {"text": "The first note is about Lisbon trams"}
        assert [hit.key for hit in results[3]] == ["two"]
        assert results[4] == [("batch",)]
        assert results[6] is None and results[7].key == "two"

    run_contract(mode, module_server_url, token, contract)


@MODES
def test_ttl_and_namespace_rules_are_refused_clearly(mode, module_server_url, token):
    async def contract(store) -> None:
        with pytest.raises(NotImplementedError, match="TTL"):
            await store.aput(("t",), "k", {"v": 1}, ttl=5)
        with pytest.raises(NotImplementedError, match="TTL"):
            await store.abatch([PutOp(("t",), "k", {"v": 1}, ttl=5.0)])
        for bad in (("langgraph", "x"), ("a.b",), ()):
            with pytest.raises(InvalidNamespaceError):
                await store.aput(bad, "k", {"v": 1})
        with pytest.raises(InvalidNamespaceError):
            await store.abatch([GetOp(("a.b",), "k")])
        await store.aput(("t",), "k", {"v": 1}, ttl=None)
        assert (await store.aget(("t",), "k", refresh_ttl=True)).value == {"v": 1}
        with pytest.raises(BadRequest):
            await store.aput(("t",), "k", {"text": "x" * 40_000})

    run_contract(mode, module_server_url, token, contract)
    assert StoreItem.objects.count() == 1, "the refused puts wrote nothing"


def test_a_value_marked_sensitive_comes_back_masked_to_the_agent(module_server_url, token):
    with Client(module_server_url, token, project="lg", retry=FAST) as client:
        store = ContextWeaverStore(client)
        store.put(("users", "dan"), "pin", {"text": "Dan's safe PIN at the Lisbon hotel is 5521", "pin": 5521})
        memory = Memory.objects.get(sources__store_items__key="pin")
        memory_update(project=memory.project, actor="test", memory_id=memory.pk, sensitive=True)
        assert store.get(("users", "dan"), "pin").value == {"text": SENSITIVE_MASK, "pin": SENSITIVE_MASK}
        assert client.store_get(["users", "dan"], "pin").sensitive is True
        assert "5521" not in str(store.search(("users",), query="safe PIN at the hotel"))


class Trip(TypedDict):
    user: str
    said: str
    recalled: list[str]


def remember_and_recall(state: Trip, runtime: Runtime) -> dict:
    """A node that stores what the user said and searches the user's memories for the trip."""
    namespace = ("travellers", state["user"])
    runtime.store.put(namespace, f"note-{len(state['said'])}", {"text": state["said"]})
    hits = runtime.store.search(namespace, query="Which seat does the traveller want?", limit=2)
    return {"recalled": [hit.value["text"] for hit in hits]}


def test_a_state_graph_remembers_and_searches_through_the_store(module_server_url, token):
    with Client(module_server_url, token, project="lg", retry=FAST) as client:
        store = ContextWeaverStore(client)
        store.put(("travellers", "eve"), "meal", {"text": "Eve wants a vegetarian meal on the flight"})
        builder = StateGraph(Trip)
        builder.add_node("remember_and_recall", remember_and_recall)
        builder.add_edge(START, "remember_and_recall")
        builder.add_edge("remember_and_recall", END)
        graph = builder.compile(store=store)
        out = graph.invoke({"user": "eve", "said": "Eve always wants an aisle seat on long flights",
                            "recalled": []})
    assert out["recalled"][0] == "Eve always wants an aisle seat on long flights"
    stored = StoreItem.objects.get(namespace=["travellers", "eve"], key=f"note-{len(out['said'])}")
    assert Memory.objects.filter(sources=stored.interaction_id, status=MemoryStatus.ACTIVE).exists()


@MODES
def test_a_put_after_a_search_says_it_was_written_from_it(mode, module_server_url, token):
    """The store's recall-then-act: the memory of a value put after a search by query gets edges of origin
    use from what that search's recall returned; the put after it does not (the search is used once)."""
    from administration.engine_settings import engine_settings_set
    from memory.models import Edge, Project

    # The store names no memories it used: the recall's ranks make the edges, which a project turns on.
    engine_settings_set(project=Project.objects.get(slug="lg"), actor="test", values={"use_edge_threshold": 0.9})

    async def contract(store) -> None:
        ns = ("trips", "lisbon")
        await store.aput(ns, "flight", {"text": "Flight TP1331 lands in Lisbon at 09:35 on 2 June"})
        found = await store.asearch(ns, query="when does the flight land in Lisbon?")
        assert [item.key for item in found][:1] == ["flight"]
        await store.aput(ns, "pickup", {"text": "Airport pickup booked at arrivals for 10:15 on 2 June"})
        await store.aput(ns, "dinner", {"text": "Dinner booked at Casa Lina for 20:00 on 2 June"})

    run_contract(mode, module_server_url, token, contract)
    flight = Memory.objects.get(sources__content__startswith="Flight TP1331")
    pickup = Memory.objects.get(sources__content__startswith="Airport pickup")
    dinner = Memory.objects.get(sources__content__startswith="Dinner booked")
    assert Edge.objects.filter(source=flight, target=pickup, origin="use").exists()
    assert not Edge.objects.filter(target=dinner, origin="use").exists()
    assert Interaction.objects.get(memories=pickup).recall_id is not None
