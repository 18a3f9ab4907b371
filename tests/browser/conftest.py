"""Browser tests: Debian's Chromium (Playwright) against a real uvicorn server on the test database.

The server is a separate process serving contextweaver_site.asgi with the test settings (inline
ingest: the server process runs the pipeline and publishes to the page's websocket), pointed at the
test database that pytest-django created (CW_DB_NAME). Data is written in this process outside any
test transaction, so the server sees it; the database is dropped at the end of the run.
Run in their own pytest process (scripts/run-tests.sh): Playwright's sync API runs an event loop in
the test thread, which Django's async-safety check would otherwise refuse.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

# The ORM is called from fixtures while Playwright's event loop runs in the same thread.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "var" / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", "--no-first-run", "--disable-gpu"]
PASSWORD = "a-long-test-password-1"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/system-deps.sh (never `playwright install`).")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1440, "height": 900}, "locale": "en-US"}


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker):
    """Create the test database for the whole run. pytest-django's own fixture only creates it for
    tests marked django_db, whose per-test flush would wipe the data the server process reads."""
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        config = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield
    with django_db_blocker.unblock():
        teardown_databases(config, verbosity=0)


@pytest.fixture(scope="session")
def server_url(django_db_setup, django_db_blocker) -> str:
    """A uvicorn process (HTTP + websockets) on the test database; stopped before the database is dropped."""
    from django.db import connection

    from contextweaver_site.serve import running_server

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.test",
           "CW_DB_NAME": _test_database(connection), "DEBUG": "false", "CW_DB_POOL_SIZE": "10"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    with (ARTIFACTS / "browser-server.log").open("w") as log:
        try:
            with running_server(env, log=log) as url:
                yield url
        except RuntimeError as exc:
            pytest.fail(str(exc))


@dataclass
class Site:
    url: str
    project_slug: str
    session_id: int
    token: str
    member: str
    outsider: str
    viewer: str = "victor"

    def session_path(self, session_id: int | None = None) -> str:
        return f"/p/{self.project_slug}/sessions/{session_id or self.session_id}/"

    def api(self, path: str) -> str:
        return f"{self.url}/api/projects/{self.project_slug}/{path}"


def _test_database(connection) -> str:
    """The database pytest-django created. Read from the settings, not the connection: under
    Playwright's greenlets this thread may hold a fresh connection that still names the default one."""
    name = connection.creation._get_test_db_name()
    assert name.startswith("test_"), f"refusing to use {name!r}: not a test database"
    return name


def _site_create(database: str) -> tuple[str, int, str]:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from memory.demo.bootstrap import scenario_load
    from memory.demo.scenarios import load_scenarios
    from memory.engine.projects import project_create, token_issue
    from memory.models import Membership, Role

    connection.settings_dict["NAME"] = database  # this thread's connection: the test database, not the default
    try:
        project = project_create(name="Travel agents", slug="travel-web")
        scenario = next(s for s in load_scenarios("en") if s.topic == "travel")
        session = scenario_load(project, scenario)
        users = get_user_model().objects
        member = users.create_user("alice", password=PASSWORD)
        Membership.objects.create(project=project, user=member, role=Role.CURATOR)
        users.create_user("mallory", password=PASSWORD)
        viewer = users.create_user("victor", password=PASSWORD)
        Membership.objects.create(project=project, user=viewer, role=Role.VIEWER)
        token = token_issue(project=project, name="browser-tests")[1]
        return project.slug, session.pk, token
    finally:
        connection.close()


@pytest.fixture(scope="session")
def site(server_url, django_db_blocker) -> Site:
    """A project with the English travel demo loaded through the real pipeline, a member and an outsider.

    Written from a worker thread: the engine publishes live events with async_to_sync, which refuses
    to run in a thread where an event loop (Playwright's) is running.
    """
    from django.db import connection

    database = _test_database(connection)
    with django_db_blocker.unblock(), ThreadPoolExecutor(max_workers=1) as pool:
        slug, session_id, token = pool.submit(_site_create, database).result()
    return Site(url=server_url, project_slug=slug, session_id=session_id, token=token, member="alice",
                outsider="mallory")


