"""Every Python block of docs/integrations.md runs, as written, against a live server.

Each block is its own program (a subprocess with CW_URL / CW_TOKEN / CW_PROJECT and a curator's
CW_USER / CW_PASSWORD set, as the page tells the reader to), so a snippet that depends on something the
page does not show fails here. The blocks share one project, created for the module and committed (no
flush between them: the server keeps its embedding space's row id, conftest.module_server_url), and
deleted afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from memory.engine.projects import project_create, token_issue
from memory.models import Membership, Role

PAGE = Path(settings.BASE_DIR) / "docs" / "integrations.md"
CURATOR_PASSWORD = "docs-curator-password-1"
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)


@pytest.fixture(scope="module")
def reader_env(module_server_url, django_db_blocker) -> Iterator[dict[str, str]]:
    with django_db_blocker.unblock():
        project = project_create(name="Docs", slug="docs")
        token = token_issue(project=project)[1]
        curator = get_user_model().objects.create_user("docs-curator", password=CURATOR_PASSWORD)
        Membership.objects.create(project=project, user=curator, role=Role.CURATOR)
    yield {**os.environ, "CW_URL": module_server_url, "CW_TOKEN": token, "CW_PROJECT": project.slug,
           "CW_USER": curator.username, "CW_PASSWORD": CURATOR_PASSWORD}
    with django_db_blocker.unblock():
        project.delete()
        curator.delete()


# The mark makes pytest-django set up the test database when this module runs alone: it sets up only the
# databases a collected test asks for, and the blocks' fixture writes there (it is not a test's own).
@pytest.mark.django_db
def test_the_page_has_python_blocks():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_block_runs(index, reader_env):
    result = subprocess.run([sys.executable, "-c", BLOCKS[index]], env=reader_env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, f"block {index} failed:\n{BLOCKS[index]}\n{result.stderr}"
    assert result.stdout.strip(), f"block {index} printed nothing"
    assert "failed" not in result.stdout, result.stdout  # an interaction the server could not process
