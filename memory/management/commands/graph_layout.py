"""manage.py graph_layout: recompute the stored force layout of sessions (docs/live.md)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.engine.layout import layout_compute
from memory.models import AgentSession


class Command(BaseCommand):
    help = "Recompute the stored graph layout of one session, a project's sessions, or all of them."

    def add_arguments(self, parser):
        parser.add_argument("--session", type=int, action="append", default=[], help="Session id (repeatable)")
        parser.add_argument("--project", help="Every session of this project (slug)")
        parser.add_argument("--all", action="store_true", help="Every session")

    def handle(self, *args, session, project, all, **options):
        sessions = AgentSession.objects.order_by("id")
        if session:
            sessions = sessions.filter(pk__in=session)
        elif project:
            sessions = sessions.filter(project__slug=project)
        elif not all:
            raise CommandError("Name --session ID, --project SLUG or --all.")
        for row in sessions.only("id"):
            stats = layout_compute(row.pk)
            self.stdout.write(f"session {row.pk}: {stats.nodes} nodes, {stats.edges} edges, {stats.seconds:.2f} s")
