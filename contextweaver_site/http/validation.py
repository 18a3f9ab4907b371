"""Validation every API view shares: a serializer's data checked (a 400 with the field errors) and object ids
(positive bigints, documented as int64)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.models import MAX_ID


@extend_schema_field({"type": "integer", "format": "int64", "minimum": 1})
class IdField(serializers.IntegerField):
    """An object id: a positive bigint. The bound is checked here rather than as max_value, so the schema
    says int64 instead of a maximum (Swagger showed 9223372036854775807 as every id's example)."""

    def to_internal_value(self, data) -> int:
        value = super().to_internal_value(data)
        if value > MAX_ID:
            self.fail("max_value", max_value=MAX_ID)
        return value


def valid_serializer(serializer_class: type[serializers.Serializer], data) -> serializers.Serializer:
    """The serializer with its data validated (for its methods: `selection()`), or a 400 with the field errors."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer


def valid(serializer_class: type[serializers.Serializer], data) -> dict:
    """The validated data, or a 400 with the field errors."""
    return dict(valid_serializer(serializer_class, data).validated_data)


def id_field(**kwargs) -> serializers.IntegerField:
    return IdField(min_value=1, **kwargs)
