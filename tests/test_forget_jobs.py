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


# A whole session deleted for good (issue 45): its task keeps the garden turns and lets the filter drop the rest.
CHAT_TASK = "Plan the spring vegetable garden: what to sow, and when"
CHAT_KEPT = ["Sow the tomatoes indoors in early March and plant them out in mid May.",
             "Plant the garlic cloves along the south fence in October."]
CHAT_PERSONAL = "lol unrelated but my PIN is 8830-2291 and Odalys Brennecke lives at 14 Quarry Lane"
CHAT_FILTERED = ["ok", "thanks", CHAT_PERSONAL]
CHAT_PENDING = "did the allotment society send the gate code QK-5519 yet"
CHAT_FAILED = "Yvonne Tarrasch lent us the rotavator until the 3rd"
CHAT_STRINGS = ("8830-2291", "Odalys", "Brennecke", "Quarry Lane", "QK-5519", "Tarrasch", "rotavator",
                "tomatoes indoors", "garlic cloves", "Spring garden with Odalys")


def _chat(project) -> dict:
    """A session as an agent leaves it: kept turns, filtered chit-chat (one of them personal), one waiting
    and one failed turn, a recall asked in it and a curator's act on one of its memories."""
    from administration.engine_settings import engine_settings_set
    from curation.models import CurationAct

    # The admin raised the filter's bar: the garden turns pass (4.2 and 3.8), the aside (3.4) is dropped.
    engine_settings_set(project=project, actor="t", values={"keep_threshold": 3.6})
    chat = session_create(project=project, title="Spring garden with Odalys", task=CHAT_TASK, actor="t")
    _ingest(chat, [CHAT_KEPT[0], "ok", CHAT_PERSONAL, CHAT_KEPT[1], "thanks"])
    statuses = dict(Interaction.objects.filter(session=chat).values_list("content", "status"))
    assert [statuses[t] for t in CHAT_KEPT] == ["kept", "kept"], statuses
    assert [statuses[t] for t in CHAT_FILTERED] == ["filtered"] * 3, statuses
    now = timezone.now()
    Interaction.objects.create(project=project, session=chat, kind="user_input", content=CHAT_PENDING,
                               occurred_at=now, status="pending", metadata={"from": "phone"})
    Interaction.objects.create(project=project, session=chat, kind="user_input", content=CHAT_FAILED,
                               occurred_at=now, status="failed", error=f"embedder timed out on {CHAT_FAILED!r}")
    memory_recall(project=project, query=RecallQuery("When do the tomatoes go out?", k=5, session=chat), actor="t")
    kept = Memory.objects.filter(session=chat).order_by("id").first()
    CurationAct.objects.create(project=project, session=chat, actor="user:1", kind="approve", object_type="memory",
                               object_id=kept.pk, reason="right, tomatoes go out in May")
    return {"session": chat, "memories": set(Memory.objects.filter(session=chat).values_list("id", flat=True)),
            "interactions": set(Interaction.objects.filter(session=chat).values_list("id", flat=True)),
            "edges": set(Edge.objects.filter(session=chat).values_list("id", flat=True))}


def _rows_of_session(session_id: int) -> dict[str, int]:
    """Rows of every table with a session column that still point at the session (one independent look)."""
    from django.db import connection

    found = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
                       "AND column_name = 'session_id'")
        for (table,) in cursor.fetchall():
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE session_id = %s', [session_id])
            if n := cursor.fetchone()[0]:
                found[table] = n
        cursor.execute("SELECT count(*) FROM memory_agentsession WHERE id = %s", [session_id])
        if n := cursor.fetchone()[0]:
            found["memory_agentsession"] = n
    return found


def _whole_values(texts: tuple[str, ...]) -> dict[str, int]:
    """Columns of every table of the database holding one of the texts as a whole value: a text column
    (trimmed), or a string anywhere inside a JSON column. Short texts ("ok") are found no other way."""
    from django.db import connection

    found = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                       "WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'jsonb')")
        for table, column, kind in cursor.fetchall():
            test = (f"jsonb_path_exists(\"{column}\", 'lax $.** ? (@ == $v)', jsonb_build_object('v', %s::text))"
                    if kind == "jsonb" else f"btrim(\"{column}\") = %s")
            for text in texts:
                cursor.execute(f'SELECT count(*) FROM "{table}" WHERE {test}', [text])
                if n := cursor.fetchone()[0]:
                    found[f"{table}.{column}={text}"] = n
    return found


