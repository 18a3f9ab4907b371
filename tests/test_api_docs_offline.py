"""Swagger UI works without internet: its assets are served by us, not a CDN."""

import re

import pytest
from django.contrib.auth import get_user_model


@pytest.mark.django_db
def test_swagger_ui_assets_are_self_hosted(client):
    user = get_user_model().objects.create_user("reader", password="pw-123456789")
    client.force_login(user)
    page = client.get("/api/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+swagger-ui[^"]*\.(?:js|css))"', page)
    assert assets, page[:500]
    assert all(a.startswith("/static/drf_spectacular_sidecar/") for a in assets), assets
    response = client.get(assets[0])
    assert response.status_code == 200
    assert b"".join(response.streaming_content if response.streaming else [response.content])
