"""Issue 47, the browser side: where an edge came from (known: the agent's, from use, a person's; or guessed) in the
legend, the filters and the edge panel, and memories at risk (something they depend on changed): the amber mark,
the way back to the change drawn on the graph, the panel's "May be out of date" with what settles it (still valid,
archive, superseded by…) and its undo, and the review queue's "Possibly out of date".

The state comes through the real write path: the agent posts a flight time, then a transfer it declares to depend
on it (a link: an edge of origin agent), then the new flight time, which supersedes the old one and puts the
transfer at risk (were the engine's rules ever not to see the change, a curator's supersedes edge, as "Superseded
by…" draws it, does the same)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from .conftest import (
    ROOT,
    api_get,
    api_post,
    in_database,
    login,
    new_session,
    open_session,
    other_project,
    until,
    wait_live,
)

SHOTS = ROOT / "var" / "screenshots47"
# Each session its own flight number, so one session's new time is not taken for another session's flight.
FLIGHTS = itertools.count(851)
TEXTS = {
    "en": {"flight": "Flight {flight} to San Francisco departs on Friday at 15:00 from Pudong",
           "transfer": "Book the airport transfer for Friday at 12:30, in time for the flight's departure at 15:00",
           "change": "Update: flight {flight} on Friday now departs at 18:00 instead of 15:00",
           "other": "The hotel near Pudong is booked for Thursday night"},
    "zh": {"flight": "周五的 {flight} 航班 15:00 从浦东机场起飞，飞往旧金山",
           "transfer": "预订周五中午 12:30 的机场接送车，按时赶上这趟航班",
           "change": "更新：周五的 {flight} 航班改为 18:00 起飞，不再是 15:00",
           "other": "浦东机场附近的酒店已订好周四晚上"},
}


def shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


@pytest.fixture(scope="module")
def desk(site, django_db_blocker):
    """A project of this module's own, so its sessions and flags leave the demo's alone."""
    return other_project(site, django_db_blocker, "risk-web", "Change desk")


def _post(desk, session_id: int, content: str, **extra) -> dict:
    return api_post(desk, f"sessions/{session_id}/interactions/",
                    {"kind": "user_input", "content": content, **extra})["interactions"][0]


def _memory_of(desk, session_id: int, interaction_id: int) -> dict:
    graph = api_get(desk, f"sessions/{session_id}/graph/")
    for memory in graph["memories"]:
        if any((s.get("interaction_id") or s.get("id")) == interaction_id for s in memory.get("sources") or []):
            return memory
    raise AssertionError(f"no memory from interaction {interaction_id}: {graph['memories']}")


def _supersede(slug: str, old_id: int, new_id: int) -> None:
    """What a curator's "Superseded by…" does (curation/services.edge_draw), when the engine did not already."""
    from curation.services import edge_draw
    from memory.models import Memory, Project

    if Memory.objects.get(pk=old_id).status == "superseded":
        return
    edge_draw(project=Project.objects.get(slug=slug), actor="alice", source_id=old_id, target_id=new_id,
              relation="supersedes", reason="the flight moved")


def _at_risk_session(desk, django_db_blocker, title: str, extra: tuple[str, ...] = (), language: str = "en") -> dict:
    """A session where the transfer depends (agent link) on a flight time that then changed."""
    flight_number = f"UA{next(FLIGHTS)}"
    texts = {key: text.format(flight=flight_number) for key, text in TEXTS[language].items()}
    session_id = new_session(desk, title)
    flight = _post(desk, session_id, texts["flight"], external_id="flight")
    transfer = _post(desk, session_id, texts["transfer"], external_id="transfer",
                     links=[{"external_id": "flight", "relation": "causal"}])
    change = _post(desk, session_id, texts["change"], external_id="change")
    for text in (texts["other"], *extra):
        _post(desk, session_id, text)
    ids = {name: _memory_of(desk, session_id, row["id"])["id"]
           for name, row in (("flight", flight), ("transfer", transfer), ("change", change))}
    in_database(django_db_blocker, _supersede, desk.project_slug, ids["flight"], ids["change"])
    graph = api_get(desk, f"sessions/{session_id}/graph/")
    link = next(e for e in graph["edges"] if e["source_id"] == ids["flight"] and e["target_id"] == ids["transfer"]
                and e["origin"] == "agent")
    transfer_row = next(m for m in graph["memories"] if m["id"] == ids["transfer"])
    assert (transfer_row["at_risk"], transfer_row["status"]) == (1, "active"), transfer_row
    return {"session": session_id, **ids, "link": link["id"], "graph": graph}