def test_deleting_a_whole_session_for_good_leaves_nothing_of_it(project, agent_session, world):
    """The filter names one session and nothing else, hard: the session goes with every interaction
    (kept, filtered, failed, pending), its memories, edges, vectors, recall and store rows, and every
    copy of their text; the dry run said so, the scan looked for the filtered text and found none."""
    from memory.models import MemoryEmbedding

    client, chat = world["client"], _chat(project)
    session = chat["session"]
    assert all(rows_containing(s) for s in CHAT_STRINGS)
    assert set(_whole_values(("ok", "thanks"))) >= {"memory_interaction.content=ok",
                                                    "memory_interaction.content=thanks"}
    other_before, en_before = _project_rows(world["other"]), _project_rows(project)["memories"]
    body = {"session_ids": [session.pk], "mode": "hard"}

    preview = client.post(_url(project, "preview"), body, format="json").json()
    assert preview["memories"] == len(chat["memories"]) == 2
    started = client.post(_url(project, "jobs"), {**body, "confirm": project.slug, "expect_memories": 2},
                          format="json")
    assert started.status_code == 202, started.content
    job = _finished(client, project, started.json()["id"])
    assert job["state"] == "done", job["error"]

    # Nothing of the session is left: no row points at it, and none of its rows exists.
    assert _rows_of_session(session.pk) == {}
    assert not AgentSession.objects.filter(pk=session.pk).exists()
    assert not Interaction.objects.filter(pk__in=chat["interactions"]).exists()
    assert not Memory.objects.filter(pk__in=chat["memories"]).exists()
    assert not Edge.objects.filter(pk__in=chat["edges"]).exists()
    assert not MemoryEmbedding.objects.filter(memory_id__in=chat["memories"]).exists()
    assert not RecallTrace.objects.filter(query__contains="tomatoes").exists()
    # Nor its text, anywhere in the database (looked for independently of the job's scan).
    for text in CHAT_STRINGS:
        assert rows_containing(text) == {}, text
    assert _whole_values(("ok", "thanks")) == {}
    assert GraphChange.objects.filter(op="session.deleted", object_id=session.pk, session=None).count() == 1
    # Everything else stays as it was.
    assert _project_rows(world["other"]) == other_before
    assert _project_rows(project)["memories"] == [m for m in en_before if m[0] not in chat["memories"]]
    # The dry run said so, and the scan looked for what the filtered turns said.
    assert preview["deleted_sessions"] == [{"id": session.pk, "name": "Spring garden with Odalys",
                                            "memories": 2, "interactions": 7}]
    assert preview["interactions"]["deleted"] == {"pending": 1, "kept": 2, "filtered": 3, "failed": 1}
    assert preview["counts"]["sessions_deleted"] == 1 and preview["counts"]["interactions_deleted"] == 7
    assert preview["counts"]["traces_deleted"] == 1 and job["counts"] == preview["counts"]
    assert job["verification"]["strings"] >= 6 and job["verification"]["residues"] == [] and job["residues"] == 0


def test_the_scan_reports_a_filtered_turn_left_behind(project, agent_session, world):
    """A token named after what a filtered turn said is no part of the session: it stays, and the scan of
    the session's deletion says where (the filtered turn's text is looked for, not only the memories')."""
    session = _chat(project)["session"]
    token = ApiToken.objects.get(pk=token_issue(project=project, name="garden agent, PIN 8830-2291")[0].pk)
    started = world["client"].post(_url(project, "jobs"), {"session_ids": [session.pk], "mode": "hard",
                                                           "confirm": project.slug, "expect_memories": 2},
                                   format="json")
    job = _finished(world["client"], project, started.json()["id"])
    assert job["state"] == "done", job["error"]
    assert job["verification"]["residues"] == [{"table": "memory_apitoken", "column": "name", "row": token.pk}]
    assert job["residues"] == 1


def test_a_session_with_no_memory_can_be_deleted_whole(project, agent_session, world):
    """Only chit-chat: nothing became a memory, and the session still goes when it is chosen."""
    from administration.engine_settings import engine_settings_set

    engine_settings_set(project=project, actor="t", values={"keep_threshold": 3.6})
    chat = session_create(project=project, title="Small talk", task=CHAT_TASK, actor="t")
    _ingest(chat, ["ok", "thanks", CHAT_PERSONAL])
    body = {"session_ids": [chat.pk], "mode": "hard"}
    preview = world["client"].post(_url(project, "preview"), body, format="json").json()
    assert preview["memories"] == 0
    started = world["client"].post(_url(project, "jobs"), {**body, "confirm": project.slug, "expect_memories": 0},
                                   format="json")
    job = _finished(world["client"], project, started.json()["id"])
    assert job["state"] == "done", job["error"]
    assert _rows_of_session(chat.pk) == {} and rows_containing("8830-2291") == {}
    assert [s["id"] for s in preview["deleted_sessions"]] == [chat.pk]
    assert preview["interactions"]["deleted"]["filtered"] == 3
    assert job["residues"] == 0 and job["verification"]["strings"] >= 2


def test_a_narrowed_session_filter_keeps_the_session(project, agent_session, world):
    """A session with a kind (or any other filter) chooses some of its memories, not the session."""
    chat = _chat(project)
    session = chat["session"]
    body = {"session_ids": [session.pk], "kinds": ["fact"], "mode": "hard"}
    preview = world["client"].post(_url(project, "preview"), body, format="json").json()
    assert preview["deleted_sessions"] == [] and "sessions_deleted" not in preview["counts"]
    assert preview["interactions"]["deleted"] == {"pending": 0, "kept": 0, "filtered": 0, "failed": 0}
    assert preview["interactions"]["emptied"]["kept"] == preview["memories"] == 2
    assert AgentSession.objects.filter(pk=session.pk).exists()
