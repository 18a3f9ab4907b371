"""`make bench`: run the benchmarks and write docs/benchmarks.md (machine and date included)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from pathlib import Path

from . import setup_django

ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem_gb:.0f} GiB RAM, Python {platform.python_version()}"


def main() -> None:
    setup_django.setup(embedder="minilm")
    from django.db import connection

    from . import accept_latency, embedding, hnsw_recall

    with connection.cursor() as cursor:
        cursor.execute("SELECT version(), extversion FROM pg_extension WHERE extname = 'vector'")
        pg, pgvector = cursor.fetchone()
    print("embedding throughput…", flush=True)
    emb = embedding.run()
    print(json.dumps(emb), flush=True)
    print("HNSW recall vs exact…", flush=True)
    ann = hnsw_recall.run()
    print(json.dumps(ann), flush=True)
    print("accept latency…", flush=True)
    acc = accept_latency.run()
    print(json.dumps(acc), flush=True)
    write_report(emb, ann, acc, pg.split(",")[0], pgvector)


def write_report(emb: dict, ann: dict, acc: dict, pg: str, pgvector: str) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    lines = [
        "# Benchmarks",
        "",
        f"Measured {datetime.date.today().isoformat()} on {machine()}; {pg}, pgvector {pgvector} "
        f"(embedded pgserver); commit {commit.strip() or 'unknown'}. Regenerate with `make bench`.",
        "",
        "## MiniLM embedding (all-MiniLM-L6-v2, CPU, sentence-transformers)",
        "",
        f"- batch of {emb['texts']} texts (batch size 64): **{emb['batch_texts_per_s']} texts/s**",
        f"- one text at a time: p50 {emb['single_p50_ms']} ms, p95 {emb['single_p95_ms']} ms",
        "",
        f"## HNSW recall@10 against exact search ({ann['rows']} MiniLM vectors, {ann['queries']} queries)",
        "",
        f"Index built with m=16, ef_construction=64; COPY + index build took {ann['copy_and_index_s']} s.",
        "",
        "| ef_search | recall@10 | search p50 (ms) | search p95 (ms) |",
        "|---|---|---|---|",
        *[f"| {r['ef_search']} | {r['recall_at_10']} | {r['p50_ms']} | {r['p95_ms']} |" for r in ann["by_ef"]],
        "",
        "The corpus is 80% real English sentences (Python's own documentation, shipped with Python) and 20%",
        "agent-memory sentences from templates; queries are held-out sentences of both kinds. The default",
        "`CW_HNSW_EF_SEARCH` is 100: recall is at its ceiling there and the search still costs about 2 ms.",
        "",
        "Found on the way: a corpus made *only* of template sentences (16 templates, so 16 tight clusters) gave",
        "recall@10 of 0.69-0.80 at every ef_search, because about a quarter of the queries landed in the wrong",
        "cluster and found none of their neighbours (m=16, ef_construction=64 leave such clusters poorly linked).",
        "Real memories are far less clustered, but a project made of near-identical templated events could see",
        "this; raising `HNSW_M` / `HNSW_EF_CONSTRUCTION` (MEMORY settings) is the knob. Session-scoped search is",
        "exact and unaffected.",
        "",
        f"## Accept-and-persist latency ({acc['requests']} sequential POSTs to a real uvicorn server)",
        "",
        f"- p50 **{acc['p50_ms']} ms**, p95 **{acc['p95_ms']} ms**, p99 {acc['p99_ms']} ms "
        "(one interaction per request, token auth, row + change log + queued job in one transaction,",
        "committed with fsync; one uvicorn process; the client waits for each answer before the next request)",
        "",
    ]
    (ROOT / "docs" / "benchmarks.md").write_text("\n".join(lines))
    print(f"wrote {ROOT / 'docs' / 'benchmarks.md'}")


if __name__ == "__main__":
    main()
