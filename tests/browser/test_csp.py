"""The pages run under the Content-Security-Policy: no violation and no console error on any of them, and the
session graph, its websocket, the language switch and Swagger UI still work."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from .conftest import PASSWORD, _test_database, login, open_session, placeholder_fits, screenshot, wait_live

# Runs in every document before the page's own scripts (Playwright injects it outside the page's CSP).
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) => {
  window.cwReportViolation({directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile,
                            line: e.lineNumber, sample: e.sample, page: location.pathname});
});
"""


class Watch:
    """What the browser complained about while the test ran: CSP violations, console errors and warnings,
    uncaught exceptions."""

    def __init__(self, page) -> None:
        self.violations: list[dict] = []
        self.console: list[str] = []
        self.errors: list[str] = []
        page.expose_function("cwReportViolation", self._violation)
        page.add_init_script(REPORT_VIOLATIONS)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _violation(self, report: dict) -> None:
        self.violations.append(report)

    def _console(self, message) -> None:
        # Django's admin declares no icon, so Chromium asks for /favicon.ico (404): not a policy matter.
        if message.location.get("url", "").endswith("/favicon.ico"):
            return
        if message.type in ("error", "warning"):
            self.console.append(f"{message.type}: {message.text} ({message.location.get('url')})")

    def assert_clean(self) -> None:
        assert self.violations == [], self.violations
        assert self.console == [], self.console
        assert self.errors == [], self.errors


@pytest.fixture
def watch(page) -> Watch:
    return Watch(page)


def test_login_home_and_project_pages_run_without_violations(page, site, watch):
    page.goto(site.url + "/login/")
    assert page.locator("#id_username").is_visible()
    login(page, site, site.member)
    assert page.locator(f"[data-project='{site.project_slug}'] h2").inner_text() == "Travel agents"
    # Styles that used to be style="…" attributes come from the stylesheet now.
    margin = page.evaluate(f"getComputedStyle(document.querySelector(\"[data-project='{site.project_slug}']\"))"
                           ".marginBottom")
    assert margin == "14px"  # 1rem
    page.click(f"[data-project='{site.project_slug}'] h2 a")
    page.wait_for_selector(f"tr[data-session-id='{site.session_id}']")
    watch.assert_clean()


def test_the_session_page_draws_and_goes_live_without_violations(page, site, watch):
    login(page, site, site.member)
    graph_requests: list[str] = []
    page.on("request", lambda r: graph_requests.append(r.url) if "/graph/" in r.url else None)
    open_session(page, site)
    wait_live(page)  # the websocket passed connect-src 'self'
    assert page.evaluate("cw.cy.nodes().length") > 10
    # The head's static script started the graph request and the module picked it up: one request, not two.
    assert len(graph_requests) == 1, graph_requests
    assert page.evaluate("window.cwGraphRequest") is None
    # Cytoscape's own <style> was not inserted (the CSP would refuse it); app.css positions the container.
    assert page.evaluate("document.querySelector('style')") is None
    assert "rgb(240, 228, 66)" in page.evaluate(  # the proposal halo, from app.css
        "getComputedStyle(document.querySelector('.swatch-proposal')).boxShadow")
    screenshot(page, "csp-session-en")
    watch.assert_clean()


def test_the_language_switch_works_from_the_static_script(page, site, watch):
    login(page, site, site.member)
    open_session(page, site)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.wait_for_selector("html[data-graph-ready='1']", state="attached", timeout=30_000)
    wait_live(page)
    assert page.inner_text("[data-tab='graph']") == "图谱"
    screenshot(page, "csp-session-zh")
    page.click("[data-tab='list']")
    page.click("th[data-sort='importance']")
    assert not page.locator("#panel").is_visible()
    screenshot(page, "session-list-zh")
    # An entity's type reads in Chinese in the panel ("Shanghai · 地点", not "· place").
    page.locator("#memory-table tbody tr", has=page.locator("td", has_text="Shanghai")).first.click()
    chips = page.locator("#panel .chip-entity").all_inner_texts()
    assert chips and all(re.search(r"·\s*[\u4e00-\u9fff]+$", chip) for chip in chips), chips
    facts = page.inner_text("#panel .facts")
    assert "neutral" not in facts and "positive" not in facts and "user_input" not in facts, facts
    screenshot(page, "session-panel-zh")
    page.goto(site.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    assert page.inner_text("#back-to-app") == "← 返回 ContextWeaver"
    screenshot(page, "csp-api-docs-zh")
    page.goto(site.url + "/")
    assert placeholder_fits(page, "input[name=q]")
    screenshot(page, "home-zh")
    with page.expect_navigation():
        page.select_option("#language-select", "en")
    assert page.locator("h1").first.inner_text() == "Projects"
    watch.assert_clean()


def test_swagger_ui_renders_without_violations(page, site, watch):
    login(page, site, site.member)
    page.goto(site.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    assert "ContextWeaver agent API" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".swagger-ui .opblock").count() > 5
    # swagger.css took over the template's inline <style>.
    assert page.evaluate("getComputedStyle(document.body).margin") == "0px"
    page.locator(".swagger-ui .opblock-summary").first.click()
    page.wait_for_selector(".swagger-ui .opblock-body", timeout=10_000)
    screenshot(page, "csp-api-docs-en")
    with page.expect_navigation():
        page.click("#back-to-app")  # the way back to the app
    assert page.url == site.url + "/" and page.locator("h1").first.inner_text() == "Projects"
    watch.assert_clean()


def _admin_create(database: str) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection

    connection.settings_dict["NAME"] = database
    try:
        users = get_user_model().objects
        if not users.filter(username="root").exists():
            users.create_superuser("root", password=PASSWORD)
    finally:
        connection.close()


@pytest.fixture
def admin_user(site, django_db_blocker) -> str:
    from django.db import connection

    database = _test_database(connection)
    with django_db_blocker.unblock(), ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(_admin_create, database).result()
    return "root"


def test_admin_pages_run_without_violations(page, site, admin_user, watch):
    page.goto(site.url + "/admin/login/")
    page.fill("#id_username", admin_user)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(site.url + "/admin/")
    page.goto(site.url + "/admin/auth/user/")
    page.wait_for_selector("#result_list")
    page.goto(site.url + "/admin/auth/user/add/")
    page.wait_for_selector("#id_username")
    watch.assert_clean()
