"""Schema fuzzing: schemathesis sends generated requests (valid and invalid) to every operation of the
live server's own /api/schema/, as an agent token and as a logged-in curator, and checks each answer:
never a 5xx, and status, content type and body always as the schema documents them.

Operations are read from the schema at run time, so an endpoint added later is fuzzed without anyone
listing it. Examples are bounded (EXAMPLES per operation, mode and caller) and derandomised, so a run
takes about a minute and repeats itself.
"""

from __future__ import annotations

import secrets
from collections import Counter
from dataclasses import dataclass, field

import pytest
import schemathesis
import yaml
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from administration.models import ForgetJob
from curation.services import memory_update
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.projects import project_create, session_create, token_issue
from memory.engine.recall import RecallQuery, memory_recall
from memory.models import Entity, Membership, Role

from .test_maintenance_support import link, remember

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = 12
# Server errors are counted by `unexpected_server_error` below: the one documented 5xx (review without an
# LLM) is not a crash, and schemathesis' not_a_server_error would count it as one.
CHECKS = [status_code_conformance, content_type_conformance, response_schema_conformance]
DOCUMENTED_5XX = {(503, "llm_not_configured")}


def unexpected_server_error(response) -> bool:
    if response.status_code < 500:
        return False
    try:
        code = response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = None
    return (response.status_code, code) not in DOCUMENTED_5XX


@dataclass
class Tally:
    requests: int = 0
    statuses: Counter = field(default_factory=Counter)
    server_errors: int = 0
    failures: list[str] = field(default_factory=list)


@pytest.fixture
def callers(live_server_url) -> dict:
    project = project_create(name="Fuzz", slug="fuzz")
    session = session_create(project=project, title="fuzz", actor="test")
    accepted = interactions_accept(session=session, actor="test", items=[
        InteractionInput(kind="user_input", content="My budget is 5000 RMB for the whole trip")])
    first = remember(session, "The hotel near the Bund is booked for three nights")
    second = remember(session, "Breakfast at the hotel starts at seven")
    edge = link(first, second, "elaborates", confidence=0.4, needs_review=True)
    act = memory_update(project=project, actor="test", memory_id=second.pk, kind="event").act
    token = token_issue(project=project)[1]
    recalls = [memory_recall(project=project, actor="test", query=RecallQuery(text)).trace.pk
               for text in ("hotel near the Bund", "breakfast")]
    curator = get_user_model().objects.create_user("fuzzer", password=secrets.token_urlsafe(16))
    Membership.objects.create(project=project, user=curator, role=Role.CURATOR)
    browser = Client()
    browser.force_login(curator)
    csrf = secrets.token_hex(16)  # 32 characters: Django compares an unmasked token with the cookie as is
    return {
        "path_parameters": {"project_slug": "fuzz", "session_id": session.pk,
                            "interaction_id": accepted[0].interaction.pk, "memory_id": first.pk, "edge_id": edge.pk,
                            "act_id": act.pk, "entity_id": Entity.objects.filter(project=project).first().pk,
                            "recall_id": recalls[0], "other_id": recalls[1], "user_id": curator.pk,
                            "token_id": token_issue(project=project, name="spare")[0].pk,
                            "job_id": ForgetJob.objects.create(project=project, actor="test", mode="soft",
                                                               expect_memories=0, state="done").pk},
        "token": {"headers": {"Authorization": f"Bearer {token}"}, "cookies": {}},
        "curator": {"headers": {"X-CSRFToken": csrf},
                    "cookies": {"sessionid": browser.cookies["sessionid"].value, "csrftoken": csrf}},
    }


def test_the_schema_generates_without_a_warning_and_validates(tmp_path):
    """Each warning was a lie or a gap in the schema (an unresolved authenticator, a clashing enum)."""
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    schema = yaml.safe_load(target.read_text())
    assert schema["components"]["securitySchemes"]["projectToken"] == {
        **schema["components"]["securitySchemes"]["projectToken"], "type": "http", "scheme": "bearer"}
    listing = schema["paths"]["/api/projects/{project_slug}/sessions/{session_id}/interactions/"]["get"]
    page = listing["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert set(schema["components"]["schemas"][page]["required"]) >= {"count", "next", "previous", "results"}
    session = schema["components"]["schemas"]["SessionOutput"]
    assert {"interaction_count", "memory_count", "proposal_count"} <= set(session["required"])
    for path, operations in schema["paths"].items():
        if path.startswith("/api/projects/"):
            for method, operation in operations.items():
                missing = {"401", "403", "404", "429", "503"} - set(operation["responses"])
                assert not missing, (method, path, missing)


def fuzz_operation(operation, *, base_url: str, mode: GenerationMode, caller: dict, path_parameters: dict,
                   tally: Tally) -> None:
    fixed = {name: value for name, value in path_parameters.items() if f"{{{name}}}" in operation.path}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
    @given(case=operation.as_strategy(mode, path_parameters=fixed))
    def run(case) -> None:
        if caller["cookies"]:  # a person's session: drop the bearer token schemathesis made up for the scheme
            case.headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
        response = case.call(base_url=base_url, headers=caller["headers"], cookies=caller["cookies"], timeout=60)
        tally.requests += 1
        tally.statuses[response.status_code] += 1
        label = f"{operation.method.upper()} {operation.path} [{mode.value}] {response.status_code}"
        if unexpected_server_error(response):
            tally.server_errors += 1
            tally.failures.append(f"{label}: server error {response.text[:300]}")
        try:
            case.validate_response(response, checks=CHECKS)
        except (FailureGroup, AssertionError) as exc:  # the failed checks
            summary = [line for line in str(exc).strip().splitlines() if line.strip()]
            tally.failures.append(f"{label}: {' | '.join(summary[:8])}")

    run()


def test_every_operation_answers_as_its_schema_says(live_server_url, callers):
    schema = schemathesis.openapi.from_url(f"{live_server_url}/api/schema/?format=json",
                                           headers=callers["token"]["headers"], timeout=60)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 14, [op.label for op in operations]
    tally = Tally()
    for operation in operations:
        for who in ("token", "curator"):
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                fuzz_operation(operation, base_url=live_server_url, mode=mode, caller=callers[who],
                               path_parameters=callers["path_parameters"], tally=tally)
    violations = len(tally.failures) - tally.server_errors
    print(f"\nschemathesis: {len(operations)} operations, {tally.requests} requests, statuses "
          f"{dict(sorted(tally.statuses.items()))}, unexpected 5xx {tally.server_errors}, schema violations "
          f"{violations}")
    assert tally.requests >= len(operations) * 2
    assert not tally.failures, "\n".join(tally.failures[:40])
