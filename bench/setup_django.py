"""Point Django at a separate benchmark database on the same server, then set it up."""

from __future__ import annotations

import os

BENCH_DB = "contextweaver_bench"


def setup(embedder: str = "minilm") -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextweaver_site.settings.base")
    os.environ["CW_DB_NAME"] = BENCH_DB
    os.environ["CW_EMBEDDER"] = embedder
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def gc_settle() -> None:
    """Collect, then move every live object out of the collector's sight (gc.freeze).

    A benchmark process holds far more long-lived objects than a server (the corpus, every stdlib
    module imported for its docstrings, the model), and a full collection walks all of them: without
    this, a ~0.3 s pause lands in some random measured call. The server's own pause is measured
    separately (recall_scale.gc_probe).
    """
    import gc

    gc.collect()
    gc.freeze()
