"""Demo scenarios: the data files stay valid, and simulate_agent plays them through a real HTTP server."""

from __future__ import annotations

import json
import re
import socket
from datetime import UTC, date, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.demo import Scenario, load_scenarios
from memory.demo.scenarios import DATA_DIR
from memory.engine.cues import CHIT_CHAT, normalized
from memory.engine.projects import project_create, token_issue
from memory.management.commands.simulate_agent import ApiClient
from memory.models import AgentSession, Edge, Interaction, InteractionKind, Memory

CJK = re.compile(r"[\u4e00-\u9fff]")


def _valid_payload(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "external_id": "demo-broken-en", "title": "Broken", "task": "Check the loader", "language": "en",
        "interactions": [{"kind": "user_input", "content": "My budget is 5000 RMB", "metadata": {"turn": 1}}],
    }
    return {**payload, **overrides}


def _write(directory: Path, payload: Any, name: str = "broken_en.json") -> Path:
    path = directory / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return path


# --- the data files ------------------------------------------------------------------------------


def test_every_data_file_loads_as_one_scenario() -> None:
    """A file the loader silently skipped would vanish from the demo."""
    files = sorted(DATA_DIR.glob("*.json"))
    scenarios = load_scenarios()
    assert len(files) == len(scenarios) >= 4
    assert len({s.external_id for s in scenarios}) == len(scenarios)
    for scenario in scenarios:
        assert isinstance(scenario, Scenario)
        assert scenario.title.strip() and scenario.task.strip()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_language_has_travel_and_coding(language: str) -> None:
    """simulate_agent --scenario travel|coding must work in both languages."""
    scenarios = load_scenarios(language)
    assert {s.language for s in scenarios} == {language}
    assert {"travel", "coding"} <= {s.topic for s in scenarios}


@pytest.mark.parametrize("scenario", load_scenarios(), ids=lambda s: s.external_id)
def test_scenario_shape(scenario: Scenario) -> None:
    """Realistic sessions: 15-30 turns, every kind, paired tool calls, chit-chat the filter drops."""
    assert 15 <= len(scenario.interactions) <= 30
    assert {i.kind for i in scenario.interactions} == set(InteractionKind.values)
    assert all(len(i.content.encode()) < 2048 for i in scenario.interactions)
    assert any(normalized(i.content) in CHIT_CHAT for i in scenario.interactions)
    calls = [i.metadata.get("call_id") for i in scenario.interactions if i.kind == InteractionKind.TOOL_CALL]
    results = [i.metadata.get("call_id") for i in scenario.interactions if i.kind == InteractionKind.TOOL_RESULT]
    assert None not in calls and len(set(calls)) == len(calls)
    assert sorted(calls) == sorted(results)
    for item in scenario.interactions:
        if item.kind in (InteractionKind.TOOL_CALL, InteractionKind.TOOL_RESULT):
            assert item.metadata.get("tool"), item.content
    talk = [i.content for i in scenario.interactions if i.kind != InteractionKind.TOOL_CALL]
    if scenario.language == "zh":  # tool calls are code; everything else is written in Chinese
        assert all(CJK.search(text) for text in talk), [t for t in talk if not CJK.search(t)]
    else:
        assert not any(CJK.search(i.content) for i in scenario.interactions)

def test_load_scenarios_rejects_an_unknown_language() -> None:
    with pytest.raises(ValueError, match="fr"):
        load_scenarios("fr")


# --- malformed files -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (_valid_payload(interactions=[{"kind": "telepathy", "content": "hi there"}]), "unknown kind 'telepathy'"),
        ({k: v for k, v in _valid_payload().items() if k != "task"}, "missing field(s): task"),
        (_valid_payload(interactions=[{"kind": "user_input", "content": "   "}]), "field 'content' is empty"),
        (_valid_payload(interactions=[{"content": "no kind here at all"}]), "missing field(s): kind"),
        (_valid_payload(interactions=[]), "non-empty list"),
        (_valid_payload(language="fr", external_id="demo-broken-fr"), "language 'fr'"),
        (_valid_payload(interactions=[{"kind": "user_input", "content": "x" * 3000}]), "3000 bytes"),
        (_valid_payload(interactions=[{"kind": "user_input", "content": "fine", "metadata": [1]}]), "metadata"),
        ("{not json", "not valid UTF-8 JSON"),
    ],
    ids=["unknown-kind", "missing-field", "empty-content", "missing-kind", "no-interactions", "bad-language",
         "too-long", "bad-metadata", "bad-json"],
)
def test_malformed_file_raises_a_clear_value_error(tmp_path: Path, payload: Any, problem: str) -> None:
    """The message names the file and the problem, so a bad edit is fixed in seconds."""
    _write(tmp_path, _valid_payload(external_id="demo-good-en"), name="good_en.json")
    _write(tmp_path, payload)
    with pytest.raises(ValueError) as caught:
        load_scenarios(directory=tmp_path)
    assert "broken_en.json" in str(caught.value)
    assert problem in str(caught.value)


