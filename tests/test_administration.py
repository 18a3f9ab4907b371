"""Project administration (administration/): members and roles, agent tokens, through services, the API
and the commands; a removed member's open socket closes at once (the live part runs a real server)."""

from __future__ import annotations

import time
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from administration import services
from memory.errors import NotFoundError, ValidationFailed
from memory.models import ApiToken, GraphChange, Membership, Role

from . import test_live_support as support
from .test_live_support import close_code, open_socket, session_cookie

live_server_process = support.live_server_process
pytestmark = pytest.mark.django_db(transaction=True)


def person(name: str, email: str = ""):
    return get_user_model().objects.create_user(name, email=email, password="pw-" + name + "-long")


@pytest.fixture
def admin_client(project) -> APIClient:
    owner = person("owner")
    Membership.objects.create(project=project, user=owner, role=Role.ADMIN)
    client = APIClient()
    client.force_login(owner)
    return client


def url(project, *parts) -> str:
    return "/".join([f"/api/projects/{project.slug}", *map(str, parts)]) + "/"


def test_members_are_added_by_username_or_email_and_the_last_admin_stays(project, admin_client):
    person("wen", email="wen@example.org")
    added = admin_client.post(url(project, "members"), {"user": "WEN@example.org", "role": "curator"}, format="json")
    assert added.status_code == 201 and added.json()["username"] == "wen" and added.json()["role"] == "curator"
    again = admin_client.post(url(project, "members"), {"user": "wen"}, format="json")
    assert again.status_code == 400 and "already a member" in again.json()["error"]["message"]
    assert admin_client.post(url(project, "members"), {"user": "nobody"}, format="json").status_code == 404
    bad_role = admin_client.post(url(project, "members"), {"user": "wen", "role": "owner"}, format="json")
    assert bad_role.status_code == 400
    wen = get_user_model().objects.get(username="wen")
    assert admin_client.patch(url(project, "members", wen.pk), {"role": "viewer"}, format="json").json()["role"] == \
        "viewer"
    owner = get_user_model().objects.get(username="owner")
    last = admin_client.patch(url(project, "members", owner.pk), {"role": "curator"}, format="json")
    assert last.status_code == 400 and "last admin" in last.json()["error"]["message"]
    assert admin_client.delete(url(project, "members", owner.pk)).status_code == 400
    assert admin_client.delete(url(project, "members", wen.pk)).status_code == 204
    assert [m["username"] for m in admin_client.get(url(project, "members")).json()] == ["owner"]
    ops = list(GraphChange.objects.filter(project=project, object_type="membership").order_by("id")
               .values_list("op", flat=True))
    assert ops == ["member.added", "member.role_changed", "member.removed"]


def test_a_token_is_shown_once_works_and_is_refused_once_revoked(project, admin_client, agent_session):
    created = admin_client.post(url(project, "tokens"), {"name": "planner agent"}, format="json")
    assert created.status_code == 201
    raw, token_id = created.json()["token"], created.json()["id"]
    listed = admin_client.get(url(project, "tokens")).json()
    assert raw not in str(listed) and any(t["id"] == token_id and raw.startswith(t["prefix"]) for t in listed)
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert agent.get(url(project, "sessions")).status_code == 200
    assert agent.get(url(project, "tokens")).status_code == 403  # agents never manage tokens
    revoked = admin_client.delete(url(project, "tokens", token_id))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert agent.get(url(project, "sessions")).status_code == 401
    assert admin_client.delete(url(project, "tokens", token_id)).status_code == 200  # twice: a no-op
    assert admin_client.delete(url(project, "tokens", 10**9)).status_code == 404
    assert admin_client.post(url(project, "tokens"), {"name": " "}, format="json").status_code == 400
    assert GraphChange.objects.filter(project=project, op="token.revoked").count() == 1
    assert not GraphChange.objects.filter(after__icontains=raw[12:]).exists()  # the secret is never logged


def test_only_the_projects_admins_manage_it(project):
    for role in (Role.VIEWER, Role.CURATOR):
        user = person(f"a-{role}")
        Membership.objects.create(project=project, user=user, role=role)
        client = APIClient()
        client.force_login(user)
        assert client.get(url(project, "members")).status_code == 403
        assert client.post(url(project, "tokens"), {"name": "x"}, format="json").status_code == 403


