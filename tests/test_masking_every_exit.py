"""Sensitive content never leaves the server to a reader who may not see it (a viewer, an agent token),
through any exit: every HTTP route (API and pages), the POST routes that read, the websocket stream and its
catch-up, the export, the graph mirror, the Python SDK and the MCP server, and every LLM prompt.

One world (tests/exits_support.py) holds a sensitive memory and everything the visibility rule names around
it: its source interaction, an attached repeat and a pending one, an edge whose rationale quotes it, a summary
made before the mark, a stored recall that touched it, a store item whose memory is sensitive, and the change
log of all that, with a curator's rename of the entity only it names. It is built once for the module and
committed (servers in other processes read it); each test's own writes are rolled back, except the websocket
test's (a writer process adds a repeat, an edge quoting the value and another rename, as the engine and a
curator would).

Every check is paired with one that can fail: an admin (or, where only agents read, a plain memory's text)
must see the marks somewhere on the same exit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import transaction
from django.test import override_settings
from rest_framework.test import APIClient

from . import test_live_support as support
from .exits_support import (
    MARK_CONTENT,
    MARK_ENTITY,
    MARKS,
    PASSWORD,
    PLAIN_MARK,
    STORE_NAMESPACE,
    STORE_VALUE,
    World,
    build_world,
    leak_report,
    leaks,
    world_delete,
)
from .test_authorization_matrix import ADMIN_PREFIX, MATRIX, Row, call, fill_path, handler_methods, http_routes
from .test_live_support import catch_up, open_socket, receive_until, run_writer, session_cookie

pytestmark = pytest.mark.django_db
live_server_process = support.live_server_process  # one uvicorn for this module (websockets, SDK, MCP)

CALLERS = ("viewer", "token")  # who must never see the marks


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker) -> Iterator[World]:
    with django_db_blocker.unblock():
        made = build_world()
        made.cookies = {role: session_cookie(made.users[role]) for role in ("viewer", "curator")}
    yield made
    with django_db_blocker.unblock():
        Session.objects.filter(session_key__in=made.cookies.values()).delete()
        world_delete(made)


@pytest.fixture
def clients(world) -> dict[str, APIClient]:
    out = {}
    for role in ("viewer", "curator", "admin"):
        out[role] = APIClient()
        out[role].force_login(world.users[role])
    out["token"] = APIClient()
    out["token"].credentials(HTTP_AUTHORIZATION=f"Bearer {world.token}")
    return out


# --- 1. every HTTP GET route of the URLconf ------------------------------------------------------------

def get_routes() -> list[str]:
    """Every route a GET reaches (discovered from the URLconf); of Django admin's, the matrix's representatives."""
    patterns = set()
    for route in http_routes():
        if route.pattern.startswith(ADMIN_PREFIX) and (route.pattern, "GET") not in MATRIX:
            continue
        methods = handler_methods(route.view)
        if methods is None or "GET" in methods:
            patterns.add(route.pattern)
    return sorted(patterns)


# Extra query strings worth asking per route (the default answer is always asked too).
QUERIES: dict[str, list[dict[str, Any]]] = {
    "api/projects/<slug:project_slug>/sessions/<int:session_id>/changes/": [{"memory": "<secret>"}],
    "api/projects/<slug:project_slug>/recalls/": [{"memory": "<secret>"}, {"session": "<session>"}],
    "api/projects/<slug:project_slug>/edges/": [{"needs_review": "true"}, {"order": "weakest"}],
    "api/projects/<slug:project_slug>/entities/": [{"flagged": "true"}],
    "api/projects/<slug:project_slug>/export/": [{"file": "jsonl"}, {"file": "graphml"},
                                                  {"file": "graphml", "session": "<session>"}],
    "p/<slug:project_slug>/review/": [{"needs_review": "true"}],
}
# Where an admin must see the content (the check of that route can fail): the reads of the world's objects.
# (Not the curation log, which lists acts without snapshots; not the repeats, which list only memories not
# marked yet; not the review page, which loads its edges from the edges API in the browser.)
ADMIN_SEES = {
    "api/projects/<slug:project_slug>/sessions/<int:session_id>/interactions/",
    "api/projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/",
    "api/projects/<slug:project_slug>/sessions/<int:session_id>/graph/",
    "api/projects/<slug:project_slug>/sessions/<int:session_id>/graph/ghosts/",
    "api/projects/<slug:project_slug>/sessions/<int:session_id>/changes/",
    "api/projects/<slug:project_slug>/recalls/",
    "api/projects/<slug:project_slug>/recalls/<int:recall_id>/",
    "api/projects/<slug:project_slug>/recalls/<int:recall_id>/compare/<int:other_id>/",
    "api/projects/<slug:project_slug>/edges/",
    "api/projects/<slug:project_slug>/entities/",
    "api/projects/<slug:project_slug>/export/",
    "p/<slug:project_slug>/sessions/<int:session_id>/",
}


def variants(pattern: str, world: World) -> list[tuple[dict[str, object], dict[str, Any] | None]]:
    """(path values, query) pairs for a route: each of the world's objects its ids can name."""
    ids, base = world.ids, world.values
    paths = [dict(base)]
    if "<int:interaction_id>" in pattern:
        paths = [{**base, "session_id": world.session.pk, "interaction_id": ids[name]}
                 for name in ("source", "repeat", "pending", "plain_source")]
        paths.append({**base, "session_id": world.store_session.pk, "interaction_id": ids["store_interaction"]})
    elif "<int:session_id>" in pattern:
        paths = [{**base, "session_id": session.pk} for session in (world.session, world.store_session)]
    if "<int:memory_id>" in pattern:
        paths = [{**values, "memory_id": ids[name]} for values in paths
                 for name in ("secret", "summary", "store_memory")]
    if "<int:recall_id>" in pattern:
        paths += [{**base, "recall_id": ids["other_recall"], "other_id": ids["recall"]}]
    names = {"secret": ids["secret"], "session": world.session.pk}
    queries: list[dict[str, Any] | None] = [None, *[{k: names.get(v[1:-1], v) if v.startswith("<") else v
                                                     for k, v in q.items()} for q in QUERIES.get(pattern, [])]]
    if pattern.endswith("graph/ghosts/"):
        every = ",".join(str(ids[n]) for n in ("secret", "summary", "store_memory", "plain", "budget"))
        queries = [{"ids": every}]
    return [(values, query) for values in paths for query in queries]


