"""Project administration: who may read and curate a project (members and their roles) and which agents
may write to it (API tokens). Plain functions; the API and the commands call them (docs/administration.md).

Every act is a row of the project's change log (no session), so it is audited and reaches every open page
of the project: a session socket whose user lost the membership closes (memory/consumers.py). A project
always keeps at least one admin, and a raw token is returned once and never stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from memory.engine.changelog import change_record
from memory.engine.operations import Op
from memory.engine.projects import token_issue
from memory.errors import NotFoundError, ValidationFailed
from memory.models import ApiToken, Membership, Project, Role

TOKEN_NAME_MAX = 100
ROLES = tuple(Role.values)


def user_named(who: str):
    """A user by username or e-mail (case-insensitive); clear errors for none and for an ambiguous e-mail."""
    who = (who or "").strip()
    if not who:
        raise ValidationFailed("name a user by username or e-mail", {"user": ["required"]})
    users = list(get_user_model().objects.filter(Q(username__iexact=who) | Q(email__iexact=who))[:2])
    exact = [u for u in users if u.username.lower() == who.lower()]
    if exact:
        return exact[0]
    if len(users) > 1:
        raise ValidationFailed(f"several users have the e-mail {who!r}; give the username",
                               {"user": ["ambiguous e-mail"]})
    if not users:
        raise NotFoundError(f"no user {who!r}", {"user": ["no user with this username or e-mail"]})
    return users[0]


def _role(role: str) -> str:
    if role not in ROLES:
        raise ValidationFailed(f"unknown role {role!r}", {"role": [f"use one of {', '.join(ROLES)}"]})
    return role


def _membership(project: Project, user_id: int) -> Membership:
    membership = Membership.objects.select_related("user").filter(project=project, user_id=user_id).first()
    if membership is None:
        raise NotFoundError(f"user {user_id} is not a member of {project.slug!r}")
    return membership


def _keeps_an_admin(project: Project, leaving: Membership) -> None:
    others = Membership.objects.filter(project=project, role=Role.ADMIN).exclude(pk=leaving.pk)
    if leaving.role == Role.ADMIN and not others.exists():
        raise ValidationFailed(f"{leaving.user.username} is the last admin of {project.slug!r}: make another "
                               "member admin first", {"role": ["a project keeps at least one admin"]})


def _member_row(membership: Membership) -> dict:
    return {"user_id": membership.user_id, "username": membership.user.username, "role": membership.role}


def _record(project: Project, actor: str, op: str, object_type: str, object_id: int, before, after) -> None:
    change_record(project=project, session=None, actor=actor, op=op, object_type=object_type,
                  object_id=object_id, before=before, after=after)


def member_add(*, project: Project, actor: str, user: str, role: str = Role.VIEWER) -> Membership:
    """Make an existing user (username or e-mail) a member with this role."""
    found, role = user_named(user), _role(role)
    with transaction.atomic():
        if Membership.objects.filter(project=project, user=found).exists():
            raise ValidationFailed(f"{found.username} is already a member of {project.slug!r}",
                                   {"user": ["already a member: change the role instead"]})
        membership = Membership.objects.create(project=project, user=found, role=role)
        membership.user = found
        _record(project, actor, Op.MEMBER_ADDED, "membership", found.pk, None, _member_row(membership))
    return membership


@dataclass(frozen=True)
class NewAccount:
    membership: Membership
    link: str  # the path where the person sets a password: valid once, for PASSWORD_RESET_TIMEOUT


def account_create(*, project: Project, actor: str, username: str, email: str = "",
                   role: str = Role.VIEWER) -> NewAccount:
    """A new person, member of the project, with no password yet: the admin passes on a one-time link
    (Django's password-reset token: it stops working once used, or after PASSWORD_RESET_TIMEOUT)."""
    users, role = get_user_model(), _role(role)
    username, email = (username or "").strip(), (email or "").strip()
    candidate = users(username=username, email=email)
    try:
        candidate.full_clean(exclude=["password", "last_login", "date_joined"])
    except DjangoValidationError as exc:
        fields = exc.message_dict
        raise ValidationFailed("; ".join(f"{name}: {' '.join(errors)}" for name, errors in fields.items()),
                               fields) from exc
    if email and users.objects.filter(email__iexact=email).exists():
        raise ValidationFailed(f"a user with the e-mail {email!r} exists: add them as a member instead",
                               {"email": ["already used"]})
    with transaction.atomic():
        candidate.set_unusable_password()
        candidate.save()
        membership = Membership.objects.create(project=project, user=candidate, role=role)
        _record(project, actor, Op.MEMBER_ADDED, "membership", candidate.pk, None,
                {**_member_row(membership), "account_created": True})
    token = default_token_generator.make_token(candidate)
    link = reverse("account-welcome", kwargs={"uidb64": urlsafe_base64_encode(force_bytes(candidate.pk)),
                                              "token": token})
    return NewAccount(membership, link)


def member_role_set(*, project: Project, actor: str, user_id: int, role: str) -> Membership:
    role = _role(role)
    with transaction.atomic():
        membership = _membership(project, user_id)
        if membership.role == role:
            return membership
        before = _member_row(membership)
        if role != Role.ADMIN:
            _keeps_an_admin(project, membership)
        membership.role = role
        membership.save(update_fields=["role"])
        _record(project, actor, Op.MEMBER_ROLE_CHANGED, "membership", user_id, before, _member_row(membership))
    return membership


def member_remove(*, project: Project, actor: str, user_id: int) -> None:
    """Remove the membership; the user's open pages of the project lose their live stream at once."""
    with transaction.atomic():
        membership = _membership(project, user_id)
        _keeps_an_admin(project, membership)
        before = _member_row(membership)
        membership.delete()
        _record(project, actor, Op.MEMBER_REMOVED, "membership", user_id, before, None)


def members(*, project: Project) -> list[Membership]:
    return list(Membership.objects.filter(project=project).select_related("user").order_by("user__username"))


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    raw: str  # shown once


def _token_row(token: ApiToken) -> dict:
    return {"id": token.pk, "name": token.name, "prefix": token.prefix,
            "revoked_at": token.revoked_at.isoformat() if token.revoked_at else None}


def token_create(*, project: Project, actor: str, name: str) -> IssuedToken:
    name = (name or "").strip()
    if not name or len(name) > TOKEN_NAME_MAX:
        raise ValidationFailed("a token needs a name (1 to 100 characters), e.g. the agent that uses it",
                               {"name": [f"1 to {TOKEN_NAME_MAX} characters"]})
    with transaction.atomic():
        token, raw = token_issue(project=project, name=name)
        _record(project, actor, Op.TOKEN_CREATED, "token", token.pk, None, _token_row(token))
    return IssuedToken(token, raw)


def token_revoke(*, project: Project, actor: str, token_id: int) -> ApiToken:
    """Revoke at once: the next request with it is a 401. Revoking twice is a no-op."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(project=project, pk=token_id).first()
        if token is None:
            raise NotFoundError(f"no token {token_id} in {project.slug!r}")
        if token.revoked_at is None:
            before = _token_row(token)
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            _record(project, actor, Op.TOKEN_REVOKED, "token", token.pk, before, _token_row(token))
    return token


def tokens(*, project: Project) -> list[ApiToken]:
    return list(ApiToken.objects.filter(project=project).order_by("revoked_at", "-created_at", "-id"))
