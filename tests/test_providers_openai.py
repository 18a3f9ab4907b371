"""OpenAIEmbedder and OpenAILLM against a real local OpenAI-compatible HTTP server (no mocks).

The real `openai` client makes real HTTP requests; the server is scripted per test, so retries,
timeouts and bad answers are exercised through the same code that talks to api.openai.com.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from pydantic import BaseModel, Field

from memory.errors import ProviderError
from memory.providers.openai import OpenAIEmbedder, OpenAILLM

from .openai_server import (
    API_KEY,
    Behaviour,
    FakeOpenAI,
    answer_json,
    answer_text,
    empty_choices,
    fake_embedding,
    http_error,
    rate_limited,
    raw_json,
    slow,
)

DIMENSIONS = 16


class Verdict(BaseModel):
    """A small schema like the judge's: typed fields with a range, so violations are detectable."""

    keep: bool
    kind: str
    importance: int = Field(ge=1, le=5)


GOOD = {"keep": True, "kind": "constraint", "importance": 5}


def llm(*, timeout: float = 5.0, max_retries: int = 2) -> OpenAILLM:
    return OpenAILLM(model="gpt-test-mini", timeout=timeout, max_retries=max_retries)


def embedder(*, batch_size: int = 2, max_retries: int = 0, dimensions: int | None = DIMENSIONS) -> OpenAIEmbedder:
    return OpenAIEmbedder(model="text-embedding-test", timeout=5.0, max_retries=max_retries,
                          dimensions=dimensions, batch_size=batch_size)


def ask(model: OpenAILLM) -> Verdict:
    return model.complete_json(system="Judge the interaction.", user="My budget is 5000 RMB", schema=Verdict)


def assert_close(actual: list[float], expected: list[float]) -> None:
    """Vectors travel as float32 base64 (the SDK's default), so compare at float32 precision."""
    assert len(actual) == len(expected)
    assert actual == pytest.approx(expected, abs=1e-6)


# -- LLM: happy path ---------------------------------------------------------------------------


def test_llm_answer_is_parsed_into_the_schema_and_the_request_is_well_formed(openai_server: FakeOpenAI) -> None:
    """The JSON answer becomes a validated model, and the request asks for JSON deterministically."""
    openai_server.script_chat(answer_json(GOOD))

    verdict = ask(llm())

    assert verdict == Verdict(keep=True, kind="constraint", importance=5)
    [request] = openai_server.chat_requests
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.body["model"] == "gpt-test-mini"
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.body["temperature"] == 0
    system, user = request.body["messages"]
    assert system["role"] == "system" and system["content"].startswith("Judge the interaction.")
    assert "JSON" in system["content"]
    assert user == {"role": "user", "content": "My budget is 5000 RMB"}
    assert openai_server.pending() == 0


# -- LLM: transport failures -------------------------------------------------------------------


@pytest.mark.parametrize("failure", [http_error(500), http_error(503), rate_limited()], ids=["500", "503", "429"])
def test_llm_retries_server_errors_and_rate_limits_then_succeeds(openai_server: FakeOpenAI, failure: Behaviour) -> None:
    """Transient failures are retried by the client (max_retries) before the caller sees them."""
    openai_server.script_chat(failure, failure, answer_json(GOOD))

    assert ask(llm(max_retries=2)).importance == 5
    assert len(openai_server.chat_requests) == 3


def test_llm_gives_up_with_provider_error_when_retries_are_exhausted(openai_server: FakeOpenAI) -> None:
    """max_retries bounds the attempts: 1 retry means exactly 2 requests, then ProviderError."""
    openai_server.script_chat(http_error(500), http_error(500), answer_json(GOOD))

    with pytest.raises(ProviderError, match="InternalServerError"):
        ask(llm(max_retries=1))
    assert len(openai_server.chat_requests) == 2
    assert openai_server.pending() == 1  # the success was never reached


