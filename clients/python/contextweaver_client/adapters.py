"""A framework's conversation as interactions, linked by the framework's own ids: nobody writes links by hand.

An agent framework already knows what depends on what (a tool result names its tool call), so these read
OpenAI chat-completions messages, OpenAI Responses items and LangChain / LangGraph messages and make
`NewInteraction`s with kind, content, `external_id` and `links` filled in; `send_*` sends them in order
(`Client.send_many`: one request per 100). Each link is causal:

- a tool result depends on its tool call (`tool_call_id` / `call_id`);
- every assistant step depends on what its turn answers: the tool results since the previous assistant
  turn, else the latest user turn; a tool call or an answer also depends on its turn's thought (reasoning,
  or the assistant's text beside its tool calls).

External ids are the framework's where it has them (a tool call's id, a LangChain message's `.id`, a
Responses item's `id`); a tool result's is `<call id>:result`; anything else gets
`<source>:<position>:<hash of kind and content>`. So sending the same conversation again, or again with
more turns, stores only what is new (the rest answers `duplicate=True`); pass `start`, the position of the
first message, when sending only the conversation's tail. Metadata says where an interaction came from
(`via`, `role`, `tool`) and never carries volatile ids, since a resend must match what was stored.

    from contextweaver_client.adapters import send_chat_completions
    accepted = send_chat_completions(cw, session.id, messages, wait=True)      # await it with an AsyncClient

`recall_id` / `used` (the recall the agent answered from, the memory ids it used) go on the assistant steps
after the last user turn: what was generated from that recall.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .models import JSON, Accepted, Link, NewInteraction

MAX_CONTENT_BYTES = 32 * 1024  # the server's default limit (MEMORY["MAX_CONTENT_BYTES"]): longer text is cut
EXTERNAL_ID_MAX = 200
NO_OUTPUT = "(no output)"  # a tool result needs some content; the filter drops this one and links bridge over it

SYSTEM, USER, THOUGHT, CALL, RESULT, ANSWER = "system", "user", "thought", "call", "result", "answer"
KINDS = {SYSTEM: "system", USER: "user_input", THOUGHT: "agent_thought", CALL: "tool_call", RESULT: "tool_result",
         ANSWER: "assistant_output"}
ASSISTANT_STEPS = (THOUGHT, CALL, ANSWER)


class Sender(Protocol):
    """`Client` or `AsyncClient`: whatever has `send_many`."""

    def send_many(self, session_id: int, interactions: Iterable[NewInteraction], *, batch_size: int = ...,
                  wait: bool = ...) -> Any: ...


@dataclass(frozen=True)
class Step:
    """One thing said or done, before linking: `call_id` names the call a result answers."""

    role: str  # SYSTEM, USER, THOUGHT, CALL, RESULT or ANSWER
    content: str
    external_id: str
    metadata: JSON = field(default_factory=dict)
    call_id: str | None = None


# The three frameworks --------------------------------------------------------------------------------------


def chat_completions_interactions(messages: Iterable[Any], *, start: int = 0, recall_id: int | None = None,
                                  used: Sequence[int] = ()) -> list[NewInteraction]:
    """OpenAI chat-completions messages (dicts or the SDK's message objects: role system / developer / user /
    assistant / tool; an assistant's `tool_calls` with ids; a tool message's `tool_call_id`) as linked
    interactions."""
    steps = [step for position, message in enumerate(messages, start)
             for step in _chat_steps(_as_dict(message), position)]
    return weave(steps, recall_id=recall_id, used=used)


def responses_interactions(items: Iterable[Any], *, start: int = 0, recall_id: int | None = None,
                           used: Sequence[int] = ()) -> list[NewInteraction]:
    """OpenAI Responses API input or output items (dicts or the SDK's objects): messages, `function_call` /
    `custom_tool_call` (named by `call_id`), their `*_output` items (naming the `call_id`) and `reasoning`
    (its summary, or its text) as linked interactions. Other items (web search, computer use…) are skipped."""
    steps = [step for position, item in enumerate(items, start)
             for step in _responses_steps(_as_dict(item), position)]
    return weave(steps, recall_id=recall_id, used=used)


def langchain_interactions(messages: Iterable[Any], *, start: int = 0, recall_id: int | None = None,
                           used: Sequence[int] = ()) -> list[NewInteraction]:
    """LangChain / LangGraph messages (HumanMessage, AIMessage with `tool_calls`, ToolMessage with
    `tool_call_id`, SystemMessage; anything `convert_to_messages` takes) as linked interactions; a message's
    `.id`, when set (LangGraph's `add_messages` sets one), is its external id."""
    steps = [step for position, message in enumerate(_langchain_messages(messages), start)
             for step in _langchain_steps(message, position)]
    return weave(steps, recall_id=recall_id, used=used)


def send_chat_completions(client: Sender, session_id: int, messages: Iterable[Any], *, start: int = 0,
                          recall_id: int | None = None, used: Sequence[int] = (),
                          wait: bool = False) -> list[Accepted] | Awaitable[list[Accepted]]:
    """Send an OpenAI chat-completions conversation (`chat_completions_interactions`), in order."""
    items = chat_completions_interactions(messages, start=start, recall_id=recall_id, used=used)
    return client.send_many(session_id, items, wait=wait)


def send_responses(client: Sender, session_id: int, items: Iterable[Any], *, start: int = 0,
                   recall_id: int | None = None, used: Sequence[int] = (),
                   wait: bool = False) -> list[Accepted] | Awaitable[list[Accepted]]:
    """Send OpenAI Responses items (`responses_interactions`), in order."""
    interactions = responses_interactions(items, start=start, recall_id=recall_id, used=used)
    return client.send_many(session_id, interactions, wait=wait)


def send_langchain(client: Sender, session_id: int, messages: Iterable[Any], *, start: int = 0,
                   recall_id: int | None = None, used: Sequence[int] = (),
                   wait: bool = False) -> list[Accepted] | Awaitable[list[Accepted]]:
    """Send LangChain / LangGraph messages (`langchain_interactions`), in order."""
    items = langchain_interactions(messages, start=start, recall_id=recall_id, used=used)
    return client.send_many(session_id, items, wait=wait)


# Linking: one set of rules for every framework ---------------------------------------------------------------


class _Turns:
    """What each step depends on, as the conversation goes (the rules of the module's docstring)."""

    def __init__(self) -> None:
        self.user: str | None = None  # the latest user turn
        self.results: list[str] = []  # tool results since the previous assistant turn
        self.basis: list[str] = []  # what the current assistant turn answers
        self.thought: str | None = None  # the current assistant turn's thought
        self.in_turn = False

    def parents(self, step: Step) -> list[str]:
        if step.role == USER:
            self.user, self.results, self.in_turn = step.external_id, [], False
            return []
        if step.role == RESULT:
            self.results.append(step.external_id)
            self.in_turn = False
            return [step.call_id] if step.call_id else []
        if step.role not in ASSISTANT_STEPS:
            return []
        if not self.in_turn:
            self.basis = self.results or ([self.user] if self.user else [])
            self.results, self.thought, self.in_turn = [], None, True
        parents = list(self.basis)
        if step.role == THOUGHT:
            self.thought = step.external_id
        elif self.thought:
            parents.append(self.thought)
        return parents


def weave(steps: Sequence[Step], *, recall_id: int | None = None, used: Sequence[int] = ()) -> list[NewInteraction]:
    """Steps as interactions with their links; `recall_id` / `used` on the assistant steps after the last user
    turn. Also for adapters of other frameworks: make `Step`s, weave them."""
    turns = _Turns()
    last_user = max((i for i, step in enumerate(steps) if step.role == USER), default=-1)
    made = []
    for index, step in enumerate(_unique(steps)):
        links = tuple(Link(external_id=parent) for parent in dict.fromkeys(turns.parents(step))
                      if parent != step.external_id)
        item = NewInteraction(KINDS[step.role], step.content, step.metadata or None, external_id=step.external_id,
                              links=links)
        if index > last_user and step.role in ASSISTANT_STEPS and (recall_id is not None or used):
            item = replace(item, recall_id=recall_id, used=tuple(used))
        made.append(item)
    return made


def _unique(steps: Sequence[Step]) -> list[Step]:
    """The steps with an id seen before in the list renamed `<id>#<n>` (some OpenAI-compatible servers number
    every turn's tool calls from call_0 again): the server refuses an id twice in a batch, and a result
    naming a repeated call id answers its latest call."""
    seen: dict[str, int] = {}
    latest: dict[str, str] = {}
    renamed = []
    for step in steps:
        if step.call_id:
            step = replace(step, call_id=latest.get(step.call_id, step.call_id))
        seen[step.external_id] = seen.get(step.external_id, 0) + 1
        if seen[step.external_id] > 1:
            latest[step.external_id] = f"{step.external_id}#{seen[step.external_id]}"
            step = replace(step, external_id=latest[step.external_id])
        renamed.append(step)
    return renamed


# OpenAI chat completions -------------------------------------------------------------------------------------

CHAT = "openai-chat"


def _chat_steps(message: JSON, position: int) -> list[Step]:
    role = message.get("role", "")
    text = _text(message.get("content")) or _text(message.get("refusal"))
    if role in ("system", "developer", "user"):
        kind = USER if role == "user" else SYSTEM
        return [_step(kind, text, CHAT, position, None, role=role)] if text.strip() else []
    if role in ("tool", "function"):
        call_id = message.get("tool_call_id") or None
        own = f"{call_id}:result" if call_id else None
        return [_step(RESULT, text or NO_OUTPUT, CHAT, position, own, role=role, tool=message.get("name"),
                      call_id=call_id)]
    if role != "assistant":
        return []
    calls = [_chat_call(call) for call in message.get("tool_calls") or ()]
    if message.get("function_call"):  # the legacy single call, with no id
        calls.append(_chat_call({"function": message["function_call"]}))
    thought = _text(message.get("reasoning_content"))  # what some OpenAI-compatible servers return
    return _assistant_steps(CHAT, position, None, thought, text, calls, role="assistant")


def _chat_call(call: JSON) -> tuple[str | None, str, str]:
    """(id, name, arguments) of a tool call: a function's, or a custom tool's input."""
    body = call.get("function") or call.get("custom") or {}
    arguments = body.get("arguments", body.get("input", ""))
    return call.get("id") or None, str(body.get("name", "tool")), _arguments(arguments)


# OpenAI Responses --------------------------------------------------------------------------------------------

RESPONSES = "openai-responses"
CALL_ITEMS = {"function_call": "arguments", "custom_tool_call": "input"}
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")


def _responses_steps(item: JSON, position: int) -> list[Step]:
    kind = item.get("type") or ("message" if "role" in item else "")
    own = item.get("id") or None
    if kind == "message":
        return _chat_like(item, position, own)
    if kind in CALL_ITEMS:
        call_id = item.get("call_id") or own
        content = f"{item.get('name', 'tool')}({_arguments(item.get(CALL_ITEMS[kind], ''))})"
        return [_step(CALL, content, RESPONSES, position, call_id, role="assistant", tool=item.get("name"))]
    if kind in OUTPUT_ITEMS:
        call_id = item.get("call_id") or None
        return [_step(RESULT, _text(item.get("output")) or NO_OUTPUT, RESPONSES, position,
                      f"{call_id}:result" if call_id else None, role="tool", call_id=call_id)]
    if kind == "reasoning":
        text = _text(item.get("summary")) or _text(item.get("content"))
        return [_step(THOUGHT, text, RESPONSES, position, own, role="assistant")] if text.strip() else []
    return []


def _chat_like(item: JSON, position: int, own: str | None) -> list[Step]:
    role, text = item.get("role", ""), _text(item.get("content"))
    if not text.strip():
        return []
    kind = {"user": USER, "assistant": ANSWER}.get(role, SYSTEM)
    return [_step(kind, text, RESPONSES, position, own, role=role)]


# LangChain / LangGraph ---------------------------------------------------------------------------------------

LANGCHAIN = "langchain"
LANGCHAIN_ROLES = {"human": "user", "user": "user", "ai": "assistant", "AIMessageChunk": "assistant",
                   "assistant": "assistant", "system": "system", "developer": "system", "tool": "tool",
                   "function": "tool"}


def _langchain_messages(messages: Iterable[Any]) -> list[Any]:
    """Message objects as they are; anything else (dicts, (role, text) pairs, strings) through LangChain's own
    `convert_to_messages`, imported only then (langchain-core is an optional dependency)."""
    given = list(messages)
    if all(hasattr(m, "type") and hasattr(m, "content") for m in given):
        return given
    try:
        from langchain_core.messages import convert_to_messages
    except ImportError as error:  # pragma: no cover - langgraph brings langchain-core
        raise ImportError("Messages that are not LangChain message objects need langchain-core: "
                          "pip install 'contextweaver-client[langgraph]'") from error
    return list(convert_to_messages(given))


def _langchain_steps(message: Any, position: int) -> list[Step]:
    kind = getattr(message, "type", "")
    role = LANGCHAIN_ROLES.get(getattr(message, "role", kind) if kind == "chat" else kind, "")
    own = getattr(message, "id", None) or None
    content = getattr(message, "content", "")
    text = _text(content)
    if role in ("user", "system"):
        return [_step(USER if role == "user" else SYSTEM, text, LANGCHAIN, position, own, role=role)] \
            if text.strip() else []
    if role == "tool":
        call_id = getattr(message, "tool_call_id", None) or None
        return [_step(RESULT, text or NO_OUTPUT, LANGCHAIN, position, f"{call_id}:result" if call_id else own,
                      role="tool", tool=getattr(message, "name", None), call_id=call_id)]
    if role != "assistant":
        return []
    calls = [(call.get("id") or None, str(call.get("name", "tool")), _arguments(call.get("args", {})))
             for call in getattr(message, "tool_calls", None) or ()]
    return _assistant_steps(LANGCHAIN, position, own, _reasoning(content), text, calls, role="assistant")


def _reasoning(content: Any) -> str:
    """The reasoning blocks of a message's content (LangChain's `reasoning`, Anthropic's `thinking`)."""
    if not isinstance(content, list):
        return ""
    return "\n".join(str(block.get("reasoning") or block.get("thinking") or "") for block in content
                     if isinstance(block, Mapping) and block.get("type") in ("reasoning", "thinking")).strip()


# Shared pieces -----------------------------------------------------------------------------------------------


def _assistant_steps(source: str, position: int, own: str | None, reasoning: str, text: str,
                     calls: list[tuple[str | None, str, str]], **metadata: Any) -> list[Step]:
    """One assistant message: its reasoning (a thought), its text (a thought beside tool calls, else the
    answer) and its tool calls. The message's own id names its text; the others get suffixes of it."""
    base = own or _derived(source, position, "assistant", text + "".join(c[1] + c[2] for c in calls))
    steps = []
    if reasoning.strip():
        steps.append(_step(THOUGHT, reasoning, source, position, f"{base}:reasoning", **metadata))
    if text.strip():
        steps.append(_step(THOUGHT if calls else ANSWER, text, source, position, base, **metadata))
    for index, (call_id, name, arguments) in enumerate(calls):
        steps.append(_step(CALL, f"{name}({arguments})", source, position, call_id or f"{base}:call{index}",
                           **{**metadata, "tool": name}))
    return steps


def _step(what: str, content: str, source: str, position: int, own: str | None, *, call_id: str | None = None,
          **metadata: Any) -> Step:
    """A step of `what` (USER, CALL…), its external id its own or derived; `metadata`: role, tool."""
    content = _bounded_text(content)
    external_id = _bounded_id(own) if own else _derived(source, position, what, content)
    kept = {"via": source, **{name: value for name, value in metadata.items() if value}}
    return Step(what, content, external_id, kept, call_id=_bounded_id(call_id) if call_id else None)


def _derived(source: str, position: int, role: str, content: str) -> str:
    """An external id for what the framework gave none: the same message at the same place is the same id."""
    digest = hashlib.sha256(f"{role}\x1f{content}".encode()).hexdigest()[:16]
    return f"{source}:{position}:{digest}"


def _bounded_id(value: str) -> str:
    """A framework id as it is, or (over the server's 200 characters) its hash: links name it the same way."""
    value = str(value)
    if len(value) <= EXTERNAL_ID_MAX:
        return value
    return f"{value[:100]}#{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def _bounded_text(text: str) -> str:
    """Text within the server's content limit, cut on a character boundary (the same cut every time)."""
    data = text.encode()
    if len(data) <= MAX_CONTENT_BYTES:
        return text
    return data[:MAX_CONTENT_BYTES - 8].decode(errors="ignore") + " […]"


def _text(content: Any) -> str:
    """The text of a content field: a string, or a list of parts / blocks (text, input_text, output_text,
    summary_text, reasoning_text, refusal); images, audio and files are left out."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return str(content.get("text") or content.get("refusal") or "")
    if isinstance(content, list):
        parts = [_text(part) if isinstance(part, (str, Mapping)) else "" for part in content
                 if not (isinstance(part, Mapping) and part.get("type") in ("reasoning", "thinking"))]
        return "\n".join(part for part in parts if part)
    return str(content)


def _arguments(arguments: Any) -> str:
    """A call's arguments as compact text: JSON as given (a string), or dumped (a dict)."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "), default=str)


def _as_dict(item: Any) -> JSON:
    """A dict, or the OpenAI SDK's pydantic object as one."""
    if isinstance(item, Mapping):
        return dict(item)
    if hasattr(item, "model_dump"):
        return item.model_dump(mode="json", exclude_none=True)
    raise TypeError(f"Expected a dict or an OpenAI SDK object, got {type(item).__name__}")
