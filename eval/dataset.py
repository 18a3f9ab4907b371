"""The labelled conversations in eval/data/*.json: typed access and strict validation.

Each file is one project: sessions of interactions with local ids ("t1", "t2", …, unique in the
file), questions whose `needs` name the interactions required to answer them, and the true
dependency edges between interactions (parent = depended on, child = depends on it).

Two styles (`"style"`, default "agent"): agent sessions (an agent at work, with tool calls) and
"conversation" files (two people chatting over weeks: each turn a `user_input` whose content starts
with the speaker's name), which may be longer and ask more questions. Every session of a committed file
is dated (`"date"`): an undated one is placed a day after the previous one, counted back from the day the
eval runs, so its yearless dates ("1 April", "3 月 18 日") would resolve to a different year from one run to
the next.
Question types: fact (single hop), chain (multi-hop: an answer that depends on another turn),
constraint, superseded (a value that changed: `superseded` lists the stale turns), cross_session,
temporal ("when did …": the turn that dates it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
# Agent traces with what the agent's side knows: declared links, recall-then-act turns (eval/links.py).
LINKS_DIR = Path(__file__).resolve().parent / "links"
# Written after the engine's weights and thresholds were set, by writers who had not read the engine: a change
# is tuned on DATA_DIR and only checked here (eval/heldout/README.md).
HELDOUT_DIR = Path(__file__).resolve().parent / "heldout"
LANGUAGES = ("en", "zh")
KINDS = ("user_input", "assistant_output", "agent_thought", "tool_call", "tool_result", "observation", "system")
QUESTION_TYPES = ("chain", "fact", "constraint", "superseded", "cross_session", "temporal")
# In the files of eval/links only (agent traces with what the agent's side knows): after a value changed, a
# question about what depended on it (`changed`: the stale parent; `needs`: the dependent and the change),
# and one about something whose parents did not change (`needs`: it), to count false alarms.
LINK_QUESTION_TYPES = ("cascade", "steady")
EDGE_RELATIONS = ("causal", "temporal", "conditional", "elaborates", "supersedes", "part_of", "references")
DEFAULT_K = 5
# Per file style: "agent" sessions (an agent at work: tools, decisions) or "conversation" (two people
# chatting over weeks, with dated sessions): (interactions per session, questions, labelled edges).
STYLES = ("agent", "conversation")
LIMITS = {
    "agent": {"interactions": (15, 40), "questions": (8, 15), "edges": (10, 60)},
    "conversation": {"interactions": (15, 60), "questions": (20, 80), "edges": (10, 60)},
}

FILE_KEYS = {"project", "language", "sessions", "questions", "edges"}
FILE_OPTIONAL = {"style"}
SESSION_KEYS = {"key", "title", "task", "interactions"}
SESSION_OPTIONAL = {"date"}  # ISO date the session happened; else one day after the last (see above)
INTERACTION_KEYS = {"id", "kind", "content"}
QUESTION_KEYS = {"id", "text", "scope", "needs", "type"}
QUESTION_OPTIONAL = {"k", "superseded", "changed"}
# eval/links files: the framework's id, the links it declares ({"to": local id, "relation"}), and a recall the
# agent ran right before this turn ({"query": text, "used": [local ids of what it acted on, when it knows]}).
LINK_INTERACTION_KEYS = {"external_id", "links", "recall"}


@dataclass(frozen=True)
class DeclaredLink:
    to: str  # the local id of the interaction it depends on
    relation: str = "causal"


@dataclass(frozen=True)
class RecallBefore:
    query: str
    used: tuple[str, ...] = ()  # local ids whose memories the agent acted on; empty when it does not say


@dataclass(frozen=True)
class EvalInteraction:
    id: str
    kind: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    external_id: str = ""
    links: tuple[DeclaredLink, ...] = ()
    recall: RecallBefore | None = None


@dataclass(frozen=True)
class EvalSession:
    key: str
    title: str
    task: str
    interactions: list[EvalInteraction]
    date: str | None = None


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    scope: str  # "project" or a session key
    needs: list[str]
    type: str
    k: int = DEFAULT_K
    superseded: list[str] = field(default_factory=list)  # stale interactions: never relevant
    changed: list[str] = field(default_factory=list)  # cascade questions: the parents whose value changed


@dataclass(frozen=True)
class LabelledEdge:
    parent: str
    child: str
    relation: str


@dataclass(frozen=True)
class EvalFile:
    name: str  # file stem, e.g. "travel_lisbon_en"
    project: str
    language: str
    sessions: list[EvalSession]
    questions: list[Question]
    edges: list[LabelledEdge]
    style: str = "agent"  # or "conversation"

    @property
    def interactions(self) -> list[EvalInteraction]:
        return [i for s in self.sessions for i in s.interactions]

    def session_of(self) -> dict[str, str]:
        """Local interaction id -> session key."""
        return {i.id: s.key for s in self.sessions for i in s.interactions}


def load_files(pattern: str = "*.json", directory: Path | None = None, links: bool | None = None) -> list[EvalFile]:
    """Every matching file, sorted by name; ValueError naming the file and the problem on bad data."""
    folder = directory or DATA_DIR
    paths = sorted(folder.glob(pattern if pattern.endswith(".json") else f"{pattern}.json"))
    if not paths:
        raise ValueError(f"no evaluation files match {pattern!r} in {folder}")
    return [load_file(path, links) for path in paths]


def load_file(path: Path, links: bool | None = None) -> EvalFile:
    """One file; those of eval/links (or `links`) may carry what the agent's side knows (LINK_INTERACTION_KEYS)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path.name}: not valid UTF-8 JSON ({exc})") from exc
    problems = validate(data, links=path.resolve().parent == LINKS_DIR if links is None else links)
    if problems:
        raise ValueError(f"{path.name}: " + "; ".join(problems))
    return _build(path.stem, data)


