"""Store items (LangGraph's BaseStore over the API) as a reader may see them."""

from __future__ import annotations

from typing import Any

from ..engine.store import Found
from ..visibility import mask_store_value, sensitive_interaction_ids
from .reader import Reader


def item_rows(reader: Reader, found: list[Found]) -> list[dict[str, Any]]:
    """Items with their score. Every reader learns which are sensitive; one whose memory is sensitive shows its
    value masked, shape kept, to a reader who may not see it (one query for the batch)."""
    sensitive = sensitive_interaction_ids(f.item.interaction_id for f in found) if found else set()
    return [_item_row(f, f.item.interaction_id in sensitive, reader.may_see_sensitive) for f in found]


def _item_row(found: Found, sensitive: bool, show: bool) -> dict[str, Any]:
    item = found.item
    return {"namespace": list(item.namespace), "key": item.key,
            "value": mask_store_value(item.value) if sensitive and not show else item.value,
            "created_at": item.created_at, "updated_at": item.updated_at, "score": found.score,
            "sensitive": sensitive, "session_id": item.session_id, "interaction_id": item.interaction_id,
            "recall_id": found.recall_id}
