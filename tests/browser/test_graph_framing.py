"""A graph you can read at a glance (issue 15): a small live session stays framed whole as memories arrive,
a larger one follows its newest memory, and a large session's dense neighbourhood is laid out in rings of
hop distance around its memory instead of a crowded cloud."""

from __future__ import annotations

import random

import pytest

from .conftest import (
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
    return other_project(site, django_db_blocker, "graph-web", "Graph desk")


PLACES = ["Peace Hotel", "Bund", "Yu Garden", "Hongqiao", "Pudong Airport", "Hangzhou", "West Lake", "Suzhou",
          "Lingering Garden", "Zhujiajiao", "Xintiandi", "Jing'an Temple", "Nanjing Road", "Tianzifang", "Lujiazui",
          "Shanghai Museum", "Oriental Pearl", "Huangpu River", "Fuxing Park", "Longhua Temple"]
PEOPLE = ["Wang Lei", "Li Na", "Zhang Wei", "Chen Jing", "Liu Yang", "Anna", "Marc", "Sofia", "Tom", "Yuki",
          "Priya", "Omar", "Lucas", "Mei", "Hannah"]
THINGS = ["flight MU5106", "train G7351", "budget", "visa", "late checkout", "airport pickup", "dinner booking",
          "museum pass", "river cruise", "tea tasting", "family room", "travel insurance", "SIM card", "refund",
          "seafood allergy", "wheelchair access", "group discount", "rain plan", "night market", "cooking class"]
KINDS = ["fact"] * 5 + ["preference", "constraint", "intent", "decision", "action", "result", "error", "event"]
VERBS = ["asked about", "confirmed", "changed", "booked", "cancelled", "compared prices for", "noted",
         "needs", "prefers", "paid for"]


def _large_session(project_slug: str, size: int, seed: int = 15) -> tuple[int, int]:
    """A session like the demo's large one, written straight into the tables (the pipeline would take
    minutes): a year of a travel desk where each memory names one or two of a few dozen recurring
    entities, linked to the previous memory (next_in_session), to the last memories naming the same
    entity (shares_entity, the bulk of the edges) and now and then by a dependency. Returns the session
    and a memory in its middle whose neighbourhood (2 hops) is dense: ~100+ memories, ~500 edges."""
    from datetime import timedelta

    from django.utils import timezone

    from memory.engine.projects import session_create
    from memory.models import Edge, Memory, Project

    rng = random.Random(seed)
    project = Project.objects.get(slug=project_slug)
    session = session_create(project=project, title="A year of the travel desk", task="Plan trips", actor="test")
    entities = PLACES + PEOPLE + THINGS
    weights = [1 / (1 + i % 20) ** 0.5 for i in range(len(entities))]  # a few names recur more than most
    start = timezone.now() - timedelta(days=365)
    named: list[list[str]] = []
    rows = []
    for i in range(size):
        names = sorted(set(rng.choices(entities, weights, k=rng.choice([2, 2, 3]))))
        named.append(names)
        rows.append(Memory(project=project, session=session, kind=rng.choice(KINDS),
                           content=f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {' and '.join(names)}",
                           importance=rng.randint(1, 5), relevance=rng.randint(1, 5), novelty=rng.randint(1, 5),
                           dimensions={"intent": "inform", "language": "en"},
                           occurred_at=start + timedelta(minutes=90 * i)))
    ids = [m.pk for m in Memory.objects.bulk_create(rows, batch_size=2000)]
    edges: dict[tuple[int, int, str], Edge] = {}

    def link(a: int, b: int, relation: str) -> None:
        key = (ids[a], ids[b], relation)
        if a != b and key not in edges:
            edges[key] = Edge(project=project, session=session, source_id=key[0], target_id=key[1],
                              relation=relation, confidence=round(rng.uniform(0.4, 1.0), 2), rationale="fixture")

    last_naming: dict[str, list[int]] = {}
    for i, names in enumerate(named):
        if i:
            link(i - 1, i, "next_in_session")
        earlier = sorted({j for name in names for j in last_naming.get(name, [])[-5:]}, reverse=True)[:6]
        for j in earlier:
            link(j, i, "shares_entity")
        if i > 10 and rng.random() < 0.35:
            link(i - rng.randint(1, 10), i, rng.choice(["causal", "elaborates", "references", "temporal",
                                                         "conditional", "part_of"]))
        for name in names:
            last_naming.setdefault(name, []).append(i)
    Edge.objects.bulk_create(list(edges.values()), batch_size=5000)
    return session.pk, ids[_densest(list(edges), ids, range(size // 3, 2 * size // 3, 25))]


def _densest(keys: list[tuple[int, int, str]], ids: list[int], candidates: range) -> int:
    """The candidate whose 2-hop neighbourhood has the most edges while it stays under 130 memories (the
    demo's: ~120 memories, ~550 edges)."""
    index = {pk: i for i, pk in enumerate(ids)}
    near: dict[int, set[int]] = {}
    for a, b, _ in keys:
        near.setdefault(index[a], set()).add(index[b])
        near.setdefault(index[b], set()).add(index[a])

    def size(start: int) -> tuple[int, int]:
        reached = {start} | near[start]
        reached |= {c for b in near[start] for c in near[b]}
        links = sum(1 for a, b, _ in keys if index[a] in reached and index[b] in reached)
        return (links, len(reached)) if len(reached) < 130 else (0, 0)

    return max(candidates, key=size)


@pytest.fixture(scope="module")
def large(desk, django_db_blocker) -> tuple[int, int]:
    return in_database(django_db_blocker, _large_session, desk.project_slug, 1500)


# --- a small live session stays framed whole -------------------------------------------------------------

CHENGDU = {
    "en": ["I want a 5-day trip to Chengdu in April for two people, budget 9000 RMB",
           "The panda base visit on 6 April starts at 07:30 because the pandas are fed early",
           "Hotel Anthill in Kuanzhai Alley has a family room at 680 RMB per night with breakfast",
           "A Sichuan opera show at Shufeng Yayun teahouse costs 260 RMB per seat on Friday",
           "The Leshan Giant Buddha day trip needs the 08:10 high-speed train from Chengdu East",
           "Hotpot at Shu Daxia on the last evening is reserved for two at 19:00, mild broth requested"],
    "zh": ["我想四月去成都玩五天，两个人，预算九千元",
           "熊猫基地4月6日早上7点半开门，因为熊猫一早就喂食",
           "宽窄巷子的安特尔酒店家庭房每晚680元，含早餐",
           "周五蜀风雅韵茶馆的川剧表演每位260元",
           "去乐山大佛一日游要坐成都东站08:10的高铁",
           "最后一晚在蜀大侠吃火锅，订了两人19点，要微辣锅底"],
}


def _framing(page) -> dict:
    """Where the shown memories are drawn in the graph's box, and where the legend sits in it."""
    return page.evaluate("""() => {
        const shown = cw.cy.nodes().filter(n => !n.hasClass('hidden'));
        const boxes = shown.map(n => n.renderedBoundingBox({includeLabels: false, includeOverlays: false}));
        const all = shown.renderedBoundingBox({includeLabels: false, includeOverlays: false});
        const cy = document.getElementById('cy').getBoundingClientRect();
        const legend = document.querySelector('#view-graph .legend').getBoundingClientRect();
        return {boxes, all: {x1: all.x1, x2: all.x2, y1: all.y1, y2: all.y2}, width: cw.cy.width(),
                height: cw.cy.height(), zoom: cw.cy.zoom(),
                legend: {x1: legend.left - cy.left, x2: legend.right - cy.left, y1: legend.top - cy.top,
                         y2: legend.bottom - cy.top}};
    }""")


def _assert_framed_whole(view: dict) -> None:
    for box in view["boxes"]:
        assert 0 <= box["x1"] and box["x2"] <= view["width"] and 0 <= box["y1"] and box["y2"] <= view["height"], box
        legend = view["legend"]
        under = (box["x1"] < legend["x2"] and legend["x1"] < box["x2"]
                 and box["y1"] < legend["y2"] and legend["y1"] < box["y2"])
        assert not under, ("under the legend", box, legend)
    every = view["all"]
    # Centred, not left where the first memory was: the earlier view followed the newest and left a third empty.
    assert abs((every["x1"] + every["x2"]) / 2 - view["width"] / 2) < 30, view
    assert abs((every["y1"] + every["y2"]) / 2 - view["height"] / 2) < 30, view
    # Framed: as large as the room allows (or at the zoom a few memories are capped at).
    fills = max((every["x2"] - every["x1"]) / view["width"], (every["y2"] - every["y1"]) / view["height"])
    assert view["zoom"] > 1.39 or fills > 0.6, view


def _wait_still(page) -> None:
    page.wait_for_timeout(100)
    until(page, "!cw.cy.animated()", timeout=3)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_small_live_session_stays_framed_whole_as_memories_arrive(page, desk, language):
    """Issue 15: as each of five memories arrives, every memory of the small session is in view, clear of the
    legend, and the whole graph is centred and framed; once the person moves the view it stays theirs."""
    texts = CHENGDU[language]
    session_id = new_session(desk, "Live framing" if language == "en" else "实时取景：成都")
    post_interaction(desk, session_id, texts[0])
    login(page, desk, desk.member)
    if language == "zh":
        with page.expect_navigation():
            page.select_option("#language-select", "zh-hans")
    open_session(page, desk, session_id)
    wait_live(page)
    for text in texts[1:]:
        row = post_interaction(desk, session_id, text)
        assert row["status"] == "kept" and row["memory_ids"], row
        page.wait_for_function(f"() => cw.cy.getElementById('m{row['memory_ids'][0]}').nonempty()", timeout=5000)
        _wait_still(page)
        _assert_framed_whole(_framing(page))
    assert page.evaluate("cw.cy.nodes().length") >= 6
    page.wait_for_timeout(2500)  # the new memories' pulse fades
    screenshot(page, "session-live-framed" + ("-zh" if language == "zh" else ""))
    # The person zooms in with the button: a new memory leaves their view alone; Fit frames everything again.
    page.click("#btn-zoom-in")
    viewport = page.evaluate("({pan: cw.cy.pan(), zoom: cw.cy.zoom()})")
    extra = "The return train G7351 from Chengdu East leaves at 16:20 on 9 April" if language == "en" \
        else "回程G7351次列车4月9日16:20从成都东站出发"
    row = post_interaction(desk, session_id, extra)
    page.wait_for_function(f"() => cw.cy.getElementById('m{row['memory_ids'][0]}').nonempty()", timeout=5000)
    page.wait_for_timeout(400)
    assert page.evaluate("({pan: cw.cy.pan(), zoom: cw.cy.zoom()})") == viewport
    page.click("#btn-fit")
    _wait_still(page)
    view = _framing(page)
    assert all(0 <= b["x1"] and b["x2"] <= view["width"] and 0 <= b["y1"] and b["y2"] <= view["height"]
               for b in view["boxes"])
    if language == "zh":
        with page.expect_navigation():
            page.select_option("#language-select", "en")


# --- a dense neighbourhood in rings ------------------------------------------------------------------------


def _rings_view(page) -> dict:
    """The drawn neighbourhood: each memory's hop distance from the focus (breadth-first over the drawn edges),
    its rendered centre and size, and the focus."""
    return page.evaluate("""() => {
        const cy = cw.cy, focus = cy.getElementById('m' + cw.model.around);
        const bfs = {};
        cy.elements().bfs({roots: focus, visit: (v, e, u, i, depth) => { bfs[v.id()] = depth; }});
        const nodes = cy.nodes().map(n => ({id: n.id(), hop: bfs[n.id()], x: n.renderedPosition('x'),
            y: n.renderedPosition('y'), size: n.renderedOuterWidth()}));
        return {nodes, focus: focus.id(), width: cy.width(), height: cy.height(), zoom: cy.zoom(),
                layout: document.querySelector('[data-layout].active').dataset.layout,
                labels: cy.nodes().filter(n => !n.hasClass('hidden') && !n.hasClass('nolabel') && n.style('label'))
                  .map(n => { const b = n.renderedBoundingBox({includeNodes: false, includeEdges: false,
                    includeLabels: true}); return {id: n.id(), x1: b.x1, x2: b.x2, y1: b.y1, y2: b.y2}; })};
    }""")


def _assert_rings(view: dict) -> None:
    nodes = {n["id"]: n for n in view["nodes"]}
    focus = nodes[view["focus"]]
    assert view["layout"] == "rings"
    # The focus memory in the centre of the graph's box.
    assert abs(focus["x"] - view["width"] / 2) < 0.05 * view["width"], (focus, view["width"])
    assert abs(focus["y"] - view["height"] / 2) < 0.05 * view["height"], (focus, view["height"])
    # Not a crowded cloud: no two memories touch, and their centres are apart on screen.
    listed = list(nodes.values())
    closest = min(((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2) ** 0.5 - (a["size"] + b["size"]) / 2
                  for i, a in enumerate(listed) for b in listed[i + 1:])
    assert closest > 1, closest
    apart = min(((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2) ** 0.5 for i, a in enumerate(listed)
                for b in listed[i + 1:])
    assert apart >= 20, apart
    # In rings by hop distance: every memory one hop away is nearer the focus than every memory two hops away.
    distance = {n["id"]: ((n["x"] - focus["x"]) ** 2 + (n["y"] - focus["y"]) ** 2) ** 0.5 for n in listed}
    by_hop: dict[int, list[float]] = {}
    for n in listed:
        by_hop.setdefault(n["hop"], []).append(distance[n["id"]])
    assert sorted(by_hop) == [0, 1, 2], sorted(by_hop)
    assert max(by_hop[1]) < min(by_hop[2]), (max(by_hop[1]), min(by_hop[2]))
    # All in view, and the labels shown do not overlap (the label-fitting rule still holds).
    assert all(0 <= n["x"] <= view["width"] and 0 <= n["y"] <= view["height"] for n in listed)
    labels = view["labels"]
    assert len(labels) >= 20, len(labels)
    assert view["focus"] in {label["id"] for label in labels}, "the focus memory keeps its label"
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not (a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]), (a, b)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_dense_neighbourhood_of_a_large_session_is_laid_out_in_rings(page, desk, large, language):
    """Issue 15: ?around=<id> on a large session (here 1,500 memories; the neighbourhood ~125 memories and ~600
    edges, most of them shared entities) puts the memory in the centre and its neighbours in rings by hop
    distance, with no two memories on top of each other; Force still gives the stored positions."""
    session_id, focus = large
    login(page, desk, desk.member)
    if language == "zh":
        with page.expect_navigation():
            page.select_option("#language-select", "zh-hans")
    open_session(page, desk, session_id, f"?around={focus}")
    page.wait_for_timeout(400)  # the label fitting after the layout
    counts = page.evaluate("[cw.cy.nodes().length, cw.cy.edges().length, cw.model.truncated]")
    assert counts[0] >= 100 and counts[1] >= 450 and counts[2], counts
    _assert_rings(_rings_view(page))
    rings = page.locator("button[data-layout='rings']")
    assert rings.inner_text() == ("Rings" if language == "en" else "同心环")
    screenshot(page, "session-neighbourhood-rings" + ("-zh" if language == "zh" else ""))
    # The other layouts are still there, and Rings comes back to the same drawing.
    page.click("button[data-layout='force']")
    page.wait_for_selector("html[data-layout='force']", state="attached")
    page.click("button[data-layout='rings']")
    page.wait_for_selector("html[data-layout='rings']", state="attached")
    page.wait_for_timeout(700)  # the animation and the label fitting
    _assert_rings(_rings_view(page))
    if language == "zh":
        with page.expect_navigation():
            page.select_option("#language-select", "en")


def test_double_click_in_the_large_graph_mode_opens_the_neighbourhood_in_rings(page, desk, large):
    """Only part of the session loaded (large-graph mode): a double-click reloads the page around that memory,
    drawn in rings. A new memory arriving there follows at the person's zoom instead of framing ~125 memories."""
    session_id, _ = large
    login(page, desk, desk.member)
    open_session(page, desk, session_id, "?limit=1000")
    assert page.evaluate("cw.app.view.large && cw.model.truncated")
    page.click("#btn-zoom-in")  # nodes far enough apart to hit one
    page.click("#btn-zoom-in")
    page.wait_for_timeout(300)
    target = page.evaluate("""() => { const w = cw.cy.width(), h = cw.cy.height();
        const n = cw.cy.nodes().filter(n => n.degree() > 3).min(n => { const p = n.renderedPosition();
          return Math.hypot(p.x - w / 2, p.y - h / 2); }).ele;
        return {x: n.renderedPosition('x'), y: n.renderedPosition('y')}; }""")
    box = page.locator("#cy").bounding_box()
    with page.expect_navigation():
        page.mouse.dblclick(box["x"] + target["x"], box["y"] + target["y"])
    assert "around=" in page.url
    page.wait_for_selector("html[data-graph-complete='1']", state="attached", timeout=30_000)
    page.wait_for_timeout(400)
    view = _rings_view(page)
    assert view["layout"] == "rings" and len(view["nodes"]) > 20
    nodes = {n["id"]: n for n in view["nodes"]}
    assert abs(nodes[view["focus"]]["x"] - view["width"] / 2) < 0.05 * view["width"]
    assert abs(nodes[view["focus"]]["y"] - view["height"] / 2) < 0.05 * view["height"]
    # Live: a new memory of this session (linked to none drawn here) lands beside the drawing; the view
    # follows it at the same zoom.
    wait_live(page)
    zoom = page.evaluate("cw.cy.zoom()")
    row = post_interaction(desk, session_id, "Anna booked a river cruise on the Huangpu for 12 guests on 3 May")
    assert row["status"] == "kept" and row["memory_ids"], row
    node = f"m{row['memory_ids'][0]}"
    page.wait_for_function(f"() => cw.cy.getElementById('{node}').nonempty()", timeout=10_000)
    _wait_still(page)
    assert page.evaluate("cw.cy.zoom()") == pytest.approx(zoom)
    spot = page.evaluate(f"cw.cy.getElementById('{node}').renderedPosition()")
    assert 0 < spot["x"] < view["width"] and 0 < spot["y"] < view["height"], spot
