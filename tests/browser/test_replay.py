"""Recall replay on the session page: run a recall, step through its hops and check what lights against the
stored trace, open the path of a memory reached at hop 2, and compare two recalls against their traces."""

from __future__ import annotations

import pytest

from .conftest import (
    api_get,
    api_post,
    in_database,
    login,
    new_session,
    open_session,
    other_project,
    post_interaction,
    screenshot,
    until,
)

CHAIN = (
    "The conference in Porto runs from 3 to 5 June, so the travel dates are fixed",
    "Flight request sent to the booking service for Lisbon to Porto on 2 June",
    "Weather forecast says sunny skies all week",
    "The booking service answered: the 2 June flight is sold out completely",
    "Lunch ideas: grilled sardines or a francesinha",
    "Budget reminder: keep every expense below 900 euros",
)


@pytest.fixture(scope="module")
def hall(site, django_db_blocker):
    return other_project(site, django_db_blocker, "replay-web", "Replay hall")


def _recall(hall, body: dict) -> dict:
    return api_post(hall, "recall/", body)


def _draw_chain(memory_ids: list[int]) -> None:
    """A person's edges: the dates condition the request, the request caused the answer."""
    from curation.services import edge_draw
    from memory.models import Memory

    project = Memory.objects.get(pk=memory_ids[0]).project
    for source, target, relation in ((0, 1, "conditional"), (1, 3, "causal")):
        edge_draw(project=project, actor="user:alice", source_id=memory_ids[source], target_id=memory_ids[target],
                  relation=relation)


@pytest.fixture(scope="module")
def chain_session(hall, django_db_blocker):
    session_id = new_session(hall, "Replay: Porto conference")
    ids = [post_interaction(hall, session_id, text)["memory_ids"][0] for text in CHAIN]
    in_database(django_db_blocker, _draw_chain, ids)
    return session_id, ids


def _lit(page) -> set[int]:
    return set(page.evaluate("cw.cy.nodes('.replay-on').map(n => n.data('mid'))"))


def _expected(trace: dict, step: int) -> set[int]:
    last = max(s["hop"] for s in trace["steps"]) + 1
    if step == last:
        return {e["memory_id"] for e in trace["ranking"]}
    return {a["memory_id"] for s in trace["steps"] if s["hop"] <= step for a in s["arrivals"]}


def test_a_recall_run_from_the_page_replays_step_by_step_as_its_trace_says(page, hall, chain_session):
    session_id, ids = chain_session
    login(page, hall, hall.member)
    open_session(page, hall, session_id)
    page.click("#btn-recall")
    page.fill("#replay-query", "why is the flight sold out")
    page.click("#replay-run")
    page.locator("#replay-ranking tbody tr").first.wait_for(timeout=10_000)
    newest = api_get(hall, f"recalls/?session={session_id}&limit=1")["results"][0]
    assert newest["query"] == "why is the flight sold out" and newest["actor_name"] == "alice"
    trace = api_get(hall, f"recalls/{newest['id']}/")
    last = max(s["hop"] for s in trace["steps"]) + 1
    assert page.evaluate("document.documentElement.dataset.replayStep") == str(last)
    assert _lit(page) == _expected(trace, last)
    ranked_rows = page.locator("#replay-ranking tbody tr").evaluate_all("rows => rows.map(r => +r.dataset.memoryId)")
    assert ranked_rows == [e["memory_id"] for e in trace["ranking"]]
    page.fill("#replay-step", "0")  # the slider
    page.dispatch_event("#replay-step", "input")
    assert _lit(page) == _expected(trace, 0) == {s["memory_id"] for s in trace["seeds"]}
    assert set(page.evaluate("cw.cy.nodes('.replay-seed').map(n => n.data('mid'))")) == _expected(trace, 0)
    screenshot(page, "replay-step-0")
    for step in range(1, last + 1):
        page.click("#replay-next")
        assert page.evaluate("document.documentElement.dataset.replayStep") == str(step)
        assert _lit(page) == _expected(trace, step), step
        carried = {a["edge_id"] for s in trace["steps"] if 1 <= s["hop"] <= step for a in s["arrivals"]}
        if step == last:  # the ranking: only the edges on the ranked memories' paths
            carried = {p["edge_id"] for e in trace["ranking"] for p in e["path"] if p.get("edge_id")}
        shown = set(page.evaluate("cw.cy.edges('.replay-carry').map(e => e.data('eid'))"))
        assert shown == carried, step
    screenshot(page, "replay-ranking")
    page.click("#replay-close")
    assert page.locator("#replay").is_hidden() and page.evaluate("cw.cy.nodes('.ghost').length") == 0
    assert page.evaluate("cw.cy.nodes('.replay-off').length") == 0


