"""Logging in, the project and session lists, the graph page, the side panel, and the list views."""

from __future__ import annotations

import re

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .conftest import (
    api_get,
    in_database,
    login,
    open_session,
    placeholder_fits,
    screenshot,
    until,
    visible_memory_ids,
    wait_live,
)


def test_login_shows_the_projects_and_sessions_with_counts(page, site):
    page.goto(site.url + "/")
    assert "/login/" in page.url  # login required
    login(page, site, site.member)
    card = page.locator(f"[data-project='{site.project_slug}']")
    assert card.locator("h2").inner_text() == "Travel agents"
    row = card.locator(f"tr[data-session-id='{site.session_id}']")
    assert "3 days in Shanghai" in row.inner_text()
    cells = row.locator("td.num").all_inner_texts()
    assert cells[0] == "30"  # interactions
    assert int(cells[1]) > 10  # memories
    assert placeholder_fits(page, "input[name=q]")  # "Search sessions by title or task", not "…or tas"
    icon = page.evaluate("fetch(document.querySelector('link[rel=icon]').href)"
                         ".then(r => [r.status, r.headers.get('content-type')])")
    assert icon == [200, "image/svg+xml"]
    screenshot(page, "home")

    page.fill("input[name=q]", "no such trip")
    page.press("input[name=q]", "Enter")
    assert card.count() == 1 and page.locator(f"tr[data-session-id='{site.session_id}']").count() == 0
    page.fill("input[name=q]", "shanghai")
    page.press("input[name=q]", "Enter")
    assert page.locator(f"tr[data-session-id='{site.session_id}']").count() == 1

    page.click(f"[data-project='{site.project_slug}'] h2 a")
    assert page.locator(f"tr[data-session-id='{site.session_id}']").count() == 1
    screenshot(page, "project")


def test_session_page_draws_the_graph_of_the_session(page, site):
    login(page, site, site.member)
    open_session(page, site)
    graph = api_get(site, f"sessions/{site.session_id}/graph/")
    assert visible_memory_ids(page) == sorted(m["id"] for m in graph["memories"])
    drawn_edges = page.evaluate("cw.cy.edges().map(e => e.data('eid')).sort((a, b) => a - b)")
    assert drawn_edges == sorted(e["id"] for e in graph["edges"])
    # Colour by kind, size by importance, faded when superseded.
    style = page.evaluate("""() => { const n = cw.cy.nodes()[0];
        return {color: n.style('background-color'), width: n.width(), kind: n.data('kind')}; }""")
    assert style["color"].startswith("rgb") and style["width"] > 10
    superseded = [m["id"] for m in graph["memories"] if m["status"] == "superseded"]
    if superseded:
        assert float(page.evaluate(f"cw.cy.getElementById('m{superseded[0]}').style('opacity')")) < 0.5
    stats = page.inner_text("#graph-stats")
    assert f"{len(graph['memories'])} of {len(graph['memories'])} memories" in stats
    wait_live(page)
    screenshot(page, "session-graph")


def _mark_proposal(session_id: int, needs_review: bool) -> int:
    """Make the session's first inferred causal edge a proposal (or put it back); returns how many changed."""
    from memory.models import Edge

    first = Edge.objects.filter(session_id=session_id, relation="causal", status="inferred").order_by("id")[:1]
    return Edge.objects.filter(pk__in=list(first.values_list("pk", flat=True))).update(needs_review=needs_review)