def test_llm_does_not_retry_a_client_error(openai_server: FakeOpenAI) -> None:
    """A 400 will not get better by asking again: one request, then ProviderError."""
    openai_server.script_chat(http_error(400, "Invalid 'messages'"), answer_json(GOOD))

    with pytest.raises(ProviderError, match="BadRequestError"):
        ask(llm(max_retries=2))
    assert len(openai_server.chat_requests) == 1


def test_llm_timeout_is_a_provider_error(openai_server: FakeOpenAI) -> None:
    """A server slower than the timeout must not hang ingestion: ProviderError after ~timeout."""
    openai_server.script_chat(slow(5.0, answer_json(GOOD)))

    started = time.monotonic()
    with pytest.raises(ProviderError, match="APITimeoutError"):
        ask(llm(timeout=0.5, max_retries=0))
    assert time.monotonic() - started < 3.0
    assert len(openai_server.chat_requests) == 1


def test_llm_recovers_when_a_timeout_is_followed_by_an_answer(openai_server: FakeOpenAI) -> None:
    """A timed-out request counts as retryable: the retry gets the answer."""
    openai_server.script_chat(slow(5.0), answer_json(GOOD))

    assert ask(llm(timeout=0.5, max_retries=1)).keep is True
    assert len(openai_server.chat_requests) == 2


# -- LLM: bad answers --------------------------------------------------------------------------


def test_llm_malformed_json_gets_one_more_attempt_that_can_succeed(openai_server: FakeOpenAI) -> None:
    """A non-JSON answer is asked again once; a good second answer is used."""
    openai_server.script_chat(answer_text("Sure! keep=true, kind=constraint"), answer_json(GOOD))

    assert ask(llm()) == Verdict(**GOOD)
    first, second = openai_server.chat_requests
    assert first.body["messages"] == second.body["messages"]


def test_llm_malformed_json_twice_is_a_provider_error(openai_server: FakeOpenAI) -> None:
    """Exactly one extra attempt, not an endless loop: two requests, then ProviderError."""
    openai_server.script_chat(answer_text("not json {"), answer_text("still not json"), answer_json(GOOD))

    with pytest.raises(ProviderError, match="JSONDecodeError"):
        ask(llm())
    assert len(openai_server.chat_requests) == 2
    assert openai_server.pending() == 1


@pytest.mark.parametrize("answer", [
    {"keep": "maybe", "kind": "constraint", "importance": 5},  # wrong type
    {"keep": True, "kind": "constraint"},  # missing field
    {"keep": True, "kind": "constraint", "importance": 9},  # out of range
    [GOOD],  # an array, not an object
    "keep",  # a JSON string
], ids=["wrong-type", "missing-field", "out-of-range", "array", "string"])
def test_llm_schema_violation_is_a_provider_error(openai_server: FakeOpenAI, answer: Any) -> None:
    """Valid JSON that does not fit the schema is never returned unchecked."""
    openai_server.script_chat(answer_json(answer), answer_json(answer))

    with pytest.raises(ProviderError, match="did not match the schema"):
        ask(llm())
    assert len(openai_server.chat_requests) == 2


@pytest.mark.parametrize("answer", [
    empty_choices(),
    Behaviour(content=None),  # "content": null
    answer_text(""),
    raw_json({"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop"}]}),  # a choice without a message
    raw_json({"error": {"message": "upstream failed", "type": "server_error"}}),  # a gateway's 200 error
], ids=["no-choices", "null-content", "empty-content", "no-message", "error-body-200"])
def test_llm_empty_or_malformed_answer_is_a_provider_error(openai_server: FakeOpenAI, answer: Behaviour) -> None:
    """Nothing to parse must be a ProviderError (the judge's fallback signal), not an AttributeError."""
    openai_server.script_chat(answer)

    with pytest.raises(ProviderError, match="LLM returned an? (empty answer|malformed response)"):
        ask(llm())
    assert len(openai_server.chat_requests) == 1


# -- embeddings --------------------------------------------------------------------------------