def _read(client: APIClient, method: str, url: str, body: Any = None) -> tuple[int, str]:
    answer = call(client, method, url, Row((), body=body), {})
    return answer.status, answer.text


@pytest.mark.parametrize("pattern", get_routes())
def test_every_get_route_masks_for_viewers_and_tokens(pattern, world, clients):
    leaked, errors, admin_saw = [], [], False
    for values, query in variants(pattern, world):
        url = fill_path(pattern, values)
        for caller in (*CALLERS, "admin"):
            status, text = _read(clients[caller], "GET", url, query)
            where = f"GET {url}{'?' + json.dumps(query) if query else ''} as {caller} ({status})"
            if status >= 500:
                errors.append(f"{where}: {text[:200]}")
            if caller == "admin":
                admin_saw |= bool(leaks(text))
            elif leaks(text):
                leaked.append(leak_report(where, text))
    assert not errors, "\n".join(errors)
    assert not leaked, "\n".join(leaked)
    if pattern in ADMIN_SEES:
        assert admin_saw, f"{pattern}: the admin never saw the marks (the check could not fail here)"


def test_the_sweep_covers_the_routes_that_read_the_world():
    """The parametrized sweep above is the URLconf's: a route the admin check expects is a real GET route."""
    routes = get_routes()
    assert ADMIN_SEES <= set(routes), ADMIN_SEES - set(routes)
    assert set(QUERIES) <= set(routes), set(QUERIES) - set(routes)
    assert len([r for r in routes if r.startswith("api/projects/")]) >= 15


