"""Full-text seeds leave out terms that PostgreSQL's statistics say are in too many memories."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from memory.engine.projects import project_create, session_create
from memory.engine.recall import terms
from memory.engine.recall.seeds import (
    Fragment,
    Scope,
    lexical_fragment,
    lexical_idf_sql,
    lexical_query,
    rankings,
)
from memory.engine.telling import telling_terms
from memory.models import Memory


@pytest.fixture
def crowded(project, agent_session):
    """1,500 memories that all say "hotel", three in four "booking"; "lisbon" in five of them; "alpha" in
    450, "beta" and "gamma" in 400 each (each within ROWS_BUDGET, together above it)."""
    now = timezone.now()
    rows = [Memory(project=project, session=agent_session, content=f"hotel note {i}", occurred_at=now,
                   search_text=f"hotel note{i} {'booking' if i % 4 else ''} {'lisbon' if i < 5 else ''} "
                               f"{'alpha' if i < 450 else 'beta' if i < 850 else 'gamma' if i < 1250 else ''}")
            for i in range(1500)]
    Memory.objects.bulk_create(rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")  # the rows of this open transaction count as live
    terms.forget_statistics()
    yield
    terms.forget_statistics()


def test_common_terms_are_dropped_and_rare_ones_kept(crowded):
    frequencies = terms.term_frequencies()
    assert frequencies["hotel"] > terms.ROWS_BUDGET
    assert frequencies.get("lisbon", 0) < terms.ROWS_BUDGET
    assert lexical_query("Hotel in Lisbon") == "lisbon"


def test_when_every_term_is_common_the_rarest_is_kept(crowded):
    assert lexical_query("hotel booking") == "booking"  # both common: the rarer one still searches
    assert terms.informative_terms({"hotel"}) == ["hotel"]


def test_rare_terms_are_kept_rarest_first_within_the_rows_budget(crowded):
    frequencies = terms.term_frequencies()
    assert all(frequencies[t] < terms.ROWS_BUDGET for t in ("alpha", "beta", "gamma"))
    assert frequencies["alpha"] + frequencies["beta"] + frequencies["gamma"] > terms.ROWS_BUDGET
    assert lexical_query("alpha beta gamma in Lisbon") == "beta | gamma | lisbon"


def test_pruned_query_still_finds_the_memories_with_the_rare_term(project, crowded):
    scope = Scope(project, None, ("active",), False)
    order, columns = rankings([lexical_fragment(scope, "the hotel in Lisbon", 30)])
    found = Memory.objects.filter(pk__in=order["lexical"]).values_list("search_text", flat=True)
    assert len(order["lexical"]) == 5
    assert all("lisbon" in text for text in found)
    assert set(columns) == set(order["lexical"])


def test_small_tables_prune_nothing(project, agent_session):
    Memory.objects.create(project=project, session=agent_session, content="x", occurred_at=timezone.now(),
                          search_text="hotel lisbon")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")
    terms.forget_statistics()
    assert lexical_query("hotel Lisbon") == "hotel | lisbon"


def test_a_rare_shared_term_outranks_two_common_ones(project, agent_session):
    """Full-text seeds weigh terms by inverse document frequency (ts_rank alone weighs them alike)."""
    now = timezone.now()
    common = [Memory(project=project, session=agent_session, content=f"trip note {i}", occurred_at=now,
                     search_text=f"trip plan note{i}") for i in range(12)]
    rare = Memory(project=project, session=agent_session, content="allergy", occurred_at=now,
                  search_text="seafood allergy")
    Memory.objects.bulk_create([*common, rare])
    terms.forget_statistics()
    scope = Scope(project, None, ("active",), True)
    order, _ = rankings([lexical_fragment(scope, "trip plan seafood", 5)])
    rare_id = Memory.objects.get(search_text="seafood allergy").pk
    assert order["lexical"][0] == rare_id, "the memory holding the rare term comes first"
    assert len(order["lexical"]) == 5


def _analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")  # the rows of this open transaction count as live
    terms.forget_statistics()


@pytest.fixture
def crowded_elsewhere(project, agent_session):
    """1,500 memories of another project say "hotel"; this project holds three memories, one about a hotel."""
    other = project_create(name="Other agent", slug="other")
    elsewhere = session_create(project=other, title="Elsewhere", actor="test")
    now = timezone.now()
    Memory.objects.bulk_create([Memory(project=other, session=elsewhere, content=f"hotel note {i}", occurred_at=now,
                                       search_text=f"hotel note{i}") for i in range(1500)])
    Memory.objects.bulk_create([Memory(project=project, session=agent_session, content=text, occurred_at=now,
                                       search_text=text) for text in (
        "hotel near the river in lisbon", "flight to lisbon on friday", "museum tickets in lisbon")])
    _analyze()
    yield
    terms.forget_statistics()


def test_a_term_common_only_in_other_projects_is_still_searched(project, crowded_elsewhere):
    """The statistics count the whole table; a search ranks only its scope's matches, so a word that other
    projects use everywhere still helps in a small project (dropping it cost full-text R@10 0.68 → 0.61
    in `make eval` once the table held 25 times the eval's memories)."""
    assert terms.term_frequencies()["hotel"] > terms.ROWS_BUDGET
    assert lexical_query("hotel in Lisbon") == "lisbon", "counted table-wide, the common word is dropped"
    assert terms.scope_rows(project.pk) == 3
    assert lexical_query("hotel in Lisbon", terms.scope_rows(project.pk)) == "hotel | lisbon"
    scope = Scope(project, None, ("active",), False)
    order, _ = rankings([lexical_fragment(scope, "the hotel in Lisbon", 30)])
    first = Memory.objects.get(pk=order["lexical"][0])
    assert first.content == "hotel near the river in lisbon", "the memory holding both words comes first"


def test_a_small_session_of_a_large_project_keeps_the_projects_common_words(project, agent_session, crowded):
    small = session_create(project=project, title="Day trip", actor="test")
    Memory.objects.create(project=project, session=small, content="hotel in lisbon", occurred_at=timezone.now(),
                          search_text="hotel lisbon")
    terms.forget_statistics()
    assert terms.scope_rows(project.pk) == 1501
    assert terms.scope_rows(project.pk, small.pk) == 1
    scope = Scope(project, small.pk, ("active",), False)
    assert lexical_fragment(scope, "hotel Lisbon", 5).params[0] == "hotel | lisbon"
    whole_project = Scope(project, None, ("active",), False)
    assert lexical_fragment(whole_project, "hotel Lisbon", 5).params[0] == "lisbon"


def test_scope_sizes_are_kept_until_the_statistics_are_refreshed(project, agent_session):
    Memory.objects.create(project=project, session=agent_session, content="a", occurred_at=timezone.now(),
                          search_text="a")
    terms.forget_statistics()
    assert terms.scope_rows(project.pk) == 1
    Memory.objects.create(project=project, session=agent_session, content="b", occurred_at=timezone.now(),
                          search_text="b")
    assert terms.scope_rows(project.pk) == 1, "recounted every few minutes, not on every recall"
    terms.forget_statistics()
    assert terms.scope_rows(project.pk) == 2


def test_telling_words_are_judged_within_the_project(project, crowded_elsewhere):
    """Supersede ties a change to the memory it replaces by telling words; a word other projects use
    everywhere can still be one here."""
    memory = Memory.objects.get(project=project, content__startswith="hotel")
    assert "hotel" in telling_terms(memory)


def test_a_one_term_search_ranks_as_the_idf_statement_would(project, agent_session):
    """One term skips the idf pass (every match holds it): the order is the same, by ts_rank, then
    importance, then id."""
    now = timezone.now()
    Memory.objects.bulk_create([
        Memory(project=project, session=agent_session, content=f"m{i}", occurred_at=now, importance=imp,
               search_text=text)
        for i, (text, imp) in enumerate([("lisbon", 2.0), ("lisbon lisbon lisbon", 1.0), ("lisbon", 4.0),
                                         ("lisbon trip", 4.0), ("porto", 5.0)])])
    scope = Scope(project, None, ("active",), False)
    fragment = lexical_fragment(scope, "Lisbon", 10)
    assert fragment.sql.startswith("SELECT m.id") and "idf" not in fragment.sql
    order, _ = rankings([fragment])
    where, params = scope.condition("m")
    idf_statement = Fragment("lexical", lexical_idf_sql(1, where), ["lisbon", "lisbon", *params, 5, 10], 10)
    assert order["lexical"] == rankings([idf_statement])[0]["lexical"]
    contents = list(Memory.objects.filter(pk__in=order["lexical"]).in_bulk().values())
    by_id = {m.pk: m.content for m in contents}
    assert [by_id[i] for i in order["lexical"]][0] == "m1", "the memory saying it three times first"
    assert len(order["lexical"]) == 4
