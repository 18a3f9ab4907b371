"""Curating in the browser: approve, relabel and undo an edge from the side panel, keep a filtered
interaction, and mark a memory sensitive while a viewer's open page turns it masked live."""

from __future__ import annotations

import pytest

from .conftest import (
    api_get,
    in_database,
    login,
    new_session,
    open_session,
    other_project,
    post_interaction,
    screenshot,
    until,
    wait_live,
)


@pytest.fixture(scope="module")
def desk(site, django_db_blocker):
    """A project of this module's own: its sessions must not push the demo's off the home page."""
    return other_project(site, django_db_blocker, "curation-web", "Curation desk")


def _weakest_inferred_edge(desk, session_id: int) -> dict:
    graph = api_get(desk, f"sessions/{session_id}/graph/")
    edges = [e for e in graph["edges"] if e["status"] == "inferred"
             and e["relation"] not in ("next_in_session", "shares_entity")]
    return min(edges or [e for e in graph["edges"] if e["status"] == "inferred"], key=lambda e: e["confidence"])


def _curating(page, desk, title: str, texts: tuple[str, ...]) -> tuple[int, dict]:
    """A new session of these interactions, open for the curator; (its id, its weakest inferred edge)."""
    session_id = new_session(desk, title)
    for text in texts:
        post_interaction(desk, session_id, text)
    edge = _weakest_inferred_edge(desk, session_id)
    login(page, desk, desk.member)
    open_session(page, desk, session_id)
    wait_live(page)
    return session_id, edge


def test_a_curator_approves_relabels_and_undoes_an_edge_from_the_panel(page, desk):
    session_id, edge = _curating(page, desk, "Curation: dinner plans", (
        "Xiaoming is allergic to peanuts, so every restaurant must be checked",
        "Because of the allergy, book the Dadong restaurant that has a peanut-free kitchen",
        "The Dadong booking is confirmed for Friday at 19:00"))
    page.evaluate(f"cw.app.select({{type: 'edge', id: {edge['id']}}})")
    panel = page.locator(f"#panel article[data-edge-id='{edge['id']}']")
    panel.wait_for(timeout=5000)
    screenshot(page, "curation-edge-panel")

    page.click("#edge-approve")
    page.locator("#toast .toast", has_text="approved").wait_for(timeout=5000)
    until(page, f"cw.model.edges.get({edge['id']}).status === 'approved'")
    assert next(e for e in api_get(desk, f"sessions/{session_id}/graph/")["edges"]
                if e["id"] == edge["id"])["status"] == "approved"

    target = "conditional" if edge["relation"] != "conditional" else "causal"
    page.locator(f"#panel article[data-edge-id='{edge['id']}']").wait_for(timeout=5000)
    page.select_option("#curate-relation", target)
    page.click("#edge-relabel")
    until(page, f"cw.model.edges.get({edge['id']}).relation === '{target}'")
    screenshot(page, "curation-edge-relabelled")
    page.click("#toast-undo")
    page.locator("#toast .toast", has_text="Undone").wait_for(timeout=5000)
    until(page, f"cw.model.edges.get({edge['id']}).relation === '{edge['relation']}'")
    assert page.inner_text("#panel-relation") != ""


