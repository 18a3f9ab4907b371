"""The API's answer when the database goes away mid-request: a 503 that tells the client to retry with its key."""

from __future__ import annotations

import pytest
from django.db import InterfaceError, OperationalError
from procrastinate.exceptions import ConnectorException

from memory.api.errors import exception_handler


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
