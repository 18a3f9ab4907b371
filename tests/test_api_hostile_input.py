"""Input an attacker or a buggy agent sends: every one is a JSON 400 or 409 and writes nothing.

Each case here was a 500, or silently accepted, before the API refused it: unbounded or deeply
nested metadata, lone UTF-16 surrogates, recall parameters that divide by zero or write Infinity,
numbers beyond bigint in query strings, and idempotency keys that dropped new content.
"""

from __future__ import annotations

import json

import pytest

from memory.models import Interaction

from .conftest import interactions_url
from .test_api_validation import KEPT_TEXT, assert_invalid, counts, memory_override

pytestmark = pytest.mark.django_db(transaction=True)

RECALL = "/api/projects/travel/recall/"


@pytest.fixture
def url(agent_session) -> str:
    return interactions_url(agent_session)


@pytest.fixture
def primed(api, url) -> dict[str, int]:
    response = api.post(url + "?wait=true", {"kind": "user_input", "content": KEPT_TEXT}, format="json")
    assert response.status_code == 201, response.content
    api.raise_request_exception = False
    return counts()


def raw_post(api, path: str, text: str, **extra):
    """A body sent byte for byte (the test client's JSON encoder cannot even write a lone surrogate)."""
    return api.post(path, data=text.encode(), content_type="application/json", **extra)


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# --- metadata: size and depth -------------------------------------------------------------------


@pytest.mark.parametrize("metadata, words", [
    pytest.param({"blob": "x" * (1024 * 1024)}, "bytes", id="1-MB-value"),
    pytest.param({f"k{i}": i for i in range(50_000)}, "bytes", id="50000-keys"),
    pytest.param(nested(9), "levels", id="9-levels"),
])
def test_oversized_or_deep_metadata_is_a_400(api, url, primed, metadata, words):
    response = api.post(url, {"kind": "user_input", "content": KEPT_TEXT, "metadata": metadata}, format="json")
    fields = assert_invalid(response, "metadata")
    assert words in fields["metadata"][0]
    assert counts() == primed


def test_metadata_at_the_limits_is_accepted(api, url, primed):
    with memory_override(MAX_METADATA_BYTES=64, MAX_METADATA_DEPTH=3):
        ok = {"a": {"b": {"c": "x" * 30}}}
        assert len(json.dumps(ok, separators=(",", ":"))) <= 64
        accepted = api.post(url, {"kind": "user_input", "content": "budget for hotels is 900", "metadata": ok},
                            format="json")
        assert accepted.status_code == 202, accepted.content
        deeper = {"a": {"b": {"c": {"d": 1}}}}
        assert_invalid(api.post(url, {"kind": "user_input", "content": KEPT_TEXT, "metadata": deeper},
                                format="json"), "metadata")
    assert Interaction.objects.count() == primed["interactions"] + 1


def test_session_metadata_is_bounded_too(api, primed):
    response = api.post("/api/projects/travel/sessions/", {"title": "Trip", "metadata": nested(12)}, format="json")
    assert_invalid(response, "metadata")
    assert counts() == primed


@pytest.mark.parametrize("depth", [1_500, 5_000])
def test_json_nested_beyond_the_parser_is_a_400(api, url, primed, depth):
    """1,500 levels of metadata, 5,000 of recall params: RecursionError was a 500."""
    metadata = "{\"a\":" * depth + "1" + "}" * depth
    response = raw_post(api, url, f'{{"kind": "user_input", "content": "{KEPT_TEXT}", "metadata": {metadata}}}')
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    params = "[" * depth + "]" * depth
    response = raw_post(api, RECALL, f'{{"query": "budget", "params": {{"statuses": {params}}}}}')
    assert response.status_code == 400, response.content
    assert counts() == primed


def test_json_deeper_than_max_json_depth_is_named(api, url, primed):
    body = {"query": "budget", "params": {"x": nested(40)}}
    fields = assert_invalid(api.post(RECALL, body, format="json"), "params")
    assert "nested more than 32 levels" in fields["params"][0]
    assert counts() == primed


# --- lone surrogates -----------------------------------------------------------------------------