def test_a_memory_marked_sensitive_turns_masked_in_a_viewers_open_page(page, browser, desk):
    session_id = new_session(desk, "Curation: passport")
    post_interaction(desk, session_id, "Xiaoming's passport number is E12345678 for the hotel check-in")
    post_interaction(desk, session_id, "The airline booking used the document E12345678 as well")
    graph = api_get(desk, f"sessions/{session_id}/graph/")
    (memory,) = [m for m in graph["memories"] if "passport" in m["content"]]
    (repeat,) = [m for m in graph["memories"] if "airline" in m["content"]]

    viewer_context = browser.new_context()
    viewer = viewer_context.new_page()
    login(viewer, desk, desk.viewer)
    open_session(viewer, desk, session_id)
    wait_live(viewer)
    assert viewer.evaluate(f"cw.model.memories.get({memory['id']}).content").startswith("Xiaoming")

    login(page, desk, desk.member)
    open_session(page, desk, session_id)
    page.evaluate(f"cw.app.select({{type: 'memory', id: {memory['id']}}})")
    page.locator(f"#panel article[data-memory-id='{memory['id']}']").wait_for(timeout=5000)
    page.fill("#curate-reason", "a passport number")
    page.click("#memory-sensitive")
    page.locator("#toast .toast", has_text="sensitive").wait_for(timeout=5000)
    page.locator("#memory-repeats", has_text="1 other memory repeats E12345678").wait_for(timeout=5000)
    screenshot(page, "curation-memory-sensitive")
    page.click("#repeats-mark")
    page.locator("#toast .toast", has_text="1 memory marked sensitive").wait_for(timeout=5000)
    until(viewer, f"cw.model.memories.get({repeat['id']}).content === '[sensitive]'")

    until(viewer, f"cw.model.memories.get({memory['id']}).content === '[sensitive]'")
    assert "E12345678" not in viewer.content()
    viewer.evaluate(f"cw.app.select({{type: 'memory', id: {memory['id']}}})")
    viewer.locator("#panel .content.masked").wait_for(timeout=5000)
    assert viewer.locator("#memory-curation").count() == 0, "a viewer gets no curation controls"
    screenshot(viewer, "curation-viewer-masked")
    viewer_context.close()


def test_the_curation_controls_speak_chinese(page, desk):
    session_id = new_session(desk, "校订：婚宴")
    for text in ("婚宴定在沅江宾馆，每桌2688元", "因为五一是旺季，婚宴改到5月16号，每桌2788元"):
        post_interaction(desk, session_id, text)
    edge = _weakest_inferred_edge(desk, session_id)
    login(page, desk, desk.member)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    open_session(page, desk, session_id)
    wait_live(page)
    page.evaluate(f"cw.app.select({{type: 'edge', id: {edge['id']}}})")
    page.locator(f"#panel article[data-edge-id='{edge['id']}']").wait_for(timeout=5000)
    assert page.inner_text("#edge-approve") == "批准" and page.inner_text("#edge-reject") == "拒绝"
    page.click("#edge-reject")
    page.locator("#toast .toast", has_text="已拒绝这条边").wait_for(timeout=5000)
    until(page, f"cw.model.edges.get({edge['id']}).status === 'rejected'")
    screenshot(page, "curation-edge-panel-zh")
    memory_id = page.evaluate("[...cw.model.memories.keys()][0]")
    page.evaluate(f"cw.app.select({{type: 'memory', id: {memory_id}}})")
    page.locator(f"#panel article[data-memory-id='{memory_id}']").wait_for(timeout=5000)
    assert page.inner_text("#memory-sensitive") == "标为敏感"
    screenshot(page, "curation-memory-panel-zh")
    # The right-click menu speaks Chinese too.
    box = page.locator("#cy").bounding_box()
    spot = page.evaluate(f"cw.cy.getElementById('m{memory_id}').renderedPosition()")
    page.mouse.click(box["x"] + spot["x"], box["y"] + spot["y"], button="right")
    page.locator("#context-menu").wait_for(state="visible", timeout=3000)
    assert page.locator("#context-menu button").all_inner_texts()[:2] == ["展开相邻记忆", "标为敏感"]
    screenshot(page, "graph-context-menu-zh")
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.select_option("#language-select", "en")


def _proposals_session(desk, title: str, texts: list[str]) -> list[dict]:
    session_id = new_session(desk, title)
    for text in texts:
        post_interaction(desk, session_id, text)
    queue = api_get(desk, f"sessions/{session_id}/graph/")["edges"]
    return [e for e in queue if e["needs_review"] and e["status"] == "inferred"]


