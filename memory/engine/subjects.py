"""Whose value a memory states, so a new value replaces only the same subject's old one (SPEC §3.6).

One session often serves several people: a travel desk books for Omar Haddad, then for Ana Silva, and
"my budget is 900 EUR" from Ana does not replace Omar's 1,200. A memory is about the people it names;
in a transcript a first-person value ("my phone is …") belongs to the turn's speaker ("Tom: …"); a
memory naming nobody ("Book it, and note that my phone has changed") is about the session's subject when
the agent said whom the session is for (`AgentSession.subject`), else whoever the session was last about,
the people named in the nearest earlier memory that names someone, else those its task names.

`subject_relation` is the one rule every supersede obeys (the rules' and the LLM's): the same speaker or
the same person on both sides (named, the session's subject, or the context's) is the same subject; two
different ones are not. With nobody known on a side it is the same within a session (the session's own);
across sessions it is unknown when nobody is known on either side ("user" in two sessions is not one person
unless the sessions say so), where a replacement is proposed for review, never applied, and not the same
when someone is known on one side only.
"""

from __future__ import annotations

import functools
from enum import StrEnum

from django.utils import timezone

from ..models import AgentSession, EntityMention, EntityType, Memory
from .cues import named_speaker, speaker_label
from .extraction import extract_dimensions
from .extraction.patterns import normalize_name

LOOKBACK = 12  # earlier memories of the session searched for who a memory naming nobody is about


def named_people(memory_ids: list[int]) -> dict[int, set[str]]:
    """Per memory, the normalised names of the people it mentions (speakers' labels included)."""
    found: dict[int, set[str]] = {}
    rows = (EntityMention.objects.filter(memory_id__in=memory_ids, entity__type=EntityType.PERSON)
            .values_list("memory_id", "entity__normalized_name"))
    for memory_id, name in rows:
        found.setdefault(memory_id, set()).add(name)
    return found


class Subjects(StrEnum):
    SAME = "same"
    DIFFERENT = "different"  # or not known to be the same where nothing suggests it: nothing is replaced
    UNKNOWN = "unknown"  # nothing tells, and it may be the same: the replacement is proposed for review


def subject_relation(old: Memory, new: Memory, people: dict[int, set[str]],
                     speakers: dict[int, str | None] | None = None) -> Subjects:
    """Whether `old`'s value and `new`'s are about the same subject. `people`: subjects_of for both;
    `speakers`: speakers_of, when the values are the speakers' own (a transcript's announced changes)."""
    said = (speakers or {}).get(old.pk), (speakers or {}).get(new.pk)
    if None not in said:
        return Subjects.SAME if said[0] == said[1] else Subjects.DIFFERENT
    known = bool(people.get(old.pk)), bool(people.get(new.pk))
    if all(known):
        return Subjects.SAME if people[old.pk] & people[new.pk] else Subjects.DIFFERENT
    if old.session_id == new.session_id:
        return Subjects.SAME  # nobody known on one side at least: the session's own ("Update: my new phone …")
    if not any(known):  # across sessions with nobody on either side: a person decides
        return Subjects.UNKNOWN
    # someone on one side, nobody on the other: nothing says the other session's "my phone" is that person's
    return Subjects.DIFFERENT


def subjects_of(memories: list[Memory], *, first_person: bool) -> dict[int, set[str]]:
    """Per memory, the people its value is about. `first_person`: the value is the speaker's own ("my …"),
    so a transcript's speaker label decides; otherwise the people named, else those of the context (one
    query for all the names, one lookup of the context per memory that names nobody)."""
    named = named_people([m.pk for m in memories])
    declared = _session_subjects({m.session_id for m in memories})
    found: dict[int, set[str]] = {}
    for memory in memories:
        speaker = speaker_label(memory.content)
        if first_person and speaker:
            found[memory.pk] = {speaker}
            continue
        people = named.get(memory.pk, set()) - ({speaker} if speaker else set())
        found[memory.pk] = people or declared.get(memory.session_id) or _context_people(memory)
    return found


def _session_subjects(session_ids: set[int]) -> dict[int, set[str]]:
    """The subjects the agent gave these sessions, normalised as entity names are ("Ana Silva" → "ana silva");
    one query, none when no session has one."""
    rows = AgentSession.objects.filter(pk__in=session_ids).exclude(subject="").values_list("pk", "subject")
    return {pk: {normalize_name(subject)} for pk, subject in rows if normalize_name(subject)}


def _context_people(memory: Memory) -> set[str]:
    earlier = list(Memory.objects.filter(session_id=memory.session_id, occurred_at__lt=memory.occurred_at)
                   .order_by("-occurred_at", "-id").values_list("id", "content")[:LOOKBACK])
    people = named_people([pk for pk, _content in earlier])
    for pk, content in earlier:
        speaker = speaker_label(content)
        named = people.get(pk, set()) - ({speaker} if speaker else set())
        if named:
            return named
    return _task_people(memory.session_id)


def _task_people(session_id: int) -> set[str]:
    """The people a session's task names ("为陈先生一家规划云南行程", "Rebook Kenji Sato's flights"): who the
    session is for, when none of its memories has named anyone yet. Two sessions of one trip then know
    "my phone" is the same person's on both sides."""
    task = AgentSession.objects.filter(pk=session_id).values_list("task", flat=True).first()
    return set(_people_named_in(task)) if task else set()


@functools.lru_cache(maxsize=256)
def _people_named_in(task: str) -> frozenset[str]:
    """A task's persons, extracted once per task text: supersede asks for every older value of the session,
    and the full extraction (segmenting, dates, keywords) is the costly part."""
    found = extract_dimensions(task, now=timezone.now()).entities
    return frozenset(e.normalized for e in found if e.type == EntityType.PERSON)


def speakers_of(memories: list[Memory]) -> dict[int, str | None]:
    """Per memory, who says it in a transcript: the `speaker` its source interaction's metadata names, else
    "Maria: …", or "小敏：…" (no space) when 小敏 is a person the turn mentions, so the heading "约束：…" is no
    speaker. A query for the sources not at hand, one for the memories with such a label."""
    named = _said_by(memories)
    rest = [m for m in memories if not named.get(m.pk)]
    labels = {m.pk: speaker_label(m.content, spaced=False) for m in rest}
    people = named_people([pk for pk, label in labels.items() if label]) if any(labels.values()) else {}
    found = {m.pk: speaker_label(m.content) or (labels[m.pk] if labels[m.pk] in people.get(m.pk, set()) else None)
             for m in rest}
    return {m.pk: named.get(m.pk) or found[m.pk] for m in memories}


def _said_by(memories: list[Memory]) -> dict[int, str | None]:
    """Per memory, the speaker its first source interaction's metadata names: read from the source the
    pipeline attached (`source_interaction`), else in one query."""
    said = {m.pk: named_speaker(m.source_interaction.metadata) for m in memories
            if vars(m).get("source_interaction") is not None}
    missing = [m.pk for m in memories if m.pk not in said]
    if missing:
        sources = (Memory.sources.through.objects.filter(memory_id__in=missing)
                   .order_by("memory_id", "interaction_id").values_list("memory_id", "interaction__metadata"))
        for memory_id, metadata in sources:
            said.setdefault(memory_id, named_speaker(metadata))
    return said


