"""Benchmark texts: agent-memory sentences from templates, mixed with real English prose.

Template sentences alone form a few tight clusters (one per template), which is unlike real
memories and unfair to any ANN index; so `mixed_corpus` adds real sentences taken from the
Python standard library's own documentation (pydoc topics and docstrings), shipped with Python.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import random
import re

TEMPLATES = [
    "The user's budget for the {trip} is {amount} {currency}.",
    "Booking the {hotel} for {date} failed because the rooms were sold out.",
    "{person} is allergic to {food}, so avoid restaurants that serve it.",
    "Decided to use {tool} for {task} because {reason}.",
    "The test {test} failed with {error} in {path}.",
    "Fixed {error} in {path} by {fix}.",
    "{person} prefers {pref} when travelling to {city}.",
    "The flight to {city} departs on {date} at {time}.",
    "Search results for {hotel} near {landmark}: {count} options under {amount} {currency}.",
    "Remember that {person}'s new phone number is {phone}.",
    "The deployment of {service} to {env} timed out after {count} seconds.",
    "Calling {api} with parameters city={city} and date={date}.",
    "Because the {trip} moved to {date}, the airport pickup must be rebooked for {time}.",
    "Only upgrade the room if the total stays under {amount} {currency}.",
    "{person} wants to visit {landmark} on the second day in {city}.",
    "The CSV export in {path} must stream rows to stay under {count} MB of memory.",
]
SLOTS = {
    "trip": ["Shanghai trip", "Kyoto holiday", "Berlin conference", "Hangzhou weekend", "Lisbon workshop"],
    "amount": [str(n) for n in (800, 1200, 2500, 4000, 5000, 7500, 12000)],
    "currency": ["RMB", "EUR", "USD", "JPY"],
    "hotel": ["Bund Riverside Hotel", "Garden Inn", "Lakeview Suites", "Old Town Hostel", "Harbour Grand"],
    "date": ["12 October", "14 October", "3 March", "21 June", "30 November", "5 January"],
    "person": ["Xiao Ming", "Alice", "Bob", "Li Wei", "Maria", "the user's son"],
    "food": ["seafood", "peanuts", "gluten", "shellfish", "dairy"],
    "tool": ["the csv module", "pandas", "Celery", "procrastinate", "Redis", "PostgreSQL"],
    "task": ["the export", "background jobs", "rate limiting", "caching", "the report"],
    "reason": ["the dependency policy forbids new packages", "it is already installed", "it scales better",
               "the team knows it well"],
    "test": ["test_export_csv", "test_login_limit", "test_booking_flow", "test_report_totals"],
    "error": ["a KeyError", "a timeout", "an IntegrityError", "a 500 response", "a UnicodeDecodeError"],
    "path": ["reports/views.py", "app/limits.py", "booking/services.py", "tests/test_reports.py"],
    "fix": ["adding an index", "streaming the response", "encoding as UTF-8", "retrying with back-off"],
    "pref": ["quiet hotels", "window seats", "vegetarian food", "morning flights", "walking tours"],
    "city": ["Shanghai", "Kyoto", "Berlin", "Hangzhou", "Lisbon", "Beijing"],
    "time": ["07:40", "09:15", "13:30", "18:05", "22:50"],
    "landmark": ["the Bund", "West Lake", "Pudong", "the old harbour", "the castle"],
    "count": [str(n) for n in (3, 12, 30, 45, 120, 500)],
    "phone": ["138 0013 8000", "139 1234 5678", "+49 30 1234567"],
    "service": ["the API", "the worker", "the web app"],
    "env": ["staging", "production"],
    "api": ["hotel_search", "flight_lookup", "weather_forecast"],
}


def sentences(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        template = rng.choice(TEMPLATES)
        text = template.format(**{k: rng.choice(v) for k, v in SLOTS.items()})
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")


def prose_sentences() -> list[str]:
    """Unique English sentences (40–300 characters) from the standard library's documentation."""
    import pydoc_data.topics

    chunks = list(pydoc_data.topics.topics.values())
    for module in sorted(m.name for m in pkgutil.iter_modules() if m.module_finder.path.endswith("lib/python3.11")):
        if module.startswith(("_", "test", "idlelib", "tkinter", "turtle", "antigravity", "this")):
            continue
        try:
            mod = importlib.import_module(module)
        except Exception:  # noqa: BLE001 - some stdlib modules need optional system libraries
            continue
        chunks.extend(inspect.getdoc(obj) or "" for _, obj in inspect.getmembers(mod) if callable(obj))
    out = (x.strip() for x in SENTENCE_SPLIT.split(re.sub(r"\s+", " ", " ".join(chunks))))
    return list(dict.fromkeys(x for x in out if 40 <= len(x) <= 300 and not x.startswith((">>>", "..."))))


def mixed_corpus(count: int, seed: int = 0, template_share: float = 0.2) -> list[str]:
    rng = random.Random(seed)
    prose = prose_sentences()
    rng.shuffle(prose)
    n_templates = int(count * template_share)
    return prose[: count - n_templates] + sentences(n_templates, seed=seed)
