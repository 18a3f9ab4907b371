"""Pagination whose numbers are checked: a bad or out-of-range `limit` / `offset` is a 400.

DRF's LimitOffsetPagination falls back to the default on junk and passes any offset to the
database, where one beyond bigint was a 500.
"""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

MAX_OFFSET = 2**31 - 1


class BoundedPagination(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000

    def get_limit(self, request) -> int:
        return _bounded(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request) -> int:
        return _bounded(request, self.offset_query_param, 0, 0, MAX_OFFSET)


def _bounded(request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= len(str(high))) or not low <= int(raw) <= high:
        raise ValidationError({name: [f"must be a whole number from {low} to {high}"]})
    return int(raw)


def page_of(results: serializers.Serializer, name: str, doc: str = "") -> type[serializers.Serializer]:
    """The documented shape of one BoundedPagination page of `results` (a serializer with many=True)."""
    fields = {"count": serializers.IntegerField(), "next": serializers.URLField(allow_null=True),
              "previous": serializers.URLField(allow_null=True), "results": results,
              "__doc__": doc or f"One page of {name.removesuffix('PageOutput').lower()} (limit/offset pagination)."}
    return type(name, (serializers.Serializer,), fields)
