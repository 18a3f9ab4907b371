"""The memory graph: memories (nodes), canonical entities with mentions, and typed edges."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Case, F, Func, Q, Value, When
from django.db.models.functions import Coalesce, Greatest

from .project import Project
from .session import AgentSession, Interaction

# A transcript turn's speaker label ("Maria: …", "小敏：…"), as cues.SPEAKER_LABEL reads it.
SPEAKER_LABEL_SQL = r"^\s*[^\s:：]{1,40}\s*[:：]"


class MemoryKind(models.TextChoices):
    FACT = "fact"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    INTENT = "intent"
    DECISION = "decision"
    ACTION = "action"
    RESULT = "result"
    ERROR = "error"
    EVENT = "event"
    SUMMARY = "summary"


class MemoryStatus(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"


class Memory(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memories")
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="memories")
    content = models.TextField()
    # Space-separated search terms (Chinese segmented by jieba), indexed for full-text recall.
    search_text = models.TextField(blank=True, default="")
    # Stored so full-text recall neither parses rows at query time nor rechecks by re-parsing.
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config="simple"), output_field=SearchVectorField(), db_persist=True
    )
    # How many search terms what it says holds (a transcript's "Tom:" label not counted), kept by the database:
    # ranking weighs a memory of a word or two ("Tom: Still. Brutal.") down, and a "why" question looks back
    # only to a turn long enough to tell a cause (recall/).
    search_words = models.GeneratedField(
        expression=Greatest(
            Coalesce(Func(Func(F("search_text"), Value(" "), function="string_to_array"), Value(1),
                          function="array_length"), Value(0))
            - Case(When(content__regex=SPEAKER_LABEL_SQL, then=Value(1)), default=Value(0)),
            Value(0)),
        output_field=models.IntegerField(), db_persist=True,
    )
    kind = models.CharField(max_length=16, choices=MemoryKind.choices, default=MemoryKind.FACT)
    dimensions = models.JSONField(default=dict, blank=True)
    # The memory is itself a question (its dimensions' intent): ranking weighs it down (recall/rank.py).
    asks = models.GeneratedField(
        expression=Coalesce(Q(dimensions__intent="question"), Value(False)),
        output_field=models.BooleanField(), db_persist=True,
    )
    importance = models.FloatField(default=3.0)
    relevance = models.FloatField(default=3.0)
    novelty = models.FloatField(default=3.0)
    status = models.CharField(max_length=16, choices=MemoryStatus.choices, default=MemoryStatus.ACTIVE)
    sensitive = models.BooleanField(default=False)
    # How much a change to something it depends on puts it at risk (0: none; 1: a direct dependent); the
    # why is in its open AtRisk rows (engine/risk.py). Kept here so the graph, filters and recall read it.
    at_risk = models.FloatField(default=0.0, db_default=0.0)  # db_default: rows written in SQL are not at risk
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    occurred_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sources = models.ManyToManyField(Interaction, related_name="memories", blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["session", "occurred_at"]),
            models.Index(fields=["project", "status"]),
            # No pending list (fastupdate off): every full-text recall scans all of a GIN index's pending
            # list, and the access counts a recall writes fill it (make bench: the lexical seed 8 -> 5 ms
            # p50 at 100,000 memories once it was gone). Writes pay a little instead.
            GinIndex(fields=["search_vector"], name="memory_search_vector_gin", fastupdate=False),
            # The project's sensitive memories, read once per new memory (engine/sensitivity.py: a value said
            # again is born sensitive): a handful of rows, never a scan of the project's memories.
            models.Index(fields=["project", "-id"], condition=models.Q(sensitive=True),
                         name="memory_sensitive_project"),
            models.Index(fields=["project", "-id"], condition=models.Q(at_risk__gt=0), name="memory_at_risk_project"),
        ]
        verbose_name_plural = "memories"

    def __str__(self) -> str:
        return f"{self.kind}#{self.pk}: {self.content[:40]}"

    @property
    def provenance(self) -> list[Interaction]:
        """Its source interactions: those loaded with it (recall sets `loaded_sources`), else `sources`
        (prefetched or queried)."""
        loaded = self.__dict__.get("loaded_sources")
        return loaded if loaded is not None else list(self.sources.all())


class EntityType(models.TextChoices):
    PERSON = "person"
    PLACE = "place"
    ORGANIZATION = "organization"
    PRODUCT = "product"
    FILE = "file"
    CONCEPT = "concept"
    TIME = "time"
    OTHER = "other"


class Entity(models.Model):
    """A canonical thing memories mention, unique per project by normalised name and type."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=300)
    normalized_name = models.CharField(max_length=300)
    type = models.CharField(max_length=16, choices=EntityType.choices, default=EntityType.OTHER)
    aliases = models.JSONField(default=list, blank=True)
    # Why another name was taken as this entity, or which entities it may be (never merged silently).
    evidence = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "normalized_name"], name="entity_unique_name")
        ]
        verbose_name_plural = "entities"

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class EntityMention(models.Model):
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="mentions")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    surface = models.CharField(max_length=300)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "entity"], name="mention_unique")]
        # Entity seeds read an entity's newest mentions: one index range, however common the entity.
        indexes = [models.Index(fields=["entity", "memory"], name="mention_entity_memory")]


class Relation(models.TextChoices):
    CAUSAL = "causal"
    TEMPORAL = "temporal"
    CONDITIONAL = "conditional"
    ELABORATES = "elaborates"
    SUPERSEDES = "supersedes"
    PART_OF = "part_of"
    REFERENCES = "references"
    SHARES_ENTITY = "shares_entity"
    NEXT_IN_SESSION = "next_in_session"
    NEXT_BY_SPEAKER = "next_by_speaker"
    SUMMARIZES = "summarizes"


class EdgeOrigin(models.TextChoices):
    RULE = "rule"
    LLM = "llm"
    HUMAN = "human"
    AGENT = "agent"  # declared by the agent: a link it sent with an interaction (engine/links.py)
    USE = "use"  # learned from use: what the agent acted on after a recall (engine/use.py)


# Edges whose dependency is known, not guessed: a person's, the agent's declared links, links from use.
# Inference, review, decay and merging never change or re-create them.
KNOWN_ORIGINS = (EdgeOrigin.HUMAN, EdgeOrigin.AGENT, EdgeOrigin.USE)


class EdgeStatus(models.TextChoices):
    INFERRED = "inferred"
    APPROVED = "approved"
    REJECTED = "rejected"


class Edge(models.Model):
    """source = parent (depended on), target = child; the relation says how the child depends."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="edges")
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="edges", null=True, blank=True)
    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="out_edges")
    target = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="in_edges")
    relation = models.CharField(max_length=20, choices=Relation.choices)
    weight = models.FloatField(default=1.0)
    confidence = models.FloatField(default=1.0)
    origin = models.CharField(max_length=8, choices=EdgeOrigin.choices, default=EdgeOrigin.RULE)
    status = models.CharField(max_length=10, choices=EdgeStatus.choices, default=EdgeStatus.INFERRED)
    needs_review = models.BooleanField(default=False)
    rationale = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "relation"], name="edge_unique_relation"),
            models.CheckConstraint(condition=~Q(source=F("target")), name="edge_no_self_loop"),
        ]
        indexes = [models.Index(fields=["session", "relation"])]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.relation}-> {self.target_id}"
