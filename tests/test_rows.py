"""The recall path's row reading: the same instances the ORM gives, and a full-text index with no queue."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import connection
from django.db.models import signals

from memory.engine.recall import PROVENANCE_FIELDS, _load_with_provenance
from memory.engine.recall.reconstruct import subgraph_edges
from memory.engine.rows import memory_reader, reading_cursor
from memory.models import Edge, Interaction, Memory, Relation


def _memory_with_source(project, session) -> Memory:
    interaction = Interaction.objects.create(
        project=project, session=session, kind="user_message", content="We fly to Lisbon on 4 May.",
        metadata={"speaker": "Ana"}, occurred_at=datetime(2025, 4, 14, 9, 30, tzinfo=UTC), idempotency_key="k-1")
    memory = Memory.objects.create(project=project, session=session, content="Flight to Lisbon on 4 May",
                                   dimensions={"dates": ["2025-05-04"]}, importance=4.0,
                                   occurred_at=datetime(2025, 4, 14, 9, 30, 5, tzinfo=UTC))
    memory.sources.add(interaction)
    return memory


def test_no_model_listens_to_init_signals():
    """RowReader.instance skips Model.__init__, so its signals never fire: that is only right while
    nothing listens to them."""
    for model in (Memory, Interaction, Edge):
        assert not signals.pre_init.has_listeners(model)
        assert not signals.post_init.has_listeners(model)


def test_a_read_memory_equals_the_orm_one_field_by_field(project, agent_session):
    memory = _memory_with_source(project, agent_session)
    reader = memory_reader()
    with reading_cursor() as cursor:
        cursor.execute(f"SELECT {reader.columns('m')} FROM memory_memory m WHERE m.id = %s", [memory.pk])
        read = reader.instance(cursor.fetchone())
    expected = Memory.objects.get(pk=memory.pk)
    assert read == expected and not read._state.adding and read._state.db == "default"
    for name in reader.names:
        assert getattr(read, name) == getattr(expected, name), name
    assert read.occurred_at.utcoffset().total_seconds() == 0  # aware, in UTC, as the ORM's
    assert read.dimensions == {"dates": ["2025-05-04"]}  # the JSON converter ran
    assert read.session == agent_session  # relations resolve


def test_provenance_reads_only_what_it_shows_and_loads_the_rest_on_access(project, agent_session):
    memory = _memory_with_source(project, agent_session)
    loaded = _load_with_provenance([memory.pk])[memory.pk]
    (source,) = loaded.provenance
    assert source.get_deferred_fields() == ({f.attname for f in Interaction._meta.concrete_fields}
                                            - {Interaction._meta.get_field(n).attname for n in PROVENANCE_FIELDS})
    assert (source.kind, source.metadata, source.idempotency_key) == ("user_message", {"speaker": "Ana"}, "k-1")
    assert source.occurred_at == datetime(2025, 4, 14, 9, 30, tzinfo=UTC)
    assert source.content == "We fly to Lisbon on 4 May."  # deferred: one query when asked for


def test_subgraph_edges_are_model_instances_with_their_times(project, agent_session):
    first = _memory_with_source(project, agent_session)
    second = Memory.objects.create(project=project, session=agent_session, content="Hotel near the airport",
                                   occurred_at=datetime(2025, 4, 14, 9, 31, tzinfo=UTC))
    edge = Edge.objects.create(project=project, session=agent_session, source=first, target=second,
                               relation=Relation.TEMPORAL, weight=0.5, confidence=0.7)
    (read,) = subgraph_edges([first.pk, second.pk])
    assert read == edge and read.created_at == Edge.objects.get(pk=edge.pk).created_at
    assert (read.source_id, read.target_id, read.relation) == (first.pk, second.pk, Relation.TEMPORAL)


def test_the_full_text_index_keeps_no_pending_list(db):
    """Every full-text search scans a GIN index's whole pending list; recall's access counts filled it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT c.reloptions FROM pg_class c WHERE c.relname = 'memory_search_vector_gin'")
        assert cursor.fetchone()[0] == ["fastupdate=off"]
        cursor.execute("SELECT c.reloptions FROM pg_class c WHERE c.relname = 'memory_memory'")
        assert cursor.fetchone()[0] == ["fillfactor=90"]
