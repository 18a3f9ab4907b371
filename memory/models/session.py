"""Agent sessions and the raw interactions they send (every one is kept, memory or not)."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from .project import Project


class AgentSession(models.Model):
    """One run/conversation of an agent; `task` is its current task focus."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sessions")
    external_id = models.CharField(max_length=200, blank=True, default="")
    title = models.CharField(max_length=300, blank=True, default="")
    task = models.TextField(blank=True, default="")
    # Whom the session is for (a person's name or the agent's user id), when the agent says: a value in it
    # then replaces only values of the same subject in other sessions (engine/subjects.py). Empty: not said.
    subject = models.CharField(max_length=200, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], condition=~Q(external_id=""), name="session_external_id_unique"
            )
        ]
        indexes = [models.Index(fields=["project", "-last_activity_at"])]

    def __str__(self) -> str:
        return self.title or f"session {self.pk}"


class InteractionKind(models.TextChoices):
    USER_INPUT = "user_input"
    ASSISTANT_OUTPUT = "assistant_output"
    AGENT_THOUGHT = "agent_thought"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    OBSERVATION = "observation"
    SYSTEM = "system"


class InteractionStatus(models.TextChoices):
    PENDING = "pending"  # accepted and persisted, not yet processed
    KEPT = "kept"  # became (or reinforced) a memory
    FILTERED = "filtered"  # judged not worth remembering; scores and reason say why
    FAILED = "failed"  # processing raised; retried by the queue, never deleted


class Interaction(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="interactions")
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="interactions")
    kind = models.CharField(max_length=32, choices=InteractionKind.choices)
    content = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)
    occurred_at = models.DateTimeField()
    received_at = models.DateTimeField(auto_now_add=True)
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    # The agent framework's own id for it (a message, tool-call or span id): links may name it.
    external_id = models.CharField(max_length=200, blank=True, default="")
    # The recall the agent acted on when it sent this, and the memories it says it used (engine/use.py).
    recall = models.ForeignKey("memory.RecallTrace", on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="led_to")
    used = ArrayField(models.BigIntegerField(), default=list, blank=True)
    status = models.CharField(max_length=16, choices=InteractionStatus.choices, default=InteractionStatus.PENDING)
    scores = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    # Stages of the write path that failed while the memory was kept without them, {stage: reason}
    # (engine/stages.py); emptied when a retry runs them.
    stage_errors = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="interaction_idempotency_unique",
            ),
            models.UniqueConstraint(fields=["session", "external_id"], condition=~Q(external_id=""),
                                    name="interaction_external_id_unique"),
        ]
        indexes = [
            models.Index(fields=["session", "occurred_at"]),
            models.Index(fields=["status"], condition=Q(status="pending"), name="interaction_pending_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}#{self.pk}"


class LinkBy(models.TextChoices):
    """How a declared link names the interaction it depends on."""

    ID = "id"  # our id: any interaction of the project
    IDEMPOTENCY_KEY = "idempotency_key"  # of the same session
    EXTERNAL_ID = "external_id"  # of the same session


class LinkStatus(models.TextChoices):
    WAITING = "waiting"  # its parent has not arrived, or one of the two is not processed yet
    RESOLVED = "resolved"  # became edges (`edge_ids`), or both ends are one memory
    NO_MEMORY = "no_memory"  # an end kept no memory, and nothing it depends on did either


class InteractionLink(models.Model):
    """A dependency the agent declared: `child` depends on the interaction `by`/`ref` names (`parent` once it
    is known). Kept whatever becomes of it, so a link that never resolves is visible (engine/links.py)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="interaction_links")
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="interaction_links")
    child = models.ForeignKey(Interaction, on_delete=models.CASCADE, related_name="links")
    by = models.CharField(max_length=16, choices=LinkBy.choices)
    ref = models.CharField(max_length=200)
    relation = models.CharField(max_length=20)
    parent = models.ForeignKey(Interaction, on_delete=models.CASCADE, null=True, blank=True, related_name="dependents")
    status = models.CharField(max_length=10, choices=LinkStatus.choices, default=LinkStatus.WAITING)
    edge_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    note = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["child", "by", "ref", "relation"], name="link_unique")]
        indexes = [
            # A newly accepted interaction looks up the links waiting for it by its key or external id.
            models.Index(fields=["session", "by", "ref"], condition=Q(parent__isnull=True), name="link_unbound"),
            models.Index(fields=["session", "status"], condition=Q(status="waiting"), name="link_waiting"),
        ]

    def __str__(self) -> str:
        return f"{self.child_id} -> {self.by}:{self.ref} ({self.relation})"
