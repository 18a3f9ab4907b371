"""Whose values a supersede replaced: the demo's travel desk through the real pipeline, supersedes counted by
traveller (issue 45: one traveller's change had replaced another's, across episodes and sessions).

The demo's scenario sessions are loaded as `make demo` loads them, then live episodes of both languages as its
simulated agent sends them: each live episode is one traveller, named in it. A supersede is right only between
memories of one traveller: the same episode, or two episodes naming the same person ("Ana Silva again"). Any
other, across episodes of different travellers or across sessions of different people, is counted as wrong.

`make eval` runs it (eval.run) into docs/eval.md; on its own, after Django is set up: `main()`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from memory.demo.bootstrap import scenario_load
from memory.demo.live import live_script
from memory.demo.scenarios import LANGUAGES, load_scenarios
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.pipeline import interaction_process_safely
from memory.engine.projects import project_create, session_create
from memory.models import Edge, EdgeStatus, Interaction, InteractionStatus, Project, Relation

ACTOR = "eval-subjects"


@dataclass
class SubjectsAudit:
    """Supersedes by whether both memories are one traveller's, and what ingest failed on the way."""

    right: int = 0  # within one traveller
    wrong: list[tuple[int, int, str, str]] = field(default_factory=list)  # (edge, old memory, old's, new's)
    proposed: int = 0  # waiting for a person: whose values they are was not known
    interactions: int = 0
    failed: int = 0  # interactions failed whole
    stage_failures: Counter = field(default_factory=Counter)  # stage → interactions kept without it


def demo_subjects_audit(episodes: int = 12, slug: str = "eval-subjects") -> SubjectsAudit:
    """Load the demo's scenario sessions and `episodes` live episodes per language into a new project (through
    accept and the write path, as the demo does), then judge every supersede edge by traveller."""
    Project.objects.filter(slug=slug).delete()
    project = project_create(name="Demo travel desk (subjects audit)", slug=slug)
    owner: dict[int, str] = {}  # memory → its traveller
    for scenario in load_scenarios():
        session = scenario_load(project, scenario)
        owner |= {pk: f"session:{session.pk}" for pk in session.memories.values_list("pk", flat=True)}
    for language in LANGUAGES:
        script = live_script(language)
        session = session_create(project=project, title=script.title, task=script.task,
                                 external_id=script.external_id, actor=ACTOR)
        start = timezone.now() - timedelta(minutes=episodes * 15)
        for number in range(episodes):
            episode = script.episode(number)
            name = script._values(number)["name"]
            for index, item in enumerate(episode.interactions):
                accepted = interactions_accept(session=session, actor=ACTOR, items=[InteractionInput(
                    kind=item.kind, content=item.content, metadata=item.metadata, idempotency_key=f"{number}:{index}",
                    occurred_at=start + timedelta(minutes=number * 15 + index))])
                interaction = interaction_process_safely(interaction_id=accepted[0].interaction.pk)
                if interaction is not None:
                    owner |= {m.pk: f"traveller:{name}" for m in interaction.memories.all() if m.pk not in owner}
    return _judged(project, owner)


def _judged(project: Project, owner: dict[int, str]) -> SubjectsAudit:
    audit = SubjectsAudit()
    for edge in Edge.objects.filter(project=project, relation=Relation.SUPERSEDES).exclude(status=EdgeStatus.REJECTED):
        if edge.needs_review and edge.status == EdgeStatus.INFERRED:
            audit.proposed += 1
            continue
        old, new = owner.get(edge.source_id, "?"), owner.get(edge.target_id, "?")
        if old == new and old != "?":
            audit.right += 1
        else:
            audit.wrong.append((edge.pk, edge.source_id, old, new))
    interactions = Interaction.objects.filter(project=project)
    audit.interactions = interactions.count()
    audit.failed = interactions.filter(status=InteractionStatus.FAILED).count()
    for errors in interactions.exclude(stage_errors={}).values_list("stage_errors", flat=True):
        audit.stage_failures.update(errors.keys())
    return audit


def main(episodes: int = 12) -> None:
    audit = demo_subjects_audit(episodes)
    print(f"interactions {audit.interactions}, failed {audit.failed}, stages failed {dict(audit.stage_failures)}")
    print(f"supersedes within one traveller {audit.right}, across travellers {len(audit.wrong)}, "
          f"proposed for review {audit.proposed}")
    for edge, old_memory, old, new in audit.wrong:
        print(f"  edge {edge}: memory {old_memory} of {old} replaced by one of {new}")

