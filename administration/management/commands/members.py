"""manage.py members <project> list | add <user> [--role R] | role <user> <role> | remove <user>"""

from django.core.management.base import BaseCommand

from administration import services
from administration.commands import ACTOR, project_named, run
from memory.models import Role


class Command(BaseCommand):
    help = ("List a project's members, add an existing user (username or e-mail), create an account with a "
            "one-time password link, change a role, remove one.")

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug")
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="Members and roles")
        add = sub.add_parser("add", help="Make an existing user a member")
        add.add_argument("user", help="Username or e-mail")
        add.add_argument("--role", default=Role.VIEWER, choices=services.ROLES)
        create = sub.add_parser("create", help="Create an account, member of the project, with a one-time link")
        create.add_argument("username")
        create.add_argument("--email", default="")
        create.add_argument("--role", default=Role.VIEWER, choices=services.ROLES)
        role = sub.add_parser("role", help="Change a member's role")
        role.add_argument("user")
        role.add_argument("role", choices=services.ROLES)
        remove = sub.add_parser("remove", help="Remove a member (their open pages disconnect)")
        remove.add_argument("user")

    def handle(self, *args, project, action, **options):
        project = project_named(project)
        if action == "list":
            for membership in services.members(project=project):
                self.stdout.write(f"{membership.user.username}\t{membership.role}")
            return
        if action == "create":
            account = run(services.account_create, project=project, actor=ACTOR, username=options["username"],
                          email=options["email"], role=options["role"])
            self.stdout.write(self.style.SUCCESS(f"{account.membership.user.username} created, {options['role']} "
                                                 f"of {project.slug}"))
            self.stdout.write(f"One-time link to choose a password (after the server's address):\n{account.link}")
            return
        user = run(services.user_named, who=options["user"])
        if action == "add":
            run(services.member_add, project=project, actor=ACTOR, user=user.username, role=options["role"])
            self.stdout.write(self.style.SUCCESS(f"{user.username} is now {options['role']} of {project.slug}"))
        elif action == "role":
            run(services.member_role_set, project=project, actor=ACTOR, user_id=user.pk, role=options["role"])
            self.stdout.write(self.style.SUCCESS(f"{user.username} is now {options['role']} of {project.slug}"))
        else:
            run(services.member_remove, project=project, actor=ACTOR, user_id=user.pk)
            self.stdout.write(self.style.SUCCESS(f"{user.username} is no longer a member of {project.slug}"))
