"""Authorization matrix generated from the URL configuration: every route × every kind of caller.

Why: access rules live in each view (memory/api/access.py, maintenance.py, web/views.py,
live/access.py), so a new endpoint can silently ship without one. The routes are discovered from
`get_resolver()` and `memory.routing.websocket_urlpatterns`; a route missing from MATRIX (or
WS_MATRIX), or a table entry no route matches, fails the suite until someone decides who may call it.

Every call runs in a savepoint that is rolled back, so writes (sessions, promote, dry runs) leave
the same starting state for the next caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any, NamedTuple

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import get_converters
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework.views import APIView

from administration.models import ForgetJob
from curation.services import memory_update
from memory.engine.changelog import change_record
from memory.engine.maintenance.forget import ForgetFilter, forget_selection
from memory.engine.projects import project_create, session_create, token_issue
from memory.engine.recall import RecallQuery, memory_recall
from memory.engine.snapshots import interaction_snapshot, memory_snapshot
from memory.models import ApiToken, Entity, Interaction, InteractionStatus, Membership, Role, StoreItem
from memory.routing import websocket_urlpatterns

from .test_maintenance_support import link, remember

# --- the table ------------------------------------------------------------------------------------

PRINCIPALS = ("anonymous", "garbage", "revoked", "other_token", "token", "viewer", "curator", "admin", "outsider",
              "superuser")
# Callers who must never see a sensitive memory's content (agents' tokens, viewers, and everyone without access).
NO_SENSITIVE = frozenset(PRINCIPALS) - {"curator", "admin", "superuser"}
# Callers with no access to the project: nothing of it may reach them, even in a 2xx (e.g. the home page).
NO_ACCESS = frozenset({"anonymous", "garbage", "revoked", "other_token", "outsider"})

ADMIN_PREFIX = "admin/"  # Django admin's generated routes: one group, covered by the rows below starting with it
LOGIN = "/login/"
ADMIN_LOGIN = "/admin/login/"
SENSITIVE_MARK = "K7741-PASSPORT"  # in the sensitive memory's content only
PROJECT_MARK = "Authz-Marker-Trip"  # the test session's title: shows on every page of the project


class Row(NamedTuple):
    """Expected status per principal (in PRINCIPALS order), a valid body, and where 302s must point."""

    expect: tuple[int, ...]
    body: Any = None
    fmt: str = "json"  # "json" (APIClient format) or "form"
    redirect: str | None = None  # prefix every 302 Location must start with


# Callers with no standing in the project (another project's token, a person who is not a member) get 404 on
# its routes, the answer a slug nobody has gets (test_no_standing_answers_as_an_unknown_slug): a 403 would tell
# them the project exists. 403 is for a member whose role is too low, or a token on a people-only act.
#   PRINCIPALS:  anonymous garbage revoked other_token token viewer curator admin outsider superuser
MATRIX: dict[tuple[str, str], Row] = {
    # Django auth, i18n, the site icon: public.
    ("favicon.ico", "GET"): Row((200, 200, 200, 200, 200, 200, 200, 200, 200, 200)),
    # Liveness says nothing but "alive"; readiness and metrics describe the deployment: the monitoring token
    # (tests/test_monitoring.py) or a superuser. Project tokens are agents' keys, not accepted there.
    ("healthz", "GET"): Row((200, 200, 200, 200, 200, 200, 200, 200, 200, 200)),
    ("readyz", "GET"): Row((401, 401, 401, 401, 401, 403, 403, 403, 403, 200)),
    ("metrics", "GET"): Row((401, 401, 401, 401, 401, 403, 403, 403, 403, 200)),
    ("login/", "GET"): Row((200, 200, 200, 200, 200, 200, 200, 200, 200, 200)),
    # A new account's one-time link is public by nature (its token is the key); a made-up one says it no longer works.
    ("welcome/<uidb64>/<token>/", "GET"): Row((200, 200, 200, 200, 200, 200, 200, 200, 200, 200)),
    ("logout/", "POST"): Row((302, 302, 302, 302, 302, 302, 302, 302, 302, 302), fmt="form", redirect=LOGIN),
    ("i18n/setlang/", "POST"): Row((302, 302, 302, 302, 302, 302, 302, 302, 302, 302), body={"language": "en"},
                                   fmt="form", redirect="/"),
    ("jsi18n/", "GET"): Row((200, 200, 200, 200, 200, 200, 200, 200, 200, 200)),
    # Django admin (staff only; API tokens are not Django logins): representatives of the admin/ group.
    ("admin/", "GET"): Row((302, 302, 302, 302, 302, 302, 302, 302, 302, 200), redirect=ADMIN_LOGIN),
    ("admin/login/", "GET"): Row((200, 200, 200, 200, 200, 200, 200, 200, 200, 302), redirect="/admin/"),
    ("admin/auth/user/", "GET"): Row((302, 302, 302, 302, 302, 302, 302, 302, 302, 200), redirect=ADMIN_LOGIN),
    ("admin/auth/user/<path:object_id>/change/", "GET"): Row((302, 302, 302, 302, 302, 302, 302, 302, 302, 200),
                                                            redirect=ADMIN_LOGIN),
    # OpenAPI schema and docs: any authenticated caller, any project (the schema is not project data).
    ("api/schema/", "GET"): Row((401, 401, 401, 200, 200, 200, 200, 200, 200, 200)),
    ("api/docs/", "GET"): Row((401, 401, 401, 200, 200, 200, 200, 200, 200, 200)),
    # Agent API: reads for any member or the project's token; writes for curators+ and the token.
    ("api/projects/<slug:project_slug>/sessions/", "GET"): Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/sessions/", "POST"): Row((401, 401, 401, 404, 201, 403, 201, 201, 404, 201),
                                                                body={"title": "Matrix session"}),
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/interactions/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/interactions/", "POST"):
        Row((401, 401, 401, 404, 202, 403, 202, 202, 404, 202),
            body={"kind": "user_input", "content": "We also want a day trip to Suzhou"}),
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    # Promote is a person's curation act: tokens are refused even for their own project.
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/promote/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200)),
    # Retry runs again what failed: the agent's token and curators+. <interaction_id> is filtered, so nothing
    # of it failed: those allowed get 409 (their access was granted before the state was checked).
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/retry/", "POST"):
        Row((401, 401, 401, 404, 409, 403, 409, 409, 404, 409)),
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/graph/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    # Other sessions' memories at the far end of a live edge (the session page's ghosts): read like the graph.
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/graph/ghosts/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200), body={"ids": "<memory_id>"}),
    ("api/projects/<slug:project_slug>/sessions/<int:session_id>/changes/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/recall/", "POST"): Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200),
                                                              body={"query": "passport budget hotel"}),
    # The project's memories (?at_risk=true: those a change may have made out of date), and why one is at risk:
    # read like the graph.
    ("api/projects/<slug:project_slug>/memories/", "GET"): Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/memories/<int:memory_id>/risks/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    # An agent (or a curator) forgets one memory softly; deleting for good stays an admin's (maintenance/forget).
    ("api/projects/<slug:project_slug>/memories/<int:memory_id>/forget/", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200)),
    # OTLP/HTTP traces in (an agent's OpenTelemetry exporter): written like interactions, by the token and curators+.
    ("api/projects/<slug:project_slug>/otlp/v1/traces", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200), body={"resourceSpans": [{"scopeSpans": [{"spans": [{
            "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "chat",
            "startTimeUnixNano": "1767225600000000000", "endTimeUnixNano": "1767225601000000000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                           {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps([{
                               "role": "assistant", "parts": [{"type": "text", "content": "Matrix traced it"}]}])}}],
        }]}]}]}),
    # The store (LangGraph's BaseStore): reads for members and the token, writes as for interactions. The item
    # "passport" holds the sensitive memory's text: masked for the token and viewers.
    ("api/projects/<slug:project_slug>/store/get/", "POST"): Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200),
                                                                 body={"namespace": ["authz"], "key": "passport"}),
    ("api/projects/<slug:project_slug>/store/search/", "POST"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200), body={"namespace_prefix": ["authz"]}),
    ("api/projects/<slug:project_slug>/store/namespaces/", "POST"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200), body={}),
    ("api/projects/<slug:project_slug>/store/put/", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200),
            body={"namespace": ["authz"], "key": "matrix", "value": {"text": "The matrix put a value here"}}),
    ("api/projects/<slug:project_slug>/store/delete/", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200), body={"namespace": ["authz"], "key": "passport"}),
    # Stored recalls: every member and the token read them (masked by the visibility rule). <recall_id> touched
    # the sensitive memory, so its query is hidden from the token and viewers, who therefore may not re-run it.
    ("api/projects/<slug:project_slug>/recalls/", "GET"): Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/recalls/<int:recall_id>/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/recalls/<int:recall_id>/compare/<int:other_id>/", "GET"):
        Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/recalls/<int:recall_id>/rerun/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 201, 201, 404, 201)),
    # Maintenance: curators, admins and the token; forget: admins (people) only, never a token.
    ("api/projects/<slug:project_slug>/maintenance/decay/", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200), body={"dry_run": True}),
    ("api/projects/<slug:project_slug>/maintenance/merge/", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200), body={"dry_run": True}),
    ("api/projects/<slug:project_slug>/maintenance/summarise/", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200),
            body={"dry_run": True, "use_llm": False, "memory_ids": ["<memory_id>", "<memory2_id>"]}),
    # Review: a dry run counts candidates without the LLM (200 + a note); a real run answers 503 without one.
    ("api/projects/<slug:project_slug>/maintenance/review/", "POST"):
        Row((401, 401, 401, 404, 200, 403, 200, 200, 404, 200), body={"dry_run": True}),
    ("api/projects/<slug:project_slug>/maintenance/forget/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200), body={"dry_run": True, "memory_ids": ["<memory_id>"]}),
    # Curation: people only (an agent's token is refused even in its own project); reads for members, acts for
    # curators and admins.
    ("api/projects/<slug:project_slug>/edges/", "GET"): Row((401, 401, 401, 404, 403, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/edges/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 201, 201, 404, 201),
            body={"source_id": "<memory2_id>", "target_id": "<memory_id>", "relation": "causal"}),
    ("api/projects/<slug:project_slug>/edges/bulk/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200), body={"edge_ids": ["<edge_id>"], "status": "rejected"}),
    ("api/projects/<slug:project_slug>/edges/<int:edge_id>/", "PATCH"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200), body={"status": "approved", "reason": "checked"}),
    ("api/projects/<slug:project_slug>/edges/<int:edge_id>/", "DELETE"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/memories/<int:memory_id>/", "PATCH"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200), body={"sensitive": True, "reason": "a passport"}),
    ("api/projects/<slug:project_slug>/memories/<int:memory_id>/repeats/", "GET"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200)),  # quotes the values: curators and admins
    ("api/projects/<slug:project_slug>/entities/", "GET"): Row((401, 401, 401, 404, 403, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/entities/<int:entity_id>/", "PATCH"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200), body={"name": "The Bund waterfront"}),
    ("api/projects/<slug:project_slug>/entities/<int:entity_id>/merge/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200), body={"duplicate_id": "<entity2_id>"}),
    ("api/projects/<slug:project_slug>/entities/<int:entity_id>/split/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200), body={"alias": "Bund Waterfront"}),
    ("api/projects/<slug:project_slug>/entities/<int:entity_id>/dismiss/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200), body={"other_id": "<entity2_id>"}),
    ("api/projects/<slug:project_slug>/curation/actions/", "GET"):
        Row((401, 401, 401, 404, 403, 200, 200, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/curation/actions/<int:act_id>/undo/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 200, 200, 404, 200)),
    # Administration: the project's admins (logged in) and superusers, never a token. Each call's writes are
    # rolled back, so both add authz-newcomer and both remove authz-joiner (a viewer kept for these rows).
    ("api/projects/<slug:project_slug>/members/", "GET"): Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/members/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 403, 201, 404, 201), body={"user": "authz-newcomer", "role": "viewer"}),
    ("api/projects/<slug:project_slug>/engine-settings/", "GET"):
        Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/engine-settings/", "PATCH"):
        Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200), body={"values": {"recall_k": 12}}),
    ("api/projects/<slug:project_slug>/accounts/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 403, 201, 404, 201), body={"username": "authz-brand-new", "role": "viewer"}),
    ("api/projects/<slug:project_slug>/members/<int:user_id>/", "PATCH"):
        Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200), body={"role": "viewer"}),
    ("api/projects/<slug:project_slug>/members/<int:user_id>/", "DELETE"):
        Row((401, 401, 401, 404, 403, 403, 403, 204, 404, 204)),
    ("api/projects/<slug:project_slug>/tokens/", "GET"): Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/tokens/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 403, 201, 404, 201), body={"name": "matrix agent"}),
    ("api/projects/<slug:project_slug>/tokens/<int:token_id>/", "DELETE"):
        Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200)),
    # Export: any member or the project's token, as the graph (what the reader may not see is masked in the file).
    ("api/projects/<slug:project_slug>/export/", "GET"): Row((401, 401, 401, 404, 200, 200, 200, 200, 404, 200)),
    # Bulk forgetting: the same people. A started job is rolled back with the call, so it never runs.
    ("api/projects/<slug:project_slug>/forget/preview/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200), body={"text_contains": "Bund", "mode": "hard"}),
    ("api/projects/<slug:project_slug>/forget/jobs/", "GET"): Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200)),
    ("api/projects/<slug:project_slug>/forget/jobs/", "POST"):
        Row((401, 401, 401, 404, 403, 403, 403, 202, 404, 202),
            body={"text_contains": "Bund", "mode": "soft", "confirm": "<project_slug>", "expect_memories": "<bund>"}),
    ("api/projects/<slug:project_slug>/forget/jobs/<int:job_id>/", "GET"):
        Row((401, 401, 401, 404, 403, 403, 403, 200, 404, 200)),
    # Pages: login required (a Bearer header is not a login); members of any role; superusers see all.
    ("", "GET"): Row((302, 302, 302, 302, 302, 200, 200, 200, 200, 200), redirect=LOGIN),
    ("p/<slug:project_slug>/", "GET"): Row((302, 302, 302, 302, 302, 200, 200, 200, 404, 200), redirect=LOGIN),
    ("p/<slug:project_slug>/sessions/<int:session_id>/", "GET"):
        Row((302, 302, 302, 302, 302, 200, 200, 200, 404, 200), redirect=LOGIN),
    ("p/<slug:project_slug>/recalls/", "GET"): Row((302, 302, 302, 302, 302, 200, 200, 200, 404, 200), redirect=LOGIN),
    # The settings page: the project's admins and superusers; its forms post back to it (one act each).
    ("p/<slug:project_slug>/settings/", "GET"): Row((302, 302, 302, 302, 302, 403, 403, 200, 404, 200), redirect=LOGIN),
    ("p/<slug:project_slug>/settings/", "POST"): Row((302, 302, 302, 302, 302, 403, 403, 200, 404, 200), fmt="form",
                                                     body={"action": "token_create", "name": "from the page"},
                                                     redirect=LOGIN),
    ("p/<slug:project_slug>/forget/", "GET"): Row((302, 302, 302, 302, 302, 403, 403, 200, 404, 200), redirect=LOGIN),
    ("p/<slug:project_slug>/review/", "GET"): Row((302, 302, 302, 302, 302, 200, 200, 200, 404, 200), redirect=LOGIN),
}

# Websocket routes: "open" = accepted and kept open; a number = accepted, then closed with that code.
OPEN = "open"
#   PRINCIPALS:             anonymous garbage revoked other_token token viewer curator admin outsider superuser
WS_MATRIX: dict[str, tuple[int | str, ...]] = {
    "ws/sessions/<int:session_id>/": (4403, 4403, 4403, 4403, 4403, OPEN, OPEN, OPEN, 4404, OPEN),
    # The forget page's job progress: the project's admins (logged in) and superusers.
    "ws/projects/<slug:project_slug>/forget/": (4403, 4403, 4403, 4403, 4403, 4403, 4403, OPEN, 4404, OPEN),
}
# The same routes for a session or project nobody has: logged-in users get 4404, as the outsider above (a code
# must not tell which ids exist in other projects); the not logged in 4403 for both.
WS_UNKNOWN = (4403, 4403, 4403, 4403, 4403, 4404, 4404, 4404, 4404, 4404)

ALLOWED = range(200, 300)



def allowed(status: int, pattern: str) -> bool:
    """What counts as "let through": 2xx, and 503 for review (authorized, but no LLM is configured)."""
    return status in ALLOWED or (status == 503 and pattern.endswith("maintenance/review/"))


# --- routes from the URL configuration -----------------------------------------------------------


@dataclass(frozen=True)
class Route:
    pattern: str
    view: Any  # the view class for class-based views, else the callback


def walk(patterns, prefix: str = "") -> Iterator[Route]:
    """Every leaf route under these patterns, with its full pattern string."""
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            callback = entry.callback
            yield Route(prefix + str(entry.pattern), getattr(callback, "view_class", callback))
        else:  # pragma: no cover - Django only has these two
            raise TypeError(f"unexpected URL entry {entry!r} under {prefix!r}")


def http_routes() -> list[Route]:
    return list(walk(get_resolver().url_patterns))


def ws_routes() -> list[Route]:
    return list(walk(websocket_urlpatterns))


def handler_methods(view: Any) -> set[str] | None:
    """The HTTP methods a DRF view handles (OPTIONS/HEAD aside); None for other views (not introspected)."""
    if not (isinstance(view, type) and issubclass(view, APIView)):
        return None
    return {m.upper() for m in view.http_method_names if m not in {"options", "head"} and hasattr(view, m)}


# --- filling path parameters and bodies -----------------------------------------------------------

PARAM = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")
KNOWN_CONVERTERS = frozenset({"int", "slug", "str", "path", "uuid"})


def fill_path(pattern: str, values: Mapping[str, object]) -> str:
    """The URL for a route pattern, its `<converter:name>` parts taken from `values` and checked."""
    if "(?P<" in pattern or pattern.startswith("^"):
        raise ValueError(f"{pattern!r} is a regex route: fill_path only fills path() converters")
    converters = get_converters()

    def one(match: re.Match) -> str:
        converter, name = match["converter"] or "str", match["name"]
        if converter not in KNOWN_CONVERTERS:
            raise ValueError(f"{pattern!r}: unknown path converter {converter!r} in <{converter}:{name}>; "
                             "teach fill_path (KNOWN_CONVERTERS) what value to give it")
        if name not in values:
            raise ValueError(f"{pattern!r}: no value for <{converter}:{name}>; add {name!r} to the world's path values")
        text = str(values[name])
        if not re.fullmatch(converters[converter].regex, text):
            raise ValueError(f"{pattern!r}: {text!r} does not fit the {converter!r} converter of <{name}>")
        return text

    return "/" + PARAM.sub(one, pattern)


def fill_body(template: Any, values: Mapping[str, object]) -> Any:
    """The body with every "<name>" string replaced by values[name] (ids known only at run time)."""
    if isinstance(template, dict):
        return {key: fill_body(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [fill_body(value, values) for value in template]
    if isinstance(template, str) and template.startswith("<") and template.endswith(">"):
        name = template[1:-1]
        if name not in values:
            raise ValueError(f"body placeholder {template!r} has no value; add {name!r} to the world's values")
        return values[name]
    return template


def test_fill_path_substitutes_and_refuses_what_it_cannot_fill():
    """The filler must fail loudly, so a new converter or parameter is not silently called wrong."""
    url = fill_path("api/projects/<slug:project_slug>/sessions/<int:session_id>/", {"project_slug": "a-b",
                                                                                   "session_id": 7})
    assert url == "/api/projects/a-b/sessions/7/"
    with pytest.raises(ValueError, match="unknown path converter 'hex'"):
        fill_path("x/<hex:colour>/", {"colour": "ff"})
    with pytest.raises(ValueError, match="no value for <int:memory_id>"):
        fill_path("x/<int:memory_id>/", {})
    with pytest.raises(ValueError, match="does not fit the 'int' converter"):
        fill_path("x/<int:session_id>/", {"session_id": "abc"})


# --- coverage of the table ------------------------------------------------------------------------


def test_every_route_is_in_the_matrix_and_every_entry_is_a_route():
    """A new route, or a new method on an API view, fails here until MATRIX says who may call it."""
    routes = http_routes()
    patterns = {r.pattern for r in routes}
    listed = {pattern for pattern, _ in MATRIX}
    problems = []
    for route in routes:
        if route.pattern.startswith(ADMIN_PREFIX):
            continue  # the admin group: covered by the admin/ prefix rule and its representative rows
        if route.pattern not in listed:
            problems.append(f"route {route.pattern!r} ({route.view!r}) is not in the table: add it to MATRIX")
            continue
        methods = handler_methods(route.view)
        tested = {method for pattern, method in MATRIX if pattern == route.pattern}
        if methods is not None and methods - tested:
            problems.append(f"route {route.pattern!r} handles {sorted(methods - tested)} too: add it to MATRIX")
    for pattern, method in MATRIX:
        if pattern not in patterns:
            problems.append(f"MATRIX entry {method} {pattern!r} matches no route: remove or rename it")
        else:
            methods = handler_methods(next(r.view for r in routes if r.pattern == pattern))
            if methods is not None and method not in methods:
                problems.append(f"MATRIX entry {method} {pattern!r}: the view has no {method} handler")
    assert any(p.startswith(ADMIN_PREFIX) for p in listed), "keep representative admin/ rows in MATRIX"
    for (pattern, method), row in MATRIX.items():
        if len(row.expect) != len(PRINCIPALS):
            problems.append(f"MATRIX entry {method} {pattern!r} has {len(row.expect)} statuses, not {len(PRINCIPALS)}")
    ws_patterns = {r.pattern for r in ws_routes()}
    problems += [f"websocket route {p!r} is not in the table: add it to WS_MATRIX"
                 for p in ws_patterns - set(WS_MATRIX)]
    problems += [f"WS_MATRIX entry {p!r} matches no websocket route" for p in set(WS_MATRIX) - ws_patterns]
    problems += [f"WS_MATRIX entry {p!r} needs {len(PRINCIPALS)} outcomes" for p, row in WS_MATRIX.items()
                 if len(row) != len(PRINCIPALS)]
    assert not problems, "\n".join(problems)


# --- the world: two projects, people of every role, tokens ---------------------------------------


@dataclass
class World:
    values: dict[str, object]  # path parameters and body placeholders
    foreign: dict[str, object]  # ids of the other project's objects
    clients: dict[str, APIClient]
    authorization: dict[str, str]  # the Authorization header each token principal sends


def build_world(django_user_model) -> World:
    """Two projects; principals of every kind; a session with a kept, a filtered and a sensitive interaction."""
    own = project_create(name="Authz trips", slug="authz")
    other = project_create(name="Authz other", slug="authz-other")
    session = session_create(project=own, title=PROJECT_MARK, task="Plan a trip to Shanghai", actor="test")
    other_session = session_create(project=other, title="Other trip", task="Plan a trip to Paris", actor="test")
    filtered = Interaction.objects.create(project=own, session=session, kind="user_input", content="ok thanks",
                                          occurred_at=timezone.now(), status=InteractionStatus.FILTERED,
                                          reason="chit-chat")
    other_interaction = Interaction.objects.create(project=other, session=other_session, kind="user_input",
                                                   content="hello", occurred_at=timezone.now(),
                                                   status=InteractionStatus.FILTERED, reason="chit-chat")
    values: dict[str, object] = {"project_slug": own.slug, "session_id": session.pk, "interaction_id": filtered.pk}
    foreign: dict[str, object] = {"session_id": other_session.pk, "interaction_id": other_interaction.pk}
    first = remember(session, "The hotel near the Bund is booked for three nights with breakfast")
    second = remember(session, "The budget for the whole Shanghai trip is 5000 RMB")
    secret = remember(session, f"Xiaoming's passport number is {SENSITIVE_MARK} for the hotel check-in",
                      sensitive=True)
    with transaction.atomic():  # logged as the pipeline logs it, so the change log carries the text too
        source = secret.sources.get()
        change_record(project=own, session=session, actor="test", op="interaction.received",
                      object_type="interaction", object_id=source.pk, after=interaction_snapshot(source))
        change_record(project=own, session=session, actor="test", op="memory.created", object_type="memory",
                      object_id=secret.pk, after=memory_snapshot(secret))
    StoreItem.objects.create(project=own, session=session, namespace=["authz"], key="passport",
                             value={"text": secret.content}, interaction=source)  # a store item of the secret
    weak = link(first, second, "temporal", confidence=0.4, needs_review=True)  # a weak edge for review to count
    act = memory_update(project=own, actor="test", memory_id=second.pk, kind="event").act  # one act to undo
    bund = Entity.objects.get(project=own, normalized_name="bund")
    budget = Entity.objects.filter(project=own).exclude(pk=bund.pk).first() or Entity.objects.create(
        project=own, name="Shanghai", normalized_name="shanghai", type="place")
    Entity.objects.filter(pk=bund.pk).update(aliases=["Bund Waterfront"],
                                             evidence=[{"possibly_same_as": budget.pk, "similarity": 0.76}])
    values |= {"memory_id": first.pk, "memory2_id": second.pk, "secret_interaction_id": source.pk,
               "edge_id": weak.pk, "act_id": act.pk, "entity_id": bund.pk, "entity2_id": budget.pk}
    secret_recall = memory_recall(project=own, actor="user:authz-curator", query=RecallQuery(
        "passport for the hotel check-in", k=4, include_sensitive=True))
    assert secret.pk in secret_recall.trace.returned_ids
    plain_recall = memory_recall(project=own, actor="token:x", query=RecallQuery("budget", k=2))
    values |= {"recall_id": secret_recall.trace.pk, "other_id": plain_recall.trace.pk}
    paris = remember(other_session, "The Paris hotel is near the Louvre")
    louvre = remember(other_session, "The Louvre opens at nine on Saturdays")
    foreign["memory_id"] = paris.pk
    foreign["edge_id"] = link(paris, louvre, "elaborates").pk
    foreign["act_id"] = memory_update(project=other, actor="test", memory_id=louvre.pk, kind="event").act.pk
    foreign["entity_id"] = Entity.objects.filter(project=other).first().pk
    foreign["recall_id"] = memory_recall(project=other, actor="t", query=RecallQuery("Louvre")).trace.pk
    foreign["job_id"] = ForgetJob.objects.create(project=other, actor="t", mode="soft", expect_memories=0,
                                                 state="done").pk

    _, own_raw = token_issue(project=own)
    revoked, revoked_raw = token_issue(project=own, name="revoked")
    ApiToken.objects.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    _, other_raw = token_issue(project=other)

    users = {}
    for role in (Role.VIEWER, Role.CURATOR, Role.ADMIN):
        users[str(role)] = django_user_model.objects.create_user(f"authz-{role}", password="a-long-password-1")
        Membership.objects.create(project=own, user=users[str(role)], role=role)
    users["outsider"] = django_user_model.objects.create_user("authz-outsider", password="a-long-password-1")
    Membership.objects.create(project=other, user=users["outsider"], role=Role.ADMIN)  # strong elsewhere only
    users["superuser"] = django_user_model.objects.create_superuser("authz-root", password="a-long-password-1")
    values["object_id"] = users["viewer"].pk  # admin change page of a user
    joiner = django_user_model.objects.create_user("authz-joiner", password="a-long-password-1")
    Membership.objects.create(project=own, user=joiner, role=Role.VIEWER)
    django_user_model.objects.create_user("authz-newcomer", password="a-long-password-1")
    values["user_id"] = joiner.pk
    values["uidb64"], values["token"] = "MQ", "not-a-real-token"
    values["token_id"] = token_issue(project=own, name="spare")[0].pk  # revoked by the matrix, nobody uses it
    values["job_id"] = ForgetJob.objects.create(project=own, actor="t", mode="soft", expect_memories=0, state="done").pk
    values["bund"] = len(forget_selection(own, ForgetFilter(text_contains="Bund"), mode="soft"))  # the dry run's count

    authorization = {"garbage": "Bearer garbage", "revoked": f"Bearer {revoked_raw}",
                     "other_token": f"Bearer {other_raw}", "token": f"Bearer {own_raw}"}
    clients = {"anonymous": APIClient()}
    for name, header in authorization.items():
        clients[name] = APIClient()
        clients[name].credentials(HTTP_AUTHORIZATION=header)
    for name, user in users.items():
        clients[name] = APIClient()
        clients[name].force_login(user)
    assert set(clients) == set(PRINCIPALS)
    return World(values, foreign, clients, authorization)


@pytest.fixture
def world(db, django_user_model) -> World:
    return build_world(django_user_model)


@dataclass
class Answer:
    status: int
    location: str
    content_type: str
    text: str
    www_authenticate: str | None

    def json(self) -> Any:
        return json.loads(self.text)


def call(client: APIClient, method: str, url: str, row: Row, values: Mapping[str, object]) -> Answer:
    """One request in a rolled-back savepoint; the client's cookies are restored (logout must not log it out)."""
    cookies = SimpleCookie()
    cookies.load(client.cookies.output(header="", sep=";"))
    body = fill_body(row.body, values)
    kwargs: dict[str, Any] = {}
    if method != "GET":
        kwargs = {"data": body if body is not None else {}}
        if row.fmt == "json":
            kwargs["format"] = "json"
    elif body is not None:
        kwargs = {"data": body}
    try:
        with transaction.atomic():
            response = getattr(client, method.lower())(url, **kwargs)
            transaction.set_rollback(True)
    finally:
        client.cookies = cookies
    text = b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
    return Answer(response.status_code, response.get("Location", ""), response.get("Content-Type", ""), text,
                  response.get("WWW-Authenticate"))


