"""The forget page: an admin chooses what to forget, reads the dry run, types the slug, watches the job and
reads its audit record (0 residues); the forgotten text is gone from the project's pages."""

from __future__ import annotations

import pytest

from .conftest import PASSWORD, api_post, in_database, login, new_session, other_project, screenshot

SECRET = "The gym locker code is ZX-4471, locker 38 next to the sauna."
KEEP = ["The flight to Lisbon leaves at 09:40 on Friday.", "Book a table for four at the harbour restaurant.",
        "保险柜密码是739182，放在书房衣柜最下面一层。"]


def _admin(slug: str) -> None:
    from django.contrib.auth import get_user_model

    from memory.models import Membership, Project, Role

    frida = get_user_model().objects.create_user("frida", password=PASSWORD)
    Membership.objects.create(project=Project.objects.get(slug=slug), user=frida, role=Role.ADMIN)


def _contents(slug: str) -> list[str]:
    from memory.models import Memory

    return sorted(Memory.objects.filter(project__slug=slug).values_list("content", flat=True))


@pytest.fixture(scope="module")
def gym(site, django_db_blocker):
    gym = other_project(site, django_db_blocker, "forget-web", "Forget office")
    in_database(django_db_blocker, _admin, gym.project_slug)
    session_id = new_session(gym, "Gym and trips")
    api_post(gym, f"sessions/{session_id}/interactions/", {"interactions": [
        {"kind": "user_input", "content": text} for text in [SECRET, *KEEP]]})
    return gym


def test_an_admin_forgets_with_a_dry_run_a_confirmation_and_progress(page, gym, django_db_blocker):
    login(page, gym, "frida")
    page.goto(gym.url + f"/p/{gym.project_slug}/settings/")
    page.click("#forget-link")
    page.wait_for_selector("html[data-forget-ready='1']", state="attached")
    assert page.inner_text("#jobs-table tbody") == "Nothing has been forgotten in this project."
    page.fill("#f-text", "ZX-4471")
    page.check("input[name=mode][value=hard]")
    page.click("#dry-run")
    page.wait_for_selector("#preview:not([hidden])")
    assert "1 memory would be deleted for good" in page.inner_text("#preview-summary")
    assert page.inner_text("#preview-counts [data-count=deleted] b") == "1"
    assert "curators' reasons rewritten" in page.inner_text("#preview-counts [data-count=notes_scrubbed]")
    assert "ZX-4471" in page.inner_text("#preview-sample")
    assert page.is_disabled("#forget-start")
    page.fill("#f-confirm", "forget-wrong")
    assert page.is_disabled("#forget-start")
    page.fill("#f-confirm", gym.project_slug)
    assert page.inner_text("#forget-start") == "Forget 1 memory"
    screenshot(page, "forget-dry-run", full_page=True)
    page.click("#forget-start")
    page.wait_for_selector("html[data-forget-job$=':done']", state="attached", timeout=60_000)
    assert "is done: 1 memory forgotten. The scan found 0 residues." in page.inner_text("#progress-text")
    row = page.locator("#jobs-table tr[data-state=done]")
    assert row.count() == 1
    assert "0 residues" in row.inner_text() and "frida" in row.inner_text() and "[forgotten]" in row.inner_text()
    assert "ZX-4471" not in page.content()
    assert in_database(django_db_blocker, _contents, gym.project_slug) == sorted(KEEP)
    screenshot(page, "forget-done", full_page=True)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.wait_for_selector("html[data-forget-ready='1']", state="attached")
    assert page.inner_text("h1") == "遗忘记忆"
    screenshot(page, "forget-zh", full_page=True)
    page.fill("#f-text", "保险柜")
    page.check("input[name=mode][value=hard]")
    page.click("#dry-run")
    page.wait_for_selector("#preview:not([hidden])")
    assert "改写的校订理由" in page.inner_text("#preview-counts [data-count=notes_scrubbed]")
    screenshot(page, "forget-dry-run-zh", full_page=True)
    with page.expect_navigation():
        page.select_option("#language-select", "en")


def _session_rows(session_id: int) -> dict[str, object]:
    from memory.models import AgentSession, Interaction

    return {"session": AgentSession.objects.filter(pk=session_id).exists(),
            "statuses": sorted(Interaction.objects.filter(session_id=session_id).values_list("status", flat=True))}


def test_an_admin_deletes_a_whole_session_for_good(page, gym, django_db_blocker):
    """Only a session chosen, delete for good: the dry run names the session and its interactions by status,
    the button says a session goes, and afterwards nothing of it is left."""
    session_id = new_session(gym, "Small talk with Odalys")
    api_post(gym, f"sessions/{session_id}/interactions/", {"interactions": [
        {"kind": "user_input", "content": text}
        for text in ["ok", "The ferry to Lisbon leaves at 07:15 on Saturday.", "thanks"]]})
    before = in_database(django_db_blocker, _session_rows, session_id)
    assert before == {"session": True, "statuses": ["filtered", "filtered", "kept"]}
    login(page, gym, "frida")
    page.goto(gym.url + f"/p/{gym.project_slug}/forget/")
    page.wait_for_selector("html[data-forget-ready='1']", state="attached")
    page.select_option("#f-sessions", str(session_id))
    page.check("input[name=mode][value=hard]")
    page.click("#dry-run")
    page.wait_for_selector("#preview:not([hidden])")
    sessions = page.inner_text("#preview-sessions")
    assert "This session goes for good" in sessions and f"#{session_id} Small talk with Odalys" in sessions
    assert "memories 1 · interactions 3" in sessions
    assert page.inner_text("#preview-interactions") == \
        "Interactions deleted: 1 kept, 2 filtered, 0 failed, 0 waiting"
    assert page.inner_text("#preview-counts [data-count=sessions_deleted] b") == "1"
    page.fill("#f-confirm", gym.project_slug)
    assert page.inner_text("#forget-start") == "Delete 1 session for good (1 memory)"
    screenshot(page, "forget-session-dry-run", full_page=True)
    page.click("#forget-start")
    page.wait_for_selector("html[data-forget-job$=':done']", state="attached", timeout=60_000)
    assert "1 session deleted. The scan found 0 residues." in page.inner_text("#progress-text")
    assert in_database(django_db_blocker, _session_rows, session_id) == {"session": False, "statuses": []}
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.wait_for_selector("html[data-forget-ready='1']", state="attached")
    assert f'value="{session_id}"' not in page.inner_html("#f-sessions")
    with page.expect_navigation():
        page.select_option("#language-select", "en")
