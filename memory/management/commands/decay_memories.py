"""manage.py decay_memories --project P [--dry-run]: archive memories whose weight decayed (docs/maintenance.md).

weight = importance/5 × 0.5^(age/half-life) × (1 + boost·ln(1 + accesses)); below the threshold a
memory is archived (out of default recall, restorable with --restore IDS).
"""

from __future__ import annotations

from typing import Any

from memory.engine.maintenance.cli import MaintenanceCommand, ids_option
from memory.engine.maintenance.common import JobReport, Progress
from memory.engine.maintenance.decay import decay_run, memories_restore
from memory.models import MemoryKind, Project


class Command(MaintenanceCommand):
    help = "Archive memories whose decayed weight fell below the threshold (or restore archived ones)."
    job_title = "decay"

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--session", type=int, help="Only this session id")
        parser.add_argument("--ids", type=int, nargs="+", help="Only these memory ids")
        parser.add_argument("--kind", action="append", choices=MemoryKind.values, help="Only this kind (repeatable)")
        parser.add_argument("--threshold", type=float, help="Archive below this weight (DECAY_ARCHIVE_THRESHOLD)")
        parser.add_argument("--half-life", type=float, help="Freshness half-life in days (DECAY_HALF_LIFE_DAYS)")
        parser.add_argument("--force", action="store_true", help="Archive the --ids now, whatever their weight")
        parser.add_argument("--restore", action="store_true", help="Restore the --ids (archived or softly forgotten)")

    def run(self, project: Project, options: dict[str, Any], progress: Progress) -> JobReport:
        common = {"project": project, "actor": options["actor"], "dry_run": options["dry_run"], "progress": progress}
        if options["restore"]:
            return memories_restore(memory_ids=ids_option(options["ids"]) or [], **common)
        return decay_run(session_id=options["session"], memory_ids=ids_option(options["ids"]), kinds=options["kind"],
                         threshold=options["threshold"], half_life_days=options["half_life"], force=options["force"],
                         **common)
