"""The one path by which anything becomes a memory: embed, reinforce or add, keep the cap.

Ingested paragraphs carry deterministic ids, so a replay after a crash finds its row and
stops; a replay of a paragraph that reinforced another memory finds its id among that
memory's ``mention_ids`` and stops too. Either way nothing is counted twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from agent.memory.reinforce import near_identical, reinforce
from policies.text import without_hashtags
from state.memory import MemoryRecord, MemoryStore
from state.memory.embedder import Vectors
from state.memory.models import NEVER_EVICTED

log = logging.getLogger(__name__)

#: Neighbours looked at for a near-duplicate: the nearest is nearly always the one.
_NEIGHBOURS = 3


def embedding_text(content: str) -> str:
    """What is embedded: the text without its #hashtags. They are tags (metadata, filtered
    exactly); left in, one extra "#fatiga" moves a repeat below the duplicate mark."""
    return " ".join(without_hashtags(content).split()) or content


@dataclass
class Outcome:
    record: MemoryRecord
    status: Literal["added", "reinforced", "existing"]


class Memorizer:
    def __init__(
        self,
        store: MemoryStore,
        *,
        cap: int,
        on_added: Callable[[MemoryRecord], None] | None = None,
    ) -> None:
        self.store = store
        self.cap = cap
        self._on_added = on_added

    def remember(self, records: Sequence[MemoryRecord]) -> list[Outcome]:
        """Store each record, or reinforce its near-identical twin. In order, so a batch
        that repeats itself reinforces its own earlier rows. The batch's new memories are
        written in one store write: each write is a Chroma transaction with its fsyncs,
        several times the cost of a row within one."""
        if not records:
            return []
        emb = self.store.embedder
        vectors = emb.passages([embedding_text(r.content) for r in records])
        outcomes: list[Outcome] = []
        pending: dict[str, tuple[MemoryRecord, Vectors]] = {}  # to add, in order
        with self.store.lock:
            known = self.store.existing([r.id for r in records])
            for rec, vec in zip(records, vectors, strict=True):
                if rec.id in known:
                    found = self.store.find(rec.id)
                    outcomes.append(Outcome(found[0] if found else rec, "existing"))
                    continue
                twin = self._twin(rec, vec, emb.calibration.duplicate, pending)
                if twin is not None:
                    if rec.id in twin.mention_ids:
                        outcomes.append(Outcome(twin, "existing"))
                        continue
                    stronger = reinforce(twin, rec, rec.id)
                    if twin.id in pending:
                        pending[twin.id] = (stronger, pending[twin.id][1])
                    else:
                        self.store.update([stronger])
                    outcomes.append(Outcome(stronger, "reinforced"))
                    continue
                pending[rec.id] = (rec, vec)
                outcomes.append(Outcome(rec, "added"))
            added = [r for r, _v in pending.values()]
            if added:
                self.store.add(added, np.vstack([v for _r, v in pending.values()]))
                self.enforce_cap(protect={r.id for r in added})
        if self._on_added is not None:
            for rec in added:
                self._on_added(rec)
        return outcomes

    def put(self, record: MemoryRecord) -> MemoryRecord:
        """Write a derived memory (a daily summary) under its own id, replacing the previous
        version but keeping how often it was used. Never reinforces anything."""
        vec = self.store.embedder.passages([embedding_text(record.content)])
        with self.store.lock:
            old = self.store.get([record.id])
            if old:
                record = record.model_copy(update={"use_count": old[0].use_count})
            self.store.add([record], vec)
        return record

    def _twin(
        self,
        rec: MemoryRecord,
        vec: Vectors,
        threshold: float,
        pending: dict[str, tuple[MemoryRecord, Vectors]],
    ) -> MemoryRecord | None:
        """The nearest memory ``rec`` repeats, among the stored ones and those of its batch
        not written yet (``pending``)."""
        # The store's exact search (the same twins in every process and every build), a few
        # more than needed: daily summaries are left out after it.
        near = self.store.nearest(np.asarray(vec, dtype=np.float32), _NEIGHBOURS * 3)
        cosine = {i: cos for i, cos, _v in near}
        stored = self.store.records([i for i, _c, _v in near])
        hits = [(r, cosine[r.id]) for r in stored if r.kind != "summary"][:_NEIGHBOURS]
        hits += [(r, float(np.dot(v, vec))) for r, v in pending.values() if r.kind != "summary"]
        hits.sort(key=lambda h: -h[1])
        for cand, score in hits[:_NEIGHBOURS]:
            if near_identical(rec.content, cand.content, score, threshold):
                return cand
        return None

    def enforce_cap(self, protect: set[str] | None = None) -> list[str]:
        """Over the cap, archive the least important, least used, oldest memories that are
        neither principles nor facts, down to a little under the cap so the scan is not
        repeated at every single addition. Returns the archived ids."""
        with self.store.lock:
            count = self.store.count()
            if count <= self.cap:
                return []
            excess = count - self.cap + self.cap // 100
            keep = protect or set()
            where = {"memory_type": {"$nin": sorted(NEVER_EVICTED)}}
            pool = [r for r in self.store.scan(where, documents=False) if r.id not in keep]
            pool.sort(key=lambda r: (r.importance, r.use_count, r.created_ts))
            victims = self.store.get([r.id for r in pool[:excess]])
            if len(victims) < excess:
                log.warning(
                    "memory cap %d exceeded, but only %d memories may be archived",
                    self.cap,
                    len(victims),
                )
            self.archive(victims, reason="cap")
            return [r.id for r in victims]

    def archive(self, records: Sequence[MemoryRecord], *, reason: str, into: str = "") -> None:
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        moved = [
            r.model_copy(
                update={"archived_at": stamp, "archive_reason": reason, "merged_into": into}
            )
            for r in records
        ]
        self.store.move(moved, to_archive=True)
