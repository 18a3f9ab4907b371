"""The domain layer: plain, synchronous, typed functions for ingest, recall and the change log."""
