"""Put, get and delete of store items, each also a change to the memory graph.

A namespace is one AgentSession of the project, found (or started) by a reserved external id derived
from the namespace, so the web app shows the store's memories as sessions titled after their namespace.

put upserts the item exactly as given and sends its indexed text (paths.py) as an `observation`
interaction of that session through the one ingest service, so it is filtered, linked and recallable
like anything an agent says. The value it replaces must not come back in recall: the previous
interaction's memories are forgotten softly (unless another item's current value also backs them: the
pipeline attaches a repeated text to the memory it repeats), and a previous interaction still waiting
for the worker is marked filtered under its row lock, which the pipeline takes too, so it is never
turned into a memory afterwards. delete does the same and removes the item. A put of the same value
with the same index changes nothing but `updated_at`, so a retried request is harmless.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from ...conf import memory_settings
from ...errors import ValidationFailed
from ...models import AgentSession, Interaction, InteractionStatus, Memory, MemoryStatus, Project, StoreItem
from ..changelog import change_record
from ..ingest import InteractionInput, interactions_accept
from ..maintenance.forget import ForgetFilter, forget_run
from ..operations import Op
from ..pipeline import PROCESSABLE, interaction_process_safely
from ..projects import session_create
from ..snapshots import interaction_snapshot
from .paths import indexed_text

SESSION_ID_PREFIX = "store:"  # external ids of the store's sessions start so (SessionInput refuses it)
MAX_LABELS = 16
MAX_LABEL_CHARS = 200
MAX_KEY_CHARS = 500
MAX_ADDRESS_BYTES = 2000  # namespace + key in the unique btree index (a row of it holds at most ~2700 bytes)
MAX_VALUE_BYTES = 256 * 1024
INTERACTION_KIND = "observation"  # what the agent chose to remember: neither the user's words nor its own
REPLACED = "replaced in the store before it was processed"


@dataclass(frozen=True)
class PutResult:
    item: StoreItem
    created: bool
    forgotten_memory_ids: list[int] = field(default_factory=list)


def namespace_check(namespace: list[str], *, allow_empty: bool = False) -> list[str]:
    """The namespace if the store can hold it (also the API's and any caller's guard)."""
    if not namespace and not allow_empty:
        raise ValidationFailed("the namespace needs at least one label", {"namespace": ["at least one label"]})
    if len(namespace) > MAX_LABELS:
        raise ValidationFailed(f"the namespace has {len(namespace)} labels; at most {MAX_LABELS}",
                               {"namespace": [f"at most {MAX_LABELS} labels"]})
    for label in namespace:
        if not isinstance(label, str) or not label or len(label) > MAX_LABEL_CHARS or "\x00" in label:
            raise ValidationFailed(f"namespace label {str(label)[:40]!r} must be text of 1 to {MAX_LABEL_CHARS} "
                                   "characters", {"namespace": [f"labels have 1 to {MAX_LABEL_CHARS} characters"]})
    return list(namespace)


def address_check(namespace: list[str], key: str) -> None:
    namespace_check(namespace)
    if not isinstance(key, str) or len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise ValidationFailed(f"the key must be text of at most {MAX_KEY_CHARS} characters",
                               {"key": [f"at most {MAX_KEY_CHARS} characters"]})
    size = len(json.dumps([*namespace, key], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > MAX_ADDRESS_BYTES:
        raise ValidationFailed(f"namespace and key take {size} bytes; at most {MAX_ADDRESS_BYTES}",
                               {"key": [f"namespace and key together at most {MAX_ADDRESS_BYTES} bytes"]})


def session_external_id(namespace: list[str]) -> str:
    digest = hashlib.sha256(json.dumps(namespace, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{SESSION_ID_PREFIX}{digest[:40]}"


def namespace_session(project: Project, namespace: list[str], actor: str) -> AgentSession:
    """The namespace's session, started on its first put (its title names the namespace for the web app)."""
    external_id = session_external_id(namespace)
    session = AgentSession.objects.filter(project=project, external_id=external_id).first()
    if session is not None:
        return session
    try:
        return session_create(project=project, external_id=external_id, actor=actor,
                              title=f"Store: {' / '.join(namespace)}"[:300],
                              metadata={"store_namespace": namespace})
    except ValidationFailed:  # another put started it meanwhile
        return AgentSession.objects.get(project=project, external_id=external_id)


def item_get(project: Project, namespace: list[str], key: str) -> StoreItem | None:
    address_check(namespace, key)
    return StoreItem.objects.filter(project=project, namespace=namespace, key=key).first()