def test_embeddings_are_batched_in_order_and_cached(openai_server: FakeOpenAI) -> None:
    """Batches respect batch_size, vectors come back in input order, and a cached text is not re-sent."""
    model = embedder(batch_size=2)
    texts = ["budget 5000 RMB", "allergic to seafood", "hotel near the Bund", "budget 5000 RMB"]

    vectors = model.embed(texts)

    for text, vector in zip(texts, vectors, strict=True):
        assert_close(vector, fake_embedding(text, DIMENSIONS))
    assert vectors[0] == vectors[3]
    assert [r.body["input"] for r in openai_server.embedding_requests] == [
        ["budget 5000 RMB", "allergic to seafood"], ["hotel near the Bund"],
    ]
    assert all(r.body["model"] == "text-embedding-test" for r in openai_server.embedding_requests)

    again = model.embed(["allergic to seafood", "train to Hangzhou"])
    assert again[0] == vectors[1]
    assert_close(again[1], fake_embedding("train to Hangzhou", DIMENSIONS))
    assert openai_server.embedding_requests[-1].body["input"] == ["train to Hangzhou"]
    assert len(openai_server.embedding_requests) == 3
    assert model.embed_one("hotel near the Bund") == vectors[2]
    assert len(openai_server.embedding_requests) == 3


def test_embedding_dimensions_of_an_unknown_model_are_probed(openai_server: FakeOpenAI) -> None:
    """A model not in KNOWN_DIMENSIONS learns its size from one probe request, once."""
    openai_server.embedding_dimensions = 24
    model = embedder(dimensions=None)

    assert model.dimensions == 24
    assert model.dimensions == 24
    assert len(openai_server.embedding_requests) == 1


def test_embeddings_retry_a_server_error(openai_server: FakeOpenAI) -> None:
    """Embedding requests get the same client retries as chat."""
    openai_server.script_embeddings(http_error(500), rate_limited())

    vector = embedder(max_retries=2).embed_one("budget 5000 RMB")

    assert_close(vector, fake_embedding("budget 5000 RMB", DIMENSIONS))
    assert len(openai_server.embedding_requests) == 3


def test_embedding_failure_is_a_provider_error_and_not_cached(openai_server: FakeOpenAI) -> None:
    """A failed batch raises ProviderError and leaves nothing in the cache, so a later call asks again."""
    openai_server.script_embeddings(http_error(500))
    model = embedder(max_retries=0)

    with pytest.raises(ProviderError, match="embedding request failed"):
        model.embed(["budget 5000 RMB"])
    assert_close(model.embed_one("budget 5000 RMB"), fake_embedding("budget 5000 RMB", DIMENSIONS))
    assert len(openai_server.embedding_requests) == 2


def test_embedding_timeout_is_a_provider_error(openai_server: FakeOpenAI) -> None:
    openai_server.script_embeddings(slow(5.0))
    model = OpenAIEmbedder(model="text-embedding-test", timeout=0.5, max_retries=0, dimensions=DIMENSIONS)

    with pytest.raises(ProviderError, match="timed out"):
        model.embed_one("budget 5000 RMB")


@pytest.mark.parametrize("body", [
    {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
     "data": [{"object": "embedding", "index": 0, "embedding": [0.6, 0.8]}]},  # one vector for two texts
    {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}, "data": []},
    {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
     "data": [{"object": "embedding", "index": 0, "embedding": "%%not base64"}]},
    "<html>Bad gateway</html>",
], ids=["too-few-vectors", "no-data", "bad-base64", "not-an-object"])
def test_malformed_embedding_answer_is_a_provider_error(openai_server: FakeOpenAI, body: Any) -> None:
    """An endpoint answering 200 with the wrong content must fail as ProviderError, not ValueError."""
    openai_server.script_embeddings(raw_json(body))

    with pytest.raises(ProviderError, match="vectors for 2 texts|malformed answer"):
        embedder().embed(["budget 5000 RMB", "allergic to seafood"])
    assert len(openai_server.embedding_requests) == 1
