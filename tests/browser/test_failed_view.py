"""The session page's Failed view (issue 45): interactions whose processing failed, or that were kept without
some of their stages, with the reason; a curator retries them, a viewer only reads; it follows the change log
live; the project page counts them; it speaks Chinese."""

from __future__ import annotations

import pytest

from .conftest import (
    PASSWORD,
    in_database,
    login,
    new_session,
    open_session,
    other_project,
    post_interaction,
    screenshot,
    until,
    wait_live,
)

ERROR = "ConnectionError: embedding service unreachable"
STAGE_ERROR = "RuntimeError: the entity index was unavailable"


@pytest.fixture(scope="module")
def desk(site, django_db_blocker):
    """A project of this module's own: its sessions must not push the demo's off the home page."""
    return other_project(site, django_db_blocker, "failures-web", "Failures desk")


def _failures(session_id: int) -> dict[str, int]:
    """One kept interaction loses two stages, and one interaction failed whole (three attempts so far)."""
    from memory.models import Interaction, InteractionStatus

    kept = Interaction.objects.filter(session_id=session_id, status=InteractionStatus.KEPT).order_by("pk").first()
    kept.stage_errors = {"edges": STAGE_ERROR, "entities": STAGE_ERROR}
    kept.save(update_fields=["stage_errors"])
    failed = Interaction.objects.create(
        project_id=kept.project_id, session_id=session_id, kind="tool_result", occurred_at=kept.occurred_at,
        content="Hotel search: the Alfama guesthouse has 3 rooms left at 110 EUR a night",
        status=InteractionStatus.FAILED, error=ERROR, attempts=3)
    return {"kept": kept.pk, "failed": failed.pk}


def _failing_session(desk, django_db_blocker, title: str) -> tuple[int, dict[str, int]]:
    session_id = new_session(desk, title)
    for text in ("Our budget for the Lisbon trip is 900 EUR in total",
                 "Because the budget is tight, book a guesthouse in Alfama under 120 EUR a night"):
        post_interaction(desk, session_id, text)
    return session_id, in_database(django_db_blocker, _failures, session_id)


def _fail_now(session_id: int) -> int:
    """What a worker does when processing raises: the interaction is marked failed (interaction.failed)."""
    from memory.engine.pipeline import interaction_mark_failed
    from memory.models import Interaction

    first = Interaction.objects.filter(session_id=session_id).order_by("pk").first()
    pending = Interaction.objects.create(project_id=first.project_id, session_id=session_id, kind="user_input",
                                         content="We land in Lisbon on 14 May at 09:40",
                                         occurred_at=first.occurred_at)
    interaction_mark_failed(interaction_id=pending.pk, error=ConnectionError("embedding service unreachable"))
    return pending.pk


def _settle(interaction_id: int) -> None:
    """Done meanwhile, without the page hearing of it: a retry now has nothing to do (409)."""
    from memory.models import Interaction

    Interaction.objects.filter(pk=interaction_id).update(status="filtered", error="", reason="done elsewhere")


def _role(slug: str, username: str, role: str) -> None:
    from django.contrib.auth import get_user_model

    from memory.models import Membership, Project

    users = get_user_model().objects
    user = users.filter(username=username).first() or users.create_user(username, password=PASSWORD)
    Membership.objects.update_or_create(project=Project.objects.get(slug=slug), user=user, defaults={"role": role})


def _row(page, interaction_id: int):
    return page.locator(f"#failed-table tr[data-interaction-id='{interaction_id}']")


def _statuses(ids: list[int]) -> dict[int, tuple[str, dict, str]]:
    from memory.models import Interaction

    return {i.pk: (i.status, i.stage_errors, i.error) for i in Interaction.objects.filter(pk__in=ids)}


def test_a_curator_sees_why_interactions_failed_and_retries_them(page, desk, django_db_blocker):
    session_id, ids = _failing_session(desk, django_db_blocker, "Failures: Lisbon")
    login(page, desk, desk.member)
    page.goto(f"{desk.url}/p/{desk.project_slug}/")
    assert page.inner_text(f"tr[data-session-id='{session_id}'] td.failed-count") == "2"
    screenshot(page, "failed-count-project")

    open_session(page, desk, session_id)
    wait_live(page)
    assert page.inner_text("#failed-count") == "2"
    page.click("[data-tab='failed']")
    page.locator("#failed-table").wait_for(timeout=5000)
    assert page.inner_text("#failed-summary").startswith("2 interactions failed or were kept without")
    failed, kept = _row(page, ids["failed"]), _row(page, ids["kept"])
    assert failed.locator("td").nth(3).inner_text() == "failed"
    assert f"Processing failed: {ERROR}" in failed.inner_text()
    assert failed.locator("td").nth(5).inner_text() == "3"  # attempts
    assert "Alfama guesthouse" in failed.inner_text()
    assert kept.locator("td").nth(3).inner_text() == "kept"
    assert kept.locator(".stage-errors li").all_inner_texts() == [  # in the order the write path runs them
        f"linking entities: {STAGE_ERROR}", f"inferring edges: {STAGE_ERROR}"]
    screenshot(page, "failed-view", full_page=True)

    # Live: a worker's failure shows at once, with its attempt count read from the API.
    late = in_database(django_db_blocker, _fail_now, session_id)
    until(page, "document.querySelector('#failed-count').textContent === '3'")
    _row(page, late).wait_for(timeout=5000)
    until(page, f"document.querySelector(\"#failed-table tr[data-interaction-id='{late}'] td:nth-child(6)\")"
                ".textContent === '1'")

    # Retry the kept one's stages, then the failed one whole.
    kept.locator("button[data-retry]").click()
    page.locator("#toast .toast", has_text=f"Retried #{ids['kept']}: nothing failed this time (kept).").wait_for(
        timeout=10_000)
    until(page, "document.querySelector('#failed-count').textContent === '2'")
    assert "Nothing failed any more." in kept.inner_text() and kept.locator("button").count() == 0
    failed.locator("button[data-retry]").click()
    until(page, "document.querySelector('#failed-count').textContent === '1'", timeout=10)
    assert failed.locator("td").nth(3).inner_text() in ("kept", "filtered")
    statuses = in_database(django_db_blocker, _statuses, [ids["kept"], ids["failed"]])
    assert statuses[ids["kept"]] == ("kept", {}, "")
    assert statuses[ids["failed"]][0] in ("kept", "filtered") and statuses[ids["failed"]][2] == ""

    # One done elsewhere meanwhile: the retry is refused (409), said plainly, and the row shows it as it is.
    in_database(django_db_blocker, _settle, late)
    _row(page, late).locator("button[data-retry]").click()
    page.locator("#toast .toast", has_text="Nothing of it failed any more").wait_for(timeout=5000)
    until(page, "document.querySelector('#failed-count').textContent === '0'")
    assert _row(page, late).locator(".retry-note.info").inner_text().startswith("Nothing of it failed any more")
    assert _row(page, late).locator("td").nth(3).inner_text() == "filtered"  # read again after the 409
    assert page.inner_text("#failed-summary").startswith("No failed interactions.")
    screenshot(page, "failed-view-retried", full_page=True)


