"""Pure parts of the memory: log parsing, rules, text keys, duplicate test, model output, export."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from agent.memory.context import read_principles
from agent.memory.enrich import validate_output
from agent.memory.export import export
from agent.memory.logparse import parse_log
from agent.memory.reinforce import same_claim
from agent.memory.rules import derive
from policies.errors import BadArgumentError
from state.memory.normalize import fold, tag_key

LOG = """# 2026-11-22

Nota suelta antes de cualquier turno.

## 10:41:03 · usuario
Hoy operé con 5% de riesgo tras dormir 4 horas... #trading #Fatiga

## 10:41:05 · alma
Entiendo. Con poco sueño el juicio de riesgo empeora.
<!-- model: mistral-7b-instruct q4 · tokens: 182 · ms: 1530 -->

Nota escrita a mano después de la respuesta.

## 10:45:00 · usuario
Primer párrafo del mensaje.

Segundo párrafo del mensaje,
en dos líneas.
"""


def test_parse_turns_notes_and_model_comments() -> None:
    paras = parse_log(LOG.encode(), final=True)
    kinds = [(p.kind, p.speaker) for p in paras]
    assert kinds == [
        ("note", ""),
        ("turn", "usuario"),
        ("turn", "alma"),
        ("note", ""),
        ("turn", "usuario"),
        ("turn", "usuario"),
    ]
    assert all("<!--" not in p.text for p in paras)
    assert paras[1].text.endswith("#trading #Fatiga") and paras[1].line == 6
    assert paras[5].text == "Segundo párrafo del mensaje,\nen dos líneas."
    data = LOG.encode()
    for p in paras:  # byte offsets point at the paragraph itself
        assert data[p.start : p.end].decode().strip().startswith(p.text.splitlines()[0])


def test_last_paragraph_waits_until_complete_or_final() -> None:
    growing = b"# 2026-11-22\n\n## 10:00:00 \xc2\xb7 usuario\nEstoy escribiendo esto"
    assert not parse_log(growing)[-1].complete
    assert not parse_log(growing + b"\n")[-1].complete  # more lines may follow
    assert parse_log(growing + b"\n\n")[-1].complete  # a blank line closes it
    assert parse_log(growing + b"\n", final=True)[-1].complete
    assert not parse_log(growing, final=True)[-1].complete  # a cut line never is


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
    (tmp_path / "2026-11-22.md").write_text(LOG)
    rows = export(tmp_path, "chatml")
    assert len(rows) == 1
    user, assistant = rows[0]["messages"]
    assert user["content"].startswith("Hoy operé") and "riesgo empeora" in assistant["content"]
    assert "<!--" not in assistant["content"]
    alpaca = export(tmp_path, "alpaca")
    assert set(alpaca[0]) == {"instruction", "input", "output"}
    with pytest.raises(BadArgumentError):
        export(tmp_path, "csv")