def item_put(*, project: Project, namespace: list[str], key: str, value: dict[str, Any],
             index: list[str] | None | bool = None, actor: str, wait: bool = False, recall_id: int | None = None,
             used: tuple[int, ...] = ()) -> PutResult:
    """Upsert the item and remember its text (index False: not searchable by query, no interaction).
    `recall_id` / `used`: the search (and the memories) the value was written from (engine/use.py).

    All or nothing: a bad value or text is refused before anything is written."""
    address_check(namespace, key)
    text = _text_checked(value, index)
    with transaction.atomic():
        session = namespace_session(project, namespace, actor)
        item = (StoreItem.objects.select_for_update(of=("self",)).select_related("interaction")
                .filter(project=project, namespace=namespace, key=key).first())
        if item is not None and item.value == value and _same_text(item.interaction, text):
            item.save(update_fields=["updated_at"])
            return PutResult(item, created=False)
        forgotten = _retire(item.interaction, project, actor, replaced=item) if item and item.interaction else []
        interaction = _remember(session, namespace, key, text, actor, recall_id, used) if text else None
        if item is None:
            item = StoreItem.objects.create(project=project, session=session, namespace=namespace, key=key,
                                            value=value, interaction=interaction)
            created = True
        else:
            item.value, item.interaction, item.session = value, interaction, session
            item.save(update_fields=["value", "interaction", "session", "updated_at"])
            created = False
    if wait and interaction is not None:
        interaction_process_safely(interaction_id=interaction.pk)
    return PutResult(item, created=created, forgotten_memory_ids=forgotten)


def item_delete(*, project: Project, namespace: list[str], key: str, actor: str) -> PutResult | None:
    """Remove the item and forget its memories softly; None when there was no such item."""
    address_check(namespace, key)
    with transaction.atomic():
        item = (StoreItem.objects.select_for_update(of=("self",)).select_related("interaction")
                .filter(project=project, namespace=namespace, key=key).first())
        if item is None:
            return None
        forgotten = _retire(item.interaction, project, actor, replaced=item) if item.interaction else []
        item.delete()
    return PutResult(item, created=False, forgotten_memory_ids=forgotten)


def _text_checked(value: Any, index: list[str] | None | bool) -> str:
    if not isinstance(value, dict):
        raise ValidationFailed("the value must be a JSON object", {"value": ["a JSON object"]})
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > MAX_VALUE_BYTES:
        raise ValidationFailed(f"the value is {size} bytes as JSON; at most {MAX_VALUE_BYTES}",
                               {"value": [f"at most {MAX_VALUE_BYTES} bytes as JSON"]})
    if index is False:
        return ""
    if index is True or not (index is None or isinstance(index, list)):
        raise ValidationFailed("index is a list of field paths, false (not searchable) or null (the whole value)",
                               {"index": ["a list of paths, false or null"]})
    text = indexed_text(value, index)
    if len(text.encode("utf-8", "surrogatepass")) > memory_settings.MAX_CONTENT_BYTES:
        raise ValidationFailed(f"the indexed text is over {memory_settings.MAX_CONTENT_BYTES} bytes; index fewer "
                               "fields (index=[...]) or none (index=false)", {"index": ["indexed text too long"]})
    return text


def _same_text(interaction: Interaction | None, text: str) -> bool:
    return (interaction.content if interaction is not None else "") == text


def _remember(session: AgentSession, namespace: list[str], key: str, text: str, actor: str,
              recall_id: int | None = None, used: tuple[int, ...] = ()) -> Interaction:
    item = InteractionInput(kind=INTERACTION_KIND, content=text,
                            metadata={"store": {"namespace": namespace, "key": key}}, recall_id=recall_id, used=used)
    return interactions_accept(session=session, items=[item], actor=actor)[0].interaction


def _retire(interaction: Interaction, project: Project, actor: str, *, replaced: StoreItem) -> list[int]:
    """The replaced or deleted value leaves the memory graph: its memories are forgotten softly (those
    another item's current value also backs stay), or, not processed yet, it is marked filtered."""
    locked = Interaction.objects.select_for_update(of=("self",)).get(pk=interaction.pk)
    if locked.status in PROCESSABLE:
        before = interaction_snapshot(locked)
        locked.status, locked.reason, locked.processed_at = InteractionStatus.FILTERED, REPLACED, timezone.now()
        locked.save(update_fields=["status", "reason", "processed_at"])
        change_record(project=project, session=locked.session, actor=actor, op=Op.INTERACTION_FILTERED,
                      object_type="interaction", object_id=locked.pk, before=before,
                      after=interaction_snapshot(locked))
        return []
    shared = StoreItem.objects.filter(project=project, interaction_id__isnull=False).exclude(pk=replaced.pk)
    doomed = sorted(Memory.objects.filter(sources=locked).exclude(status=MemoryStatus.FORGOTTEN)
                    .exclude(sources__in=shared.values("interaction_id")).values_list("pk", flat=True).distinct())
    if doomed:
        forget_run(project=project, actor=actor, selection=ForgetFilter(memory_ids=tuple(doomed)), mode="soft")
    return doomed
