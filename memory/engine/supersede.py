"""Conflicts (SPEC §3.6): a new value for the same attribute of the same entity supersedes the old.

Two rules, both narrow on purpose, so unrelated memories are never invalidated:
- attributes: the same (entity, attribute) with another value: named entities across the project;
  the user's own attributes ("my phone") when both are the same subject's (subjects.subject_relation:
  one session of a travel desk serves many travellers; across sessions the same person must be known on
  both sides, "Kenji Sato again: my mobile number has changed", or both sessions name the same subject);
- announced changes: a memory that says a value changed ("moved to", "new total", "改为", "挪到") and
  is closely related to an earlier one whose value of the same type (number, date, time, amount) it
  replaces. The earlier one may be in any session of the project: in a conversation over weeks the
  date set in March moves in April. The earlier memory must be tied to the change: the change
  restates its value ("not the 28th: the 4th"), or both name the same rare name ("Dale"; a town is none),
  or they share two telling words (telling.py); tied only by a restated value, it replaces values of that
  type only, and a value named as a bound still kept ("仍在 20 万以内") is none restated. Of the tied
  memories with such a value only the best one is replaced, per value type: the one whose value is
  restated, else the one sharing most of the telling words, else the latest.
The agent's thoughts and tool calls change no value by the rules: they plan with and pass on values
("still under Martin's sign-off" had replaced the limit it checks), and a thought is never replaced.
With an LLM configured it also judges: a memory stating a value is shown with up to eight earlier memories
that state another value of the same type, and the LLM names those it replaces (supersede_llm.py); the rules'
decisions stand beside its own.
Every supersede obeys the subject rule: another subject's value is never replaced, and where whose values
they are is not known (across sessions, nobody named on either side) the edge is only proposed for review.
The old memory stays, marked superseded (out of default recall), linked by a `supersedes` edge.
A question or a confirmation ("is it still the 14th?", "还是14号吗？") never supersedes anything, and a
tool's result never replaces a constraint (only whoever requires something changes it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from ..models import (
    Edge,
    EdgeOrigin,
    EdgeStatus,
    EntityMention,
    EntityType,
    GraphChange,
    Memory,
    MemoryKind,
    MemoryStatus,
    Relation,
    RiskChange,
    RiskStatus,
)
from ..providers import get_llm
from .changelog import ENGINE_ACTOR, change_record
from .cues import ASKS_OR_CONFIRMS, CHANGE_CUE, CHECKED_BOUND, RESTATED_VALUE_CUE
from .extraction import MULTI_VALUED, AttributeValue, extract_dimensions
from .inference import Candidate
from .operations import Op
from .recall.seeds import Scope, lexical_fragment, rankings
from .risk import risk_propagate, risks_follow, risks_reopened
from .snapshots import edge_snapshot, memory_snapshot
from .subjects import Subjects, speakers_of, subject_relation, subjects_of
from .supersede_llm import replaced_judge
from .telling import memory_terms, telling_terms

USER_ENTITY = "user"
# Tool traffic records what was done with a value at the time; a later value does not make it stale.
NEVER_SUPERSEDED_KINDS = {MemoryKind.ACTION, MemoryKind.RESULT}
# What someone requires changes only when they say so: a venue's quote ("素食可以换成素食套餐，不加价") is no
# new value of the event's budget, and had replaced the constraint that set it.
REPLACES_NO_CONSTRAINT = {MemoryKind.RESULT}
# The agent's thoughts (intent) and tool calls (action) replace nothing by the rules: "still under Martin's sign-off"
# in a thought had replaced the spending limit it checks against. A thought is replaced by nothing either.
CHANGES_NO_VALUE = {MemoryKind.INTENT, MemoryKind.ACTION}
NEVER_REPLACED_BY_RULES = {MemoryKind.INTENT}
MAX_ATTRIBUTES_OF_SUPERSEDED = 2  # a memory about many things is not replaced by a change of one
# The latest earlier values looked at, so the check stays cheap: a session where one desk books for many
# travellers keeps hundreds of "my phone" values active, one per person; a person's own older value was
# replaced when their later one came.
MAX_OLDER_VALUES = 20


def _older_values(memory: Memory, attr: AttributeValue) -> list[tuple[Memory, Subjects]]:
    """The latest earlier memories stating another value of the attribute, each with whether it is the same
    subject's value (a named owner, "Maria's phone", is the subject on both sides)."""
    queryset = Memory.objects.filter(
        project_id=memory.project_id, status=MemoryStatus.ACTIVE,
        dimensions__attributes__contains=[{"entity": attr.entity, "attribute": attr.attribute}],
    ).exclude(pk=memory.pk).exclude(kind__in=_kinds_it_cannot_replace(memory))
    if attr.entity == USER_ENTITY:  # the session's own latest values, then the other sessions' latest
        here = queryset.filter(session_id=memory.session_id)
        latest = sorted(_latest(here) + _latest(queryset.exclude(session_id=memory.session_id)),
                        key=lambda m: (m.occurred_at, m.pk))
    else:
        latest = _latest(queryset)
    older = [
        old for old in latest
        if len({a.get("attribute") for a in old.dimensions.get("attributes", [])}) <= MAX_ATTRIBUTES_OF_SUPERSEDED
        and any(a.get("entity") == attr.entity and a.get("attribute") == attr.attribute and a.get("value") != attr.value
               for a in old.dimensions.get("attributes", []))
    ]
    if attr.entity != USER_ENTITY or not older:
        return [(old, Subjects.SAME) for old in older]  # a named owner ("Maria's phone") is the subject already
    # "my phone" in another session may be another user's: one project's agent serves many people, and a
    # change cue does not say whose ("move the stay to 9-13 September" replaced ten travellers' dates).
    people = subjects_of([memory, *older], first_person=True)
    return [(old, subject_relation(old, memory, people)) for old in older]


