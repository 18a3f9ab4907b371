"""manage.py merge_duplicates --project P [--dry-run]: merge near-duplicate memories (docs/maintenance.md).

Without --survivor: finds pairs at cosine ≥ MERGE_SIMILARITY within a session (or --scope project).
With --survivor ID --duplicates IDS: merges those memories into that one.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from memory.engine.maintenance.cli import MaintenanceCommand
from memory.engine.maintenance.common import JobReport, Progress
from memory.engine.maintenance.merge import SCOPES, merge_memories, merge_run
from memory.models import Project


class Command(MaintenanceCommand):
    help = "Merge near-duplicate memories: edges redirected, mentions moved, provenance kept."
    job_title = "merge"

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--session", type=int, help="Only this session id")
        parser.add_argument("--scope", choices=SCOPES, default="session",
                            help="Look for duplicates within each session (default) or across the project")
        parser.add_argument("--threshold", type=float, help="Cosine similarity for duplicates (MERGE_SIMILARITY)")
        parser.add_argument("--survivor", type=int, help="Merge --duplicates into this memory id")
        parser.add_argument("--duplicates", type=int, nargs="+", help="Memory ids to merge into --survivor")

    def run(self, project: Project, options: dict[str, Any], progress: Progress) -> JobReport:
        common = {"project": project, "actor": options["actor"], "dry_run": options["dry_run"], "progress": progress}
        if (options["survivor"] is None) != (not options["duplicates"]):
            raise CommandError("--survivor and --duplicates go together.")
        if options["survivor"] is not None:
            return merge_memories(survivor_id=options["survivor"], duplicate_ids=options["duplicates"], **common)
        return merge_run(session_id=options["session"], scope=options["scope"], threshold=options["threshold"],
                         **common)
