"""A project's engine settings, as its admins see and change them (settings page, API): each with its
default, its range, and where in `Project.settings` the engine reads it.

- `keep_threshold`: the filter keeps an interaction whose total score reaches it (scoring.filter_settings);
- `edge_confidence_threshold`: inferred edges below it await review (pipeline, review job);
- `recall_k`, `recall_preset`: what a recall uses when the caller names none (recall.config.recall_defaults);
- `risk_confidence_threshold`, `risk_hops`: which inferred edges a change propagates along, and how far (risk.py);
- `use_edge_threshold`: the rank weight a recalled memory needs to become an edge of origin use (use.py).
An empty value (or the default itself) puts the default back. Every change is one
`project.settings_changed` row of the change log.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memory.conf import memory_settings
from memory.engine.changelog import change_record
from memory.engine.inference import DEFAULT_EDGE_THRESHOLD
from memory.engine.operations import Op
from memory.engine.recall.config import DEFAULT_PRESET, RECALL_PRESETS
from memory.engine.risk import DEFAULT_RISK_CONFIDENCE, DEFAULT_RISK_HOPS
from memory.engine.scoring import FILTER_DEFAULTS
from memory.engine.use import DEFAULT_USE_THRESHOLD
from memory.errors import ValidationFailed
from memory.models import Project


@dataclass(frozen=True)
class EngineSetting:
    key: str
    path: tuple[str, ...]  # where in Project.settings
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def parse(self, text: Any) -> Any:
        """The value typed (a string from a form, or JSON), checked; raises ValidationFailed."""
        if self.choices:
            if text not in self.choices:
                raise ValidationFailed(f"{self.key}: use one of {', '.join(self.choices)}",
                                       {self.key: [f"one of {', '.join(self.choices)}"]})
            return text
        number_type = int if isinstance(self.default, int) else float
        try:
            value = number_type(text)
        except (TypeError, ValueError):
            raise ValidationFailed(f"{self.key}: {text!r} is not a number",
                                   {self.key: ["a whole number" if number_type is int else "a number"]}) from None
        if isinstance(text, bool) or not (self.low <= value <= self.high):
            raise ValidationFailed(f"{self.key}: must be between {self.low:g} and {self.high:g}",
                                   {self.key: [f"between {self.low:g} and {self.high:g}"]})
        return value


SETTINGS = (
    EngineSetting("keep_threshold", ("filter", "keep_threshold"), FILTER_DEFAULTS["keep_threshold"], 1.0, 5.0),
    EngineSetting("edge_confidence_threshold", ("edge_confidence_threshold",), DEFAULT_EDGE_THRESHOLD, 0.0, 1.0),
    EngineSetting("recall_k", ("recall", "k"), memory_settings.DEFAULT_RECALL_K, 1, memory_settings.MAX_RECALL_K),
    EngineSetting("recall_preset", ("recall", "preset"), DEFAULT_PRESET, choices=RECALL_PRESETS),
    EngineSetting("risk_confidence_threshold", ("risk_confidence_threshold",), DEFAULT_RISK_CONFIDENCE, 0.0, 1.0),
    EngineSetting("risk_hops", ("risk_hops",), DEFAULT_RISK_HOPS, 1, 4),
    EngineSetting("use_edge_threshold", ("use_edge_threshold",), DEFAULT_USE_THRESHOLD, 0.0, 1.0),
)
BY_KEY = {s.key: s for s in SETTINGS}


def _read(settings: dict, path: tuple[str, ...]) -> Any:
    for part in path:
        settings = settings.get(part) if isinstance(settings, dict) else None
    return settings


def engine_settings(project: Project) -> list[dict]:
    """Each setting with its value now, its default and whether the project overrides it."""
    rows = []
    for s in SETTINGS:
        value = _read(project.settings or {}, s.path)
        rows.append({"key": s.key, "value": s.default if value is None else value, "default": s.default,
                     "overridden": value is not None, "low": s.low, "high": s.high, "choices": list(s.choices)})
    return rows


def engine_settings_set(*, project: Project, actor: str, values: dict[str, Any]) -> list[dict]:
    """Change some settings (all checked before any is written; empty = back to the default)."""
    unknown = sorted(set(values) - set(BY_KEY))
    if unknown:
        raise ValidationFailed(f"unknown setting(s): {', '.join(unknown)}", {k: ["unknown setting"] for k in unknown})
    parsed = {key: None if value in (None, "") else BY_KEY[key].parse(value) for key, value in values.items()}
    parsed = {key: None if value == BY_KEY[key].default else value for key, value in parsed.items()}
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        before = copy.deepcopy(project.settings or {})
        after = copy.deepcopy(before)
        for key, value in parsed.items():
            *parents, leaf = BY_KEY[key].path
            node = after
            for part in parents:
                node = node.setdefault(part, {})
            if value is None:
                node.pop(leaf, None)
            else:
                node[leaf] = value
        if after != before:
            project.settings = after
            project.save(update_fields=["settings"])
            change_record(project=project, session=None, actor=actor, op=Op.PROJECT_SETTINGS_CHANGED,
                          object_type="project", object_id=project.pk, before=before, after=after)
    return engine_settings(project)