def _edge_threshold(slug: str, value: float | None) -> float | None:
    """Set the project's edge confidence threshold (None: the default); returns the one it had."""
    from memory.models import Project

    project = Project.objects.get(slug=slug)
    settings = dict(project.settings or {})
    before = settings.pop("edge_confidence_threshold", None)
    if value is not None:
        settings["edge_confidence_threshold"] = value
    Project.objects.filter(pk=project.pk).update(settings=settings)
    return before


def test_the_review_queue_is_worked_with_the_keyboard(page, desk, django_db_blocker):
    # A strict threshold keeps every inferred dependency a proposal: the queue to work through.
    before = in_database(django_db_blocker, _edge_threshold, desk.project_slug, 0.95)
    try:
        proposals = _proposals_session(desk, "Curation: review queue", [
            "We have 5000 RMB for the whole Shanghai trip",
            "Because the budget is tight, we look for hotels near the Bund under 600 RMB a night",
            "The Peace Hotel is full, therefore book the Astor House instead",
            "Since the Astor House has no breakfast, we eat at the Yu Garden stalls",
        ])
    finally:
        in_database(django_db_blocker, _edge_threshold, desk.project_slug, before)
    assert len(proposals) >= 2, proposals
    login(page, desk, desk.member)
    page.goto(f"{desk.url}/p/{desk.project_slug}/")
    page.click("#review-link")
    page.wait_for_selector("html[data-review-ready='1']", state="attached", timeout=10_000)
    summary = page.inner_text("#review-summary")
    total = int(summary.split(" of ")[1].split()[0])
    assert summary.startswith("0 of ") and total >= len(proposals)
    screenshot(page, "review-queue")
    first = page.locator(".review-item.current").get_attribute("data-edge-id")
    page.keyboard.press("a")
    page.locator(f".review-item.done[data-edge-id='{first}']").wait_for(timeout=5000)
    second = page.locator(".review-item.current").get_attribute("data-edge-id")
    assert second != first, "the cursor moves on after an act"
    page.keyboard.press("r")
    page.locator(f".review-item.done[data-edge-id='{second}']").wait_for(timeout=5000)
    assert page.inner_text("#review-summary").startswith("2 of ")
    page.keyboard.press("u")
    page.locator("#toast .toast", has_text="Undone").wait_for(timeout=5000)
    assert page.inner_text("#review-summary").startswith("1 of ")
    statuses = {e["id"]: e["status"] for s in _sessions(desk) for e in api_get(desk, f"sessions/{s}/graph/")["edges"]}
    assert statuses[int(first)] == "approved" and statuses[int(second)] == "inferred"
    log = page.locator("#acts-table tbody")
    log.locator("tr", has_text="undo of #").first.wait_for(timeout=5000)
    approve = log.locator("tr[data-kind='edge.approve']").first
    assert "alice" in approve.inner_text()
    screenshot(page, "review-queue-worked")
    approve.locator("button").click()  # undo from the curation log
    log.locator("tr[data-kind='edge.approve']").first.locator("text=undone").wait_for(timeout=5000)
    statuses = {e["id"]: e["status"] for s in _sessions(desk) for e in api_get(desk, f"sessions/{s}/graph/")["edges"]}
    assert statuses[int(first)] == "inferred"
    current = page.locator(".review-item.current")
    edge_id = current.get_attribute("data-edge-id")
    relation = current.locator(".relabel-select").input_value()
    page.keyboard.press("l")  # focuses the relation menu of the current proposal
    assert page.evaluate("document.activeElement.classList.contains('relabel-select')")
    target = "references" if relation != "references" else "causal"
    page.select_option(".review-item.current .relabel-select", target)
    page.locator(f".review-item.done[data-edge-id='{edge_id}']").wait_for(timeout=5000)
    graph_edges = {e["id"]: e for s in _sessions(desk) for e in api_get(desk, f"sessions/{s}/graph/")["edges"]}
    assert (graph_edges[int(edge_id)]["relation"], graph_edges[int(edge_id)]["status"]) == (target, "approved")
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.wait_for_selector("html[data-review-ready='1']", state="attached", timeout=10_000)
    assert page.inner_text("h1") == "审核队列" and page.inner_text("#review-summary").startswith("已审核 0 /")
    screenshot(page, "review-queue-zh")
    with page.expect_navigation():
        page.select_option("#language-select", "en")