def test_the_path_of_a_memory_reached_at_hop_two_reads_from_its_seed(page, hall, chain_session):
    session_id, ids = chain_session
    answer = _recall(hall, {"query": "the 2 June flight is sold out completely", "session_id": session_id, "k": 6,
                            "params": {"seed_count": 1, "max_hops": 2, "use_vector": False, "use_dimensions": False}})
    trace = api_get(hall, f"recalls/{answer['recall_id']}/")
    far = [e for e in trace["ranking"] if len(e["path"]) == 2]
    assert far, [e["path"] for e in trace["ranking"]]
    entry = far[0]
    login(page, hall, hall.member)
    open_session(page, hall, session_id)
    page.click("#btn-recall")
    page.locator(f"#replay-list li[data-recall-id='{answer['recall_id']}'] .recall-open").click()
    page.click("#replay-prev")
    page.click("#replay-prev")  # hop 1: what arrived, from where, through which edge
    hop_one = {a["memory_id"] for s in trace["steps"] if s["hop"] == 1 for a in s["arrivals"]}
    listed = page.locator("#replay-step-detail li").evaluate_all("items => items.map(i => +i.dataset.memoryId)")
    assert set(listed) == hop_one and page.evaluate("document.documentElement.dataset.replayStep") == "1"
    screenshot(page, "replay-hop-1")
    row = page.locator(f"#replay-ranking tr[data-memory-id='{entry['memory_id']}']")
    row.focus()
    page.keyboard.press("Enter")  # rows answer the keyboard as well as the mouse
    path = page.inner_text("#replay-path .path")
    first, second = entry["path"]
    assert path.startswith(f"seed #{first['from']} (full-text rank 1)"), path
    assert f"#{first['to']}" in path and path.endswith(f"#{second['to']}") and second["to"] == entry["memory_id"]
    assert page.evaluate("cw.app.selection.id") == entry["memory_id"]
    assert page.locator(f"#replay-context li[data-memory-id='{entry['memory_id']}']").count() == 1
    screenshot(page, "replay-why-hop-2")


LEXICAL = {"use_vector": False, "use_dimensions": False}
SHAPED_QUESTIONS = [
    # question, turns, the ranking expected (turn indexes), the raised turn, how it is asked, chip and reason
    # (EN, ZH), screenshot
    ("When is Pickle booked in for her radioiodine treatment?",
     ("Pickle's radioiodine treatment for her thyroid is the best option, the vet thinks.",
      "Booked it. The specialist unit at Langford, Tuesday 4th August."), [1, 0], 1,
     {"preset": "hybrid", "k": 2, "params": LEXICAL}, ("says when ×1.5", "写明时间 ×1.5"),
     ("its activation was multiplied by 1.5", "排序前它的激活值乘以 1.5"), "replay-when-question"),
    ("How much was the deposit for the caterer?",
     ("We still owe the caterer the deposit for the wedding dinner, the caterer said on the phone.",
      "Paid the caterer this morning: £450 by bank transfer."), [1, 0], 1,
     {"preset": "hybrid", "k": 2, "params": LEXICAL}, ("states an amount ×1.5", "写明数额 ×1.5"),
     ("its activation was multiplied by 1.5", "排序前它的激活值乘以 1.5"), "replay-how-much-question"),
    ("Why was the Old Duke gig cancelled?",
     ("Raj: Disaster. Marcus has quit, he is moving to Manchester to be with his girlfriend.",
      "Hannah: Ah, that explains the phone ringing all evening.",
      "Raj: So the Old Duke gig is off. I rang the landlord this morning and cancelled."), [2, 0, 1], 0,
     {"preset": "ripple", "k": 3, "params": {**LEXICAL, "seed_count": 1}}, ("told before, asked why ×3",
                                                                            "先前说过，问的是原因 ×3"),
     ("the same speaker said this before a turn that matched it", "回溯得到的激活值乘以 3"), "replay-why-question"),
    ("Is Gary coming to fix the fence on Tuesday?",
     ("Hannah: Is Gary definitely coming to fix the fence on Tuesday?",
      "Raj: Yes, first thing, with two new posts.",
      "Hannah: Gary fixed my fence gate on Tuesday last year."), [2, 0, 1], 0,
     {"preset": "ripple", "k": 3, "params": {**LEXICAL, "seed_count": 1}}, ("asks, does not tell ×0.7",
                                                                            "是提问，不含答案 ×0.7"),
     ("This memory is itself a question and holds no answer", "这条记忆本身是一个提问"), "replay-asking-memory"),
    ("fence on Tuesday",
     ("Raj: Fence, Tuesday.", "Raj: The fence goes up on Tuesday, Gary brings two new posts and the concrete."),
     [1, 0], 0, {"preset": "hybrid", "k": 2, "params": LEXICAL}, ("a word or two ×0.7", "只有一两个词 ×0.7"),
     ("This memory holds only a word or two", "这条记忆只有一两个词"), "replay-short-memory"),
    ("the logs of branch py312-upgrade",
     (('ci_logs(branch="py312-upgrade", job="test")', "tool_call"),
      ("Job failed on image python:3.9-slim: requires a Python >= 3.12.", "tool_result")),
     [1, 0], 0, {"preset": "ripple", "k": 2, "params": LEXICAL}, ("by its kind ×0.5", "按类型 ×0.5"),
     ("weighs memories of this kind by 0.5", "把这一类型的记忆乘以 0.5"), "replay-tool-call"),
]


