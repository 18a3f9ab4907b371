"""manage.py graph_mirror_resync: rebuild the graph mirror from PostgreSQL, with a progress bar."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memory.mirror.sync import mirror_resync
from memory.mirror.targets import target_from_settings
from memory.models import Memory, MemoryStatus, Project


class Command(BaseCommand):
    help = ("Rebuild the mirror from scratch: each project's nodes are deleted and written again from the rows; "
            "a running graph_mirror then goes on from the rebuilt state.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", action="append", default=[], help="Only this project (slug; repeatable)")
        parser.add_argument("--no-progress", action="store_true", help="No progress bar (logs, CI)")

    def handle(self, *args: Any, project: list[str], no_progress: bool, **options: Any) -> None:
        projects = Project.objects.order_by("pk")
        if project:
            projects = projects.filter(slug__in=project)
            missing = set(project) - set(projects.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"No project {', '.join(sorted(missing))}.")
        try:
            target = target_from_settings()
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from None
        try:
            for row in projects:
                total = Memory.objects.filter(project=row).exclude(status=MemoryStatus.FORGOTTEN).count()
                with tqdm(total=total, unit="memories", desc=row.slug, disable=no_progress) as bar:
                    done = mirror_resync(target, row, progress=bar.update)
                self.stdout.write(f"{row.slug}: {done.memories} memories in {done.seconds:.1f} s; "
                                  f"cursor at change {done.last_change_id}")
        finally:
            target.close()
