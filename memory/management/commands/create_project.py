"""manage.py create_project <name>: create a project and print a new API token for its agents."""

from django.core.management.base import BaseCommand, CommandError

from memory.engine.projects import project_create, token_issue
from memory.errors import MemoryEngineError
from memory.models import Project


class Command(BaseCommand):
    help = "Create a project (or, with --token-only, add a token to an existing one) and print an API token."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--slug", help="URL name (default: derived from the name)")
        parser.add_argument("--token-name", default="agent")
        parser.add_argument("--token-only", action="store_true", help="Issue a token for an existing project")
        parser.add_argument("--quiet", action="store_true", help="Print only the token (for scripts)")

    def handle(self, *args, name, slug, token_name, token_only, quiet, **options):
        try:
            if token_only:
                project = Project.objects.filter(slug=slug or name).first()
                if project is None:
                    raise CommandError(f"No project with slug {slug or name!r}.")
            else:
                project = project_create(name=name, slug=slug)
        except MemoryEngineError as exc:
            raise CommandError(exc.message) from exc
        _token, raw = token_issue(project=project, name=token_name)
        if quiet:
            self.stdout.write(raw)
            return
        self.stdout.write(self.style.SUCCESS(f"Project {project.name!r} (slug: {project.slug})"))
        self.stdout.write(f"API token (shown once, keep it secret):\n{raw}")