# --- 1b. the POST routes that read ---------------------------------------------------------------------

API = "/api/projects/{slug}/"
POST_READS: list[tuple[str, str, dict[str, Any]]] = [
    ("recall, project", "recall/", {"query": f"passport {MARK_CONTENT} of Dr. Quarrington", "k": 8}),
    ("recall, session, hybrid", "recall/", {"query": f"who keeps passport {MARK_CONTENT}", "session_id": "<session>",
                                           "preset": "hybrid", "k": 8}),
    ("recall, narrate", "recall/", {"query": "passport for the visa application", "params": {"narrate": True}}),
    ("store get", "store/get/", {"namespace": STORE_NAMESPACE, "key": "passport"}),
    ("store search, list", "store/search/", {"namespace_prefix": STORE_NAMESPACE[:1]}),
    ("store search, query", "store/search/", {"namespace_prefix": [], "query": "passport of the traveller expires"}),
    ("store search, filter", "store/search/", {"namespace_prefix": STORE_NAMESPACE, "filter": {"digits": 90817263}}),
    ("store namespaces", "store/namespaces/", {}),
    ("decay dry run", "maintenance/decay/", {"dry_run": True, "force": True}),
    ("merge dry run, session", "maintenance/merge/", {"dry_run": True, "session_id": "<session>"}),
    ("merge dry run, project", "maintenance/merge/", {"dry_run": True, "scope": "project", "threshold": 0.5}),
    ("summarise dry run, session", "maintenance/summarise/", {"dry_run": True, "session_id": "<session>"}),
    ("summarise dry run, members", "maintenance/summarise/",
     {"dry_run": True, "use_llm": False, "memory_ids": ["<secret>", "<budget>"]}),
    ("summarise dry run, entity", "maintenance/summarise/", {"dry_run": True, "entity": "Lisbon"}),
    ("review dry run", "maintenance/review/", {"dry_run": True}),
    ("forget dry run", "maintenance/forget/", {"dry_run": True, "text_contains": "passport"}),
    ("forget preview", "forget/preview/", {"text_contains": "passport", "mode": "soft"}),
    ("rerun the recall that touched it", "recalls/<recall>/rerun/", {}),
    ("rerun the plain recall", "recalls/<other_recall>/rerun/", {}),
]


def _fill(template: Any, world: World) -> Any:
    names = {**world.ids, "session": world.session.pk}
    if isinstance(template, dict):
        return {k: _fill(v, world) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, world) for v in template]
    if isinstance(template, str) and template.startswith("<") and template.endswith(">"):
        return names[template[1:-1]]
    return template


def _url(world: World, path: str) -> str:
    for name, value in world.ids.items():
        path = path.replace(f"<{name}>", str(value))
    return API.format(slug=world.project.slug) + path


def _without_own_query(text: str) -> str:
    """A recall's answer echoes the caller's own query: that is not the server's to hide."""
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if isinstance(body, dict):
        body.pop("query", None)
    return json.dumps(body, ensure_ascii=False)


@pytest.mark.parametrize(("label", "path", "body"), POST_READS, ids=[p[0] for p in POST_READS])
def test_the_post_routes_that_read_mask_for_viewers_and_tokens(label, path, body, world, clients):
    url, data = _url(world, path), _fill(body, world)
    leaked, errors = [], []
    for caller in (*CALLERS, "admin"):
        status, text = _read(clients[caller], "POST", url, data)
        text = _without_own_query(text) if path == "recall/" else text
        if status >= 500:
            errors.append(f"POST {url} {label} as {caller}: {status} {text[:200]}")
        if caller != "admin" and leaks(text):
            leaked.append(leak_report(f"POST {url} ({label}) as {caller} ({status})", text))
    assert not errors, "\n".join(errors)
    assert not leaked, "\n".join(leaked)