@pytest.mark.parametrize(("question", "turns", "expected", "raised", "asked", "chip", "why", "shot"),
                         SHAPED_QUESTIONS, ids=["when", "how-much", "why", "asking", "short", "tool-call"])
def test_a_shaped_question_shows_which_memories_rose_because_they_hold_its_answer(page, hall, question, turns,
                                                                                    expected, raised, asked,
                                                                                    chip, why, shot):
    """The replay says why a turn rose: the one holding the date (or the amount) above the better text match,
    or the cause its speaker told before the turn a "why" question matched; or why one sank: the best text
    match is itself a question, a word or two, or a tool call. A chip on its row and a sentence under its score;
    the other turns have neither."""
    session_id = new_session(hall, f"Replay: {shot}")
    # a turn is its text (said by the user), or (text, interaction kind)
    memory_ids = [post_interaction(hall, session_id, *(turn if isinstance(turn, tuple) else (turn,)))["memory_ids"][0]
                  for turn in turns]
    answer = _recall(hall, {"query": question, "session_id": session_id, **asked})
    trace = api_get(hall, f"recalls/{answer['recall_id']}/")
    assert [e["memory_id"] for e in trace["ranking"]] == [memory_ids[i] for i in expected]
    raised_id, others = memory_ids[raised], [m for i, m in enumerate(memory_ids) if i != raised]
    login(page, hall, hall.member)
    open_session(page, hall, session_id)
    for language, chip_text, reason, suffix in (("en", chip[0], why[0], ""), ("zh-hans", chip[1], why[1], "-zh")):
        if language != "en":
            with page.expect_navigation():
                page.select_option("#language-select", language)
            page.wait_for_selector("html[data-graph-ready='1']", state="attached")
        page.click("#btn-recall")
        page.locator(f"#replay-list li[data-recall-id='{answer['recall_id']}'] .recall-open").click()
        page.locator("#replay-ranking tbody tr").first.wait_for(timeout=10_000)
        assert page.locator(f"#replay-ranking tr[data-memory-id='{raised_id}'] .chip").inner_text() == chip_text
        for other in others:
            assert page.locator(f"#replay-ranking tr[data-memory-id='{other}'] .chip").count() == 0
        page.locator(f"#replay-ranking tr[data-memory-id='{raised_id}']").click()
        assert reason in page.inner_text("#replay-path")
        screenshot(page, shot + suffix)
    with page.expect_navigation():
        page.select_option("#language-select", "en")


def test_two_recalls_compared_show_what_entered_left_and_moved(page, hall, chain_session):
    session_id, _ = chain_session
    body = {"query": "flight sold out", "session_id": session_id, "k": 4}
    before = _recall(hall, {**body, "preset": "hybrid"})["recall_id"]
    after = _recall(hall, {**body, "preset": "ripple", "params": {"seed_count": 1}})["recall_id"]
    first, second = api_get(hall, f"recalls/{before}/"), api_get(hall, f"recalls/{after}/")
    rank_a = {e["memory_id"]: e["rank"] for e in first["ranking"]}
    rank_b = {e["memory_id"]: e["rank"] for e in second["ranking"]}
    login(page, hall, hall.member)
    open_session(page, hall, session_id)
    page.click("#btn-recall")
    page.locator(f"#replay-list li[data-recall-id='{before}'] .recall-compare").click()
    page.locator(f"#replay-list li[data-recall-id='{after}'] .recall-open").click()
    page.locator("#replay-compare").wait_for(timeout=10_000)

    def marked(column: int, cls: str) -> set[int]:
        return set(page.locator(f"#replay-compare .compare-columns > div:nth-child({column}) li.{cls}")
                   .evaluate_all("items => items.map(i => +i.dataset.memoryId)"))

    assert marked(2, "entered") == set(rank_b) - set(rank_a)
    assert marked(1, "left") == set(rank_a) - set(rank_b)
    assert marked(2, "moved") == {m for m in set(rank_a) & set(rank_b) if rank_a[m] != rank_b[m]}
    assert set(page.evaluate("cw.cy.nodes('.cmp-entered').map(n => n.data('mid'))")) == set(rank_b) - set(rank_a)
    screenshot(page, "replay-compare")
    page.click("#replay-rerun")
    until(page, f"cw.app.replay.replay.id > {after} && document.querySelector('#replay-compare') !== null")
    assert api_get(hall, f"recalls/?session={session_id}&limit=1")["results"][0]["id"] > after