def test_a_valid_temp_directory_loads(tmp_path: Path) -> None:
    """The directory parameter really reads the given folder (the counterpart of the failures above)."""
    _write(tmp_path, _valid_payload(), name="ok_en.json")
    [scenario] = load_scenarios(directory=tmp_path)
    assert scenario.external_id == "demo-broken-en"
    assert scenario.topic == "broken"
    assert scenario.interactions[0].metadata == {"turn": 1}


def test_duplicate_external_ids_are_rejected(tmp_path: Path) -> None:
    _write(tmp_path, _valid_payload(), name="a_en.json")
    _write(tmp_path, _valid_payload(), name="b_en.json")
    with pytest.raises(ValueError, match="b_en.json.*also used by a_en.json"):
        load_scenarios(directory=tmp_path)


# --- simulate_agent against a live server ------------------------------------------------------------


def _project_with_token(slug: str) -> str:
    project = project_create(name=f"Demo {slug}", slug=slug)
    return token_issue(project=project)[1]


@pytest.mark.django_db(transaction=True)
def test_simulate_agent_plays_a_scenario_over_http(live_server, monkeypatch: pytest.MonkeyPatch) -> None:
    """One loop creates a fresh session and stores every interaction, processed (wait=true) into memories."""
    raw = _project_with_token("sim-en")
    queries: list[dict[str, str] | None] = []
    real_post = ApiClient.post

    def spying_post(client: ApiClient, path: str, body: dict[str, Any], query: dict[str, str] | None = None):
        queries.append(query)  # still a real HTTP request; only the query string is noted
        return real_post(client, path, body, query=query)

    monkeypatch.setattr(ApiClient, "post", spying_post)
    scenario = next(s for s in load_scenarios("en") if s.topic == "travel")
    out = StringIO()
    call_command("simulate_agent", base_url=live_server.url, token=raw, project="sim-en", language="en",
                 scenario="travel", loops=1, interval=0, wait=True, stdout=out)

    session = AgentSession.objects.get(project__slug="sim-en")
    assert session.external_id.startswith("demo-travel-en-")
    assert session.title == scenario.title and session.metadata["simulated"] is True
    interactions = list(Interaction.objects.filter(session=session).order_by("id"))
    dated = scenario.dated_for(datetime.now(UTC).date())
    assert [i.content for i in interactions] == [i.content for i in dated.interactions]
    assert [i.idempotency_key for i in interactions] == [f"{session.external_id}:{n}" for n in range(len(interactions))]
    statuses = {i.status for i in interactions}
    assert statuses <= {"kept", "filtered"}, statuses  # wait=true: nothing left pending
    assert "filtered" in statuses  # the chit-chat ("ok", "thanks")
    assert Memory.objects.filter(session=session).count() == sum(i.status == "kept" for i in interactions) > 10
    assert Memory.objects.filter(session=session, kind="error", content__contains="SOLD_OUT").exists()
    lines = [line for line in out.getvalue().splitlines() if line.lstrip().startswith("[")]
    assert len(lines) == len(scenario.interactions)
    assert f"#{interactions[0].pk}" in lines[0]
    first, last = out.getvalue().splitlines()[0], out.getvalue().splitlines()[-1]
    assert first.startswith(f"Session #{session.pk} started") and f"/sessions/{session.pk}/" in first  # link first
    kept = sum(i.status == "kept" for i in interactions)
    assert f"all {len(interactions)} interactions sent: {kept} kept as memories" in last, last
    assert queries == [None] + [{"wait": "true"}] * len(scenario.interactions)  # session POST, then each one
    # As an instrumented agent: each turn has its framework id, and each tool result its call as a declared link
    assert all(i.external_id for i in interactions)
    results = [i for i in interactions if i.kind == "tool_result"]
    assert results and all(i.links.get().parent.metadata["call_id"] == i.metadata["call_id"] for i in results)
    assert Edge.objects.filter(session=session, origin="agent").count() >= len(results) - 1  # a call may be dropped


