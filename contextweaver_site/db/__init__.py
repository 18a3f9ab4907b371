"""Database backend: Django's PostgreSQL backend with prepared statements, and the embedded server
started on demand (base.py)."""