def _latest(queryset) -> list[Memory]:
    return list(reversed(queryset.order_by("-occurred_at", "-id")[:MAX_OLDER_VALUES]))


def _kinds_it_cannot_replace(memory: Memory, *, rules: bool = True) -> set[str]:
    kinds = NEVER_SUPERSEDED_KINDS | (NEVER_REPLACED_BY_RULES if rules else set())
    if memory.kind in REPLACES_NO_CONSTRAINT:
        return kinds | {MemoryKind.CONSTRAINT}
    return kinds


VALUE_TYPES = ("numbers", "dates", "times", "amounts")
CHANGE_MIN_SIMILARITY = 0.55
MAX_VALUES_COMPARED = 2  # a memory listing many numbers is not "the" value that changed
PROJECT_MATCHES = 16  # earlier memories of the whole project looked at for an announced change (8: one fewer labelled
# change found in `make eval`, 16 of 23 edges right against 17 of 24)
# An earlier memory must share two telling words (telling.py) with a change to be about the same thing,
# unless the change restates its value ("24号那场取消了，改到29号" names the old day: no word is needed).
MIN_SHARED_TERMS = 2
LLM_CANDIDATES = 8  # earlier memories shown to the LLM judge (supersede_llm.py), most likely first


@dataclass(frozen=True)
class Replaceable:
    """An earlier memory an announced change may replace, and how strongly it is tied to the change."""

    memory: Memory
    restated: frozenset[str]  # the value types whose old value the change repeats ("can't get in on the 28th")
    shared_terms: int  # telling words in common
    shared_weight: float  # their summed idf
    close: bool  # similar or sharing an entity (a candidate of the same session)
    named: bool = False  # a telling word in common is a name both mention ("Dale", "老周")

    @property
    def worded(self) -> bool:
        """Tied by words: a rare name both mention, or two telling words."""
        return self.named or self.shared_terms >= MIN_SHARED_TERMS

    def tied(self) -> bool:
        """About the same thing: the old value restated, or tied by words."""
        return bool(self.restated) or self.worded

    def replaces(self, name: str) -> bool:
        """Tied by a restated value alone, the change replaces a value of that type only: "moved the van to
        the 3rd as well, £520 now" repeats the date of "stay on till the 3rd for an extra £90" and is no
        new price of that stay."""
        return name in self.restated or self.worded

    def rank(self) -> tuple:
        return (bool(self.restated), self.shared_weight, self.close, self.memory.occurred_at, self.memory.pk)


