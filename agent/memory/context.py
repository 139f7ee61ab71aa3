"""The layered context for a prompt, within a token budget.

- L-inf, always: every paragraph or bullet of ``system/principles.md`` and every memory of
  type ``principle``. Never cut: if they alone pass the budget they are all still given
  (and ``over_budget`` says so), because silently dropping a rule the person set is worse.
- L1 (distilled: what the person added, facts, daily summaries) and L0 (raw log paragraphs):
  the hybrid search's best ``CANDIDATES`` (``agent.memory.search``), the person's questions
  left out, and only when they answer the message. The answer model (``Selection`` in the
  embedder's calibration: a logistic model over ``search.ANSWER_FEATURES``, fitted by
  ``python -m tests.support.grounded_eval ROOT --fit SYNTHETIC_ROOT`` on questions that
  something answers and questions nothing answers) gives each candidate its chance of
  answering; a candidate that lacks the kind of detail the message asks for (a time, an
  amount, a name) or a name the message names (``agent.memory.asked``) has less. Below
  ``Selection.bound`` for the best candidate, nothing answers the message and no memory is
  handed (a small model follows whatever text it is given; the chat then says it has
  nothing stored); otherwise the candidates at or above ``Selection.floor`` and
  ``Selection.share`` of the best one's chance enter, at most ``Selection.most``. Each item
  says whether it ``answers``; the principles compete with the memories for those places,
  and one chosen answers (the chat quotes it).
- A candidate nearly identical to one already chosen (cosine at or above the embedder's
  ``merge`` mark) does not take a second place.

Items are added best first until the budget (tokens ~ characters / 4) is used. Each says why
it is there: its rank score, cosine and the words of the message it holds.
"""

from __future__ import annotations

import re
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from actions.safe_read import read_file
from actions.tree import Tree
from agent.memory.asked import kinds, lacks, names, unnamed
from agent.memory.memorize import embedding_text
from agent.memory.relations import expand
from agent.memory.search import (
    Hit,
    answer_chances,
    candidates,
    embed_soon,
    load,
    matched_terms,
)
from policies.results import ContextItem, Layer, Why
from state.memory import MemoryRecord, MemoryStore
from state.memory.embedder import Selection, Vectors
from state.memory.models import RankFacts
from state.memory.normalize import approx_tokens, search_terms

CANDIDATES = 12
#: Principles' vectors by (embedder, text): system/principles.md is read at every message,
#: its paragraphs embedded once (a passage costs the engine tens of milliseconds).
_PRINCIPLE_VECTORS: dict[tuple[str, str], Vectors] = {}
_PRINCIPLE_CACHE = 512
#: What is read of system/principles.md: a person's rules, never cut by the budget, are a
#: page or two; a file larger than this is read up to here.
MAX_PRINCIPLES_BYTES = 64 * 1024
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADERS = {"L-inf": "Principios (siempre):", "L1": "Lo que sé:", "L0": "De los registros:"}


@dataclass
class Item:
    layer: Layer
    source: str
    content: str
    id: str = ""
    score: float | None = None
    memory_type: str = "principle"
    tokens: int = 0
    why: Why | None = None
    created_at: str = ""
    answers: bool = False  # it answers the message (the chat quotes what answers)

    def line(self) -> str:
        return f"- {' '.join(self.content.split())}  [{self.source}]"

    def public(self) -> ContextItem:
        out: ContextItem = {
            "layer": self.layer,
            "source": self.source,
            "content": self.content,
            "id": self.id,
            "memory_type": self.memory_type,
            "tokens": self.tokens,
            "answers": self.answers,
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

    @property
    def answered(self) -> bool:
        """Something ALMA knows answers the message."""
        return any(i.answers for i in self.items)

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
    principles: list[Hit] | None = None,
    searched: str | None = None,
) -> list[Hit]:
    """Every candidate of the hybrid search, best first, with its ``answering`` chance: the
    principles among them (``principles``: those of system/principles.md, from
    :func:`principle_hits`), the person's questions left out (what they asked is not what
    ALMA knows: an earlier "¿soy alérgico a algo?" never answers a later one). What is
    searched for is ``prompt`` with what its relation words stand for in the store
    (``relations.expand``; ``searched``: that text, when the caller has it, as it must with
    ``embedding``); the detail asked and the names named are read from ``prompt``."""
    query = expand(store, prompt).text if searched is None else searched
    outside = {h.id for h in principles or ()}  # their ``lacks`` set by principle_hits
    # Unfiltered (a where on layer slows Chroma's search).
    found = [
        h
        for h in candidates(
            store, query, now=now, embedding=embedding, records=False, outside=principles or ()
        )
        if h.facts.kind != "question"
    ]
    wanted = kinds(prompt)
    named = names(prompt)
    if wanted or named:
        # What may enter (the best ``CANDIDATES`` memories, every principle) is read now, to
        # see whether it holds the detail asked and the names; the records are kept for what
        # is handed.
        memories = [h for h in found if h.facts.layer != "L-inf"][:CANDIDATES]
        stored = [h for h in found if h.facts.layer == "L-inf" and h.id not in outside]
        readable = [h for h in memories + stored if h.loaded is None]
        by_id = {r.id: r for r in store.records([h.id for h in readable])}
        for hit in readable:
            hit.loaded = by_id.get(hit.id)
            if hit.loaded is not None:
                hit.lacks = lacks(wanted, hit.loaded.content, prompt)
                hit.unnamed = unnamed(named, hit.loaded.content)
    answer_chances(found, store.embedder.calibration.selection, len(search_terms(query)))
    return found


