"""What the members and tokens commands share: the project by slug, engine errors as CLI errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.management.base import CommandError

from memory.errors import MemoryEngineError
from memory.models import Project

ACTOR = "cli"


def project_named(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project with slug {slug!r} (manage.py create_project makes one).")
    return project


def run(act: Callable[..., Any], **kwargs) -> Any:
    try:
        return act(**kwargs)
    except MemoryEngineError as exc:
        raise CommandError(exc.message) from exc
