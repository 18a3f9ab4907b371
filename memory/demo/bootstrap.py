"""Set up the demo: project, agent token, login, and the demo sessions through the real pipeline."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from ..engine.ingest import InteractionInput, interactions_accept
from ..engine.links import LinkInput
from ..engine.pipeline import interaction_process
from ..engine.projects import project_create, session_create, token_issue, token_resolve
from ..models import AgentSession, Membership, Project, Role
from .links import DeclaredTurn, framework_links
from .live import live_script
from .scenarios import Scenario, ScenarioInteraction, load_scenarios

DEMO_SLUG = "demo"
LARGE_EXTERNAL_ID = "demo-large-en"
LARGE_FIRST_EPISODE = 100_000  # its episodes differ from the live session's (same script, other numbers)
LARGE_SPAN = timedelta(days=365)
DEMO_USER = "demo"
LOADER_ACTOR = "demo-loader"


def _kept_secret(path: Path, make: Callable[[], str]) -> str:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make())
        path.chmod(0o600)
    return path.read_text().strip()


def demo_project() -> Project:
    return Project.objects.filter(slug=DEMO_SLUG).first() or project_create(name="Demo agents", slug=DEMO_SLUG)


def demo_token(project: Project) -> str:
    """The demo agent's token, kept in var/ so reruns reuse it."""
    path = Path(settings.VAR_DIR) / "demo_token"
    raw = _kept_secret(path, lambda: token_issue(project=project, name="demo-agent")[1])
    if token_resolve(raw) is None:  # the database was reset: issue a fresh one
        path.unlink()
        raw = _kept_secret(path, lambda: token_issue(project=project, name="demo-agent")[1])
    return raw


@dataclass(frozen=True)
class DemoLogin:
    role: str
    username: str
    password: str


# One account per role, so the differences can be seen: a viewer gets sensitive text masked and no
# curation buttons, a curator curates, the admin also forgets in bulk, manages members and opens /admin/.
DEMO_ACCOUNTS = ((Role.ADMIN, DEMO_USER), (Role.CURATOR, f"{DEMO_USER}-curator"), (Role.VIEWER, f"{DEMO_USER}-viewer"))


def demo_logins(project: Project) -> list[DemoLogin]:
    """The demo's accounts, admin first; passwords kept in var/ (demo_password, demo_password_<role>) so
    reruns print the same ones."""
    logins = []
    for role, username in DEMO_ACCOUNTS:
        name = "demo_password" if role == Role.ADMIN else f"demo_password_{role}"
        password = _kept_secret(Path(settings.VAR_DIR) / name, lambda: secrets.token_urlsafe(9))
        user, _ = get_user_model().objects.get_or_create(username=username)
        user.set_password(password)
        # The demo's admin may open Django's /admin/ too; on a real install that is a separate decision.
        user.is_staff = user.is_superuser = role == Role.ADMIN
        user.save()
        Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
        logins.append(DemoLogin(str(role), username, password))
    return logins


def scenario_load(project: Project, scenario: Scenario, progress: Callable[[int], None] | None = None) -> AgentSession:
    """Play one scenario through accept + process, as an agent would have sent it in the last minutes: the
    last turn now, so the session's times, its "last activity" and the time filter agree, and its written
    dates in the year the engine reads its text dates in."""
    session = session_create(project=project, title=scenario.title, task=scenario.task,
                             external_id=scenario.external_id, metadata={"language": scenario.language},
                             actor=LOADER_ACTOR)
    now = timezone.now()
    scenario = scenario.dated_for(timezone.localdate(now))
    start = now - timedelta(seconds=30 * (len(scenario.interactions) - 1))
    declared = framework_links(scenario.interactions, scenario.external_id)
    for turn, item in enumerate(scenario.interactions):
        _load_one(session, item, occurred_at=start + timedelta(seconds=30 * turn), key=f"{scenario.external_id}-{turn}",
                  declared=declared[turn], parent_key=lambda i: f"{scenario.external_id}-{i}")
        if progress:
            progress(1)
    return session


def large_session_load(project: Project, interactions: int,
                       progress: Callable[[int, int], None] | None = None) -> AgentSession:
    """A session of several thousand memories through the real pipeline: a year of the travel desk's
    episodes, so people see the large-graph mode. Resumable: a second call continues where the first
    stopped (its interaction count says where) and stops at `interactions`."""
    script = live_script("en")
    session = project.sessions.filter(external_id=LARGE_EXTERNAL_ID).first() or session_create(
        project=project, title="A year at the travel desk (large)", task=script.task,
        external_id=LARGE_EXTERNAL_ID, metadata={"language": "en", "large": True}, actor=LOADER_ACTOR)
    done = session.interactions.count()
    start = timezone.now() - LARGE_SPAN
    step = LARGE_SPAN / max(interactions, 1)
    number = LARGE_FIRST_EPISODE + done  # each episode has fewer interactions than this moves on: never a repeat
    while done < interactions:
        episode = script.episode(number)
        declared = framework_links(episode.interactions, f"large:{number}")
        for index, item in enumerate(episode.interactions[: interactions - done]):
            _load_one(session, item, occurred_at=start + step * done, key=f"large:{number}:{index}",
                      declared=declared[index], parent_key=lambda i, n=number: f"large:{n}:{i}")
            done += 1
            if progress:
                progress(done, interactions)
        number += 1
    return session


def _load_one(session: AgentSession, item: ScenarioInteraction, *, occurred_at, key: str, declared: DeclaredTurn,
              parent_key: Callable[[int], str]) -> None:
    """One turn, with the framework id and links an instrumented agent would send (links.py)."""
    links = tuple(LinkInput("idempotency_key", parent_key(parent)) for parent in declared.parents)
    payload = InteractionInput(kind=item.kind, content=item.content, metadata=item.metadata,
                               occurred_at=occurred_at, idempotency_key=key, external_id=declared.external_id,
                               links=links)
    accepted = interactions_accept(session=session, items=[payload], actor=LOADER_ACTOR)
    interaction_process(interaction_id=accepted[0].interaction.pk)


def missing_scenarios(project: Project) -> list[Scenario]:
    loaded = set(project.sessions.values_list("external_id", flat=True))
    return [s for s in load_scenarios() if s.external_id not in loaded]
