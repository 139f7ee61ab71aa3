"""Recall on the shared Spanish check set (../shared/memory_eval), real Chroma, real embedder.

The set measures the method; nothing in the code is fitted to its sentences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.memory.service import MemoryService
from policies.layout import RootLayout

EVAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "memory_eval"


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow  # embeds the whole check set
@pytest.mark.skipif(not EVAL.is_dir(), reason=f"the shared check set is not at {EVAL}")
def test_recall_at_5(tmp_path: Path) -> None:
    svc = MemoryService(RootLayout(tmp_path))
    try:
        ids: dict[str, str] = {}
        for m in _jsonl(EVAL / "memories.jsonl"):
            out = svc.add(
                str(m["content"]),
                tags=list(m.get("tags", [])),  # type: ignore[call-overload]  # rows of a JSONL file read as plain JSON
                project=str(m.get("project", "")),
                importance=m.get("importance"),  # type: ignore[arg-type]  # rows of a JSONL file read as plain JSON
                memory_type=m.get("memory_type"),  # type: ignore[arg-type]  # rows of a JSONL file read as plain JSON
            )
            assert out["status"] == "added", out
            ids[out["id"]] = str(m["id"])
        queries = _jsonl(EVAL / "queries.jsonl")
        found = 0
        for q in queries:
            top = [ids[r["id"]] for r in svc.search(str(q["query"]), limit=5)]
            found += any(e in top for e in q["expected"])  # type: ignore[attr-defined]  # rows of a JSONL file read as plain JSON
        recall = found / len(queries)
        print(f"recall@5 = {recall:.2f} over {len(queries)} queries")
        assert recall >= 0.9
    finally:
        svc.close()