def check_answer(answer: Answer, *, pattern: str, method: str, principal: str, expected: int, row: Row
                 ) -> list[str]:
    """Mismatches of one answer: status, the API's error shape, redirects, and what must not leak."""
    problems = []
    if answer.status == 429:
        problems.append(f"got 429 (throttled) - report it, do not work around it: {answer.text[:200]}")
    if answer.status != expected:
        problems.append(f"expected {expected} got {answer.status} {answer.text[:160]!r}")
        return problems
    if pattern.startswith("api/projects/") and answer.status in {401, 403}:
        code = answer.json().get("error", {}).get("code")
        wanted = {"not_authenticated", "authentication_failed"} if answer.status == 401 else {"permission_denied"}
        if code not in wanted:
            problems.append(f"{answer.status} with error code {code!r}, expected one of {sorted(wanted)}")
    if answer.status == 401 and answer.www_authenticate != 'Bearer realm="api"':
        problems.append(f"401 without the Bearer challenge (WWW-Authenticate: {answer.www_authenticate!r})")
    if answer.status == 302 and row.redirect and not answer.location.startswith(row.redirect):
        problems.append(f"302 to {answer.location!r}, expected {row.redirect!r}…")
    if allowed(answer.status, pattern):
        if principal in NO_SENSITIVE and SENSITIVE_MARK in answer.text:
            problems.append("the answer contains the sensitive memory's content")
        if principal in NO_ACCESS and PROJECT_MARK in answer.text:
            problems.append("the answer contains the project's session title (no access to the project)")
    return problems