def test_the_post_reads_can_fail(world, clients):
    """The admin gets the marks from the recall and the store (so the checks above are not vacuous)."""
    for path, body in (("recall/", {"query": "passport for the visa application", "k": 8}),
                       ("store/get/", {"namespace": STORE_NAMESPACE, "key": "passport"}),
                       ("recalls/<recall>/rerun/", {})):
        status, text = _read(clients["admin"], "POST", _url(world, path), body)
        assert status in (200, 201) and MARK_CONTENT in _without_own_query(text), (path, status, text[:300])


def test_a_recall_run_by_a_token_or_viewer_is_stored_without_the_content(world, clients):
    """What a viewer or a token recalls is stored (replay): the stored recall, read back by each of them, holds
    nothing of the memories they may not see (the runner's own query aside, which names no mark here)."""
    url = _url(world, "recall/")
    leaked = []
    for runner in CALLERS:
        with transaction.atomic():  # the stored trace is read back before the rollback
            answer = clients[runner].post(url, {"query": "passport for the visa application", "k": 8}, format="json")
            assert answer.status_code == 200, answer.content[:300]
            recall_id = answer.json()["recall_id"]
            for path in (f"recalls/{recall_id}/", "recalls/", f"recalls/{recall_id}/compare/{world.ids['recall']}/",
                         f"sessions/{world.session.pk}/changes/"):
                for reader in (*CALLERS, "admin"):
                    body = clients[reader].get(_url(world, path)).content.decode()
                    if reader != "admin" and leaks(body):
                        leaked.append(leak_report(f"GET {path} as {reader} (a recall run by the {runner})", body))
            transaction.set_rollback(True)
    assert not leaked, "\n".join(leaked)


def test_searches_tell_nothing_of_the_marks(world, clients):
    """Searching for a mark finds nothing for a viewer or a token (no oracle), as much as the admin finds."""
    found: dict[str, list[int]] = {}
    for caller in (*CALLERS, "admin"):
        counts = []
        for q in (MARK_CONTENT, MARK_ENTITY):
            counts.append(clients[caller].get(_url(world, "recalls/"), {"q": q}).json()["count"])
        if caller != "token":  # people only
            entities = clients[caller].get(_url(world, "entities/"), {"q": MARK_ENTITY}).json()
            counts.append(len(entities["results"] if isinstance(entities, dict) else entities))
        for condition in ({"digits": 90817263}, {"text": STORE_VALUE["text"]}):
            status, text = _read(clients[caller], "POST", _url(world, "store/search/"),
                                 {"namespace_prefix": STORE_NAMESPACE, "filter": condition})
            assert status == 200, text[:300]
            counts.append(len(json.loads(text)["items"]))
        found[caller] = counts
    assert all(found["admin"]), f"the admin finds each (recalls q, store filters): {found}"
    assert found["viewer"] == [0, 0, 0, 0, 0] and found["token"] == [0, 0, 0, 0], f"searches as oracles: {found}"


def test_a_later_interaction_repeating_the_value_is_masked_too(world, clients):
    """An agent sends the marked value again in a new sentence (not an exact repeat, so not attached to the
    sensitive memory). The engine knows it repeats a sensitive value (memory/engine/sensitivity.py: the scorer
    keeps it from the LLM), so a viewer or a token must not read it in clear either."""
    session = world.session
    answer = clients["token"].post(f"{_url(world, f'sessions/{session.pk}/interactions/')}?wait=true",
                                   {"kind": "user_input",
                                    "content": f"Please bring the passport {MARK_CONTENT} to the consulate on Monday"},
                                   format="json")
    assert answer.status_code == 201, answer.content
    leaked, admin_saw = [], []
    reads = [f"sessions/{session.pk}/graph/", f"sessions/{session.pk}/changes/",
             f"sessions/{session.pk}/interactions/", f"sessions/{session.pk}/interactions/"
             f"{answer.json()['interactions'][0]['id']}/", "export/"]
    for path in reads:
        for caller in (*CALLERS, "admin"):
            response = clients[caller].get(_url(world, path))
            body = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
            if caller == "admin":
                admin_saw += [path] if MARK_CONTENT in body else []
            elif leaks(body):
                leaked.append(leak_report(f"GET {path} as {caller} (a later repeat of the value)", body))
    assert admin_saw == reads
    assert not leaked, "\n".join(leaked)


