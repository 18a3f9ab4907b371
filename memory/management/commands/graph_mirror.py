"""manage.py graph_mirror: copy the change log into the optional Neo4j / FalkorDB mirror, and keep at it.

One such process per deployment (it is the mirror's only writer); stopping it is safe at any moment:
the next start resumes from each project's cursor (docs/integrations.md).
"""

from __future__ import annotations

import signal
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.mirror.sync import mirror_catch_up, mirror_follow
from memory.mirror.targets import target_from_settings


class Command(BaseCommand):
    help = "Mirror memories, entities and edges into the graph named by NEO4J_URI (or CW_MIRROR_FALKORDB_URL)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="Catch up, then exit (default: keep following)")
        parser.add_argument("--interval", type=float, default=0.5, help="Seconds between looks when idle")

    def handle(self, *args: Any, once: bool, interval: float, **options: Any) -> None:
        if interval <= 0:
            raise CommandError("--interval must be > 0.")
        try:
            target = target_from_settings()
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from None
        try:
            target.ensure_indexes()
            if once:
                applied = mirror_catch_up(target)
                self.stdout.write(f"Mirror {target.name}: {applied} changes applied; caught up.")
                return
            stopping = []
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: stopping.append(True))
            self.stdout.write(f"Mirroring into {target.name} (Ctrl+C stops; a restart resumes where it stopped).")
            mirror_follow(target, interval=interval, should_stop=lambda: bool(stopping),
                          on_applied=lambda n: self.stdout.write(f"{n} changes applied"))
        finally:
            target.close()
