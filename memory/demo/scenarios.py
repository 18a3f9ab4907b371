"""Typed, validated access to the demo scenarios in memory/demo/data/*.json.

The files are hand-written, so they are checked strictly on load: a typo in a kind or a missing
field fails with the file name and the exact problem, not later as a 400 from the API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from ..engine.extraction.temporal import yearless_date
from ..models import InteractionKind

T = TypeVar("T")
DATA_DIR = Path(__file__).resolve().parent / "data"
LANGUAGES = ("en", "zh")
MAX_CONTENT_BYTES = 2048  # demo content stays small and readable; the API itself allows far more
EXTERNAL_ID_RE = re.compile(r"^demo-(?P<topic>[a-z][a-z0-9_]*)-(?P<language>[a-z]+)$")
SCENARIO_KEYS = {"external_id", "title", "task", "language", "interactions"}
INTERACTION_KEYS = {"kind", "content", "metadata"}
ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")  # also inside 2025-10-19T10:45


@dataclass(frozen=True)
class ScenarioInteraction:
    kind: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    external_id: str
    title: str
    task: str
    language: str
    interactions: list[ScenarioInteraction]

    def dated_for(self, today: date) -> Scenario:
        """The scenario with its written ISO dates (tool calls, results: "2025-10-12") moved to the year the
        engine reads "12 October" in the text in, said `today` (the engine's own rule), so both agree."""
        def moved(match: re.Match[str]) -> str:
            found = yearless_date(int(match[2]), int(match[3]), today)
            return found.isoformat() if found else match[0]

        def shift(text: str) -> str:
            return ISO_DATE.sub(moved, text)
        return replace(self, interactions=[
            ScenarioInteraction(kind=i.kind, content=shift(i.content),
                                metadata={k: shift(v) if isinstance(v, str) else v for k, v in i.metadata.items()})
            for i in self.interactions])

    @property
    def topic(self) -> str:
        """'travel' for demo-travel-en: lets callers pick a scenario by topic and language."""
        match = EXTERNAL_ID_RE.match(self.external_id)
        return match["topic"] if match else self.external_id


def load_scenarios(language: str | None = None, directory: Path | str | None = None) -> list[Scenario]:
    """All scenarios (or one language's), ordered by language then external_id; ValueError on a bad file."""
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"Unknown scenario language {language!r}; expected one of {', '.join(LANGUAGES)}.")
    folder = Path(directory) if directory is not None else DATA_DIR
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise ValueError(f"No scenario files (*.json) in {folder}.")
    scenarios = [_load_file(path) for path in paths]
    seen: dict[str, Path] = {}
    for path, scenario in zip(paths, scenarios, strict=True):
        if scenario.external_id in seen:
            raise ValueError(f"{path.name}: external_id {scenario.external_id!r} is also used by "
                             f"{seen[scenario.external_id].name}.")
        seen[scenario.external_id] = path
    chosen = [s for s in scenarios if language is None or s.language == language]
    return sorted(chosen, key=lambda s: (s.language, s.external_id))


def _load_file(path: Path) -> Scenario:
    return read_data_file(path, _scenario)


def read_data_file(path: Path, build: Callable[[Any], T]) -> T:
    """A hand-written demo data file, read and checked by `build`; ValueError naming the file and the problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path.name}: not valid UTF-8 JSON ({exc}).") from exc
    try:
        return build(data)
    except ValueError as exc:
        raise ValueError(f"{path.name}: {exc}") from None


def _scenario(data: Any) -> Scenario:
    if not isinstance(data, dict):
        raise ValueError("the top level must be a JSON object.")
    _check_keys(data, SCENARIO_KEYS, "scenario")
    external_id, title, task, language = (_text(data, key, "scenario") for key in
                                          ("external_id", "title", "task", "language"))
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r} is not one of {', '.join(LANGUAGES)}.")
    match = EXTERNAL_ID_RE.match(external_id)
    if match is None or match["language"] != language:
        raise ValueError(f"external_id {external_id!r} must look like 'demo-<topic>-{language}'.")
    rows = data["interactions"]
    if not isinstance(rows, list) or not rows:
        raise ValueError("'interactions' must be a non-empty list.")
    interactions = [_interaction(row, index) for index, row in enumerate(rows)]
    return Scenario(external_id=external_id, title=title, task=task, language=language, interactions=interactions)


def _interaction(row: Any, index: int) -> ScenarioInteraction:
    where = f"interaction #{index}"
    if not isinstance(row, dict):
        raise ValueError(f"{where} must be a JSON object.")
    _check_keys(row, INTERACTION_KEYS - {"metadata"}, where, optional=INTERACTION_KEYS)
    kind = _text(row, "kind", where)
    if kind not in InteractionKind.values:
        raise ValueError(f"{where} has unknown kind {kind!r}; expected one of {', '.join(InteractionKind.values)}.")
    content = _text(row, "content", where)
    size = len(content.encode())
    if size > MAX_CONTENT_BYTES:
        raise ValueError(f"{where} content is {size} bytes; demo content must stay under {MAX_CONTENT_BYTES}.")
    metadata = row.get("metadata", {})
    if not isinstance(metadata, dict):
        raise ValueError(f"{where} metadata must be a JSON object, not {type(metadata).__name__}.")
    return ScenarioInteraction(kind=kind, content=content, metadata=metadata)


def _check_keys(data: dict, required: set[str], where: str, optional: set[str] | None = None) -> None:
    missing = sorted(required - set(data))
    if missing:
        raise ValueError(f"{where} is missing field(s): {', '.join(missing)}.")
    unknown = sorted(set(data) - (optional or required))
    if unknown:
        raise ValueError(f"{where} has unknown field(s): {', '.join(unknown)}.")


def _text(data: dict, key: str, where: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"{where} field {key!r} must be a string, not {type(value).__name__}.")
    if not value.strip():
        raise ValueError(f"{where} field {key!r} is empty.")
    return value
