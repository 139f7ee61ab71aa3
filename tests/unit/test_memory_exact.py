"""The store's exact search: the same nearest memories as brute force, in every process,
kept in step with every write (added, archived, restored)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from state.memory import MemoryRecord, MemoryStateDB, MemoryStore, get_embedder
from state.memory.exact import ExactIndex

DIM = 384


def _unit(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    out: npt.NDArray[np.float32] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def test_the_index_is_brute_force_with_ties_by_id() -> None:
    rng = np.random.default_rng(7)
    vectors = _unit(rng, 50)
    ids = [f"m{i:02d}" for i in range(50)]
    index = ExactIndex(ids, vectors, DIM)
    query = vectors[3]
    got = [i for i, _c, _v in index.nearest(query, 10)]
    assert got == [ids[k] for k in np.argsort(-(vectors @ query), kind="stable")[:10]]
    # Two memories with one vector: ordered by id, whatever order they were written in.
    twin = ExactIndex(["b", "a", "c"], np.vstack([vectors[0], vectors[0], vectors[1]]), DIM)
    assert [i for i, _c, _v in twin.nearest(vectors[0], 2)] == ["a", "b"]
    # Replacing and dropping build a new index; the old one answers as it did.
    moved = index.put(["m03"], vectors[4:5]).drop(["m04"])
    assert "m04" not in [i for i, _c, _v in moved.nearest(vectors[4], 50)]
    assert [i for i, _c, _v in moved.nearest(vectors[4], 1)] == ["m03"]
    assert [i for i, _c, _v in index.nearest(query, 1)] == ["m03"]


def test_the_store_searches_exactly_and_keeps_in_step(
    tmp_path: Path, embedder_loaded: None
) -> None:
    emb = get_embedder("e5-small")
    rng = np.random.default_rng(11)
    vectors = _unit(rng, 300)
    records = [
        MemoryRecord(id=f"m{i:03d}", content=f"nota {i}", created_at="2026-11-20T10:00:00+00:00")
        for i in range(300)
    ]
    store = MemoryStore(tmp_path / "chroma", emb, MemoryStateDB(tmp_path / "state.db"))
    store.add(records[:200], vectors[:200])
    query = _unit(rng, 1)[0]

    def exact(allowed: set[str]) -> list[str]:
        order = np.argsort(-(vectors @ query), kind="stable")
        return [f"m{k:03d}" for k in order if f"m{k:03d}" in allowed][:40]

    active = {r.id for r in records[:200]}
    assert [i for i, _c, _v in store.nearest(query, 40)] == exact(active)
    store.add(records[200:], vectors[200:])  # after the index was read: kept in step
    active |= {r.id for r in records[200:]}
    assert [i for i, _c, _v in store.nearest(query, 40)] == exact(active)
    gone = [r for r in records if r.id in set(exact(active)[:5])]
    store.move(gone, to_archive=True)
    active -= {r.id for r in gone}
    assert [i for i, _c, _v in store.nearest(query, 40)] == exact(active)
    store.move(gone[:2], to_archive=False)
    active |= {r.id for r in gone[:2]}
    assert [i for i, _c, _v in store.nearest(query, 40)] == exact(active)
    store.close()
    # Another process (a new store on the same files) reads the same answer.
    again = MemoryStore(tmp_path / "chroma", emb, MemoryStateDB(tmp_path / "state.db"))
    assert [i for i, _c, _v in again.nearest(query, 40)] == exact(active)
    again.close()
