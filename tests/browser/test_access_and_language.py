"""Who may see what (pages, API, websocket), and the Simplified Chinese interface."""

from __future__ import annotations

import urllib.error
import urllib.request

from .conftest import login, open_session, screenshot, wait_live


def test_anonymous_visitors_are_sent_to_the_login_page(page, site):
    page.goto(site.url + site.session_path())
    assert "/login/" in page.url and "next=" in page.url
    try:
        urllib.request.urlopen(site.api(f"sessions/{site.session_id}/graph/"), timeout=10)
        raise AssertionError("the API answered an anonymous request")
    except urllib.error.HTTPError as error:
        assert error.code in (401, 403)


def test_a_user_without_access_gets_404_on_pages_and_api_and_is_closed_on_the_websocket(page, site):
    """Pages and the API answer as for a project nobody has (nothing tells the project exists)."""
    login(page, site, site.outsider)
    assert page.locator(f"[data-project='{site.project_slug}']").count() == 0
    response = page.goto(site.url + site.session_path())
    assert response.status == 404
    assert "Not found" in page.inner_text("body")
    response = page.goto(site.url + f"/p/{site.project_slug}/")
    assert response.status == 404
    api = page.request.get(site.api(f"sessions/{site.session_id}/graph/"))
    assert api.status == 404
    code = page.evaluate("""(path) => new Promise((resolve) => {
        const socket = new WebSocket(`ws://${location.host}${path}`);
        socket.onclose = (event) => resolve(event.code);
        setTimeout(() => resolve('timeout'), 5000);
    })""", f"/ws/sessions/{site.session_id}/")
    assert code == 4404  # as for a session that does not exist
    screenshot(page, "no-access")


def test_switching_to_simplified_chinese(page, site):
    login(page, site, site.member)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    assert page.locator("h1").first.inner_text() == "项目"
    assert "退出登录" in page.inner_text("header")
    screenshot(page, "home-zh")
    open_session(page, site)
    wait_live(page)
    assert page.inner_text("[data-tab='graph']") == "图谱"
    assert page.inner_text("#live-status-text") == "实时"  # from the JavaScript catalog
    assert "类型" in page.inner_text("#filters")
    assert page.locator("#panel").inner_text().startswith("详情")
    screenshot(page, "session-zh")
    with page.expect_navigation():
        page.select_option("#language-select", "en")
    page.wait_for_selector("html[data-graph-ready='1']", state="attached")
    assert page.inner_text("[data-tab='graph']") == "Graph"