@pytest.mark.parametrize("target, body, field", [
    ("interactions", '{"kind": "user_input", "content": "budget \\ud800 5000"}', "content"),
    ("interactions", '{"kind": "user_input", "content": "budget 5000 RMB", "metadata": {"n": "\\udfff"}}',
     "metadata"),
    ("interactions", '{"kind": "user_input", "content": "budget 5000 RMB", "metadata": {"\\ud800": 1}}',
     "metadata"),
    ("interactions", '{"kind": "\\ud800", "content": "budget 5000 RMB"}', "kind"),
    ("interactions", '{"interactions": [{"kind": "user_input", "content": "ok \\ud83d"}]}', "interactions"),
    ("sessions", '{"title": "Trip", "metadata": {"who": "\\ud800"}}', "metadata"),
    ("recall", '{"query": "budget", "preset": "\\ud800"}', "preset"),
    ("recall", '{"query": "budget", "params": {"\\ud800": 1}}', "params"),
    ("summarise", '{"dry_run": true, "entity": "\\ud800"}', "entity"),
])
def test_lone_surrogates_are_a_json_400_naming_the_field(api, agent_session, primed, target, body, field):
    path = {"interactions": interactions_url(agent_session), "sessions": "/api/projects/travel/sessions/",
            "recall": RECALL, "summarise": "/api/projects/travel/maintenance/summarise/"}[target]
    response = raw_post(api, path, body)
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/json")
    fields = response.json()["error"]["fields"]
    assert field in fields, fields
    assert "surrogate" in " ".join(fields[field])
    assert counts() == primed


def test_a_surrogate_pair_is_ordinary_text(api, url, primed):
    """\\ud83d\\ude00 is one emoji (a valid pair), not a lone surrogate."""
    response = raw_post(api, url, '{"kind": "user_input", "content": "My budget is 5000 RMB \\ud83d\\ude00"}')
    assert response.status_code == 202, response.content
    assert Interaction.objects.order_by("-pk").first().content.endswith("\U0001F600")


# --- recall parameters ---------------------------------------------------------------------------


@pytest.mark.parametrize("params, field", [
    ({"rrf_k": 0}, "rrf_k"),
    ({"rrf_k": -5}, "rrf_k"),
    ({"freshness_half_life_days": 0}, "freshness_half_life_days"),
    ({"freshness_half_life_days": -1}, "freshness_half_life_days"),
    ({"weight_activation": 1e308}, "weight_activation"),
    ({"weight_freshness": -0.5}, "weight_freshness"),
    ({"weight_activation": 0, "weight_freshness": 0, "weight_importance": 0}, "weight_activation"),
    ({"weight_importance": 10**400}, "weight_importance"),
    ({"min_activation": -1}, "min_activation"),
    ({"approved_boost": -1}, "approved_boost"),
    ({"decay": 0}, "decay"),
    ({"relation_weights": {"causal": 1e308}}, "relation_weights"),
    ({"relation_weights": {"causal": -1}}, "relation_weights"),
    ({"relation_weights": {"telepathic": 1.0}}, "relation_weights"),
])
def test_out_of_range_recall_params_are_a_400(api, primed, params, field):
    response = api.post(RECALL, {"query": "budget", "preset": "ripple", "params": params}, format="json")
    fields = assert_invalid(response, field)
    if field == "relation_weights" and "telepathic" in params.get(field, {}):
        assert "causal" in fields[field][0], "the allowed relation names are listed"
    assert counts() == primed


def test_unknown_recall_param_lists_the_known_ones(api, primed):
    fields = assert_invalid(api.post(RECALL, {"query": "budget", "params": {"hops": 2}}, format="json"), "params")
    assert "max_hops" in fields["params"][0]