def test_kinds_and_relations_are_told_apart_by_shape_and_the_sidebar_is_their_legend(page, site, django_db_blocker):
    """Colour is never the only cue (issue 15): each kind has its node shape, each relation its arrowhead, the
    filter checkboxes draw the same, and a proposal keeps its relation's colour on a halo."""
    assert in_database(django_db_blocker, _mark_proposal, site.session_id, True)  # the demo session has none
    try:
        login(page, site, site.member)
        open_session(page, site)
        drawn = _drawn_kinds_and_relations(page)
        screenshot(page, "session-graph-legend")
    finally:
        in_database(django_db_blocker, _mark_proposal, site.session_id, False)
    legend_shape = {kind: shape for kind, shape, _ in drawn["kinds"]}
    legend_fill = {kind: rgb_text(fill) for kind, _, fill in drawn["kinds"]}
    legend_arrow = {relation: arrow for relation, arrow, _ in drawn["relations"]}
    assert len(set(legend_shape.values())) == len(legend_shape) >= 10
    assert len(set(legend_arrow.values())) == len(legend_arrow) >= 10
    kinds_drawn = {kind for kind, _, _ in drawn["nodes"]}
    assert len(kinds_drawn) >= 3, kinds_drawn
    for kind, shape, fill in drawn["nodes"]:
        assert (shape, fill) == (legend_shape[kind], legend_fill[kind]), kind
    colour_of = {relation: rgb_text(stroke) for relation, _, stroke in drawn["relations"]}
    proposals = 0
    for relation, arrow, colour, needs_review, underlay in drawn["edges"]:
        assert arrow == legend_arrow[relation], (relation, arrow)
        assert colour == colour_of[relation], (relation, colour)
        assert (underlay > 0) == bool(needs_review), (relation, underlay)
        proposals += bool(needs_review)
    assert proposals == 1


def _drawn_kinds_and_relations(page) -> dict:
    return page.evaluate("""() => ({
        nodes: cw.cy.nodes().map(n => [n.data('kind'), n.style('shape'), n.style('background-color')]),
        edges: cw.cy.edges().map(e => [e.data('relation'), e.style('target-arrow-shape'), e.style('line-color'),
                                       e.data('needsReview'), Number(e.style('underlay-opacity'))]),
        kinds: [...document.querySelectorAll("[data-group='kinds'] label")].map(l => [
            l.querySelector('input').value, l.querySelector('svg [data-shape]').getAttribute('data-shape'),
            l.querySelector('svg [data-shape]').getAttribute('fill')]),
        relations: [...document.querySelectorAll("[data-group='relations'] label")].map(l => [
            l.querySelector('input').value, l.querySelector('svg [data-arrow]').getAttribute('data-arrow'),
            l.querySelector('svg [data-arrow]').getAttribute('stroke')]) })""")


def rgb_text(color: str) -> str:
    """#rrggbb as Cytoscape reports a colour: rgb(r,g,b)."""
    return "rgb({},{},{})".format(*(int(color[i:i + 2], 16) for i in (1, 3, 5)))


def test_clicking_a_node_shows_the_memory_in_the_side_panel(page, site):
    login(page, site, site.member)
    open_session(page, site)
    graph = api_get(site, f"sessions/{site.session_id}/graph/")
    by_id = {m["id"]: m for m in graph["memories"]}
    spot = page.evaluate("""() => {
        const box = document.getElementById('cy').getBoundingClientRect();
        const node = cw.cy.nodes().filter(n => n.data('kind') === 'constraint')[0] || cw.cy.nodes()[0];
        const p = node.renderedPosition();
        return {id: node.data('mid'), x: box.left + p.x, y: box.top + p.y};
    }""")
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/changes/" in request.url else None)
    page.mouse.click(spot["x"], spot["y"])
    panel = page.locator(f"#panel article[data-memory-id='{spot['id']}']")
    panel.wait_for(timeout=5000)
    memory = by_id[spot["id"]]
    assert page.inner_text("#panel-content") == memory["content"]
    text = panel.inner_text()
    for heading in ("SCORES", "ENTITIES", "DIMENSIONS", "SOURCE INTERACTIONS", "LINKS", "HISTORY"):
        assert heading in text.upper()
    source_id = memory["sources"][0]["interaction_id"]
    page.locator(f"#panel .source[data-interaction-id='{source_id}'] .raw").wait_for(timeout=5000)
    page.locator("#panel .timeline-list li", has_text="memory.created").wait_for(timeout=10_000)
    # The panel asks for this memory's history only, not the session's whole change log.
    assert any(f"memory={spot['id']}" in url for url in asked), asked
    screenshot(page, "session-panel-memory")

    # An edge: its relation, confidence, origin and rationale.
    page.locator("#panel .links button.link").first.click()
    page.locator("#panel article[data-edge-id]").wait_for(timeout=5000)
    edge_text = page.inner_text("#panel article")
    assert "Confidence" in edge_text and "Origin" in edge_text and "Rationale" in edge_text.title()
    screenshot(page, "session-panel-edge")


