"""Bulk forgetting as an admin runs it (administration/forgetting.py): dry run, confirmation, the job in the
background with its progress, the audit record, VACUUM and the verification scan, in English and Chinese,
with other projects and sessions left exactly as they were."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from administration.forgetting import forget_job_run
from administration.models import ForgetJob, JobState
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.maintenance import scrub
from memory.engine.maintenance.common import REDACTED
from memory.engine.projects import project_create, session_create, token_issue
from memory.engine.recall import RecallQuery, memory_recall
from memory.models import (
    AgentSession,
    ApiToken,
    Edge,
    EntityMention,
    GraphChange,
    Interaction,
    Membership,
    Memory,
    RecallTrace,
    Role,
)

from .test_maintenance_support import rows_containing

pytestmark = pytest.mark.django_db(transaction=True)

EN_SECRET = ["The gym locker code is ZX-4471, locker 38 next to the sauna.",
             "Nadia keeps her spare Brompton key inside locker ZX-4471 at the Clydeside gym."]
EN_KEEP = ["The flight to Lisbon leaves at 09:40 on Friday.", "Book a table for four at the harbour restaurant."]
ZH_SECRET = ["保险柜密码是739182，放在书房衣柜最下面一层。", "外婆的存折也锁在那个保险柜里，密码739182别告诉别人。"]
ZH_KEEP = ["周六上午带乐乐去打疫苗，记得带医保卡。", "周日晚上全家去外婆家吃饭。"]
SECRETS = ("ZX-4471", "Brompton", "Clydeside", "739182", "存折", "书房衣柜")


def _ingest(session: AgentSession, texts: list[str]) -> None:
    start = timezone.now() - timedelta(hours=1)
    interactions_accept(session=session, actor="agent", items=[
        InteractionInput("user_input", text, {}, start + timedelta(minutes=i)) for i, text in enumerate(texts)])


def _project_rows(project) -> dict[str, list]:
    """A fingerprint of a project's rows: ids and contents of everything a forget could touch."""
    return {
        "memories": list(Memory.objects.filter(project=project).order_by("id").values_list("id", "status", "content")),
        "edges": list(Edge.objects.filter(project=project).order_by("id").values_list("id", "rationale")),
        "mentions": list(EntityMention.objects.filter(memory__project=project).order_by("id").values_list("id")),
        "interactions": list(Interaction.objects.filter(project=project).order_by("id").values_list("id", "content")),
        "traces": list(RecallTrace.objects.filter(project=project).order_by("id").values_list("id", "query")),
        "changes": GraphChange.objects.filter(project=project).count(),
    }


@pytest.fixture
def world(project, agent_session):
    """Project A: an English and a Chinese session, each with secrets and memories to keep, and a recall
    that asked about a secret in words of its own; project B holds the same kind of rows."""
    zh = session_create(project=project, title="家里的事", task="", actor="t")
    _ingest(agent_session, EN_SECRET[:1] + EN_KEEP + EN_SECRET[1:])
    _ingest(zh, ZH_SECRET[:1] + ZH_KEEP + ZH_SECRET[1:])
    asked = memory_recall(project=project, query=RecallQuery("Which locker holds the ZX-4471 code?", k=5),
                          actor="t").trace
    memory_recall(project=project, query=RecallQuery("保险柜密码是多少？", k=5), actor="t")
    other = project_create(name="Other", slug="other-project")
    other_session = session_create(project=other, title="Other", task="", actor="t")
    _ingest(other_session, EN_KEEP + ZH_KEEP)
    admin = get_user_model().objects.create_user("root-admin", password="a-long-password-1")
    Membership.objects.create(project=project, user=admin, role=Role.ADMIN)
    client = APIClient()
    client.force_login(admin)
    return {"zh": zh, "other": other, "asked": asked, "client": client}


def _url(project, *parts) -> str:
    return "/".join([f"/api/projects/{project.slug}/forget", *map(str, parts)]) + "/"


def _finished(client, project, job_id: int) -> dict:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(_url(project, "jobs", job_id)).json()
        if job["state"] in (JobState.DONE, JobState.FAILED):
            return job
        time.sleep(0.1)
    raise AssertionError(f"forget job {job_id} did not end: {job}")


