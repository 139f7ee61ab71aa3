"""Recall: what ALMA remembers bears on what it proposes (principles, past rejections)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from actions.ops import Keep, Mkdir, Move, Trash
from actions.planners import PlanResult
from agent.memory.reasons import ReasonReader
from agent.memory.recall import MemoryNote, apply_recall, recall_notes, rejection_memory
from state.memory import get_embedder


@pytest.fixture(scope="module")
def reader() -> ReasonReader:
    """Reasons read as the daemon reads them: the packaged embedder and model."""
    return ReasonReader(get_embedder("e5-small").query)


def _finding(target: str = "user/proyectos/tesis", kind: str = "organize") -> PlanResult:
    return PlanResult(
        kind=kind,
        target=target,
        title=f"Ordenar {target}",
        reason="20 archivos sueltos",
        evidence=[],
        plan=[Mkdir(f"{target}/pdf"), Move(f"{target}/a.pdf", f"{target}/pdf/a.pdf")],
        files=1,
        fingerprint="f" * 16,
    )


def _dupes() -> PlanResult:
    return PlanResult(
        kind="duplicates",
        target="user",
        title="Copias idénticas en user",
        reason="2 copias",
        evidence=[],
        plan=[
            Keep("user/a.txt"),
            Trash("user/proyectos/tesis/a.txt"),
            Trash("user/fotos/a.txt"),
        ],
        files=2,
        fingerprint="d" * 16,
    )


class FakeMemory:
    def __init__(self, memories: list[dict[str, Any]]) -> None:
        self.memories = memories

    def list(self, *, limit: int = 20, memory_type: str | None = None, **_: Any) -> list[Any]:
        return [m for m in self.memories if memory_type in (None, m["memory_type"])][:limit]


def _mem(mid: str, content: str, memory_type: str = "principle") -> dict[str, Any]:
    return {"id": mid, "content": content, "memory_type": memory_type}


def test_a_principle_naming_the_folder_suppresses_the_suggestion_and_names_the_memory() -> None:
    notes = recall_notes(FakeMemory([_mem("m1", "Nunca toques user/proyectos/tesis, es mía.")]))
    out = apply_recall(_finding(), notes)
    assert out.finding is None
    assert out.by == ["m1"]
    assert "m1" in out.why and "user/proyectos/tesis" in out.why


def test_a_principle_on_a_subfolder_reshapes_the_plan_and_the_evidence_names_it() -> None:
    notes = recall_notes(FakeMemory([_mem("m1", "Nunca toques user/proyectos/tesis")]))
    out = apply_recall(_dupes(), notes)
    assert out.finding is not None
    ops = out.finding.plan
    assert Trash("user/proyectos/tesis/a.txt") not in ops
    assert Trash("user/fotos/a.txt") in ops
    assert out.finding.files == 1
    assert any("m1" in e and "user/proyectos/tesis" in e for e in out.finding.evidence)


def test_the_copy_a_dedupe_keeps_inside_a_protected_folder_is_still_guarded() -> None:
    finding = replace(
        _dupes(), plan=[Keep("user/proyectos/tesis/a.txt"), Trash("user/fotos/a.txt")]
    )
    notes = recall_notes(FakeMemory([_mem("m1", "Nunca toques user/proyectos/tesis")]))
    out = apply_recall(finding, notes)
    assert out.finding == finding and out.by == []


def test_a_principle_that_is_not_a_prohibition_or_names_another_folder_changes_nothing() -> None:
    notes = recall_notes(
        FakeMemory(
            [
                _mem("m1", "Siempre ordena user/proyectos/tesis por fecha"),
                _mem("m2", "Nunca toques user/otra"),
                _mem("m3", "No toques user/proyectos/tesis-vieja"),
            ]
        )
    )
    out = apply_recall(_finding(), notes)
    assert out.finding is not None and out.finding.plan == _finding().plan
    assert out.by == []


def test_negation_of_the_prohibition_is_read_in_spanish_with_accents() -> None:
    notes = recall_notes(FakeMemory([_mem("m1", "JAMÁS muevas nada de user/proyectos/tesis.")]))
    assert apply_recall(_finding(), notes).finding is None


def test_a_rejection_reason_of_ownership_suppresses_the_next_proposal_there(
    reader: ReasonReader,
) -> None:
    text = rejection_memory(7, "organize", "user/fotos", "esa carpeta la ordeno yo")
    notes = recall_notes(FakeMemory([_mem("r1", text, "decision")]), reader)
    out = apply_recall(_finding("user/fotos"), notes)
    assert out.finding is None
    assert out.by == ["r1"] and "esa carpeta la ordeno yo" in out.why
    # another kind in the same folder, or the same kind elsewhere, is still proposed
    assert apply_recall(_finding("user/fotos", kind="temp_cleanup"), notes).finding is not None
    assert apply_recall(_finding("user/otra"), notes).finding is not None


def test_another_rejection_reason_is_shown_with_the_next_proposal(reader: ReasonReader) -> None:
    text = rejection_memory(7, "organize", "user/fotos", "prefiero por año")
    notes = recall_notes(FakeMemory([_mem("r1", text, "decision")]), reader)
    out = apply_recall(_finding("user/fotos"), notes)
    assert out.finding is not None
    assert any("r1" in e and "prefiero por año" in e for e in out.finding.evidence)


def test_no_memory_store_recalls_nothing() -> None:
    assert recall_notes(None) == []
    out = apply_recall(_finding(), [])
    assert out.finding == _finding()


def test_notes_are_parsed_from_plain_memories() -> None:
    notes = recall_notes(FakeMemory([_mem("m1", "nunca toques user/a/b ni user/c")]))
    assert notes == [
        MemoryNote(
            id="m1",
            content="nunca toques user/a/b ni user/c",
            role="principle",
            paths=("user/a/b", "user/c"),
            forbids=True,
            kind=None,
            reason=None,
        )
    ]


def test_a_principle_on_a_folder_above_the_plans_files_cuts_only_those_below_it() -> None:
    finding = replace(
        _dupes(),
        plan=[
            Keep("user/a.jpg"),
            Trash("user/fotos/2024/verano/a.jpg"),
            Trash("user/fotos/2024-viejas/a.jpg"),
            Trash("user/fotos/a.jpg"),
        ],
    )
    notes = recall_notes(
        FakeMemory(
            [
                _mem("m1", "No toques user/fotos/2024"),
                _mem("m2", "Nunca toques user/fotos/20"),  # a prefix of names, not a folder
                *(_mem(f"o{i}", f"Nunca toques user/otra{i}") for i in range(300)),
            ]
        )
    )
    out = apply_recall(finding, notes)
    assert out.finding is not None and out.by == ["m1"]
    assert [op.path for op in out.finding.plan if isinstance(op, Keep | Trash)] == [
        "user/a.jpg",
        "user/fotos/2024-viejas/a.jpg",
        "user/fotos/a.jpg",
    ]
    assert out.finding.files == 2


def test_a_reason_asking_for_no_subfolders_gives_no_mkdir_there_again(reader: ReasonReader) -> None:
    for reason in (
        "No quiero subcarpetas en Descargas",
        "sin subcarpetas, gracias",
        "no subfolders",
    ):
        text = rejection_memory(4, "organize", "user/Descargas", reason)
        notes = recall_notes(FakeMemory([_mem("r4", text, "decision")]), reader)
        out = apply_recall(_finding("user/Descargas"), notes)
        assert out.finding is None, reason  # organizing is making subfolders: nothing to offer
        assert out.by == ["r4"] and reason in out.why
        assert "parecido" not in out.why and "something like this" not in out.why


def test_never_delete_anything_of_a_folder_protects_it_for_every_kind(reader: ReasonReader) -> None:
    text = rejection_memory(5, "duplicates", "user", "Nunca borres nada de user/fotos")
    notes = recall_notes(FakeMemory([_mem("r5", text, "decision")]), reader)
    out = apply_recall(_dupes(), notes)
    assert out.finding is not None
    assert [op.path for op in out.finding.plan if isinstance(op, Trash)] == [
        "user/proyectos/tesis/a.txt"
    ]
    assert any("r5" in e and "user/fotos" in e for e in out.finding.evidence)
    temp = _finding("user/fotos", kind="temp_cleanup")
    assert apply_recall(temp, notes).finding is None  # another kind, the same folder
    assert apply_recall(_finding("user/otra"), notes).finding is not None


def test_a_protecting_reason_without_a_path_protects_the_rejected_target(
    reader: ReasonReader,
) -> None:
    text = rejection_memory(6, "temp_cleanup", "user/fotos", "nunca borres nada de aquí")
    notes = recall_notes(FakeMemory([_mem("r6", text, "decision")]), reader)
    assert apply_recall(_finding("user/fotos", kind="duplicates"), notes).finding is None


def test_what_was_taken_from_a_reason_is_listed_with_the_memory_that_undoes_it(
    reader: ReasonReader,
) -> None:
    from agent.memory.recall import taken

    notes = recall_notes(
        FakeMemory(
            [
                _mem(
                    "r1", rejection_memory(1, "organize", "user/D", "sin subcarpetas"), "decision"
                ),
                _mem(
                    "r2",
                    rejection_memory(2, "duplicates", "user", "nunca borres nada de user/F"),
                    "decision",
                ),
                _mem(
                    "r3", rejection_memory(3, "organize", "user/x", "prefiero por año"), "decision"
                ),
                _mem(
                    "r4",
                    rejection_memory(4, "organize", "user/y", "ahora no puedo, luego"),
                    "decision",
                ),
                _mem("p1", "Nunca toques user/tesis", "principle"),
            ]
        ),
        reader,
    )
    got = {t["memory"]: t for t in taken(notes)}
    assert sorted(got) == ["r1", "r2", "r3"]  # a reason only shown, and a principle, take nothing
    assert got["r3"]["took"] == "user/x is organized by month"
    assert got["r1"]["took"] == "organize is not proposed for user/D"
    assert "user/F" in got["r2"]["took"] and got["r2"]["undo"] == "alma-ctl memory forget r2"
