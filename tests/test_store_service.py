"""The store behind LangGraph's BaseStore (memory/engine/store, memory/api/store.py), in-process on the real
database: an item is kept exactly and also remembered; what replaces or deletes it leaves recall; masking;
bad input refused with nothing written."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from curation.services import memory_update
from memory.access import Access
from memory.engine.pipeline import interaction_process
from memory.engine.projects import token_issue
from memory.engine.store import item_delete, item_get, item_put, items_search, namespaces_list
from memory.engine.store.items import REPLACED
from memory.engine.store.paths import indexed_text
from memory.errors import ValidationFailed
from memory.models import (
    AgentSession,
    Interaction,
    InteractionStatus,
    Membership,
    Memory,
    MemoryStatus,
    Role,
    StoreItem,
)
from memory.visibility import SENSITIVE_MASK

pytestmark = pytest.mark.django_db

ALICE = ["users", "alice"]


def put(project, namespace, key, value, **kwargs):
    return item_put(project=project, namespace=namespace, key=key, value=value, actor="test",
                    wait=kwargs.pop("wait", True), **kwargs)


def memories_of(item: StoreItem) -> list[Memory]:
    return list(Memory.objects.filter(sources=item.interaction_id))


def agent(project) -> Access:
    """An agent's access (its token's), as the API builds it."""
    return Access(project, token=token_issue(project=project)[0])


def recalled_values(project, query: str, prefix=("users",)) -> list[dict]:
    return [f.item.value for f in items_search(agent(project), list(prefix), query=query, limit=5)]


def test_indexed_text_reads_langgraph_paths():
    value = {"text": "Alice moved to Porto", "tags": ["move", "city"], "meta": {"year": 2024, "ok": True},
             "notes": [{"body": "first"}, {"body": "second"}]}
    assert indexed_text(value, ["text"]) == "Alice moved to Porto"
    assert indexed_text(value, ["tags[0]", "tags[-1]", "meta.year"]) == "move\ncity\n2024"
    assert indexed_text(value, ["notes[*].body"]) == "first\nsecond"
    assert indexed_text(value, None) == indexed_text(value, ["$"]) == \
        "Alice moved to Porto\nmove\ncity\n2024\nfirst\nsecond"
    assert indexed_text(value, ["missing", "tags[7]"]) == ""
    for bad in ("a..b", ".a", "a[x]", "a[", ""):
        with pytest.raises(ValidationFailed):
            indexed_text(value, [bad])


def test_put_keeps_the_value_exactly_and_remembers_its_text_in_the_namespaces_session(project):
    value = {"text": "Alice is allergic to peanuts, never book Thai street food", "level": 3, "nested": {"a": [1]}}
    result = put(project, ALICE, "allergy", value)
    item = item_get(project, ALICE, "allergy")
    assert result.created and item.value == value and item.namespace == ALICE
    session = AgentSession.objects.get(pk=item.session_id)
    assert session.title == "Store: users / alice" and session.external_id.startswith("store:")
    interaction = Interaction.objects.get(pk=item.interaction_id)
    assert interaction.session_id == session.pk and interaction.kind == "observation"
    assert interaction.content == "Alice is allergic to peanuts, never book Thai street food\n3\n1"
    assert interaction.metadata == {"store": {"namespace": ALICE, "key": "allergy"}}
    assert interaction.status == InteractionStatus.KEPT and memories_of(item)
    assert put(project, ["users", "bob"], "allergy", {"text": "Bob likes peanuts a lot"}).item.session_id != \
        session.pk, "another namespace is another session"
    assert recalled_values(project, "what is Alice allergic to?")[0] == value


def test_a_repeated_put_changes_nothing_but_the_time(project):
    first = put(project, ALICE, "city", {"text": "Alice lives in Porto near the river"})
    again = put(project, ALICE, "city", {"text": "Alice lives in Porto near the river"})
    assert not again.created and again.item.interaction_id == first.item.interaction_id
    assert again.item.updated_at > first.item.updated_at and Interaction.objects.count() == 1


def test_overwrite_forgets_the_replaced_value_softly(project):
    old = put(project, ALICE, "passport", {"text": "Alice's passport number is P-OLD-4411 until March"})
    old_memories = memories_of(old.item)
    assert old_memories and "P-OLD-4411" in recalled_values(project, "passport number")[0]["text"]
    new = put(project, ALICE, "passport", {"text": "Alice renewed her passport: number P-NEW-9902"})
    assert new.forgotten_memory_ids == [m.pk for m in old_memories]
    assert {m.status for m in Memory.objects.filter(pk__in=new.forgotten_memory_ids)} == {MemoryStatus.FORGOTTEN}
    assert item_get(project, ALICE, "passport").value == {"text": "Alice renewed her passport: number P-NEW-9902"}
    found = recalled_values(project, "passport number P-OLD-4411")
    assert found and all("P-OLD" not in value["text"] for value in found)
    assert not Memory.objects.filter(status=MemoryStatus.ACTIVE, content__contains="P-OLD").exists()


def test_a_replaced_value_not_processed_yet_never_becomes_a_memory(project):
    pending = put(project, ALICE, "plan", {"text": "Alice plans a trip to Kyoto in April"}, wait=False)
    first = Interaction.objects.get(pk=pending.item.interaction_id)
    assert first.status == InteractionStatus.PENDING  # the test transaction never commits: no inline processing
    put(project, ALICE, "plan", {"text": "Alice plans a trip to Osaka in May instead"})
    first.refresh_from_db()
    assert first.status == InteractionStatus.FILTERED and first.reason == REPLACED
    assert interaction_process(interaction_id=first.pk).status == InteractionStatus.FILTERED  # the worker, later
    assert not Memory.objects.filter(sources=first).exists()


def test_a_memory_another_item_still_holds_is_not_forgotten(project):
    text = {"text": "The team offsite is in Lisbon on the 4th of June"}
    one, two = put(project, ["team"], "offsite", text), put(project, ["team"], "offsite-copy", text)
    shared = memories_of(one.item)
    assert shared and memories_of(two.item) == shared, "the repeat is attached to the memory it repeats"
    replaced = put(project, ["team"], "offsite", {"text": "Offsite moved: Madrid, 9th of June"})
    assert replaced.forgotten_memory_ids == []
    assert Memory.objects.get(pk=shared[0].pk).status == MemoryStatus.ACTIVE
    assert "offsite-copy" in [f.item.key for f in items_search(agent(project), ["team"],
                                                                query="Lisbon offsite", limit=3)]


def test_delete_removes_the_item_and_forgets_its_memories(project):
    kept = put(project, ALICE, "pin", {"text": "Alice's door code is 7-3-9-1 for the Porto flat"})
    memory_ids = [m.pk for m in memories_of(kept.item)]
    deleted = item_delete(project=project, namespace=ALICE, key="pin", actor="test")
    assert deleted.forgotten_memory_ids == memory_ids
    assert item_get(project, ALICE, "pin") is None
    assert Memory.objects.get(pk=memory_ids[0]).status == MemoryStatus.FORGOTTEN
    assert item_delete(project=project, namespace=ALICE, key="pin", actor="test") is None
    assert recalled_values(project, "door code") == []


def test_index_false_keeps_the_item_out_of_the_memory_graph(project):
    result = put(project, ALICE, "raw", {"text": "Alice's raw notes about the Porto flat"}, index=False)
    assert result.item.interaction_id is None and Interaction.objects.count() == 0
    assert [f.item.key for f in items_search(agent(project), ALICE)] == ["raw"]
    assert recalled_values(project, "Porto flat notes") == []


def test_search_without_query_filters_pages_and_orders_newest_first(project):
    for number, (colour, size) in enumerate([("red", 1), ("blue", 5), ("red", 9), ("red", 12)]):
        put(project, ["shop", "items"], f"i{number}", {"colour": colour, "size": size, "spec": {"w": number}},
            index=False)
    put(project, ["shop", "other"], "x", {"colour": "red", "size": 3}, index=False)
    reader = agent(project)

    def keys(prefix, **kwargs):
        return [f.item.key for f in items_search(reader, prefix, **kwargs)]

    assert keys(["shop", "items"]) == ["i3", "i2", "i1", "i0"]
    assert keys(["shop"], conditions={"colour": "red"}) == ["x", "i3", "i2", "i0"]
    assert keys(["shop", "items"], conditions={"size": {"$gt": 1, "$lte": 9}}) == ["i2", "i1"]
    assert keys(["shop", "items"], conditions={"colour": {"$ne": "red"}}) == ["i1"]
    assert keys(["shop", "items"], conditions={"spec": {"w": 2}}) == ["i2"]
    assert keys(["shop", "items"], conditions={"nothing": {"$ne": 1}}) == ["i3", "i2", "i1", "i0"]
    assert keys(["shop"], limit=2, offset=1) == ["i3", "i2"]
    assert keys(["sho"]) == [] and keys([]) == ["x", "i3", "i2", "i1", "i0"]
    for bad in ({"size": {"$gt": "big"}}, {"size": {"$near": 1}}, {"size": {"$gt": 1, "w": 2}}):
        with pytest.raises(ValidationFailed):
            keys(["shop"], conditions=bad)


def test_namespaces_match_prefix_suffix_wildcards_depth_and_pages(project):
    for namespace in (["a", "b", "c"], ["a", "b", "d"], ["a", "x", "c"], ["z", "c"], ["a"]):
        put(project, namespace, "k", {"v": 1}, index=False)

    def listed(**kwargs):
        return namespaces_list(project.pk, **kwargs)

    assert listed() == [["a"], ["a", "b", "c"], ["a", "b", "d"], ["a", "x", "c"], ["z", "c"]]
    assert listed(prefix=["a", "b"]) == [["a", "b", "c"], ["a", "b", "d"]]
    assert listed(prefix=["a", "*", "c"]) == [["a", "b", "c"], ["a", "x", "c"]]
    assert listed(suffix=["c"]) == [["a", "b", "c"], ["a", "x", "c"], ["z", "c"]]
    assert listed(prefix=["a"], suffix=["*", "c"]) == [["a", "b", "c"], ["a", "x", "c"]]
    assert listed(max_depth=2) == [["a"], ["a", "b"], ["a", "x"], ["z", "c"]]
    assert listed(limit=2, offset=1) == [["a", "b", "c"], ["a", "b", "d"]]


@pytest.fixture
def people(project):
    users = {}
    for role in (Role.VIEWER, Role.CURATOR):
        users[role] = get_user_model().objects.create_user(f"store-{role}", password="a-long-password-1")
        Membership.objects.create(project=project, user=users[role], role=role)
    return users


def client_for(user=None, token: str | None = None) -> APIClient:
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    else:
        client.force_login(user)
    return client


def test_a_value_whose_memory_is_sensitive_leaves_masked_for_tokens_and_viewers(project, raw_token, people):
    secret = put(project, ALICE, "card", {"text": "Alice's card PIN is 4432 for the hotel safe", "digits": 4432})
    put(project, ALICE, "food", {"text": "Alice loves grilled sardines in Porto"})
    memory = memories_of(secret.item)[0]
    memory_update(project=project, actor="test", memory_id=memory.pk, sensitive=True)
    url = f"/api/projects/{project.slug}/store/"
    address = {"namespace": ALICE, "key": "card"}
    masked = {"text": SENSITIVE_MASK, "digits": SENSITIVE_MASK}
    for reader in (client_for(token=raw_token), client_for(people[Role.VIEWER])):
        got = reader.post(url + "get/", address, format="json").json()["item"]
        assert got["value"] == masked and got["sensitive"] is True
        listed = reader.post(url + "search/", {"namespace_prefix": ALICE}, format="json").json()["items"]
        assert {i["key"]: i["value"] for i in listed}["card"] == masked
        probed = reader.post(url + "search/", {"namespace_prefix": ALICE, "filter": {"digits": 4432}},
                             format="json").json()["items"]
        assert probed == [], "a filter must not tell what a masked value holds"
        recalled = reader.post(url + "search/", {"namespace_prefix": ALICE, "query": "PIN for the hotel safe"},
                               format="json").json()["items"]
        assert "4432" not in str(recalled)
    curator = client_for(people[Role.CURATOR])
    assert curator.post(url + "get/", address, format="json").json()["item"]["value"]["digits"] == 4432
    found = curator.post(url + "search/", {"namespace_prefix": ALICE, "filter": {"digits": 4432}},
                         format="json").json()["items"]
    assert [i["key"] for i in found] == ["card"]


BAD_PUTS = [
    ({"namespace": [], "key": "k", "value": {"a": 1}}, "namespace"),
    ({"namespace": [""], "key": "k", "value": {"a": 1}}, "namespace"),
    ({"namespace": ["x" * 201], "key": "k", "value": {"a": 1}}, "namespace"),
    ({"namespace": ["a"] * 17, "key": "k", "value": {"a": 1}}, "namespace"),
    ({"namespace": ["a"], "key": "k" * 501, "value": {"a": 1}}, "key"),
    ({"namespace": ["a"], "key": "k", "value": ["not", "an", "object"]}, "value"),
    ({"namespace": ["a"], "key": "k", "value": {"a": 1}, "index": True}, "index"),
    ({"namespace": ["a"], "key": "k", "value": {"a": "text"}, "index": ["a..b"]}, "index"),
    ({"namespace": ["a"], "key": "k", "value": {"a": "long text " * 4000}}, "index"),
    ({"namespace": ["é" * 200] * 6, "key": "k", "value": {"a": 1}}, "key"),
]


@pytest.mark.parametrize(("body", "field"), BAD_PUTS)
def test_bad_puts_are_400_naming_the_field_and_write_nothing(api, project, body, field):
    answer = api.post(f"/api/projects/{project.slug}/store/put/", body, format="json")
    assert answer.status_code == 400, answer.content
    assert field in answer.json()["error"]["fields"]
    assert not StoreItem.objects.exists() and not Interaction.objects.exists()
    assert not AgentSession.objects.exists()


BAD_READS = [
    ("search/", {"namespace_prefix": ["a"], "limit": 0}),
    ("search/", {"namespace_prefix": ["a"], "filter": {"n": {"$gt": "x"}}}),
    ("search/", {"namespace_prefix": ["a"], "filter": {"n": {"$regex": "x"}}}),
    ("search/", {"namespace_prefix": ["a"], "query": "x", "limit": 90, "offset": 20}),
    ("search/", {"namespace_prefix": "a"}),
    ("namespaces/", {"max_depth": 0}),
    ("namespaces/", {"prefix": [""]}),
    ("get/", {"namespace": ["a"]}),
    ("delete/", {"namespace": [], "key": "k"}),
]


@pytest.mark.parametrize(("route", "body"), BAD_READS)
def test_bad_reads_and_deletes_are_400(api, project, route, body):
    answer = api.post(f"/api/projects/{project.slug}/store/{route}", body, format="json")
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["code"] == "invalid"


def test_the_api_takes_every_form_of_index(api, project):
    url = f"/api/projects/{project.slug}/store/put/"
    for key, index in (("whole", None), ("none", False), ("some", ["a"])):
        answer = api.post(url + "?wait=true", {"namespace": ["i"], "key": key, "value": {"a": "Alice sails on Sundays",
                                                                                        "b": "in Cascais"},
                                               "index": index}, format="json")
        assert answer.status_code == 200, answer.content
    contents = {item.key: item.interaction.content if item.interaction else None
                for item in StoreItem.objects.select_related("interaction")}
    assert contents == {"whole": "Alice sails on Sundays\nin Cascais", "none": None, "some": "Alice sails on Sundays"}


def test_the_store_session_external_ids_are_reserved(api, project):
    answer = api.post(f"/api/projects/{project.slug}/sessions/", {"external_id": "store:abc"}, format="json")
    assert answer.status_code == 400 and "external_id" in answer.json()["error"]["fields"]