def _project_create(database: str, slug: str, name: str) -> str:
    """Another project for the same people (alice curator, victor viewer); returns its agent token."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from memory.engine.projects import project_create, token_issue
    from memory.models import Membership, Role

    connection.settings_dict["NAME"] = database
    try:
        project = project_create(name=name, slug=slug)
        users = get_user_model().objects
        Membership.objects.create(project=project, user=users.get(username="alice"), role=Role.CURATOR)
        Membership.objects.create(project=project, user=users.get(username="victor"), role=Role.VIEWER)
        return token_issue(project=project, name="browser-tests")[1]
    finally:
        connection.close()


def _in_database(database: str, fn, *args):
    from django.db import connection

    connection.settings_dict["NAME"] = database
    try:
        return fn(*args)
    finally:
        connection.close()


def in_database(django_db_blocker, fn, *args):
    """Run `fn(*args)` with the ORM on the test database, in a worker thread (Playwright's loop runs here)."""
    from django.db import connection

    database = _test_database(connection)
    with django_db_blocker.unblock(), ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_in_database, database, fn, *args).result()


def other_project(site: Site, django_db_blocker, slug: str, name: str) -> Site:
    """The same site and people on a project of its own, so a test module's sessions leave the demo's alone."""
    from dataclasses import replace

    from django.db import connection

    database = _test_database(connection)
    with django_db_blocker.unblock(), ThreadPoolExecutor(max_workers=1) as pool:
        token = pool.submit(_project_create, database, slug, name).result()
    return replace(site, project_slug=slug, token=token, session_id=0)


def login(page, site: Site, username: str) -> None:
    page.goto(site.url + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(site.url + "/")


def open_session(page, site: Site, session_id: int | None = None, query: str = ""):
    page.goto(site.url + site.session_path(session_id) + query)
    page.wait_for_selector("html[data-graph-ready='1']", state="attached", timeout=30_000)
    page.wait_for_selector("html[data-graph-complete='1']", state="attached", timeout=30_000)


def wait_live(page) -> None:
    page.wait_for_selector("#live-status[data-state='live']", timeout=15_000)


def post_interaction(site: Site, session_id: int, content: str, kind: str = "user_input") -> dict:
    """What an agent does: POST with the project token. The test server processes it inline."""
    request = urllib.request.Request(
        site.api(f"sessions/{session_id}/interactions/"), method="POST",
        data=json.dumps({"kind": kind, "content": content}).encode(),
        headers={"Authorization": f"Bearer {site.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["interactions"][0]


def until(page, expression: str, timeout: float = 5.0) -> None:
    """Poll a page expression until it holds (wait_for_function evaluates strings, which the CSP forbids)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"still false after {timeout} s: {expression}"
        time.sleep(0.05)


def api_post(site: Site, path: str, body: dict) -> dict:
    """POST to the project's API as its agent token."""
    request = urllib.request.Request(site.api(path), method="POST", data=json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {site.token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def api_get(site: Site, path: str) -> dict:
    request = urllib.request.Request(site.api(path), headers={"Authorization": f"Bearer {site.token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def new_session(site: Site, title: str) -> int:
    request = urllib.request.Request(
        site.api("sessions/"), method="POST", data=json.dumps({"title": title, "task": "Plan a trip"}).encode(),
        headers={"Authorization": f"Bearer {site.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["id"]


def screenshot(page, name: str, *, full_page: bool = False) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def placeholder_fits(page, selector: str) -> bool:
    """Whether the input's whole placeholder fits in its box: typed in as the value, it must not scroll
    (a search box keeps room for its clear button, so measuring the text alone is not enough)."""
    placeholder, scrolls = page.evaluate("""(selector) => {
        const input = document.querySelector(selector), before = input.value;
        input.value = input.placeholder;
        const scrolls = input.scrollWidth > input.clientWidth;
        input.value = before;
        return [input.placeholder, scrolls];
    }""", selector)
    assert placeholder, f"{selector} has no placeholder"
    return not scrolls


def visible_memory_ids(page) -> list[int]:
    return page.evaluate("cw.cy.nodes().filter(n => !n.hasClass('hidden')).map(n => n.data('mid'))"
                         ".sort((a, b) => a - b)")

