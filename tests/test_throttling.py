"""Rate limits: per token, per person, failed token checks per address (429 + Retry-After), and the
login lockout after repeated wrong passwords (django-axes)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import override_settings
from rest_framework.test import APIClient

from memory.engine.projects import token_issue
from memory.models import Membership, Role

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password-1"


def rates(**values: str) -> override_settings:
    merged = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **values}
    return override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": merged})


@pytest.fixture(autouse=True)
def fresh_counts():
    cache.clear()
    yield
    cache.clear()


def assert_throttled(response) -> None:
    assert response.status_code == 429, response.content
    assert int(response["Retry-After"]) >= 1
    assert response.json()["error"]["code"] == "throttled"


def test_a_token_over_its_rate_gets_429_and_another_token_does_not(api, project):
    with rates(token="3/min"):
        for _ in range(3):
            assert api.get("/api/projects/travel/sessions/").status_code == 200
        assert_throttled(api.get("/api/projects/travel/sessions/"))
        other = APIClient()
        other.credentials(HTTP_AUTHORIZATION=f"Bearer {token_issue(project=project)[1]}")
        assert other.get("/api/projects/travel/sessions/").status_code == 200


def test_a_person_over_their_rate_gets_429(project):
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    Membership.objects.create(project=project, user=user, role=Role.VIEWER)
    client = APIClient()
    client.force_login(user)
    with rates(person="2/min"):
        assert client.get("/api/projects/travel/sessions/").status_code == 200
        assert client.get("/api/projects/travel/sessions/").status_code == 200
        assert_throttled(client.get("/api/projects/travel/sessions/"))


def test_guessing_tokens_is_slowed_to_the_failure_rate(api, project):
    guesser = APIClient()
    guesser.credentials(HTTP_AUTHORIZATION="Bearer cw_guess")
    with rates(auth_failure="5/min"):
        answers = [guesser.get("/api/projects/travel/sessions/").status_code for _ in range(8)]
        assert answers == [401] * 5 + [429] * 3
        assert_throttled(guesser.get("/api/projects/travel/sessions/"))
        # A token that checks out is still accepted from there (only failures are throttled), so one
        # misconfigured agent does not lock out every agent behind the same address.
        assert api.get("/api/projects/travel/sessions/").status_code == 200
        assert api.get("/api/projects/travel/sessions/", REMOTE_ADDR="10.0.0.2").status_code == 200


def test_repeated_wrong_passwords_lock_the_login_out(client, settings):
    get_user_model().objects.create_user("grace", password=PASSWORD)
    limit = settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        response = client.post("/login/", {"username": "grace", "password": "wrong-guess"})
        assert response.status_code == 200  # the form again, with its error
    locked = client.post("/login/", {"username": "grace", "password": "wrong-guess"})
    assert locked.status_code == 429
    # Locked out: even the right password does not log in now.
    still = client.post("/login/", {"username": "grace", "password": PASSWORD})
    assert still.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_correct_login_resets_the_failure_count(client, settings):
    get_user_model().objects.create_user("alan", password=PASSWORD)
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post("/login/", {"username": "alan", "password": "wrong-guess"})
    assert client.post("/login/", {"username": "alan", "password": PASSWORD}).status_code == 302
    client.logout()
    assert client.post("/login/", {"username": "alan", "password": "wrong-guess"}).status_code == 200
