"""The demo's live session: an endless, varied stream of travel-desk episodes (memory/demo/data/live/*.json).

A replayed transcript teaches nothing the second time (the filter drops it as repeats), so each episode
is a template filled with values drawn for its number: another traveller, city, hotel, budget and dates,
and each one changes a value on the way (dates moved, a time changed, a new phone number), so a person
watching sees memories arrive, edges form and a value get superseded. The same number always gives the
same episode, so a restarted agent's retries stay idempotent.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..models import InteractionKind
from .scenarios import LANGUAGES, ScenarioInteraction, read_data_file

LIVE_DIR = Path(__file__).resolve().parent / "data" / "live"
# Values computed for each episode (the rest are drawn from the file's "values" lists).
DERIVED = ("day1", "day2", "day3", "day4", "budget", "price_a", "price_b", "party", "time_a", "time_b", "ref",
           "phone_old", "phone_new", "flight", "flight_b", "fare", "fare_b", "seat", "call1", "call2", "call3")
FILE_KEYS = {"language", "external_id", "title", "task", "values", "episodes"}


@dataclass(frozen=True)
class LiveEpisode:
    number: int
    topic: str
    interactions: list[ScenarioInteraction]


@dataclass(frozen=True)
class LiveScript:
    language: str
    external_id: str
    title: str
    task: str
    values: dict[str, list[str]]
    templates: list[tuple[str, list[dict[str, Any]]]]  # (topic, interaction templates)

    def episode(self, number: int) -> LiveEpisode:
        """Episode `number` (0, 1, 2, …): the topics take turns, the values differ every time."""
        topic, templates = self.templates[number % len(self.templates)]
        values = self._values(number)
        return LiveEpisode(number=number, topic=topic, interactions=[
            ScenarioInteraction(kind=t["kind"], content=t["content"].format_map(values),
                                metadata={k: str(v).format_map(values) for k, v in t.get("metadata", {}).items()})
            for t in templates])

    def _values(self, number: int) -> dict[str, str]:
        rng = random.Random(f"{self.external_id}:{number}")
        chosen = {key: rng.choice(options) for key, options in self.values.items()}
        day1 = rng.randint(2, 18)
        stay, shift = rng.randint(2, 4), rng.randint(2, 6)
        budget = rng.choice([500, 600, 700, 800, 900, 1000, 1200])
        fare = rng.randrange(90, 400, 5)
        hour_a, hour_b = rng.randint(7, 12), rng.randint(13, 21)
        letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(2))
        derived = {
            "day1": day1, "day2": day1 + stay, "day3": day1 + shift, "day4": day1 + stay + shift,
            "budget": budget, "price_a": budget - rng.randrange(40, 160, 10),
            "price_b": budget + rng.randrange(60, 300, 10),
            "party": rng.randint(2, 6), "time_a": f"{hour_a + 6}:{rng.choice(['00', '30'])}",
            "time_b": f"{hour_b}:{rng.choice(['00', '15', '45'])}",
            "ref": f"{letters}{rng.randint(10000, 99999)}",
            "phone_old": f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
            "phone_new": f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
            "flight": f"{letters}{rng.randint(100, 999)}", "flight_b": f"{letters[::-1]}{rng.randint(100, 999)}",
            "fare": fare, "fare_b": fare + rng.randrange(20, 150, 5),
            "seat": f"{rng.randint(3, 38)}{rng.choice('ACDF')}",
            **{f"call{i}": f"live-{number}-{i}" for i in (1, 2, 3)},
        }
        if self.language == "zh":  # Chinese numbers: mobile numbers, 24-hour times as people write them
            derived["phone_old"] = f"1{rng.randint(30, 89)}{rng.randint(1000, 9999)}{rng.randint(1000, 9999)}"
            derived["phone_new"] = f"1{rng.randint(30, 89)}{rng.randint(1000, 9999)}{rng.randint(1000, 9999)}"
        return {**chosen, **{key: str(value) for key, value in derived.items()}}


@cache
def live_script(language: str) -> LiveScript:
    """The language's live script, validated (ValueError with the file and the problem)."""
    if language not in LANGUAGES:
        raise ValueError(f"Unknown live-demo language {language!r}; expected one of {', '.join(LANGUAGES)}.")
    return load_live_script(LIVE_DIR / f"{language}.json")


def load_live_script(path: Path) -> LiveScript:
    return read_data_file(path, _script)


def _script(data: Any) -> LiveScript:
    if not isinstance(data, dict) or set(data) != FILE_KEYS:
        raise ValueError(f"the top level must be an object with exactly {', '.join(sorted(FILE_KEYS))}.")
    values = data["values"]
    if not isinstance(values, dict) or not all(isinstance(v, list) and v and all(isinstance(x, str) for x in v)
                                               for v in values.values()):
        raise ValueError("'values' must map each name to a non-empty list of strings.")
    known = set(values) | set(DERIVED)
    templates = []
    for index, episode in enumerate(data["episodes"] or []):
        rows = episode.get("interactions") if isinstance(episode, dict) else None
        if not rows or not isinstance(episode.get("topic"), str):
            raise ValueError(f"episode #{index} needs a 'topic' and a non-empty 'interactions' list.")
        for row in rows:
            if row.get("kind") not in InteractionKind.values or not isinstance(row.get("content"), str):
                raise ValueError(f"episode {episode['topic']!r}: each interaction needs a known kind and a content.")
            texts = [row["content"], *map(str, row.get("metadata", {}).values())]
            unknown = {name for text in texts for _, name, _, _ in string.Formatter().parse(text) if name} - known
            if unknown:
                raise ValueError(f"episode {episode['topic']!r} uses unknown placeholder(s): "
                                 f"{', '.join(sorted(unknown))}.")
        templates.append((episode["topic"], rows))
    if not templates:
        raise ValueError("'episodes' must list at least one episode.")
    if data["language"] not in LANGUAGES:
        raise ValueError(f"language {data['language']!r} is not one of {', '.join(LANGUAGES)}.")
    return LiveScript(language=data["language"], external_id=data["external_id"], title=data["title"],
                      task=data["task"], values=values, templates=templates)