def test_http_matrix(world):
    """Every (route, method) × principal gets exactly the status the table says, and nothing it must not see."""
    mismatches = []
    seen_sensitive, seen_project = set(), set()
    for (pattern, method), row in MATRIX.items():
        url = fill_path(pattern, world.values)
        for principal, expected in zip(PRINCIPALS, row.expect, strict=True):
            answer = call(world.clients[principal], method, url, row, world.values)
            problems = check_answer(answer, pattern=pattern, method=method, principal=principal, expected=expected,
                                    row=row)
            mismatches += [f"{method} {url} ({pattern}) {principal}: {problem}" for problem in problems]
            if allowed(answer.status, pattern):
                if SENSITIVE_MARK in answer.text:
                    seen_sensitive.add(principal)
                if PROJECT_MARK in answer.text:
                    seen_project.add(principal)
    # The leak checks must be able to fail: those allowed to see the marks do see them somewhere.
    assert {"curator", "admin", "superuser"} <= seen_sensitive, f"sensitive content seen only by {seen_sensitive}"
    assert {"token", "viewer"} <= seen_project, f"project content seen only by {seen_project}"
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


def test_reads_naming_the_sensitive_memorys_source_never_leak_it(world):
    """Every read, with <interaction_id> naming the sensitive memory's source: nothing of it reaches a viewer
    or an agent (the interaction list and detail returned its raw content before the visibility rule).

    The matrix above reads a filtered interaction; this sweep points the reads at the secret's own interaction.
    """
    values = {**world.values, "interaction_id": world.values["secret_interaction_id"]}
    reads = [(p, m, row) for (p, m), row in MATRIX.items() if m == "GET"]
    assert any("<int:interaction_id>" in p for p, _, _ in reads), "no read names an interaction: update this sweep"
    mismatches, leaked = [], set()
    for pattern, method, row in reads:
        url = fill_path(pattern, values)
        for principal, expected in zip(PRINCIPALS, row.expect, strict=True):
            answer = call(world.clients[principal], method, url, row, values)
            if answer.status != expected:
                mismatches.append(f"{method} {url} ({pattern}) {principal}: expected {expected} got {answer.status}")
            if principal in NO_SENSITIVE and SENSITIVE_MARK in answer.text:
                leaked.add((pattern, method, principal))
    mismatches += [f"{m} {p} {who}: sensitive content leaks" for p, m, who in sorted(leaked)]
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


