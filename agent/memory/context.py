"""The layered context for a prompt, within a token budget.

- L-inf, always: every paragraph or bullet of ``system/principles.md`` and every memory of
  type ``principle``. Never cut: if they alone pass the budget they are all still given
  (and ``over_budget`` says so), because silently dropping a rule the person set is worse.
- L1 (distilled: what the person added, facts, daily summaries) and L0 (raw log paragraphs):
  the hybrid search's best ``CANDIDATES`` (``agent.memory.search``), each given a probability
  of being relevant to this message by ``relevance``: a logistic model over features that
  compare a candidate with the best ones (its cosine and its gap to the best cosine, its rank
  score's gap to the best, the share of the question's words it holds, its lexical rank),
  fitted on labelled questions (the tuning half of tests/support/memory_eval_data.py; the
  coefficients live with the embedder's calibration, whose cosines they assume). Only
  candidates at or above the calibrated threshold enter: an empty "Lo que sé" is better than
  a wrong one, since a small model follows whatever text it is given.
- A candidate nearly identical to one already chosen (cosine at or above the embedder's
  ``merge`` mark) does not take a second place.

Items are added best first until the budget (tokens ~ characters / 4) is used. Each says why
it is there: its relevance, cosine and the words of the message it holds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from actions.scan import read_file
from actions.tree import Tree
from agent.memory.search import Hit, candidates, embed_soon, load
from state.memory import MemoryRecord, MemoryStore
from state.memory.embedder import Relevance
from state.memory.normalize import approx_tokens, search_terms

CANDIDATES = 12
MAX_ITEMS = 10
#: What is read of system/principles.md: a person's rules, never cut by the budget, are a
#: page or two; a file larger than this is read up to here.
MAX_PRINCIPLES_BYTES = 64 * 1024
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADERS = {"L-inf": "Principios (siempre):", "L1": "Lo que sé:", "L0": "De los registros:"}


@dataclass
class Item:
    layer: str
    source: str
    content: str
    id: str = ""
    score: float | None = None
    memory_type: str = "principle"
    tokens: int = 0
    relevance: float | None = None
    why: dict[str, Any] | None = None

    def line(self) -> str:
        return f"- {' '.join(self.content.split())}  [{self.source}]"

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "layer": self.layer,
            "source": self.source,
            "content": self.content,
            "id": self.id,
            "memory_type": self.memory_type,
            "tokens": self.tokens,
        }
        if self.score is not None:
            out["score"] = round(self.score, 4)
        if self.relevance is not None:
            out["relevance"] = round(self.relevance, 4)
        if self.why is not None:
            out["why"] = self.why
        return out


def read_principles(path: Path, rel: str = "system/principles.md") -> list[Item]:
    """Each bullet, or each paragraph that is not a heading, with its line. Read the one safe
    way (at every chat message): a link, a FIFO or a folder there gives none, and at most
    :data:`MAX_PRINCIPLES_BYTES` are read."""
    try:
        with Tree(path.parent) as tree:
            read = read_file(tree, path.name, limit=MAX_PRINCIPLES_BYTES)
    except OSError:  # no system/ folder
        return []
    if read is None:
        return []
    text = _COMMENT.sub("", read.data.decode("utf-8", errors="replace"))
    items: list[Item] = []
    current: list[str] = []
    start = 0

    def flush() -> None:
        if current:
            items.append(Item("L-inf", f"{rel}:{start}", " ".join(current)))
            current.clear()

    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or _HEADING.match(line):
            flush()
        elif _BULLET.match(line):
            flush()
            start = lineno
            current.append(_BULLET.sub("", line).strip())
        else:
            if not current:
                start = lineno
            current.append(line.strip())
    flush()
    return items


@dataclass
class Context:
    items: list[Item] = field(default_factory=list)
    l0_searched: bool = False

    def text(self) -> str:
        out: list[str] = []
        for layer in ("L-inf", "L1", "L0"):
            lines = [i.line() for i in self.items if i.layer == layer]
            if lines:
                out.append(_HEADERS[layer])
                out.extend(lines)
                out.append("")
        return "\n".join(out).strip() + ("\n" if out else "")


def _memory_item(rec: MemoryRecord, hit: Hit | None = None, relevance: float = 0.0) -> Item:
    item = Item(
        layer=rec.layer,
        source=rec.source or rec.kind,
        content=rec.content,
        id=rec.id,
        score=hit.chance if hit else None,
        memory_type=rec.memory_type,
    )
    if hit is not None:
        item.relevance = relevance
        item.why = hit.why() | {"relevance": round(relevance, 4)}
    item.tokens = approx_tokens(item.line())
    return item


#: The features' names, in the order of ``Relevance.weights``.
FEATURES = ("cosine", "gap", "fused_gap", "matched_share", "lexical", "position")
#: The direction each feature may push relevance: a fit that gives one the other sign is
#: reading a correlation of its sample (a farther candidate is never more relevant), so the
#: calibration leaves that feature out.
SIGNS = (1, -1, -1, 1, 1, -1)


def features(hits: list[Hit], n_terms: int) -> npt.NDArray[np.float64]:
    """One row per candidate (best fused first), each compared with the best candidates."""
    if not hits:
        return np.zeros((0, len(FEATURES)))
    best_cos = max(h.score for h in hits)
    best_fused = max(h.fused for h in hits)
    rows = [
        [
            h.score,
            best_cos - h.score,
            best_fused - h.fused,
            len(h.matched) / n_terms if n_terms else 0.0,
            1.0 / h.lexical_rank if h.lexical_rank else 0.0,
            math.log(pos),
        ]
        for pos, h in enumerate(hits, start=1)
    ]
    return np.asarray(rows, dtype=np.float64)


def relevance(hits: list[Hit], n_terms: int, model: Relevance) -> list[float]:
    """The probability that each candidate is relevant to the message."""
    x = features(hits, n_terms)
    if not len(x):
        return []
    z = x @ np.asarray(model.weights) + model.bias
    return [float(p) for p in 1.0 / (1.0 + np.exp(-z))]


def may_pass(hits: list[Hit], n_terms: int, model: Relevance) -> list[bool]:
    """Whether each candidate could reach the threshold, holding the share of the message's
    words the model favours most: the share needs its document, read only for those that can
    (usually one or two of the ``CANDIDATES``)."""
    x = features(hits, n_terms)
    if not len(x):
        return []
    col = FEATURES.index("matched_share")
    if n_terms:  # with no words, every share is 0
        x[:, col] = 1.0 if model.weights[col] > 0 else 0.0
    z = x @ np.asarray(model.weights) + model.bias
    return [bool(p >= model.threshold) for p in 1.0 / (1.0 + np.exp(-z))]


def build_context(
    store: MemoryStore,
    principles_file: Path,
    prompt: str,
    budget_tokens: int,
    *,
    now: datetime | None = None,
) -> tuple[Context, bool]:
    """The context and whether L-inf alone went over the budget."""
    cal = store.embedder.calibration
    embedding = embed_soon(store, prompt)  # the principles need no vector
    ctx = Context()
    for item in read_principles(principles_file):
        item.tokens = approx_tokens(item.line())
        ctx.items.append(item)
    principles = sorted(store.layer("L-inf"), key=lambda r: (-r.importance, r.created_at))
    ctx.items.extend(_memory_item(r) for r in principles)
    used = sum(i.tokens for i in ctx.items)
    over = used > budget_tokens

    # Unfiltered (a where on layer slows Chroma's search); principles are in already.
    found = [
        h
        for h in candidates(store, prompt, now=now, embedding=embedding, records=False)
        if h.facts.layer != "L-inf"
    ]
    hits = found[:CANDIDATES]
    ctx.l0_searched = any(h.facts.layer == "L0" for h in hits)
    terms = search_terms(prompt)
    n_terms = len(terms)
    may = may_pass(hits, n_terms, cal.relevance)
    load(store, [h for h, ok in zip(hits, may, strict=True) if ok], terms)
    chosen: list[Hit] = []
    # A hit left unread holds no words here, but it stays below the threshold with any.
    for hit, p in zip(hits, relevance(hits, n_terms, cal.relevance), strict=True):
        if p < cal.relevance.threshold or len(chosen) >= MAX_ITEMS or hit.loaded is None:
            continue
        if any(_same(hit, other, cal.merge) for other in chosen):
            continue  # a near-duplicate takes no second place
        item = _memory_item(hit.record, hit, p)
        if used + item.tokens > budget_tokens:
            continue  # a shorter, less relevant item may still fit
        chosen.append(hit)
        ctx.items.append(item)
        used += item.tokens
    return ctx, over


def _same(a: Hit, b: Hit, mark: float) -> bool:
    if a.vector is None or b.vector is None or not len(a.vector) or not len(b.vector):
        return False
    return float(np.dot(a.vector, b.vector)) >= mark
