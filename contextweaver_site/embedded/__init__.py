"""The embedded PostgreSQL + pgvector server used when DATABASE_URL is not set."""