# --- 2. websockets: the live stream and its catch-up ----------------------------------------------------

def _changes_text(messages: list[dict]) -> str:
    return json.dumps(messages, ensure_ascii=False)


LIVE_OPS = {"interaction.received", "edge.created", "entity.updated"}
WRITER = """
from django.db import transaction
from django.utils import timezone
from curation.entities import entity_rename
from memory.engine.changelog import change_record
from memory.engine.snapshots import edge_snapshot, interaction_snapshot
from memory.models import Edge, Interaction, Memory
m = Memory.objects.get(pk={secret})
with transaction.atomic():
    i = Interaction.objects.create(project=m.project, session=m.session, kind='user_input', content=m.content,
                                   occurred_at=timezone.now())
    change_record(project=m.project, session=m.session, actor='cli', op='interaction.received',
                  object_type='interaction', object_id=i.pk, after=interaction_snapshot(i))
    e = Edge.objects.create(project=m.project, session=m.session, source_id={budget}, target=m,
                            relation='references', rationale='live: Ptarmigan reuses ' + m.content)
    change_record(project=m.project, session=m.session, actor='cli', op='edge.created', object_type='edge',
                  object_id=e.pk, after=edge_snapshot(e))
entity_rename(project=m.project, actor='user:1', entity_id={entity}, name='Vexillon Quarrington MD')
"""


def _live_ops(messages: list[dict]) -> set[str]:
    return {c["op"] for m in messages if m["type"] == "changes" for c in m["changes"]}


