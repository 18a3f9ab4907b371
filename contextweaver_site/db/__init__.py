"""Database backend: Django's PostgreSQL backend with prepared statements a statement can opt out of,
and the embedded server started on demand (base.py)."""

# A statement starting with this comment is planned on every call, never prepared (see base.py).
PLANNED_PER_CALL = "/* planned per call */ "