def test_the_replay_speaks_chinese_and_the_panels_link_to_recalls(page, hall, chain_session):
    session_id, ids = chain_session
    answer = _recall(hall, {"query": "flight sold out", "session_id": session_id, "k": 4})
    login(page, hall, hall.member)
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    open_session(page, hall, session_id)
    returned = api_get(hall, f"recalls/{answer['recall_id']}/")["ranking"][0]["memory_id"]
    page.evaluate(f"cw.app.select({{type: 'memory', id: {returned}}})")
    link = page.locator(f"#panel-recalls button[data-recall-id='{answer['recall_id']}']")
    link.wait_for(timeout=5000)
    link.click()
    page.locator("#replay-ranking tbody tr").first.wait_for(timeout=10_000)
    assert page.inner_text("#replay-play") == "播放" and "召回" in page.inner_text("#replay .replay-title")
    screenshot(page, "replay-zh")
    page.goto(hall.url + f"/p/{hall.project_slug}/recalls/")
    assert page.inner_text("h1") == "已存召回"
    screenshot(page, "recalls-page-zh")
    with page.expect_navigation():
        page.select_option("#language-select", "en")


def test_the_projects_recalls_page_opens_a_recall_in_its_sessions_replay(page, hall, chain_session):
    session_id, _ = chain_session
    answer = _recall(hall, {"query": "conference dates in Porto", "k": 3})  # project-wide: opens where it found them
    login(page, hall, hall.member)
    page.goto(hall.url + f"/p/{hall.project_slug}/")
    page.click("#recalls-link")
    row = page.locator(f"#recalls-table tr[data-recall-id='{answer['recall_id']}']")
    assert "conference dates in Porto" in row.inner_text()
    screenshot(page, "recalls-page")
    row.locator("a", has_text="Replay").click()
    page.wait_for_selector("html[data-graph-complete='1']", state="attached", timeout=30_000)
    page.locator("#replay-ranking tbody tr").first.wait_for(timeout=10_000)
    assert page.url.endswith(f"/sessions/{session_id}/?recall={answer['recall_id']}")
    assert page.evaluate("cw.app.replay.replay.id") == answer["recall_id"]


def _curate_kind(memory_ids: list[int]) -> None:
    from curation.services import memory_update
    from memory.models import Memory

    for memory_id in memory_ids:
        memory = Memory.objects.get(pk=memory_id)
        memory_update(project=memory.project, actor="user:alice", memory_id=memory_id,
                      kind="event" if memory.kind != "event" else "fact")


def test_the_changed_since_badge_counts_only_changes_to_what_the_recall_used(page, hall, chain_session,
                                                                             django_db_blocker):
    """Issue 45 #6: the badge counted every change of the project since the recall ran."""
    _, chain_ids = chain_session
    session_id = new_session(hall, "Replay: dentist")
    for text in ("The dentist appointment is on Tuesday at 09:15 at the Lapa clinic",
                 "The dentist asked to bring the X-ray images from last year"):
        post_interaction(hall, session_id, text)
    answer = _recall(hall, {"query": "when is the dentist appointment", "session_id": session_id, "k": 2})
    trace = api_get(hall, f"recalls/{answer['recall_id']}/")
    unrelated = [i for i in chain_ids if str(i) not in trace["memories"]][:2]
    assert len(unrelated) == 2
    in_database(django_db_blocker, _curate_kind, unrelated)  # changes elsewhere in the project
    assert api_get(hall, f"recalls/{answer['recall_id']}/")["changes_since"] == 0
    in_database(django_db_blocker, _curate_kind, [trace["ranking"][0]["memory_id"]])  # one to what it returned
    assert api_get(hall, f"recalls/{answer['recall_id']}/")["changes_since"] == 1

    login(page, hall, hall.member)
    open_session(page, hall, session_id, f"?recall={answer['recall_id']}")
    badge = page.locator("#replay-changed")
    badge.wait_for(timeout=10_000)
    assert badge.inner_text() == "since it ran: 1 change to what it used"
    assert "changes elsewhere in the graph do not count" in badge.get_attribute("title")
    screenshot(page, "replay-changed-since")
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    open_session(page, hall, session_id, f"?recall={answer['recall_id']}")
    badge.wait_for(timeout=10_000)
    assert badge.inner_text() == "运行后，它用到的记忆及其边有 1 处变更"
    assert "不计在内" in badge.get_attribute("title")
    screenshot(page, "replay-changed-since-zh")
    with page.expect_navigation():
        page.select_option("#language-select", "en")
