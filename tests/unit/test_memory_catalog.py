"""The memory catalog (what `memory list`, `memory stats` and a search's ranking read) mirrors
Chroma exactly: after adds, metadata changes, use counts, archive and restore, after a write
interrupted between Chroma and the catalog, after a failed Chroma write, when the catalog was
lost, and from a catalog of an older layout. The reference is a full pass over Chroma's
metadata, which is what list and stats did before the catalog."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from state.memory import MemoryRecord, MemoryStateDB, MemoryStore, get_embedder
from state.memory import store as store_module
from state.memory.models import RankFacts

TAGS = ["huerto", "Energía", "trading", "año", "salud"]
PROJECTS = ["", "alma", "Tienda", ""]


def open_store(tmp_path: Path) -> tuple[MemoryStore, MemoryStateDB]:
    state = MemoryStateDB(tmp_path / "memory_state.db")
    return MemoryStore(tmp_path / "chroma", get_embedder("e5-small"), state), state


def records(n: int, start: int = 0) -> list[MemoryRecord]:
    return [
        MemoryRecord(
            id=f"m{i:04d}",
            content=f"Recuerdo número {i} sobre el año.",
            tags=[TAGS[i % 5], TAGS[(i * 3 + 1) % 5]],
            project=PROJECTS[i % 4],
            memory_type=["episode", "fact", "principle"][i % 3],
            created_at=f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:00:00+00:00",
            layer=["L0", "L1", "L-inf"][i % 3],
            kind="turn",
        )
        for i in range(start, start + n)
    ]


def vectors(n: int, seed: int = 0) -> Any:
    v = np.random.default_rng(seed).standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def reference(store: MemoryStore, archived: bool = False) -> dict[str, Any]:
    """Counts and the newest-first order from a full pass over Chroma's metadata."""
    recs = list(store.scan(archived=archived, documents=False))
    return {
        "by_tag": Counter(t for r in recs for t in r.tags),
        "by_project": Counter(r.project for r in recs if r.project),
        "by_memory_type": Counter(r.memory_type for r in recs),
        "by_layer": Counter(r.layer for r in recs),
        "recent": [r.id for r in sorted(recs, key=lambda r: (-r.created_ts, r.id))],
        "huerto": [
            r.id for r in sorted(recs, key=lambda r: (-r.created_ts, r.id)) if "huerto" in r.tags
        ],
    }


def assert_mirrors(store: MemoryStore) -> None:
    for archived in (False, True):
        ref = reference(store, archived)
        if not archived:
            counts = store.counts()
            for key in ("by_tag", "by_project", "by_memory_type", "by_layer"):
                assert Counter(counts[key]) == ref[key], key
        assert store.recent_ids(1000, archived=archived) == ref["recent"]
        assert store.recent_ids(1000, archived=archived, tag="HUERTO") == ref["huerto"]
    # What the ranking reads of every active memory (scan writes pending use counts first).
    active = list(store.scan())
    assert store._state.catalog_ranked([r.id for r in active]) == {
        r.id: RankFacts.of(r) for r in active
    }


def test_catalog_follows_adds_changes_archive_and_restore(tmp_path: Path) -> None:
    store, state = open_store(tmp_path)
    recs = records(60)
    store.add(recs, vectors(60))
    assert_mirrors(store)
    # A metadata change list/stats read (tags, project, type), and one they do not (use_count).
    changed = [r.model_copy(update={"tags": ["nuevo"], "project": "alma"}) for r in recs[:5]]
    store.update(changed)
    used = [r.model_copy(update={"use_count": 7}) for r in recs[5:10]]
    store.update(used)
    assert_mirrors(store)
    # Use counts handed out by searches, written by the store's background thread.
    assert store.bump_use([r.id for r in recs[3:8]]) == {"m0003": 1, "m0004": 1} | {
        f"m{i:04d}": 8 for i in range(5, 8)
    }
    assert_mirrors(store)
    assert store._state.catalog_ranked(["m0006"])["m0006"].use_count == 8
    assert store.counts()["by_tag"]["nuevo"] == 5
    store.move(recs[10:20], to_archive=True)
    assert_mirrors(store)
    assert state.catalog_count(archived=True) == 10
    store.move(recs[10:15], to_archive=False)
    assert_mirrors(store)
    newest = [store.get([i])[0] for i in reference(store)["recent"]]
    assert store.recent_ids(3, project="ALMA") == [r.id for r in newest if r.project == "alma"][:3]
    facts = [r.id for r in newest if r.memory_type == "fact"]
    assert facts and store.recent_ids(50, memory_type="FACT") == facts
    state.close()


def test_interrupted_write_or_lost_catalog_is_rebuilt_at_open(tmp_path: Path) -> None:
    store, state = open_store(tmp_path)
    store.add(records(30), vectors(30))
    # A crash after Chroma's write and before the catalog's: Chroma has rows the catalog lacks.
    state.catalog_begin()
    store._active.upsert(  # what the interrupted write got as far as
        ids=[r.id for r in records(4, start=100)],
        embeddings=vectors(4, seed=1),
        documents=[r.content for r in records(4, start=100)],
        metadatas=[r.to_metadata() for r in records(4, start=100)],
    )
    # ... and a metadata change no count shows.
    store._active.update(
        ids=["m0003"], metadatas=[{"tags": ["cambiado"], "tag_keys": ["cambiado"]}]
    )
    state.close()
    store, state = open_store(tmp_path)
    assert state.catalog_clean()
    assert state.catalog_count() == 34
    assert store.counts()["by_tag"]["cambiado"] == 1
    assert_mirrors(store)
    # A catalog that lost rows (no mark) is noticed by its count.
    state.catalog_put([], remove=[("m0001", False), ("m0002", False)])
    state.close()
    store, state = open_store(tmp_path)
    assert state.catalog_count() == 34
    assert_mirrors(store)
    state.close()