def _sessions(site) -> list[int]:
    return [s["id"] for s in api_get(site, "sessions/")]


def test_a_curator_draws_an_edge_from_one_memory_to_another(page, desk):
    session_id = new_session(desk, "Curation: drawing")
    for text in ("The museum pass costs 60 RMB", "Buy the museum pass at the Bund kiosk on Saturday"):
        post_interaction(desk, session_id, text)
    memories = {m["content"][:10]: m["id"] for m in api_get(desk, f"sessions/{session_id}/graph/")["memories"]}
    source, target = memories["The museum"], memories["Buy the mu"]
    login(page, desk, desk.member)
    open_session(page, desk, session_id)
    wait_live(page)
    page.evaluate(f"cw.app.select({{type: 'memory', id: {source}}})")
    page.click("#memory-link")
    assert page.evaluate("document.body.classList.contains('linking')")
    page.evaluate(f"cw.app.select({{type: 'memory', id: {target}}})")  # what a click on the node does
    page.locator("#link-form").wait_for(timeout=5000)
    page.select_option("#link-relation", "causal")
    page.fill("#link-reason", "the pass is what is bought")
    screenshot(page, "curation-draw-edge")
    page.click("#link-create")
    until(page, f"[...cw.model.edges.values()].some(e => e.source === {source} && e.target === {target} "
                "&& e.relation === 'causal' && e.origin === 'human' && e.status === 'approved')")
    until(page, "!document.body.classList.contains('linking')")  # the answer may come after the live edge
    page.locator(f"#panel article[data-memory-id='{source}']").wait_for(timeout=5000)


def test_a_curator_renames_and_merges_entities_from_the_memory_panel(page, browser, desk):
    session_id = new_session(desk, "Curation: suppliers")
    for text in ("Acme Corp sent the invoice for the venue", "Acme Corporation is the supplier of the stage"):
        post_interaction(desk, session_id, text)
    graph = api_get(desk, f"sessions/{session_id}/graph/")
    memory = next(m for m in graph["memories"] if "supplier" in m["content"])
    other_session = new_session(desk, "Curation: suppliers, later")
    post_interaction(desk, other_session, "Acme Corporation also rents out the sound system")
    watcher_context = browser.new_context()  # a viewer with another session of the project open
    watcher = watcher_context.new_page()
    login(watcher, desk, desk.viewer)
    open_session(watcher, desk, other_session)
    wait_live(watcher)
    login(page, desk, desk.member)
    open_session(page, desk, session_id)
    page.evaluate(f"cw.app.select({{type: 'memory', id: {memory['id']}}})")
    page.locator("#entity-curation").wait_for(timeout=5000)
    page.select_option("#entity-pick", label="Acme Corporation")
    page.select_option("#entity-into", label="Acme Corp")
    screenshot(page, "curation-entity-merge")
    page.click("#entity-merge")
    page.locator("#toast .toast", has_text="merged into Acme Corp").wait_for(timeout=5000)
    until(page, f"cw.model.memories.get({memory['id']}).entities.includes('Acme Corp')")
    page.select_option("#entity-pick", label="Acme Corp")
    page.fill("#entity-name", "ACME Corporation Ltd")
    page.click("#entity-rename")
    until(page, f"cw.model.memories.get({memory['id']}).entities.includes('ACME Corporation Ltd')")
    entities = {e["name"]: e for e in api_get(desk, f"sessions/{session_id}/graph/")["entities"]}
    assert "ACME Corporation Ltd" in entities and "Acme Corporation" not in entities
    assert {"Acme Corp", "Acme Corporation"} <= set(entities["ACME Corporation Ltd"]["aliases"])
    # Live in every open view: the other session's page, a viewer's, shows the new name without a reload.
    until(watcher, "[...cw.model.memories.values()].some(m => m.entities.includes('ACME Corporation Ltd'))")
    assert not watcher.evaluate("[...cw.model.memories.values()].some(m => m.entities.includes('Acme Corporation'))")
    watcher_context.close()


