"""Full-text seeds leave out terms that PostgreSQL's statistics say are in too many memories."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from memory.engine.recall import terms
from memory.engine.recall.seeds import Scope, lexical_fragment, lexical_query, rankings
from memory.models import Memory


@pytest.fixture
def crowded(project, agent_session):
    """1,500 memories that all say "hotel", three in four "booking"; "lisbon" in five of them; "alpha" in
    450, "beta" and "gamma" in 400 each (each below COMMON_ROWS, together above ROWS_BUDGET)."""
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
    assert frequencies["hotel"] > terms.COMMON_ROWS
    assert frequencies.get("lisbon", 0) < terms.COMMON_ROWS
    assert lexical_query("Hotel in Lisbon") == "lisbon"


def test_when_every_term_is_common_the_rarest_is_kept(crowded):
    assert lexical_query("hotel booking") == "booking"  # both common: the rarer one still searches
    assert terms.informative_terms({"hotel"}) == ["hotel"]


def test_rare_terms_are_kept_rarest_first_within_the_rows_budget(crowded):
    frequencies = terms.term_frequencies()
    assert all(frequencies[t] < terms.COMMON_ROWS for t in ("alpha", "beta", "gamma"))
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
