"""Merging near-identical memories (the ``memory_merge`` suggestion), and undoing it exactly.

Candidates: among the most recent ``WINDOW`` active memories, each one's nearest neighbours in
the whole store, paired when the cosine clears the embedder's ``merge`` mark and the texts
carry the same numbers and negations (a looser test than reinforcement: a person approves a
merge, nothing merges on its own). Pairs are joined into clusters. Limiting the window keeps
this a few HNSW queries instead of an all-pairs comparison at 50,000 memories.

A merge keeps one memory (summing use and mentions, uniting tags, keeping the highest
importance) and archives the others. Its record holds the full before-state of every memory
involved, so ``unmerge`` writes them back exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from agent.memory.memorize import Memorizer
from policies.errors import BadArgumentError, ConflictError, NotFoundError
from state.memory import MemoryRecord, MemoryStore
from state.memory.normalize import NEGATIONS, numbers, tag_key, words

WINDOW = 2000
NEIGHBOURS = 6


class MergeRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    keep: dict[str, Any]
    others: list[dict[str, Any]]


def _compatible(a: str, b: str) -> bool:
    wa, wb = set(words(a)), set(words(b))
    return numbers(a) == numbers(b) and (wa & NEGATIONS) == (wb & NEGATIONS)


def candidates(store: MemoryStore, window: int = WINDOW) -> list[list[str]]:
    where = {"kind": {"$ne": "summary"}}
    # The newest from the catalog (not a scan of every memory's metadata, ~30 s at 100,000):
    # a little more than the window, since daily summaries (one a day) are left out.
    newest = store.get(store.recent_ids(window + window // 10 + 10))
    recent = [r for r in newest if r.kind != "summary"][:window]
    if len(recent) < 2:
        return []
    vecs = store.vectors([r.id for r in recent])
    ids = [r.id for r in recent if r.id in vecs]
    texts = {r.id: r.content for r in store.get(ids)}
    threshold = store.embedder.calibration.merge
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    results = store.query(np.asarray([vecs[i] for i in ids]), NEIGHBOURS, where)
    for me, hits in zip(ids, results, strict=True):
        for rec, score in hits:
            if rec.id == me or score < threshold:
                continue
            if _compatible(texts.get(me, ""), rec.content):
                parent[root(rec.id)] = root(me)
    clusters: dict[str, set[str]] = {}
    for x in list(parent):
        clusters.setdefault(root(x), set()).add(x)
    for r in list(clusters):
        clusters[r].add(r)
    return sorted((sorted(c) for c in clusters.values() if len(c) > 1), key=lambda c: c[0])


def _load(
    store: MemoryStore, keep_id: str, other_ids: list[str]
) -> tuple[MemoryRecord, list[MemoryRecord]]:
    others = [i for i in dict.fromkeys(other_ids) if i != keep_id]
    if not others:
        raise BadArgumentError("Name at least one other memory to merge into the kept one.")
    found = {r.id: r for r in store.get([keep_id, *others])}
    missing = [i for i in [keep_id, *others] if i not in found]
    if missing:
        raise NotFoundError(
            f"No active memory has id {missing[0]}; run `alma-ctl memory list` to see them."
        )
    return found[keep_id], [found[i] for i in others]


def record_for(store: MemoryStore, keep_id: str, other_ids: list[str]) -> dict[str, Any]:
    """The record a merge would return, without merging: journaled before the merge runs, so an
    interrupted merge can be taken back exactly."""
    with store.lock:
        keep, rest = _load(store, keep_id, other_ids)
    return MergeRecord(keep=keep.model_dump(), others=[r.model_dump() for r in rest]).model_dump()


def merge(mem: Memorizer, keep_id: str, other_ids: list[str]) -> dict[str, Any]:
    store = mem.store
    with store.lock:
        keep, rest = _load(store, keep_id, other_ids)
        record = MergeRecord(keep=keep.model_dump(), others=[r.model_dump() for r in rest])
        merged = keep.model_copy(deep=True)
        keys = {tag_key(t) for t in merged.tags}
        for r in rest:
            merged.use_count += r.use_count
            merged.mentions += r.mentions
            merged.importance = max(merged.importance, r.importance)
            merged.boosted = merged.boosted or r.boosted
            merged.tags += [t for t in r.tags if tag_key(t) not in keys]
            keys |= {tag_key(t) for t in r.tags}
        store.update([merged])
        mem.archive(rest, reason="merged", into=keep_id)
    return record.model_dump()


def unmerge(store: MemoryStore, raw: dict[str, Any]) -> None:
    try:
        record = MergeRecord.model_validate(raw)
        keep = MemoryRecord.model_validate(record.keep)
        others = [MemoryRecord.model_validate(o) for o in record.others]
    except ValueError as exc:
        raise BadArgumentError(
            f"This is not a merge record ({exc}); pass the one merge returned."
        ) from None
    with store.lock:
        where = store.find(keep.id)
        if where is None:
            raise ConflictError(f"Memory {keep.id} no longer exists; nothing was changed.")
        store.update([keep], archived=where[1])
        archived = [o for o in others if (f := store.find(o.id)) is not None and f[1]]
        store.move(archived, to_archive=False)
        active = [o for o in others if o not in archived]
        store.update(active)
