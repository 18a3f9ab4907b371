"""Tenancy: projects, their human members (with roles) and their agents' API tokens."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models

TOKEN_PREFIX = "cw_"


class Project(models.Model):
    """A workspace: its sessions, members, tokens and engine settings (thresholds, weights)."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    VIEWER = "viewer"
    CURATOR = "curator"
    ADMIN = "admin"


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique")]


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """An agent's credential for one project. Only the SHA-256 of the token is stored."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, default="agent")
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    @staticmethod
    def new_raw_token() -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)

    def __str__(self) -> str:
        return f"{self.project.slug}:{self.name} ({self.prefix}…)"