def _mark_sensitive(interaction_id: int) -> None:
    from memory.models import Memory

    Memory.objects.filter(sources=interaction_id).update(sensitive=True)


def test_a_viewer_sees_the_reasons_but_no_retry_button(page, desk, django_db_blocker):
    session_id, ids = _failing_session(desk, django_db_blocker, "Failures: viewer")
    in_database(django_db_blocker, _mark_sensitive, ids["kept"])  # its text is masked for a viewer
    login(page, desk, desk.viewer)
    open_session(page, desk, session_id, "#failed")
    page.locator("#failed-table").wait_for(timeout=5000)
    assert page.inner_text("#failed-count") == "2"
    assert f"Processing failed: {ERROR}" in _row(page, ids["failed"]).inner_text()
    kept = _row(page, ids["kept"])
    assert kept.locator(".stage-errors li").count() == 2
    assert kept.locator("td.content-cell").inner_text() == "[sensitive]" and "900 EUR" not in kept.inner_text()
    # A sensitive memory's source shows its failed stages' names, not their reasons (memory/visibility.py).
    assert kept.locator(".stage-errors li").all_inner_texts() == ["linking entities: [sensitive]",
                                                                  "inferring edges: [sensitive]"]
    assert page.locator("#failed-table button").count() == 0, "a viewer gets no Retry button"
    assert page.locator("#failed-table thead th").count() == 7  # no actions column
    screenshot(page, "failed-view-viewer")


def test_a_refused_retry_says_why(page, desk, django_db_blocker):
    """A curator made a viewer while the page was open: the server refuses (403), and the page says so."""
    session_id, ids = _failing_session(desk, django_db_blocker, "Failures: demoted")
    in_database(django_db_blocker, _role, desk.project_slug, "dora", "curator")
    login(page, desk, "dora")
    open_session(page, desk, session_id, "#failed")
    page.locator("#failed-table").wait_for(timeout=5000)
    in_database(django_db_blocker, _role, desk.project_slug, "dora", "viewer")
    _row(page, ids["failed"]).locator("button[data-retry]").click()
    page.locator("#toast .toast-error", has_text="You may not retry interactions in this project.").wait_for(
        timeout=5000)
    assert page.inner_text("#failed-count") == "2"
    assert in_database(django_db_blocker, _statuses, [ids["failed"]])[ids["failed"]][0] == "failed"


def test_the_failed_view_speaks_chinese(page, desk, django_db_blocker):
    session_id, ids = _failing_session(desk, django_db_blocker, "失败：里斯本")
    login(page, desk, desk.member)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    open_session(page, desk, session_id, "#failed")
    page.locator("#failed-table").wait_for(timeout=5000)
    assert page.inner_text("[data-tab='failed']").startswith("处理失败")
    assert page.inner_text("#failed-summary").startswith("2 条交互处理失败")
    assert "失败原因" in page.locator("#failed-table thead").inner_text()
    assert _row(page, ids["kept"]).locator(".stage-name").all_inner_texts() == ["关联实体：", "推断边："]
    assert _row(page, ids["failed"]).locator("td").nth(3).inner_text() == "失败"
    assert _row(page, ids["failed"]).locator("button[data-retry]").inner_text() == "重试"
    screenshot(page, "failed-view-zh", full_page=True)
    page.goto(f"{desk.url}/p/{desk.project_slug}/")
    assert page.locator("th", has_text="处理失败").count() == 1
    with page.expect_navigation():
        page.select_option("#language-select", "en")


def test_a_session_without_failures_says_so(page, site):
    login(page, site, site.member)
    open_session(page, site, query="#failed")
    assert page.inner_text("#failed-count") == "0"
    assert page.inner_text("#failed-summary") == "No failed interactions."
    assert page.locator("#failed-table").count() == 0 and page.inner_text("#view-failed") == "No failed interactions."
    screenshot(page, "failed-view-empty")