def supersede_apply(memory: Memory, attributes: list[AttributeValue], related: list[Candidate]) -> list[Edge]:
    """Earlier values are looked up only for a memory that states one and says it changed, or when an LLM
    judges: few memories do, and the lookups cost queries."""
    if asks_or_confirms(memory):
        return []  # "is your phone still 138…?" names a value without changing it
    by_rules = memory.kind not in CHANGES_NO_VALUE
    edges = _new_attribute_values(memory, attributes) if by_rules else []
    if not any(_stated(memory, name) for name in VALUE_TYPES):
        return edges
    judge, announced = get_llm().available, by_rules and _says_changed(memory.content)
    if not (judge or announced):
        return edges
    pool = _pool(memory, related)
    if announced:
        for name, (old, subjects) in _announced_changes(memory, related, pool).items():
            article = "an" if name[0] in "aeiou" else "a"
            edge = _supersede(old, memory, f"announced change of {article} {name[:-1]} value", 0.7,
                              proposed=subjects == Subjects.UNKNOWN)
            if edge:
                edges.append(edge)
    if judge:
        replaced = {edge.source_id for edge in edges}
        shown = _judge_candidates(memory, pool, replaced)
        subjects = _subjects(memory, shown, pool)
        for verdict in replaced_judge(memory, [old for old in shown if subjects[old.pk] != Subjects.DIFFERENT]):
            edge = _supersede(verdict.old, memory, verdict.rationale, verdict.confidence, origin=EdgeOrigin.LLM,
                              proposed=subjects[verdict.old.pk] == Subjects.UNKNOWN)
            if edge:
                edges.append(edge)
    return edges


def _subjects(memory: Memory, earlier: list[Memory], pool: Pool) -> dict[int, Subjects]:
    """Per earlier memory, whether its value and the change's are one subject's (subjects.subject_relation):
    the speakers of a transcript, else the people named or the context's, else the session."""
    if not earlier:
        return {}
    people = subjects_of([memory, *earlier], first_person=False)
    return {old.pk: subject_relation(old, memory, people, pool.speakers) for old in earlier}


def _new_attribute_values(memory: Memory, attributes: list[AttributeValue]) -> list[Edge]:
    edges = []
    for attr in attributes:
        if attr.attribute in MULTI_VALUED:  # a second allergy adds to the first, it does not replace it
            continue
        for old, subjects in _older_values(memory, attr):
            if subjects == Subjects.DIFFERENT:
                continue
            edge = _supersede(old, memory, f"new {attr.attribute} of {attr.entity}: {attr.value}", 0.9,
                              proposed=subjects == Subjects.UNKNOWN)
            if edge:
                edges.append(edge)
    return edges


@dataclass(frozen=True)
class Pool:
    """The earlier memories a change may replace (the related candidates and the project's best text matches),
    with what the rules and the LLM judge both read of them, queried once."""

    memories: dict[int, Memory]
    telling: dict[str, float]  # the change's telling words (telling.py)
    names: dict[int, set[str]]  # per earlier memory, the telling names it shares with the change
    speakers: dict[int, str | None]  # per memory, the change included, who says it in a transcript


def _pool(memory: Memory, related: list[Candidate]) -> Pool:
    memories = {c.memory.pk: c.memory for c in related} | {m.pk: m for m in _project_matches(memory)}
    telling = telling_terms(memory)
    return Pool(memories, telling, _telling_names(memory, list(memories), telling),
                speakers_of([memory, *memories.values()]))


def _replaceable_by(memory: Memory, old: Memory, *, rules: bool = True) -> bool:
    """Active, earlier, and of a kind this memory may replace (by the rules, or by the LLM's judgement)."""
    return (old.status == MemoryStatus.ACTIVE and old.kind not in _kinds_it_cannot_replace(memory, rules=rules)
            and old.occurred_at <= memory.occurred_at)