def _select(page, memory_id: int) -> None:
    page.evaluate(f"cw.app.select({{type: 'memory', id: {memory_id}}}, {{center: true}})")
    page.locator(f"#panel article[data-memory-id='{memory_id}']").wait_for(timeout=5000)


def _language(page, code: str) -> None:
    with page.expect_navigation():
        page.select_option("#language-select", code)


def test_an_at_risk_memory_is_marked_explained_settled_and_undone(page, desk, django_db_blocker):
    state = _at_risk_session(desk, django_db_blocker, "Risk: the flight moved")
    transfer, flight, change = state["transfer"], state["flight"], state["change"]
    login(page, desk, desk.member)
    open_session(page, desk, state["session"])
    wait_live(page)
    # The mark: an amber ring outside the node, "⚠" before its label, and the legend's entry while one is shown.
    node = f"cw.cy.getElementById('m{transfer}')"
    assert page.evaluate(f"{node}.data('atRisk')") == 1
    assert page.evaluate(f"parseFloat({node}.style('outline-width'))") > 3
    assert page.evaluate(f"{node}.data('label')").startswith("⚠ Book the airport transfer")
    assert page.evaluate(f"parseFloat(cw.cy.getElementById('m{change}').style('outline-width'))") == 0
    assert page.locator("#legend-at-risk").is_visible()
    assert "may be out of date" in page.inner_text("#legend-at-risk")

    _select(page, transfer)
    section = page.locator("#panel-at-risk")
    section.locator(".risk").first.wait_for(timeout=5000)
    text = section.inner_text()
    assert "May be out of date".upper() in text.upper(), text
    assert f"Depends on: #{flight} “Flight UA8" in text, text
    assert "superseded: 15:00 → 18:00" in text, text
    assert f", now: #{change} “Update: flight UA8" in text, text
    assert "through causal (declared by the agent), 1 hop" in text, text
    # The way back to the change: the agent's edge and the changed memory, drawn while the memory is selected.
    until(page, f"cw.cy.getElementById('e{state['link']}').hasClass('risk-path')")
    assert page.evaluate(f"cw.cy.getElementById('m{flight}').hasClass('risk-source')")
    assert page.evaluate("cw.cy.edges('.risk-path').map(e => e.data('eid'))") == [state["link"]]
    shot(page, "session-at-risk-selected-en")

    # "Still valid" settles it (mark, section and legend entry go, live); the toast's Undo brings it back.
    page.click("#risk-still-valid")
    page.locator("#toast .toast", has_text="still valid").wait_for(timeout=5000)
    until(page, f"cw.model.memories.get({transfer}).atRisk === 0")
    until(page, f"{node}.data('atRisk') === 0 && !{node}.data('label').startsWith('⚠')")
    page.locator("#panel-at-risk").wait_for(state="detached", timeout=5000)
    assert not page.locator("#legend-at-risk").is_visible()
    assert page.evaluate("cw.cy.elements('.risk-path, .risk-source').length") == 0
    assert api_get(desk, f"memories/{transfer}/risks/") == []
    page.click("#toast-undo")
    page.locator("#toast .toast", has_text="Undone").wait_for(timeout=5000)
    until(page, f"cw.model.memories.get({transfer}).atRisk === 1")
    page.locator("#panel-at-risk .risk").first.wait_for(timeout=5000)
    until(page, f"cw.cy.getElementById('e{state['link']}').hasClass('risk-path')")
    assert page.locator("#legend-at-risk").is_visible()
    assert len(api_get(desk, f"memories/{transfer}/risks/")) == 1

    # Selecting something else takes the path away.
    page.evaluate(f"cw.app.select({{type: 'memory', id: {change}}})")
    until(page, "cw.cy.elements('.risk-path, .risk-source').length === 0")


