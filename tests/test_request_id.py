"""The request id (contextweaver_site/request_id.py): answered, logged, and carried into the job queued."""

from __future__ import annotations

import json
import logging

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from contextweaver_site.request_id import HEADER, JsonFormatter, RequestIdFilter, bound
from memory.tasks import process_interaction

from .conftest import interactions_url

pytestmark = pytest.mark.django_db
QUEUE = {**settings.MEMORY, "INGEST_MODE": "queue"}


def test_each_answer_carries_an_id_and_a_plausible_one_is_kept(client):
    made = client.get("/healthz")[HEADER]
    assert len(made) == 32 and made != client.get("/healthz")[HEADER]
    assert client.get("/healthz", HTTP_X_REQUEST_ID="edge-7f3a:42")[HEADER] == "edge-7f3a:42"
    replaced = client.get("/healthz", HTTP_X_REQUEST_ID="no spaces\nor newlines")[HEADER]
    assert replaced != "no spaces\nor newlines" and len(replaced) == 32


@override_settings(MEMORY=QUEUE)
def test_the_job_a_request_queued_carries_its_id(api, agent_session):
    response = api.post(interactions_url(agent_session), {"kind": "user_input", "content": "Budget is 900 EUR"},
                        format="json", HTTP_X_REQUEST_ID="agent-run-17")
    assert response.status_code == 202 and response[HEADER] == "agent-run-17"
    interaction_id = response.json()["interactions"][0]["id"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT args FROM procrastinate_jobs WHERE task_name LIKE '%%process_interaction' "
                       "AND (args->>'interaction_id')::bigint = %s", [interaction_id])
        (args,) = cursor.fetchone()
    assert json.loads(args) == {"interaction_id": interaction_id, "request_id": "agent-run-17"}


def test_the_worker_logs_under_the_id_and_json_lines_carry_it():
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    handler.addFilter(RequestIdFilter())
    logger = logging.getLogger("memory.tasks")
    logger.addHandler(handler)
    before = logger.level
    logger.setLevel(logging.INFO)
    try:
        process_interaction(interaction_id=987654321, request_id="agent-run-18")  # gone: logged, nothing to do
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)
    (record,) = [r for r in records if "987654321" in r.getMessage()]
    assert record.request_id == "agent-run-18"
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "agent-run-18" and line["level"] == "INFO" and "987654321" in line["message"]
    with bound("outer"):
        assert RequestIdFilter().filter(record) and record.request_id == "outer"
    assert RequestIdFilter().filter(record) and record.request_id == "-"
