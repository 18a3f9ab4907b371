"""The project settings page: an admin adds a viewer and creates an agent token; the agent writes with it,
and the new viewer logs in and sees the project with its sensitive memory masked."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from .conftest import PASSWORD, in_database, login, new_session, open_session, other_project, screenshot


def _admin_and_newcomer(slug: str) -> None:
    from django.contrib.auth import get_user_model

    from memory.models import Membership, Project, Role

    users = get_user_model().objects
    ada = users.create_user("ada", password=PASSWORD)
    Membership.objects.create(project=Project.objects.get(slug=slug), user=ada, role=Role.ADMIN)
    users.create_user("nina", email="nina@example.org", password=PASSWORD)


def _mark_sensitive(memory_id: int) -> None:
    from curation.services import memory_update
    from memory.models import Memory

    memory = Memory.objects.get(pk=memory_id)
    memory_update(project=memory.project, actor="user:ada", memory_id=memory_id, sensitive=True)


@pytest.fixture(scope="module")
def office(site, django_db_blocker):
    office = other_project(site, django_db_blocker, "settings-web", "Settings office")
    in_database(django_db_blocker, _admin_and_newcomer, office.project_slug)
    return office


def test_an_admin_adds_a_viewer_and_a_token_the_agent_writes_and_the_viewer_sees_it_masked(
        page, browser, office, django_db_blocker):
    login(page, office, "ada")
    page.goto(office.url + f"/p/{office.project_slug}/")
    page.click("#settings-link")
    page.fill("#member-add input[name=user]", "nina@example.org")
    page.select_option("#member-add select[name=role]", "viewer")
    page.click("#member-add button[type=submit]")
    assert "nina is now a member (viewer)." in page.inner_text("#settings-message")
    assert page.locator("#members-table tr[data-user='nina']").count() == 1
    page.fill("#account-create input[name=username]", "omar")
    page.select_option("#account-create select[name=role]", "curator")
    page.click("#account-create button[type=submit]")
    assert "Account omar created (curator)." in page.inner_text("#settings-message")
    link = page.inner_text("#new-account .token-value").strip()
    assert link.startswith(office.url + "/welcome/")
    screenshot(page, "settings-account-created")
    page.fill("#token-create input[name=name]", "trip planner")
    page.click("#token-create button[type=submit]")
    raw = page.inner_text("#new-token .token-value").strip()
    assert raw.startswith("cw_")
    screenshot(page, "settings-token-created")

    agent = type(office)(**{**office.__dict__, "token": raw})
    session_id = new_session(agent, "Settings: passport")
    request = urllib.request.Request(
        agent.api(f"sessions/{session_id}/interactions/"), method="POST",
        data=json.dumps({"kind": "user_input", "content": "Nina's passport number is P7734521 for the visa"}).encode(),
        headers={"Authorization": f"Bearer {raw}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        memory_id = json.loads(response.read())["interactions"][0]["memory_ids"][0]
    in_database(django_db_blocker, _mark_sensitive, memory_id)

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    viewer = context.new_page()
    login(viewer, office, "nina")
    open_session(viewer, office, session_id)
    assert viewer.evaluate(f"cw.cy.getElementById('m{memory_id}').data('label')").endswith("sensitive")
    assert "P7734521" not in viewer.content()
    context.close()

    page.goto(office.url + f"/p/{office.project_slug}/settings/")
    row = page.locator("#tokens-table tr", has_text="trip planner")
    row.locator("button", has_text="Revoke").click()
    assert "revoked" in page.inner_text("#settings-message")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(agent.api("sessions/"),
                                                      headers={"Authorization": f"Bearer {raw}"}), timeout=30)
    assert refused.value.code == 401
    page.fill("#setting-keep_threshold", "3.5")
    page.select_option("#setting-recall_preset", "hybrid")
    page.click("#engine-settings button[type=submit]")
    assert page.inner_text("#settings-message") == "Engine settings saved."
    assert "(changed)" in page.inner_text("#engine-card tr[data-setting=keep_threshold]")
    assert page.input_value("#setting-keep_threshold") == "3.5"
    screenshot(page, "settings", full_page=True)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    assert page.inner_text("h1") == "项目设置"
    screenshot(page, "settings-zh", full_page=True)
    with page.expect_navigation():
        page.select_option("#language-select", "en")
