"""All models of the memory engine (SPEC §2), one module per concern."""

from .changelog import GraphChange
from .embedding import EmbeddingSpace, MemoryEmbedding
from .graph import (
    KNOWN_ORIGINS,
    Edge,
    EdgeOrigin,
    EdgeStatus,
    Entity,
    EntityMention,
    EntityType,
    Memory,
    MemoryKind,
    MemoryStatus,
    Relation,
)
from .layout import NodePosition, SessionLayout
from .lookups import AnyOf  # noqa: F401 - registers the `any_of` lookup on every field
from .mirror import MirrorCursor
from .project import ApiToken, Membership, Project, Role, hash_token
from .recall import RecallTrace
from .risk import AtRisk, RiskChange, RiskStatus
from .session import (
    AgentSession,
    Interaction,
    InteractionKind,
    InteractionLink,
    InteractionStatus,
    LinkBy,
    LinkStatus,
)
from .store import StoreItem

# Primary keys are bigint (BigAutoField): an id beyond this is refused (400), never sent to PostgreSQL.
MAX_ID = 2**63 - 1

__all__ = [
    "KNOWN_ORIGINS", "MAX_ID", "AgentSession", "ApiToken", "AtRisk", "InteractionLink", "LinkBy", "LinkStatus",
    "RiskChange", "RiskStatus", "Edge", "EdgeOrigin", "EdgeStatus", "EmbeddingSpace", "Entity",
    "EntityMention", "EntityType", "GraphChange", "Interaction", "InteractionKind",
    "InteractionStatus", "Membership", "Memory", "MirrorCursor", "MemoryEmbedding", "MemoryKind", "MemoryStatus",
    "NodePosition", "Project", "RecallTrace", "Relation", "Role", "SessionLayout", "StoreItem", "hash_token",
]