def test_ids_of_another_project_are_404_under_the_own_slug(world):
    """Being allowed on a route must not reach another project's session or interaction through its id."""
    mismatches = []
    checked = 0
    for (pattern, method), row in MATRIX.items():
        names = {m["name"] for m in PARAM.finditer(pattern)} & set(world.foreign)
        for name in sorted(names):
            values = {**world.values, name: world.foreign[name]}
            url = fill_path(pattern, values)
            for principal, expected in zip(PRINCIPALS, row.expect, strict=True):
                if not allowed(expected, pattern):
                    continue
                checked += 1
                answer = call(world.clients[principal], method, url, row, values)
                if answer.status != 404:
                    mismatches.append(f"{method} {url} ({pattern}, foreign {name}) {principal}: expected 404 got "
                                      f"{answer.status} {answer.text[:160]!r}")
    assert checked > 20
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


# Bodies naming another project's objects, sent by the own project's admin (allowed on the route itself).
FOREIGN_BODIES: dict[str, tuple[dict[str, Any], int]] = {
    "api/projects/<slug:project_slug>/recall/": ({"query": "hotel", "session_id": "<session_id>"}, 404),
    "api/projects/<slug:project_slug>/maintenance/decay/": ({"dry_run": True, "session_id": "<session_id>"}, 404),
    "api/projects/<slug:project_slug>/maintenance/merge/": ({"dry_run": True, "session_id": "<session_id>"}, 404),
    "api/projects/<slug:project_slug>/maintenance/summarise/":
        ({"dry_run": True, "use_llm": False, "memory_ids": ["<memory_id>"]}, 400),
    "api/projects/<slug:project_slug>/maintenance/forget/": ({"dry_run": True, "memory_ids": ["<memory_id>"]}, 400),
}


