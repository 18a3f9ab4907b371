"""The API's answer when the database goes away mid-request: a 503 that tells the client to retry with its key."""

from __future__ import annotations

import pytest
from django.db import InterfaceError, OperationalError
from procrastinate.exceptions import ConnectorException

from contextweaver_site.http.errors import exception_handler


@pytest.mark.parametrize("error", [OperationalError("server closed the connection unexpectedly"),
                                   InterfaceError("connection already closed"),
                                   ConnectorException("queueing the job failed")])
def test_database_outages_are_503_with_retry_after(error):
    response = exception_handler(error, {"view": None})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    body = response.data["error"]
    assert body["code"] == "database_unavailable"
    assert "same idempotency key" in body["message"] and "nothing was written" not in body["message"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/projects/travel/edges/-1/", "/api/nothing-here/"])
def test_an_unknown_api_url_is_a_json_404(client, path):
    answer = client.get(path)
    assert answer.status_code == 404 and answer["Content-Type"] == "application/json"
    assert answer.json()["error"]["code"] == "not_found"


@pytest.mark.django_db
def test_an_unknown_page_is_still_the_html_404(client):
    answer = client.get("/no-such-page/")
    assert answer.status_code == 404 and answer["Content-Type"].startswith("text/html")