def _judge_candidates(memory: Memory, pool: Pool, replaced: set[int]) -> list[Memory]:
    """What the LLM is shown: earlier memories stating another value of a type this one states, the speaker's
    own first (each person announces changes to their own plans), then the most tied to it."""
    speakers = pool.speakers
    ranked = []
    for old in pool.memories.values():
        if old.pk in replaced or not _replaceable_by(memory, old, rules=False) or not _changed_value_types(old, memory):
            continue
        own = speakers[old.pk] is None or speakers[old.pk] == speakers[memory.pk]
        ranked.append(((own, *_replaceable(old, memory, pool.telling, close=False, names=pool.names).rank()), old))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    return [old for _, old in ranked[:LLM_CANDIDATES]]


def _says_changed(content: str) -> bool:
    return bool(CHANGE_CUE.search(content) or RESTATED_VALUE_CUE.search(content))


def _announced_changes(memory: Memory, related: list[Candidate], pool: Pool) -> dict[str, tuple[Memory, Subjects]]:
    """Per value type, the one earlier memory whose value this change replaces, and whether it is the same
    subject's (another subject's values are passed over: a change replaces its own subject's).

    Being close (similar, sharing an entity) is not enough: in a conversation every turn shares the
    speakers' names and a date of its own ("yesterday"). The earlier memory must share telling words
    with the change (words found in few memories of the project), or have the value the change restates."""
    close = {c.memory.pk for c in related if c.similarity >= CHANGE_MIN_SIMILARITY or c.shared_entities}
    chosen: dict[str, Replaceable] = {}
    tied = [item for old in pool.memories.values() if _replaceable_by(memory, old)
            for item in [_replaceable(old, memory, pool.telling, close=old.pk in close, names=pool.names)]
            if item.tied()]
    # each person of a transcript announces changes to their own plans (51 of the 54 labelled), and a travel
    # desk's traveller to theirs: "make it 13:00" had replaced another traveller's table
    subjects = _subjects(memory, [item.memory for item in tied], pool)
    for item in tied:
        if subjects[item.memory.pk] == Subjects.UNKNOWN:
            # no person known on either side, and the change names what it changes in the old one's words ("the
            # Riverside hotel banquet was moved to 2 May"): the value is that thing's, not a person's; "my phone"
            # in two sessions (an attribute of whoever speaks) is only proposed (_new_attribute_values)
            subjects[item.memory.pk] = Subjects.SAME
        if subjects[item.memory.pk] == Subjects.DIFFERENT:
            continue
        for name in filter(item.replaces, _changed_value_types(item.memory, memory)):
            if name not in chosen or item.rank() > chosen[name].rank():
                chosen[name] = item
    return {name: (item.memory, subjects[item.memory.pk]) for name, item in chosen.items()}


def _replaceable(old: Memory, new: Memory, telling: dict[str, float], *, close: bool,
                 names: dict[int, set[str]] | None = None) -> Replaceable:
    restated = frozenset(name for name in VALUE_TYPES if _values(old, name) & _stated(new, name))
    terms = [t for t in memory_terms(old.content) if t in telling]
    shared = [telling[t] for t in terms]
    named = bool((names or {}).get(old.pk, set()) & set(terms))
    return Replaceable(old, restated, len(shared), round(sum(shared), 3), close, named)


def _telling_names(memory: Memory, others: list[int], telling: dict[str, float]) -> dict[int, set[str]]:
    """Per earlier memory, the names of entities it and the change both mention that are telling words
    (a speaker is named in too many memories to be one). A place is none: many things happen in one town
    ("婆婆在盐城要做复查，能不能挪到周六" had replaced the deadline set because she moves from 盐城)."""
    if not others or not telling:
        return {}
    mine = EntityMention.objects.filter(memory=memory).exclude(entity__type=EntityType.PLACE).values("entity_id")
    found: dict[int, set[str]] = {}
    for memory_id, name in (EntityMention.objects.filter(memory_id__in=others, entity_id__in=mine)
                            .values_list("memory_id", "entity__normalized_name")):
        if name in telling:
            found.setdefault(memory_id, set()).add(name)
    return found


