"""Point Django at the separate evaluation database on the embedded server, then migrate it."""

from __future__ import annotations

import os

EVAL_DB = "contextweaver_eval"


def setup() -> None:
    """Eval database, embedder from CW_EMBEDDER (default minilm), inline ingest (no queue worker needed)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextweaver_site.settings.base")
    os.environ["CW_DB_NAME"] = EVAL_DB
    os.environ.setdefault("CW_EMBEDDER", "minilm")
    os.environ["CW_INGEST_MODE"] = "inline"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
