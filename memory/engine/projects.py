"""Projects, agent sessions and the agents' API tokens."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from ..errors import ValidationFailed
from ..models import AgentSession, ApiToken, Project, hash_token
from .changelog import change_record
from .operations import Op


def project_create(*, name: str, slug: str | None = None) -> Project:
    slug = slugify(slug or name)[:100]
    if not slug:
        raise ValidationFailed("a project needs a name with at least one letter or digit")
    if Project.objects.filter(slug=slug).exists():
        raise ValidationFailed(f"a project with slug {slug!r} already exists")
    return Project.objects.create(name=name, slug=slug)


def token_issue(*, project: Project, name: str = "agent") -> tuple[ApiToken, str]:
    """Create a token; the raw value is returned once and never stored."""
    raw = ApiToken.new_raw_token()
    token = ApiToken.objects.create(project=project, name=name, key_hash=hash_token(raw), prefix=raw[:10])
    return token, raw


def token_resolve(raw: str) -> ApiToken | None:
    token = ApiToken.objects.select_related("project").filter(key_hash=hash_token(raw), revoked_at=None).first()
    if token is not None and (token.last_used_at is None or (timezone.now() - token.last_used_at).total_seconds() > 60):
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token


def session_create(*, project: Project, title: str = "", task: str = "", external_id: str = "",
                   metadata: dict | None = None, subject: str = "", actor: str) -> AgentSession:
    duplicate = ValidationFailed(f"a session with external_id {external_id!r} already exists",
                                 {"external_id": ["already exists in this project"]})
    with transaction.atomic():
        try:
            with transaction.atomic():
                session = AgentSession.objects.create(
                    project=project, title=title, task=task, external_id=external_id, metadata=metadata or {},
                    subject=subject.strip(),
                )
        except IntegrityError as exc:  # the unique constraint decides, also under concurrency
            raise duplicate from exc
        change_record(project=project, session=session, actor=actor, op=Op.SESSION_CREATED, object_type="session",
                      object_id=session.pk, after={"title": title, "task": task, "external_id": external_id,
                                                   "subject": session.subject})
    return session