def test_a_catalog_of_the_layout_before_the_ranking_fields_is_rebuilt(tmp_path: Path) -> None:
    store, state = open_store(tmp_path)
    store.add(records(12), vectors(12))
    store.update([r.model_copy(update={"use_count": 3, "importance": 5}) for r in records(4)])
    store.close()
    state.close()
    db = sqlite3.connect(tmp_path / "memory_state.db")  # as layout 2 left it
    for column in ("kind", "importance", "use_count"):
        db.execute(f"ALTER TABLE catalog DROP COLUMN {column}")
    db.execute("UPDATE catalog_state SET value = 2 WHERE key = 'version'")
    db.commit()
    db.close()
    store, state = open_store(tmp_path)
    assert state.catalog_clean()
    assert_mirrors(store)
    assert state.catalog_ranked(["m0001"])["m0001"].importance == 5
    state.close()


def test_the_ranking_reads_chroma_for_a_memory_the_catalog_lacks(tmp_path: Path) -> None:
    store, state = open_store(tmp_path)
    recs = records(6)
    store.add(recs, vectors(6))
    state.catalog_put([], remove=[("m0002", False)])  # a write cut short, before a rebuild
    assert store.facts([r.id for r in recs]) == {r.id: RankFacts.of(r) for r in recs}
    state.close()


def test_failed_chroma_write_resyncs_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, state = open_store(tmp_path)
    recs = records(10)
    store.add(recs, vectors(10))

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(store._active, "update", broken)
    with pytest.raises(RuntimeError):
        store.update([recs[0].model_copy(update={"tags": ["perdido"]})])
    monkeypatch.undo()
    assert state.catalog_clean()  # re-read from Chroma: the catalog is right again
    assert "perdido" not in store.counts()["by_tag"]
    assert_mirrors(store)
    state.close()


def test_queries_of_an_empty_store_find_nothing(tmp_path: Path) -> None:
    # Neither query asks Chroma for a count first; an empty collection must still answer.
    store, state = open_store(tmp_path)
    vectors = np.ones((2, store.embedder.dim), dtype=np.float32)
    assert store.query(vectors, 5) == [[], []]
    assert store.neighbours(vectors, 5) == [[], []]
    store.add(records(1), vectors[:1])
    assert [[r.id for r, _ in hits] for hits in store.query(vectors, 5)] == [["m0000"], ["m0000"]]
    assert [[i for i, _ in hits] for hits in store.neighbours(vectors, 5)] == [["m0000"], ["m0000"]]
    state.close()


def test_a_listing_reads_the_newest_rows_in_order_without_sorting_them(tmp_path: Path) -> None:
    # A day ingested at once shares one instant: the newest N must come from the index in
    # list's order (ties by id), not from a sort of every memory of that instant.
    store, state = open_store(tmp_path)
    same = [r.model_copy(update={"created_at": "2026-11-22T10:00:00+00:00"}) for r in records(40)]
    store.add(same, vectors(40))
    asked: list[str] = []
    state._db.set_trace_callback(asked.append)
    assert store.recent_ids(5) == [f"m{i:04d}" for i in range(5)]
    assert store.recent_ids(2, memory_type="fact") == ["m0001", "m0004"]
    state._db.set_trace_callback(None)
    listings = [sql for sql in asked if "ORDER BY" in sql]
    assert len(listings) == 2
    for listing in listings:
        plan = " ".join(row[3] for row in state._db.execute(f"EXPLAIN QUERY PLAN {listing}"))
        assert "TEMP B-TREE" not in plan, plan
        if "memory_type" in listing:  # that type's rows only, not every memory's
            assert "memory_type=?" in plan, plan
    assert_mirrors(store)
    state.close()


def test_use_counts_are_gathered_and_a_read_writes_only_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "USES_GATHER", 60.0)
    store, state = open_store(tmp_path)
    recs = records(3)
    store.add(recs, vectors(3))

    def stored() -> dict[str, int]:
        res = store._active.get(ids=[r.id for r in recs], include=["metadatas"])
        pairs = zip(res["ids"], res["metadatas"], strict=True)
        return {i: int(m.get("use_count") or 0) for i, m in pairs}

    assert store.bump_use(["m0000", "m0001"]) == {"m0000": 1, "m0001": 1}
    assert store.bump_use(["m0001"]) == {"m0001": 2}
    assert stored() == {"m0000": 0, "m0001": 0, "m0002": 0}  # gathered, not written yet
    # The ranking reads the counts a search would hand out, pending ones included.
    assert {i: f.use_count for i, f in store.facts(["m0000", "m0001"]).items()} == {
        "m0000": 1,
        "m0001": 2,
    }
    assert [r.use_count for r in store.get(["m0001"])] == [2]
    assert stored() == {"m0000": 0, "m0001": 2, "m0002": 0}  # the other one stays pending
    assert store.bump_use(["m0000"]) == {"m0000": 2}
    assert {r.id: r.use_count for r in store.scan()} == {"m0000": 2, "m0001": 2, "m0002": 0}
    assert stored() == {"m0000": 2, "m0001": 2, "m0002": 0}
    assert_mirrors(store)
    # Read and handed out in one: the record holds the new count, pending like the others.
    assert [(r.id, r.use_count) for r in store.hand_out(["m0002", "m0002"])] == [("m0002", 1)]
    assert stored()["m0002"] == 0
    store.close()  # writes at once, without gathering
    state.close()
    store, state = open_store(tmp_path)  # what a closed store wrote is what a new one reads
    assert stored()["m0002"] == 1
    store.close()
    state.close()
