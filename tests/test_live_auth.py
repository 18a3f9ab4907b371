"""Who may keep a live socket open, end to end: a real uvicorn server, real websockets (docs/live.md).

- A socket lives no longer than its login: a logout closes the sockets of that browser's session, a
  deactivated or deleted account loses them all, and a login that ended without any signal (session
  flushed or expired, `QuerySet.update`, password changed) gets no more content.
- The Origin must be the socket's own scheme, host and port (or a CSRF_TRUSTED_ORIGINS entry).
- A session or project the user may not read closes with the same code as one that does not exist.

Logouts and account changes happen in this test process, as they would in another server process: they
reach the server's sockets through PostgreSQL (NOTIFY on `cw_auth`).
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.models import Session
from django.db import transaction
from django.test import Client
from django.utils import timezone
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from memory.engine.changelog import change_record
from memory.engine.projects import project_create
from memory.models import Membership, Role

from . import test_live_support as support
from .test_live_support import (
    Server,
    catch_up,
    change_ids,
    free_port,
    open_socket,
    receive_until,
    run_writer,
    session_cookie,
    start_server,
    stop_process,
)
from .test_live_websocket import last_id, member

pytestmark = pytest.mark.django_db(transaction=True)
redis_url = support.redis_url  # module fixtures: a private redis-server and a uvicorn server using it
redis_server_process = support.redis_server_process

TRUSTED_ORIGIN = "https://trusted.example"  # the server's CSRF_TRUSTED_ORIGINS


@pytest.fixture(scope="module")
def auth_server(django_db_setup, django_db_blocker, tmp_path_factory) -> Server:
    """uvicorn with the embedded default (in-memory layer + the NOTIFY bridge) and one trusted origin."""
    with django_db_blocker.unblock():
        server = start_server(tmp_path_factory.mktemp("live-auth"), wait_for_listener=True,
                              CSRF_TRUSTED_ORIGINS=TRUSTED_ORIGIN)
    yield server
    stop_process(server.process)


def ending(ws: ClientConnection, timeout: float = 5) -> tuple[int | None, list[dict]]:
    """(the close code, or None if the socket is still open after `timeout` seconds; the messages received)."""
    messages: list[dict] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            messages.append(json.loads(ws.recv(timeout=left)))
        except TimeoutError:
            break
        except ConnectionClosed as closed:
            return (closed.rcvd.code if closed.rcvd else None), messages
    return None, messages


def write_change(session, mark: str) -> None:
    """A committed change of the session whose snapshot carries `mark` (content a socket must not get)."""
    with transaction.atomic():
        change_record(project=session.project, session=session, actor="t", op="session.created",
                      object_type="session", object_id=session.pk, after={"mark": mark})


def log_out(cookie: str) -> None:
    """The browser holding `cookie` logs out (Django's LogoutView, here in another process than the server)."""
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = cookie
    assert client.post("/logout/").status_code == 302
    assert not Session.objects.filter(session_key=cookie).exists()


def forget_socket(server: Server, slug: str, cookie: str | None, origin: str | None = None) -> ClientConnection:
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}"} if cookie else {}
    return connect(f"ws://127.0.0.1:{server.port}/ws/projects/{slug}/forget/", origin=origin or server.origin,
                   additional_headers=headers, open_timeout=20)


# --- finding 4: a live socket outlives its login ---------------------------------------------------------


def test_logout_closes_the_sockets_of_that_browser_and_no_other(auth_server, agent_session):
    viewer = member(agent_session.project, "lena")
    here, elsewhere = session_cookie(viewer), session_cookie(viewer)  # the same user in two browsers
    with open_socket(auth_server, agent_session.pk, here) as ws, \
            open_socket(auth_server, agent_session.pk, elsewhere) as other:
        catch_up(ws, last_id(agent_session))
        catch_up(other, last_id(agent_session))
        log_out(here)
        started = time.monotonic()
        code, messages = ending(ws)  # closed by the logout itself, not at the next change
        print(f"logout → close: {time.monotonic() - started:.3f} s")
        assert code == 4403 and messages == []
        # The other browser's session is still logged in: its socket keeps streaming.
        write_change(agent_session, "after-logout")
        received = receive_until(other, lambda ms: "after-logout" in json.dumps(ms))
        assert change_ids(received) == [last_id(agent_session)]


