"""manage.py demo_large_session: build (or finish building) the demo's large session through the pipeline.

`make demo` starts it in the background once the login is printed, so the first login is not delayed;
run it by hand to make the session larger (--interactions) or to finish one an interrupted demo left.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from memory.demo.bootstrap import DEMO_SLUG, LARGE_EXTERNAL_ID, large_session_load
from memory.models import Interaction, Project

DEFAULT_INTERACTIONS = 6500  # over 5,000 memories: more than the page draws whole (selectors.GRAPH_MAX_NODES)
REPORT_EVERY = 500


class Command(BaseCommand):
    help = "Build the demo's large session (a year of travel-desk episodes) through the real pipeline."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", default=DEMO_SLUG, help="Project slug (default: %(default)s)")
        parser.add_argument("--interactions", type=int, default=DEFAULT_INTERACTIONS,
                            help="How many interactions the session should hold (default: %(default)s)")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="For the link printed at the end")

    def handle(self, *args: Any, project: str, interactions: int, base_url: str, **options: Any) -> None:
        if interactions < 1:
            raise CommandError("--interactions must be at least 1.")
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project {project!r}; run `manage.py demo --load-only` first.")
        started = time.monotonic()
        already = Interaction.objects.filter(session__project=found, session__external_id=LARGE_EXTERNAL_ID).count()
        out = self.stdout

        def progress(done: int, total: int) -> None:
            if done % REPORT_EVERY == 0 or done == total:
                rate = (done - already) / max(time.monotonic() - started, 1e-6)
                out.write(f"Large demo session: {done} of {total} interactions through the pipeline "
                          f"({rate:.0f}/s).")
                out.flush()

        try:
            session = large_session_load(found, interactions, progress=progress)
        except KeyboardInterrupt:  # the demo stopping: what was sent is kept, a later run goes on from there
            out.write("Large demo session: stopped; `manage.py demo_large_session` (or the next `make demo`) "
                      "finishes it.")
            return
        path = reverse("session-detail", kwargs={"project_slug": found.slug, "session_id": session.pk})
        memories = session.memories.count()
        out.write(self.style.SUCCESS(f"Large demo session #{session.pk} ready: {session.interactions.count()} "
                                     f"interactions, {memories} memories. Open it at {base_url.rstrip('/')}{path}"))
