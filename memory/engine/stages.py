"""The write path's stages, each run so that its failure costs only itself (issue: never lose what an agent said).

An interaction's content, vector and memory row are the core: without them there is nothing to keep, and
their failure fails the interaction (it stays `failed` with a readable error, and is retried). Everything
derived after that (dimensions, the filter's scores, entities, edges, supersedes) is a stage: it runs in a
savepoint, and when it raises, what it wrote is rolled back, the memory is kept without it, and the stage's
name and a readable reason are recorded on the interaction (`Interaction.stage_errors`), to be run again
later (`pipeline.interaction_retry`, by the queue with back-off and by a person's retry button).

A database that went away is no stage's fault: such errors are raised, so the whole interaction is retried.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from django.db import InterfaceError, OperationalError

from .changelog import changes_savepoint

logger = logging.getLogger(__name__)
T = TypeVar("T")

# In the order the pipeline runs them; a stage reads what the ones before it produced.
DIMENSIONS, SCORING, ENTITIES, EDGES, SUPERSEDE = "dimensions", "scoring", "entities", "edges", "supersede"
USE, LINKS = "use", "links"  # edges from what a recall gave it (use.py), and those the agent declared (links.py)
STAGES = (DIMENSIONS, SCORING, ENTITIES, EDGES, USE, SUPERSEDE, LINKS)
ERROR_CHARS = 300


def error_text(exc: BaseException) -> str:
    """A readable reason that names no content: the error's type and its first line. A database error's
    DETAIL and CONTEXT lines can quote the value that broke it, which may be sensitive."""
    first = (str(exc).strip().splitlines() or [""])[0]
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text[:ERROR_CHARS]


def stage_run(name: str, failures: dict[str, str], work: Callable[[], T], fallback: T) -> T:
    """`work()` in a savepoint; on failure its writes and changes are dropped, the reason is recorded in
    `failures` under the stage's name, and `fallback` is returned so the write path goes on."""
    try:
        with changes_savepoint():
            return work()
    except (OperationalError, InterfaceError):
        raise  # the database, not the stage: the interaction is retried whole
    except Exception as exc:  # noqa: BLE001 - a stage's failure must not lose the interaction
        logger.warning("stage %s failed, the memory is kept without it: %s", name, error_text(exc), exc_info=True)
        failures[name] = error_text(exc)
        return fallback


def stages_from(failed: dict[str, str]) -> tuple[str, ...]:
    """The stages to run again: the failed ones, and after dimensions every stage (they read its output)."""
    if DIMENSIONS in failed:
        return STAGES
    return tuple(stage for stage in STAGES if stage in failed)


def storable_check(data: Any) -> None:
    """Raise if `data` holds text PostgreSQL cannot store (NUL, a lone surrogate): found in a stage, it fails
    that stage, not the memory row it would have been written with."""
    for text in _strings(data):
        if "\x00" in text:
            raise ValueError("an extracted value holds a NUL character, which the database cannot store")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError("an extracted value holds a lone surrogate, which the database cannot store") from exc


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(data, list | tuple):
        for value in data:
            yield from _strings(value)
