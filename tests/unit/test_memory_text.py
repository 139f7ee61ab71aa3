"""Pure parts of the memory: log parsing, rules, text keys, duplicate test, model output, export."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from agent.memory.context import MAX_PRINCIPLES_BYTES, read_principles
from agent.memory.enrich import validate_output
from agent.memory.export import export
from agent.memory.reinforce import same_claim
from agent.memory.rules import derive
from policies.errors import BadArgumentError
from policies.text import fold, tag_key
from tests.unit.test_chatlog import LOG


def test_rules_tags_project_dates_and_types() -> None:
    meta = derive(
        "Mañana ordeno la carpeta de ProyectoY, estoy agotado. #Pendiente",
        projects=["proyectoY", "vida"],
        day=date(2026, 11, 17),
        base=2,
    )
    assert meta.tags[0] == "pendiente" and "fatiga" in meta.tags
    assert meta.project == "proyectoY"
    assert meta.event_date == "2026-11-18"
    assert meta.memory_type == "episode"
    assert derive("Recuérdame que nunca opere sin stop. #principio").memory_type == "principle"
    assert derive("Recuérdame que nunca opere sin stop.").importance == 5
    assert derive("Me llamo Ana y vivo en Valencia.").memory_type == "fact"
    assert derive("Hoy prefiero no salir.").memory_type == "episode"
    assert derive("Sí.", base=2).importance == 1
    assert derive("Esta mañana dormí poco.", day=date(2026, 1, 5)).event_date == "2026-01-05"


def test_tag_keys_ignore_case_and_accents_but_keep_enye() -> None:
    assert tag_key("#Fatiga") == tag_key("fatiga") == tag_key("FÁTIGA")
    assert tag_key("Energía") == "energia"
    assert fold("Año") == "año" != fold("ano")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (
            "Llevo todo el día con esto, estoy agotado.",
            "Estoy agotado, llevo todo el día con esto",
            True,
        ),
        ("El disco no estaba montado.", "El disco estaba montado.", False),
        ("Hoy dormí 4 horas.", "Hoy dormí 8 horas.", False),
        ("Mi perro se llama Max.", "Mi gato se llama Max.", False),
        ("Otra vez hasta medianoche #fatiga", "otra vez hasta MEDIANOCHE", True),
    ],
)
def test_same_claim(a: str, b: str, same: bool) -> None:
    assert same_claim(a, b) is same


def test_model_output_is_validated_and_clamped() -> None:
    ok = validate_output({"importance": 9, "tags": ["Salud", " ", "x" * 99], "memory_type": "Fact"})
    assert ok is not None and ok.importance == 5 and ok.memory_type == "fact"
    assert ok.tags == ["Salud", "x" * 40]
    assert validate_output({"importance": "3"}) is not None
    assert validate_output({"importance": 0}).importance == 1  # type: ignore[union-attr]  # the line above asserts it is not None
    assert validate_output({"memory_type": "invented"}).memory_type is None  # type: ignore[union-attr]  # the line above asserts it is not None
    for bad in ({"importance": "mucho"}, {"unknown": 1}, {"tags": "salud"}, ["x"], None, "{}"):
        assert validate_output(bad) is None


def test_principles_file_items(tmp_path: Path) -> None:
    path = tmp_path / "principles.md"
    path.write_text(
        "# Principios\n\n- Uno.\n- Dos,\n  que sigue.\n\nUn párrafo\nlargo.\n<!-- nota -->\n"
    )
    items = read_principles(path)
    assert [i.content for i in items] == ["Uno.", "Dos, que sigue.", "Un párrafo largo."]
    assert items[0].source == "system/principles.md:3"
    assert read_principles(tmp_path / "missing.md") == []


def test_export_pairs(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "2026-11-22.md").write_text(LOG)
    rows = export(tmp_path, "chatml")["train"]
    assert len(rows) == 1
    user, assistant = rows[0]["messages"]
    assert user["content"].startswith("Hoy operé") and "riesgo empeora" in assistant["content"]
    assert "<!--" not in assistant["content"]
    alpaca = export(tmp_path, "alpaca")["train"]
    assert set(alpaca[0]) == {"instruction", "input", "output"}
    with pytest.raises(BadArgumentError):
        export(tmp_path, "csv")


def test_principles_are_read_the_one_safe_way(tmp_path: Path) -> None:
    """system/principles.md is read at every chat message and every context, through
    actions.safe_read.read_file (the one reader of files below the root): a link is not followed,
    a FIFO does not block, a sparse gigabyte is not read whole."""
    import os
    import threading

    system = tmp_path / "system"
    system.mkdir()
    path = system / "principles.md"
    secret = tmp_path / "secreto.md"
    secret.write_text("- contraseña-del-banco-1234\n")
    path.symlink_to(secret)
    assert read_principles(path) == []

    path.unlink()
    os.mkfifo(path)
    out: list[object] = []
    reader = threading.Thread(target=lambda: out.append(read_principles(path)), daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # let the blocked reader go before failing
        with open(path, "wb"):
            pass
        reader.join(30)
        pytest.fail("reading principles.md blocked on a FIFO")
    assert out == [[]]

    path.unlink()
    with open(path, "wb") as f:
        f.write(b"- Uno.\n\n")
        f.truncate(1 << 30)  # sparse: no disk, a gigabyte to whoever reads it whole
    items = read_principles(path)
    assert items[0].content == "Uno."
    assert sum(len(i.content) for i in items) <= MAX_PRINCIPLES_BYTES
