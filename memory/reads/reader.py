"""Who reads: the one question every masked read asks of its caller.

A person or an agent token reads through its `memory.access.Access` (curators and admins may see
sensitive content; viewers and tokens may not). Readers outside the project's people are named here: the
graph mirror (an external database anyone with its credentials reads) and an LLM prompt (a provider
outside the project) may never see it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Reader(Protocol):
    @property
    def may_see_sensitive(self) -> bool: ...


@dataclass(frozen=True)
class Outsider:
    """A reader that is not a person of the project: it never sees sensitive content."""

    name: str
    may_see_sensitive: bool = False


MIRROR = Outsider("graph mirror")
LLM_PROMPT = Outsider("LLM prompt")