def test_where_an_edge_came_from_shows_in_the_legend_the_panel_and_the_filters(page, browser, desk, django_db_blocker):
    state = _at_risk_session(desk, django_db_blocker, "Risk: origins")
    login(page, desk, desk.member)
    open_session(page, desk, state["session"])
    legend = page.inner_text("#view-graph .legend")
    assert "known: agent, use, person" in legend and "guessed: rule, LLM" in legend, legend
    # Known edges are solid whatever their status; a guessed one is dashed until a person decides.
    link = f"cw.cy.getElementById('e{state['link']}')"
    assert page.evaluate(f"{link}.data('known') && {link}.data('status') === 'inferred'")
    assert page.evaluate(f"{link}.style('line-style')") == "solid"
    guessed = [e["id"] for e in state["graph"]["edges"] if e["origin"] == "rule" and e["status"] == "inferred"]
    assert guessed
    assert page.evaluate(f"cw.cy.getElementById('e{guessed[0]}').style('line-style')") == "dashed"

    page.evaluate(f"cw.app.select({{type: 'edge', id: {state['link']}}})")
    page.locator(f"#panel article[data-edge-id='{state['link']}']").wait_for(timeout=5000)
    origin = page.inner_text("#panel-origin")
    assert "declared by the agent" in origin and "The agent declared this link" in origin, origin
    assert page.inner_text("#panel-origin-class") == "known"
    shot(page, "session-edge-origin-en")
    page.evaluate(f"cw.app.select({{type: 'edge', id: {guessed[0]}}})")
    page.locator(f"#panel article[data-edge-id='{guessed[0]}']").wait_for(timeout=5000)
    assert "Guessed by the engine's rules" in page.inner_text("#panel-origin")
    assert page.inner_text("#panel-origin-class") == "guessed"
    page.evaluate("cw.app.select(null)")

    # The filter: the guessed group's box hides every rule / LLM edge and leaves the agent's.
    counts = page.inner_text("#filters [data-group='origins']")
    assert "Known" in counts and "Guessed" in counts, counts
    page.uncheck("input[data-origin-class='guessed']")
    until(page, "cw.cy.edges().filter(e => ['rule', 'llm'].includes(e.data('origin')))"
                ".every(e => e.hasClass('hidden'))")
    assert not page.evaluate(f"{link}.hasClass('hidden')")
    assert not page.is_checked("#filters input[data-filter='origins'][value='rule']")
    page.locator("#filters [data-group='origins']").scroll_into_view_if_needed()
    shot(page, "session-origin-filter-en")
    page.check("input[data-origin-class='guessed']")
    until(page, f"!cw.cy.getElementById('e{guessed[0]}').hasClass('hidden')")
    # One origin alone: the agent's links off, the group's box half-checked.
    page.uncheck("#filters input[data-filter='origins'][value='agent']")
    until(page, f"{link}.hasClass('hidden')")
    assert page.evaluate("document.querySelector(\"input[data-origin-class='known']\").indeterminate")

    # The recall replay names where each edge that carried activation came from.
    answer = api_post(desk, "recall/", {"query": "Book the airport transfer for Friday at 12:30", "k": 6,
                                        "session_id": state["session"], "params": {"seed_count": 1, "max_hops": 1}})
    trace = api_get(desk, f"recalls/{answer['recall_id']}/")
    arrivals = [a for s in trace["steps"] if s["hop"] == 1 for a in s["arrivals"] if a.get("edge_id")]
    assert arrivals, trace["steps"]
    origins = {e["id"]: e["origin"] for e in state["graph"]["edges"]}
    names = {"agent": "declared by the agent", "rule": "rule", "llm": "LLM", "human": "human",
             "use": "learned from use"}
    page.evaluate("cw.app.select(null)")
    page.click("#filters-reset")
    page.click("#btn-recall")
    page.locator(f"#replay-list li[data-recall-id='{answer['recall_id']}'] .recall-open").click()
    until(page, "document.documentElement.dataset.replayStep !== ''")
    page.click("#replay-prev")  # hop 1: what arrived, from where, through which edge
    until(page, "document.documentElement.dataset.replayStep === '1'")
    detail = page.inner_text("#replay-step-detail")
    for arrival in arrivals:
        if arrival["edge_id"] in origins:
            assert f"({names[origins[arrival['edge_id']]]})" in detail, (arrival, detail)
    if any(a["edge_id"] == state["link"] for a in arrivals):
        assert "causal (declared by the agent)" in detail, detail
    shot(page, "session-replay-origins-en")
    page.click("#replay-close")

    # A viewer reads why the memory may be out of date, without the acts that settle it.
    viewer = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        login(viewer, desk, desk.viewer)
        open_session(viewer, desk, state["session"])
        _select(viewer, state["transfer"])
        viewer.locator("#panel-at-risk .risk").first.wait_for(timeout=5000)
        assert viewer.locator("#risk-actions").count() == 0
    finally:
        viewer.close()