def test_bodies_naming_another_projects_objects_are_refused(world):
    """Ids in a body are checked against the URL's project too (not only the path's ids)."""
    mismatches = []
    for pattern, (body, expected) in FOREIGN_BODIES.items():
        assert (pattern, "POST") in MATRIX, pattern
        url = fill_path(pattern, world.values)
        for principal in ("token", "admin", "superuser"):
            if principal == "token" and pattern.endswith("forget/"):
                continue  # tokens may not forget at all (403, in the matrix)
            answer = call(world.clients[principal], "POST", url, Row((), body=body), world.foreign)
            if answer.status != expected:
                mismatches.append(f"POST {url} {principal} with {body}: expected {expected} got {answer.status} "
                                  f"{answer.text[:160]!r}")
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


def test_unknown_project_slug_is_404_for_allowed_callers(world):
    """A slug nobody has: 404 for those allowed on the route (no 2xx, no 500)."""
    mismatches = []
    values = {**world.values, "project_slug": "no-such-project"}
    for (pattern, method), row in MATRIX.items():
        if "<slug:project_slug>" not in pattern:
            continue
        url = fill_path(pattern, values)
        for principal, expected in zip(PRINCIPALS, row.expect, strict=True):
            if not allowed(expected, pattern):
                continue
            answer = call(world.clients[principal], method, url, row, world.values)
            if answer.status != 404:
                mismatches.append(f"{method} {url} {principal}: expected 404 got {answer.status}")
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


