"""Browser protections on the wire: the CSP on every page, no inline code, no caching of logged-in answers,
no CORS on static files, and the profile behind TLS (settings/production.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from memory.models import AgentSession, Membership, Project, Role

ROOT = Path(__file__).resolve().parents[1]
NO_STORE_MIDDLEWARE = "contextweaver_site.middleware.NoStoreWhenAuthenticatedMiddleware"
PASSWORD = "a-long-test-password-1"


def csp_directives(response) -> dict[str, list[str]]:
    header = response.headers.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


class InlineCode(HTMLParser):
    """Collects what a `script-src 'self'; style-src 'self'` policy would refuse in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self._in_inline_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        for name, _value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=…> (inline handler)")
            if name == "style":
                self.problems.append(f"<{tag} style=…> (inline style)")
        if tag == "style":
            self.problems.append("<style> element (inline style)")
        if tag == "script" and not named.get("src") and named.get("type") != "application/json":
            self._in_inline_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_inline_script:
            self._in_inline_script = False

    def handle_data(self, data: str) -> None:
        if self._in_inline_script and data.strip():
            self.problems.append(f"inline <script>: {data.strip()[:80]!r}")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)


def inline_code(html: str) -> list[str]:
    parser = InlineCode()
    parser.feed(html)
    parser.close()
    return parser.problems


@pytest.fixture
def member(project: Project):
    user = get_user_model().objects.create_user("alice", password=PASSWORD)
    Membership.objects.create(project=project, user=user, role=Role.CURATOR)
    return user


@pytest.fixture
def member_client(member) -> Client:
    client = Client()
    client.force_login(member)
    return client


def logged_in_pages(session: AgentSession) -> list[str]:
    slug = session.project.slug
    return ["/", f"/p/{slug}/", f"/p/{slug}/sessions/{session.pk}/", "/api/docs/"]


def test_the_policy_allows_only_our_own_scripts_and_styles():
    directives = settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
    assert directives["script-src"] == ["'self'"] and directives["style-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'none'"]


@pytest.mark.django_db
def test_the_login_page_has_the_policy_and_no_inline_code(client):
    response = client.get("/login/")
    assert response.status_code == 200
    directives = csp_directives(response)
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"]
    assert directives["style-src"] == ["'self'"]
    assert directives["img-src"] == ["'self'", "data:"]
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["form-action"] == ["'self'"]
    assert inline_code(response.content.decode()) == []


@pytest.mark.django_db
def test_logged_in_pages_have_the_policy_and_no_inline_code(member_client, agent_session):
    for path in logged_in_pages(agent_session):
        response = member_client.get(path)
        assert response.status_code == 200, path
        directives = csp_directives(response)
        for directive in ("script-src", "style-src", "default-src"):
            assert directives[directive] == ["'self'"], (path, directive, directives)
        assert "'unsafe-inline'" not in response.headers["Content-Security-Policy"], path
        assert "'unsafe-eval'" not in response.headers["Content-Security-Policy"], path
        assert inline_code(response.content.decode()) == [], path


@pytest.mark.django_db
def test_the_session_page_starts_the_graph_request_from_a_static_script(member_client, agent_session):
    html = member_client.get(logged_in_pages(agent_session)[2]).content.decode()
    graph_url = f"/api/projects/{agent_session.project.slug}/sessions/{agent_session.pk}/graph/"
    assert f'data-graph-url="{graph_url}"' in html
    assert "cw/prefetch.js" in html and "cw/page.js" in html