def _flag(slug: str) -> tuple[int, int]:
    from memory.models import Entity

    first, second = (Entity.objects.get(project__slug=slug, normalized_name=n) for n in ("nanjing road", "nanjing lu"))
    Entity.objects.filter(pk=first.pk).update(evidence=[{"possibly_same_as": second.pk, "name": second.name,
                                                          "similarity": 0.78}])
    return first.pk, second.pk


def test_possible_duplicate_entities_are_settled_from_the_review_page(page, desk, django_db_blocker):
    session_id = new_session(desk, "Curation: streets")
    for text in ("We walk down Nanjing Road in the evening", "Nanjing Lu has the best dumpling shops"):
        post_interaction(desk, session_id, text)
    names = {e["name"] for e in api_get(desk, f"sessions/{session_id}/graph/")["entities"]}
    assert {"Nanjing Road", "Nanjing Lu"} <= names, names
    first, second = in_database(django_db_blocker, _flag, desk.project_slug)
    login(page, desk, desk.member)
    page.goto(f"{desk.url}/p/{desk.project_slug}/review/")
    page.wait_for_selector("html[data-review-ready='1']", state="attached", timeout=10_000)
    pair = page.locator(f".duplicate[data-entity-id='{first}'][data-other-id='{second}']")
    assert "Nanjing Road ≈ Nanjing Lu" in pair.inner_text()
    screenshot(page, "review-duplicates")
    pair.locator("button", has_text="Merge into Nanjing Road").click()
    page.locator("#toast .toast", has_text="merged into Nanjing Road").wait_for(timeout=5000)
    until(page, "document.getElementById('duplicates').hidden")
    entities = {e["name"]: e for e in api_get(desk, f"sessions/{session_id}/graph/")["entities"]}
    assert "Nanjing Lu" not in entities and "Nanjing Lu" in entities["Nanjing Road"]["aliases"]


def test_a_wrongly_merged_alias_is_split_off_from_the_memory_panel(page, desk):
    session_id = new_session(desk, "Curation: hotels")
    for text in ("We stay at the Peace Hotel near the Bund", "Fairmont Peace Hotel has a jazz bar"):
        post_interaction(desk, session_id, text)
    graph = api_get(desk, f"sessions/{session_id}/graph/")
    peace = next(e for e in graph["entities"] if e["name"] == "Peace Hotel")
    assert peace["aliases"] == ["Fairmont Peace Hotel"], peace
    jazz = next(m for m in graph["memories"] if "jazz" in m["content"])
    login(page, desk, desk.member)
    open_session(page, desk, session_id)
    wait_live(page)
    page.evaluate(f"cw.app.select({{type: 'memory', id: {jazz['id']}}})")
    page.locator("#entity-curation").wait_for(timeout=5000)
    page.select_option("#entity-pick", label="Peace Hotel")
    page.select_option("#entity-alias", "Fairmont Peace Hotel")
    page.click("#entity-split")
    page.locator("#toast .toast", has_text="is its own entity now").wait_for(timeout=5000)
    until(page, f"cw.model.memories.get({jazz['id']}).entities.join() === 'Fairmont Peace Hotel'")
    names = {e["name"]: e for e in api_get(desk, f"sessions/{session_id}/graph/")["entities"]}
    assert names["Peace Hotel"]["aliases"] == [] and "Fairmont Peace Hotel" in names


