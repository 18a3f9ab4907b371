"""manage.py import_project <file.jsonl> --slug SLUG [--name NAME]"""

from django.core.management.base import BaseCommand, CommandError

from administration.commands import run
from administration.transfer import import_into_new_project, import_parse


class Command(BaseCommand):
    help = ("Import a JSON Lines export into a new project: checked whole first (the first bad line and field "
            "refuse it, nothing is written), then written in one transaction with new ids.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="A JSON Lines export (manage.py export_project, or the export API)")
        parser.add_argument("--slug", required=True, help="The new project's slug")
        parser.add_argument("--name", default="", help="The new project's name (default: the slug)")

    def handle(self, *args, file, slug, name, **options):
        try:
            with open(file, encoding="utf-8") as handle:
                rows = run(import_parse, lines=handle)
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{file} is not UTF-8 text") from exc
        project = run(import_into_new_project, rows=rows, name=name or slug, slug=slug)
        counts = {kind: sum(1 for r in rows if r["type"] == kind) for kind in sorted({r["type"] for r in rows})}
        self.stdout.write(self.style.SUCCESS(f"imported into project {project.slug}: "
                                             + ", ".join(f"{n} {kind}s" for kind, n in counts.items())))
