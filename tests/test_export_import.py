"""Export and import (administration/transfer.py): JSON Lines and GraphML, through the API and the commands;
masking for viewers and tokens, forgotten memories absent; an import checked whole, and an export imported
and exported again is the same file (ids renumbered)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, ManagementUtility, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from administration.transfer import FIELDS, GRAPHML_NS
from memory.conf import memory_settings
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.projects import session_create
from memory.models import Edge, Interaction, Membership, Memory, MemoryEmbedding, Project, Role

pytestmark = pytest.mark.django_db(transaction=True)

TEXTS = ["The hotel near the Bund is booked for three nights", "Maria is allergic to seafood, no shrimp at all",
         "Her passport number is P7734521, keep it safe", "The flight to Lisbon leaves at 09:40 on Friday"]
ZH = ["周六上午带乐乐去打疫苗，记得带医保卡。", "外婆的生日是三月十二号，要订蛋糕。"]


def _ingest(session, texts):
    start = timezone.now() - timedelta(hours=1)
    interactions_accept(session=session, actor="agent", items=[
        InteractionInput("user_input", t, {"turn": n}, start + timedelta(minutes=n)) for n, t in enumerate(texts)])


@pytest.fixture
def world(project, agent_session):
    _ingest(agent_session, TEXTS)
    zh = session_create(project=project, title="家里", task="", actor="t")
    _ingest(zh, ZH)
    memories = {m.content: m for m in Memory.objects.filter(project=project)}
    Memory.objects.filter(pk=memories[TEXTS[2]].pk).update(sensitive=True)
    Memory.objects.filter(pk=memories[TEXTS[3]].pk).update(status="forgotten")
    Edge.objects.create(project=project, session=agent_session, source=memories[TEXTS[0]],
                        target=memories[TEXTS[1]], relation="causal", origin="human", status="approved",
                        rationale="drawn by a curator")
    Edge.objects.create(project=project, session=agent_session, source=memories[TEXTS[0]],
                        target=memories[TEXTS[1]], relation="elaborates", origin="agent",
                        rationale="declared by the agent")
    memories[TEXTS[1]].sources.update(external_id="msg_01HX")  # the agent framework's id
    people = {}
    for role in (Role.VIEWER, Role.ADMIN):
        people[role] = get_user_model().objects.create_user(f"x-{role}", password="a-long-password-1")
        Membership.objects.create(project=project, user=people[role], role=role)
    return {"zh": zh, "people": people}


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _export(slug: str, *extra: str) -> str:
    out = StringIO()
    call_command("export_project", slug, *extra, stdout=out)
    return out.getvalue()


def _renumbered(text: str) -> list[dict]:
    """The rows with every id replaced by its rank among the rows of its type (and references with them)."""
    rows = [json.loads(line) for line in text.splitlines()]
    rank = {}
    for row in rows[1:]:
        rank.setdefault(row["type"], {})[row["id"]] = len(rank.get(row["type"], {})) + 1
    out = []
    for row in rows[1:]:
        row = {**row, "id": rank[row["type"]][row["id"]]}
        for spec in FIELDS[row["type"]]:
            if spec.ref and row[spec.name] is not None:
                value, ranks = row[spec.name], rank[spec.ref]
                row[spec.name] = [ranks[v] for v in value] if isinstance(value, list) else ranks[value]
        out.append(row)
    return out


def test_an_export_imported_and_exported_again_is_the_same(project, agent_session, world, tmp_path):
    first = _export(project.slug)
    header = json.loads(first.splitlines()[0])
    assert header["type"] == "export" and header["masked"] is False
    kinds = {json.loads(line)["type"] for line in first.splitlines()[1:]}
    assert kinds == {"session", "interaction", "memory", "entity", "mention", "edge"}
    assert TEXTS[3] not in first, "a forgotten memory (and the interaction only it came from) is not exported"
    assert TEXTS[2] in first and ZH[0] in first  # the operator's copy is unmasked
    path = tmp_path / "export.jsonl"
    path.write_text(first, encoding="utf-8")
    out = StringIO()
    call_command("import_project", str(path), "--slug", "copy", "--name", "Copy", stdout=out)
    assert "imported into project copy" in out.getvalue()
    copy = Project.objects.get(slug="copy")
    assert MemoryEmbedding.objects.filter(project=copy).count() == Memory.objects.filter(project=copy).count() > 0
    again = _export("copy")
    assert _renumbered(again) == _renumbered(first)
    assert Edge.objects.get(project=copy, origin="human").rationale == "drawn by a curator"
    assert Edge.objects.get(project=copy, origin="agent").relation == "elaborates"
    assert Interaction.objects.get(project=copy, external_id="msg_01HX").content == TEXTS[1]


def test_a_file_written_before_external_ids_were_exported_still_imports(project, agent_session, world, tmp_path):
    rows = [json.loads(line) for line in _export(project.slug).splitlines()]
    for row in rows:
        row.pop("external_id", None) if row.get("type") == "interaction" else None
    path = tmp_path / "older.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    call_command("import_project", str(path), "--slug", "older", "--name", "Older", stdout=StringIO())
    copy = Project.objects.get(slug="older")
    assert Interaction.objects.filter(project=copy).count() == sum(r.get("type") == "interaction" for r in rows)
    assert not Interaction.objects.filter(project=copy).exclude(external_id="").exists()


def test_a_viewer_gets_sensitive_text_masked_and_graphml_reads_as_a_graph(project, agent_session, world):
    viewer = _client(world["people"][Role.VIEWER])
    response = viewer.get(f"/api/projects/{project.slug}/export/")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-ndjson")
    assert 'filename="travel.jsonl"' in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()
    assert "P7734521" not in text and "[sensitive]" in text and TEXTS[3] not in text
    admin = _client(world["people"][Role.ADMIN])
    full = b"".join(admin.get(f"/api/projects/{project.slug}/export/").streaming_content).decode()
    assert "P7734521" in full
    graph = admin.get(f"/api/projects/{project.slug}/export/?file=graphml&session={world['zh'].pk}")
    assert graph.status_code == 200 and graph["Content-Type"].startswith("application/graphml+xml")
    root = ET.fromstring(graph.content)
    nodes = root.findall(f".//{{{GRAPHML_NS}}}node")
    memories = [n for n in nodes if n.get("id").startswith("m")]
    assert len(memories) == Memory.objects.filter(session=world["zh"]).count() == 2
    labels = {d.text for n in memories for d in n.findall(f"{{{GRAPHML_NS}}}data") if d.get("key") == "n_label"}
    assert labels == set(ZH)
    assert viewer.get(f"/api/projects/{project.slug}/export/?file=pdf").status_code == 400
    assert viewer.get(f"/api/projects/{project.slug}/export/?session=999999").status_code == 404


@pytest.mark.parametrize(("line", "message"), [
    ('{"type": "memory", "id": 1}', "line 2, field 'session': missing"),
    ('{"type": "planet", "id": 1}', "line 2, field 'type': unknown row type 'planet'"),
    ('not json', "line 2, field '-': not JSON"),
])
def test_a_bad_line_refuses_the_whole_import(project, world, tmp_path, line, message):
    lines = _export(project.slug).splitlines()
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([lines[0], line, *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        call_command("import_project", str(path), "--slug", "broken")
    assert not Project.objects.filter(slug="broken").exists()


def test_a_reference_to_a_row_not_yet_defined_is_refused(project, world, tmp_path):
    rows = [json.loads(line) for line in _export(project.slug).splitlines()]
    edge = next(r for r in rows if r["type"] == "edge")
    edge["target"] = 10**9
    path = tmp_path / "dangling.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="field 'target': refers to memory 1000000000"):
        call_command("import_project", str(path), "--slug", "dangling")
    assert not Project.objects.filter(slug="dangling").exists()


# --- what the API would refuse, the import refuses: named by line and field, nothing written ---------


def _import_file(tmp_path, rows: list[dict] | None = None, lines: list[str] | None = None) -> str:
    path = tmp_path / "hostile.jsonl"
    text = lines if lines is not None else [json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return str(path)


def _line_of(rows: list[dict], kind: str) -> int:
    return next(n for n, r in enumerate(rows, start=1) if r["type"] == kind)


def test_a_deeply_nested_line_is_a_clear_command_error_naming_it(project, world, tmp_path, capsys):
    """The line would have been a RecursionError traceback (json.loads); it is refused like any bad line."""
    lines = _export(project.slug).splitlines()
    deep = '{"type": "session", "id": 99, "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path = _import_file(tmp_path, lines=[lines[0], deep, *lines[1:]])
    with pytest.raises(CommandError, match=r"line 2, field '-': nested too deeply \(at most 32 levels\)"):
        call_command("import_project", path, "--slug", "deep")
    # From the shell: the message and exit status 1, no traceback.
    with pytest.raises(SystemExit) as exit_info:
        ManagementUtility(["manage.py", "import_project", path, "--slug", "deep"]).execute()
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "CommandError: line 2, field '-': nested too deeply" in err and "Traceback" not in err
    # Nested less than json.loads' own limit, but deeper than the API takes: refused as well.
    metadata: dict = {}
    for _ in range(40):
        metadata = {"a": metadata}
    rows = [json.loads(line) for line in lines]
    rows[_line_of(rows, "interaction") - 1]["metadata"] = metadata
    with pytest.raises(CommandError, match=rf"line {_line_of(rows, 'interaction')}, field 'metadata': .*nested more"):
        call_command("import_project", _import_file(tmp_path, rows), "--slug", "deep")
    assert not Project.objects.filter(slug="deep").exists()


LIMIT = 32 * 1024  # memory_settings.MAX_CONTENT_BYTES in the test settings (asserted below)


@pytest.mark.parametrize(("kind", "field", "value", "message"), [
    ("interaction", "content", "x" * (LIMIT + 1), f"is {LIMIT + 1} bytes; the limit is {LIMIT} bytes"),
    ("interaction", "content", "好" * (LIMIT // 3 + 1), f"is {3 * (LIMIT // 3 + 1)} bytes; the limit is {LIMIT}"),
    ("memory", "content", "y" * 1_000_000, f"is 1000000 bytes; the limit is {LIMIT} bytes"),
    ("interaction", "metadata", {"blob": "z" * 20_000}, "metadata is 20011 bytes as JSON; the limit is 16384"),
    ("session", "task", "t" * 8001, "is 8001 characters; the limit is 8000"),
    ("session", "title", "t" * 301, "is 301 characters; the limit is 300"),
    ("entity", "name", "n" * 301, "is 301 characters; the limit is 300"),
    ("interaction", "content", "a NUL \x00 here", r"NUL characters \(\\u0000\) are not allowed"),
    ("memory", "content", "a lone \ud800 surrogate", "lone UTF-16 surrogates"),
    ("edge", "weight", 10**400, "expected a finite number"),
    ("memory", "sources", [[1]], "expected interaction ids"),
], ids=["content-bytes", "content-utf8-bytes", "memory-content", "metadata-size", "task", "title", "entity-name",
        "nul", "lone-surrogate", "huge-number", "unhashable-ref"])
def test_what_the_api_would_refuse_is_refused_naming_line_and_field(project, world, tmp_path, kind, field, value,
                                                                    message):
    assert memory_settings.MAX_CONTENT_BYTES == LIMIT
    rows = [json.loads(line) for line in _export(project.slug).splitlines()]
    rows[_line_of(rows, kind) - 1][field] = value
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")  # ASCII: \u escapes
    with pytest.raises(CommandError, match=rf"line {_line_of(rows, kind)}, field '{field}': .*{message}.*"
                                           "nothing was imported"):
        call_command("import_project", str(path), "--slug", "hostile")
    assert not Project.objects.filter(slug="hostile").exists()
    assert Project.objects.count() == 1  # nothing half-written


@pytest.mark.parametrize(("part", "odd", "message"), [
    ('"type": "session"', '"type": ["session"]', "field 'type': unknown row type"),  # unhashable: a TypeError
    ('"metadata": {}', '"metadata": {"x": NaN}', "field '-': not JSON .*NaN"),  # jsonb stores no NaN, no infinity
    ('"metadata": {}', '"metadata": {"x": 1e999}', "field '-': not JSON .*out of range"),
], ids=["unhashable-type", "nan", "infinity"])
def test_lines_that_crashed_the_import_are_refused(project, world, tmp_path, part, odd, message):
    lines = _export(project.slug).splitlines()
    session = json.loads(next(line for line in lines if '"type": "session"' in line))
    line = json.dumps({**session, "id": 99, "metadata": {}}).replace(part, odd)
    with pytest.raises(CommandError, match=f"line 2, {message}"):
        call_command("import_project", _import_file(tmp_path, lines=[lines[0], line, *lines[1:]]), "--slug", "odd")
    assert not Project.objects.filter(slug="odd").exists()
