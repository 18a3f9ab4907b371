"""A supersede across sessions on both sessions' pages (issue 45, finding 2).

The edge is stored with the new memory's session, its source (the old memory) lives in another. Each page
draws the edge and, at its far end, a ghost of the other session's memory (faded, dashed, named after that
session) whose panel links to it in its session; on the old memory's open page the ghost and the edge come
live, and a curator approves (and undoes) the replacement there.
"""

from __future__ import annotations

import pytest

from .conftest import (
    api_get,
    login,
    new_session,
    open_session,
    other_project,
    post_interaction,
    screenshot,
    until,
    wait_live,
)

OLD = "My phone number is +1 555 201 3344."
NEW = "Note that my phone number has changed to +1 555 987 6543."


@pytest.fixture(scope="module")
def desk(site, django_db_blocker):
    """A project of this module's own: its phone numbers must not reach the demo's sessions (nor push them off the
    home page)."""
    return other_project(site, django_db_blocker, "ghosts-web", "Ghost desk")


def _edge_between(site, session_id: int, source: int, target: int) -> dict:
    graph = api_get(site, f"sessions/{session_id}/graph/")
    (edge,) = [e for e in graph["edges"] if (e["source_id"], e["target_id"]) == (source, target)]
    return edge


def test_a_replacement_from_another_session_shows_as_a_ghost_on_both_pages(page, desk):
    site = desk
    march = new_session(site, "Ghost test March")
    april = new_session(site, "Ghost test April")
    old = post_interaction(site, march, OLD)["memory_ids"][0]
    login(page, site, site.member)
    open_session(page, site, march)
    wait_live(page)
    page.evaluate("window.cwNotReloaded = true")

    # The agent states the new number in April: March's open page draws the proposed edge and April's memory as
    # a ghost, live.
    new = post_interaction(site, april, NEW)["memory_ids"][0]
    edge = _edge_between(site, april, old, new)
    assert edge["relation"] == "supersedes" and edge["needs_review"] is True
    until(page, f"cw.cy.getElementById('o{new}').nonempty() && cw.cy.getElementById('e{edge['id']}').nonempty()",
          timeout=10)
    ghost = f"cw.cy.getElementById('o{new}')"
    assert page.evaluate(f"{ghost}.data('label')").endswith("Ghost test April")
    assert page.evaluate(f"cw.cy.getElementById('e{edge['id']}').source().id()") == f"m{old}"
    assert page.evaluate(f"!{ghost}.hasClass('hidden') && {ghost}.style('border-style') === 'dashed'")
    # Not one of March's memories: not counted, not listed.
    assert page.inner_text("#graph-stats").startswith("1 of 1 memories")
    assert page.evaluate("cw.model.memories.size") == 1

    # The old memory's panel says what is proposed to replace it, and from where.
    page.evaluate(f"cw.app.select({{type: 'memory', id: {old}}})")
    replaced = page.locator("#panel-replaced-by")
    replaced.wait_for(timeout=5000)
    assert f"#{new}" in replaced.inner_text() and "Ghost test April" in replaced.inner_text()
    page.wait_for_timeout(2600)  # the arrival's pulse fades: the screenshots show the ghost as it stays
    screenshot(page, "session-ghost-replaced-memory")

    # The ghost's panel: which session it belongs to, and a link to it there.
    page.locator("#panel-replaced-by .ghost-link", has_text=f"#{new} ").click()
    page.locator(f"#panel article[data-ghost-id='{new}']").wait_for(timeout=5000)
    assert "Ghost test April" in page.inner_text("#ghost-home")
    assert NEW in page.inner_text("#panel")
    href = page.get_attribute("#ghost-open", "href")
    assert href == f"/p/{site.project_slug}/sessions/{april}/?memory={new}"
    screenshot(page, "session-ghost-panel")

    # A curator approves the cross-session edge on March's page: the old memory is superseded, live; undo puts
    # the proposal back.
    page.evaluate(f"cw.app.select({{type: 'edge', id: {edge['id']}}})")
    assert "Ghost test April" in page.inner_text("#edge-crossing")
    page.click("#edge-approve")
    page.locator("#toast .toast", has_text="Edge approved").wait_for(timeout=5000)
    until(page, f"cw.model.memories.get({old}).status === 'superseded'")
    until(page, f"cw.model.edges.get({edge['id']}).status === 'approved'")
    page.evaluate(f"cw.app.select({{type: 'memory', id: {old}}})")
    page.locator("#panel-replaced-by", has_text="Replaced by").wait_for(timeout=5000)
    screenshot(page, "session-ghost-approved")
    page.click("#toast-undo")
    until(page, f"cw.model.memories.get({old}).status === 'active'")
    until(page, f"cw.model.edges.get({edge['id']}).needsReview === true")
    assert page.evaluate("window.cwNotReloaded === true"), "the page was reloaded"

    # Opened again, March's page has the same from the graph; the link opens April at the new memory, with
    # March's memory as a ghost there.
    open_session(page, site, march)
    assert page.evaluate(f"{ghost}.nonempty() && cw.cy.getElementById('e{edge['id']}').nonempty()")
    page.evaluate(f"cw.app.select({{type: 'ghost', id: {new}}})")
    with page.expect_navigation():
        page.click("#ghost-open")
    page.wait_for_selector("html[data-graph-complete='1']", state="attached", timeout=30_000)
    page.locator(f"#panel article[data-memory-id='{new}']").wait_for(timeout=5000)
    assert page.evaluate(f"cw.cy.getElementById('o{old}').nonempty() && cw.cy.getElementById('m{new}').selected()")
    assert page.evaluate(f"cw.cy.getElementById('o{old}').data('label')").endswith("Ghost test March")
    replaces = page.inner_text("#panel-replaced-by")
    assert f"#{old}" in replaces and "Ghost test March" in replaces
    screenshot(page, "session-ghost-other-side")

    # In Chinese: the ghost's panel and its label.
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.wait_for_selector("html[data-graph-complete='1']", state="attached", timeout=30_000)
    page.evaluate(f"cw.app.select({{type: 'ghost', id: {old}}})")
    page.locator(f"#panel article[data-ghost-id='{old}']").wait_for(timeout=5000)
    assert "其他会话" in page.inner_text("#panel") and "Ghost test March" in page.inner_text("#ghost-home")
    screenshot(page, "session-ghost-panel-zh")