def _forget(client, project, text: str, mode: str = "hard") -> dict:
    preview = client.post(_url(project, "preview"), {"text_contains": text, "mode": mode}, format="json")
    assert preview.status_code == 200, preview.content
    started = client.post(_url(project, "jobs"), {"text_contains": text, "mode": mode, "confirm": project.slug,
                                                  "expect_memories": preview.json()["memories"]}, format="json")
    assert started.status_code == 202, started.content
    return {"preview": preview.json(), "job": _finished(client, project, started.json()["id"])}


@pytest.mark.parametrize("in_sql", [True, False], ids=["needles-in-sql", "needles-in-python"])
def test_hard_forget_in_english_then_chinese_leaves_no_residue(project, agent_session, world, monkeypatch, in_sql):
    """Both ways of finding the rows that quote forgotten text: the server's ILIKE (few needles) and the
    Aho-Corasick pass a forget of thousands of memories takes (forced here by a threshold of 0)."""
    if not in_sql:
        monkeypatch.setattr(scrub, "SQL_NEEDLES_MAX", 0)
    client = world["client"]
    assert all(rows_containing(s) for s in SECRETS)
    other_before, zh_keep_before = _project_rows(world["other"]), ZH_KEEP

    en = _forget(client, project, "ZX-4471")
    assert en["preview"]["memories"] == 2 and len(en["preview"]["sample"]) == 2
    assert en["preview"]["counts"]["deleted"] == 2 and en["preview"]["counts"]["traces_scrubbed"] >= 1
    job = en["job"]
    assert job["state"] == "done", job["error"]
    assert job["counts"] == en["preview"]["counts"], "the dry run counted what the job did"
    assert job["verification"]["strings"] >= 3 and job["verification"]["residues"] == [] and job["residues"] == 0
    assert "memory_memory" in job["vacuumed"] and job["done"] == job["total"] == 2
    assert job["filter"]["text_contains"] == REDACTED and job["actor"].startswith("user:")
    trace = RecallTrace.objects.get(pk=world["asked"].pk)
    assert trace.query == REDACTED and REDACTED in trace.context  # it asked about the code in its own words
    for secret in ("ZX-4471", "Brompton", "Clydeside"):
        assert rows_containing(secret) == {}, secret
    assert set(Memory.objects.filter(session=agent_session).values_list("content", flat=True)) == set(EN_KEEP)

    zh = _forget(client, project, "739182")
    assert zh["job"]["state"] == "done" and zh["job"]["counts"]["deleted"] == 2
    assert zh["job"]["verification"]["strings"] >= 2 and zh["job"]["verification"]["residues"] == []
    for secret in ("739182", "存折", "书房衣柜"):
        assert rows_containing(secret) == {}, secret
    assert set(Memory.objects.filter(session=world["zh"]).values_list("content", flat=True)) == set(zh_keep_before)
    assert _project_rows(world["other"]) == other_before, "another project is untouched"

    audit = client.get(_url(project, "jobs")).json()
    assert [j["id"] for j in audit] == [zh["job"]["id"], job["id"]]
    assert not any(s in str(audit) for s in SECRETS), "the audit trail never holds the forgotten text"
    assert ForgetJob.objects.filter(pending_filter__isnull=False).count() == 0


def test_the_scan_lists_what_the_forget_left(project, agent_session, world):
    """A token named after the secret is no memory: the forget leaves it, and the scan says where."""
    token = ApiToken.objects.get(pk=token_issue(project=project, name="agent for locker ZX-4471")[0].pk)
    job = _forget(world["client"], project, "ZX-4471")["job"]
    assert job["state"] == "done"
    assert job["verification"]["residues"] == [{"table": "memory_apitoken", "column": "name", "row": token.pk}]
    assert job["residues"] == 1


