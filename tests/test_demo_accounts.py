"""The demo's accounts: one per role, passwords kept in var/ across reruns, the admin able to open /admin/."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.demo.bootstrap import demo_logins, demo_project
from memory.models import Membership

pytestmark = pytest.mark.django_db


def test_one_account_per_role_with_the_same_passwords_on_a_rerun(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    project = demo_project()
    first = demo_logins(project)
    assert [login.role for login in first] == ["admin", "curator", "viewer"]
    assert len({login.username for login in first}) == len({login.password for login in first}) == 3
    assert demo_logins(project) == first  # idempotent: the same accounts and passwords
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo_password", "demo_password_curator",
                                                          "demo_password_viewer"]
    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {login.username: login.role for login in first}

    for login, admin_page in zip(first, (200, 302, 302), strict=True):
        client = Client()
        response = client.post("/login/", {"username": login.username, "password": login.password})
        assert response.status_code == 302, login.username  # the printed password logs in
        assert client.get("/admin/").status_code == admin_page, login.role  # only the admin opens /admin/
        assert client.get(f"/p/{project.slug}/").status_code == 200
