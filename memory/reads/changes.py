"""The change log as a reader may see it: the API's pages, the websocket's live messages and catch-up."""

from __future__ import annotations

from typing import Any

from ..models import GraphChange
from ..visibility import changes_for_viewer
from .reader import Reader
from .rows import when


def change_rows(reader: Reader, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Change snapshots (engine/snapshots.change_snapshot) masked for this reader, each snapshot on its own
    (memory/visibility.py `mask_change`): at most 3 queries for the batch, none for who may see it all."""
    return changes_for_viewer(changes, show_sensitive=reader.may_see_sensitive)


def change_page(reader: Reader, changes: list[GraphChange]) -> list[dict[str, Any]]:
    """Rows of the change log as the API sends them, masked for this reader."""
    return change_rows(reader, [{"id": c.pk, "session_id": c.session_id, "actor": c.actor, "op": c.op,
                                 "object_type": c.object_type, "object_id": c.object_id, "before": c.before,
                                 "after": c.after, "created_at": when(c.created_at)} for c in changes])
