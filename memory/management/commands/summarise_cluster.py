"""manage.py summarise_cluster --project P (--ids … | --session S | --entity E): write a summary memory.

The summary (kind summary) is linked from each member by a `summarizes` edge; the LLM writes it when
configured, otherwise the extractive summariser picks the most central sentences (docs/maintenance.md).
"""

from __future__ import annotations

from typing import Any

from memory.engine.maintenance.cli import MaintenanceCommand, ids_option
from memory.engine.maintenance.common import JobReport, Progress, entity_ref
from memory.engine.maintenance.summarise import summarise_run
from memory.models import Project


class Command(MaintenanceCommand):
    help = "Summarise a cluster of memories (ids, a session and/or an entity) into one summary memory."
    job_title = "summarise"

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--ids", type=int, nargs="+", help="The memory ids of the cluster")
        parser.add_argument("--session", type=int, help="The active memories of this session")
        parser.add_argument("--entity", help="The active memories mentioning this entity (id or name)")
        parser.add_argument("--no-llm", action="store_true", help="Extractive summary even if an LLM is configured")

    def run(self, project: Project, options: dict[str, Any], progress: Progress) -> JobReport:
        entity = options["entity"]
        entity = entity_ref(entity)
        return summarise_run(project=project, actor=options["actor"], memory_ids=ids_option(options["ids"]),
                             session_id=options["session"], entity=entity,
                             use_llm=not options["no_llm"], dry_run=options["dry_run"], progress=progress)
