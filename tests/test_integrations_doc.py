"""Every Python block of docs/integrations.md runs, as written, against a live server.

Each block is its own program (a subprocess with CW_URL / CW_TOKEN / CW_PROJECT set, as the page tells
the reader to), so a snippet that depends on something the page does not show fails here. Only the
first block has the server process interactions (conftest.module_server_url says why).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from memory.engine.projects import project_create, token_issue

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = Path(settings.BASE_DIR) / "docs" / "integrations.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)


def test_the_page_has_python_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_block_runs(index, module_server_url):
    project = project_create(name="Docs", slug="docs")
    env = {**os.environ, "CW_URL": module_server_url, "CW_TOKEN": token_issue(project=project)[1],
           "CW_PROJECT": project.slug}
    result = subprocess.run([sys.executable, "-c", BLOCKS[index]], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, f"block {index} failed:\n{BLOCKS[index]}\n{result.stderr}"
    assert result.stdout.strip(), f"block {index} printed nothing"