def test_with_redis_a_logout_in_another_process_closes_that_browsers_socket(redis_server_process, redis_url,
                                                                          agent_session):
    """The "layer" transport: the logout's process sends the revocation into Redis after commit."""
    viewer = member(agent_session.project, "rosa")
    here, elsewhere = session_cookie(viewer), session_cookie(viewer)
    with open_socket(redis_server_process, agent_session.pk, here) as ws, \
            open_socket(redis_server_process, agent_session.pk, elsewhere) as other:
        catch_up(ws, last_id(agent_session))
        catch_up(other, last_id(agent_session))
        run_writer(
            "from importlib import import_module\n"
            "from django.conf import settings\n"
            "from django.contrib.auth import get_user_model, logout\n"
            "from django.test import RequestFactory\n"
            "request = RequestFactory().post('/logout/')\n"
            f"request.session = import_module(settings.SESSION_ENGINE).SessionStore({here!r})\n"
            f"request.user = get_user_model().objects.get(pk={viewer.pk})\n"
            "logout(request)\n",
            REDIS_URL=redis_url,
        )
        assert ending(ws)[0] == 4403
        assert ending(other, timeout=1)[0] is None  # still open: that browser is still logged in


@pytest.mark.parametrize("how", ["deactivated", "deleted"])
def test_a_deactivated_or_deleted_account_loses_all_its_sockets(auth_server, agent_session, how):
    viewer = member(agent_session.project, "kai")
    cookies = [session_cookie(viewer), session_cookie(viewer)]
    with open_socket(auth_server, agent_session.pk, cookies[0]) as first, \
            open_socket(auth_server, agent_session.pk, cookies[1]) as second:
        for ws in (first, second):
            catch_up(ws, last_id(agent_session))
        if how == "deactivated":
            viewer.is_active = False
            viewer.save()
        else:
            viewer.delete()
        outcomes = [ending(first), ending(second)]
    assert [code for code, _ in outcomes] == [4403, 4403]


@pytest.mark.parametrize("how", ["session flushed", "session expired", "deactivated without signals",
                                 "password changed"])
def test_a_socket_whose_login_ended_quietly_gets_no_more_content(auth_server, agent_session, how):
    """No signal at all (a flush by another tool, expiry, `QuerySet.update`, a password changed elsewhere):
    the socket asks the login again before it sends, so the next change does not reach it."""
    viewer = member(agent_session.project, "ines")
    cookie = session_cookie(viewer)
    users = get_user_model().objects.filter(pk=viewer.pk)
    with open_socket(auth_server, agent_session.pk, cookie) as ws:
        catch_up(ws, last_id(agent_session))
        if how == "session flushed":
            Session.objects.filter(session_key=cookie).delete()
        elif how == "session expired":
            Session.objects.filter(session_key=cookie).update(expire_date=timezone.now() - timedelta(seconds=1))
        elif how == "deactivated without signals":
            users.update(is_active=False)
        else:
            users.update(password=make_password("a-new-password"))
        write_change(agent_session, "after-the-end")
        code, messages = ending(ws)
    assert "after-the-end" not in json.dumps(messages)
    assert code == 4403


def test_a_catch_up_after_the_login_ended_sends_nothing(auth_server, agent_session):
    viewer = member(agent_session.project, "noor")
    cookie = session_cookie(viewer)
    write_change(agent_session, "logged-before")
    with open_socket(auth_server, agent_session.pk, cookie) as ws:
        catch_up(ws, last_id(agent_session))
        Session.objects.filter(session_key=cookie).delete()
        ws.send(json.dumps({"type": "catch_up", "after": 0}))
        code, messages = ending(ws)
    assert "logged-before" not in json.dumps(messages) and code == 4403


