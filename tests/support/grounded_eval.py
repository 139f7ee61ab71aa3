"""The chat's context measured on the grounded set (``grounded_eval_data``), and its selection fitted.

``python -m tests.support.grounded_eval ROOT`` builds the store in ROOT once (chat logs
ingested as the daemon does, the rest through ``add``) and prints both splits' figures;
``--fit`` fits ``Selection`` (``agent.memory.context.select``) on the ``fit`` split and prints
it with that split's figures. The figures reported are the ``report`` split's, never fitted on.

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
from dataclasses import dataclass
from pathlib import Path

from agent.memory.context import ranked, select
from agent.memory.search import Hit, load
from agent.memory.service import MemoryService
from state.memory.embedder import Selection
from state.memory.normalize import search_terms
from tests.support.grounded_eval_data import GroundedSet, build
from tests.support.memory_eval import NOW, open_service
from tests.support.memory_eval import load as load_set

#: What the fit may hand: the issue's caps (20% unrelated, 5 items a question) with a margin
#: for questions it has not seen.
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
            f"empty {self.empty}; search: answer in top 5 {self.top5 / max(1, self.answerable):.2f}, "
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


def _labelled(
    svc: MemoryService, data: GroundedSet, split: str
) -> list[tuple[list[Hit], list[str]]]:
    """Each question's candidates with their labels: ``answer``, ``related``, ``unrelated``."""
    texts, answers, _asked = _cases(data)
    out = []
    for q in data.split(split):
        hits = load(svc.store, ranked(svc.store, q.query, now=NOW), search_terms(q.query))
        labels = []
        for h in hits:
            content = h.record.content
            if q.expected and content == answers[q.expected]:
                labels.append("answer")
            elif q.expected and related(content, texts[q.topic]):
                labels.append("related")
            else:
                labels.append("unrelated")
        out.append((hits, labels))
    return out


def fit(svc: MemoryService, data: GroundedSet, split: str = "fit") -> Selection:
    """The selection with the best recall of the answer whose unrelated share and items a
    question stay within ``FIT_UNRELATED`` and ``FIT_ITEMS`` on ``split``; ties go to fewer
    unrelated items, then fewer items."""
    merge = svc.store.embedder.calibration.merge
    labelled = _labelled(svc, data, split)
    answerable = sum(bool(q.expected) for q in data.split(split)) or 1
    best: tuple[float, float, float] | None = None
    chosen = Selection(standout=0.0, gap=0.0, most=1)
    standouts = [round(0.04 * i, 2) for i in range(26)]
    gaps = [round(0.02 * i, 2) for i in range(51)]
    for standout, gap, most in itertools.product(standouts, gaps, range(1, 6)):
        rule = Selection(standout=standout, gap=gap, most=most)
        found = items = unrelated = 0
        for hits, labels in labelled:
            picked = {id(h) for h in select(hits, rule, merge)}
            kept = [lab for h, lab in zip(hits, labels, strict=True) if id(h) in picked]
            found += "answer" in kept
            items += len(kept)
            unrelated += kept.count("unrelated")
        share = unrelated / max(1, items)
        if share > FIT_UNRELATED or items / len(labelled) > FIT_ITEMS:
            continue
        score = (found / answerable, -share, -items / len(labelled))
        if best is None or score > best:
            best, chosen = score, rule
    print(f"fitted on {split}: {chosen} (answer {best[0] if best else 0:.2f})")
    return chosen


def build_store(root: Path) -> tuple[MemoryService, GroundedSet]:
    """The set loaded into ROOT (once: a later call reopens it)."""
    data = build()
    svc = open_service(root)
    if not (root / "loaded").exists():
        load_set(svc, root, data)  # type: ignore[arg-type]  # GroundedSet has EvalSet's fields
        (root / "loaded").write_text("yes\n")
    return svc, data


def main() -> None:
    root = Path(sys.argv[1])
    svc, data = build_store(root)
    try:
        print(f"{svc.count()} memories stored, {len(data.queries)} questions")
        if "--fit" in sys.argv:
            rule = fit(svc, data)
            # This process only, to print the fitted rule's figures (the calibration is frozen).
            object.__setattr__(svc.store.embedder.calibration, "selection", rule)
        for split in ("fit", "report"):
            print(evaluate(svc, data, split).line(split))
    finally:
        svc.close()


if __name__ == "__main__":
    main()
