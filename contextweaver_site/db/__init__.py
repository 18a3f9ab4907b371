"""Database backend: Django's PostgreSQL backend that starts the embedded server on demand."""
