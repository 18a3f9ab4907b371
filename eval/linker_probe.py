"""Could a linker learned from the labelled edges find the dependencies of files it was not shaped on?

Issue 11 asks the inferred edges for recall 0.6 at precision 0.5. The offline rules reach 0.34 on the
tuned files (docs/eval.md) and 0.20 on the held-out ones (docs/eval-heldout.md), and rules written from the
tuned labels lost precision on the held-out files. This probe asks the same question without a person
writing rules: it fits classifiers on the tuned files' labelled dependencies (eval/data) over what an
offline pipeline knows of a pair at ingest (the embedder's cosine, shared words and values, distance,
speakers, kinds, cue words), chooses the threshold on the tuned files alone (out of fold, by file), and
scores that threshold on the held-out files (eval/heldout).

Data only: no database and no engine, so it runs in a minute or two. Supersedes are left out (the
supersede rules judge them, and `make eval` scores them separately). `python -m eval.linker_probe` writes
docs/eval-linker.md.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .baselines import content_terms
from .dataset import DATA_DIR, HELDOUT_DIR, KINDS, STYLES, EvalFile, load_files
from .metrics import EdgeScores

ROOT = Path(__file__).resolve().parent.parent
WINDOW = 8  # earlier turns of the child's own session that are candidates
CROSS_TOP = 6  # and the most similar earlier turns of the project's other sessions
MIN_PRECISION = 0.5  # issue 11's bar for inferred edges
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.05, 0.91, 0.01))
FOLDS = 5
VALUE = re.compile(r"\d+(?:[.:/,-]\d+)*")
# Words pointing back at something said before: the one signal here the engine's rules do not read.
REFERRING_CUE = re.compile(r"\b(that|those|the one|last time|remember|you said|you mentioned|earlier|still|again|"
                           r"as planned|the same)\b|上次|之前|那个|那家|你说|你提|还是|又|照旧|记得", re.I)
BASE_FEATURES = (
    "cosine", "cosine rank among candidates", "same session", "distance in turns (log)", "previous turn",
    "two turns back", "child's words shared", "shared words' idf", "shared value", "same speaker",
    "parent asks", "reply to a question", "child has a cause cue", "child has a referring cue",
    "conversation", "sessions apart", "cosine in a conversation", "cosine across sessions",
)
FEATURES = BASE_FEATURES + tuple(f"{p} -> {c}" for p in KINDS for c in KINDS)

Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class Turn:
    id: str
    session: int
    position: int
    kind: str
    speaker: str
    terms: frozenset[str]
    values: frozenset[str]
    asks: bool  # the engine's question pattern (extraction.classify)
    cause_cue: bool  # the engine's causal cue words (inference.CAUSAL)
    refers: bool  # REFERRING_CUE


@dataclass
class Pairs:
    """Candidate (parent, child) pairs of some files, their features and whether a label names them."""

    features: np.ndarray
    labelled: np.ndarray  # bool per pair
    groups: list[str]  # "<style>, same session" / "<style>, across sessions"
    files: list[str]
    labels: Counter = field(default_factory=Counter)  # labelled dependencies per group, candidates or not

    @property
    def total(self) -> int:
        return sum(self.labels.values())


def turns_of(spec: EvalFile) -> list[Turn]:
    """Each interaction with what the features read of it; speakers, questions and cause cues as the engine
    tells them (imported here: they need Django set up)."""
    from memory.engine.cues import turn_speaker
    from memory.engine.extraction.classify import QUESTION_RE
    from memory.engine.inference import CAUSAL

    turns = []
    for index, session in enumerate(spec.sessions):
        for position, item in enumerate(session.interactions):
            text = item.content
            speaker = (turn_speaker(text, item.metadata) if spec.style == "conversation" else None) or item.kind
            turns.append(Turn(item.id, index, position, item.kind, speaker, frozenset(content_terms(text)),
                              frozenset(VALUE.findall(text)), bool(QUESTION_RE.search(text)),
                              bool(CAUSAL.search(text)), bool(REFERRING_CUE.search(text))))
    return turns


def candidates(turns: list[Turn], cosines: np.ndarray, child: int) -> list[int]:
    """The child's own session's last WINDOW turns, then the CROSS_TOP most similar turns of earlier sessions."""
    mine = turns[child]
    near = [i for i in range(child) if turns[i].session == mine.session and mine.position - turns[i].position <= WINDOW]
    other = [int(i) for i in np.argsort(-cosines[:child], kind="stable") if turns[i].session != mine.session]
    return near + other[:CROSS_TOP]


def pair_features(style: str, parent: Turn, child: Turn, cosine: float, rank: int,
                  idf: dict[str, float]) -> list[float]:
    same = parent.session == child.session
    distance = child.position - parent.position if same else 0
    shared = parent.terms & child.terms
    asks = parent.asks
    conversation = style == "conversation"
    base = [
        cosine, 1.0 / (1 + rank), float(same), math.log1p(distance), float(same and distance == 1),
        float(same and distance == 2), len(shared) / (1 + len(child.terms)), sum(idf[t] for t in shared) / 10,
        float(bool(parent.values & child.values)), float(parent.speaker == child.speaker), float(asks),
        float(asks and same and distance == 1 and parent.speaker != child.speaker),
        float(child.cause_cue), float(child.refers),
        float(conversation), 0.0 if same else (child.session - parent.session) / 5,
        cosine if conversation else 0.0, 0.0 if same else cosine,
    ]
    kinds = [float(not conversation and parent.kind == p and child.kind == c) for p in KINDS for c in KINDS]
    return base + kinds


def pairs_of(files: Sequence[EvalFile], embed: Embed) -> Pairs:
    rows: list[list[float]] = []
    labelled: list[bool] = []
    groups: list[str] = []
    names: list[str] = []
    labels: Counter = Counter()
    for spec in files:
        turns = turns_of(spec)
        vectors = embed([i.content for i in spec.interactions])
        at = {t.id: t for t in turns}
        deps = {(e.parent, e.child) for e in spec.edges if e.relation != "supersedes"}
        for parent, child in deps:
            labels[_group(spec.style, at[parent], at[child])] += 1
        frequency = Counter(term for t in turns for term in t.terms)
        idf = {term: math.log(len(turns) / n) for term, n in frequency.items()}
        for index in range(1, len(turns)):
            child = turns[index]
            cosines = vectors[:index] @ vectors[index]
            chosen = candidates(turns, cosines, index)
            order = np.argsort(-cosines[chosen], kind="stable")
            ranks = {chosen[position]: rank for rank, position in enumerate(order)}
            for parent_index in chosen:
                parent = turns[parent_index]
                rows.append(pair_features(spec.style, parent, child, float(cosines[parent_index]),
                                          ranks[parent_index], idf))
                labelled.append((parent.id, child.id) in deps)
                groups.append(_group(spec.style, parent, child))
                names.append(spec.name)
    return Pairs(np.array(rows, dtype=float).reshape(-1, len(FEATURES)), np.array(labelled, dtype=bool), groups,
                 names, labels)


GROUPS = tuple(f"{style}, {where}" for style in STYLES for where in ("same session", "across sessions"))


def _group(style: str, parent: Turn, child: Turn) -> str:
    return f"{style}, {'same session' if parent.session == child.session else 'across sessions'}"


def score(probabilities: np.ndarray, pairs: Pairs, threshold: float, group: str | None = None) -> EdgeScores:
    """Pairs at or above the threshold against every labelled dependency (of the group), found by a candidate
    or not; relations are not judged here."""
    chosen = probabilities >= threshold
    if group is not None:
        chosen &= np.array([g == group for g in pairs.groups], dtype=bool)
    total = pairs.labels[group] if group is not None else pairs.total
    return EdgeScores(int((chosen & pairs.labelled).sum()), int(chosen.sum()), total, 0)


def models() -> dict[str, Callable[[], object]]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {
        "logistic regression": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)),
        "gradient-boosted trees": lambda: HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05,
                                                                         random_state=0),
    }


def out_of_fold(make: Callable[[], object], pairs: Pairs) -> np.ndarray:
    """Each tuned file's pairs scored by a model fitted on the other folds' files."""
    from sklearn.model_selection import GroupKFold

    probabilities = np.zeros(len(pairs.labelled))
    for fit, held in GroupKFold(n_splits=FOLDS).split(pairs.features, pairs.labelled, pairs.files):
        model = make()
        model.fit(pairs.features[fit], pairs.labelled[fit])
        probabilities[held] = model.predict_proba(pairs.features[held])[:, 1]
    return probabilities


def chosen_threshold(probabilities: np.ndarray, pairs: Pairs) -> float:
    """The lowest threshold (most recall) at which the tuned files' out-of-fold precision reaches the bar."""
    for threshold in THRESHOLDS:
        if score(probabilities, pairs, threshold).precision >= MIN_PRECISION:
            return threshold
    return THRESHOLDS[-1]