def test_filters_and_search_change_the_graph_and_the_list_matches(page, site):
    login(page, site, site.member)
    open_session(page, site)
    everything = visible_memory_ids(page)
    kinds = page.evaluate("Object.fromEntries(cw.cy.nodes().map(n => [n.data('mid'), n.data('kind')]))")
    common = max(set(kinds.values()), key=list(kinds.values()).count)

    page.evaluate("cw.cy.zoom({level: 4, renderedPosition: {x: 0, y: 0}})")  # zoomed into a corner
    page.uncheck(f"input[data-filter='kinds'][value='{common}']")
    shown = visible_memory_ids(page)
    assert shown == sorted(int(i) for i, kind in kinds.items() if kind != common)
    assert 0 < len(shown) < len(everything)
    # The filter framed what is left: every shown node is inside the graph's box (once the framing has
    # run: on a busy machine it lands a moment after the filter).
    outside = """(() => { const cy = cw.cy, w = cy.width(), h = cy.height();
        return cy.nodes().filter(n => !n.hasClass('hidden')).filter(n => { const b = n.renderedBoundingBox();
            return b.x1 < 0 || b.y1 < 0 || b.x2 > w || b.y2 > h; }).map(n => n.data('mid')); })()"""
    until(page, f"{outside}.length === 0")
    assert page.evaluate(outside) == []

    page.click("[data-tab='list']")
    rows = page.locator("#memory-table tbody tr")
    assert sorted(int(r) for r in rows.evaluate_all("rows => rows.map(r => r.dataset.memoryId)")) == shown
    # Nothing selected: the empty Details panel steps aside and every column is in view, the last one too.
    assert not page.locator("#panel").is_visible()
    occurred = page.locator("#memory-table th[data-sort='time']").bounding_box()
    assert occurred and occurred["x"] + occurred["width"] <= page.viewport_size["width"], occurred
    screenshot(page, "session-list")
    first = rows.first.get_attribute("data-memory-id")
    rows.first.click()  # a selection opens the panel beside the list
    assert page.locator("#panel").is_visible() and f"Memory #{first}" in page.inner_text("#panel")
    # Beside the open panel the last columns are still in view, not hidden behind it (issue 15).
    panel_left = page.locator("#panel").bounding_box()["x"]
    occurred = page.locator("#memory-table th[data-sort='time']").bounding_box()
    assert occurred["x"] + occurred["width"] <= panel_left + 1, (occurred, panel_left)
    assert page.locator("#memory-table th[data-sort='entities']").is_visible()
    screenshot(page, "session-list-selected")
    page.keyboard.press("Escape")
    assert not page.locator("#panel").is_visible()

    page.click("[data-tab='graph']")
    page.fill("#graph-search", "seafood")
    page.wait_for_function("() => document.querySelector('#search-count').textContent.length > 0")
    matches = page.evaluate("cw.cy.nodes('.match').map(n => n.data('mid')).sort((a, b) => a - b)")
    contents = page.evaluate("Object.fromEntries([...cw.model.memories.values()].map(m => [m.id, m.content]))")
    expected = sorted(int(i) for i, c in contents.items() if "seafood" in c.lower() and int(i) in shown)
    assert matches == expected and matches
    dimmed = page.evaluate("cw.cy.nodes('.dimmed').filter(n => !n.hasClass('hidden')).length")
    assert dimmed == len(shown) - len(matches)
    screenshot(page, "session-search")
    page.click("[data-tab='list']")
    marked = rows.evaluate_all("rows => rows.filter(r => r.classList.contains('match')).map(r => +r.dataset.memoryId)")
    assert sorted(marked) == matches

    # Sorting by importance: the most important first on the first click, lowest first on the second.
    importance = page.locator("#memory-table tbody tr td:nth-child(4)")
    page.click("th[data-sort='importance']")
    values = [float(v) for v in importance.all_inner_texts()]
    assert values == sorted(values, reverse=True) and values[0] > values[-1], values
    screenshot(page, "session-list-by-importance")
    page.click("th[data-sort='importance']")
    values = [float(v) for v in importance.all_inner_texts()]
    assert values == sorted(values) and values[0] < values[-1], values

    # Reset, then narrow the time range from the start: the oldest memories disappear.
    page.click("[data-tab='graph']")
    page.fill("#graph-search", "")
    page.click("#filters-reset")
    assert visible_memory_ids(page) == everything
    page.locator("#time-from").fill("500")
    later = visible_memory_ids(page)
    assert 0 < len(later) < len(everything)
    times = page.evaluate("Object.fromEntries([...cw.model.memories.values()].map(m => [m.id, m.time]))")
    assert min(times[str(i)] for i in later) > min(times.values())


