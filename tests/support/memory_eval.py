"""Load the synthetic set (``memory_eval_data``) into a real MemoryService and measure it.

Memories marked ``log`` are written as chat logs (contract §6) and ingested the way the daemon
does; the others go through ``add``, as ``alma-ctl memory add`` would. Measured per split:

- recall@1 and recall@5 of ``search`` (the target among the first one or five);
- of ``context``: how often the target is in it, how many non-principle items it holds, and
  the share of those *unrelated* to the question: items that are none of the texts of the
  question's case (target or look-alikes). A daily summary that quotes one of them counts as
  related.

The unrelated share is pooled over a split: (non-principle items, layer other than L-inf, that
are not a text of the question's case) / (all non-principle items), summed over its questions;
an empty context adds to neither side. It is the issue's "memories in `context` unrelated to
the message", read strictly: a near-topic memory of another case (the backup's cron hour for
"why does the nightly backup fail?") counts as unrelated.

Both ``search`` and ``context`` are called with ``count_use=False``: the evaluation changes
nothing in the store, so its figures do not depend on the order of the questions nor on how
often the store was evaluated before.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent.memory.service import MemoryService
from policies.layout import RootLayout
from state.memory.embedder import Ranking
from tests.support.memory_eval_data import EvalMemory, EvalQuery, EvalSet, build

#: The eval's "today": every log day is before it, so every log is final and fully ingested.
NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def open_service(root: Path) -> MemoryService:
    return MemoryService(RootLayout(root), clock=lambda: NOW, settle_seconds=0.0)


def write_logs(root: Path, memories: list[EvalMemory]) -> None:
    by_day: dict[str, list[EvalMemory]] = defaultdict(list)
    for m in memories:
        if m.via == "log":
            by_day[m.day].append(m)
    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for day, items in sorted(by_day.items()):
        parts = [f"# {day}\n"]
        for n, m in enumerate(items):
            hh, mm = divmod(9 * 60 + 7 * n, 60)
            parts.append(f"## {hh % 24:02d}:{mm:02d}:00 · usuario\n{m.content}\n")
            if n % 3 == 0:
                parts.append(f"## {hh % 24:02d}:{mm:02d}:05 · alma\nEntendido, lo apunto.\n")
        (logs / f"{day}.md").write_text("\n".join(parts), encoding="utf-8")


def load(svc: MemoryService, root: Path, data: EvalSet) -> None:
    write_logs(root, data.memories)
    svc.rescan_logs()
    for m in data.memories:
        if m.via == "add":
            svc.add(m.content)


@dataclass
class SplitFigures:
    queries: int = 0
    top1: int = 0
    top5: int = 0
    ctx_target: int = 0
    ctx_items: int = 0
    ctx_unrelated: int = 0
    ctx_empty: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def recall1(self) -> float:
        return self.top1 / max(1, self.queries)

    @property
    def recall5(self) -> float:
        return self.top5 / max(1, self.queries)

    @property
    def unrelated_share(self) -> float:
        return self.ctx_unrelated / max(1, self.ctx_items)

    @property
    def context_recall(self) -> float:
        return self.ctx_target / max(1, self.queries)

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.queries} questions, recall@1 {self.recall1:.2f}, "
            f"recall@5 {self.recall5:.2f}; context: answer present {self.context_recall:.2f}, "
            f"{self.ctx_items / max(1, self.queries):.1f} items a question, "
            f"unrelated {self.unrelated_share:.2f} ({self.ctx_unrelated} of {self.ctx_items}), "
            f"empty {self.ctx_empty}"
        )


def evaluate(svc: MemoryService, data: EvalSet) -> dict[str, SplitFigures]:
    by_text = {m.content: m for m in data.memories}
    case_texts: dict[str, list[str]] = defaultdict(list)
    for m in data.memories:
        case_texts[m.topic].append(m.content)
    out: dict[str, SplitFigures] = defaultdict(SplitFigures)
    for q in data.queries:
        fig = out[q.split]
        fig.queries += 1
        target = next(m.content for m in data.memories if m.id == q.expected)
        top = [str(r["content"]) for r in svc.search(q.query, limit=5, count_use=False)]
        fig.top1 += bool(top) and top[0] == target
        fig.top5 += target in top
        if target not in top[:1]:
            first = by_text.get(top[0]) if top else None
            fig.misses.append(f"{q.query!r} -> {first.id if first else top[:1]}")
        ctx = svc.context(q.query, count_use=False)
        items = [i for i in ctx["items"] if i["layer"] != "L-inf"]
        fig.ctx_items += len(items)
        fig.ctx_empty += not items
        fig.ctx_target += any(i["content"] == target for i in items)
        fig.ctx_unrelated += sum(not _related(i, case_texts[q.topic]) for i in items)
    return dict(out)


def _related(item: dict[str, Any], texts: list[str]) -> bool:
    content = str(item["content"])
    return any(t == content or t in content for t in texts)


def build_and_evaluate(root: Path) -> tuple[dict[str, SplitFigures], EvalSet, int]:
    data = build()
    svc = open_service(root)
    try:
        load(svc, root, data)
        stored = svc.count()
        return evaluate(svc, data), data, stored
    finally:
        svc.close()


__all__ = ["EvalQuery", "SplitFigures", "build_and_evaluate", "evaluate", "load", "open_service"]


def _logistic(x: Any, y: Any, l2: float, weight: Any = None) -> Any:
    """L2-regularized logistic regression by Newton steps on standardized columns; returns
    the weights for the raw columns, the last one being the bias when ``x`` ends in ones.
    ``weight``: each row's weight (mean 1), as if the row were repeated that often."""
    import numpy as np

    s = np.ones(len(y)) if weight is None else np.asarray(weight)
    mean = np.average(x, axis=0, weights=s)
    std = np.sqrt(np.average((x - mean) ** 2, axis=0, weights=s)) + 1e-9
    z = x / std
    w = np.zeros(z.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(z @ w)))
        grad = z.T @ (s * (p - y)) + l2 * w
        hess = (z.T * (s * p * (1 - p))) @ z + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w / std


