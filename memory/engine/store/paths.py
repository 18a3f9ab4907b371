"""Which text of a stored value goes into the memory graph, and value filters as SQL.

LangGraph's `index` names the fields to index with paths (`"a.b"`, `"items[0]"`, `"items[-1]"`,
`"items[*].text"`; `"$"` or no index: the whole value). The server reads them itself so every client
(not only the LangGraph adapter) gets the same text: the strings and numbers at those paths, one per
line, in the value's order. Keys are not text: "pizza" remembers better than '{"food": "pizza"}'.

Filters follow LangGraph's: `{"field": value}` or `{"field": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": v}}`,
nested objects meaning nested fields. They become conditions on the JSONB column, so a page of a large
namespace is filtered by PostgreSQL, not by reading every item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

from ...errors import ValidationFailed

WHOLE = "$"
MAX_PATHS = 32
MAX_PATH_CHARS = 200
MAX_FILTER_FIELDS = 32
TOKEN = re.compile(r"\.?([^.\[\]]+)|\[(\*|-?\d+)\]")
COMPARISONS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
Part = str | int  # a field name, an index, or "*" (every element)


def path_parts(path: str) -> list[Part]:
    """The steps of one index path; ValidationFailed for anything the syntax does not allow."""
    if path == WHOLE:
        return []
    if not path or len(path) > MAX_PATH_CHARS:
        raise ValidationFailed(f"index path {path[:40]!r} must have 1 to {MAX_PATH_CHARS} characters",
                               {"index": ["paths have 1 to 200 characters"]})
    parts: list[Part] = []
    position = 0
    for match in TOKEN.finditer(path):
        if match.start() != position or (match.group(0).startswith(".") and not parts):
            break
        field, index = match.groups()
        parts.append(field if field is not None else (index if index == "*" else int(index)))
        position = match.end()
    if position != len(path):
        raise ValidationFailed(f"index path {path!r} is not a field path like 'a.b', 'items[0]' or 'items[*].text'",
                               {"index": [f"bad path {path!r}"]})
    return parts


def index_paths(index: list[str] | None) -> list[list[Part]]:
    """Parsed paths of `index` (None: the whole value)."""
    if index is None:
        return [[]]
    if len(index) > MAX_PATHS:
        raise ValidationFailed(f"index names {len(index)} paths; at most {MAX_PATHS}",
                               {"index": [f"at most {MAX_PATHS} paths"]})
    return [path_parts(path) for path in index]


def indexed_text(value: dict[str, Any], index: list[str] | None) -> str:
    """The text of `value` at the paths of `index`, one piece per line (empty when nothing is there)."""
    pieces = [piece for parts in index_paths(index) for piece in _texts_at(value, parts)]
    return "\n".join(piece for piece in pieces if piece.strip())


def _texts_at(node: Any, parts: list[Part]) -> Iterator[str]:
    if not parts:
        yield from _leaves(node)
        return
    step, rest = parts[0], parts[1:]
    if step == "*" and isinstance(node, list):
        for element in node:
            yield from _texts_at(element, rest)
    elif isinstance(step, int) and isinstance(node, list) and -len(node) <= step < len(node):
        yield from _texts_at(node[step], rest)
    elif isinstance(step, str) and isinstance(node, dict) and step in node:
        yield from _texts_at(node[step], rest)


def _leaves(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield str(node)
    elif isinstance(node, dict):
        for child in node.values():
            yield from _leaves(child)
    elif isinstance(node, list):
        for child in node:
            yield from _leaves(child)


def value_filter(conditions: dict[str, Any] | None) -> Q:
    """A Q on StoreItem.value for a LangGraph filter; ValidationFailed for an unknown operator or a
    comparison with something other than a number."""
    found = list(_conditions(conditions or {}, []))
    if len(found) > MAX_FILTER_FIELDS:
        raise ValidationFailed(f"the filter has {len(found)} conditions; at most {MAX_FILTER_FIELDS}",
                               {"filter": [f"at most {MAX_FILTER_FIELDS} conditions"]})
    query = Q()
    for path, operator, operand in found:
        query &= Q(RawSQL(*_condition_sql(path, operator, operand), output_field=BooleanField()))
    return query


def _conditions(conditions: dict[str, Any], path: list[str]) -> Iterator[tuple[list[str], str, Any]]:
    for field, wanted in conditions.items():
        here = [*path, field]
        if isinstance(wanted, dict) and wanted and all(key.startswith("$") for key in wanted):
            for operator, operand in wanted.items():
                yield here, operator, operand
        elif isinstance(wanted, dict) and any(key.startswith("$") for key in wanted):
            raise ValidationFailed(f"filter on {'.'.join(here)!r} mixes operators and fields",
                                   {"filter": ["use either operators ($eq, $ne, $gt…) or fields"]})
        elif isinstance(wanted, dict) and wanted:
            yield from _conditions(wanted, here)
        else:
            yield here, "$eq", wanted


def _condition_sql(path: list[str], operator: str, operand: Any) -> tuple[str, list]:
    """One condition on `value #> path` (NULL-safe: a missing field is not equal to anything)."""
    if operator == "$eq":
        return "(value #> %s) = %s::jsonb", [path, json.dumps(operand)]
    if operator == "$ne":
        return "(value #> %s) IS DISTINCT FROM %s::jsonb", [path, json.dumps(operand)]
    if operator in COMPARISONS:
        if not isinstance(operand, (int, float)) or isinstance(operand, bool):
            raise ValidationFailed(f"{operator} on {'.'.join(path)!r} needs a number",
                                   {"filter": [f"{operator} compares numbers"]})
        sql = (f"CASE WHEN jsonb_typeof(value #> %s) = 'number' "
               f"THEN (value #> %s)::numeric {COMPARISONS[operator]} %s ELSE false END")
        return sql, [path, path, operand]
    raise ValidationFailed(f"unknown filter operator {operator!r}",
                           {"filter": ["operators: $eq, $ne, $gt, $gte, $lt, $lte"]})