NO_STANDING = ("other_token", "outsider")  # authenticated, with standing in another project only
CSRF_VALUE = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]*')


def _same_page(text: str, slug: str = "", unknown: str = "") -> str:
    """The answer with what differs per request (the masked CSRF token) blanked, and the slug named as
    `unknown` where the answer quotes it ("No project 'x'.", a path)."""
    text = CSRF_VALUE.sub(r"\1", text)
    if slug:
        text = text.replace(f"'{slug}'", f"'{unknown}'").replace(f"/{slug}/", f"/{unknown}/")
    return text


def test_no_standing_answers_as_an_unknown_slug(world):
    """Another project's token and a logged-in non-member get, on every route of the project, the very answer
    (status and body, the slug aside) a slug nobody has gets: nothing tells them the project exists."""
    unknown = "no-such-project"
    mismatches, checked = [], 0
    for (pattern, method), row in MATRIX.items():
        if "<slug:project_slug>" not in pattern:
            continue
        for principal in NO_STANDING:
            if row.expect[PRINCIPALS.index(principal)] in (302, 401):
                continue  # not let in at all (a Bearer header is no login for pages): nothing to compare
            client = world.clients[principal]
            existing = call(client, method, fill_path(pattern, world.values), row, world.values)
            missing = call(client, method, fill_path(pattern, {**world.values, "project_slug": unknown}), row,
                           world.values)
            checked += 1
            if existing.status != 404 or missing.status != 404:
                mismatches.append(f"{method} {pattern} {principal}: {existing.status} for the project, "
                                  f"{missing.status} for an unknown slug (both must be 404)")
            elif _same_page(existing.text, str(world.values["project_slug"]), unknown) != _same_page(missing.text):
                mismatches.append(f"{method} {pattern} {principal}: the 404 bodies differ: {existing.text[:160]!r} "
                                  f"vs {missing.text[:160]!r}")
    assert checked > 60
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


