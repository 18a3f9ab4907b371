"""What the five maintenance commands share: project lookup, errors, progress bars, the report.

Kept next to the jobs so each command file only declares its options and calls its job.
Progress bars (tqdm) go to the command's stderr, the report to its stdout.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from ...errors import MemoryEngineError
from ...models import Project
from .common import JobReport, Progress


class TqdmProgress:
    """A Progress callback drawing a tqdm bar; a new total (a new phase) starts a new bar."""

    def __init__(self, stream: Any, desc: str) -> None:
        self.stream, self.desc = stream, desc
        self.bar: tqdm | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None or self.bar.total != total:
            self.close()
            self.bar = tqdm(total=total, desc=self.desc, file=self.stream, unit="it", dynamic_ncols=True)
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class MaintenanceCommand(BaseCommand):
    """Base of the maintenance commands: --project, --dry-run, --actor; subclasses implement run()."""

    job_title = "maintenance"

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="Project slug")
        parser.add_argument("--dry-run", action="store_true", help="Count what would change; write nothing")
        parser.add_argument("--actor", default="command", help="Who is recorded in the change log (default: command)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            known = ", ".join(Project.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none"
            raise CommandError(f"No project with slug {options['project']!r} (known: {known}).")
        progress = TqdmProgress(getattr(self.stderr, "_out", sys.stderr), self.job_title)
        try:
            report = self.run(project, options, progress)
        except MemoryEngineError as exc:
            raise CommandError(_message(exc)) from exc
        finally:
            progress.close()
        self.report_print(report)
        self.after(report)

    def run(self, project: Project, options: dict[str, Any], progress: Progress) -> JobReport:
        raise NotImplementedError

    def after(self, report: JobReport) -> None:
        """Hook: a command may fail after printing its report (e.g. every review failed)."""

    def report_print(self, report: JobReport) -> None:
        heading = f"{report.job}: dry run, nothing was written" if report.dry_run else f"{report.job}: done"
        self.stdout.write(self.style.WARNING(heading) if report.dry_run else self.style.SUCCESS(heading))
        for name, value in sorted(report.params.items()):
            self.stdout.write(f"  {name}: {value}")
        for name, count in sorted(report.counts.items()):
            self.stdout.write(f"  {name}: {count}")
        for name, ids in sorted(report.ids.items()):
            shown = ", ".join(map(str, sorted(set(ids))[:30])) + (" …" if len(set(ids)) > 30 else "")
            self.stdout.write(f"  {name} ids: {shown}")
        for note in report.notes:
            self.stdout.write(self.style.NOTICE(f"  note: {note}"))


def _message(exc: MemoryEngineError) -> str:
    fields = exc.extra or {}
    details = "; ".join(f"{name}: {', '.join(map(str, problems)) if isinstance(problems, list) else problems}"
                        for name, problems in fields.items())
    return f"{exc.message}" + (f" ({details})" if details and details not in exc.message else "")


def ids_option(values: list[int] | None) -> list[int] | None:
    """argparse gives None or a list; an empty list means no ids."""
    return list(values) if values else None
