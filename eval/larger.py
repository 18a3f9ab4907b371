"""Larger projects: each labelled file with the other files of its language played into the same project first.

The held-out conversations this product is judged on run to thousands of turns; a labelled file alone holds
a few hundred. Played before the file's own sessions, the other files' sessions are real distractors: the
write path files them, links them and dedupes them like any other turn, and the baselines search them too.
Their questions, labelled edges and answers stay the file's own. Ids are prefixed so they cannot collide.
"""

from __future__ import annotations

from dataclasses import replace

from .dataset import EvalFile, EvalSession


def beside_others(files: list[EvalFile]) -> list[EvalFile]:
    """Each file, preceded by every session of the other files in the same language."""
    return [replace(spec, sessions=[*_sessions_of_others(spec, files), *spec.sessions]) for spec in files]


def _sessions_of_others(spec: EvalFile, files: list[EvalFile]) -> list[EvalSession]:
    sessions = []
    for other in files:
        if other.name == spec.name or other.language != spec.language:
            continue
        prefix = f"x-{other.name}-"
        for session in other.sessions:
            interactions = [replace(item, id=prefix + item.id) for item in session.interactions]
            sessions.append(replace(session, key=prefix + session.key, interactions=interactions))
    return sessions
