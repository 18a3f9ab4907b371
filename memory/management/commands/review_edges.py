"""manage.py review_edges --project P [--dry-run]: re-check weak inferred edges with a stronger model.

Needs an LLM (CW_LLM=openai …); MEMORY["REVIEW_LLM_MODEL"] names the reviewer (default LLM_MODEL).
Human decisions are never sent or changed; sensitive memories are never sent (docs/maintenance.md).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from memory.engine.maintenance.cli import MaintenanceCommand
from memory.engine.maintenance.common import JobReport, Progress
from memory.engine.maintenance.review import review_run
from memory.models import Project


class Command(MaintenanceCommand):
    help = "Re-classify inferred edges flagged needs_review (or below --below-confidence) with the review LLM."
    job_title = "review"

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--session", type=int, help="Only this session id")
        parser.add_argument("--limit", type=int, help="At most this many edges (default REVIEW_MAX_EDGES)")
        parser.add_argument("--below-confidence", type=float,
                            help="Also review inferred edges under this confidence, flagged or not")

    def run(self, project: Project, options: dict[str, Any], progress: Progress) -> JobReport:
        return review_run(project=project, actor=options["actor"], session_id=options["session"],
                          limit=options["limit"], below_confidence=options["below_confidence"],
                          dry_run=options["dry_run"], progress=progress)

    def after(self, report: JobReport) -> None:
        failed = report.counts.get("failed", 0)
        if failed and failed == report.counts.get("to_review"):
            raise CommandError(f"Every review request failed ({failed}); nothing was changed. "
                               + next(iter(report.notes), ""))
