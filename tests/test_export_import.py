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
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from administration.transfer import FIELDS, GRAPHML_NS
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.projects import session_create
from memory.models import Edge, Membership, Memory, MemoryEmbedding, Project, Role

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