def validate(data: Any, links: bool = False) -> list[str]:
    """All problems found in one file's data (empty when it is valid). `links`: a file of eval/links."""
    if not isinstance(data, dict):
        return ["the top level must be a JSON object"]
    problems = _keys(data, FILE_KEYS, FILE_OPTIONAL, "file")
    if problems:
        return problems
    style = data.get("style", "agent")
    if style not in STYLES:
        return [f"style {style!r} is not one of {STYLES}"]
    limits = LIMITS[style]
    if data["language"] not in LANGUAGES:
        problems.append(f"language {data['language']!r} is not one of {LANGUAGES}")
    if not isinstance(data["project"], str) or not data["project"].strip():
        problems.append("project must be a non-empty string")
    ids, session_keys = _validate_sessions(data["sessions"], problems, limits["interactions"], links)
    _validate_questions(data["questions"], ids, session_keys, problems, limits["questions"], links)
    _validate_edges(data["edges"], ids, problems, limits["edges"])
    if not problems:
        _validate_tool_edges(data, problems)
    return problems


def _validate_tool_edges(data: dict, problems: list[str]) -> None:
    """Labelling rule: a tool result depends on the call it answers, so every such pair is a labelled
    edge (left to the labeller's choice, most pairs had gone unlabelled and the engine's correct edges
    were counted wrong)."""
    labelled = {(e["parent"], e["child"]) for e in data["edges"]}
    for session in data["sessions"]:
        calls: dict[str, str] = {}
        for row in session["interactions"]:
            call_id = (row.get("metadata") or {}).get("call_id")
            if row["kind"] == "tool_call":
                calls[call_id] = row["id"]
            elif row["kind"] == "tool_result" and (calls.get(call_id), row["id"]) not in labelled:
                problems.append(f"tool_result {row['id']}: label the edge from its call {calls.get(call_id)}")


def _validate_sessions(sessions: Any, problems: list[str], sizes: tuple[int, int],
                       links: bool = False) -> tuple[dict[str, str], set[str]]:
    ids: dict[str, str] = {}  # local id -> session key
    keys: set[str] = set()
    if not isinstance(sessions, list) or not sessions:
        problems.append("sessions must be a non-empty list")
        return ids, keys
    for index, session in enumerate(sessions):
        where = f"session #{index}"
        if not isinstance(session, dict) or _keys(session, SESSION_KEYS, SESSION_OPTIONAL, where, problems):
            continue
        if "date" in session and not _iso_date(session["date"]):
            problems.append(f"{where}: date must be an ISO date (YYYY-MM-DD)")
        key = session["key"]
        if key in keys or key == "project":
            problems.append(f"{where}: session key {key!r} is repeated or reserved")
        keys.add(key)
        rows = session["interactions"]
        if not isinstance(rows, list) or not sizes[0] <= len(rows) <= sizes[1]:
            problems.append(f"session {key}: needs {sizes[0]}-{sizes[1]} interactions")
            continue
        for row in rows:
            _validate_interaction(row, key, ids, problems, links)
        _validate_tool_pairs([r for r in rows if isinstance(r, dict)], key, problems)
    return ids, keys