@pytest.mark.django_db(transaction=True)
def test_simulate_agent_takes_turns_and_reads_the_token_file(live_server, tmp_path: Path) -> None:
    """Without --scenario, successive loops play the language's scenarios in turn, each in a new session."""
    token_file = tmp_path / "token.txt"
    token_file.write_text(_project_with_token("sim-zh") + "\n", encoding="utf-8")
    call_command("simulate_agent", base_url=live_server.url + "/", token_file=str(token_file), project="sim-zh",
                 language="zh", loops=2, interval=0, stdout=StringIO())

    sessions = list(AgentSession.objects.filter(project__slug="sim-zh").order_by("id"))
    expected = load_scenarios("zh")
    assert [s.metadata["scenario"] for s in sessions] == [s.external_id for s in expected]
    for session, scenario in zip(sessions, expected, strict=True):
        assert session.interactions.count() == len(scenario.interactions)
    # Without --wait the API answers 202; inline mode still processes right after commit.
    assert Memory.objects.filter(session__in=sessions).exists()


@pytest.mark.django_db(transaction=True)
def test_simulate_agent_bad_token_is_a_command_error(live_server) -> None:
    _project_with_token("sim-bad")
    with pytest.raises(CommandError, match="rejected the API token.*--token"):
        call_command("simulate_agent", base_url=live_server.url, token="cw_not-a-real-token", project="sim-bad",
                     loops=1, interval=0, stdout=StringIO())
    assert not AgentSession.objects.filter(project__slug="sim-bad").exists()


@pytest.mark.django_db(transaction=True)
def test_simulate_agent_unknown_project_is_a_command_error(live_server) -> None:
    """A token is per project, so an unknown slug is reported as such (404), not as a token problem."""
    raw = _project_with_token("sim-known")
    with pytest.raises(CommandError, match="'sim-missing' was not found"):
        call_command("simulate_agent", base_url=live_server.url, token=raw, project="sim-missing",
                     loops=1, interval=0, stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_simulate_agent_token_of_another_project_is_a_command_error(live_server) -> None:
    """A valid token used on the wrong project is a 404, as for a project that does not exist (the server does
    not tell a token which other projects exist): the message names the project."""
    raw = _project_with_token("sim-mine")
    _project_with_token("sim-theirs")
    with pytest.raises(CommandError, match="'sim-theirs' was not found"):
        call_command("simulate_agent", base_url=live_server.url, token=raw, project="sim-theirs",
                     loops=1, interval=0, stdout=StringIO())
    assert not AgentSession.objects.exists()


def test_simulate_agent_unreachable_server_is_a_command_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(CommandError, match="Cannot reach the server"):
        call_command("simulate_agent", base_url=f"http://127.0.0.1:{port}", token="cw_x", project="any",
                     loops=1, interval=0, timeout=5, stdout=StringIO())


def test_written_dates_move_to_the_year_the_text_dates_are_read_in() -> None:
    """Issue 15: the travel demo's tool calls said 2025 while the engine read "12 to 14 October" as the next
    12 October; playing a scenario moves every written date to its next occurrence."""
    scenario = next(s for s in load_scenarios("en") if s.topic == "travel")
    assert any("2025-10-12" in i.content for i in scenario.interactions)
    in_december = scenario.dated_for(date(2026, 12, 3))
    texts = " ".join(i.content for i in in_december.interactions)
    assert "2025-" not in texts and "2027-10-12" in texts and "2027-10-21" in texts
    in_august = scenario.dated_for(date(2026, 8, 1))
    assert "2026-10-12" in " ".join(i.content for i in in_august.interactions)
    on_the_day = " ".join(i.content for i in scenario.dated_for(date(2026, 10, 12)).interactions)
    assert "2026-10-12" in on_the_day and "2026-10-21" in on_the_day  # the trip starts today: this year


@pytest.mark.django_db
def test_a_loaded_demo_session_ends_now_and_its_dates_agree() -> None:
    from memory.demo.bootstrap import scenario_load

    project = project_create(name="Demo times", slug="demo-times")
    scenario = next(s for s in load_scenarios("en") if s.topic == "travel")
    session = scenario_load(project, scenario)
    times = sorted(Interaction.objects.filter(session=session).values_list("occurred_at", flat=True))
    now = datetime.now(UTC)
    assert now - times[-1] < timedelta(minutes=1)  # the last turn is "just now": last activity and times agree
    assert times[-1] - times[0] == timedelta(seconds=30 * (len(scenario.interactions) - 1))
    years = {d[:4] for m in Memory.objects.filter(session=session) for d in (m.dimensions or {}).get("dates", [])}
    assert len(years) == 1, years  # text dates and tool-call dates in one year
