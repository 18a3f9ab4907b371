"""Test settings: the same real database, a fast deterministic embedder unless a test asks."""

import os

os.environ.setdefault("CW_EMBEDDER", "hashing")

from .base import *  # noqa: E402,F403
from .base import MEMORY  # noqa: E402

# Inline ingest (processed on commit, in the test's process) unless a live test server asks for the queue.
MEMORY = {**MEMORY, "EMBEDDER": os.environ["CW_EMBEDDER"], "LLM": "none",
          "INGEST_MODE": os.environ.get("CW_TEST_INGEST_MODE", "inline")}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test process itself runs unpooled: pytest-django closes each thread's connection, while a pooled one
# that a test thread never handed back kept the test database from being dropped. Servers started by tests
# set CW_DB_POOL_SIZE and run pooled, as in production.
if "CW_DB_POOL_SIZE" not in os.environ:
    DATABASES["default"]["OPTIONS"] = {k: v for k, v in DATABASES["default"]["OPTIONS"].items()  # noqa: F405
                                       if k != "pool"}
    DATABASES["default"]["CONN_MAX_AGE"] = 60  # noqa: F405

# Concurrent test runs on one server need distinct test databases (CW_TEST_DB).
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("CW_TEST_DB", "test_contextweaver")}  # noqa: F405

# Every test calls from 127.0.0.1 with fresh tokens: limits high enough never to decide a test, except
# in the tests of the limits themselves (tests/test_throttling.py lowers them).
REST_FRAMEWORK = {**REST_FRAMEWORK,  # noqa: F405
                  "DEFAULT_THROTTLE_RATES": {"token": "100000/min", "person": "100000/min",
                                             "auth_failure": "100000/min"}}
