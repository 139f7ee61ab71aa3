"""The chat's context measured on the grounded set (``grounded_eval_data``), and its selection fitted.

``python -m tests.support.grounded_eval ROOT`` builds the store in ROOT once (chat logs
ingested as the daemon does, the rest through ``add``) and prints both splits' figures;
``--fit SYNTHETIC_ROOT [--heldout HELDOUT_ROOT] [--bound B]`` fits ``Selection``'s answer
model (``agent.memory.context.select``) on the fitting sets (``fitting_sets``) and prints what
each bound gives on them; ``--detail HELDOUT_ROOT...`` prints what each weight of ``lacks``
and each ``share`` give on the development sets (``detail``). The figures reported are the
``report`` split's, never fitted on.

For each question, of the context's non-principle items (through ``MemoryService.context``,
read-only): whether the answer is among them, how many there are, and how many are
*unrelated*: neither a memory of the question's case (its answer or a near-topic memory about
the same subject) nor a daily summary quoting one. A question with no answer stored counts
every item it gets as unrelated. The unrelated share is pooled over the split. Search: the
answer in the first five, and, where the person had asked about it before, the answer ranked
above that earlier question.
"""

from __future__ import annotations

import itertools
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agent.memory.context import CANDIDATES, ranked, select
from agent.memory.search import Hit, answer_chances, answer_features
from agent.memory.service import MemoryService
from state.memory.embedder import Selection
from state.memory.normalize import search_terms
from tests.support.answer_dev_data import MENTIONED_IN_SYNTHETIC, TRAPS, UNANSWERABLE
from tests.support.grounded_eval_data import GroundedSet, build
from tests.support.memory_eval import NOW, _logistic, open_service
from tests.support.memory_eval import load as load_set
from tests.support.memory_eval_data import EvalSet

#: What the frozen selection may hand on the fit split: the issue's caps (20% unrelated, 5
#: items a question) with a margin for questions it has not seen.
FIT_UNRELATED = 0.18
FIT_ITEMS = 4.0


@dataclass
class Figures:
    questions: int = 0
    answerable: int = 0
    in_context: int = 0
    items: int = 0
    unrelated: int = 0
    empty: int = 0
    top5: int = 0
    asked: int = 0  # questions whose case holds an earlier question of the person
    fact_first: int = 0  # ... where search never ranks that question above the answer
    nothing: int = 0  # questions with no answer stored that get no memory and "answered" false

    @property
    def unanswered(self) -> int:
        return self.questions - self.answerable

    @property
    def nothing_share(self) -> float:
        return self.nothing / max(1, self.unanswered)

    @property
    def recall(self) -> float:
        return self.in_context / max(1, self.answerable)

    @property
    def unrelated_share(self) -> float:
        return self.unrelated / max(1, self.items)

    @property
    def per_question(self) -> float:
        return self.items / max(1, self.questions)

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.questions} questions ({self.answerable} with an answer stored): "
            f"answer in context {self.recall:.3f} ({self.in_context}), "
            f"unrelated {self.unrelated_share:.3f} "
            f"({self.unrelated} of {self.items}), {self.per_question:.2f} memories a question, "
            f"empty {self.empty}, nothing handed {self.nothing}/{self.unanswered} with no answer "
            f"stored; search: answer in top 5 {self.top5 / max(1, self.answerable):.2f}, "
            f"earlier question never above the answer {self.fact_first}/{self.asked}"
        )


def _cases(data: GroundedSet) -> tuple[dict[str, list[str]], dict[str, str], dict[str, str]]:
    """Each case's memory texts, each answer's text by id, each case's earlier question."""
    texts: dict[str, list[str]] = defaultdict(list)
    asked: dict[str, str] = {}
    for m in data.memories:
        if m.id.endswith("#q"):
            asked[m.topic] = m.content
        else:
            texts[m.topic].append(m.content)
    answers = {m.id: m.content for m in data.memories}
    return texts, answers, asked


def related(content: str, texts: list[str]) -> bool:
    return any(t == content or t in content for t in texts)  # a daily summary quotes them


