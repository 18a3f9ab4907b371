"""`field__any_of=[…]`: membership in a list sent as one array parameter (`= ANY(%s)`).

A hard forget filters by ten thousand ids at a time; as `__in` that is ten thousand placeholders, which
cost more to build and for psycopg to parse than the query costs to run.
"""

from __future__ import annotations

from django.db.models import Field, ForeignObject, Lookup
from django.db.models.fields.related_lookups import RelatedLookupMixin


@Field.register_lookup
class AnyOf(Lookup):
    lookup_name = "any_of"
    prepare_rhs = False

    def get_db_prep_lookup(self, value, connection):
        return "%s", [sorted(set(value))]

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} = ANY({rhs})", [*lhs_params, *rhs_params]


@ForeignObject.register_lookup
class RelatedAnyOf(RelatedLookupMixin, AnyOf):
    """The same on a foreign key (`source_id__any_of=…`), with ids (not model instances)."""
