"""Forgetting on the real database: soft (out of recall and the graph) and hard (the whole cascade,
until no row anywhere holds the forgotten text)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Q
from django.utils import timezone

from curation.models import CurationAct
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.maintenance.common import REDACTED
from memory.engine.maintenance.forget import ForgetFilter, forget_run, forget_selection
from memory.engine.maintenance.merge import merge_run
from memory.engine.maintenance.summarise import summarise_run
from memory.engine.projects import session_create
from memory.engine.recall import RecallQuery, memory_recall
from memory.errors import NotFoundError, ValidationFailed
from memory.models import (
    AgentSession,
    Edge,
    Entity,
    GraphChange,
    Interaction,
    Memory,
    MemoryEmbedding,
    RecallTrace,
    Relation,
)
from memory.selectors import session_graph

from .openai_server import answer_json
from .test_maintenance_support import db_counts, db_state, remember, rows_containing

SECRET = "Veronika Quistberg keeps passport X9983451 in the hotel safe. She lives at 12 Elmwood Road in Hamburg."
SECRET_2 = "Quistberg asked to move her flight booking QX77AB to the morning of 14 October."
KEEP_1 = "The trip to Shanghai starts on 12 October with a morning flight."
KEEP_2 = "The hotel near the Bund is booked for three nights with breakfast."
TRACES = ("Quistberg", "X9983451", "Elmwood Road", "QX77AB", "hotel safe")


def _ingest(session, texts: list[str], kind: str = "user_input", minutes_ago: int = 60) -> None:
    start = timezone.now() - timedelta(minutes=minutes_ago)
    interactions_accept(session=session, actor="agent", items=[
        InteractionInput(kind, text, {"turn": i}, start + timedelta(minutes=i)) for i, text in enumerate(texts)])


@pytest.fixture
def world(project, agent_session):
    """Through the real write path: memories, a merged duplicate from another session, two summaries,
    an edge whose rationale quotes the secret, a recall trace, a curator's reason quoting the secret and
    the change log of all of it."""
    _ingest(agent_session, [KEEP_1, SECRET, KEEP_2, SECRET_2])
    other = session_create(project=project, title="Second session", task="Hotel logistics", actor="t")
    _ingest(other, [SECRET], minutes_ago=30)
    m = {text: Memory.objects.get(session=agent_session, content=text) for text in (SECRET, SECRET_2, KEEP_1, KEEP_2)}
    assert merge_run(project=project, actor="t", scope="project").counts["merged"] == 1
    duplicate = Memory.objects.get(session=other, content=SECRET)
    assert duplicate.dimensions["merged_into"] == m[SECRET].pk
    s1 = summarise_run(project=project, actor="t", memory_ids=[m[KEEP_1].pk, m[SECRET].pk, m[KEEP_2].pk])
    s2 = summarise_run(project=project, actor="t", memory_ids=[m[SECRET].pk, m[SECRET_2].pk])
    summary_1, summary_2 = (Memory.objects.get(pk=r.ids["summary"][0]) for r in (s1, s2))
    assert "X9983451" in summary_1.content or "Elmwood" in summary_1.content  # the summary quotes the secret
    Edge.objects.update_or_create(source=m[SECRET], target=m[KEEP_2], relation=Relation.CAUSAL, defaults={
        "project": project, "session": agent_session, "origin": "llm",
        "rationale": "the passport X9983451 in the safe made the hotel booking necessary"})
    trace = memory_recall(project=project, query=RecallQuery("Where does Veronika Quistberg keep her passport?", k=5),
                          actor="t").trace
    CurationAct.objects.create(project=project, session=agent_session, actor="user:1", kind="approve",
                               object_type="memory", object_id=m[SECRET].pk,
                               reason="right: passport X9983451 is in the hotel safe")  # a reason quoting it
    assert "X9983451" in trace.context
    return {"m": m, "duplicate": duplicate, "summary_1": summary_1, "summary_2": summary_2, "trace": trace,
            "other": other}


@pytest.mark.django_db(transaction=True)
def test_hard_forget_leaves_no_trace_anywhere(project, agent_session, world):
    m = world["m"]
    assert all(rows_containing(t) for t in TRACES)
    interactions_before = Interaction.objects.count()
    selection = ForgetFilter(text_contains="quistberg")

    dry = forget_run(project=project, actor="user:1", selection=selection, mode="hard", dry_run=True)
    assert all(rows_containing(t) for t in TRACES), "the dry run changed nothing"
    real = forget_run(project=project, actor="user:1", selection=selection, mode="hard",
                      expect_memories=dry.counts["memories"])

    assert dry.counts == real.counts and dry.ids == real.ids
    assert real.counts["memories"] == 3 and real.counts["merged_duplicates"] == 0  # the duplicate says it too
    assert real.counts["summaries_deleted"] == 1 and real.counts["summaries_rewritten"] == 1
    assert real.counts["deleted"] == 4  # the three, and the summary of only them
    for text in TRACES:
        assert rows_containing(text) == {}, text
    for sentence in SECRET.split(". "):
        assert rows_containing(sentence.rstrip(".")) == {}, sentence
    # What was derived from the forgotten memories is gone or rewritten.
    gone = [m[SECRET].pk, m[SECRET_2].pk, world["duplicate"].pk, world["summary_2"].pk]
    assert not Memory.objects.filter(pk__in=gone).exists()
    assert not Edge.objects.filter(Q(source_id__in=gone) | Q(target_id__in=gone)).exists()
    assert not MemoryEmbedding.objects.filter(memory_id__in=gone).exists()
    assert not Entity.objects.filter(project=project, normalized_name__contains="quistberg").exists()
    summary = Memory.objects.get(pk=world["summary_1"].pk)
    assert summary.kind == "summary" and summary.dimensions["summary"]["members"] == [m[KEEP_1].pk, m[KEEP_2].pk]
    assert set(Edge.objects.filter(target=summary, relation="summarizes").values_list("source_id", flat=True)) \
        == {m[KEEP_1].pk, m[KEEP_2].pk}
    assert MemoryEmbedding.objects.filter(memory=summary).count() == 1
    # What was not forgotten is intact, and ids in the trace stay so the recall can still be replayed.
    assert set(Memory.objects.filter(pk__in=[m[KEEP_1].pk, m[KEEP_2].pk]).values_list("content", flat=True)) \
        == {KEEP_1, KEEP_2}
    trace = RecallTrace.objects.get(pk=world["trace"].pk)
    kept_ids = [(e["memory_id"], e["rank"], e["score"]) for e in trace.ranking]
    assert kept_ids == [(e["memory_id"], e["rank"], e["score"]) for e in world["trace"].ranking]
    assert REDACTED in trace.context and REDACTED in {e["content"] for e in trace.ranking}
    assert real.counts["notes_scrubbed"] == 1 and CurationAct.objects.get().reason == REDACTED  # about a gone one
    assert Interaction.objects.count() == interactions_before  # scrubbed, not deleted
    assert Interaction.objects.filter(content=REDACTED).count() >= 3  # two sources + the other session's one
    ops = list(GraphChange.objects.filter(actor="user:1").order_by("id").values_list("op", flat=True))
    assert ops.count("memory.deleted") == 4 and "entity.deleted" in ops and ops[-1] == "maintenance.forget"
    audit = GraphChange.objects.get(op="maintenance.forget")
    assert audit.after["params"]["filter"]["text_contains"] == REDACTED
    assert audit.after["counts"] == real.counts


@pytest.mark.django_db(transaction=True)
def test_merged_duplicates_go_with_their_survivor(project, world):
    m = world["m"]
    report = forget_run(project=project, actor="t", selection=ForgetFilter(memory_ids=(m[SECRET].pk,)), mode="hard")
    assert report.counts["memories"] == 1 and report.counts["merged_duplicates"] == 1
    assert not Memory.objects.filter(pk=world["duplicate"].pk).exists()
    assert rows_containing("Elmwood Road") == {}
    assert Memory.objects.filter(pk=world["summary_2"].pk).exists()  # SECRET_2 still stands behind it
    assert "Elmwood" not in Memory.objects.get(pk=world["summary_2"].pk).content


@pytest.mark.django_db(transaction=True)
def test_soft_forget_hides_but_keeps(project, agent_session, world):
    m = world["m"]
    report = forget_run(project=project, actor="user:1", selection=ForgetFilter(memory_ids=(m[SECRET].pk,)))
    assert report.counts == {"memories": 1} and report.ids["forgotten"] == [m[SECRET].pk]
    memory = Memory.objects.get(pk=m[SECRET].pk)
    assert memory.status == "forgotten" and memory.content == SECRET
    for preset in ("vector", "hybrid", "ripple"):
        found = memory_recall(project=project, query=RecallQuery(SECRET, k=10, preset=preset), actor="t")
        assert m[SECRET].pk not in [i.memory.pk for i in found.items], preset
    assert m[SECRET].pk not in [x.pk for x in session_graph(session=agent_session).memories]
    change = GraphChange.objects.get(op="memory.forgotten", object_id=m[SECRET].pk)
    assert change.before["status"] == "active" and change.after["status"] == "forgotten"
    # A soft forget can still be made hard.
    forget_run(project=project, actor="t", selection=ForgetFilter(memory_ids=(m[SECRET].pk,)), mode="hard")
    assert not Memory.objects.filter(pk=m[SECRET].pk).exists()


@pytest.fixture
def spread(project, agent_session):
    now = timezone.now()
    other = session_create(project=project, title="Other", actor="t")
    return {
        "old_fact": remember(agent_session, "Flight AB123 to Shanghai was cancelled last spring",
                             occurred_at=now - timedelta(days=300)),
        "new_fact": remember(agent_session, "Flight CD456 to Shanghai leaves on Friday morning"),
        "pref": remember(agent_session, "The traveller prefers aisle seats on long flights", kind="preference"),
        "other": remember(other, "The other session booked a table at the Bund restaurant"),
    }


@pytest.mark.django_db
@pytest.mark.parametrize(("selection", "expected"), [
    (ForgetFilter(kinds=("preference",)), ["pref"]),
    (ForgetFilter(before=timezone.now() - timedelta(days=30)), ["old_fact"]),
    (ForgetFilter(text_contains="SHANGHAI"), ["old_fact", "new_fact"]),
    (ForgetFilter(text_contains="shanghai", kinds=("fact",), before=timezone.now() - timedelta(days=30)),
     ["old_fact"]),
    (ForgetFilter(entity="Bund"), ["other"]),
])
def test_filters_select_what_they_say(project, spread, selection, expected):
    ids = forget_selection(project, selection, mode="soft")
    assert ids == sorted(spread[name].pk for name in expected)


@pytest.mark.django_db
def test_session_filter(project, agent_session, spread):
    ids = forget_selection(project, ForgetFilter(session_id=agent_session.pk), mode="soft")
    assert ids == sorted(spread[n].pk for n in ("old_fact", "new_fact", "pref"))


@pytest.mark.django_db
@pytest.mark.parametrize(("kwargs", "error", "field"), [
    ({"selection": ForgetFilter()}, ValidationFailed, "non_field_errors"),
    ({"selection": ForgetFilter(text_contains="a")}, ValidationFailed, "text_contains"),
    ({"selection": ForgetFilter(memory_ids=(10**9,))}, ValidationFailed, "memory_ids"),
    ({"selection": ForgetFilter(entity="Atlantis")}, ValidationFailed, "entity"),
    ({"selection": ForgetFilter(kinds=("gossip",))}, ValidationFailed, "kinds"),
    ({"selection": ForgetFilter(session_id=10**9)}, NotFoundError, None),
    ({"selection": ForgetFilter(text_contains="Shanghai"), "expect_memories": 5}, ValidationFailed,
     "expect_memories"),
    ({"selection": ForgetFilter(text_contains="Shanghai"), "mode": "erase"}, ValidationFailed, "mode"),
])
def test_bad_input_writes_nothing(project, spread, kwargs, error, field):
    before = db_state()
    with pytest.raises(error) as raised:
        forget_run(project=project, actor="t", **{"mode": "hard", **kwargs})
    if field:
        assert field in raised.value.extra
    assert db_state() == before


@pytest.mark.django_db
def test_dry_run_counts_equal_the_real_run_for_soft(project, spread):
    selection = ForgetFilter(text_contains="flight")
    before = db_state()
    dry = forget_run(project=project, actor="t", selection=selection, dry_run=True)
    assert db_state() == before
    real = forget_run(project=project, actor="t", selection=selection)
    assert dry.counts == real.counts == {"memories": 3} and dry.ids == real.ids


@pytest.mark.django_db
def test_hard_forget_counts_match_the_rows_removed(project, spread):
    before = db_counts()
    report = forget_run(project=project, actor="t", selection=ForgetFilter(text_contains="flight"), mode="hard")
    after = db_counts()
    assert before["Memory"] - after["Memory"] == report.counts["deleted"] == 3
    assert before["MemoryEmbedding"] - after["MemoryEmbedding"] == report.counts["embeddings"] == 3
    assert before["EntityMention"] - after["EntityMention"] == report.counts["mentions"]
    assert before["Entity"] - after["Entity"] == report.counts["entities"]


@pytest.mark.django_db
def test_command(project, spread):
    out, err = StringIO(), StringIO()
    call_command("forget_memories", "--project", "travel", "--text", "flight", "--hard", "--dry-run", stdout=out,
                 stderr=err)
    assert "forget: dry run" in out.getvalue() and "memories: 3" in out.getvalue() and "mode: hard" in out.getvalue()
    assert Memory.objects.count() == 4
    with pytest.raises(CommandError, match="--dry-run first, then again with --yes"):
        call_command("forget_memories", "--project", "travel", "--text", "flight", "--hard", stdout=StringIO())
    with pytest.raises(CommandError, match="not the 2 expected"):
        call_command("forget_memories", "--project", "travel", "--text", "flight", "--hard", "--yes", "--expect", "2",
                     stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="is not a date"):
        call_command("forget_memories", "--project", "travel", "--before", "yesterday", stdout=StringIO())
    with pytest.raises(CommandError, match="at least one filter"):
        call_command("forget_memories", "--project", "travel", stdout=StringIO(), stderr=StringIO())
    call_command("forget_memories", "--project", "travel", "--text", "flight", "--hard", "--yes", "--expect", "3",
                 stdout=StringIO(), stderr=err)
    assert Memory.objects.count() == 1 and "forget" in err.getvalue()
    call_command("forget_memories", "--project", "travel", "--before", "2999-01-01", "--kind", "fact",
                 stdout=StringIO(), stderr=StringIO())
    assert Memory.objects.get().status == "forgotten"


@pytest.mark.django_db
def test_hard_forget_in_chinese(project, agent_session):
    secret = "王小明的护照号码是E7654321。他住在北京朝阳区幸福路八号。"
    keep = [remember(agent_session, "我们十月十二日飞往上海。"), remember(agent_session, "外滩附近的酒店订了三晚。")]
    target = remember(agent_session, secret)
    summarise_run(project=project, actor="t", memory_ids=[keep[0].pk, target.pk, keep[1].pk])
    memory_recall(project=project, query=RecallQuery("王小明的护照", k=5), actor="t")
    assert rows_containing("E7654321")
    forget_run(project=project, actor="t", selection=ForgetFilter(text_contains="护照号码"), mode="hard")
    for text in ("E7654321", "幸福路", "王小明的护照号码是E7654321", "他住在北京朝阳区幸福路八号"):
        assert rows_containing(text) == {}, text
    summary = Memory.objects.get(kind="summary")
    assert "外滩" in summary.content and "护照" not in summary.content


@pytest.mark.django_db
def test_an_llm_summary_is_rewritten_and_its_old_text_scrubbed(project, agent_session, openai_server, settings):
    settings.MEMORY = {**settings.MEMORY, "LLM": "openai", "LLM_TIMEOUT": 0.5, "LLM_MAX_RETRIES": 0}
    target = remember(agent_session, SECRET)
    keep = remember(agent_session, KEEP_2)
    paraphrase = "VQ stores her travel document in the safe; three nights are booked near the Bund."
    openai_server.script_chat(answer_json({"summary": paraphrase}))
    report = summarise_run(project=project, actor="t", memory_ids=[target.pk, keep.pk])
    summary_id = report.ids["summary"][0]
    assert Memory.objects.get(pk=summary_id).content == paraphrase
    memory_recall(project=project, query=RecallQuery("travel document in the safe", k=5), actor="t")
    assert set(rows_containing("VQ stores her travel document")) >= {"memory_memory", "memory_graphchange",
                                                                    "memory_recalltrace"}
    forget_run(project=project, actor="t", selection=ForgetFilter(memory_ids=(target.pk,)), mode="hard")
    assert rows_containing("VQ stores her travel document") == {}
    summary = Memory.objects.get(pk=summary_id)
    assert summary.content == KEEP_2 and summary.dimensions["summary"]["method"] == "extractive"
    assert len(openai_server.chat_requests) == 1  # the rewrite did not call the LLM


@pytest.mark.django_db(transaction=True)
def test_hard_forget_change_rows_built_by_the_server_are_the_snapshots_and_are_published(project, agent_session, world):
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from memory.engine.events import project_group
    from memory.engine.snapshots import EDGE_FIELDS

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(project_group(project.pk), channel)
    selection = ForgetFilter(text_contains="quistberg")
    doomed = forget_selection(project, selection, mode="hard")
    edges = {e["id"]: e for e in Edge.objects.filter(Q(source_id__in=doomed) | Q(target_id__in=doomed))
             .values(*EDGE_FIELDS)}
    memories = {m["id"]: m for m in Memory.objects.filter(pk__in=doomed).values("id", "session_id", "kind", "status")}
    assert edges and len(memories) == 3
    last_before = GraphChange.objects.order_by("-id").values_list("id", flat=True).first()
    forget_run(project=project, actor="user:1", selection=selection, mode="hard")  # publishes at its commit

    written = list(GraphChange.objects.filter(id__gt=last_before).order_by("id"))
    ops = ("edge.deleted", "memory.deleted", "interaction.redacted")
    by_op = {op: [c for c in written if c.op == op] for op in ops}
    assert {c.object_id: c.before for c in by_op["edge.deleted"]} == {
        pk: {**edge, "rationale": REDACTED} for pk, edge in edges.items()}
    assert all(c.session_id == edges[c.object_id]["session_id"] and c.after is None for c in by_op["edge.deleted"])
    tombstones = {c.object_id: c.before for c in by_op["memory.deleted"]}
    for pk, memory in memories.items():  # the summary of only these goes too
        assert tombstones[pk] == {**memory, "content": REDACTED}
    assert by_op["interaction.redacted"] and all(c.after == {"content": REDACTED} and c.session_id
                                                  for c in by_op["interaction.redacted"])
    assert [c.id for c in written] == sorted(c.id for c in written) and written[-1].op == "maintenance.forget"
    assert written.index(by_op["edge.deleted"][-1]) < written.index(by_op["memory.deleted"][0])

    async def received() -> list[int]:
        ids = []
        while True:  # until nothing more arrives
            try:
                message = await asyncio.wait_for(layer.receive(channel), timeout=0.5)
            except TimeoutError:
                return ids
            ids += [change["id"] for change in message["changes"]]

    published = async_to_sync(received)()  # every change row reached the project's listeners, in id order
    assert published == [c.id for c in written]


@pytest.mark.parametrize(("selection", "whole"), [
    (ForgetFilter(session_id=7), (7,)),
    (ForgetFilter(session_ids=(9, 7), session_id=7), (7, 9)),
    (ForgetFilter(session_id=7, kinds=("fact",)), ()),
    (ForgetFilter(session_id=7, text_contains="garden"), ()),
    (ForgetFilter(session_id=7, after=timezone.now()), ()),
    (ForgetFilter(session_id=7, before=timezone.now()), ()),
    (ForgetFilter(session_id=7, entity="Odalys"), ()),
    (ForgetFilter(session_id=7, memory_ids=(1,)), ()),
    (ForgetFilter(session_id=7, sensitive_only=True), ()),
    (ForgetFilter(text_contains="garden"), ()),  # no session named: never "every session, whole"
])
def test_a_session_is_covered_whole_when_nothing_else_narrows_the_filter(selection, whole):
    assert selection.whole_sessions() == whole


PERSONAL = "lol unrelated but my PIN is 8830-2291 and Odalys Brennecke lives at 14 Quarry Lane"


def _turn(session, content: str, status: str, **fields) -> Interaction:
    return Interaction.objects.create(project=session.project, session=session, kind="user_input", content=content,
                                      occurred_at=timezone.now(), status=status, **fields)


@pytest.mark.django_db(transaction=True)
def test_a_whole_session_goes_with_every_interaction_and_its_links_elsewhere(project, agent_session, world):
    """The second session held a duplicate merged into the first session's memory (which took its source
    along): deleting the second session whole takes its duplicate, all its interactions, whatever their
    status, and the link, and leaves the survivor and everything of the first session as they were."""
    other, m = world["other"], world["m"]
    _turn(other, "ok", "filtered", reason="chit-chat with no information")
    _turn(other, PERSONAL, "filtered", reason="off-task")
    _turn(other, "waiting to be processed about Quarry Lane parking", "pending")
    theirs = set(Interaction.objects.filter(session=other).values_list("id", flat=True))
    survivor_sources = set(m[SECRET].sources.values_list("id", flat=True))
    assert survivor_sources & theirs, "the merge gave the survivor the duplicate's source"
    facts = Memory.objects.filter(session=agent_session).exclude(kind="summary").order_by("id")
    first_session = {"memories": list(facts.values_list("id", "status", "content")), "interactions": list(
        Interaction.objects.filter(session=agent_session).order_by("id").values_list("id", "content", "status"))}
    selection = ForgetFilter(session_id=other.pk)
    before = db_state()

    dry = forget_run(project=project, actor="user:1", selection=selection, mode="hard", dry_run=True)
    assert db_state() == before, "the dry run changed nothing"
    real = forget_run(project=project, actor="user:1", selection=selection, mode="hard",
                      expect_memories=dry.counts["memories"])
    assert not AgentSession.objects.filter(pk=other.pk).exists()
    assert not Interaction.objects.filter(pk__in=theirs).exists()
    assert not Memory.objects.filter(pk=world["duplicate"].pk).exists()
    assert set(m[SECRET].sources.values_list("id", flat=True)) == survivor_sources - theirs
    assert Memory.objects.get(pk=m[SECRET].pk).content == SECRET, "the first session's own statement stays"
    assert rows_containing("8830-2291") == {} and rows_containing("Quarry Lane") == {}
    assert rows_containing("Second session") == {} and rows_containing("Hotel logistics") == {}  # title, task
    assert not GraphChange.objects.filter(session_id=other.pk).exists()
    assert GraphChange.objects.get(op="session.deleted").before == {"id": other.pk}
    assert list(facts.values_list("id", "status", "content")) == first_session["memories"]
    assert list(Interaction.objects.filter(session=agent_session).order_by("id")
                .values_list("id", "content", "status")) == first_session["interactions"]
    assert dry.counts == real.counts and dry.ids == real.ids
    assert real.counts["memories"] == 1 and real.counts["interactions_deleted"] == len(theirs) == 4
    assert real.counts["sessions_deleted"] == 1 and real.ids["sessions_deleted"] == [other.pk]


@pytest.mark.django_db(transaction=True)
def test_a_store_namespace_deleted_whole_takes_its_items(project):
    from memory.engine.store.items import item_put
    from memory.models import StoreItem

    put = item_put(project=project, namespace=["people", "odalys"], key="pin", actor="t", wait=True,
                   value={"text": "Odalys Brennecke keeps her PIN 8830-2291 on a card in her wallet."})
    session = put.item.session
    report = forget_run(project=project, actor="t", selection=ForgetFilter(session_id=session.pk), mode="hard")
    assert not StoreItem.objects.exists() and not AgentSession.objects.filter(pk=session.pk).exists()
    assert rows_containing("8830-2291") == {} and rows_containing("odalys") == {}
    assert report.counts["store_items_deleted"] == 1 and report.counts["sessions_deleted"] == 1


@pytest.mark.django_db
def test_the_scan_reports_a_filtered_turns_text_left_behind(project, agent_session):
    """The strings the job looks for after deleting a session whole come from its filtered turns too: if
    one is left (here: a forget narrowed to its facts, which leaves the session), the scan says where."""
    from memory.engine.maintenance.verify import distinctive_strings, residues_scan

    kept = remember(agent_session, "Sow the tomatoes indoors in early March.")
    filtered = _turn(agent_session, PERSONAL, "filtered", reason="off-task")
    _turn(agent_session, "thanks", "filtered", reason="chit-chat with no information")
    strings = distinctive_strings(project, {kept.pk}, (agent_session.pk,))
    assert {"8830-2291", "brennecke"} <= set(strings)
    assert "thanks" not in strings  # everyone's word (and too short): proves nothing when found
    forget_run(project=project, actor="t", mode="hard",
               selection=ForgetFilter(session_id=agent_session.pk, kinds=("fact",)))
    assert Interaction.objects.get(pk=filtered.pk).content == PERSONAL
    residues = residues_scan(project, strings).residues
    assert {"table": "memory_interaction", "column": "content", "row": filtered.pk} in residues


@pytest.mark.django_db
def test_copies_of_a_forgotten_turn_are_emptied_and_never_processed(project, agent_session):
    """The same turn sent again backs no memory: filtered as a repeat, failed, or still waiting. Each loses
    its content and metadata like the source itself, and one waiting or failed is settled (filtered): a
    later run would write the forgotten memory again. A turn that only mentions a word of it is kept."""
    from memory.engine.pipeline import interaction_process_with_followers

    memory = remember(agent_session, SECRET)
    repeat = _turn(agent_session, SECRET, "filtered", reason=f"repeats memory #{memory.pk}", metadata={"turn": 3})
    waiting = _turn(agent_session, f"  {SECRET} ", "pending", metadata={"from": "phone", "text": SECRET})
    failed = _turn(agent_session, SECRET, "failed", error=f"embedder timed out on {SECRET[:40]}")
    other = _turn(agent_session, "Book the hotel near the main station for Friday.", "pending")
    forget_run(project=project, actor="t", selection=ForgetFilter(memory_ids=(memory.pk,)), mode="hard")
    rows = {i.pk: i for i in Interaction.objects.filter(pk__in=[repeat.pk, waiting.pk, failed.pk, other.pk])}
    for copy in (repeat, waiting, failed):
        row = rows[copy.pk]
        assert (row.content, row.metadata, row.status) == (REDACTED, {}, "filtered"), copy.status
    assert rows[waiting.pk].reason == rows[failed.pk].reason == REDACTED and rows[failed.pk].error == ""
    assert rows[waiting.pk].processed_at is not None
    assert rows[other.pk].status == "pending" and rows[other.pk].content == other.content
    assert rows_containing("X9983451") == {}
    for copy in (waiting, failed):
        assert interaction_process_with_followers(interaction_id=copy.pk, followers=0) is None  # nothing to do
    assert not Memory.objects.filter(content__contains=REDACTED).exists()
