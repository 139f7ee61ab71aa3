"""The merge-candidate cache (agent.memory.merge.Candidates) against a scan from scratch.

A small fake store with 2-d unit vectors places memories by angle, so the neighbourhoods are
exact and the cases that matter can be built on purpose.
"""

from __future__ import annotations

import math
import threading
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

from agent.memory import merge


class FakeStore:
    embedder = SimpleNamespace(calibration=SimpleNamespace(merge=0.99))

    def __init__(self) -> None:
        self.recs: dict[str, Any] = {}
        self.vecs: dict[str, Any] = {}
        self.order: list[str] = []  # newest first
        self.queried: list[str] = []

    def add(self, memory_id: str, degrees: float, text: str, kind: str = "turn") -> None:
        self.recs[memory_id] = SimpleNamespace(id=memory_id, kind=kind, content=text)
        rad = math.radians(degrees)
        self.vecs[memory_id] = np.array([math.cos(rad), math.sin(rad)])
        self.order.insert(0, memory_id)

    def archive(self, memory_id: str) -> None:
        self.order.remove(memory_id)
        del self.recs[memory_id]

    def recent_ids(self, n: int) -> list[str]:
        return self.order[:n]

    def get(self, ids: list[str]) -> list[Any]:
        return [self.recs[i] for i in ids if i in self.recs]

    def vectors(self, ids: list[str]) -> dict[str, Any]:
        return {i: self.vecs[i] for i in ids if i in self.vecs}

    def neighbours(self, vectors: Any, n: int) -> list[list[tuple[str, float]]]:
        out = []
        for v in vectors:
            scored = sorted(((float(v @ self.vecs[i]), i) for i in self.order), reverse=True)
            out.append([(i, s) for s, i in scored[:n]])
        self.queried += [""] * len(vectors)
        return out


def test_a_new_memory_pairs_with_an_older_one_behind_closer_look_alikes() -> None:
    # Found in review: b is in a's nearest, a is not in b's nearest (look-alikes with other
    # numbers sit closer to b). Querying only b must still find (a, b), as a full scan does.
    store = FakeStore()
    store.add("a", 0.0, "riego el huerto por la mañana")
    for k in range(5):  # five look-alikes with other numbers, closer to b than a is
        store.add(f"c{k}", 1.6 + 0.05 * k, f"riego el huerto a las {k}")
    cache = merge.Candidates()
    assert cache(store) == []
    store.add("b", 1.0, "riego el huerto por la mañana temprano")
    assert cache(store) == [["a", "b"]] == merge.candidates(store)


def test_summaries_take_no_place_in_the_window_nor_among_the_neighbours() -> None:
    store = FakeStore()
    store.add("a", 0.0, "el backup falla")
    for k in range(3):
        store.add(f"s{k}", 0.1 * k, "resumen del día", kind="summary")
    store.add("b", 0.5, "el backup falla")
    cache = merge.Candidates(window=2)  # the two newest that are not summaries: b and a
    assert cache(store) == [["a", "b"]] == merge.Candidates(window=2)(store)


def test_pairs_of_merged_memories_are_dropped_and_a_rebuild_comes_daily() -> None:
    now = [0.0]
    store = FakeStore()
    store.add("a", 0.0, "prefiero respuestas cortas")
    store.add("b", 0.5, "prefiero respuestas cortas")
    cache = merge.Candidates(clock=lambda: now[0])
    assert cache(store) == [["a", "b"]]
    store.queried.clear()
    assert cache(store) == [["a", "b"]] and store.queried == []  # nothing new, nothing queried
    store.archive("b")
    assert cache(store) == []
    now[0] += merge.REBUILD_SECONDS + 1
    cache(store)
    assert len(store.queried) == 1  # every memory of the window again, once a day


class GatedStore(FakeStore):
    """A store whose HNSW queries wait for ``release`` (a full scan that takes seconds)."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self.release = threading.Event()
        self.started = threading.Event()

    def neighbours(self, vectors: Any, n: int) -> list[list[tuple[str, float]]]:
        self.started.set()
        assert self.release.wait(10)
        return super().neighbours(vectors, n)


def test_an_analysis_never_waits_for_a_full_scan_which_runs_on_its_own_thread() -> None:
    # The first scan after a start is the bulk of an analysis on a large store: wait=False
    # answers None ("not looked at") at once; start() scans on a thread.
    now = [0.0]
    store = GatedStore()
    store.add("a", 0.0, "prefiero respuestas cortas")
    store.add("b", 0.5, "prefiero respuestas cortas")
    cache = merge.Candidates(clock=lambda: now[0])
    assert cache(store, wait=False) is None and store.queried == []  # not done in the analysis
    cache.start(store)
    assert store.started.wait(10)  # the scan runs on its own thread...
    assert cache(store, wait=False) is None  # ...an analysis does not wait for it...
    cache.start(store)  # ...nor does asking for another one meanwhile
    store.release.set()
    assert cache(store) == [["a", "b"]]  # waiting for it gives its answer
    assert cache(store, wait=False) == [["a", "b"]]  # and then analyses read it at once
    assert len(store.queried) == 2  # a and b, once each: one scan
    store.queried.clear()
    now[0] += merge.REBUILD_SECONDS + 1  # the daily rebuild goes the same way
    assert cache(store, wait=False) is None and store.queried == []
    cache.start(store)
    assert cache(store) == [["a", "b"]] and len(store.queried) == 2


def test_closing_waits_for_a_running_scan_and_no_scan_starts_after() -> None:
    # The daemon's stop closes the store: a scan still querying it on its own thread crashed
    # the daemon (SIGSEGV after "stopped", seen in CI). close() waits for it; start() after
    # close() does nothing, and a scan that was about to start leaves the store alone.
    store = GatedStore()
    store.add("a", 0.0, "prefiero respuestas cortas")
    store.add("b", 0.5, "prefiero respuestas cortas")
    cache = merge.Candidates()
    cache.start(store)
    assert store.started.wait(10)
    closed = threading.Event()
    closer = threading.Thread(target=lambda: (cache.close(), closed.set()))
    closer.start()
    assert not closed.wait(0.3)  # still scanning: close() waits
    store.release.set()
    assert closed.wait(10)
    closer.join()
    store.queried.clear()
    cache.start(store)
    time.sleep(0.2)
    assert store.queried == []