def _validate_tool_pairs(rows: list[dict], session_key: str, problems: list[str]) -> None:
    """Tool calls and results carry `tool` and `call_id`; each result answers an earlier call."""
    calls: dict[str, str] = {}
    for row in rows:
        if row.get("kind") not in ("tool_call", "tool_result"):
            continue
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        where = f"session {session_key} interaction {row.get('id')}"
        if not meta.get("tool") or not meta.get("call_id"):
            problems.append(f"{where}: a {row['kind']} needs metadata 'tool' and 'call_id'")
        elif row["kind"] == "tool_call":
            calls[meta["call_id"]] = meta["tool"]
        elif calls.get(meta["call_id"]) != meta["tool"]:
            problems.append(f"{where}: tool_result {meta['call_id']!r} answers no earlier {meta['tool']} call")


def _validate_interaction(row: Any, session_key: str, ids: dict[str, str], problems: list[str],
                          links: bool = False) -> None:
    where = f"session {session_key} interaction {row.get('id') if isinstance(row, dict) else row!r}"
    optional = {"metadata", *(LINK_INTERACTION_KEYS if links else ())}
    if not isinstance(row, dict) or _keys(row, INTERACTION_KEYS, optional, where, problems):
        return
    if links:
        _validate_agent_side(row, ids, where, problems)  # before its own id: it may name earlier ones only
    if row["id"] in ids:
        problems.append(f"{where}: id is not unique in the file")
    ids[row["id"]] = session_key
    if row["kind"] not in KINDS:
        problems.append(f"{where}: unknown kind {row['kind']!r}")
    if not isinstance(row["content"], str) or not row["content"].strip():
        problems.append(f"{where}: content must be a non-empty string")
    if not isinstance(row.get("metadata", {}), dict):
        problems.append(f"{where}: metadata must be an object")


def _validate_agent_side(row: dict, earlier: dict[str, str], where: str, problems: list[str]) -> None:
    """The framework's id, its declared links (to earlier interactions, a dependency relation) and a recall
    before it (a query, and what it used among earlier interactions)."""
    if not isinstance(row.get("external_id", ""), str):
        problems.append(f"{where}: external_id must be a string")
    for link in row.get("links", []) if isinstance(row.get("links", []), list) else [None]:
        if not isinstance(link, dict) or set(link) - {"to", "relation"} or link.get("to") not in earlier:
            problems.append(f"{where}: a link is {{\"to\": <an earlier interaction>, \"relation\": ...}}: {link!r}")
        elif link.get("relation", "causal") not in set(EDGE_RELATIONS) - {"supersedes"}:
            problems.append(f"{where}: link relation {link.get('relation')!r} cannot be declared")
    recall = row.get("recall")
    if recall is not None and (not isinstance(recall, dict) or set(recall) - {"query", "used"}
                               or not isinstance(recall.get("query"), str) or not recall["query"].strip()
                               or any(ref not in earlier for ref in recall.get("used", []))):
        problems.append(f"{where}: recall is {{\"query\": <text>, \"used\": [earlier interactions]}}: {recall!r}")


