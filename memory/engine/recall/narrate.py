"""Optional narrator (SPEC §4.4): an LLM retells the reconstructed context as one coherent answer.

Only when an LLM is configured and the request asks for it (`narrate: true`). The narrator sees
the ordered context the rules built, never a sensitive memory, and may only restate what is there;
any provider failure leaves the recall with the rules' context alone (narrative empty).
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field

from ...errors import ProviderError
from ...models import Edge, Memory
from ...providers import get_llm
from ..sensitivity import shareable
from .reconstruct import tell

logger = logging.getLogger(__name__)

NARRATIVE_MAX_CHARS = 2000
SYSTEM = (
    "You retell an AI agent's recalled memories as one short, coherent account that answers the question. "
    "Use only the facts given; keep causes before effects; keep numbers, dates and names exactly; write in "
    f"the question's language; at most {NARRATIVE_MAX_CHARS} characters. "
    'Answer JSON {"narrative": "..."}.'
)


class Narrative(BaseModel):
    narrative: str = Field(min_length=1, max_length=NARRATIVE_MAX_CHARS)


def narrate(question: str, ordered: list[Memory], edges: list[Edge]) -> str:
    """The LLM's account of the memories, or "" when there is no LLM, nothing to tell, or it failed."""
    sent = shareable(ordered)  # sensitive memories never reach an LLM
    llm = get_llm()
    if not llm.available or not sent:
        return ""
    kept = {m.pk for m in sent}
    context = tell(sent, [e for e in edges if e.source_id in kept and e.target_id in kept])
    try:
        answer = llm.complete_json(system=SYSTEM, user=f"Question: {question}\n\n{context}", schema=Narrative)
    except ProviderError as exc:
        logger.warning("narrator failed, keeping the rules' context: %s", exc)
        return ""
    return answer.narrative.strip()