@pytest.mark.django_db
def test_the_api_docs_load_their_init_script_from_our_origin(member_client):
    html = member_client.get("/api/docs/").content.decode()
    assert 'src="/api/docs/?script="' in html
    script = member_client.get("/api/docs/?script=")
    assert script.status_code == 200
    assert script.headers["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle(" in script.content


@pytest.mark.django_db
def test_admin_pages_have_the_policy_and_no_inline_code(client):
    admin = get_user_model().objects.create_superuser("root", password=PASSWORD)
    assert "script-src 'self'" in client.get("/admin/login/").headers["Content-Security-Policy"]
    client.force_login(admin)
    for path in ("/admin/", "/admin/memory/project/", "/admin/auth/user/add/"):
        response = client.get(path)
        if response.status_code == 404:  # a model the admin does not register
            continue
        assert response.status_code == 200, path
        assert csp_directives(response)["script-src"] == ["'self'"], path
        assert inline_code(response.content.decode()) == [], path


def test_the_no_store_middleware_is_installed_after_authentication():
    middleware = settings.MIDDLEWARE
    assert NO_STORE_MIDDLEWARE in middleware, f"add {NO_STORE_MIDDLEWARE} to MIDDLEWARE in settings/base.py"
    assert middleware.index(NO_STORE_MIDDLEWARE) > middleware.index(
        "django.contrib.auth.middleware.AuthenticationMiddleware")


def no_store(response) -> bool:
    directives = {d.strip().split("=")[0] for d in response.headers.get("Cache-Control", "").split(",")}
    return "no-store" in directives and "public" not in directives


@pytest.mark.django_db
def test_logged_in_pages_and_api_answers_are_not_stored(member_client, agent_session, api):
    for path in logged_in_pages(agent_session):
        response = member_client.get(path)
        assert no_store(response), (path, response.headers.get("Cache-Control"))
    graph = f"/api/projects/{agent_session.project.slug}/sessions/{agent_session.pk}/graph/"
    response = member_client.get(graph)
    assert response.status_code == 200 and no_store(response), response.headers.get("Cache-Control")
    response = api.get(graph)  # with the project token, no session
    assert response.status_code == 200 and no_store(response), response.headers.get("Cache-Control")


@pytest.mark.django_db
def test_admin_pages_are_not_stored(client):
    client.force_login(get_user_model().objects.create_superuser("root", password=PASSWORD))
    assert no_store(client.get("/admin/"))


@pytest.mark.django_db
def test_static_files_allow_no_other_origin(client):
    paths = ["/static/admin/css/base.css", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css"]
    if (ROOT / "frontend" / "dist" / "cw" / "app.css").exists():
        paths += ["/static/cw/app.css", "/static/cw/page.js"]
    for path in paths:
        response = client.get(path, headers={"Origin": "https://elsewhere.example"})
        assert response.status_code == 200, path
        assert "Access-Control-Allow-Origin" not in response.headers, path


# --- settings/production.py, read in a child process (its settings are computed at import) -------------------

SECRET = "k" * 20 + "0123456789abcdefghijklmnopqrstuvwxyz"
PRODUCTION_ENV = {"SECRET_KEY": SECRET, "ALLOWED_HOSTS": "memory.example.com,.example.org"}
READ_SETTINGS = """
import json, django
from django.conf import settings
django.setup()
names = ["DEBUG", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_SSL_REDIRECT",
         "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SESSION_COOKIE_HTTPONLY", "SECURE_PROXY_SSL_HEADER",
         "ALLOWED_HOSTS", "SECRET_KEY", "CONTENT_SECURITY_POLICY", "WHITENOISE_ALLOW_ALL_ORIGINS"]
print(json.dumps({name: getattr(settings, name, None) for name in names}))
"""


def run_production(code: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("SECRET_KEY", "ALLOWED_HOSTS", "DEBUG") and not k.startswith("CW_HSTS")
            and k not in ("CW_SSL_REDIRECT", "CW_TRUST_X_FORWARDED_PROTO")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**base, "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.production", **env})


def production_settings(**env: str) -> dict:
    result = run_production(READ_SETTINGS, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_turns_on_hsts_secure_cookies_and_the_https_redirect():
    values = production_settings(**PRODUCTION_ENV)
    assert values["DEBUG"] is False
    assert values["SECURE_HSTS_SECONDS"] == 365 * 24 * 3600 and values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SESSION_COOKIE_SECURE"] is True and values["CSRF_COOKIE_SECURE"] is True
    assert values["SESSION_COOKIE_HTTPONLY"] is True
    assert values["SECURE_PROXY_SSL_HEADER"] is None  # not trusted unless the proxy is declared
    assert values["SECRET_KEY"] == SECRET
    assert values["ALLOWED_HOSTS"] == ["memory.example.com", ".example.org"]
    assert values["WHITENOISE_ALLOW_ALL_ORIGINS"] is False
    connect = values["CONTENT_SECURITY_POLICY"]["DIRECTIVES"]["connect-src"]
    assert connect == ["'self'", "wss://memory.example.com", "wss://example.org", "wss://*.example.org"]


def test_production_reads_the_proxy_header_and_hsts_from_the_environment():
    values = production_settings(**PRODUCTION_ENV, CW_TRUST_X_FORWARDED_PROTO="1", CW_HSTS_SECONDS="600",
                                 CW_SSL_REDIRECT="0")
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["SECURE_HSTS_SECONDS"] == 600
    assert values["SECURE_SSL_REDIRECT"] is False


@pytest.mark.parametrize("env, message", [
    ({"ALLOWED_HOSTS": "memory.example.com"}, "needs SECRET_KEY"),
    ({"ALLOWED_HOSTS": "memory.example.com", "SECRET_KEY": "too-short"}, "needs SECRET_KEY"),
    ({"SECRET_KEY": SECRET}, "needs ALLOWED_HOSTS"),
    ({**PRODUCTION_ENV, "DEBUG": "true"}, "DEBUG must be off"),
])
def test_production_refuses_to_start_without_its_environment(env, message):
    result = run_production("import contextweaver_site.settings.production", **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr, result.stderr[-500:]


def test_the_deploy_check_finds_no_security_warnings_with_preload_on():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--tag", "security", "--fail-level", "WARNING"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**{k: v for k, v in os.environ.items() if k != "DEBUG"}, **PRODUCTION_ENV, "CW_HSTS_PRELOAD": "1",
             "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.production"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
