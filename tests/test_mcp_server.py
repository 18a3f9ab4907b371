"""The MCP server (clients/python/contextweaver_client/mcp_server.py) with the `mcp` SDK's own client, over
stdio and over streamable HTTP, against a live ContextWeaver server (conftest.module_server_url: only the
first test has it process interactions)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2 as httpx
import pytest
from django.conf import settings
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memory.engine.projects import project_create, token_issue
from memory.models import Memory, MemoryStatus

from .test_live_support import free_port

pytestmark = pytest.mark.django_db(transaction=True)
TOOLS = {"remember", "recall", "forget_memory", "session_graph"}


@pytest.fixture
def token(module_server_url) -> str:
    return token_issue(project=project_create(name="MCP", slug="mcp"))[1]


# The MCP host entry docs/integrations.md shows (its only JSON block): the stdio test launches exactly that.
DOC_PAGE = (Path(settings.BASE_DIR) / "docs" / "integrations.md").read_text(encoding="utf-8")
DOC_JSON = re.search(r"^```json\n(.*?)^```", DOC_PAGE, flags=re.S | re.M).group(1)
DOC_ENTRY = json.loads(DOC_JSON)["mcpServers"]["contextweaver"]


def stdio_server(url: str, token: str) -> StdioServerParameters:
    """The documented entry, pointed at this test's server, project and token: its command is the console
    script `make setup` installed beside this Python."""
    assert set(DOC_ENTRY["env"]) == {"CONTEXTWEAVER_TOKEN"}
    swap = {"http://127.0.0.1:8000": url, "demo": "mcp"}
    return StdioServerParameters(command=str(Path(sys.executable).with_name(Path(DOC_ENTRY["command"]).name)),
                                 args=[swap.get(arg, arg) for arg in DOC_ENTRY["args"]],
                                 env={"CONTEXTWEAVER_TOKEN": token, "PATH": os.environ.get("PATH", "")})


@contextmanager
def http_server(url: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "contextweaver_client.mcp_server", "--url", url, "--project",
                                "mcp", "--transport", "http", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    endpoint = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(endpoint, timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the MCP server did not start: {process.stderr.read()}") from None
                time.sleep(0.2)
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=20)


def http_transport(endpoint: str, token: str):
    return streamable_http_client(endpoint, http_client=httpx.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(60, read=300)))


async def call(client: Client, tool: str, **arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def test_an_agent_remembers_recalls_and_forgets_over_stdio_and_http(module_server_url, token):
    async def over_stdio():
        async with Client(stdio_server(module_server_url, token)) as client:
            assert TOOLS <= {tool.name for tool in (await client.list_tools()).tools}
            first = await call(client, "remember", content="I am allergic to peanuts, so no satay please")
            second = await call(client, "remember", content="Book the ryokan near Gion for two nights in May")
            assert first["status"] == second["status"] == "kept" and first["session_id"] == second["session_id"]
            found = await call(client, "recall", query="what food must be avoided?", k=3)
            graph = await call(client, "session_graph")
            return first, found, graph

    first, found, graph = asyncio.run(over_stdio())
    peanuts = first["memory_ids"][0]
    assert found["memories"][0]["id"] == peanuts and "peanuts" in found["context"]
    assert {m["id"] for m in graph["memories"]} == set(Memory.objects.filter(session_id=first["session_id"])
                                                       .values_list("pk", flat=True))

    async def over_http(endpoint: str):
        async with Client(http_transport(endpoint, token)) as client:
            assert TOOLS <= {tool.name for tool in (await client.list_tools()).tools}
            forgotten = await call(client, "forget_memory", memory_id=peanuts)
            again = await call(client, "recall", query="what food must be avoided?", k=3)
            missing = await client.call_tool("forget_memory", {"memory_id": 999999})
            return forgotten, again, missing

    with http_server(module_server_url) as endpoint:
        forgotten, again, missing = asyncio.run(over_http(endpoint))
    assert forgotten == {"memory_id": peanuts, "status": "forgotten", "already": False}
    assert Memory.objects.get(pk=peanuts).status == MemoryStatus.FORGOTTEN
    assert peanuts not in [m["id"] for m in again["memories"]]
    assert missing.is_error and "404" in missing.content[0].text and "999999" in missing.content[0].text


def test_the_http_server_refuses_callers_without_a_valid_project_token(module_server_url, token):
    with http_server(module_server_url) as endpoint:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        assert httpx.post(endpoint, json=body, headers=headers, timeout=30).status_code == 401
        wrong = httpx.post(endpoint, json=body, headers={**headers, "Authorization": "Bearer cw_wrong"}, timeout=30)
        assert wrong.status_code == 401

        async def listed():
            async with Client(http_transport(endpoint, token)) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

        assert TOOLS <= asyncio.run(listed())
