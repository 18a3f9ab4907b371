"""The API's JSON parser: only bodies PostgreSQL can store and our renderer can echo get through.

Python's json accepts lone UTF-16 surrogates ("\\ud800") and NUL characters, and recurses without a
bound of its own: a surrogate later fails to encode (in jsonb, or in an error message that quotes
it), a NUL cannot be stored in text or jsonb, and nesting of a thousand levels raises RecursionError.
Each was a 500. Here each is a 400 that names where it was found, before any view sees the data.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

from memory.conf import memory_settings


def printable(text: str) -> str:
    """`text` with lone surrogates escaped, safe to quote in a message or use as a JSON key."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def text_problem(text: str) -> str | None:
    """Why PostgreSQL could not store this string, or None."""
    if "\x00" in text:
        return "NUL characters (\\u0000) are not allowed"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "lone UTF-16 surrogates (such as \\ud800) are not valid text"
    return None


def json_problems(data: Any, *, max_depth: int) -> dict[str, list[str]]:
    """Problems of a parsed body, keyed by top-level field; an iterative walk (no recursion limit)."""
    problems: dict[str, list[str]] = {}
    stack: list[tuple[Any, str, str, int]] = [(data, "", "non_field_errors", 0)]
    while stack:
        value, where, field, depth = stack.pop()
        if depth > max_depth:
            problems.setdefault(field, []).append(f"{where or 'the body'} is nested more than {max_depth} levels deep")
            continue
        if isinstance(value, str):
            problem = text_problem(value)
            if problem:
                problems.setdefault(field, []).append(f"{where or 'the body'}: {problem}")
        elif isinstance(value, dict):
            for key, item in value.items():
                name = printable(key)
                path = f"{where}.{name}" if where else name
                problem = text_problem(key)
                top = name if depth == 0 else field
                if problem:
                    problems.setdefault(top, []).append(f"key {path!r}: {problem}")
                stack.append((item, path, top, depth + 1))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                stack.append((item, f"{where}[{index}]", field, depth + 1))
    return {field: sorted(set(messages)) for field, messages in problems.items()}


class StorableJSONParser(JSONParser):
    """JSONParser that refuses what the database or the renderer cannot hold (see the module doc)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON nested too deeply.") from None
        problems = json_problems(data, max_depth=memory_settings.MAX_JSON_DEPTH)
        if problems:
            raise ValidationError(problems)
        return data