def select(hits: list[Hit], rule: Selection, merge: float) -> list[Hit]:
    """What enters (``hits`` from :func:`ranked`): of the best ``CANDIDATES`` memories and
    every principle, in rank order, none unless the best chance of answering reaches
    ``rule.bound``; then those whose chance reaches ``rule.floor`` and ``rule.share`` of the
    best one's, at most ``rule.most``, a near-duplicate (cosine at or above ``merge``) of one
    chosen taking no place of its own. A principle competes like a memory: the chat quotes
    it when it is chosen."""
    memories = [h for h in hits if h.facts.layer != "L-inf"][:CANDIDATES]
    taken = {id(h) for h in memories}
    pool = [h for h in hits if id(h) in taken or h.facts.layer == "L-inf"]
    if not pool:
        return []
    best = max(h.answering for h in pool)
    if best < rule.bound:
        return []
    least = max(rule.floor, rule.share * best)
    chosen: list[Hit] = []
    for hit in pool:
        if hit.answering < least:
            continue
        if len(chosen) >= rule.most:
            break
        if not any(_same(hit, other, merge) for other in chosen):
            chosen.append(hit)
    return chosen


def principle_hits(
    store: MemoryStore, items: list[Item], prompt: str, searched: str | None = None
) -> list[Hit]:
    """The principles of system/principles.md as candidates, each with the search terms of
    ``searched`` (``prompt`` unless given, as in :func:`ranked`) it holds and whether it
    lacks the detail asked or a name (their vectors cached by text)."""
    terms = search_terms(prompt if searched is None else searched)
    wanted = kinds(prompt)
    named = names(prompt)
    emb = store.embedder
    texts = [embedding_text(i.content) for i in items]
    missing = [t for t in dict.fromkeys(texts) if (emb.name, t) not in _PRINCIPLE_VECTORS]
    if missing:
        if len(_PRINCIPLE_VECTORS) + len(missing) > _PRINCIPLE_CACHE:
            _PRINCIPLE_VECTORS.clear()
        for text, vector in zip(missing, emb.passages(missing), strict=True):
            _PRINCIPLE_VECTORS[(emb.name, text)] = vector
    out = []
    for item, text in zip(items, texts, strict=True):
        facts = RankFacts(item.source, "L-inf", "principle", 5, None, 0, frozenset())
        hit = Hit(None, 0.0, vector=_PRINCIPLE_VECTORS[(emb.name, text)], known=facts)
        hit.matched = matched_terms(terms, item.content)
        hit.lacks = lacks(wanted, item.content, prompt)
        hit.unnamed = unnamed(named, item.content)
        out.append(hit)
    return out


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
    # Who "mi pareja" is, read from the store first: the query embedded is the expanded one.
    searched = expand(store, prompt).text
    embedding = embed_soon(store, searched)  # the principles need no query vector
    terms = search_terms(searched)
    ctx = Context()
    written = read_principles(principles_file)
    for item in written:
        item.tokens = approx_tokens(item.line())
    ctx.items.extend(written)
    principles = sorted(store.layer("L-inf"), key=lambda r: (-r.importance, r.created_at))
    ctx.items.extend(_memory_item(r) for r in principles)
    used = sum(i.tokens for i in ctx.items)
    over = used > budget_tokens

    hits = ranked(
        store,
        prompt,
        now=now,
        embedding=embedding,
        principles=principle_hits(store, written, prompt, searched),
        searched=searched,
    )
    picked = select(hits, cal.selection, cal.merge)
    answering = {h.id for h in picked if h.facts.layer == "L-inf"}
    for item in ctx.items:
        item.answers = (item.id or item.source) in answering
    ctx.l0_searched = any(h.facts.layer == "L0" for h in hits[:CANDIDATES])
    chosen = load(store, [h for h in picked if h.facts.layer != "L-inf"], terms)
    for hit in chosen:
        item = _memory_item(hit.record, hit)
        item.answers = True
        if used + item.tokens > budget_tokens:
            continue  # a shorter, less relevant item may still fit
        ctx.items.append(item)
        used += item.tokens
    return ctx, over


def _same(a: Hit, b: Hit, mark: float) -> bool:
    if a.vector is None or b.vector is None or not len(a.vector) or not len(b.vector):
        return False
    return float(np.dot(a.vector, b.vector)) >= mark