def test_the_websocket_stream_and_its_catch_up_mask_for_a_viewer(world, live_server_process):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from memory.models import GraphChange

    from .test_authorization_matrix import ws_routes

    assert {r.pattern for r in ws_routes()} == {"ws/sessions/<int:session_id>/",
                                                "ws/projects/<slug:project_slug>/forget/"}, "a new socket: cover it"
    session, leaked = world.session, []

    def check(where: str, messages: list[dict]) -> None:
        text = _changes_text(messages)
        if leaks(text):
            leaked.append(leak_report(where, text))

    with open_socket(live_server_process, session.pk, world.cookies["viewer"]) as viewer, \
            open_socket(live_server_process, session.pk, world.cookies["curator"]) as curator:
        everything = catch_up(viewer, 0)
        check("WS catch-up from 0 as viewer", everything)
        assert MARK_CONTENT in _changes_text(catch_up(curator, 0)), "a curator's catch-up has the content"
        cursor = everything[-1]["last_change_id"]
        # Another process writes what the engine would: a new repeat (pending), an edge quoting the value, and
        # a curator's rename of the hidden entity (sent to every session's socket of the project).
        run_writer(WRITER.format(secret=world.ids["secret"], budget=world.ids["budget"], entity=world.ids["entity"]))
        check("WS live stream as viewer", receive_until(viewer, lambda ms: LIVE_OPS <= _live_ops(ms)))
        curator_live = _changes_text(receive_until(curator, lambda ms: LIVE_OPS <= _live_ops(ms)))
        assert MARK_CONTENT in curator_live and "Ptarmigan" in curator_live, "a curator gets it live"
    written = sorted(GraphChange.objects.filter(session=session, id__gt=cursor).values_list("id", flat=True))
    assert len(written) == 2

    with open_socket(live_server_process, session.pk, world.cookies["viewer"]) as ws:  # a page reconnecting
        again = catch_up(ws, cursor)
        assert [c["id"] for m in again if m["type"] == "changes" for c in m["changes"]] == written
        check(f"WS catch-up after {cursor} as viewer", again)
    with open_socket(live_server_process, world.store_session.pk, world.cookies["viewer"]) as ws:
        check("WS catch-up of the store session as viewer", catch_up(ws, 0))
    # The forget page's socket is for admins: a viewer is closed with nothing sent.
    got, code = [], None
    with connect(f"ws://127.0.0.1:{live_server_process.port}/ws/projects/{world.project.slug}/forget/",
                 origin=live_server_process.origin, open_timeout=20,
                 additional_headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={world.cookies['viewer']}"}) as ws:
        try:
            while True:
                got.append(json.loads(ws.recv(timeout=10)))
        except ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
    check("WS forget jobs as viewer", got)
    assert code == 4403
    assert not leaked, "\n".join(leaked)


# --- 3. the export -------------------------------------------------------------------------------------

def test_the_export_masks_for_viewers_and_tokens(world, clients):
    url = _url(world, "export/")
    leaked = []
    for file in ("jsonl", "graphml"):
        for caller in (*CALLERS, "admin"):
            answer = clients[caller].get(url, {"file": file})
            assert answer.status_code == 200, (file, caller, answer.status_code)
            body = (b"".join(answer.streaming_content) if answer.streaming else answer.content).decode()
            if caller == "admin":
                assert MARK_CONTENT in body and "Ptarmigan" in body and "Quarrington" in body, (file, "admin")
            elif leaks(body):
                leaked.append(leak_report(f"export {file} as {caller}", body))
    assert not leaked, "\n".join(leaked)


# --- 4. the graph mirror -------------------------------------------------------------------------------

def _mirror_text(target, project_id: int) -> str:
    nodes = target.run("MATCH (n) WHERE n.project_id = $p RETURN labels(n), properties(n)", {"p": project_id})
    edges = target.run("MATCH (a)-[e]->(b) WHERE a.project_id = $p RETURN type(e), properties(e)", {"p": project_id})
    return json.dumps([nodes, edges], ensure_ascii=False, default=str)


def test_the_graph_mirror_holds_no_sensitive_content(world, request):
    from memory.mirror.sync import mirror_catch_up, mirror_resync

    from .mirror_support import fresh_falkor

    try:
        url = request.getfixturevalue("falkordb_url")
    except Exception as error:  # noqa: BLE001 - any reason FalkorDB cannot start
        print(f"SKIP: FalkorDB did not start: {error}")
        pytest.skip(f"FalkorDB did not start: {error}")
    leaked = []
    for how in ("catch-up (replays the change log)", "resync (rebuilt from the rows)"):
        target = fresh_falkor(url)
        try:
            target.ensure_indexes()
            if how.startswith("catch-up"):
                mirror_catch_up(target)
            else:
                mirror_resync(target, world.project)
            text = _mirror_text(target, world.project.pk)
        finally:
            target.close()
        assert PLAIN_MARK in text and str(world.ids["secret"]) in text, f"mirror {how} holds the graph"
        if leaks(text):
            leaked.append(leak_report(f"mirror after {how}", text))
    assert not leaked, "\n".join(leaked)


# --- 5. the SDK and the MCP server ---------------------------------------------------------------------

def _sdk_reads(world: World) -> list[tuple[str, Callable[[Any], Any]]]:
    from contextweaver_client.langgraph_store import ContextWeaverStore

    session, store, ids = world.session.pk, world.store_session.pk, world.ids
    reads: list[tuple[str, Callable[[Any], Any]]] = [
        ("sessions", lambda cw: cw.sessions()),
        ("graph", lambda cw: cw.graph(session)),
        ("graph of the store session", lambda cw: cw.graph(store)),
        ("graph around the secret", lambda cw: cw.graph(session, around=ids["secret"])),
        ("interactions", lambda cw: cw.interactions(session)),
        ("interactions of the store session", lambda cw: cw.interactions(store)),
        ("changes", lambda cw: cw.changes_since(session)),
        ("changes of the store session", lambda cw: cw.changes_since(store)),
        ("changes of the secret", lambda cw: cw.changes(session, memory=ids["secret"])),
        ("recall", lambda cw: dataclasses.replace(cw.recall("passport for the visa application", k=8), query="")),
        ("recall in the session", lambda cw: dataclasses.replace(
            cw.recall("who keeps the passport", session_id=session, preset="hybrid"), query="")),
        ("store get", lambda cw: cw.store_get(STORE_NAMESPACE, "passport")),
        ("store search", lambda cw: cw.store_search(STORE_NAMESPACE[:1])),
        ("store search by query", lambda cw: cw.store_search([], query="passport of the traveller expires")),
        ("store namespaces", lambda cw: cw.store_namespaces()),
    ]
    reads += [(f"interaction {name}", lambda cw, i=ids[name]: cw.interaction(session, i))
              for name in ("source", "repeat", "pending")]
    reads.append(("store interaction", lambda cw: cw.interaction(store, ids["store_interaction"])))
    reads += [("langgraph store get", lambda cw: ContextWeaverStore(cw).get(tuple(STORE_NAMESPACE), "passport")),
              ("langgraph store search", lambda cw: ContextWeaverStore(cw).search(
                  tuple(STORE_NAMESPACE[:1]), query="passport of the traveller expires"))]
    # A person's client (login) has the curation reads too.
    reads += [("review queue", lambda cw: cw.review_queue()), ("entities", lambda cw: cw.entities()),
              ("curation log", lambda cw: cw.curation_log()), ("repeats", lambda cw: cw.memory_repeats(ids["secret"]))]
    return reads


def test_the_sdk_masks_for_tokens_and_viewers(world, live_server_process):
    from contextweaver_client import Client, ContextWeaverError, Login, Retry

    origin, slug = live_server_process.origin, world.project.slug
    fast = Retry(attempts=2, backoff=0.01, max_wait=0.05)
    callers = {"token": dict(token=world.token), "viewer": dict(login=Login("exits-viewer", PASSWORD)),
               "admin": dict(login=Login("exits-admin", PASSWORD))}
    leaked, admin_saw, answered = [], [], 0
    for caller, auth in callers.items():
        with Client(origin, project=slug, retry=fast, **auth) as cw:
            for name, read in _sdk_reads(world):
                try:
                    text = repr(read(cw))
                    answered += 1
                except ContextWeaverError as error:  # a read this caller may not make (403): its message
                    text = f"{type(error).__name__}: {error}"
                if caller == "admin":
                    admin_saw += [name] if leaks(text) else []
                elif leaks(text):
                    leaked.append(leak_report(f"SDK {name} as {caller}", text))
    assert answered > 40
    assert {"graph", "interaction source", "store get", "changes", "recall"} <= set(admin_saw), admin_saw
    assert not leaked, "\n".join(leaked)


def test_the_mcp_tools_mask_for_the_token(world, live_server_process):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("contextweaver-mcp")),
        args=["--url", live_server_process.origin, "--project", world.project.slug],
        env={"CONTEXTWEAVER_TOKEN": world.token, "PATH": os.environ.get("PATH", "")})
    calls = [("recall", {"query": "passport for the visa application", "k": 8}),
             ("recall", {"query": "who keeps the passport", "session_id": world.session.pk, "preset": "hybrid"}),
             ("session_graph", {"session_id": world.session.pk}),
             ("session_graph", {"session_id": world.session.pk, "around": world.ids["secret"]}),
             ("session_graph", {"session_id": world.store_session.pk})]

    async def run() -> list[tuple[str, str]]:
        out = []
        async with Client(params) as client:
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content
                out.append((f"{tool}({arguments})", json.dumps(result.structured_content, ensure_ascii=False)))
        return out

    answers = asyncio.run(run())
    assert any(PLAIN_MARK in text for _, text in answers), "the tools answered with the plain memories"
    assert any(str(world.ids["secret"]) in text for _, text in answers if "session_graph" in _), answers
    leaked = [leak_report(f"MCP {name} as token", text) for name, text in answers if leaks(text)]
    assert not leaked, "\n".join(leaked)