def evaluate(svc: MemoryService, data: GroundedSet, split: str) -> Figures:
    texts, answers, asked = _cases(data)
    fig = Figures()
    for q in data.split(split):
        fig.questions += 1
        ctx = svc.context(q.query, count_use=False)
        items = [str(i["content"]) for i in ctx["items"] if i["layer"] != "L-inf"]
        fig.items += len(items)
        fig.empty += not items
        if not q.expected:
            fig.unrelated += len(items)
            fig.nothing += not items and not ctx["answered"]
            continue
        fig.answerable += 1
        answer = answers[q.expected]
        fig.in_context += answer in items
        fig.unrelated += sum(not related(i, texts[q.topic]) for i in items)
        found = [str(r["content"]) for r in svc.search(q.query, limit=10, count_use=False)]
        fig.top5 += answer in found[:5]
        if q.topic in asked:
            fig.asked += 1
            earlier = asked[q.topic]
            fig.fact_first += earlier not in found or (
                answer in found and found.index(answer) < found.index(earlier)
            )
    return fig


#: One question for the fit: its text, its answer's text ("" when nothing answers it) and the
#: texts of its case (handing those is not handing something unrelated).
Asked = tuple[str, str, list[str]]
#: Its candidates (``context.ranked``, principles aside, the best ``CANDIDATES``), their
#: labels (``answer``, ``related`` or ``unrelated``), whether something answers it and how
#: many search terms it has.
Labelled = tuple[list[Hit], list[str], bool, int]


def grounded_questions(data: GroundedSet, split: str) -> list[Asked]:
    texts, answers, _asked = _cases(data)
    return [
        (q.query, answers[q.expected] if q.expected else "", texts[q.topic])
        for q in data.split(split)
    ]


def synthetic_questions(data: EvalSet, split: str) -> list[Asked]:
    texts: dict[str, list[str]] = defaultdict(list)
    for m in data.memories:
        texts[m.topic].append(m.content)
    target = {m.id: m.content for m in data.memories}
    return [(q.query, target[q.expected], texts[q.topic]) for q in data.queries if q.split == split]


def nothing_answers(questions: tuple[str, ...]) -> list[Asked]:
    return [(q, "", []) for q in questions]


def labelled(svc: MemoryService, questions: list[Asked]) -> list[Labelled]:
    out = []
    for query, answer, texts in questions:
        every = ranked(svc.store, query, now=NOW)
        hits = [h for h in every if h.facts.layer != "L-inf"][:CANDIDATES]
        # Read apart from the hits: ``load`` would set their ``matched`` from the text, and
        # the answer model reads it as the search set it (from the lexicon).
        content = {r.id: r.content for r in svc.store.records([h.id for h in hits])}
        labels = []
        for h in hits:
            text = content.get(h.id, "")
            if answer and text == answer:
                labels.append("answer")
            elif answer and related(text, texts):
                labels.append("related")
            else:
                labels.append("unrelated")
        out.append((every, labels, bool(answer), len(search_terms(query))))
    return out


@dataclass
class Outcome:
    answered: int = 0
    found: int = 0
    unanswered: int = 0
    empty: int = 0
    items: int = 0
    unrelated: int = 0

    def line(self) -> str:
        return (
            f"answer in context {self.found}/{self.answered}, "
            f"nothing handed {self.empty}/{self.unanswered}, unrelated {self.unrelated}/{self.items}"
        )


def outcome(sets: list[Labelled], rule: Selection, merge: float) -> Outcome:
    out = Outcome()
    for every, labels, answerable, _terms in sets:
        memories = [h for h in every if h.facts.layer != "L-inf"][:CANDIDATES]
        picked = {id(h) for h in select(every, rule, merge)}
        kept = [lab for h, lab in zip(memories, labels, strict=True) if id(h) in picked]
        out.items += len(kept)
        out.unrelated += kept.count("unrelated")
        if answerable:
            out.answered += 1
            out.found += "answer" in kept
        else:
            out.unanswered += 1
            out.empty += not kept
    return out


#: Of an answered message, the candidates whose chance reaches ``FLOOR`` enter, at most ``MOST``.
FLOOR = 0.01
MOST = 3


