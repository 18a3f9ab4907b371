"""The memory engine: data model, ingest pipeline, recall, providers and the agent API."""
