"""An MCP server over ContextWeaver (the official `mcp` SDK, `pip install 'contextweaver-client[mcp]'`):
any MCP-speaking agent framework remembers, recalls and forgets with no code of its own.

    contextweaver-mcp --url http://127.0.0.1:8000 --project demo --token-file var/demo_token     # stdio
    contextweaver-mcp --url http://127.0.0.1:8000 --project demo --transport http --port 8765    # HTTP

Over stdio the framework launches it and the token comes from --token-file or CONTEXTWEAVER_TOKEN. Over
streamable HTTP it holds no token: each MCP client sends its own project token
(`Authorization: Bearer cw_…`), the SDK's bearer middleware asks ContextWeaver whether it is valid for the
project, and every tool call is made with that caller's token.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .client import AsyncClient
from .errors import ApiError, ContextWeaverError, Unauthorized
from .models import Graph, Recall

# The kinds that are the agent's own acts: a `remember` of one of these right after a recall acted on it.
ACTS_ON_RECALL = ("assistant_output", "agent_thought", "tool_call", "observation")

INSTRUCTIONS = (
    "ContextWeaver is this agent's long-term memory. Call `remember` with every user message, answer, tool "
    "result or decision worth keeping (it keeps what matters and links it to what it depends on); call "
    "`recall` before answering to get the relevant memories as one ordered context, then `remember` your answer "
    "with `used`: the ids of the recalled memories it relied on; `forget_memory` when the user asks to forget "
    "something; `session_graph` to see a session's memories and their links."
)


class Tokens:
    """One API client per project token: the configured one (stdio) or each HTTP caller's."""

    def __init__(self, url: str, project: str, token: str | None) -> None:
        self.url, self.project, self.token = url, project, token
        self._clients: dict[str, AsyncClient] = {}
        self.default_sessions: dict[str, int] = {}
        self.last_recalls: dict[str, int] = {}  # each caller's latest recall, until a remember acts on it

    def client(self, token: str | None = None) -> AsyncClient:
        token = token or self.current()
        if token not in self._clients:
            self._clients[token] = AsyncClient(self.url, token, project=self.project)
        return self._clients[token]

    def current(self) -> str:
        access = get_access_token()
        if access is not None:
            return access.token
        if self.token:
            return self.token
        raise ToolError("No project token: start the server with --token-file, or send Authorization: Bearer.")


