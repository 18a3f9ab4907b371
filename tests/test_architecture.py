"""The boundaries of docs/architecture.md that import-linter cannot see: who writes graph rows, and that the
output serializers only document shapes.

Graph rows (memories, edges, entities, mentions, interactions, embeddings, the change log) are written by
memory/engine only: a write elsewhere skips the engine's change log, its rules (a person's decision binds
inference, a mark reaches the summaries) and the live view. The scan reads the source (ast), so it needs no
database; it finds writes through a graph model's manager (`Model.objects…create/update/delete…`, the
sources table's `through.objects`). A `.save()` on an instance is not typed in the source and is not
seen: review catches those.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRAPH_MODELS = {"Memory", "Edge", "Entity", "EntityMention", "Interaction", "MemoryEmbedding", "GraphChange"}
WRITES = {"create", "bulk_create", "update", "delete", "get_or_create", "update_or_create", "bulk_update", "save"}
SCANNED = ("memory", "curation", "administration", "contextweaver_site")
# Where graph rows may be written: the engine, and migrations (schema history).
ALLOWED = ("memory/engine/", "/migrations/")
# Written outside the engine on purpose, with the reason.
EXCUSED = {
    "memory/management/commands/reembed.py": "drops and rebuilds vectors of one embedding space (no graph row)",
}


def _graph_writes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES):
            continue
        names = {n.id for n in ast.walk(node.func.value) if isinstance(n, ast.Name)}
        attrs = {n.attr for n in ast.walk(node.func.value) if isinstance(n, ast.Attribute)}
        if names & GRAPH_MODELS and ("objects" in attrs or "through" in attrs):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node.func)[:80]}")
    return found


def _sources() -> list[Path]:
    return [p for folder in SCANNED for p in sorted((ROOT / folder).rglob("*.py"))
            if not any(part in str(p.relative_to(ROOT)) for part in ALLOWED)]


def test_no_module_outside_the_engine_writes_graph_rows():
    offenders = [w for p in _sources() if str(p.relative_to(ROOT)) not in EXCUSED for w in _graph_writes(p)]
    assert offenders == [], "graph rows written outside memory/engine (call an engine service):\n" + "\n".join(
        offenders)


def test_the_scan_finds_a_direct_write():
    """The scan can fail: the shapes curation used to write with are found."""
    sample = ROOT / "tests" / "_arch_sample.py"
    sample.write_text("def f(p, e):\n    Edge.objects.create(project=p)\n"
                      "    EntityMention.objects.filter(entity=e).update(entity=None)\n"
                      "    Memory.sources.through.objects.bulk_create([])\n", encoding="utf-8")
    try:
        assert len(_graph_writes(sample)) == 3
    finally:
        sample.unlink()


@pytest.mark.parametrize("name", ["MemoryOutput", "InteractionOutput", "EdgeOutput", "ChangeOutput",
                                  "GraphMemoryOutput", "GraphGhostOutput"])
def test_output_serializers_carrying_content_only_document_a_shape(name):
    """Rows carrying content come from memory/reads, masked for the caller; these serializers refuse to
    build one, so a view cannot send a model's text past the visibility rule."""
    from memory.api import serializers as s

    with pytest.raises(TypeError, match="memory.reads"):
        getattr(s, name)().to_representation(object())
