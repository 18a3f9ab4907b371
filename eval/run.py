"""`make eval`: ingest the labelled conversations, ask every question of each baseline and preset, score edges,
write docs/eval.md.

    python -m eval.run [--preset vector,hybrid,ripple] [--k 5] [--out docs/eval.md] [--files pattern]
    python -m eval.run --heldout     the held-out files (eval/heldout) to docs/eval-heldout.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # report needs Django set up, so it is imported late at run time
    from .dataset import EvalFile
    from .report import RunInfo

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PRESETS = ("vector", "hybrid", "ripple")
DEFAULT_CROWD = 25  # about 50,000 other memories beside the eval's 2,000
MAX_CROWD = 200


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m eval.run", description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default=",".join(DEFAULT_PRESETS),
                        help="comma-separated recall presets (default: %(default)s)")
    parser.add_argument("--k", type=int, default=None,
                        help="how deep each system's ranking is read (default 10: R@5, R@10 and MRR from it)")
    parser.add_argument("--out", default=None,
                        help="markdown report path (default: docs/eval.md, with --heldout docs/eval-heldout.md)")
    parser.add_argument("--files", default="*.json", help="glob in the data folder (default: %(default)s)")
    parser.add_argument("--heldout", action="store_true",
                        help="the held-out files of eval/heldout instead of eval/data: never tuned on, so they "
                             "tell whether a change carries over (no crowded or larger run unless asked)")
    parser.add_argument("--no-task", action="store_true",
                        help="ingest every session without its task focus (what is lost then?)")
    parser.add_argument("--with-task-only", action="store_true",
                        help="skip the second ingest without task focus that checks nothing needed is lost then")
    parser.add_argument("--larger", action=argparse.BooleanOptionalAction, default=None,
                        help="also ingest each file after the other files of its language in one project and ask "
                             "its questions there, baselines included (eval/larger.py; default on, off with --heldout)")
    parser.add_argument("--crowd", type=int, default=None, metavar="TIMES",
                        help="run everything again beside TIMES copies of the eval's memories in another project, "
                             f"as in a database of many projects (default {DEFAULT_CROWD}, 0 with --heldout; "
                             "0 skips it)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = "docs/eval-heldout.md" if args.heldout else "docs/eval.md"
    if args.larger is None:
        args.larger = not args.heldout
    if args.crowd is None:
        args.crowd = 0 if args.heldout else DEFAULT_CROWD
    args.presets = [p.strip() for p in args.preset.split(",") if p.strip()]
    if not args.presets:
        parser.error("--preset needs at least one preset")
    if args.k is not None and args.k < 1:
        parser.error("--k must be positive")
    if not 0 <= args.crowd <= MAX_CROWD:
        parser.error(f"--crowd must be between 0 and {MAX_CROWD}")
    return args


def run(files: list[EvalFile], presets: list[str], k: int | None = None, progress: bool = True,
        with_task: bool = True, check_without_task: bool = False, crowd: int = 0,
        larger: bool = False) -> tuple[dict, list, list]:
    """Ingest the files, then evaluate them; returns (summary, question results, ingested files).

    `check_without_task`: afterwards ingest everything again with no session task, to count what the
    filter loses then (the questions' answers are not asked again). `crowd`: then ingest and ask the engine
    presets again beside that many copies of the eval's memories in another project (eval/crowd.py).
    `larger`: then ingest each file after the other files of its language (eval/larger.py) and ask its
    questions of every baseline and preset there."""
    from .evaluate import evaluate_edges, evaluate_questions
    from .report import lost_rows, summarize

    ingested = _ingest_all(files, progress, with_task, "ingest")
    questions = [r for i in ingested for r in evaluate_questions(i, presets, k)]
    edges = [evaluate_edges(i) for i in ingested]
    summary = summarize(ingested, questions, edges)  # before a second ingest replaces the projects
    if not with_task:
        summary["without_task"] = lost_rows(ingested)
    elif check_without_task:
        summary["without_task"] = lost_rows(_ingest_all(files, progress, False, "ingest without task"))
    if crowd:
        summary["crowded"] = _crowded(files, presets, k, progress, crowd, with_task)
    if larger:
        summary["larger"] = _larger(files, presets, k, progress, with_task)
    return summary, questions, ingested


def _larger(files: list[EvalFile], presets: list[str], k: int | None, progress: bool, with_task: bool) -> dict:
    from .evaluate import evaluate_questions
    from .larger import beside_others
    from .report import summarize

    bigger = beside_others(files)
    ingested = _ingest_all(bigger, progress, with_task, "ingest beside the other files")
    larger = summarize(ingested, [r for i in ingested for r in evaluate_questions(i, presets, k)], [])
    return {"interactions": {spec.name: len(spec.interactions) for spec in bigger}, "presets": larger["presets"]}


def _crowded(files: list[EvalFile], presets: list[str], k: int | None, progress: bool, times: int,
             with_task: bool) -> dict:
    """The same ingest and questions in a table crowded by another project; the copies are removed after."""
    from .crowd import crowd_empty, crowd_fill
    from .evaluate import evaluate_edges, evaluate_questions
    from .report import crowded_summary

    rows = crowd_fill(times)
    try:
        ingested = _ingest_all(files, progress, with_task, f"ingest beside {rows:,} memories")
        questions = [r for i in ingested for r in evaluate_questions(i, presets, k, baselines=())]
        return crowded_summary(times, rows, ingested, questions, [evaluate_edges(i) for i in ingested])
    finally:
        crowd_empty()


def _subjects_audit(episodes: int = 12) -> dict:
    """Supersedes by traveller on the demo's travel desk (eval/subjects.py), as plain data for the report."""
    from .subjects import demo_subjects_audit

    audit = demo_subjects_audit(episodes)
    return {"episodes": episodes, "right": audit.right, "wrong": len(audit.wrong), "proposed": audit.proposed,
            "failed": audit.failed, "interactions": audit.interactions}


def _ingest_all(files: list[EvalFile], progress: bool, with_task: bool, label: str) -> list:
    from tqdm import tqdm

    from .ingest import ingest_file

    ingested = []
    with tqdm(total=sum(len(f.interactions) for f in files), unit="interaction", disable=not progress,
              desc=label, file=sys.stderr, mininterval=1.0 if sys.stderr.isatty() else 10.0) as bar:
        for spec in files:
            bar.set_postfix_str(spec.name)
            ingested.append(ingest_file(spec, progress=bar.update, with_task=with_task))
    return ingested


def run_info(argv: list[str], data: str = "eval/data", heldout: bool = False) -> RunInfo:
    from bench.run_all import machine
    from memory.conf import memory_settings
    from memory.providers import get_embedder, get_llm

    from .report import RunInfo

    embedder = get_embedder()
    llm_name = memory_settings.LLM
    llm = "none (offline rules judge)" if llm_name == "none" else (
        f"{llm_name} ({memory_settings.LLM_MODEL}; {'available' if get_llm().available else 'NOT available'})")
    env = [name for name in ("CW_LLM", "OPENAI_API_KEY") if os.environ.get(name)]
    llm += f"; configured via {', '.join(env)}" if env else "; neither CW_LLM nor OPENAI_API_KEY set"
    return RunInfo(
        date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"), machine=machine(),
        embedder=f"{memory_settings.EMBEDDER} ({embedder.space_name}, {embedder.dimensions}-d)", llm=llm,
        commit=commit_described(), database=os.environ.get("CW_DB_NAME", "?"),
        command="make eval" if not argv else "python -m eval.run " + " ".join(argv), data=data, heldout=heldout,
    )


def commit_described() -> str:
    """The short commit, and whether the tree has changes it does not hold."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return f"{commit} (uncommitted changes in the tree)" if git("status", "--porcelain") else commit


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    from .dataset import DATA_DIR, HELDOUT_DIR, load_files
    from .setup_django import setup

    folder = HELDOUT_DIR if args.heldout else DATA_DIR
    files = load_files(args.files, folder)  # validate the data before touching the database
    setup()
    from .report import markdown, stdout_table

    info = run_info(argv, folder.relative_to(ROOT).as_posix(), heldout=args.heldout)
    print(f"eval: {len(files)} files, presets {', '.join(args.presets)}, embedder {info.embedder}, LLM {info.llm}",
          flush=True)
    summary, questions, ingested = run(files, args.presets, args.k, with_task=not args.no_task,
                                       check_without_task=not args.with_task_only, crowd=args.crowd,
                                       larger=args.larger)
    if not args.heldout:
        summary["subjects"] = _subjects_audit()
    out = Path(args.out) if Path(args.out).is_absolute() else ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(markdown(summary, info, questions, ingested), encoding="utf-8")
    print(stdout_table(summary))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