# --- 6. every LLM prompt -------------------------------------------------------------------------------

@pytest.fixture
def llm(openai_server):
    memory = {**settings.MEMORY, "LLM": "openai", "LLM_MODEL": "gpt-test", "LLM_TIMEOUT": 0.5,
              "LLM_MAX_RETRIES": 0, "EMBEDDER": "hashing", "INGEST_MODE": "inline"}
    with override_settings(MEMORY=memory):
        yield openai_server


def test_no_llm_prompt_carries_the_sensitive_content(world, clients, llm):
    from memory.engine.maintenance.review import review_run
    from memory.engine.maintenance.summarise import summarise_run
    from memory.models import Memory

    from .test_maintenance_support import link

    session = world.session
    url = f"/api/projects/{world.project.slug}/sessions/{session.pk}/interactions/?wait=true"
    later = {"visa": "The visa application for the Lisbon trip needs every passport at the consulate on Monday",
             "repeat": f"Please bring the passport {MARK_CONTENT} to the consulate on Monday",  # repeats the value
             "doctor": "The doctor who keeps our papers moved his office to Alfama in Lisbon",
             "renewed": "My passport number changed after the renewal, it is now ZR55120987"}  # supersedes it?
    made = {}
    for name, text in later.items():
        answer = clients["token"].post(url, {"kind": "user_input", "content": text}, format="json")
        assert answer.status_code == 201, answer.content
        made[name] = answer.json()["interactions"][0]["memory_ids"]
    steps = {"ingest": len(llm.chat_requests)}
    narrated = clients["curator"].post(f"/api/projects/{world.project.slug}/recall/",
                                       {"query": "what about the passport for the visa?", "k": 8,
                                        "params": {"narrate": True}}, format="json")
    assert narrated.status_code == 200, narrated.content
    steps["narrate"] = len(llm.chat_requests)
    visa, budget = Memory.objects.get(pk=made["visa"][0]), Memory.objects.get(pk=world.ids["budget"])
    link(budget, visa, "elaborates", needs_review=True, confidence=0.3)  # one edge review may send
    review_run(project=world.project, actor="user:1")  # the world's edge to the secret waits for review too
    steps["review"] = len(llm.chat_requests)
    summarise_run(project=world.project, actor="user:1", memory_ids=[budget.pk, visa.pk], use_llm=True)
    steps["summarise"] = len(llm.chat_requests)

    counts = list(steps.values())
    assert all(b > a for a, b in zip([0, *counts], counts, strict=False)), f"each step asked the LLM: {steps}"
    sent = [(i, json.dumps(r.body, ensure_ascii=False)) for i, r in enumerate(llm.chat_requests)]
    assert any(PLAIN_MARK in body for _, body in sent), "what may be sent is sent (the check can fail)"

    def step(index: int) -> str:
        return next(name for name, upto in steps.items() if index < upto)

    leaked = [leak_report(f"LLM request #{i} ({step(i)})", body) for i, body in sent if leaks(body)]
    print(f"{len(sent)} chat requests, by step: {steps}")
    assert not leaked, "\n".join(leaked)


def test_the_world_holds_every_mark_where_it_should(world):
    """The fixture is what the checks assume: each mark sits in the database where an admin may read it."""
    from .test_maintenance_support import rows_containing

    for name, mark in MARKS.items():
        assert rows_containing(mark), f"{name} mark {mark!r} is nowhere"


