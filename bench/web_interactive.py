"""The web app at scale: time to interactive of the session page, and agent POST → node visible.

    python -m bench.web_interactive                         1k/5k/10k memories, 60 live events
    python -m bench.web_interactive --sizes 5000 --events 0 one size, no live part
    python -m bench.web_interactive --embedder hashing      fast deterministic embedder in the server

Sessions of N synthetic memories (about 2 edges each, no server positions unless the graph API
computes them) are written straight into the benchmark database. A real uvicorn server (inline
ingest, so the server process runs the pipeline and publishes to the page's websocket) serves them
to Debian's headless Chromium. Time to interactive = navigation start → the page's `cw-interactive`
mark (graph fetched, drawn, laid out, first frame painted); then a real mouse click on a node must
open the side panel. Live latency = just before the agent's POST → the page's `cw:patched` event
that added the new memory's node, over the same wall clock (the browser's timeOrigin + now()).
Prints the results as JSON; `run()` returns them for bench/run_all.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import time
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from .setup_django import BENCH_DB, percentile

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1000, 5000, 10000)
SLUG = "bench-web"
USER = "bench-web"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", "--no-first-run", "--disable-gpu"]
KINDS = ("fact", "preference", "constraint", "intent", "decision", "action", "result", "error", "event")
RELATIONS = ("causal", "temporal", "conditional", "elaborates", "references", "shares_entity", "part_of")
WORDS = ("budget hotel flight train museum report export login limit cache deploy review invoice schedule "
         "allergy seafood airport pickup weekend station password token database migration").split()


# --- data ------------------------------------------------------------------------------------------


def project_reset():
    """A fresh benchmark project with a member who may see everything, and an agent token."""
    from django.contrib.auth import get_user_model

    from memory.engine.projects import project_create, token_issue
    from memory.models import Membership, Project, Role

    Project.objects.filter(slug=SLUG).delete()
    project = project_create(name="bench web", slug=SLUG)
    password = secrets.token_urlsafe(12)
    user, _ = get_user_model().objects.get_or_create(username=USER)
    user.set_password(password)
    user.save()
    Membership.objects.create(project=project, user=user, role=Role.ADMIN)
    return project, password, token_issue(project=project, name="bench-agent")[1]


def synthetic_session(project, size: int, rng: random.Random):
    """`size` memories over the last days and ~2 edges per memory to earlier ones (parents)."""
    from django.utils import timezone

    from memory.engine.projects import session_create
    from memory.models import Edge, Memory

    session = session_create(project=project, title=f"Synthetic {size}", task="Benchmark the web app", actor="bench")
    start = timezone.now() - timedelta(days=3)
    memories = Memory.objects.bulk_create([
        Memory(project=project, session=session, kind=rng.choice(KINDS),
               content=f"#{i} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))),
               importance=rng.randint(1, 5), relevance=rng.randint(1, 5), novelty=rng.randint(1, 5),
               status="superseded" if rng.random() < 0.05 else "active",
               dimensions={"intent": "inform", "entities": [{"name": rng.choice(WORDS).title(), "type": "concept"}]},
               occurred_at=start + timedelta(seconds=20 * i))
        for i in range(size)
    ], batch_size=2000)
    ids = [m.pk for m in memories]
    edges, seen = [], set()
    for index in range(1, size):
        for _ in range(2):
            # Mostly recent parents (a conversation's local structure) with some long-range links.
            back = rng.randint(1, min(index, 12)) if rng.random() < 0.8 else rng.randint(1, index)
            relation = rng.choice(RELATIONS)
            key = (ids[index - back], ids[index], relation)
            if key in seen:
                continue
            seen.add(key)
            edges.append(Edge(project=project, session=session, source_id=key[0], target_id=key[1], relation=relation,
                              confidence=round(rng.uniform(0.3, 1.0), 2), needs_review=rng.random() < 0.05,
                              rationale="synthetic"))
    Edge.objects.bulk_create(edges, batch_size=5000)
    return session, len(edges)


def synthetic_recall(project, session, rng: random.Random, touched: int = 500) -> tuple[int, int]:
    """A recall trace that reached about `touched` memories of the session: the engine's own spreading
    activation (3 hops) from random seeds over the session's edges, ranked and stored as recalls store
    themselves. Returns (trace id, memories touched). The synthetic memories have no vectors or search
    text, so the seeds are picked here instead of by a query."""
    from django.db import transaction
    from django.utils import timezone

    from memory.engine.recall import RecallQuery, _items, _load_with_provenance, _trace_store
    from memory.engine.recall.config import config_for
    from memory.engine.recall.rank import rank
    from memory.engine.recall.reconstruct import dependency_order, subgraph_edges, told_lines
    from memory.engine.recall.ripple import spread
    from memory.engine.recall.seeds import RankedRow, Scope, Seed
    from memory.models import Memory

    config = config_for("ripple", {"max_hops": 3, "min_activation": 0.0005})
    scope = Scope(project, session.pk, config.statuses, True)
    rows = Memory.objects.filter(session=session).values_list("id", "occurred_at", "importance", "asks", "search_words",
                                                              "kind")
    by_id = {pk: RankedRow(pk, at.timestamp(), *ranking) for pk, at, *ranking in rows}
    for count in range(2, 40):
        picked = rng.sample(sorted(by_id), count)
        seeds = [Seed(pk, round(1.0 - 0.04 * i, 6), {"lexical": i + 1}) for i, pk in enumerate(picked)]
        columns = {pk: by_id[pk] for pk in picked}
        activation, arrivals = spread(seeds, config, scope, columns)
        if len({a.memory_id for a in arrivals}) >= touched:
            break
    ranked = rank(columns, activation, config, timezone.now(), 20)
    memories = _load_with_provenance([r.memory_id for r in ranked])
    edges = subgraph_edges(list(memories))
    lines = told_lines(dependency_order(list(memories.values()), edges), edges)
    items = _items(ranked, memories, seeds, arrivals, activation)
    query = RecallQuery("benchmark replay", k=20, session=session, include_sensitive=True)
    with transaction.atomic():
        trace = _trace_store(project, query, config, seeds, arrivals, items, lines, {}, "bench")
    return trace.pk, len(set(trace.touched_ids))


# --- server and browser ----------------------------------------------------------------------------


@contextlib.contextmanager
def serve(embedder: str) -> Iterator[str]:
    from contextweaver_site.serve import running_server

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.base", "CW_DB_NAME": BENCH_DB,
           "CW_INGEST_MODE": "inline", "CW_EMBEDDER": embedder, "DEBUG": "false"}
    with running_server(env) as base:
        yield base


@contextlib.contextmanager
def browser_context(base: str, password: str):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.goto(base + "/login/")
        page.fill("#id_username", USER)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(base + "/")
        page.close()
        try:
            yield context
        finally:
            browser.close()


def _open(context, url: str):
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("html[data-graph-ready='1']", state="attached", timeout=180_000)
    return page


def _complete(page) -> None:
    page.wait_for_selector("html[data-graph-complete='1']", state="attached", timeout=180_000)


# --- measurements ----------------------------------------------------------------------------------


def time_to_interactive(context, url: str, repeats: int) -> dict:
    runs = []
    for _ in range(repeats):
        page = _open(context, url)
        numbers = {"click_to_panel_ms": _click_to_panel(page)}  # clicked as soon as the page says it is ready
        _complete(page)
        numbers |= page.evaluate("""() => {
            const mark = performance.getEntriesByName('cw-interactive')[0];
            const graph = performance.getEntriesByType('resource').find(r => r.name.includes('/graph/'));
            const at = (name) => {
                const m = performance.getEntriesByName(name)[0];
                return m ? Math.round(m.startTime) : null;
            };
            return {tti_ms: mark.startTime, marks: {fetched: at('cw-graph-fetched'), drawn: at('cw-drawn'),
                    filtered: at('cw-filtered'), laid_out: at('cw-laid-out'),
                    all_edges_drawn: at('cw-complete')}, graph_fetch_ms: graph ? graph.duration : null,
                    graph_bytes: graph ? graph.transferSize : null, nodes: cw.cy.nodes().length,
                    edges: cw.cy.edges().length, preset: cw.model.hasServerPositions};
        }""")
        runs.append(numbers)
        page.close()
    best = sorted(runs, key=lambda r: r["tti_ms"])[len(runs) // 2]  # the median run
    return {**best, "tti_ms_runs": [round(r["tti_ms"]) for r in runs]}


def _click_to_panel(page) -> float | None:
    """A real mouse click on a node in view, until the side panel shows that memory."""
    spot = page.evaluate("""() => {
        const box = document.getElementById('cy').getBoundingClientRect();
        const inside = cw.cy.nodes().filter(n => { const p = n.renderedPosition();
            return p.x > 20 && p.y > 20 && p.x < box.width - 20 && p.y < box.height - 20; });
        const node = inside[Math.floor(inside.length / 2)];
        if (!node) return null;
        const p = node.renderedPosition();
        return {x: box.left + p.x, y: box.top + p.y};
    }""")
    if not spot:
        return None
    start = time.perf_counter()
    page.mouse.click(spot["x"], spot["y"])
    try:
        page.wait_for_selector("#panel article", timeout=10_000)
    except Exception:  # noqa: BLE001 - the click may land between nodes; report no number
        return None
    return round((time.perf_counter() - start) * 1000, 1)


def replay_open(context, url: str, trace_id: int, repeats: int) -> dict:
    """Open a stored recall in the page's replay (fetch the trace, draw ghosts, paint the last step, render the
    tables) and step through every step: wall time in the page, the median of the runs."""
    runs = []
    for _ in range(repeats):
        page = _open(context, url)
        _complete(page)
        runs.append(page.evaluate("""async (id) => {
            const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
            const t0 = performance.now();
            await cw.app.replay.openRecall(id);
            await frame();
            const opened = performance.now() - t0;
            const steps = Number(document.getElementById('replay-step').max) + 1;
            const t1 = performance.now();
            for (let s = 0; s < steps; s += 1) cw.app.replay.goTo(s);
            await frame();
            return {open_ms: opened, steps, all_steps_ms: performance.now() - t1,
                    lit: cw.cy.nodes('.replay-on').length, ghosts: cw.cy.nodes('.ghost').length,
                    trace_bytes: (performance.getEntriesByType('resource')
                      .find(r => r.name.includes('/recalls/')) || {}).transferSize || null};
        }""", trace_id))
        page.close()
    best = sorted(runs, key=lambda r: r["open_ms"])[len(runs) // 2]
    return {**best, "open_ms_runs": [round(r["open_ms"]) for r in runs]}


def live_latency(context, base: str, url: str, project_slug: str, session_id: int, token: str, events: int) -> dict:
    page = _open(context, url)
    _complete(page)
    page.wait_for_selector("#live-status[data-state='live']", timeout=30_000)
    page.evaluate("""() => { window.__seen = {};
        document.addEventListener('cw:patched', e => { const t = performance.timeOrigin + performance.now();
            for (const id of e.detail.added) if (!(id in window.__seen)) window.__seen[id] = t; }); }""")
    api = f"{base}/api/projects/{project_slug}/sessions/{session_id}/interactions/"
    latencies, post_ms, skipped = [], [], 0
    for i in range(events):
        content = (f"Decision {i}: deploy service-{i} on host h{i % 17} with {8 + i} GB memory and "
                   f"{2 + i % 5} replicas before {['Monday', 'Tuesday', 'Friday'][i % 3]}")
        request = urllib.request.Request(api, data=json.dumps({"kind": "user_input", "content": content}).encode(),
                                         headers={"Authorization": f"Bearer {token}",
                                                  "Content-Type": "application/json"}, method="POST")
        sent = time.time() * 1000
        with urllib.request.urlopen(request, timeout=60) as response:
            row = json.loads(response.read())["interactions"][0]
        post_ms.append(time.time() * 1000 - sent)
        if not row["memory_ids"]:
            skipped += 1
            continue
        node = f"m{row['memory_ids'][0]}"
        page.wait_for_function(f"() => '{node}' in window.__seen", timeout=10_000)
        latencies.append(page.evaluate(f"window.__seen['{node}']") - sent)
        time.sleep(0.05)
    page.close()
    if not latencies:
        return {"events": 0, "filtered": skipped}
    return {
        "events": len(latencies), "filtered": skipped,
        "post_to_visible_p50_ms": round(percentile(latencies, 50), 1),
        "post_to_visible_p95_ms": round(percentile(latencies, 95), 1),
        "post_to_visible_max_ms": round(max(latencies), 1),
        "post_answer_p50_ms": round(percentile(post_ms, 50), 1),
    }


def run(sizes: tuple[int, ...] = SIZES, events: int = 60, repeats: int = 3, embedder: str = "minilm",
        live_size: int | None = 5000) -> dict:
    from memory.selectors import GRAPH_MAX_NODES

    rng = random.Random(7)
    project, password, token = project_reset()
    sessions = {}
    for size in sizes:
        t0 = time.perf_counter()
        session, edge_count = synthetic_session(project, size, rng)
        sessions[size] = session
        print(f"built a session of {size} memories and {edge_count} edges in {time.perf_counter() - t0:.1f} s",
              flush=True)
    results: dict = {"sizes": {}, "machine_cores": os.cpu_count()}
    replay_size = 5000 if 5000 in sessions else max(sessions)
    trace_id, touched = synthetic_recall(project, sessions[replay_size], rng)
    with serve(embedder) as base, browser_context(base, password) as context:
        for size, session in sessions.items():
            url = f"{base}/p/{SLUG}/sessions/{session.pk}/"
            # As a user opens it (the API sends at most its default limit), then every memory at once.
            for label, query in (("default", ""), ("whole", f"?limit={size}")):
                key = f"{size} {label}"
                if label == "whole" and size <= GRAPH_MAX_NODES:  # the default already sends it whole
                    continue
                results["sizes"][key] = time_to_interactive(context, url + query, repeats)
                print(f"{key:>12}: {json.dumps(results['sizes'][key])}", flush=True)
        url = f"{base}/p/{SLUG}/sessions/{sessions[replay_size].pk}/"
        results["replay"] = {"page_memories": replay_size, "touched": touched,
                             **replay_open(context, url, trace_id, repeats)}
        print(f"replay: {json.dumps(results['replay'])}", flush=True)
        if events:
            size = live_size if live_size in sessions else min(sessions)
            session = sessions[size]
            url = f"{base}/p/{SLUG}/sessions/{session.pk}/"
            results["live"] = {"page_memories": size,
                               **live_latency(context, base, url, SLUG, session.pk, token, events)}
            print(f"live: {json.dumps(results['live'])}", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="Memories per session, comma-separated")
    parser.add_argument("--events", type=int, default=60, help="Live events to time (0 = skip)")
    parser.add_argument("--repeats", type=int, default=3, help="Page loads per size (the median is reported)")
    parser.add_argument("--embedder", default="minilm", help="The server's embedder (minilm, hashing, …)")
    parser.add_argument("--live-size", type=int, default=5000, help="Which session's page receives the live events")
    args = parser.parse_args()
    from . import setup_django

    setup_django.setup(embedder=args.embedder)
    sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
    print(json.dumps(run(sizes, args.events, args.repeats, args.embedder, args.live_size), indent=2))


if __name__ == "__main__":
    main()
