"""A search embeds its query while it does the work that needs no vector: the lexical search
(and, for a context, the principles) run beside the embedding, and the results are what the
same search gives one step after the other. It reads full records only for what it returns."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent.memory.context import CANDIDATES, build_context, ranked, select
from agent.memory.search import candidates, search
from state.memory import MemoryRecord, MemoryStateDB, MemoryStore, get_embedder
from state.memory.embedder import Vectors

TEXTS = [
    "La copia de seguridad del disco externo falló el martes.",
    "Lucía cambió la reunión del proyecto ALMA al jueves.",
    "El seguro del coche vence en marzo: 412 euros.",
]


class _WaitsForLexical:
    """The real embedder, whose query only returns once the store's lexical search ran."""

    def __init__(self, inner: Any, lexical_ran: threading.Event) -> None:
        self._inner = inner
        self._lexical_ran = lexical_ran
        self.name, self.dim, self.calibration = inner.name, inner.dim, inner.calibration
        self.overlapped = False

    def passages(self, texts: Any) -> Vectors:
        out: Vectors = self._inner.passages(texts)
        return out

    def query(self, text: str) -> Vectors:
        self.overlapped = self._lexical_ran.wait(30)
        out: Vectors = self._inner.query(text)
        return out


def test_the_lexical_search_runs_while_the_query_is_embedded(
    tmp_path: Path, embedder_loaded: None
) -> None:
    emb = get_embedder("e5-small")
    store = MemoryStore(tmp_path / "chroma", emb, MemoryStateDB(tmp_path / "state.db"))
    records = [
        MemoryRecord(id=f"m{i}", content=t, created_at="2026-11-20T10:00:00+00:00")
        for i, t in enumerate(TEXTS)
    ]
    store.add(records, emb.passages(TEXTS))
    question = "¿Cuándo falló la copia del disco?"
    one_after_the_other = [(h.record.id, h.fused) for h in candidates(store, question)]

    lexical_ran = threading.Event()
    lexical = store.lexical

    def lexical_then_signal(terms: Any, limit: int) -> list[str]:
        out = lexical(terms, limit)
        lexical_ran.set()
        return out

    waiting = _WaitsForLexical(emb, lexical_ran)
    store.embedder = waiting  # type: ignore[assignment]  # a wrapper with the same protocol
    store.lexical = lexical_then_signal  # type: ignore[method-assign]  # the same call, timed
    beside = [(h.record.id, h.fused) for h in candidates(store, question)]
    assert waiting.overlapped, "the embedding waited for nothing: it ran before the lexical search"
    assert [i for i, _f in beside] == [i for i, _f in one_after_the_other]
    assert np.allclose([f for _i, f in beside], [f for _i, f in one_after_the_other])
    store.close()


def test_a_search_reads_the_records_of_what_it_hands_out_only(
    tmp_path: Path, embedder_loaded: None
) -> None:
    """The ranking reads the catalog and the vectors; documents and metadata (the costly part
    of a Chroma read) only for the hits returned, or a context's ``CANDIDATES``: the same
    order and scores as reading every candidate's record."""
    emb = get_embedder("e5-small")
    store = MemoryStore(tmp_path / "chroma", emb, MemoryStateDB(tmp_path / "state.db"))
    texts = [f"{t} Nota {i} del cuaderno." for i in range(12) for t in TEXTS]
    records = [
        MemoryRecord(id=f"m{i:02d}", content=t, created_at="2026-11-20T10:00:00+00:00")
        for i, t in enumerate(texts)
    ]
    store.add(records, emb.passages(texts))
    question = "¿Cuándo falló la copia del disco?"
    now = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)  # the recency term moves with the clock
    every = candidates(store, question, now=now)
    read: list[str] = []
    records_of = store.records

    def counted(ids: Any, **kwargs: Any) -> list[MemoryRecord]:
        read.extend(ids)
        return records_of(ids, **kwargs)

    store.records = counted  # type: ignore[method-assign]  # the same read, counted
    lean = candidates(store, question, now=now, records=False)
    assert read == []
    assert [(h.id, h.fused, h.chance) for h in lean] == [(h.id, h.fused, h.chance) for h in every]
    assert len(every) > CANDIDATES
    hits = search(store, question, 3, now=now)
    assert len(read) == 3
    assert [(h.record, h.why()) for h in hits] == [(h.record, h.why()) for h in every[:3]]
    # A message that asks for no kind of detail: only the candidates the selection lets in.
    plain = "¿Qué pasó con la copia del disco?"
    read.clear()
    ctx, _over = build_context(store, tmp_path / "principles.md", plain, 1500, now=now)
    chosen = select(ranked(store, plain, now=now), emb.calibration.selection, emb.calibration.merge)
    assert read == [h.id for h in chosen]
    assert 0 < len(read) < CANDIDATES
    assert {i.id for i in ctx.items} <= set(read) and ctx.items
    # One that asks for a date: the best CANDIDATES, each once (whether each holds a date),
    # and nothing more for what is handed out.
    read.clear()
    ctx, _over = build_context(store, tmp_path / "principles.md", question, 1500, now=now)
    best = [h.id for h in candidates(store, question, now=now, records=False)][:CANDIDATES]
    assert sorted(read) == sorted(best)
    assert {i.id for i in ctx.items} <= set(read) and ctx.items
    store.close()