def _rendered(page, element_id: str) -> dict:
    """Where an element is on the page (a node's centre, an edge's midpoint)."""
    box = page.locator("#cy").bounding_box()
    spot = page.evaluate(f"""() => {{ const e = cw.cy.getElementById('{element_id}');
        return e.isNode() ? e.renderedPosition() : e.renderedMidpoint(); }}""")
    return {"x": box["x"] + spot["x"], "y": box["y"] + spot["y"]}


def test_right_click_offers_a_memory_or_edge_its_actions_and_double_click_frames_its_neighbourhood(page, browser, desk):
    """Issue 15: the graph's own gestures. Right-click an edge: approve it from the menu; right-click or
    double-click a memory: its neighbourhood fills the view. A viewer's menu has no curation actions."""
    session_id, edge = _curating(page, desk, "Curation: context menu", (
        "The conference in Porto needs a hotel for 3 nights from 4 May, at most 150 EUR a night",
        "Because the venue is in Matosinhos, the hotel should be near the metro line A",
        "Booked Hotel Mar at 140 EUR a night, 4 to 7 May, confirmation PT8812",
        "The conference dinner on 5 May is at 20:00 at the venue"))
    page.wait_for_timeout(300)
    # The edge's menu: approve from it.
    spot = _rendered(page, f"e{edge['id']}")
    page.mouse.click(spot["x"], spot["y"], button="right")
    menu = page.locator("#context-menu")
    menu.wait_for(state="visible", timeout=3000)
    assert f"#{edge['id']}" in menu.inner_text()
    assert menu.locator("button").all_inner_texts() == ["Approve", "Reject", "Delete"]
    screenshot(page, "graph-context-menu-edge")
    menu.get_by_role("menuitem", name="Approve").click()
    until(page, f"cw.model.edges.get({edge['id']}).status === 'approved'")
    assert menu.is_hidden()
    # A memory's menu: expand its neighbourhood.
    memory = page.evaluate("""() => cw.cy.nodes().max(n => n.degree()).ele.data('mid')""")
    zoom = page.evaluate("cw.cy.zoom()")
    spot = _rendered(page, f"m{memory}")
    page.mouse.click(spot["x"], spot["y"], button="right")
    menu.wait_for(state="visible", timeout=3000)
    labels = menu.locator("button").all_inner_texts()
    assert labels[0] == "Expand neighbourhood" and "Mark sensitive" in labels and "Link to…" in labels, labels
    screenshot(page, "graph-context-menu-memory")
    menu.get_by_role("menuitem", name="Expand neighbourhood").click()
    page.wait_for_timeout(500)
    framed = page.evaluate(f"""() => {{ const e = cw.cy.extent();
        return cw.cy.getElementById('m{memory}').closedNeighborhood('node').every(n => {{ const p = n.position();
            return p.x >= e.x1 && p.x <= e.x2 && p.y >= e.y1 && p.y <= e.y2; }}); }}""")
    assert framed and page.evaluate(f"cw.app.selection.id === {memory}")
    # Double-click another memory: framed the same way.
    page.click("#btn-fit")
    page.wait_for_timeout(300)
    other = page.evaluate(f"cw.cy.nodes().filter(n => n.data('mid') !== {memory} && n.degree() > 0)[0].data('mid')")
    spot = _rendered(page, f"m{other}")
    page.mouse.dblclick(spot["x"], spot["y"])
    page.wait_for_timeout(500)
    assert page.evaluate(f"cw.app.selection && cw.app.selection.id === {other}")
    assert page.evaluate("cw.cy.zoom()") != zoom
    # A viewer's menu for the same memory: no curation actions (the server would refuse them anyway).
    viewer = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        login(viewer, desk, "victor")
        open_session(viewer, desk, session_id)
        viewer.wait_for_timeout(300)
        spot = _rendered(viewer, f"m{memory}")
        viewer.mouse.click(spot["x"], spot["y"], button="right")
        viewer.locator("#context-menu").wait_for(state="visible", timeout=3000)
        assert viewer.locator("#context-menu button").all_inner_texts() == ["Expand neighbourhood"]
    finally:
        viewer.close()