def test_a_member_whose_role_is_too_low_still_gets_403(world):
    """Only standing in the project earns the 403 that says "not with your role" (and a token's people-only acts)."""
    slug = world.values["project_slug"]
    viewer, token = world.clients["viewer"], world.clients["token"]
    answer = viewer.post(f"/api/projects/{slug}/edges/", {"source_id": world.values["memory2_id"],
                                                          "target_id": world.values["memory_id"],
                                                          "relation": "causal"}, format="json")
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "permission_denied"
    assert token.get(f"/api/projects/{slug}/edges/").status_code == 403  # agents do not curate, even their own
    assert viewer.get(f"/p/{slug}/settings/").status_code == 403


# --- websockets -----------------------------------------------------------------------------------


def ws_headers(world: World, principal: str) -> list[tuple[bytes, bytes]]:
    """The browser's headers: the socket's own Host and Origin, the session cookie if logged in, the token header
    if any."""
    headers = [(b"host", b"localhost"), (b"origin", b"http://localhost")]
    cookie = world.clients[principal].cookies.get(settings.SESSION_COOKIE_NAME)
    if cookie is not None:
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie.value}".encode()))
    authorization = world.authorization.get(principal)
    if authorization:
        headers.append((b"authorization", authorization.encode()))
    return headers