def _signed_logistic(x: Any, y: Any, l2: float, signs: tuple[int, ...], weight: Any = None) -> Any:
    """``_logistic``, with each feature the fit weighs against its meaning (``signs``: +1, -1,
    or 0 for either) left out, the worst first, and the fit repeated."""
    import numpy as np

    keep = np.ones(x.shape[1])
    while True:
        w = _logistic(x * keep, y, l2, weight) * keep
        wrong = (w * np.asarray(signs) < 0) & (keep > 0)
        if not wrong.any():
            return w
        keep[np.argmax(wrong * np.abs(w))] = 0.0


#: A labelled set's fitting split for the rank model: the store, and each question with its
#: answer's text.
Source = tuple[MemoryService, list[tuple[str, str]]]


def tuning(svc: MemoryService, data: EvalSet, split: str = "tune") -> Source:
    """The questions of ``split`` that have an answer stored, with its text."""
    target = {m.id: m.content for m in data.memories}
    return svc, [
        (q.query, target[q.expected]) for q in data.queries if q.split == split and q.expected
    ]


def calibrate(sources: list[Source]) -> Ranking:
    """Fit the search's rank model on the fitting splits of the labelled sets: pairwise
    logistic regression (each question's answer against every other candidate it could be
    ranked below, on the differences of ``search.rank_features``). Each set weighs the same
    whatever its size: the synthetic set's questions paraphrase while its look-alikes share
    their words, the grounded set's look-alikes are the same subject's other memories, and a
    fit on one alone reads that one's sample. The person's questions and the principles are
    left out of the pairs: the search puts the one after every stated memory, the context
    always holds the other. The context's selection is fitted afterwards on the grounded set
    (tests.support.grounded_eval ``--fit``)."""
    import numpy as np

    from agent.memory.search import RANK_SIGNS, candidates, rank_features
    from state.memory.normalize import search_terms

    diffs: list[Any] = []
    labels: list[float] = []
    weight: list[float] = []
    for svc, questions in sources:
        rows = len(diffs)
        for query, answer_text in questions:
            hits = sorted(candidates(svc.store, query, now=NOW), key=lambda h: -h.score)
            x = rank_features(hits, len(search_terms(query)))
            answer = [i for i, h in enumerate(hits) if h.record.content == answer_text]
            if not answer:
                continue
            a = answer[0]
            for j, hit in enumerate(hits):
                if j != a and hit.facts.kind != "question" and hit.facts.layer != "L-inf":
                    diffs += [x[a] - x[j], x[j] - x[a]]
                    labels += [1.0, 0.0]
        weight += [1.0 / max(1, len(diffs) - rows)] * (len(diffs) - rows)
    share = np.asarray(weight) * len(weight) / sum(weight)  # mean 1: l2 keeps its scale
    fitted = _signed_logistic(np.asarray(diffs), np.asarray(labels), 1.0, RANK_SIGNS, share)
    return Ranking(weights=tuple(round(float(v), 3) for v in fitted))


def main() -> None:
    """``python -m tests.support.memory_eval ROOT``: build the set in ROOT once (kept for the
    next run), then print the figures of each split. ``--calibrate GROUNDED_ROOT`` fits the
    rank model on this set's tuning half and the grounded set's fit split (a store built by
    ``python -m tests.support.grounded_eval GROUNDED_ROOT``) and prints it."""
    import sys

    root = Path(sys.argv[1])
    data = build()
    svc = open_service(root)
    try:
        if not (root / "loaded").exists():
            load(svc, root, data)
            (root / "loaded").write_text("yes\n")
        print(f"{svc.count()} memories stored")
        if "--calibrate" in sys.argv:
            print(_calibrate_both(svc, data, sys.argv[sys.argv.index("--calibrate") + 1 :]))
            return
        figures = evaluate(svc, data)
        for name in ("tune", "heldout", "unseen"):
            print(figures[name].line(name))
            # The unseen split's misses stay unread while the ranking is tuned.
            if "-v" in sys.argv and (name != "unseen" or "--show-unseen" in sys.argv):
                for miss in figures[name].misses:
                    print("   miss@1", miss)
    finally:
        svc.close()


def _calibrate_both(svc: MemoryService, data: EvalSet, rest: list[str]) -> Ranking:
    from tests.support.grounded_eval import build_store

    if not rest:
        raise SystemExit("--calibrate needs the grounded set's store: --calibrate GROUNDED_ROOT")
    grounded, gdata = build_store(Path(rest[0]))
    try:
        return calibrate([tuning(svc, data), tuning(grounded, gdata, "fit")])  # type: ignore[arg-type]  # GroundedSet has EvalSet's fields
    finally:
        grounded.close()


if __name__ == "__main__":
    main()