def fit(
    sets: dict[str, list[Labelled]],
    merge: float,
    shown: dict[str, list[Labelled]],
    bound: float,
) -> Selection:
    """The answer model, and what each bound gives. The model: logistic regression of "this
    candidate is the answer" on ``search.ANSWER_FEATURES``, each set weighing the same
    whatever its size. The bound is the person's trade, not a fit: the table printed shows,
    for each bound, every set's answers in context, questions nothing answers that get
    nothing, and unrelated items; the one returned is ``bound`` (``floor`` and ``most`` as
    frozen: 0.01 and 3). ``shown`` (the traps: the subject stored, the detail asked not) is
    never fitted on: on them the answer model cannot tell the subject's other memories from
    an answer (docs/memory.md), and what it hands there is about what was asked."""
    rows: list[Any] = []
    labels: list[float] = []
    weight: list[float] = []
    for name, questions in sets.items():
        n = len(rows)
        for every, labs, _answerable, n_terms in questions:
            memories = [h for h in every if h.facts.layer != "L-inf"][:CANDIDATES]
            x = answer_features(every, n_terms)
            at = {id(h): i for i, h in enumerate(every)}
            for h, lab in zip(memories, labs, strict=True):
                rows.append(x[at[id(h)]])
                labels.append(float(lab == "answer"))
        weight += [1.0 / max(1, len(rows) - n)] * (len(rows) - n)
        print(f"{name}: {len(questions)} questions, {len(rows) - n} candidates")
    share = np.asarray(weight) * len(weight) / sum(weight)
    x = np.column_stack([np.asarray(rows), np.ones(len(rows))])
    w = _logistic(x, np.asarray(labels), 1.0, share)
    weights = tuple(round(float(v), 3) for v in w[:-1])
    intercept = round(float(w[-1]), 3)
    model = Selection(weights, intercept, bound=1.0, floor=1.0, most=1)
    for every, _labs, _answerable, n_terms in itertools.chain(*sets.values(), *shown.values()):
        answer_chances(every, model, n_terms)
    for b in [round(0.02 * i, 2) for i in range(5, 26)]:
        rule = Selection(weights, intercept, bound=b, floor=FLOOR, most=MOST)
        print(f"bound {b}:")
        for name, questions in {**sets, **shown}.items():
            print(f"  {name}: {outcome(questions, rule, merge).line()}")
    chosen = Selection(weights, intercept, bound=bound, floor=FLOOR, most=MOST)
    print(f"fitted: {chosen}")
    return chosen


#: What ``--detail`` tries: the weights of ``lacks`` and ``unnamed``, the share of the best
#: chance.
DETAIL_WEIGHTS = (0.0, -2.0, -4.0, -8.0)
DETAIL_SHARES = (0.0, 0.05, 0.1)


def detail(sets: dict[str, list[Labelled]], rule: Selection, merge: float) -> None:
    """What each weight of ``lacks`` and of ``unnamed`` and each ``share`` give on ``sets``,
    the other weights, the bound, the floor and ``most`` as ``rule`` has them: the settings a
    fit of "this candidate is the answer" weighs badly, since the subject's other memories,
    which hold the words asked and often lack the detail, are labelled as not the answer
    whether they help or not. The setting kept keeps the grounded fit split's answers and
    empties the most questions nothing answers across the sets, each set read alone."""
    for lacking in DETAIL_WEIGHTS:
        for naming in DETAIL_WEIGHTS:
            for share in DETAIL_SHARES:
                weights = (*rule.weights[:-2], lacking, naming)
                tried = replace(rule, weights=weights, share=share)
                print(f"lacks {lacking}, unnamed {naming}, share {share}:")
                for name, questions in sets.items():
                    for every, _labs, _answerable, n_terms in questions:
                        answer_chances(every, tried, n_terms)
                    print(f"  {name}: {outcome(questions, tried, merge).line()}")


def detail_sets(
    svc: MemoryService, data: GroundedSet, heldouts: list[Path]
) -> dict[str, list[Labelled]]:
    """The development sets ``--detail`` reads: the grounded fit split with its questions
    nothing answers and its traps, and each held-out store of ``heldouts`` (built by
    ``python -m tests.support.heldout_eval DIR [SET]``; its set read from its marker file)
    whole, traps included."""
    from tests.support.heldout_eval import DATA, heldout_questions

    sets = {
        "grounded fit": labelled(svc, grounded_questions(data, "fit")),
        "grounded, nothing stored": labelled(svc, nothing_answers(UNANSWERABLE)),
        "grounded, traps": labelled(svc, nothing_answers(TRAPS)),
    }
    for root in heldouts:
        (marker,) = root.glob("*-loaded")
        name = marker.name.removesuffix("-loaded")
        asked, absent, traps = heldout_questions("all", DATA / name)
        other = open_service(root)
        try:
            sets[name] = labelled(other, asked + absent + traps)
        finally:
            other.close()
    return sets


