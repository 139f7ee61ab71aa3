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

import logging
import threading
import time
from collections.abc import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict

from agent.memory.memorize import Memorizer
from policies.errors import BadArgumentError, ConflictError, NotFoundError
from policies.i18n import _
from policies.results import JSONObject
from policies.text import tag_key
from state.memory import MemoryRecord, MemoryStore
from state.memory.normalize import NEGATIONS, numbers, words

log = logging.getLogger(__name__)

WINDOW = 2000
#: Nearest memories looked at for each one queried (see Candidates for why this many).
NEIGHBOURS = 24
#: The candidate cache is rebuilt from scratch at most this long after the last rebuild.
REBUILD_SECONDS = 24 * 3600
#: Kinds never offered for a merge: a daily summary restates its day by design, and a stored
#: question states nothing ("¿cómo se llama mi perro?" twice is no twin).
UNPAIRED = frozenset({"summary", "question"})


class MergeRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    keep: JSONObject
    others: list[JSONObject]


def _compatible(a: str, b: str) -> bool:
    wa, wb = set(words(a)), set(words(b))
    return numbers(a) == numbers(b) and (wa & NEGATIONS) == (wb & NEGATIONS)


class Candidates:
    """Near-identical pairs among the newest ``window`` memories, kept between analyses.

    Every analysis (each debounced file event, each rescan) asks for merge candidates. Querying
    the whole window each time is a filtered HNSW query per memory with every hit built into a
    record: seconds of CPU on a large store, during which searches wait. So each call queries
    only the memories it has not checked yet (none, or a day's few, after the first), asks
    Chroma for distances alone, and reads records only for the hits that clear the mark. Pairs
    whose memories were merged, archived or forgotten since, or that left the window, are
    dropped before the clusters are built.

    A pair is found from whichever of its two memories is queried, among its ``NEIGHBOURS``
    nearest. Querying only the newer one misses a pair whose older memory has at least that
    many closer look-alikes around the newer one (near-identical texts with other numbers);
    ``NEIGHBOURS`` is large enough for that to be rare, and the cache is rebuilt from scratch
    once a day (``REBUILD_SECONDS``), so such a pair is proposed within a day.
    """

    def __init__(
        self, window: int = WINDOW, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window = window
        self._clock = clock
        self._built_at: float | None = None
        self._checked: set[str] = set()
        self._is_summary: dict[str, bool] = {}  # ids seen among the newest: a daily summary?
        self._pairs: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._building = False  # a full build runs on its own thread (wait=False)
        self._idle = threading.Event()  # set while no build thread is running
        self._idle.set()
        self._closed = False

    def __call__(self, store: MemoryStore, *, wait: bool = True) -> list[list[str]] | None:
        """The clusters. With ``wait=False`` (the analysis): None ("not looked at") instead of
        waiting for a scan that is running or doing a full one that is due (the first after a
        start, the daily rebuild: seconds of HNSW queries at 10,000 memories); :meth:`start`
        runs that one on a thread of its own."""
        if wait:
            with self._lock:
                return self._update(store)
        if self._building or not self._lock.acquire(blocking=False):
            return None
        try:
            return None if self._due() else self._update(store)
        finally:
            self._lock.release()

    def start(self, store: MemoryStore) -> None:
        """Start the full scan on a thread of its own when one is due and none is running."""
        if self._building or not self._lock.acquire(blocking=False):
            return  # a scan is running (never wait for it here: an analysis calls this)
        try:
            if self._closed or not self._due():
                return
            self._building = True
            self._idle.clear()
        finally:
            self._lock.release()
        threading.Thread(
            target=self._build, args=(store,), daemon=True, name="merge-candidates"
        ).start()

    def _due(self) -> bool:
        return self._built_at is None or self._clock() - self._built_at > REBUILD_SECONDS

    def close(self, timeout: float = 60.0) -> None:
        """No scan starts from now on, and a running one is waited for: the store it queries
        is about to be closed (a scan still inside Chroma then crashes the process)."""
        self._closed = True
        if not self._idle.wait(timeout):
            log.warning("the scan for near-identical memories did not end in %.0f s", timeout)

    def _build(self, store: MemoryStore) -> None:
        try:
            with self._lock:
                if not self._closed:
                    self._update(store)
        except Exception:  # the next analysis starts another
            log.exception("the scan for near-identical memories failed")
        finally:
            self._building = False
            self._idle.set()

    def _update(self, store: MemoryStore) -> list[list[str]]:
        now = self._clock()
        if self._due():
            self._checked, self._is_summary, self._pairs = set(), {}, set()
            self._built_at = now
        # The catalog, newest first (no scan): a little more than the window, as summaries
        # (one a day) do not count in it.
        newest = store.recent_ids(self.window + self.window // 10 + 10)
        unseen = [i for i in newest if i not in self._is_summary]
        records = {r.id: r for r in store.get(unseen)}
        for rec in records.values():
            self._is_summary[rec.id] = rec.kind in UNPAIRED
        self._is_summary = {i: self._is_summary[i] for i in newest if i in self._is_summary}
        window = [i for i in newest if self._is_summary.get(i) is False][: self.window]
        inside = set(window)
        self._checked &= inside
        fresh = [i for i in window if i not in self._checked]
        if fresh:
            missing = [i for i in fresh if i not in records]  # seen before, never queried
            records.update((r.id, r) for r in store.get(missing))
            found, queried = _pairs_of(store, [records[i] for i in fresh if i in records])
            self._pairs |= found
            self._checked.update(queried)  # one without a vector yet: queried next time
        involved = sorted({i for pair in self._pairs for i in pair})
        alive = {r.id for r in store.get(involved) if r.kind not in UNPAIRED}
        self._pairs = {
            (a, b)
            for a, b in self._pairs
            if a in alive and b in alive and (a in inside or b in inside)
        }
        return _clusters(self._pairs)


def _pairs_of(
    store: MemoryStore, fresh: list[MemoryRecord]
) -> tuple[set[tuple[str, str]], list[str]]:
    """Each near-identical pair (sorted ids) with at least one member in ``fresh``, and the
    ids that were queried (those with a vector). Daily summaries are never paired (they restate
    the day's memories by design)."""
    records = {r.id: r for r in fresh if r.kind not in UNPAIRED}
    vecs = store.vectors(list(records))
    ids = [i for i in records if i in vecs]
    if not ids:
        return set(), []
    threshold = store.embedder.calibration.merge
    near: list[tuple[str, str]] = []
    for me, hits in zip(
        ids, store.neighbours(np.asarray([vecs[i] for i in ids]), NEIGHBOURS), strict=True
    ):
        near += [(me, other) for other, score in hits if other != me and score >= threshold]
    others = {r.id: r for r in store.get(sorted({o for _score, o in near} - records.keys()))}
    others.update(records)
    pairs: set[tuple[str, str]] = set()
    for me, other in near:
        rec = others.get(other)
        if rec is None or rec.kind in UNPAIRED:
            continue
        if _compatible(records[me].content, rec.content):
            a, b = sorted((me, other))
            pairs.add((a, b))
    return pairs, ids


def _clusters(pairs: set[tuple[str, str]]) -> list[list[str]]:
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for a, b in sorted(pairs):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
    clusters: dict[str, set[str]] = {}
    for a, b in pairs:
        clusters.setdefault(root(a), set()).update((a, b))
    return sorted((sorted(c) for c in clusters.values()), key=lambda c: c[0])


def candidates(store: MemoryStore, window: int = WINDOW) -> list[list[str]]:
    """Clusters of near-identical memories among the newest ``window``, from scratch."""
    return Candidates(window)._update(store)  # its own cache: nobody else holds its lock


def _load(
    store: MemoryStore, keep_id: str, other_ids: list[str]
) -> tuple[MemoryRecord, list[MemoryRecord]]:
    others = [i for i in dict.fromkeys(other_ids) if i != keep_id]
    if not others:
        raise BadArgumentError(_("Name at least one other memory to merge into the kept one."))
    found = {r.id: r for r in store.get([keep_id, *others])}
    missing = [i for i in [keep_id, *others] if i not in found]
    if missing:
        raise NotFoundError(
            _(
                "No active memory has id {value}; run `alma-ctl memory list` to see them.",
                value=missing[0],
            )
        )
    return found[keep_id], [found[i] for i in others]


def record_for(store: MemoryStore, keep_id: str, other_ids: list[str]) -> JSONObject:
    """The record a merge would return, without merging: journaled before the merge runs, so an
    interrupted merge can be taken back exactly."""
    with store.lock:
        keep, rest = _load(store, keep_id, other_ids)
    return MergeRecord(keep=keep.model_dump(), others=[r.model_dump() for r in rest]).model_dump()


def merge(mem: Memorizer, keep_id: str, other_ids: list[str]) -> JSONObject:
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


def unmerge(store: MemoryStore, raw: JSONObject) -> None:
    try:
        record = MergeRecord.model_validate(raw)
        keep = MemoryRecord.model_validate(record.keep)
        others = [MemoryRecord.model_validate(o) for o in record.others]
    except ValueError as exc:
        raise BadArgumentError(
            _("This is not a merge record ({exc}); pass the one merge returned.", exc=exc)
        ) from None
    with store.lock:
        where = store.find(keep.id)
        if where is None:
            raise ConflictError(_("Memory {id} no longer exists; nothing was changed.", id=keep.id))
        store.update([keep], archived=where[1])
        archived = [o for o in others if (f := store.find(o.id)) is not None and f[1]]
        store.move(archived, to_archive=False)
        active = [o for o in others if o not in archived]
        store.update(active)
