"""The held-out evaluator reads any set in set C's format: the fourth set (heldout_d) is run by
dropping its two files into tests/data/heldout_d."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import heldout_eval
from tests.support.heldout_eval import heldout_questions, set_folder, subjects


def _write(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_set_in_c_format_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heldout_eval, "DATA", tmp_path)
    folder = tmp_path / "heldout_d"
    memory = {"type": "fact", "date": "2026-01-01", "project": None}
    _write(
        folder,
        "memories.jsonl",
        [
            {
                **memory,
                "id": "m-1",
                "content": "Nuria odia el cilantro.",
                "tags": ["cilantro"],
                "role": "answer",
            },
            {
                **memory,
                "id": "m-2",
                "content": "Nuria cocina con perejil.",
                "tags": ["cilantro"],
                "role": "near",
            },
            {**memory, "id": "m-3", "content": "Hoy llovió.", "tags": ["tiempo"], "role": "far"},
        ],
    )
    question = {"lang": "es", "key": [], "trap": False}
    _write(
        folder,
        "questions.jsonl",
        [
            {
                **question,
                "id": "q-1",
                "question": "¿qué hierba odia mi pareja?",
                "kind": "answered",
                "answer_ids": ["m-1"],
            },
            {
                **question,
                "id": "q-2",
                "question": "¿qué pone Nuria en la paella?",
                "kind": "unanswerable",
                "answer_ids": [],
                "trap": True,
            },
            {
                **question,
                "id": "q-3",
                "question": "¿cómo se llama mi perro?",
                "kind": "unanswerable",
                "answer_ids": [],
            },
        ],
    )
    assert set_folder("heldout_d") == folder
    cases, traps = subjects(folder)
    assert cases == {
        "Nuria odia el cilantro.": {"Nuria odia el cilantro.", "Nuria cocina con perejil."}
    }
    assert traps == {"¿qué pone Nuria en la paella?"}
    asked, absent, trapped = heldout_questions("all", folder)
    assert [a[0] for a in asked] == ["¿qué hierba odia mi pareja?"]
    assert [a[0] for a in absent] == ["¿cómo se llama mi perro?"]
    assert [t[0] for t in trapped] == ["¿qué pone Nuria en la paella?"]


def test_a_missing_set_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heldout_eval, "DATA", tmp_path)
    with pytest.raises(SystemExit, match="no held-out set there"):
        set_folder("heldout_d")
