"""manage.py export_project <project> [--session ID] [--format jsonl|graphml] [--output FILE]"""

from django.core.management.base import BaseCommand

from administration.commands import project_named, run
from administration.transfer import export_graphml, export_jsonl
from memory.access import Access
from memory.engine.maintenance.common import session_in
from memory.models import Role
from memory.reads.export import export_rows


class Command(BaseCommand):
    help = "Export a project (or one session) as JSON Lines (importable) or GraphML, unmasked (an operator's copy)."

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug")
        parser.add_argument("--session", type=int, default=None, help="Only this session (its id)")
        parser.add_argument("--format", choices=("jsonl", "graphml"), default="jsonl")
        parser.add_argument("--output", default="-", help="File to write (default: standard output)")

    def handle(self, *args, project, session, format, output, **options):
        project = project_named(project)
        chosen = run(session_in, project=project, session_id=session)
        rows = export_rows(Access(project, role=Role.ADMIN), chosen)  # the operator sees everything
        chunks = [export_graphml(rows)] if format == "graphml" else export_jsonl(rows)
        if output == "-":
            for chunk in chunks:
                self.stdout.write(chunk, ending="")
            return
        with open(output, "w", encoding="utf-8") as stream:
            stream.writelines(chunks)
        self.stderr.write(f"wrote {output}")
