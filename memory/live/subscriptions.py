"""Which sessions and projects have a websocket in this process (so the listener reads only those).

Process-local counters, touched only from the event loop. The PostgreSQL listener skips reading
the change log for projects nobody in this process watches.
"""

from __future__ import annotations

from collections import Counter

_projects: Counter[int] = Counter()


def watch(project_id: int) -> None:
    _projects[project_id] += 1


def unwatch(project_id: int) -> None:
    _projects[project_id] -= 1
    if _projects[project_id] <= 0:
        del _projects[project_id]


def watched_projects() -> set[int]:
    return set(_projects)


def is_watched(project_id: int) -> bool:
    return _projects.get(project_id, 0) > 0