def build_store(root: Path) -> tuple[MemoryService, GroundedSet]:
    """The set loaded into ROOT (once: a later call reopens it)."""
    data = build()
    svc = open_service(root)
    if not (root / "loaded").exists():
        load_set(svc, root, data)  # type: ignore[arg-type]  # GroundedSet has EvalSet's fields
        (root / "loaded").write_text("yes\n")
    return svc, data


def fitting_sets(
    svc: MemoryService, data: GroundedSet, synthetic: Path, heldout: Path | None = None
) -> tuple[dict[str, list[Labelled]], dict[str, list[Labelled]]]:
    """What the answer model is fitted on: the grounded set's fit split and the unanswerable
    questions of ``answer_dev_data`` asked of its store, the synthetic set's tuning half and
    the unanswerable questions whose subject it does not mention asked of its store
    (``synthetic``: built by ``python -m tests.support.memory_eval DIR``), and with
    ``heldout`` (a store built by ``python -m tests.support.heldout_eval DIR``) the fitting
    half of tests/data/heldout (``heldout_eval.fitting_half``), its traps aside; and the traps,
    shown beside the fit, with the held-out set's checking half."""
    from tests.support.heldout_eval import heldout_questions
    from tests.support.memory_eval_data import build as build_synthetic

    none = tuple(q for q in UNANSWERABLE if q not in MENTIONED_IN_SYNTHETIC)
    other = open_service(synthetic)
    try:
        fitted = {
            "grounded fit": labelled(svc, grounded_questions(data, "fit")),
            "grounded, nothing stored": labelled(svc, nothing_answers(UNANSWERABLE)),
            "synthetic tune": labelled(other, synthetic_questions(build_synthetic(), "tune")),
            "synthetic, nothing stored": labelled(other, nothing_answers(none)),
        }
        shown = {
            "grounded, traps": labelled(svc, nothing_answers(TRAPS)),
            "synthetic, traps": labelled(other, nothing_answers(tuple(MENTIONED_IN_SYNTHETIC))),
        }
    finally:
        other.close()
    if heldout is not None:
        third = open_service(heldout)
        try:
            for half in ("fit", "check"):
                asked, absent, traps = heldout_questions(half)
                into = fitted if half == "fit" else shown
                into[f"held-out {half} half"] = labelled(third, asked + absent)
                shown[f"held-out {half} half, traps"] = labelled(third, traps)
        finally:
            third.close()
    return fitted, shown


def main() -> None:
    root = Path(sys.argv[1])
    svc, data = build_store(root)
    try:
        print(f"{svc.count()} memories stored, {len(data.queries)} questions")
        if "--detail" in sys.argv:
            heldouts = [Path(p) for p in sys.argv[sys.argv.index("--detail") + 1 :]]
            cal = svc.store.embedder.calibration
            detail(detail_sets(svc, data, heldouts), cal.selection, cal.merge)
            return
        if "--fit" in sys.argv:
            synthetic = Path(sys.argv[sys.argv.index("--fit") + 1])
            heldout = (
                Path(sys.argv[sys.argv.index("--heldout") + 1]) if "--heldout" in sys.argv else None
            )
            cal = svc.store.embedder.calibration
            bound = (
                float(sys.argv[sys.argv.index("--bound") + 1])
                if "--bound" in sys.argv
                else cal.selection.bound
            )
            fitted, shown = fitting_sets(svc, data, synthetic, heldout)
            rule = fit(fitted, cal.merge, shown, bound)
            # This process only, to print the fitted rule's figures (the calibration is frozen).
            object.__setattr__(cal, "selection", rule)
        for split in ("fit", "report"):
            print(evaluate(svc, data, split).line(split))
    finally:
        svc.close()


if __name__ == "__main__":
    main()
