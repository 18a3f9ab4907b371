"""manage.py forget_memories --project P FILTERS [--hard] [--dry-run | --yes]: forget memories.

Soft (default): status forgotten, out of recall and the graph. Hard: delete with the whole cascade
(edges, mentions, vectors, orphan entities, summaries rewritten, source interactions, traces and the
change log scrubbed); `--session N --hard` alone deletes the whole session, every interaction included.
A hard forget needs --yes; run it with --dry-run first (docs/maintenance.md).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.management.base import CommandError
from django.utils.dateparse import parse_date, parse_datetime

from memory.engine.maintenance.cli import MaintenanceCommand
from memory.engine.maintenance.common import JobReport, Progress, entity_ref
from memory.engine.maintenance.forget import ForgetFilter, forget_run
from memory.models import MemoryKind, Project


def _when(value: str) -> datetime:
    parsed = parse_datetime(value)
    if parsed is None and parse_date(value) is not None:
        parsed = datetime.combine(parse_date(value), datetime.min.time())
    if parsed is None:
        raise CommandError(f"--before {value!r} is not a date (YYYY-MM-DD) or ISO date-time.")
    return parsed


class Command(MaintenanceCommand):
    help = "Forget memories selected by ids/session/entity/kind/date/text: soft, or --hard with the full cascade."
    job_title = "forget"

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--hard", action="store_true", help="Delete with the cascade instead of marking forgotten")
        parser.add_argument("--yes", action="store_true", help="Confirm a hard forget (after a --dry-run)")
        parser.add_argument("--expect", type=int, help="Refuse unless the selection holds exactly this many memories")
        parser.add_argument("--ids", type=int, nargs="+", help="These memory ids")
        parser.add_argument("--session", type=int,
                            help="Memories of this session id (with --hard and no other filter: the whole session, "
                                 "its interactions and the session itself)")
        parser.add_argument("--entity", help="Memories mentioning this entity (id or name)")
        parser.add_argument("--kind", action="append", choices=MemoryKind.values, help="Of this kind (repeatable)")
        parser.add_argument("--before", help="That happened before this date (YYYY-MM-DD or ISO date-time)")
        parser.add_argument("--text", help="Whose content contains this text (case-insensitive)")

    def run(self, project: Project, options: dict[str, Any], progress: Progress) -> JobReport:
        if options["hard"] and not options["dry_run"] and not options["yes"]:
            raise CommandError("A hard forget deletes for good: run it with --dry-run first, then again with --yes.")
        entity = options["entity"]
        selection = ForgetFilter(
            memory_ids=tuple(options["ids"] or ()), session_id=options["session"],
            entity=entity_ref(entity), kinds=tuple(options["kind"] or ()),
            before=_when(options["before"]) if options["before"] else None, text_contains=options["text"] or "",
        )
        return forget_run(project=project, actor=options["actor"], selection=selection,
                          mode="hard" if options["hard"] else "soft", expect_memories=options["expect"],
                          dry_run=options["dry_run"], progress=progress)
