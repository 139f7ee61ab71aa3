"""The layered context for a prompt, within a token budget.

- L-inf, always: every paragraph or bullet of ``system/principles.md`` and every memory of
  type ``principle``. Never cut: if they alone pass the budget they are all still given
  (and ``over_budget`` says so), because silently dropping a rule the person set is worse.
- L1 (distilled: what the person added, facts, daily summaries) and L0 (raw log paragraphs):
  the hybrid search's best ``CANDIDATES`` (``agent.memory.search``), the person's questions
  left out. Which of them enter is decided relative to this message's candidates, never by a
  raw score: the best must stand out from the median by ``Selection.standout`` of the spread
  (the best candidate's rank score less the last one's), and those within ``Selection.gap``
  of the spread below the best enter, at most ``Selection.most``. The three numbers live with the embedder's
  calibration (its scores) and are fitted for the answer's recall under a cap on unrelated
  items by ``python -m tests.support.grounded_eval ROOT --fit`` on the fit split of
  tests/support/grounded_eval_data.py (docs/memory.md has the figures).
- A candidate nearly identical to one already chosen (cosine at or above the embedder's
  ``merge`` mark) does not take a second place.

Items are added best first until the budget (tokens ~ characters / 4) is used. Each says why
it is there: its rank score, cosine and the words of the message it holds.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from actions.safe_read import read_file
from actions.tree import Tree
from agent.memory.search import Hit, candidates, embed_soon, load
from state.memory import MemoryRecord, MemoryStore
from state.memory.embedder import Selection, Vectors
from state.memory.normalize import approx_tokens, search_terms

CANDIDATES = 12
#: Below this many candidates there is no spread to judge by: each may enter (a new store).
MIN_SPREAD = 3
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
    why: dict[str, Any] | None = None
    created_at: str = ""

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
        if self.why is not None:
            out["why"] = self.why
        if self.created_at:
            out["created_at"] = self.created_at
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

    def text(self, layers: tuple[str, ...] = ("L-inf", "L1", "L0")) -> str:
        out: list[str] = []
        for layer in layers:
            lines = [i.line() for i in self.items if i.layer == layer]
            if lines:
                out.append(_HEADERS[layer])
                out.extend(lines)
                out.append("")
        return "\n".join(out).strip() + ("\n" if out else "")


def _memory_item(rec: MemoryRecord, hit: Hit | None = None) -> Item:
    item = Item(
        layer=rec.layer,
        source=rec.source or rec.kind,
        content=rec.content,
        id=rec.id,
        score=hit.chance if hit else None,
        memory_type=rec.memory_type,
        created_at=rec.created_at,
    )
    if hit is not None:
        item.why = hit.why()
    item.tokens = approx_tokens(item.line())
    return item


def ranked(
    store: MemoryStore,
    prompt: str,
    *,
    now: datetime | None = None,
    embedding: Future[Vectors] | None = None,
) -> list[Hit]:
    """The context's candidates, best first: the hybrid search's best ``CANDIDATES``, without
    the principles (in already) and without the person's questions (what they asked is not
    what ALMA knows: an earlier "¿soy alérgico a algo?" never answers a later one)."""
    # Unfiltered (a where on layer slows Chroma's search).
    found = [
        h
        for h in candidates(store, prompt, now=now, embedding=embedding, records=False)
        if h.facts.layer != "L-inf" and h.facts.kind != "question"
    ]
    return found[:CANDIDATES]


def standing(hits: list[Hit]) -> tuple[float, list[float]]:
    """How far the best candidate stands above the median one, and how far below the best
    each candidate is, both as shares of the spread (the best rank score less the last
    candidate's): relative to this message's candidates, never a raw score, since scores
    shift with the message and the store."""
    fused = np.asarray([h.fused for h in hits], dtype=np.float64)
    if len(fused) < MIN_SPREAD:
        return math.inf, [0.0] * len(fused)  # too few to judge by a spread: each may enter
    spread = float(fused[0] - fused.min()) or 1e-9
    best = float(fused[0])
    return (best - float(np.median(fused))) / spread, [(best - f) / spread for f in fused]


def select(hits: list[Hit], rule: Selection, merge: float) -> list[Hit]:
    """The candidates that enter (``hits`` from :func:`ranked`): none unless the best stands
    out (``rule.standout``); then those within ``rule.gap`` spreads of the best, at most
    ``rule.most``, a near-duplicate (cosine at or above ``merge``) of one chosen taking no
    place of its own."""
    out, gaps = standing(hits)
    if out < rule.standout:
        return []
    chosen: list[Hit] = []
    for hit, gap in zip(hits, gaps, strict=True):
        if gap > rule.gap or len(chosen) >= rule.most:
            break
        if not any(_same(hit, other, merge) for other in chosen):
            chosen.append(hit)
    return chosen


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

    hits = ranked(store, prompt, now=now, embedding=embedding)
    ctx.l0_searched = any(h.facts.layer == "L0" for h in hits)
    chosen = load(store, select(hits, cal.selection, cal.merge), search_terms(prompt))
    for hit in chosen:
        item = _memory_item(hit.record, hit)
        if used + item.tokens > budget_tokens:
            continue  # a shorter, less relevant item may still fit
        ctx.items.append(item)
        used += item.tokens
    return ctx, over


def _same(a: Hit, b: Hit, mark: float) -> bool:
    if a.vector is None or b.vector is None or not len(a.vector) or not len(b.vector):
        return False
    return float(np.dot(a.vector, b.vector)) >= mark
