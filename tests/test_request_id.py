"""The request id (contextweaver_site/request_id.py): answered, logged, and carried into the job queued."""

from __future__ import annotations

import io
import json
import logging
import urllib.error
import urllib.request

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings
from uvicorn.logging import AccessFormatter

from contextweaver_site.request_id import HEADER, JsonFormatter, PrivateQueryFilter, RequestIdFilter, bound
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


# --- access logs: a query's keys, not its values ---------------------------------------------------


def _access_lines(emit) -> str:
    """What the configured access loggers (settings.LOGGING) write while `emit` runs, at level INFO."""
    stream = io.StringIO()
    handlers = list({h for name in ("uvicorn.access", "django.channels.server", "django.server")
                     for h in logging.getLogger(name).handlers if isinstance(h, logging.StreamHandler)})
    assert handlers, "settings.LOGGING configures no handler for the access loggers"
    loggers = [logging.getLogger(name) for name in ("uvicorn.access", "django.channels.server", "django.server")]
    levels = [logger.level for logger in loggers]
    streams = [h.setStream(stream) for h in handlers]
    try:
        for logger in loggers:
            logger.setLevel(logging.INFO)
        emit()
    finally:
        for handler, old in zip(handlers, streams, strict=True):
            handler.setStream(old)
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
    return stream.getvalue()


def test_access_log_lines_keep_query_keys_but_not_their_values():
    def emit() -> None:
        # uvicorn's own call (uvicorn/protocols/http/h11_impl.py), then daphne's runserver and Django's.
        logging.getLogger("uvicorn.access").info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET",
                                                 "/p/travel/recalls/?q=secretword%20one&page=2", "1.1", 200)
        logging.getLogger("django.channels.server").info(
            "HTTP %(method)s %(path)s %(status)s", {"method": "GET", "path": "/?q=secretword2", "status": 200})
        logging.getLogger("django.server").info('"%s" %s %s', "GET /p/travel/?query=secretword3 HTTP/1.1", 200, 9)

    text = _access_lines(emit)
    assert "secretword" not in text
    assert '"GET /p/travel/recalls/?q=...&page=2 HTTP/1.1" 200' in text
    assert "HTTP GET /?q=... 200" in text and "/p/travel/?query=... HTTP/1.1" in text
    # uvicorn's formatter (its default config, when LOGGING does not apply) still reads the filtered record.
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5000", "GET", "/?text=secretword&q=&%71=secret", "1.1", 200), None)
    assert PrivateQueryFilter().filter(record)
    line = AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s', use_colors=False).format(record)
    assert line == '127.0.0.1:5000 - "GET /?text=...&q=...&...=... HTTP/1.1" 200 OK'  # %71 is q, encoded


def test_a_real_servers_access_log_has_no_search_text(django_db_setup, django_db_blocker, tmp_path):
    """uvicorn at --log-level info, as deployed: the access line of a search is there, its words are not."""
    from .test_live_support import start_server, stop_process

    with django_db_blocker.unblock():
        server = start_server(tmp_path, wait_for_listener=False)
    try:
        for path in ("/login/?q=secretword&page=2", "/api/projects/travel/recalls/?q=secretword"):
            try:
                urllib.request.urlopen(server.origin + path, timeout=30).read()
            except urllib.error.HTTPError:
                pass  # the API answers 401 without a token: logged all the same
    finally:
        stop_process(server.process)
    log = server.log_text()
    assert '"GET /login/?q=...&page=2 HTTP/1.1" 200' in log, log[-2000:]
    assert '"GET /api/projects/travel/recalls/?q=... HTTP/1.1" 401' in log, log[-2000:]
    assert "secretword" not in log
