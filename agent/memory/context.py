"""The layered context for a prompt, within a token budget.

- L-inf, always: every paragraph or bullet of ``system/principles.md`` and every memory of
  type ``principle``. Never cut: if they alone pass the budget they are all still given
  (and ``over_budget`` says so), because silently dropping a rule the person set is worse.
- L1, distilled (what the person added, facts, daily summaries): the hits whose cosine
  clears the embedder's ``relevant`` mark and lies within its ``window`` of the best hit
  (small embedders score everything Spanish around 0.8: what matters is standing out).
- L0, raw log paragraphs: searched only when L1 does not suffice, that is when no L1 hit
  clears the ``strong`` mark and fewer than ``L1_ENOUGH`` clear the ``relevant`` one.

Items are added best first until the budget (tokens ~ characters / 4) is used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.memory.search import Hit, search
from state.memory import MemoryRecord, MemoryStore
from state.memory.normalize import approx_tokens

L1_ENOUGH = 2
CANDIDATES = 12
MAX_ITEMS = 10
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
        return out


def read_principles(path: Path, rel: str = "system/principles.md") -> list[Item]:
    """Each bullet, or each paragraph that is not a heading, with its line."""
    try:
        text = _COMMENT.sub("", path.read_text(encoding="utf-8", errors="replace"))
    except (FileNotFoundError, IsADirectoryError):
        return []
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


def _memory_item(rec: MemoryRecord, hit: Hit | None = None) -> Item:
    item = Item(
        layer=rec.layer,
        source=rec.source or rec.kind,
        content=rec.content,
        id=rec.id,
        score=hit.score if hit else None,
        memory_type=rec.memory_type,
    )
    item.tokens = approx_tokens(item.line())
    return item


def build_context(
    store: MemoryStore, principles_file: Path, prompt: str, budget_tokens: int
) -> tuple[Context, bool]:
    """The context and whether L-inf alone went over the budget."""
    cal = store.embedder.calibration
    ctx = Context()
    for item in read_principles(principles_file):
        item.tokens = approx_tokens(item.line())
        ctx.items.append(item)
    principles = sorted(store.scan({"layer": "L-inf"}), key=lambda r: (-r.importance, r.created_at))
    ctx.items.extend(_memory_item(r) for r in principles)
    used = sum(i.tokens for i in ctx.items)
    over = used > budget_tokens

    def relevant(hits: list[Hit]) -> list[Hit]:
        if not hits:
            return []
        floor = max(cal.relevant, hits[0].score - cal.window)
        return [h for h in hits if h.score >= floor]

    l1 = relevant(search(store, prompt, CANDIDATES, {"layer": "L1"}))
    chosen = list(l1)
    if not any(h.score >= cal.strong for h in l1) and len(l1) < L1_ENOUGH:
        ctx.l0_searched = True
        chosen += relevant(search(store, prompt, CANDIDATES, {"layer": "L0"}))
    for hit in chosen[:MAX_ITEMS]:
        item = _memory_item(hit.record, hit)
        if used + item.tokens > budget_tokens:
            continue  # a shorter, less relevant item may still fit
        ctx.items.append(item)
        used += item.tokens
    return ctx, over