def _validate_questions(questions: Any, ids: dict[str, str], sessions: set[str], problems: list[str],
                        sizes: tuple[int, int], links: bool = False) -> None:
    if not isinstance(questions, list) or not sizes[0] <= len(questions) <= sizes[1]:
        problems.append(f"questions must be a list of {sizes[0]}-{sizes[1]}")
        return
    seen: set[str] = set()
    for question in questions:
        where = f"question {question.get('id') if isinstance(question, dict) else question!r}"
        if not isinstance(question, dict) or _keys(question, QUESTION_KEYS, QUESTION_OPTIONAL, where, problems):
            continue
        if question["id"] in seen:
            problems.append(f"{where}: id is not unique")
        seen.add(question["id"])
        if question["type"] not in QUESTION_TYPES + (LINK_QUESTION_TYPES if links else ()):
            problems.append(f"{where}: unknown type {question['type']!r}")
        changed = question.get("changed", [])
        if (question["type"] == "cascade") != bool(changed) or not isinstance(changed, list) \
                or any(ref not in ids or ref in question["needs"] for ref in changed):
            problems.append(f"{where}: a cascade question (and only one) names the changed parents in `changed`, "
                            "known interactions outside its needs")
        if question["scope"] != "project" and question["scope"] not in sessions:
            problems.append(f"{where}: scope {question['scope']!r} is neither 'project' nor a session key")
        needs, stale = question["needs"], question.get("superseded", [])
        if not isinstance(needs, list) or not needs:
            problems.append(f"{where}: needs must be a non-empty list")
            continue
        for ref in [*needs, *stale, *changed]:
            if ref not in ids:
                problems.append(f"{where}: references unknown interaction {ref!r}")
            elif question["scope"] != "project" and ids[ref] != question["scope"]:
                problems.append(f"{where}: {ref} lies outside the question's session scope")
        if set(needs) & set(stale) or len(set(needs)) != len(needs):
            problems.append(f"{where}: needs repeat an id or include a superseded one")
        if question["type"] == "cross_session" and len({ids.get(n) for n in needs}) < 2:
            problems.append(f"{where}: a cross_session question needs interactions from two sessions")
        if not isinstance(question.get("k", DEFAULT_K), int) or question.get("k", DEFAULT_K) < 1:
            problems.append(f"{where}: k must be a positive integer")


def _validate_edges(edges: Any, ids: dict[str, str], problems: list[str], sizes: tuple[int, int]) -> None:
    if not isinstance(edges, list) or not sizes[0] <= len(edges) <= sizes[1]:
        problems.append(f"edges must be a list of {sizes[0]}-{sizes[1]}")
        return
    order = {local_id: position for position, local_id in enumerate(ids)}
    pairs: set[tuple[str, str]] = set()
    for edge in edges:
        where = f"edge {edge!r}"
        if not isinstance(edge, dict) or _keys(edge, {"parent", "child", "relation"}, set(), where, problems):
            continue
        parent, child = edge["parent"], edge["child"]
        if parent not in ids or child not in ids:
            problems.append(f"{where}: references an unknown interaction")
            continue
        if order[parent] >= order[child]:
            problems.append(f"{where}: the parent must come before the child")
        if edge["relation"] not in EDGE_RELATIONS:
            problems.append(f"{where}: relation must be one of {EDGE_RELATIONS}")
        if (parent, child) in pairs:
            problems.append(f"{where}: pair labelled twice")
        pairs.add((parent, child))


def _iso_date(value: Any) -> bool:
    try:
        date.fromisoformat(value)
    except (TypeError, ValueError):
        return False
    return isinstance(value, str) and len(value) == 10


def _keys(data: dict, required: set[str], optional: set[str], where: str,
          problems: list[str] | None = None) -> list[str]:
    """Missing/unknown-field problems, appended to `problems` when given and also returned."""
    found = []
    missing, unknown = sorted(required - set(data)), sorted(set(data) - required - optional)
    if missing:
        found.append(f"{where}: missing field(s) {', '.join(missing)}")
    if unknown:
        found.append(f"{where}: unknown field(s) {', '.join(unknown)}")
    if problems is not None:
        problems.extend(found)
    return found


def _build(name: str, data: dict) -> EvalFile:
    sessions = [
        EvalSession(key=s["key"], title=s["title"], task=s["task"], date=s.get("date"), interactions=[
            EvalInteraction(id=i["id"], kind=i["kind"], content=i["content"], metadata=i.get("metadata", {}),
                            external_id=i.get("external_id", ""),
                            links=tuple(DeclaredLink(link["to"], link.get("relation", "causal"))
                                        for link in i.get("links", [])),
                            recall=RecallBefore(i["recall"]["query"], tuple(i["recall"].get("used", [])))
                            if i.get("recall") else None)
            for i in s["interactions"]
        ])
        for s in data["sessions"]
    ]
    questions = [
        Question(id=q["id"], text=q["text"], scope=q["scope"], needs=list(q["needs"]), type=q["type"],
                 k=q.get("k", DEFAULT_K), superseded=list(q.get("superseded", [])),
                 changed=list(q.get("changed", [])))
        for q in data["questions"]
    ]
    edges = [LabelledEdge(parent=e["parent"], child=e["child"], relation=e["relation"]) for e in data["edges"]]
    return EvalFile(name=name, project=data["project"], language=data["language"], sessions=sessions,
                    questions=questions, edges=edges, style=data.get("style", "agent"))