def test_superseded_by_picks_the_replacement_with_the_link_flow(page, desk, django_db_blocker):
    pickup = "Car service confirmed: pickup on Friday at 15:30 at the hotel lobby for the evening flight"
    state = _at_risk_session(desk, django_db_blocker, "Risk: superseded by", extra=(pickup,))
    replacement = next(m["id"] for m in state["graph"]["memories"] if m["content"] == pickup)
    transfer = state["transfer"]
    login(page, desk, desk.member)
    open_session(page, desk, state["session"])
    wait_live(page)
    _select(page, transfer)
    page.locator("#panel-at-risk .risk").first.wait_for(timeout=5000)
    page.click("#risk-superseded")
    assert page.evaluate("document.body.classList.contains('linking')")
    page.locator("#toast .toast", has_text=f"replaces #{transfer}").wait_for(timeout=5000)
    page.evaluate(f"cw.app.select({{type: 'memory', id: {replacement}}})")  # what a click on the node does
    page.locator("#link-form").wait_for(timeout=5000)
    assert page.input_value("#link-relation") == "supersedes"
    assert page.inner_text("#link-form .panel-title") == "Superseded by…"
    assert f"#{transfer} will be marked superseded: #{replacement} replaces it." in page.inner_text("#link-note")
    shot(page, "session-superseded-by-en")
    page.click("#link-create")
    until(page, f"[...cw.model.edges.values()].some(e => e.source === {transfer} && e.target === {replacement} "
                "&& e.relation === 'supersedes' && e.origin === 'human')")
    until(page, f"cw.model.memories.get({transfer}).status === 'superseded'")
    # Out of use now: no mark, no section (its flag says nothing more).
    until(page, f"cw.cy.getElementById('m{transfer}').data('atRisk') === 0")
    until(page, "!document.body.classList.contains('linking')")
    page.locator(f"#panel article[data-memory-id='{transfer}']").wait_for(timeout=5000)
    assert page.locator("#panel-at-risk").count() == 0


def _used(memory_id: int, count: int) -> None:
    """As if stored recalls had returned it `count` times (the review orders by that)."""
    from memory.models import Memory

    Memory.objects.filter(pk=memory_id).update(access_count=count)


