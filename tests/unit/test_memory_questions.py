"""The person's questions never become memories (what they state in the chat does); stores
from before, which kept them, are migrated, and the migration undone exactly. Real
embedded Chroma and the real embedder, as tests/unit/test_memory_service.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.memory import migrate
from agent.memory.service import MemoryService
from policies.layout import RootLayout
from state.memory.models import MemoryRecord
from tests.support.grounded_eval_data import ASKED, FACT, OTHERS

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _open(root: Path) -> MemoryService:
    return MemoryService(RootLayout(root), clock=lambda: NOW, settle_seconds=0.0)


@pytest.fixture
def root(tmp_path: Path, embedder_loaded: None) -> Path:
    for sub in ("system", "logs", "user", ".alma"):
        (tmp_path / sub).mkdir(parents=True)
    return tmp_path


@pytest.fixture
def svc(root: Path) -> Iterator[MemoryService]:
    service = _open(root)
    yield service
    service.close()


def _chat_log(root: Path, *questions: str) -> None:
    parts = ["# 2026-11-22\n"]
    for n, q in enumerate(questions):
        parts.append(f"## 10:{n:02d}:00 · usuario\n{q}\n")
        parts.append(f"## 10:{n:02d}:05 · alma\nNo lo sé.\n")
    (root / "logs" / "2026-11-22.md").write_text("\n".join(parts), encoding="utf-8")


ASKED_TOO = (
    "¿tengo alguna alergia alimentaria?",
    "¿por qué falla el backup?",
    "What is my dog called?",
    "¿sabes qué hora es?",
)
STATED = "¿sabes que mi perro se llama Toby?"


def test_questions_never_become_memories_and_a_statement_does(
    svc: MemoryService, root: Path
) -> None:
    fact = svc.add(FACT)["id"]
    for text in OTHERS:
        svc.add(text)
    before = svc.count()
    _chat_log(root, ASKED, *ASKED_TOO, STATED)
    svc.rescan_logs()
    mine = [m for m in svc.list(limit=100) if m["kind"] != "summary"]  # the day's, derived
    stored = {m["content"] for m in mine}
    assert not stored & {ASKED, *ASKED_TOO}
    assert STATED in stored and len(mine) == before + 1  # the statement, and only it
    found = svc.search("¿tengo alguna alergia alimentaria?", limit=10, count_use=False)
    order = [r["content"] for r in found]
    assert order[0] == FACT, order
    scores = [r["score"] for r in found]
    assert scores == sorted(scores, reverse=True) and min(scores) >= 0.005  # none shown as 0.00
    ctx = svc.context("¿Tengo alguna alergia?", count_use=False)
    ids = [i["id"] for i in ctx["items"]]
    assert fact in ids
    assert "created_at" in next(i for i in ctx["items"] if i["id"] == fact)


def test_an_old_store_is_migrated_and_the_migration_undone(root: Path) -> None:
    svc = _open(root)
    old = MemoryRecord(
        id="q" * 32,
        content=ASKED,
        memory_type="fact",  # "soy ..." typed it a fact before
        layer="L1",
        kind="turn",
        importance=4,
        created_at="2026-11-20T10:00:00+00:00",
        source="logs/2026-11-20.md:3",
    )
    svc._mem.remember([old])
    fact = svc.add(FACT)
    svc.close()
    db = root / ".alma" / "memory" / "memory_state.db"
    import sqlite3

    with sqlite3.connect(db) as con:  # the store as it was before the migration existed
        con.execute("DELETE FROM migrations")
    svc = _open(root)
    try:
        now = svc.show(old.id)
        assert (now["kind"], now["memory_type"], now["layer"]) == ("question", "episode", "L0")
        assert svc.show(fact["id"])["kind"] == "add"
        assert svc.undo_question_migration() == 1
        back = svc.show(old.id)
        assert (back["kind"], back["memory_type"], back["layer"], back["importance"]) == (
            "turn",
            "fact",
            "L1",
            4,
        )
    finally:
        svc.close()
    svc = _open(root)  # undone stays undone
    try:
        assert svc.show(old.id)["kind"] == "turn"
        assert migrate.undo_questions(svc.store, svc._state) == 0
    finally:
        svc.close()