def test_the_commands_do_the_same_with_clear_errors(project):
    person("lin", email="lin@example.org")
    out = StringIO()
    call_command("members", project.slug, "add", "lin@example.org", "--role", "admin", stdout=out)
    assert "lin is now admin" in out.getvalue()
    call_command("members", project.slug, "list", stdout=out)
    assert "lin\tadmin" in out.getvalue()
    with pytest.raises(CommandError, match="last admin"):
        call_command("members", project.slug, "remove", "lin")
    with pytest.raises(CommandError, match="No project"):
        call_command("members", "no-such-project", "list")
    with pytest.raises(CommandError, match="no user"):
        call_command("members", project.slug, "add", "ghost")
    quiet = StringIO()
    call_command("tokens", project.slug, "create", "nightly", "--quiet", stdout=quiet)
    raw = quiet.getvalue().strip()
    token = ApiToken.objects.get(project=project, name="nightly")
    assert raw.startswith(token.prefix)
    call_command("tokens", project.slug, "revoke", token.prefix, stdout=StringIO())
    token.refresh_from_db()
    assert token.revoked_at is not None
    with pytest.raises(CommandError, match="matches"):
        call_command("tokens", project.slug, "revoke", "999999")


def test_services_refuse_unknown_members_and_roles(project):
    with pytest.raises(NotFoundError):
        services.member_remove(project=project, actor="t", user_id=10**9)
    with pytest.raises(ValidationFailed):
        services.member_add(project=project, actor="t", user="", role="viewer")


def test_a_removed_members_open_socket_closes_at_once(live_server_process, agent_session):
    project = agent_session.project
    owner, guest = person("boss"), person("guest")
    Membership.objects.create(project=project, user=owner, role=Role.ADMIN)
    Membership.objects.create(project=project, user=guest, role=Role.VIEWER)
    with open_socket(live_server_process, agent_session.pk, session_cookie(guest)) as ws:
        ws.send('{"type": "catch_up", "after": 0}')
        time.sleep(0.5)  # accepted and caught up
        started = time.monotonic()
        services.member_remove(project=project, actor="user:boss", user_id=guest.pk)
        assert close_code(ws, timeout=5) == 4403
        assert time.monotonic() - started < 1.0  # the issue's bound; observed about 20 ms


def test_the_settings_page_adds_a_member_shows_a_new_token_once_and_refuses_non_admins(project):
    owner = person("chief")
    Membership.objects.create(project=project, user=owner, role=Role.ADMIN)
    person("mei", email="mei@example.org")
    page = f"/p/{project.slug}/settings/"
    client = Client()
    client.force_login(owner)
    added = client.post(page, {"action": "member_add", "user": "mei@example.org", "role": "curator"}, follow=True)
    assert "mei is now a member (curator)." in added.content.decode()
    assert Membership.objects.get(project=project, user__username="mei").role == "curator"
    created = client.post(page, {"action": "token_create", "name": "night agent"})
    raw = ApiToken.objects.get(project=project, name="night agent")
    html = created.content.decode()
    assert created.status_code == 200 and "no-store" in created["Cache-Control"] and 'id="new-token"' in html
    assert raw.prefix in html
    again = client.get(page).content.decode()
    assert 'id="new-token"' not in again  # shown once
    bad = client.post(page, {"action": "member_role", "user_id": str(owner.pk), "role": "viewer"})
    assert bad.status_code == 400 and "last admin" in bad.content.decode()
    assert client.post(page, {"action": "member_remove", "user_id": "x"}).status_code == 400
    assert client.post(page, {"action": "nonsense"}).status_code == 400
    curator = Client()
    curator.force_login(get_user_model().objects.get(username="mei"))
    assert curator.get(page).status_code == 403
    assert curator.post(page, {"action": "token_create", "name": "x"}).status_code == 403
    assert 'id="settings-link"' in client.get(f"/p/{project.slug}/").content.decode()
    assert 'id="settings-link"' not in curator.get(f"/p/{project.slug}/").content.decode()