class ProjectTokenVerifier:
    """The SDK's TokenVerifier: a bearer token is valid when ContextWeaver accepts it for the project."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            await self.tokens.client(token).sessions()
        except (Unauthorized, ApiError) as error:
            if isinstance(error, Unauthorized) or error.status in (403, 404):
                return None
            raise
        return AccessToken(token=token, client_id=f"project:{self.tokens.project}", scopes=[])


async def _call(action: Callable[[], Awaitable[Any]]) -> Any:
    """ContextWeaver's errors as tool errors the agent can read (the API's own message)."""
    try:
        return await action()
    except ContextWeaverError as error:
        raise ToolError(str(error)) from error


def build_server(tokens: Tokens, *, session_title: str, auth: AuthSettings | None = None) -> MCPServer:
    server = MCPServer(name="contextweaver", instructions=INSTRUCTIONS, auth=auth,
                       token_verifier=ProjectTokenVerifier(tokens) if auth else None)

    async def session_of(session_id: int | None) -> int:
        if session_id is not None:
            return session_id
        token = tokens.current()
        if token not in tokens.default_sessions:
            made = await _call(lambda: tokens.client(token).create_session(
                title=session_title, metadata={"via": "mcp"}))
            tokens.default_sessions[token] = made.id
        return tokens.default_sessions[token]

    @server.tool(description="Store one interaction (a user message, an answer, a tool result, a decision) in "
                             "long-term memory. It is kept only if it matters, and linked to what it depends on. "
                             "After a `recall`, your next answer, thought, tool call or observation is linked to "
                             "what that recall returned (its recall_id is sent along); pass `used` with the ids of "
                             "the recalled memories you actually relied on, and it is linked to exactly those.")
    async def remember(content: str, kind: str = "user_input", session_id: int | None = None,
                       used: list[int] | None = None) -> dict[str, Any]:
        """kind: user_input, assistant_output, agent_thought, tool_call, tool_result, observation or system.
        Without session_id, one session per token is started and reused. used: memory ids (from `recall`)
        this interaction relied on."""
        target = await session_of(session_id)
        token = tokens.current()
        recall_id = tokens.last_recalls.get(token) if used or kind in ACTS_ON_RECALL else None
        accepted = await _call(lambda: tokens.client(token).send(target, kind, content, recall_id=recall_id,
                                                                 used=used or (), wait=True))
        if recall_id is not None:
            tokens.last_recalls.pop(token, None)  # one act per recall: later ones did not necessarily use it
        return {"session_id": target, "interaction_id": accepted.id, "status": accepted.status,
                "memory_ids": accepted.memory_ids, "reason": accepted.reason, "recall_id": recall_id}

    @server.tool(description="Recall what is relevant to a query: the memories it needs, with what they depend "
                             "on, told in order as one context to put in the prompt.")
    async def recall(query: str, k: int = 8, session_id: int | None = None,
                     preset: str | None = None) -> dict[str, Any]:
        """preset: vector, hybrid or ripple (default: the project's). Without session_id: the whole project."""
        answer: Recall = await _call(lambda: tokens.client().recall(query, k=k, session_id=session_id, preset=preset))
        tokens.last_recalls[tokens.current()] = answer.recall_id
        return {"recall_id": answer.recall_id, "context": answer.context,
                "memories": [{"id": hit.memory.id, "rank": hit.rank, "score": round(hit.score, 4),
                              "kind": hit.memory.kind, "status": hit.memory.status, "content": hit.memory.content}
                             for hit in answer.memories]}

    @server.tool(description="Forget one memory: it is no longer recalled or shown (people with the admin role "
                             "may later delete it for good). Safe to repeat.")
    async def forget_memory(memory_id: int) -> dict[str, Any]:
        done = await _call(lambda: tokens.client().forget_memory(memory_id))
        return {"memory_id": done.memory_id, "status": done.status, "already": done.already}

    @server.tool(description="A session's memory graph: its memories (labels, kinds, statuses) and the typed "
                             "dependencies between them.")
    async def session_graph(session_id: int | None = None, around: int | None = None,
                            limit: int = 200) -> dict[str, Any]:
        """around: only the neighbourhood of that memory. Without session_id: this server's own session."""
        target = await session_of(session_id)
        graph: Graph = await _call(lambda: tokens.client().graph(target, around=around, limit=limit))
        return {"session": {"id": graph.session.id, "title": graph.session.title},
                "memories": [{"id": m.id, "label": m.label, "kind": m.kind, "status": m.status}
                             for m in graph.memories],
                "edges": [{"id": e.id, "source_id": e.source_id, "target_id": e.target_id, "relation": e.relation,
                           "status": e.status} for e in graph.edges],
                "truncated": graph.truncated, "total_memories": graph.total_memories}

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="contextweaver-mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("CONTEXTWEAVER_URL", "http://127.0.0.1:8000"),
                        help="ContextWeaver's root URL (CONTEXTWEAVER_URL)")
    parser.add_argument("--project", default=os.environ.get("CONTEXTWEAVER_PROJECT"),
                        help="Project slug (CONTEXTWEAVER_PROJECT)")
    parser.add_argument("--token-file", help="File holding the project token (else CONTEXTWEAVER_TOKEN)")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address to listen on")
    parser.add_argument("--port", type=int, default=8765, help="HTTP: port to listen on")
    parser.add_argument("--session-title", default="MCP session", help="Title of the session tools use by default")
    args = parser.parse_args(argv)
    if not args.project:
        parser.error("--project (or CONTEXTWEAVER_PROJECT) is required")
    token = Path(args.token_file).read_text().strip() if args.token_file else os.environ.get("CONTEXTWEAVER_TOKEN")
    if args.transport == "stdio":
        if not token:
            parser.error("stdio needs the project token: --token-file or CONTEXTWEAVER_TOKEN")
        build_server(Tokens(args.url, args.project, token), session_title=args.session_title).run("stdio")
        return
    public = f"http://{args.host}:{args.port}/mcp"
    auth = AuthSettings(issuer_url=args.url, resource_server_url=public, validate_token_resource=False)
    server = build_server(Tokens(args.url, args.project, None), session_title=args.session_title, auth=auth)
    print(f"MCP over streamable HTTP at {public} (clients send Authorization: Bearer <project token>)",
          file=sys.stderr, flush=True)
    server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
