"""ContextWeaver settings. Everything that varies between deployments comes from the environment."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

from contextweaver_site.embedded import server as embedded_server

from .env import env_bool, env_int, env_list, env_str, persistent_secret_key

# OpenMP's threads (the embedder's torch, the graph layout's igraph: both GNU libgomp) keep spinning for about
# 300,000 turns (6 ms here) after each parallel call, waiting for the next. On a small machine that took the
# CPU from PostgreSQL running a recall's statements right after its query was embedded: ripple at 100,000
# memories p50 / p95 17.6-18.3 / 23.2-25.1 ms spinning, 16.5-17.3 / 20.2-20.9 at 10,000 turns (`bench.recall_scale`
# project, alternate runs). Not OMP_WAIT_POLICY=PASSIVE: sleeping between the model's own calls cost batch
# embedding up to a fifth of its speed. libgomp reads this once, when the first library using it loads (igraph,
# at app loading), so it is set here.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("CW_VAR_DIR") or BASE_DIR / "var")

SECRET_KEY = persistent_secret_key(VAR_DIR / "secret_key")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "procrastinate.contrib.django",
    "axes",
    "memory",
    "curation",
    "administration",
]

MIDDLEWARE = [
    "contextweaver_site.request_id.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "contextweaver_site.middleware.RejectNulQueryMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "contextweaver_site.middleware.NoStoreWhenAuthenticatedMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "contextweaver_site.urls"
ASGI_APPLICATION = "contextweaver_site.asgi.application"
WSGI_APPLICATION = "contextweaver_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# --- Database: PostgreSQL + pgvector is the only system of record -------------------------
# Statements run often on a connection are prepared (parsed and planned once) after this many runs;
# "off" for a connection pooler that cannot keep prepared statements (PgBouncer < 1.21 in
# transaction mode). See contextweaver_site/db/base.py.
_prepare_threshold = env_str("CW_DB_PREPARE_THRESHOLD", "5")
# A pool of at most CW_DB_POOL_SIZE connections per process (psycopg_pool, through Django's
# OPTIONS["pool"]): under ASGI each request runs in a thread of its own, and thread-local persistent
# connections grew to hundreds under load. A request waits up to CW_DB_POOL_TIMEOUT seconds for a free
# connection, then gets a 503 with Retry-After. CW_DB_POOL_SIZE=0 turns the pool off (a connection
# per request). Size the server's max_connections for every process: docs/production.md.
DB_POOL_SIZE = env_int("CW_DB_POOL_SIZE", 10)
DATABASE_OPTIONS = {
    "server_side_binding": True,
    "prepare_threshold": None if _prepare_threshold.strip().lower() in ("off", "") else
    env_int("CW_DB_PREPARE_THRESHOLD", 5),
}
if DB_POOL_SIZE > 0:
    DATABASE_OPTIONS["pool"] = {"min_size": min(2, DB_POOL_SIZE), "max_size": DB_POOL_SIZE,
                                "timeout": float(env_int("CW_DB_POOL_TIMEOUT", 10)), "max_idle": 300}
# Set on each new server connection (contextweaver_site/db/base.py), not on every use of it.
DATABASE_SESSION_SETTINGS = {"hnsw.ef_search": env_int("CW_HNSW_EF_SEARCH", 100)}
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=True,
                                                  engine="contextweaver_site.db")}
    DATABASES["default"]["OPTIONS"] = {**DATABASE_OPTIONS, **DATABASES["default"].get("OPTIONS", {})}
else:
    # Embedded: pgserver's PostgreSQL over a unix socket in the data dir, started on first use.
    DATABASES = {
        "default": {
            "ENGINE": "contextweaver_site.db",
            "EMBEDDED": True,
            "NAME": env_str("CW_DB_NAME", embedded_server.DEFAULT_DATABASE),
            "USER": embedded_server.SUPERUSER,
            "HOST": str(embedded_server.socket_dir()),
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": DATABASE_OPTIONS,
        }
    }
DATABASES["default"]["SESSION_SETTINGS"] = DATABASE_SESSION_SETTINGS
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channels (live fan-out; docs/live.md) ---------------------------------------------------
# With REDIS_URL every process (web, worker, commands) publishes straight into Redis. Without it the
# layer is in-memory (one process), so changes cross processes through PostgreSQL LISTEN/NOTIFY:
# a trigger on the change log notifies at commit and the web server's listener fans them out.
REDIS_URL = env_str("REDIS_URL")
# A browser that falls behind may queue this many messages before new ones are dropped; it then
# catches up from the change log.
CHANNEL_CAPACITY = env_int("CW_CHANNEL_CAPACITY", 1000)
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                    "CONFIG": {"hosts": [REDIS_URL], "capacity": CHANNEL_CAPACITY}}
    }
else:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": CHANNEL_CAPACITY}}
    }
# Django's cache holds the API's rate-limit counts: per process by default, shared with Redis.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
# "notify": the PostgreSQL bridge (memory/live/listener.py); "layer": publish via the channel layer only.
LIVE_TRANSPORT = env_str("CW_LIVE_TRANSPORT", "layer" if REDIS_URL else "notify")

# --- Auth, i18n, static ------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Wrong passwords: django-axes locks a username + address pair out after AXES_FAILURE_LIMIT failures
# for AXES_COOLOFF_TIME (429 with the lockout page); a correct login resets the count.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("CW_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("CW_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True
STATICFILES_DIRS = [p for p in [BASE_DIR / "frontend" / "dist"] if p.exists()]

# --- Request limits (contextweaver_site/request_guard.py, before Django reads a body) ---------------
# A full batch (100 × 32 KB content + 16 KB metadata) fits in the default with room for JSON escapes.
MAX_REQUEST_BODY_BYTES = env_int("CW_MAX_BODY_BYTES", 10 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES
# Bodies larger than this need credentials that hold (checked from the headers before reading).
ANONYMOUS_BODY_BYTES = env_int("CW_ANONYMOUS_BODY_BYTES", 64 * 1024)
# The whole body must arrive within this many seconds (slow clients are answered 408 and closed).
REQUEST_BODY_TIMEOUT = float(env_int("CW_BODY_TIMEOUT_SECONDS", 30))

# --- REST API ----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memory.api.authentication.ProjectTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["contextweaver_site.http.parsers.StorableJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "contextweaver_site.http.errors.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    # Rate limits (memory/api/throttles.py): 429 with Retry-After beyond them.
    "DEFAULT_THROTTLE_CLASSES": ["memory.api.throttles.TokenRateThrottle", "memory.api.throttles.PersonRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "token": env_str("CW_THROTTLE_TOKEN", "6000/min"),
        "person": env_str("CW_THROTTLE_PERSON", "1200/min"),
        "auth_failure": env_str("CW_THROTTLE_AUTH_FAILURES", "30/min"),
    },
    # The client address the throttles count by: 0 (default) is REMOTE_ADDR, never X-Forwarded-For (a client
    # sets that header to anything: each guess could name a new address). uvicorn already puts the client's
    # address in REMOTE_ADDR behind a proxy in FORWARDED_ALLOW_IPS; only when the app sees the proxies'
    # addresses there, set the number of proxies that append to X-Forwarded-For (its N-th entry from the right).
    "NUM_PROXIES": max(0, env_int("CW_NUM_PROXIES", 0)),
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ContextWeaver agent API",
    "DESCRIPTION": "Send interactions, read the memory graph and recall context. "
    "Authenticate with a per-project token: `Authorization: Bearer <token>`.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI served from our own static files (drf-spectacular-sidecar): no CDN needed.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    # The error answers of every operation and the Error component (memory/api/schema.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "memory.api.schema.add_error_responses"],
    # One name per choice set: several models have a "kind" or a "status" field of their own.
    "ENUM_NAME_OVERRIDES": {
        "MemoryKindEnum": "memory.models.MemoryKind", "InteractionKindEnum": "memory.models.InteractionKind",
        "MemoryStatusEnum": "memory.models.MemoryStatus", "InteractionStatusEnum": "memory.models.InteractionStatus",
        "EdgeStatusEnum": "memory.models.EdgeStatus", "EdgeOriginEnum": "memory.models.EdgeOrigin",
        "RelationEnum": "memory.models.Relation", "EntityTypeEnum": "memory.models.EntityType",
        "CuratedRelationEnum": "curation.services.CURATED_RELATIONS", "EdgeDecisionEnum": "curation.services.DECISIONS",
        "CuratedMemoryStatusEnum": "curation.services.MEMORY_STATUSES",
    },
}

# Workers' queue connection listens again after a database restart (memory/queue.py).
PROCRASTINATE_ON_APP_READY = "memory.queue.on_app_ready"

# --- The memory engine (see memory/conf.py for every key and its default) -------------------
MEMORY = {
    "EMBEDDER": env_str("CW_EMBEDDER", "minilm"),
    "LLM": env_str("CW_LLM", "openai" if env_str("OPENAI_API_KEY") else "none"),
    "LLM_MODEL": env_str("CW_LLM_MODEL", "gpt-4o-mini"),
    "REVIEW_LLM_MODEL": env_str("CW_REVIEW_LLM_MODEL", ""),  # stronger model for edge review; empty: LLM_MODEL
    "OPENAI_EMBEDDING_MODEL": env_str("CW_OPENAI_EMBEDDING_MODEL", "text-embedding-3-small"),
    "LLM_TIMEOUT": float(env_int("CW_LLM_TIMEOUT", 20)),
    "MAX_CONTENT_BYTES": env_int("CW_MAX_CONTENT_BYTES", 32 * 1024),
    "MAX_BATCH": env_int("CW_MAX_BATCH", 100),
    "MAX_METADATA_BYTES": env_int("CW_MAX_METADATA_BYTES", 16 * 1024),
    "MAX_METADATA_DEPTH": env_int("CW_MAX_METADATA_DEPTH", 8),
    "INGEST_MODE": env_str("CW_INGEST_MODE", "queue"),
    "HNSW_EF_SEARCH": DATABASE_SESSION_SETTINGS["hnsw.ef_search"],
    "EMBED_THREADS": env_int("CW_EMBED_THREADS", 0),
    "EMBED_PRECISION": env_str("CW_EMBED_PRECISION", "auto"),
}
# /readyz and /metrics (contextweaver_site/monitoring.py): a bearer token for probes and Prometheus.
MONITORING_TOKEN = env_str("CW_MONITORING_TOKEN")

# The optional graph mirror (memory/mirror/, docs/integrations.md): off unless one target is set.
NEO4J_URI = env_str("NEO4J_URI")
NEO4J_USER = env_str("NEO4J_USER", "neo4j")
NEO4J_PASSWORD = env_str("NEO4J_PASSWORD")
NEO4J_DATABASE = env_str("NEO4J_DATABASE", "neo4j")
# FalkorDB speaks Cypher over the Redis protocol (redis://host:port); the graph is CW_MIRROR_GRAPH.
MIRROR_FALKORDB_URL = env_str("CW_MIRROR_FALKORDB_URL")
MIRROR_GRAPH = env_str("CW_MIRROR_GRAPH", "contextweaver")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # CW_LOG_FORMAT=json: one JSON object a line with the request id (contextweaver_site/request_id.py).
    "filters": {"request_id": {"()": "contextweaver_site.request_id.RequestIdFilter"},
                # Access log lines keep a query's keys, not its values (a search's text): request_id.py.
                "private_query": {"()": "contextweaver_site.request_id.PrivateQueryFilter"}},
    "formatters": {"text": {"format": "%(message)s"},
                   "json": {"()": "contextweaver_site.request_id.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["request_id"],
                             "formatter": "json" if env_str("CW_LOG_FORMAT", "text").lower() == "json" else "text"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"procrastinate": {"level": env_str("PROCRASTINATE_LOG_LEVEL", "WARNING")},
                # Access logs: uvicorn's (its --log-level still sets their level), daphne's and Django's runserver.
                **{name: {"handlers": ["console"], "filters": ["private_query"], "propagate": False}
                   for name in ("uvicorn.access", "django.channels.server", "django.server")},
                # django-axes logs every login at INFO; lockouts are WARNING.
                "axes": {"level": "WARNING"}},
}

# Browser protections (CSP, cookies, caching of logged-in pages): settings/security.py; the profile
# behind TLS turns on the rest (settings/production.py).
from .security import *  # noqa: E402,F403