def _project_matches(memory: Memory) -> list[Memory]:
    """The project's active memories sharing the change's rarest words, best matches first (full-text)."""
    scope = Scope(project=memory.project, session_id=None, statuses=(MemoryStatus.ACTIVE,), include_sensitive=True)
    fragment = lexical_fragment(scope, memory.content, PROJECT_MATCHES + 1)
    if fragment is None:
        return []
    order, _ = rankings([fragment])  # run as recall runs its seeds (never prepared: seeds._fetch)
    ids = [memory_id for memory_id in order["lexical"] if memory_id != memory.pk]
    found = Memory.objects.in_bulk(ids)
    return [found[i] for i in ids if i in found]


def _values(memory: Memory, name: str) -> set:
    """A value type of the memory; for dates the named ones only ("tomorrow" is no value to replace)."""
    dims = memory.dimensions or {}
    if name == "dates" and "stated_dates" in dims:
        return set(dims["stated_dates"])
    return set(dims.get(name, []))


def _stated(memory: Memory, name: str) -> set:
    """The values of a type the memory states, less those it only checks against as a bound ("加上后总花费仍在 20 万
    以内" had replaced the project's constraints through the 20 万 it repeats)."""
    return _values(memory, name) - _checked_bounds(memory.content, memory.occurred_at).get(name, frozenset())


@lru_cache(maxsize=64)
def _checked_bounds(content: str, now: datetime) -> dict[str, frozenset]:
    """Per value type, the values named in the text's bound checks (cues.CHECKED_BOUND). Cached: a change is
    compared with every earlier memory it may replace, and most texts have no bound check at all."""
    found: dict[str, set] = {}
    for match in CHECKED_BOUND.finditer(content):
        checked = extract_dimensions(match.group(), now=now)
        for value_type in VALUE_TYPES:
            found.setdefault(value_type, set()).update(
                getattr(checked, "stated_dates" if value_type == "dates" else value_type))
    return {value_type: frozenset(values) for value_type, values in found.items()}


def asks_or_confirms(memory: Memory) -> bool:
    """A question, or a check that a value still holds: it mentions a value, it does not set one."""
    return (memory.dimensions or {}).get("intent") == "question" or bool(ASKS_OR_CONFIRMS.search(memory.content))


def _changed_value_types(old: Memory, new: Memory) -> list[str]:
    """The value types both mention where the new memory brings a value the old one lacks, and the old
    one had a value the new one drops or restates beside it ("not the 24th: the 29th")."""
    changed = []
    for name in VALUE_TYPES:
        before, after = _values(old, name), _stated(new, name)
        if len(before) > MAX_VALUES_COMPARED or len(after) > MAX_VALUES_COMPARED:
            continue
        if before and after - before:
            changed.append(name)
    return changed


def _supersede(old: Memory, memory: Memory, rationale: str, confidence: float,
               origin: str = EdgeOrigin.RULE, *, proposed: bool = False) -> Edge | None:
    """`memory` replaces `old`: a supersedes edge, and `old` marked superseded. `proposed`: whose values they
    are is not known (two sessions, one side naming nobody), so the edge waits for a person's review and
    `old` stays active until it is approved (curation.services.edge_update)."""
    pair = Edge.objects.filter(source=old, target=memory)
    if pair.filter(origin=EdgeOrigin.HUMAN).exists() or pair.filter(relation=Relation.SUPERSEDES).exists():
        return None
    if proposed:
        rationale = f"{rationale} (proposed: not known to be the same person's)"
    edge = Edge.objects.create(
        project_id=memory.project_id, session_id=memory.session_id, source=old, target=memory,
        relation=Relation.SUPERSEDES, confidence=confidence, origin=origin, rationale=rationale,
        needs_review=proposed,
    )
    if proposed:
        change_record(project=memory.project, session=memory.session, actor=ENGINE_ACTOR, op=Op.EDGE_CREATED,
                      object_type="edge", object_id=edge.pk, after=edge_snapshot(edge))
        return edge
    before = memory_snapshot(old)
    level, old.status, old.at_risk = old.at_risk, MemoryStatus.SUPERSEDED, 0.0
    old.save(update_fields=["status", "at_risk", "updated_at"])
    if level:  # what it depended on changed, and now it is replaced itself: its flag is settled
        risks_follow(old, actor=ENGINE_ACTOR, before_level=level)
    # each change under its object's session: the old memory's own session page learns it was replaced
    for op, obj_type, obj, session, prev, after in (
        (Op.EDGE_CREATED, "edge", edge, memory.session, None, edge_snapshot(edge)),
        (Op.MEMORY_SUPERSEDED, "memory", old, old.session, before, memory_snapshot(old)),
    ):
        change_record(project=memory.project, session=session, actor=ENGINE_ACTOR, op=op,
                      object_type=obj_type, object_id=obj.pk, before=prev, after=after)
    replaced_risk_propagate(old, memory)
    return edge