def _ticks(page) -> list[int]:
    return [int(t) for t in page.locator(".timeline-axis .tick").evaluate_all("ts => ts.map(t => t.dataset.time)")]


def _check_the_timeline_frame(page) -> None:
    """Issue 15: the Timeline has a time axis that follows the view, a label per lane, and a brush to zoom."""
    ticks = _ticks(page)
    assert len(ticks) >= 3 and ticks == sorted(ticks), ticks
    kinds = page.evaluate("[...new Set([...cw.model.memories.values()].map(m => m.kind))].length")
    lanes = page.locator(".timeline-lanes .lane")
    assert lanes.count() == kinds
    # Each lane's label sits level with its nodes: the lane's band holds every node of that kind.
    bands = lanes.evaluate_all("""ls => ls.map(l => [l.dataset.kind, l.getBoundingClientRect().top,
                                                      l.getBoundingClientRect().bottom])""")
    box = page.locator("#cy").bounding_box()
    for kind, top, bottom in bands:
        ys = page.evaluate(f"cw.cy.nodes('[kind = \"{kind}\"]').map(n => n.renderedPosition('y'))")
        assert ys and all(top - 2 <= box["y"] + y <= bottom + 2 for y in ys), (kind, top, bottom, ys)
    # Brush: drag across the middle third of the axis; the view zooms to that stretch of time.
    axis = page.locator(".timeline-axis").bounding_box()
    zoom = page.evaluate("cw.cy.zoom()")
    y = axis["y"] + axis["height"] / 2
    page.mouse.move(axis["x"] + axis["width"] / 3, y)
    page.mouse.down()
    page.mouse.move(axis["x"] + axis["width"] / 2, y, steps=5)
    page.mouse.move(axis["x"] + 2 * axis["width"] / 3, y, steps=5)
    page.mouse.up()
    page.wait_for_timeout(500)  # the 300 ms zoom animation
    assert page.evaluate("cw.cy.zoom()") > 2 * zoom
    zoomed = _ticks(page)
    assert zoomed and zoomed[-1] - zoomed[0] < ticks[-1] - ticks[0]  # finer ticks over a shorter stretch
    screenshot(page, "session-timeline-brushed")
    brushed = page.evaluate("cw.cy.zoom()")
    page.locator(".timeline-axis").dblclick()
    page.wait_for_timeout(500)
    # Back to the whole session: every shown node in view again.
    assert page.evaluate("cw.cy.zoom()") < brushed / 2
    assert page.evaluate("""() => { const e = cw.cy.extent(); return cw.cy.nodes(':visible').every(n => {
        const p = n.position(); return p.x >= e.x1 && p.x <= e.x2 && p.y >= e.y1 && p.y <= e.y2; }); }""")


