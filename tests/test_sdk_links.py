"""Links without writing them by hand (clients/python: adapters.py, the client's links / recall_id / used,
memories at risk, the MCP server's pass-through), end to end against a live server.

Each adapter's conversation goes over real HTTP into the real write path; the tests read the edges back
through the API (`graph`) and check the ones the framework's ids declared (origin `agent`) and the ones a
recall's use made (origin `use`). The server is the module's own (conftest.module_server_url), its embedding
space row put back before each test (test_langgraph_store.server_embedding_space), so every test may process.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator

import pytest
from contextweaver_client import (
    Accepted,
    AsyncClient,
    Client,
    Conflict,
    Link,
    Login,
    NewInteraction,
    Retry,
)
from contextweaver_client.adapters import (
    chat_completions_interactions,
    langchain_interactions,
    responses_interactions,
    send_chat_completions,
    send_langchain,
    send_responses,
)
from django.contrib.auth import get_user_model
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from mcp import Client as McpClient
from mcp.client.stdio import StdioServerParameters

from memory.engine.projects import project_create, token_issue
from memory.models import Membership, Role

from .test_langgraph_store import server_embedding_space  # noqa: F401  (autouse: every test here processes)

pytestmark = pytest.mark.django_db(transaction=True)

FAST = Retry(attempts=3, backoff=0.01, max_wait=0.05)
PASSWORD = "links-curator-password-7"

USER = "Find me a flight from Shanghai Pudong to San Francisco on 14 March, economy, window seat"
CALL_ARGS = '{"origin": "PVG", "destination": "SFO", "date": "2026-03-14", "cabin": "economy"}'
RESULT = "UA858 departs PVG 15:00, arrives SFO 10:40 the same day, economy 5400 CNY, window seats left"
ANSWER = "UA858 leaves Pudong at 15:00 on 14 March and lands in San Francisco at 10:40; economy costs 5400 CNY"


@pytest.fixture
def token(module_server_url) -> str:
    project = project_create(name="Links", slug="links")
    curator = get_user_model().objects.create_user("links-curator", password=PASSWORD)
    Membership.objects.create(project=project, user=curator, role=Role.CURATOR)
    return token_issue(project=project)[1]


@pytest.fixture
def cw(module_server_url, token) -> Iterator[Client]:
    with Client(module_server_url, token, project="links", retry=FAST) as client:
        yield client


def memory_of(accepted: Accepted) -> int:
    assert accepted.status == "kept" and len(accepted.memory_ids) == 1, accepted
    return accepted.memory_ids[0]


def edges(cw: Client, session_id: int, origin: str) -> set[tuple[int, int, str]]:
    return {(e.source_id, e.target_id, e.relation) for e in cw.graph(session_id).edges if e.origin == origin}


def chat_conversation() -> list[dict]:
    return [
        {"role": "system", "content": "You are a travel desk agent. Book what the traveller asks for."},
        {"role": "user", "content": USER},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_flights_1", "type": "function",
             "function": {"name": "search_flights", "arguments": CALL_ARGS}}]},
        {"role": "tool", "tool_call_id": "call_flights_1", "content": RESULT},
        {"role": "assistant", "content": ANSWER},
    ]


# OpenAI chat completions -----------------------------------------------------------------------------------


def test_an_openai_chat_conversation_is_linked_by_its_tool_call_ids_and_a_resend_is_all_duplicates(cw):
    session = cw.create_session(title="Chat completions")
    sent = send_chat_completions(cw, session.id, chat_conversation(), wait=True)
    assert [a.duplicate for a in sent] == [False] * 5
    rows = {row.external_id: row for row in cw.interactions(session.id).results}
    assert set(rows) >= {"call_flights_1", "call_flights_1:result"}
    assert rows["call_flights_1"].kind == "tool_call" and rows["call_flights_1:result"].kind == "tool_result"

    user, call, result, answer = (memory_of(a) for a in sent[1:])
    declared = edges(cw, session.id, "agent")
    assert {(user, call, "causal"), (call, result, "causal"), (result, answer, "causal")} <= declared
    shown = cw.interaction(session.id, sent[3].id).links
    assert [(link.by, link.ref, link.status, link.parent_id) for link in shown] == [
        ("external_id", "call_flights_1", "resolved", sent[2].id)]

    again = send_chat_completions(cw, session.id, chat_conversation(), wait=True)
    assert all(a.duplicate for a in again) and [a.id for a in again] == [a.id for a in sent]
    assert edges(cw, session.id, "agent") == declared


def test_a_conversation_sent_in_parts_links_across_them_and_the_whole_is_then_known(cw):
    """The tail of a conversation (its position given as `start`) links to what an earlier send stored."""
    session = cw.create_session(title="In parts")
    whole = chat_conversation()
    head = send_chat_completions(cw, session.id, whole[:3], wait=True)
    tail = send_chat_completions(cw, session.id, whole[3:], start=3, wait=True)
    assert not any(a.duplicate for a in head + tail)
    call, result, answer = memory_of(head[2]), memory_of(tail[0]), memory_of(tail[1])
    assert {(call, result, "causal"), (result, answer, "causal")} <= edges(cw, session.id, "agent")
    assert all(a.duplicate for a in send_chat_completions(cw, session.id, whole, wait=True))


def test_the_chat_adapter_reads_the_openai_sdks_own_objects():
    types = pytest.importorskip("openai.types.chat")
    message = types.ChatCompletionMessage.model_validate({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_x", "type": "function", "function": {"name": "search_flights", "arguments": CALL_ARGS}}]})
    from_sdk = chat_completions_interactions([{"role": "user", "content": USER}, message])
    from_dicts = chat_completions_interactions(chat_conversation()[1:3])
    assert [i.to_json()["kind"] for i in from_sdk] == ["user_input", "tool_call"]
    assert from_sdk[1].external_id == "call_x" and from_sdk[1].content == from_dicts[1].content
    assert from_sdk[1].links == (Link(external_id=from_sdk[0].external_id),)


def test_parallel_calls_and_call_ids_a_server_numbers_again_each_link_to_their_own_results():
    """Two calls in one turn: each result names its call, the answer depends on both. A server that numbers
    every turn's calls from call_0 again: the second call_0 becomes call_0#2 and its result links to it."""
    def call(call_id: str, city: str) -> dict:
        arguments = f'{{"city": "{city}"}}'
        return {"id": call_id, "type": "function", "function": {"name": "weather", "arguments": arguments}}

    items = chat_completions_interactions([
        {"role": "user", "content": "Weather in Kyoto and Osaka tomorrow?"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_0", "Kyoto"), call("call_1", "Osaka")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "Kyoto: rain, 14 C"},
        {"role": "tool", "tool_call_id": "call_1", "content": "Osaka: sun, 17 C"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_0", "Nara")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "Nara: cloudy, 15 C"},
        {"role": "assistant", "content": "Rain in Kyoto, sun in Osaka, clouds in Nara"},
    ])
    linked = [(i.external_id, [link.external_id for link in i.links]) for i in items]
    user = items[0].external_id
    assert linked[1:] == [
        ("call_0", [user]), ("call_1", [user]), ("call_0:result", ["call_0"]), ("call_1:result", ["call_1"]),
        ("call_0#2", ["call_0:result", "call_1:result"]), ("call_0:result#2", ["call_0#2"]),
        (items[-1].external_id, ["call_0:result#2"])]


# OpenAI Responses ------------------------------------------------------------------------------------------


def responses_items() -> list[dict]:
    return [
        {"role": "user", "content": USER},
        {"type": "reasoning", "id": "rs_01", "summary": [
            {"type": "summary_text", "text": "The traveller needs a PVG to SFO flight on 14 March; search first"}]},
        {"type": "function_call", "id": "fc_01", "call_id": "call_r1", "name": "search_flights",
         "arguments": CALL_ARGS, "status": "completed"},
        {"type": "function_call_output", "call_id": "call_r1", "output": RESULT},
        {"type": "message", "id": "msg_01", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]},
    ]


def test_responses_items_are_linked_by_call_id_through_the_async_client(module_server_url, token):
    async def send_twice() -> tuple[int, list[Accepted], list[Accepted]]:
        async with AsyncClient(module_server_url, token, project="links", retry=FAST) as acw:
            session = await acw.create_session(title="Responses")
            first = await send_responses(acw, session.id, responses_items(), wait=True)
            return session.id, first, await send_responses(acw, session.id, responses_items(), wait=True)

    session_id, first, again = asyncio.run(send_twice())
    kinds = [i.kind for i in responses_interactions(responses_items())]
    assert kinds == ["user_input", "agent_thought", "tool_call", "tool_result", "assistant_output"]
    with Client(module_server_url, token, project="links", retry=FAST) as cw:
        declared = edges(cw, session_id, "agent")
        rows = {row.external_id: row.id for row in cw.interactions(session_id).results}
    user, call, result, answer = (memory_of(first[i]) for i in (0, 2, 3, 4))
    assert {(user, call, "causal"), (call, result, "causal"), (result, answer, "causal")} <= declared
    assert rows["call_r1"] == first[2].id and rows["msg_01"] == first[4].id  # the framework's own ids
    assert all(a.duplicate for a in again) and [a.id for a in again] == [a.id for a in first]


# LangChain / LangGraph -------------------------------------------------------------------------------------


def langchain_messages() -> list:
    return [
        SystemMessage("You are a travel desk agent.", id="sys-1"),
        HumanMessage(USER, id="human-1"),
        AIMessage("I will look for flights on that date first.", id="ai-1", tool_calls=[
            {"name": "search_flights", "args": {"origin": "PVG", "destination": "SFO", "date": "2026-03-14"},
             "id": "toolu_01"}]),
        ToolMessage(RESULT, tool_call_id="toolu_01", id="tool-1"),
        AIMessage(ANSWER, id="ai-2"),
    ]


def test_langchain_messages_are_linked_by_tool_call_id_and_message_ids(cw):
    session = cw.create_session(title="LangChain")
    sent = send_langchain(cw, session.id, langchain_messages(), wait=True)
    items = langchain_interactions(langchain_messages())
    assert [(i.kind, i.external_id) for i in items] == [
        ("system", "sys-1"), ("user_input", "human-1"), ("agent_thought", "ai-1"), ("tool_call", "toolu_01"),
        ("tool_result", "toolu_01:result"), ("assistant_output", "ai-2")]
    call, result, answer = memory_of(sent[3]), memory_of(sent[4]), memory_of(sent[5])
    assert {(call, result, "causal"), (result, answer, "causal")} <= edges(cw, session.id, "agent")
    call_links = cw.interaction(session.id, sent[3].id).links
    assert {(link.ref, link.status) for link in call_links} == {("human-1", "resolved"), ("ai-1", "resolved")}
    assert all(a.duplicate for a in send_langchain(cw, session.id, langchain_messages(), wait=True))


def test_an_edited_message_under_the_same_id_is_a_conflict_not_a_silent_overwrite(cw):
    session = cw.create_session(title="Edited")
    send_langchain(cw, session.id, langchain_messages()[:2], wait=True)
    edited = [SystemMessage("You are a travel desk agent.", id="sys-1"), HumanMessage("Actually, Tokyo", id="human-1")]
    with pytest.raises(Conflict) as refused:
        send_langchain(cw, session.id, edited, wait=True)
    assert "human-1" in refused.value.message and refused.value.detail["differs"] == ["content"]


# Links from use, and memories at risk ----------------------------------------------------------------------


def test_an_interaction_sent_with_the_recall_and_the_memories_it_used_gets_use_edges(cw):
    session = cw.create_session(title="Use")
    allergy = cw.send(session.id, "user_input", "I am allergic to peanuts, so no satay or peanut sauce", wait=True)
    cw.send(session.id, "user_input", "The hotel in Kyoto is booked from 3 to 6 May near Gion", wait=True)
    recalled = cw.recall("what food must be avoided?", session_id=session.id, k=2)
    peanuts = memory_of(allergy)
    assert recalled.memories[0].memory.id == peanuts and recalled.memories[0].at_risk == []
    answer = cw.send(session.id, "assistant_output", "Ordered the vegetable tempura set without any peanut sauce",
                     recall_id=recalled.recall_id, used=[peanuts], external_id="answer-1", wait=True)
    assert edges(cw, session.id, "use") == {(peanuts, memory_of(answer), "causal")}
    stored = cw.interaction(session.id, answer.id)
    assert (stored.recall_id, stored.used, stored.external_id) == (recalled.recall_id, [peanuts], "answer-1")


def test_a_changed_value_puts_what_was_declared_on_it_at_risk_until_a_curator_settles_it(cw, module_server_url):
    session = cw.create_session(title="Flight change", subject="Mia")
    flight = cw.send(session.id, "user_input", "My flight UA858 leaves at 15:00", external_id="flight", wait=True)
    pickup = cw.send(session.id, "assistant_output",
                     "Booked the airport pickup for 13:30 because the flight leaves at 15:00",
                     links=[Link(external_id="flight")], wait=True)
    assert (memory_of(flight), memory_of(pickup), "causal") in edges(cw, session.id, "agent")
    assert cw.memories(at_risk=True, session_id=session.id) == []
    update = cw.send(session.id, "user_input", "Update: my flight now leaves at 18:00 instead of 15:00", wait=True)

    at_risk = cw.memories(at_risk=True, session_id=session.id, page_size=1)
    assert [m.id for m in at_risk] == [memory_of(pickup)], [(m.content, m.status) for m in at_risk]
    why = cw.risks(memory_of(pickup))
    assert why == at_risk[0].at_risk_why and at_risk[0].at_risk == 1.0
    assert (why[0].parent_id, why[0].change, why[0].replaced_by_id) == (memory_of(flight), "superseded",
                                                                       memory_of(update))
    everything = cw.memories(session_id=session.id, page_size=2)  # three memories: two pages
    assert sorted(m.id for m in everything) == sorted(map(memory_of, (flight, pickup, update)))

    with Client(module_server_url, project="links", login=Login("links-curator", PASSWORD), retry=FAST) as person:
        settled = person.still_valid(memory_of(pickup), reason="the driver waits; 13:30 still works")
        with pytest.raises(Conflict):
            person.still_valid(memory_of(pickup))
    assert settled.act.kind == "memory.risk" and settled.memory.at_risk == 0
    assert cw.memories(at_risk=True, session_id=session.id) == [] and cw.risks(memory_of(pickup)) == []


def test_links_and_use_travel_in_a_batch_of_new_interactions(cw):
    session = cw.create_session(title="Batch")
    sent = cw.send_batch(session.id, [
        NewInteraction("tool_result", RESULT, external_id="r", links=(Link(external_id="c"),)),
        NewInteraction("tool_call", f"search_flights({CALL_ARGS})", external_id="c",
                       links=({"external_id": "u", "relation": "temporal"},)),
        NewInteraction("user_input", USER, external_id="u"),
    ], wait=True)
    result, call, user = (memory_of(a) for a in sent)
    assert {(call, result, "causal"), (user, call, "temporal")} <= edges(cw, session.id, "agent")


# The MCP server ----------------------------------------------------------------------------------------------


def test_the_mcp_server_sends_the_last_recall_and_what_was_used_with_the_next_answer(module_server_url, token):
    server = StdioServerParameters(command=sys.executable, args=[
        "-m", "contextweaver_client.mcp_server", "--url", module_server_url, "--project", "links"],
        env={"CONTEXTWEAVER_TOKEN": token, "PATH": os.environ.get("PATH", "")})

    async def converse() -> list[dict]:
        async with McpClient(server) as mcp:
            said = []
            for tool, arguments in (
                    ("remember", {"content": "I am allergic to peanuts, so no satay or peanut sauce"}),
                    ("remember", {"content": "The hotel in Kyoto is booked from 3 to 6 May near Gion"}),
                    ("recall", {"query": "what food must be avoided?", "k": 2}),
                    ("remember", {"content": "Which dinner do you suggest tonight?"}),
                    ("remember", {"content": "Suggested the vegetable tempura set, without peanut sauce",
                                  "kind": "assistant_output", "used": "FIRST"}),
                    ("remember", {"content": "Also reserved a table for two at 19:30 at the tempura bar",
                                  "kind": "assistant_output"})):
                if arguments.get("used") == "FIRST":
                    arguments = {**arguments, "used": [said[0]["memory_ids"][0]]}
                result = await mcp.call_tool(tool, arguments)
                assert not result.is_error, result.content
                said.append(result.structured_content)
            return said

    allergy, _, recalled, question, answer, later = asyncio.run(converse())
    assert question["recall_id"] is None  # a user's message did not act on the recall
    assert answer["recall_id"] == recalled["recall_id"] and later["recall_id"] is None  # one act per recall
    with Client(module_server_url, token, project="links", retry=FAST) as cw:
        use = edges(cw, answer["session_id"], "use")
        stored = cw.interaction(answer["session_id"], answer["interaction_id"])
    assert use == {(allergy["memory_ids"][0], answer["memory_ids"][0], "causal")}
    assert (stored.recall_id, stored.used) == (recalled["recall_id"], [allergy["memory_ids"][0]])