@dataclass(frozen=True)
class ModelResult:
    name: str
    threshold: float
    tuned: EdgeScores  # out of fold
    heldout: EdgeScores
    tuned_groups: dict[str, EdgeScores]  # out of fold
    heldout_groups: dict[str, EdgeScores]
    # For reference: the held-out threshold of most recall with precision >= the bar, and its scores.
    best_heldout: tuple[float, EdgeScores]


def probe(tuned: Sequence[EvalFile], heldout: Sequence[EvalFile],
          embed: Embed) -> tuple[Pairs, Pairs, list[ModelResult]]:
    train, test = pairs_of(tuned, embed), pairs_of(heldout, embed)
    results = []
    for name, make in models().items():
        folded = out_of_fold(make, train)
        threshold = chosen_threshold(folded, train)
        tuned_score = score(folded, train, threshold)
        model = make()
        model.fit(train.features, train.labelled)
        probabilities = model.predict_proba(test.features)[:, 1]
        reaching = [(t, s) for t, s in ((t, score(probabilities, test, t)) for t in THRESHOLDS)
                    if s.precision >= MIN_PRECISION]
        best = max(reaching, key=lambda ts: ts[1].recall) if reaching else (
            THRESHOLDS[-1], score(probabilities, test, THRESHOLDS[-1]))
        results.append(ModelResult(name, threshold, tuned_score, score(probabilities, test, threshold),
                                   {g: score(folded, train, threshold, g) for g in GROUPS},
                                   {g: score(probabilities, test, threshold, g) for g in GROUPS}, best))
    return train, test, results


