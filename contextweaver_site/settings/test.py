"""Test settings: the same real database, a fast deterministic embedder unless a test asks."""

import os

os.environ.setdefault("CW_EMBEDDER", "hashing")

from .base import *  # noqa: E402,F403
from .base import MEMORY  # noqa: E402

MEMORY = {**MEMORY, "EMBEDDER": os.environ["CW_EMBEDDER"], "INGEST_MODE": "inline", "LLM": "none"}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Concurrent test runs on one server need distinct test databases (CW_TEST_DB).
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("CW_TEST_DB", "test_contextweaver")}  # noqa: F405