def test_refusals_write_nothing(project, agent_session, world):
    client = world["client"]
    body = {"text_contains": "ZX-4471", "mode": "hard", "expect_memories": 2}
    state = _project_rows(project)
    wrong = client.post(_url(project, "jobs"), {**body, "confirm": "not-the-slug"}, format="json")
    assert wrong.status_code == 400 and "confirm" in wrong.json()["error"]["fields"]
    moved = client.post(_url(project, "jobs"), {**body, "confirm": project.slug, "expect_memories": 3}, format="json")
    assert moved.status_code == 400 and "run the dry run again" in moved.json()["error"]["message"]
    empty = client.post(_url(project, "preview"), {"mode": "hard"}, format="json")
    assert empty.status_code == 400
    backwards = client.post(_url(project, "preview"), {"after": "2026-05-02T00:00:00Z",
                                                       "before": "2026-05-01T00:00:00Z"}, format="json")
    assert backwards.status_code == 400 and "after" in backwards.json()["error"]["fields"]
    ForgetJob.objects.create(project=project, actor="user:9", mode="soft", expect_memories=1, state=JobState.RUNNING)
    busy = client.post(_url(project, "jobs"), {**body, "confirm": project.slug}, format="json")
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "job_running"
    assert ForgetJob.objects.count() == 1 and _project_rows(project) == state
    assert client.get(_url(project, "jobs", 10**9)).status_code == 404


def test_soft_forget_of_sensitive_memories_in_a_time_range(project, agent_session, world):
    marked = Memory.objects.filter(session=agent_session, content__in=EN_SECRET)
    marked.update(sensitive=True)
    job = world["client"].post(_url(project, "jobs"), {
        "sensitive_only": True, "session_ids": [agent_session.pk], "after": "2000-01-01T00:00:00Z",
        "mode": "soft", "confirm": project.slug, "expect_memories": 2}, format="json")
    assert job.status_code == 202, job.content
    done = _finished(world["client"], project, job.json()["id"])
    assert done["state"] == "done" and done["counts"]["memories"] == 2 and done["verification"] is None
    assert set(Memory.objects.filter(status="forgotten").values_list("content", flat=True)) == set(EN_SECRET)
    assert done["filter"]["session_ids"] == [agent_session.pk] and done["filter"]["sensitive_only"] is True


def test_a_failed_job_says_why_without_the_filter_text(project, agent_session):
    job = ForgetJob.objects.create(project=project, actor="user:1", mode="hard", expect_memories=1,
                                   pending_filter={"entity": "Veronika Quistberg"}, filter={"entity": REDACTED})
    ended = forget_job_run(job.pk)
    assert ended.state == JobState.FAILED and ended.pending_filter is None
    assert "Quistberg" not in ended.error and REDACTED in ended.error
    assert forget_job_run(job.pk).state == JobState.FAILED, "a job that ended is not run again"


def test_a_job_whose_worker_stopped_does_not_block_forgetting_for_ever(project, agent_session, world):
    stale = ForgetJob.objects.create(project=project, actor="user:9", mode="hard", expect_memories=1,
                                     state=JobState.RUNNING, pending_filter={"text_contains": "ZX-4471"})
    ForgetJob.objects.filter(pk=stale.pk).update(created_at=timezone.now() - timedelta(hours=7))
    job = _forget(world["client"], project, "ZX-4471")["job"]
    assert job["state"] == "done"
    stale.refresh_from_db()
    assert stale.state == JobState.FAILED and stale.pending_filter is None and "worker stopped" in stale.error


def test_with_workers_the_job_waits_on_the_maintenance_queue_until_one_runs_it(project, agent_session, world):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    client = world["client"]
    with override_settings(MEMORY={**settings.MEMORY, "INGEST_MODE": "queue"}):
        started = client.post(_url(project, "jobs"), {"text_contains": "ZX-4471", "mode": "hard",
                                                      "confirm": project.slug, "expect_memories": 2}, format="json")
    assert started.status_code == 202
    assert client.get(_url(project, "jobs", started.json()["id"])).json()["state"] == "queued"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.base",
           "CW_DB_NAME": connection.settings_dict["NAME"], "CW_EMBEDDER": "hashing", "CW_LLM": "none"}
    worker = subprocess.run([sys.executable, "manage.py", "procrastinate", "worker", "--queues", "maintenance",
                             "--one-shot"], cwd=Path(__file__).resolve().parent.parent, env=env,
                            capture_output=True, text=True, timeout=180)
    assert worker.returncode == 0, worker.stderr[-2000:]
    job = client.get(_url(project, "jobs", started.json()["id"])).json()
    assert job["state"] == "done" and job["verification"]["residues"] == [] and job["counts"]["deleted"] == 2
    assert rows_containing("ZX-4471") == {}
