"""The deployment files (deploy/, docs/deploy.md) name only what exists: images built here or pinned
upstream ones, settings the code reads, commands manage.py has, files in the repo."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
from django.conf import settings
from django.core.management import get_commands

ROOT = Path(settings.BASE_DIR)
DEPLOY = ROOT / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
OUR_IMAGE = "contextweaver:latest"
UPSTREAM_IMAGES = {"pgvector/pgvector:pg17", "redis:7-alpine", "neo4j:5-community", "caddy:2"}
# Variables read by the upstream images themselves (postgres, neo4j) and by the Caddyfile.
UPSTREAM_VARIABLES = {"POSTGRES_DB", "POSTGRES_USER", "POSTGRES_PASSWORD", "NEO4J_AUTH", "CW_DOMAIN"}
READ = re.compile(r"""(?:env_[a-z]+\(|os\.environ\.get\(|os\.environ\[|os\.getenv\()\s*["']([A-Z][A-Z0-9_]+)["']""")


def variables_the_code_reads() -> set[str]:
    found = {"DJANGO_SETTINGS_MODULE"}
    for folder in ("contextweaver_site", "memory", "curation", "administration"):
        for source in (ROOT / folder).rglob("*.py"):
            found |= set(READ.findall(source.read_text()))
    return found


def our_services() -> dict[str, dict]:
    return {name: spec for name, spec in COMPOSE["services"].items() if spec.get("image") == OUR_IMAGE}


def test_the_compose_file_uses_known_images_and_builds_ours_from_the_dockerfile():
    images = {spec["image"] for spec in COMPOSE["services"].values()}
    assert images <= UPSTREAM_IMAGES | {OUR_IMAGE}, images - UPSTREAM_IMAGES
    for name, spec in our_services().items():
        assert (ROOT / spec["build"]["context"].replace("..", ".") / spec["build"]["dockerfile"]).is_file(), name
    assert {"web", "worker", "migrate", "mirror"} <= set(our_services())
    assert COMPOSE["services"]["web"]["deploy"]["replicas"] >= 2  # several servers behind one address


def test_every_setting_named_is_one_the_code_reads():
    known = variables_the_code_reads() | UPSTREAM_VARIABLES
    named = set()
    for spec in COMPOSE["services"].values():
        named |= set(spec.get("environment") or {})
    example = (DEPLOY / "contextweaver.env.example").read_text()
    named |= {line.split("=", 1)[0] for line in example.splitlines() if line and not line.startswith("#")}
    for unit in (DEPLOY / "systemd").glob("*.service"):
        named |= set(re.findall(r"^Environment=([A-Z0-9_]+)=", unit.read_text(), flags=re.M))
    assert named and named <= known, sorted(named - known)
    assert "REDIS_URL" in named and "DATABASE_URL" in named and "CW_MONITORING_TOKEN" in named


def manage_commands(command: list[str] | str) -> list[str]:
    words = shlex.split(command) if isinstance(command, str) else command
    return [words[i + 1] for i, word in enumerate(words[:-1]) if word.endswith("manage.py")]


def test_commands_and_files_exist():
    commands = set(get_commands())
    used = [c for spec in our_services().values() if "command" in spec for c in manage_commands(spec["command"])]
    for unit in (DEPLOY / "systemd").glob("*.service"):
        start = re.search(r"^ExecStart=(.+)$", unit.read_text(), flags=re.M).group(1)
        used += manage_commands(start)
        if "uvicorn" in start:
            assert "contextweaver_site.asgi:application" in start
    assert set(used) == {"migrate", "procrastinate", "graph_mirror"} and set(used) <= commands
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    for path in ("constraints.txt", "frontend/package-lock.json", "contextweaver_site/asgi.py"):
        assert (ROOT / path).exists(), path
    assert '"torch==2.13.0"' in dockerfile and "contextweaver_site.asgi:application" in dockerfile
    caddy = (DEPLOY / "Caddyfile").read_text()
    assert "reverse_proxy web:8000" in caddy and "/healthz" in caddy


def test_the_guide_describes_every_service_and_unit():
    guide = (ROOT / "docs" / "deploy.md").read_text()
    for name in COMPOSE["services"]:
        assert f"`{name}`" in guide, name
    for unit in (DEPLOY / "systemd").glob("*.service"):
        assert unit.name in guide, unit.name