def test_an_admin_creates_an_account_whose_one_time_link_sets_a_password(project, admin_client):
    created = admin_client.post(url(project, "accounts"), {"username": "newbie", "email": "newbie@example.org",
                                                            "role": "curator"}, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["username"] == "newbie" and body["role"] == "curator"
    link = body["set_password_url"]
    assert link.startswith("http://testserver/welcome/")
    newbie = get_user_model().objects.get(username="newbie")
    assert not newbie.has_usable_password()
    assert GraphChange.objects.filter(op="member.added", object_id=newbie.pk).get().after["account_created"] is True

    browser = Client()
    first = browser.get(link.removeprefix("http://testserver"))
    assert first.status_code == 302 and first["Location"].endswith("/set-password/")
    form = browser.get(first["Location"])
    assert form.status_code == 200 and b"Choose a password" in form.content
    done = browser.post(first["Location"], {"new_password1": "a-fresh-long-password-7",
                                            "new_password2": "a-fresh-long-password-7"})
    assert done.status_code == 302 and done["Location"] == "/login/"
    login = Client().post("/login/", {"username": "newbie", "password": "a-fresh-long-password-7"})
    assert login.status_code == 302, "the chosen password logs in"
    again = Client().get(link.removeprefix("http://testserver"))
    assert again.status_code == 200 and b"This link no longer works" in again.content

    taken = admin_client.post(url(project, "accounts"), {"username": "newbie"}, format="json")
    assert taken.status_code == 400 and "username" in taken.json()["error"]["fields"]
    same_mail = admin_client.post(url(project, "accounts"), {"username": "other", "email": "NEWBIE@example.org"},
                                  format="json")
    assert same_mail.status_code == 400 and "email" in same_mail.json()["error"]["fields"]
    assert admin_client.post(url(project, "accounts"), {"username": "x", "role": "owner"},
                             format="json").status_code == 400
    assert get_user_model().objects.filter(username__in=["other", "x"]).count() == 0


def test_the_members_command_creates_an_account_with_a_link(project):
    out = StringIO()
    call_command("members", project.slug, "create", "cli-person", "--role", "viewer", stdout=out)
    assert "cli-person created, viewer of" in out.getvalue() and "/welcome/" in out.getvalue()
    assert Membership.objects.get(user__username="cli-person").role == "viewer"
    with pytest.raises(CommandError, match="username"):
        call_command("members", project.slug, "create", "cli-person")


def test_engine_settings_change_what_the_engine_does(project, admin_client, agent_session):
    from datetime import timedelta

    from django.utils import timezone

    from memory.engine.ingest import InteractionInput, interactions_accept
    from memory.models import Interaction

    listed = {row["key"]: row for row in admin_client.get(url(project, "engine-settings")).json()}
    assert listed["keep_threshold"] == {**listed["keep_threshold"], "value": 3.0, "default": 3.0, "overridden": False}
    assert listed["recall_preset"]["choices"] == ["vector", "hybrid", "ripple"]
    bad = admin_client.patch(url(project, "engine-settings"), {"values": {"recall_k": 12, "keep_threshold": 9}},
                             format="json")
    assert bad.status_code == 400 and "keep_threshold" in bad.json()["error"]["fields"]
    project.refresh_from_db()
    assert project.settings == {}, "one bad value: nothing is written"
    changed = admin_client.patch(url(project, "engine-settings"),
                                 {"values": {"keep_threshold": "4.9", "recall_k": 2, "recall_preset": "ripple"}},
                                 format="json")
    assert changed.status_code == 200
    project.refresh_from_db()
    assert project.settings == {"filter": {"keep_threshold": 4.9}, "recall": {"k": 2}}, "the default is not stored"
    assert GraphChange.objects.filter(op="project.settings_changed").count() == 1

    interactions_accept(session=agent_session, actor="agent", items=[
        InteractionInput("user_input", text, {}, timezone.now() - timedelta(minutes=5 - n)) for n, text in
        enumerate(["The hotel near the Bund is booked for three nights", "Breakfast is served from seven",
                   "The museum opens at nine on Saturdays"])])
    assert set(Interaction.objects.filter(session=agent_session).values_list("status", flat=True)) == {"filtered"}
    token = APIClient()
    from memory.engine.projects import token_issue

    token.credentials(HTTP_AUTHORIZATION=f"Bearer {token_issue(project=project)[1]}")
    admin_client.patch(url(project, "engine-settings"), {"values": {"keep_threshold": ""}}, format="json")
    interactions_accept(session=agent_session, actor="agent", items=[
        InteractionInput("user_input", text, {}, timezone.now()) for text in
        ["Maria is allergic to seafood", "The flight leaves at 08:40", "Budget is 5000 RMB in total"]])
    recalled = token.post(url(project, "recall"), {"query": "hotel flight budget seafood"}, format="json")
    assert recalled.status_code == 200 and len(recalled.json()["memories"]) == 2
    assert recalled.json()["params"]["preset"] == "ripple" and recalled.json()["params"]["k"] == 2
    project.refresh_from_db()
    assert project.settings == {"filter": {}, "recall": {"k": 2}}