def test_recall_params_inside_the_ranges_still_work(api, primed):
    params = {"rrf_k": 1, "freshness_half_life_days": 0.5, "weight_activation": 10, "weight_freshness": 0,
              "weight_importance": 0, "min_activation": 0, "relation_weights": {"causal": 0, "temporal": 10}}
    response = api.post(RECALL, {"query": "budget", "params": params}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["memories"], "the primed memory is recalled"


# --- numbers in query strings and bodies ---------------------------------------------------------


@pytest.mark.parametrize("query", ["limit=99999999999999999999", "offset=99999999999999999999", "limit=0",
                                   "limit=abc", "offset=-1", "limit=1001", "limit=" + "9" * 5000])
def test_interaction_list_bounds_its_numbers(api, url, primed, query):
    response = api.get(f"{url}?{query}")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["fields"]
    assert api.get(f"{url}?limit=1000&offset=0").status_code == 200


@pytest.mark.parametrize("path", ["graph/?around=99999999999999999999", "changes/?after=99999999999999999999",
                                  "changes/?memory=99999999999999999999", "changes/?edge=-3"])
def test_session_reads_bound_their_numbers(api, agent_session, primed, path):
    base = f"/api/projects/travel/sessions/{agent_session.pk}/"
    response = api.get(base + path)
    assert response.status_code == 400, response.content


@pytest.mark.parametrize("body", [
    {"dry_run": True, "memory_ids": [10**20]},
    {"dry_run": True, "session_id": 10**20},
    {"dry_run": True, "entity": "99999999999999999999"},
    {"dry_run": True, "entity": "²"},
])
def test_maintenance_ids_beyond_bigint_are_never_server_errors(api, primed, body):
    response = api.post("/api/projects/travel/maintenance/decay/" if "entity" not in body
                        else "/api/projects/travel/maintenance/summarise/", body, format="json")
    assert response.status_code in (400, 404), response.content
    assert counts() == primed


# --- idempotency ---------------------------------------------------------------------------------


def test_same_key_with_different_content_is_a_409_naming_the_stored_interaction(api, url, primed):
    first = api.post(url, {"kind": "user_input", "content": "I am allergic to seafood", "idempotency_key": "k1"},
                     format="json")
    assert first.status_code == 202
    stored_id = first.json()["interactions"][0]["id"]
    before = counts()
    for change in ({"content": "I am allergic to peanuts"}, {"kind": "assistant_output"}, {"metadata": {"x": 1}},
                   {"occurred_at": "2020-01-01T00:00:00Z"}):
        body = {"kind": "user_input", "content": "I am allergic to seafood", "idempotency_key": "k1", **change}
        response = api.post(url, body, format="json")
        assert response.status_code == 409, response.content
        error = response.json()["error"]
        assert error["code"] == "idempotency_conflict"
        assert error["detail"]["interaction_id"] == stored_id
        assert error["detail"]["differs"] == list(change)
        assert str(stored_id) in error["message"]
    assert counts() == before
    assert Interaction.objects.get(pk=stored_id).content == "I am allergic to seafood"


def test_a_conflict_anywhere_in_a_batch_stores_none_of_it(api, url, primed):
    api.post(url, {"kind": "user_input", "content": "I am allergic to seafood", "idempotency_key": "k1"},
             format="json")
    before = counts()
    items = [{"kind": "user_input", "content": "I prefer window seats", "idempotency_key": "k9"},
             {"kind": "user_input", "content": "I am allergic to peanuts", "idempotency_key": "k1"}]
    response = api.post(url, {"interactions": items}, format="json")
    assert response.status_code == 409, response.content
    assert counts() == before


def test_idempotency_key_header_makes_a_retried_batch_a_duplicate(api, url, primed):
    items = [{"kind": "user_input", "content": "I prefer trains over planes"},
             {"kind": "user_input", "content": "Hotel budget is 800 per night", "idempotency_key": "own"}]
    first = api.post(url, {"interactions": items}, format="json", HTTP_IDEMPOTENCY_KEY="batch-7")
    assert first.status_code == 202, first.content
    again = api.post(url, {"interactions": items}, format="json", HTTP_IDEMPOTENCY_KEY="batch-7")
    assert again.status_code == 200, again.content
    assert [r["duplicate"] for r in again.json()["interactions"]] == [True, True]
    assert [r["id"] for r in again.json()["interactions"]] == [r["id"] for r in first.json()["interactions"]]
    keys = sorted(Interaction.objects.exclude(idempotency_key=None).values_list("idempotency_key", flat=True))
    assert keys == ["batch-7:0", "own"]
    assert Interaction.objects.count() == primed["interactions"] + 2


def test_two_items_with_one_key_in_a_batch_are_a_400(api, url, primed):
    items = [{"kind": "user_input", "content": "I prefer trains", "idempotency_key": "dup"},
             {"kind": "user_input", "content": "I prefer planes", "idempotency_key": "dup"}]
    fields = assert_invalid(api.post(url, {"interactions": items}, format="json"), "interactions")
    assert "'dup'" in fields["interactions"][0]
    assert counts() == primed


def test_keys_are_kept_exactly_as_sent(api, url, primed):
    a = api.post(url, {"kind": "user_input", "content": "I prefer trains", "idempotency_key": "k1"}, format="json")
    b = api.post(url, {"kind": "user_input", "content": "I prefer planes", "idempotency_key": " k1"}, format="json")
    assert (a.status_code, b.status_code) == (202, 202), b.content
    assert sorted(Interaction.objects.exclude(idempotency_key=None).values_list("idempotency_key", flat=True)) == [
        " k1", "k1"]


def test_a_batch_header_too_long_with_its_index_is_a_400(api, url, primed):
    items = [{"kind": "user_input", "content": "I prefer trains"}]
    response = api.post(url, {"interactions": items}, format="json", HTTP_IDEMPOTENCY_KEY="h" * 199)
    assert_invalid(response, "Idempotency-Key")
    assert counts() == primed


@pytest.mark.parametrize("path", ["/?q=%00", "/p/travel/?q=a%00b", "/api/projects/travel/sessions/?x=%00"])
def test_a_nul_in_the_query_string_is_a_400_on_pages_and_the_api(api, agent_session, primed, path):
    from django.contrib.auth import get_user_model

    from memory.models import Membership, Role

    person = get_user_model().objects.create_user("nul-reader", password="a-long-password-1")
    Membership.objects.create(project=agent_session.project, user=person, role=Role.VIEWER)
    api.force_authenticate(None)
    api.credentials()
    api.force_login(person)
    response = api.get(path)
    assert response.status_code == 400, response.content
    if path.startswith("/api/"):
        assert response.json()["error"]["code"] == "invalid"
    assert counts() == primed