def replaced_risk_propagate(old: Memory, new: Memory, actor: str = ENGINE_ACTOR) -> None:
    """What depended on `old` is at risk now that `new` replaced it, told with the values that changed."""
    before, after = changed_values(old, new)
    risk_propagate(old, RiskChange.SUPERSEDED, before=before, after=after, replaced_by=new, actor=actor)


def changed_values(old: Memory, new: Memory) -> tuple[str, str]:
    """The old memory's values the new one replaces, and the new ones ("15:00", "18:00"); empty when the
    change is not in a value the extractor reads."""
    before, after = [], []
    names_old = bool(NAMES_REPLACED_VALUE.search(new.content))
    for name in VALUE_TYPES:
        was, now = _values(old, name), _stated(new, name)
        if not (was and now - was):
            continue
        if names_old and was & now:
            # "18:00 instead of 15:00" names the old value it replaces: that one, not the old memory's others
            # ("departs 15:00, arrives 10:40": the arrival did not change)
            before += sorted(map(str, was & now))[:3]
            after += sorted(map(str, now - was))[:3]
        else:  # a range moved ("2 to 4 September" -> "4 to 6 September"): the old values, then the new
            before += sorted(map(str, was))[:3]
            after += sorted(map(str, now))[:3]
    return ", ".join(before)[:300], ", ".join(after)[:300]


# A change that names the value it replaces beside the new one.
NAMES_REPLACED_VALUE = re.compile(r"\b(instead of|rather than|previously|no longer)\b|而不是|不再是|原来|原定|原先",
                                  re.I)


def replaced_status_follow(*, memory_id: int, actor: str) -> list[GraphChange]:
    """A memory is superseded while a supersedes edge from it stands (approved, or inferred and not waiting
    for review), and active again when none does: a person's approval of a proposed replacement applies it,
    rejecting or deleting the edge that replaced it undoes it. Returns the change made, if any."""
    memory = (Memory.objects.select_for_update(of=("self",)).select_related("project", "session")
              .filter(pk=memory_id).first())
    if memory is None or memory.status not in (MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED):
        return []
    standing = (Edge.objects.filter(source_id=memory_id, relation=Relation.SUPERSEDES)
                .exclude(status=EdgeStatus.REJECTED).exclude(needs_review=True, status=EdgeStatus.INFERRED).exists())
    status = MemoryStatus.SUPERSEDED if standing else MemoryStatus.ACTIVE
    if memory.status == status:
        return []
    before = memory_snapshot(memory)
    memory.status = status
    level, memory.at_risk = memory.at_risk, (0.0 if standing else risks_reopened(memory, RiskStatus.SUPERSEDED)
                                             or memory.at_risk)
    memory.save(update_fields=["status", "at_risk", "updated_at"])
    if standing and level:  # replaced by a person's pick: its at-risk flag is settled with it
        risks_follow(memory, actor=actor, before_level=level)
    if standing:  # a person approved the replacement: what depended on the replaced memory is at risk
        newest = (Edge.objects.filter(source_id=memory_id, relation=Relation.SUPERSEDES)
                  .exclude(status=EdgeStatus.REJECTED).select_related("target").order_by("-pk").first())
        if newest is not None:
            replaced_risk_propagate(memory, newest.target, actor=actor)
    return [change_record(project=memory.project, session=memory.session, actor=actor,
                          op=Op.MEMORY_SUPERSEDED if standing else Op.MEMORY_RESTORED, object_type="memory",
                          object_id=memory.pk, before=before, after=memory_snapshot(memory))]