def test_layouts_and_filtered_interactions(page, site):
    login(page, site, site.member)
    open_session(page, site)
    page.click("[data-layout='dag']")
    page.wait_for_selector("html[data-layout='dag']", state="attached")
    # Parents before children along a dependency edge: above them, or left of them when left-right shows the
    # graph larger in this wide view (a long chain top-down is a tall thin strip, issue 15).
    direction = page.evaluate("cw.app.view.layouts.dagDirection")
    axis = "y" if direction == "TB" else "x"
    pairs = page.evaluate(f"""() => cw.cy.edges()
        .filter(e => !['next_in_session', 'shares_entity'].includes(e.data('relation')))
        .map(e => [e.source().position('{axis}'), e.target().position('{axis}')])""")
    assert pairs and sum(1 for parent, child in pairs if parent < child) >= 0.8 * len(pairs)
    # The fitted graph is not a strip, and nothing sits under the legend.
    box = page.evaluate("cw.cy.nodes().renderedBoundingBox()")
    view = page.evaluate("({w: cw.cy.width(), h: cw.cy.height()})")
    assert max(box["w"] / view["w"], box["h"] / view["h"]) > 0.75, (direction, box, view)
    legend = page.locator(".legend").bounding_box()
    cy_box = page.locator("#cy").bounding_box()
    under = page.evaluate(f"""() => cw.cy.nodes().filter(n => {{ const p = n.renderedPosition();
        return p.x + {cy_box["x"]} > {legend["x"]} && p.x + {cy_box["x"]} < {legend["x"] + legend["width"]}
            && p.y + {cy_box["y"]} > {legend["y"]}; }}).map(n => n.id())""")
    assert under == [], under
    screenshot(page, "session-dag")
    page.click("[data-layout='timeline']")
    page.wait_for_selector("html[data-layout='timeline']", state="attached")
    order = page.evaluate("""() => [...cw.model.memories.values()].sort((a, b) => a.time - b.time || a.id - b.id)
        .map(m => cw.cy.getElementById('m' + m.id).position('x'))""")
    assert order == sorted(order)
    _check_the_timeline_frame(page)
    screenshot(page, "session-timeline")

    page.click("[data-tab='interactions']")
    rows = page.locator("#interaction-table tbody tr")
    count = int(page.inner_text("#filtered-count"))
    assert rows.count() == count > 0
    reasons = rows.locator("td:nth-child(8)").all_inner_texts()
    assert all(re.search(r"\w", reason) for reason in reasons), reasons  # each says why
    last = page.locator("#interaction-table thead th").last.bounding_box()  # no empty panel hides a column
    assert last and last["x"] + last["width"] <= page.viewport_size["width"], last
    screenshot(page, "session-filtered-interactions")
    # The reasons read in the page's language (the server keeps a code beside its English reason).
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.wait_for_selector("html[data-graph-ready='1']", state="attached", timeout=30_000)
    page.click("[data-tab='interactions']")
    zh = page.locator("#interaction-table tbody tr td:nth-child(8)").all_inner_texts()
    assert len(zh) == len(reasons) and all(re.search(r"[\u4e00-\u9fff]", r) and not re.search(r"[a-z]{4}", r)
                                           for r in zh), zh
    screenshot(page, "session-filtered-interactions-zh")
    page.click("[data-tab='graph']")
    page.click("[data-layout='timeline']")
    page.wait_for_selector("html[data-layout='timeline']", state="attached")
    lanes = page.locator(".timeline-lanes .lane span").all_inner_texts()
    assert lanes and all(re.search(r"[\u4e00-\u9fff]", lane) for lane in lanes), lanes  # 事实, 约束, …
    screenshot(page, "session-timeline-zh")


# The nodes in view (by position) and those whose label is drawn: not hidden, not set aside by label fitting.
LABELLED_IN_VIEW = """(() => { const e = cw.cy.extent(); const inView = cw.cy.nodes().filter(n => {
    const p = n.position(); return p.x > e.x1 && p.x < e.x2 && p.y > e.y1 && p.y < e.y2; });
  const labelled = inView.filter(n => !n.hasClass('hidden') && !n.hasClass('nolabel') && n.style('label'));
  return {labelled: labelled.map(n => n.id()), in_view: inView.map(n => n.id()),
          share: labelled.length / Math.max(inView.length, 1)};
})()"""