@pytest.mark.parametrize("how", ["logout", "deactivated without signals"])
def test_the_forget_page_socket_ends_with_its_login(auth_server, project, how):
    admin = member(project, "root", Role.ADMIN)
    cookie = session_cookie(admin)
    with forget_socket(auth_server, project.slug, cookie) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "jobs"
        if how == "logout":
            log_out(cookie)
        else:
            get_user_model().objects.filter(pk=admin.pk).update(is_active=False)
        code, _ = ending(ws)
    assert code == 4403


# --- finding 5: the Origin check ignored scheme and port ---------------------------------------------------


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{other}", "https://127.0.0.1:{port}", "http://localhost:{port}",
                                    "http://evil.example", "null", None])
def test_a_socket_from_another_origin_is_refused_at_the_handshake(auth_server, agent_session, origin):
    """Only the page's own scheme + host + port: another port of the same host read the stream before."""
    cookie = session_cookie(member(agent_session.project, "vera"))
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}"}
    if origin is not None:
        headers["Origin"] = origin.format(port=auth_server.port, other=free_port())
    with pytest.raises(InvalidStatus) as refused:
        connect(auth_server.ws_url(agent_session.pk), additional_headers=headers, open_timeout=10)
    assert refused.value.response.status_code == 403


def test_the_own_origin_and_a_trusted_origin_may_open_a_socket(auth_server, agent_session):
    cookie = session_cookie(member(agent_session.project, "olga"))
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}"}
    for origin in (auth_server.origin, TRUSTED_ORIGIN):
        with connect(auth_server.ws_url(agent_session.pk), origin=origin, additional_headers=headers,
                     open_timeout=10) as ws:
            assert catch_up(ws, last_id(agent_session))[-1]["type"] == "caught_up"


def test_behind_a_tls_proxy_the_origin_must_be_https(auth_server, agent_session):
    """uvicorn takes the scheme from X-Forwarded-Proto (a trusted proxy at 127.0.0.1): wss ↔ https://."""
    cookie = session_cookie(member(agent_session.project, "tls"))
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}", "X-Forwarded-Proto": "https"}
    with connect(auth_server.ws_url(agent_session.pk), origin=f"https://127.0.0.1:{auth_server.port}",
                 additional_headers=headers, open_timeout=10) as ws:
        assert catch_up(ws, last_id(agent_session))[-1]["type"] == "caught_up"
    with pytest.raises(InvalidStatus):
        connect(auth_server.ws_url(agent_session.pk), origin=auth_server.origin, additional_headers=headers,
                open_timeout=10)


# --- finding 10 (websocket part): close codes told which ids exist elsewhere ----------------------------------


def test_a_session_of_another_project_closes_like_one_that_does_not_exist(auth_server, agent_session):
    other = project_create(name="Elsewhere", slug="elsewhere")
    outsider = member(other, "mallory", Role.ADMIN)  # logged in, active, a member of another project only
    unknown = agent_session.pk + 1_000_000
    codes = {}
    for cookie in (session_cookie(outsider), None):
        for session_id in (agent_session.pk, unknown):
            with open_socket(auth_server, session_id, cookie) as ws:
                codes[cookie is not None, session_id] = ending(ws, timeout=10)[0]
    assert codes[True, agent_session.pk] == codes[True, unknown] == 4404
    assert codes[False, agent_session.pk] == codes[False, unknown] == 4403  # not logged in: says nothing either


def test_the_forget_socket_of_another_project_closes_like_one_that_does_not_exist(auth_server, project):
    other = project_create(name="Elsewhere", slug="elsewhere")
    outsider = member(other, "trudy", Role.ADMIN)
    viewer = member(project, "vic")
    cookie = session_cookie(outsider)
    codes = []
    for slug in (project.slug, "no-such-project"):
        with forget_socket(auth_server, slug, cookie) as ws:
            codes.append(ending(ws, timeout=10)[0])
    assert codes == [4404, 4404]
    # A member below admin knows the project exists: "not allowed" tells nothing new.
    with forget_socket(auth_server, project.slug, session_cookie(viewer)) as ws:
        assert ending(ws, timeout=10)[0] == 4403
    assert Membership.objects.filter(user=outsider, project=project).count() == 0
