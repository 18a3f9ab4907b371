"""The demo's live session (memory/demo/live.py + simulate_agent --live): varied episodes, one growing
session per language, resumed by a later run, with memories, edges, superseded values and proposals."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.demo.live import LIVE_DIR, live_script, load_live_script
from memory.engine.cues import CHANGE_CUE
from memory.engine.projects import project_create, token_issue
from memory.models import AgentSession, Edge, Interaction, Memory

LANGS = ("en", "zh")


@pytest.mark.parametrize("language", LANGS)
def test_episodes_differ_every_time_and_fill_every_placeholder(language: str) -> None:
    script = live_script(language)
    episodes = [script.episode(n) for n in range(12)]
    topics = [e.topic for e in episodes]
    assert len(set(topics)) == len(script.templates) >= 3 and topics[:3] != topics[:1] * 3  # the topics take turns
    texts = [tuple(i.content for i in e.interactions) for e in episodes]
    assert len(set(texts)) == len(texts)  # never the same episode twice
    for episode in episodes:
        for item in episode.interactions:
            assert "{" not in item.content and all("{" not in v for v in item.metadata.values()), item
        # Each episode changes a value on the way (the engine's supersede cue finds it) …
        assert any(CHANGE_CUE.search(i.content) for i in episode.interactions), episode.topic
        # … and its tool calls and results pair by call id.
        calls = [i.metadata.get("call_id") for i in episode.interactions if i.kind == "tool_call"]
        results = [i.metadata.get("call_id") for i in episode.interactions if i.kind == "tool_result"]
        assert calls and calls == results
    assert script.episode(5) == script.episode(5)  # the same number, the same episode: retries stay idempotent


def test_a_bad_live_script_names_the_file_and_the_problem(tmp_path: Path) -> None:
    data = json.loads((LIVE_DIR / "en.json").read_text(encoding="utf-8"))
    data["episodes"][0]["interactions"][0]["content"] = "Hello {nobody}"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: episode 'hotel' uses unknown placeholder\(s\): nobody"):
        load_live_script(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: not valid UTF-8 JSON"):
        load_live_script(path)


@pytest.mark.django_db(transaction=True)
def test_simulate_agent_live_grows_one_session_per_language_and_a_later_run_resumes_it(live_server) -> None:
    project = project_create(name="Live demo", slug="live-demo")
    token = token_issue(project=project)[1]
    out = StringIO()
    call_command("simulate_agent", base_url=live_server.url, token=token, project="live-demo", live=True,
                 language="both", loops=6, interval=0, wait=True, stdout=out)

    sessions = {s.external_id: s for s in AgentSession.objects.filter(project=project)}
    assert set(sessions) == {"demo-live-en", "demo-live-zh"}
    lines = out.getvalue().splitlines()
    for session in sessions.values():  # the links come first, before any interaction is sent
        assert any(f"Live session #{session.pk}" in line and "started" in line and f"/sessions/{session.pk}/" in line
                   for line in lines[:2]), lines[:2]
    assert sum("kept as memories" in line for line in lines) == 6
    for session in sessions.values():
        interactions = Interaction.objects.filter(session=session)
        assert {i.status for i in interactions} <= {"kept", "filtered"}
        assert interactions.filter(status="filtered").exists()  # the "thanks" and "ok"
        assert Memory.objects.filter(session=session).count() > 20
        assert Memory.objects.filter(session=session, status="superseded").exists(), session.external_id
        dependencies = Edge.objects.filter(session=session, relation__in=["causal", "conditional", "supersedes"])
        assert dependencies.count() >= 10, session.external_id
    proposals = Edge.objects.filter(session__in=sessions.values(), needs_review=True).count()
    assert proposals >= 1  # something for a curator to review

    before = {key: s.interactions.count() for key, s in sessions.items()}
    again = StringIO()
    call_command("simulate_agent", base_url=live_server.url, token=token, project="live-demo", live=True,
                 language="en", loops=1, interval=0, wait=True, stdout=again)
    assert AgentSession.objects.filter(project=project).count() == 2  # the same session goes on growing
    assert f"({before['demo-live-en']} interactions so far)" in again.getvalue()
    grown = sessions["demo-live-en"].interactions.count()
    assert grown > before["demo-live-en"]
    assert not re.search(r"\(duplicate\)", again.getvalue())  # a new episode, not the first one resent
    contents = list(sessions["demo-live-en"].interactions.order_by("id").values_list("content", flat=True))
    assert len(set(contents[:before["demo-live-en"]]) & set(contents[before["demo-live-en"]:])) <= 2  # "thanks", "ok"


@pytest.mark.django_db
def test_simulate_agent_live_option_errors_are_clear() -> None:
    with pytest.raises(CommandError, match="--language both needs --live"):
        call_command("simulate_agent", token="t", project="p", language="both", stdout=StringIO())
    with pytest.raises(CommandError, match="--scenario and --live"):
        call_command("simulate_agent", token="t", project="p", live=True, scenario="travel", stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_the_large_demo_session_is_built_through_the_pipeline_and_resumes() -> None:
    """`make demo` builds it in the background (demo_large_session); a second run finishes or grows it."""
    project = project_create(name="Demo", slug="demo")
    out = StringIO()
    call_command("demo_large_session", project="demo", interactions=30, stdout=out)
    session = AgentSession.objects.get(project=project, external_id="demo-large-en")
    assert session.interactions.count() == 30
    assert Memory.objects.filter(session=session).count() >= 20
    assert {i.status for i in session.interactions.all()} <= {"kept", "filtered"}
    times = list(session.interactions.order_by("id").values_list("occurred_at", flat=True))
    assert times == sorted(times) and (times[-1] - times[0]).days >= 300  # a year of the travel desk
    assert f"Large demo session #{session.pk} ready: 30 interactions" in out.getvalue()
    assert f"/sessions/{session.pk}/" in out.getvalue()

    call_command("demo_large_session", project="demo", interactions=45, stdout=StringIO())
    assert AgentSession.objects.filter(project=project, external_id="demo-large-en").count() == 1
    keys = list(session.interactions.values_list("idempotency_key", flat=True))
    assert len(keys) == 45 == len(set(keys))
    call_command("demo_large_session", project="demo", interactions=45, stdout=StringIO())
    assert session.interactions.count() == 45  # already that large: nothing sent


@pytest.mark.django_db
def test_the_large_demo_session_command_errors_are_clear() -> None:
    with pytest.raises(CommandError, match="No project 'nowhere'"):
        call_command("demo_large_session", project="nowhere", stdout=StringIO())
    with pytest.raises(CommandError, match="--interactions must be at least 1"):
        call_command("demo_large_session", project="nowhere", interactions=0, stdout=StringIO())