async def ws_outcome(application, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int | str, list[dict]]:
    """OPEN (with the catch-up's messages), the close code sent after accepting, or "refused <code>"."""
    from channels.testing import WebsocketCommunicator

    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await communicator.connect(timeout=10)
    if not connected:
        return f"refused {code}", []
    try:
        # A refused watcher is closed right after the accept; an allowed one answers the catch-up (a session)
        # or sends the jobs at once (the forget page).
        await communicator.send_json_to({"type": "catch_up", "after": 0})
        messages: list[dict] = []
        while not messages or messages[-1].get("type") not in ("caught_up", "jobs"):
            output = await communicator.receive_output(timeout=10)
            if output["type"] == "websocket.close":
                return output.get("code"), messages
            messages.append(json.loads(output["text"]))
        return OPEN, messages
    finally:
        await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
def test_websocket_matrix(django_user_model):
    """Members of any role (and superusers) watch a session; the not logged in are closed with 4403, logged-in
    users without access with 4404, as for unknown ids."""
    from contextweaver_site.asgi import application
    from memory.live import listener

    world = build_world(django_user_model)
    unknown_id = int(world.values["session_id"]) + 10_000
    mismatches = []

    async def run() -> None:
        try:
            for pattern, row in WS_MATRIX.items():
                unknown = {**world.values, "session_id": unknown_id, "project_slug": "no-such-project"}
                for values, expectations in ((world.values, row), (unknown, WS_UNKNOWN)):
                    path = fill_path(pattern, values)
                    for principal, expected in zip(PRINCIPALS, expectations, strict=True):
                        got, messages = await ws_outcome(application, path, ws_headers(world, principal))
                        if got != expected:
                            mismatches.append(f"WS {path} ({pattern}) {principal}: expected {expected} got {got}")
                        text = json.dumps(messages)
                        if principal in NO_SENSITIVE and SENSITIVE_MARK in text:
                            mismatches.append(f"WS {path} {principal}: the catch-up has the sensitive content")
                        if principal == "curator" and got == OPEN and SENSITIVE_MARK not in text:
                            mismatches.append(f"WS {path} curator: the catch-up lacks the sensitive memory")
            # A foreign Origin is refused at the handshake even with a member's cookie.
            headers = [h for h in ws_headers(world, "viewer") if h[0] != b"origin"]
            got, _ = await ws_outcome(application, fill_path("ws/sessions/<int:session_id>/", world.values),
                                      [*headers, (b"origin", b"http://evil.example")])
            if not str(got).startswith("refused"):
                mismatches.append(f"WS with a foreign Origin: expected refused got {got}")
        finally:
            await listener.stop()

    async_to_sync(run)()
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)