def coverage(pairs: Pairs) -> str:
    return f"{int(pairs.labelled.sum())} of {pairs.total}"


def markdown(train: Pairs, test: Pairs, results: list[ModelResult], header: str) -> str:
    def ps(s: EdgeScores) -> str:
        return f"{s.precision:.2f} / {s.recall:.2f} ({s.true_positives} of {s.predicted} linked)"

    lines = [
        "# Could a learned linker find the dependencies? (`eval/linker_probe.py`)", "", header, "",
        "Issue 11 asks the inferred edges for recall 0.6 at precision 0.5; the offline rules reach 0.34 on the tuned",
        "files (docs/eval.md) and 0.20 on the held-out ones (docs/eval-heldout.md). Here no person writes a rule:",
        "classifiers are fitted on the tuned files' labelled dependencies (`eval/data`, supersedes left out) over what",
        "an offline pipeline knows of a pair at ingest (the embedder's cosine, shared words and values, distance,",
        "speakers, kinds, cue words), the threshold is the lowest at which the tuned files' out-of-fold precision",
        f"(folds by file) reaches {MIN_PRECISION}, and that threshold is scored on the held-out files",
        "(`eval/heldout`).",
        "Data only: no database, no engine.", "",
        f"Candidates per turn: the {WINDOW} turns before it in its session and the {CROSS_TOP} most similar turns of "
        f"earlier sessions. They hold {coverage(train)} labelled dependencies of the tuned files and {coverage(test)} "
        "of the held-out ones (the rest no candidate reaches); recall below counts all of them.", "",
        "## Precision / recall of the inferred dependencies", "",
        "| model | threshold (chosen on tuned) | tuned, out of fold | held-out | held-out, best threshold with "
        f"precision ≥ {MIN_PRECISION} |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {r.name} | {r.threshold:.2f} | {ps(r.tuned)} | {ps(r.heldout)} | "
              f"{ps(r.best_heldout[1])} at {r.best_heldout[0]:.2f} |" for r in results]
    lines += ["", "## By where the dependency lies (at the chosen threshold)", "",
              "Found of labelled (pairs linked): the tuned files out of fold, then the held-out files.", "",
              "| model | files | " + " | ".join(GROUPS) + " |", "|---|---|" + "---|" * len(GROUPS)]
    for r in results:
        for files, groups in (("tuned", r.tuned_groups), ("held-out", r.heldout_groups)):
            lines.append(f"| {r.name} | {files} | " + " | ".join(f"{s.true_positives} of {s.labelled} ({s.predicted})"
                                                                 for s in groups.values()) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="docs/eval-linker.md")
    args = parser.parse_args(argv)
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextweaver_site.settings.base")
    os.environ.setdefault("CW_EMBEDDER", "minilm")
    django.setup()  # the configured embedder; no database is touched
    from bench.run_all import machine
    from memory.providers import get_embedder

    from .run import commit_described

    embedder = get_embedder()
    when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    header = (f"Run {when} on {machine()}; commit {commit_described()}; embedder **{embedder.space_name}** "
              f"({embedder.dimensions}-d). Regenerate with `python -m eval.linker_probe`.")
    train, test, results = probe(load_files(directory=DATA_DIR), load_files(directory=HELDOUT_DIR),
                                 lambda texts: np.asarray(embedder.embed(texts), dtype=float))
    out = Path(args.out) if Path(args.out).is_absolute() else ROOT / args.out
    out.write_text(markdown(train, test, results, header), encoding="utf-8")
    for r in results:
        print(f"{r.name}: threshold {r.threshold:.2f}; tuned P/R {r.tuned.precision:.2f}/{r.tuned.recall:.2f}; "
              f"held-out P/R {r.heldout.precision:.2f}/{r.heldout.recall:.2f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