def test_the_review_queue_lists_what_may_be_out_of_date_most_used_first(page, desk, django_db_blocker):
    first = _at_risk_session(desk, django_db_blocker, "Risk: review, rarely used")
    second = _at_risk_session(desk, django_db_blocker, "Risk: review, often used")
    in_database(django_db_blocker, _used, second["transfer"], 3)
    login(page, desk, desk.member)
    page.goto(f"{desk.url}/p/{desk.project_slug}/review/")
    page.wait_for_selector("html[data-review-ready='1']", state="attached", timeout=10_000)
    section = page.locator("#at-risk")
    assert section.is_visible()
    listed = page.locator("#at-risk-list .at-risk-item").evaluate_all("items => items.map(i => +i.dataset.memoryId)")
    assert listed.index(second["transfer"]) < listed.index(first["transfer"]), listed
    item = page.locator(f".at-risk-item[data-memory-id='{first['transfer']}']")
    text = item.inner_text()
    assert "Book the airport transfer" in text and f"Depends on: #{first['flight']}" in text, text
    assert "superseded: 15:00 → 18:00" in text and "through causal, 1 hop" in text, text
    assert "used in 3 recalls" in page.locator(f".at-risk-item[data-memory-id='{second['transfer']}']").inner_text()
    assert "possibly out of date" in page.inner_text("#at-risk-jump")
    section.scroll_into_view_if_needed()
    shot(page, "review-at-risk-en")

    item.locator("button[data-act='still-valid']").click()
    page.locator("#toast .toast", has_text="still valid").wait_for(timeout=5000)
    item.wait_for(state="detached", timeout=5000)
    settled = page.locator("#acts-table tbody tr[data-kind='memory.risk']", has_text="confirmed a memory still holds")
    settled.first.wait_for(timeout=5000)
    page.click("#toast-undo")
    page.locator("#toast .toast", has_text="Undone").wait_for(timeout=5000)
    page.locator(f".at-risk-item[data-memory-id='{first['transfer']}']").wait_for(timeout=5000)

    # Superseded by…: the session's memories to pick from; the edge goes from the at-risk memory to the one picked.
    item = page.locator(f".at-risk-item[data-memory-id='{second['transfer']}']")
    item.locator("button[data-act='superseded']").click()
    item.locator(".supersede-pick select").select_option(str(second["change"]))
    item.locator("button[data-act='supersede-create']").click()
    page.locator("#toast .toast", has_text=f"#{second['transfer']} marked superseded by #{second['change']}").wait_for(
        timeout=5000)
    item.wait_for(state="detached", timeout=5000)
    edges = api_get(desk, f"sessions/{second['session']}/graph/")["edges"]
    assert any(e["source_id"] == second["transfer"] and e["target_id"] == second["change"]
               and e["relation"] == "supersedes" and e["origin"] == "human" for e in edges)
    # Archive takes the other out of use, and settles it.
    item = page.locator(f".at-risk-item[data-memory-id='{first['transfer']}']")
    item.locator("button[data-act='archive']").click()
    item.wait_for(state="detached", timeout=5000)
    memories = {m["id"]: m for m in api_get(desk, f"sessions/{first['session']}/graph/")["memories"]}
    assert (memories[first["transfer"]]["status"], memories[first["transfer"]]["at_risk"]) == ("archived", 0)


def test_the_at_risk_views_speak_chinese(page, desk, django_db_blocker):
    state = _at_risk_session(desk, django_db_blocker, "风险：航班改时间", language="zh")
    login(page, desk, desk.member)
    _language(page, "zh-hans")
    try:
        open_session(page, desk, state["session"])
        wait_live(page)
        legend = page.inner_text("#view-graph .legend")
        assert "已知" in legend and "推测" in legend and "可能已过时" in legend, legend
        _select(page, state["transfer"])
        page.locator("#panel-at-risk .risk").first.wait_for(timeout=5000)
        text = page.inner_text("#panel-at-risk")
        assert "可能已过时" in text and "依赖于" in text and "已被取代：15:00 → 18:00" in text, text
        assert "智能体声明" in text, text
        assert page.inner_text("#risk-still-valid") == "仍然有效"
        until(page, f"cw.cy.getElementById('e{state['link']}').hasClass('risk-path')")
        shot(page, "session-at-risk-selected-zh")
        page.evaluate(f"cw.app.select({{type: 'edge', id: {state['link']}}})")
        page.locator(f"#panel article[data-edge-id='{state['link']}']").wait_for(timeout=5000)
        assert "智能体" in page.inner_text("#panel-origin")
        shot(page, "session-edge-origin-zh")
        page.goto(f"{desk.url}/p/{desk.project_slug}/review/")
        page.wait_for_selector("html[data-review-ready='1']", state="attached", timeout=10_000)
        assert "可能已过时" in page.inner_text("#at-risk h2")
        item = page.locator(f".at-risk-item[data-memory-id='{state['transfer']}']")
        assert "依赖于" in item.inner_text()
        page.locator("#at-risk").scroll_into_view_if_needed()
        shot(page, "review-at-risk-zh")
    finally:
        _language(page, "en")
