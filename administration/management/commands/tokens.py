"""manage.py tokens <project> list | create <name> [--quiet] | revoke <id or prefix>"""

from django.core.management.base import BaseCommand, CommandError

from administration import services
from administration.commands import ACTOR, project_named, run


class Command(BaseCommand):
    help = "List a project's agent tokens, create one (printed once) or revoke one."

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug")
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="Tokens with prefix, created, last used, revoked")
        create = sub.add_parser("create", help="A new token for an agent")
        create.add_argument("name")
        create.add_argument("--quiet", action="store_true", help="Print only the token (for scripts)")
        revoke = sub.add_parser("revoke", help="Refuse the token from now on")
        revoke.add_argument("token", help="Its id or its prefix (cw_…)")

    def handle(self, *args, project, action, **options):
        project = project_named(project)
        if action == "list":
            for token in services.tokens(project=project):
                state = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}" if token.revoked_at else "active"
                used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
                created = f"{token.created_at:%Y-%m-%d %H:%M}"
                self.stdout.write(f"{token.pk}\t{token.prefix}…\t{token.name}\tcreated {created}\tlast used {used}"
                                  f"\t{state}")
        elif action == "create":
            issued = run(services.token_create, project=project, actor=ACTOR, name=options["name"])
            if options["quiet"]:
                self.stdout.write(issued.raw)
                return
            self.stdout.write(self.style.SUCCESS(f"Token {issued.token.pk} ({issued.token.name}) for {project.slug}"))
            self.stdout.write(f"API token (shown once, keep it secret):\n{issued.raw}")
        else:
            wanted = options["token"]
            matches = [t for t in services.tokens(project=project)
                       if str(t.pk) == wanted or (len(wanted) >= 6 and t.prefix.startswith(wanted))]
            if len(matches) != 1:
                raise CommandError(f"{'No' if not matches else 'More than one'} token of {project.slug} matches "
                                   f"{wanted!r}; `tokens {project.slug} list` shows ids and prefixes.")
            token = run(services.token_revoke, project=project, actor=ACTOR, token_id=matches[0].pk)
            self.stdout.write(self.style.SUCCESS(f"Token {token.pk} ({token.name}) revoked"))