def _labels_on_screen(page) -> list[dict]:
    """The labels Cytoscape draws (not hidden by filtering or label fitting), as rendered boxes and font size."""
    return page.evaluate("""() => cw.cy.nodes().filter(n => !n.hasClass('hidden') && !n.hasClass('nolabel')
        && n.style('label')).map(n => { const b = n.renderedBoundingBox({includeNodes: false, includeEdges: false,
            includeLabels: true});
          return {id: n.id(), x1: b.x1, x2: b.x2, y1: b.y1, y2: b.y2,
                  px: parseFloat(n.style('font-size')) * cw.cy.zoom()}; })""")


def test_labels_are_readable_and_do_not_overlap_at_any_zoom(page, site):
    """Issue 15: labels are drawn at a readable size on screen and never on top of each other (measured from
    Cytoscape's rendered label boxes); zooming in makes room for more; hovering shows the full text."""
    login(page, site, site.member)
    open_session(page, site)
    page.wait_for_timeout(400)  # the label fitting after the layout

    def check() -> int:
        labels = _labels_on_screen(page)
        assert labels, "no label shown"
        assert all(label["px"] >= 10 for label in labels), [label["px"] for label in labels]
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                clash = a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]
                assert not clash, (a, b)
        return len(labels)

    shown = check()
    total = page.evaluate("cw.cy.nodes().length")
    assert shown >= min(10, total // 3), (shown, total)
    labelled_before = set(page.evaluate(LABELLED_IN_VIEW)["labelled"])
    screenshot(page, "session-graph-labels")
    page.click("#btn-zoom-in")
    page.click("#btn-zoom-in")
    # Zoomed in: labels stay the same size on screen and more of the nodes in view have one than had one before
    # the zoom. The labels are refitted 120 ms after the view last moved, so that is awaited rather than read after
    # a fixed pause (on a loaded machine 400 ms was sometimes read before the refit).
    gained = f"""(() => {{ const now = {LABELLED_IN_VIEW}; const before = new Set({sorted(labelled_before)!r});
        return now.labelled.length > now.in_view.filter(id => before.has(id)).length && now.share >= 0.5; }})()"""
    try:
        page.wait_for_function(f"() => {gained}", timeout=5000)
    except PlaywrightTimeout:
        pass  # the assertions below say how far it got
    now = page.evaluate(LABELLED_IN_VIEW)
    check()
    had_label = [node for node in now["in_view"] if node in labelled_before]
    assert len(now["labelled"]) > len(had_label), (now, had_label)
    assert now["share"] >= 0.5, now
    # Hover: the full text of a memory whose label is short or hidden.
    node = page.evaluate("""() => { const n = cw.cy.nodes().filter(n => n.data('fullLabel').length > 40
        && n.renderedPosition().x > 0 && n.renderedPosition().x < cw.cy.width()
        && n.renderedPosition().y > 0 && n.renderedPosition().y < cw.cy.height())[0];
        return n && {id: n.id(), x: n.renderedPosition('x'), y: n.renderedPosition('y')}; }""")
    assert node, "a long memory in view"
    box = page.locator("#cy").bounding_box()
    page.mouse.move(box["x"] + node["x"], box["y"] + node["y"])
    page.wait_for_timeout(200)
    shown_text = page.evaluate(f"cw.cy.getElementById('{node['id']}').style('label')")
    assert shown_text == page.evaluate(f"cw.cy.getElementById('{node['id']}').data('fullLabel')")
    assert len(shown_text) > 40
    screenshot(page, "session-graph-hover")
    # The same fitting under the Chinese interface (memory texts stay as written).
    page.mouse.move(0, 0)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.wait_for_selector("html[data-graph-ready='1']", state="attached", timeout=30_000)
    page.wait_for_timeout(400)
    assert check() >= min(10, total // 3)
    screenshot(page, "session-graph-labels-zh")
