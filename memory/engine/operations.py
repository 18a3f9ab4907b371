"""The change-log contract: every operation name and who may be named as its actor, in one place.

Readers (the live view, replay, curation, the graph mirror, an SDK) depend on these names; the
snapshots they carry are built in engine/snapshots.py (INTERACTION_FIELDS, MEMORY_FIELDS,
EDGE_FIELDS). `change_record` refuses a name that is not listed here.
"""

from __future__ import annotations

from enum import StrEnum


class Op(StrEnum):
    SESSION_CREATED = "session.created"
    SESSION_DELETED = "session.deleted"  # a hard forget of the whole session: it and all it held are gone
    INTERACTION_RECEIVED = "interaction.received"
    INTERACTION_KEPT = "interaction.kept"  # the write path made (or attached it to) a memory
    INTERACTION_FILTERED = "interaction.filtered"  # the selective filter dropped it
    INTERACTION_PROMOTED = "interaction.promoted"  # a person kept what the filter dropped
    INTERACTION_FAILED = "interaction.failed"  # processing raised: kept as it came, retried (error says why)
    INTERACTION_RETRIED = "interaction.retried"  # failed stages (or a failed interaction) run again
    INTERACTION_REDACTED = "interaction.redacted"  # forgotten text removed from it
    MEMORY_CREATED = "memory.created"
    MEMORY_UPDATED = "memory.updated"
    MEMORY_SUPERSEDED = "memory.superseded"
    MEMORY_ARCHIVED = "memory.archived"
    MEMORY_RESTORED = "memory.restored"
    MEMORY_MERGED = "memory.merged"
    MEMORY_FORGOTTEN = "memory.forgotten"  # soft forget: kept as a tombstone, out of every read
    MEMORY_DELETED = "memory.deleted"  # hard forget
    MEMORY_AT_RISK = "memory.at_risk"  # something it depends on changed (engine/risk.py): `at_risk` rose
    EDGE_CREATED = "edge.created"
    EDGE_UPDATED = "edge.updated"
    EDGE_DELETED = "edge.deleted"
    EDGE_REDIRECTED = "edge.redirected"  # a merge moved it to the surviving memory
    EDGE_REVIEWED = "edge.reviewed"  # the review model confirmed it
    EDGE_RELABELLED = "edge.relabelled"  # the review model changed its relation
    EDGE_REJECTED = "edge.rejected"  # the review model found no dependency
    ENTITY_CREATED = "entity.created"  # split off another entity by a person, or restored by an undo
    ENTITY_UPDATED = "entity.updated"  # renamed, an alias split off, a flag settled
    ENTITY_MERGED = "entity.merged"  # another entity's mentions and names moved into it
    ENTITY_DELETED = "entity.deleted"
    RECALL_COMPLETED = "recall.completed"
    MAINTENANCE_DECAY = "maintenance.decay"
    MAINTENANCE_RESTORE = "maintenance.restore"
    MAINTENANCE_MERGE = "maintenance.merge"
    MAINTENANCE_SUMMARISE = "maintenance.summarise"
    MAINTENANCE_REVIEW = "maintenance.review"
    MAINTENANCE_FORGET = "maintenance.forget"
    MEMBER_ADDED = "member.added"
    MEMBER_ROLE_CHANGED = "member.role_changed"
    MEMBER_REMOVED = "member.removed"  # that user's open sockets of the project close
    TOKEN_CREATED = "token.created"
    TOKEN_REVOKED = "token.revoked"
    PROJECT_SETTINGS_CHANGED = "project.settings_changed"  # the engine settings of administration/engine_settings.py


ENGINE_ACTOR = "engine"


def token_actor(token_id: int) -> str:
    return f"token:{token_id}"


def user_actor(user_id: int) -> str:
    return f"user:{user_id}"
