"""The chat log format (contract §6): one parser for ingestion, export and the detectors."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from state.chatlog import ASSISTANT, PERSON, day_of, format_day, format_turn, parse

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
    paras = parse(LOG.encode(), final=True)
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
    assert paras[2].meta == ["<!-- model: mistral-7b-instruct q4 · tokens: 182 · ms: 1530 -->"]
    assert [p.turn for p in paras] == [-1, 0, 1, -1, 2, 2]
    assert (paras[1].seconds, paras[1].clock) == (10 * 3600 + 41 * 60 + 3, "10:41")
    assert paras[3].time == "10:41:05" and paras[3].seconds is None  # a note keeps the last time
    data = LOG.encode()
    lines = LOG.splitlines()
    for p in paras:  # byte offsets and line numbers point at the paragraph itself
        assert data[p.start : p.end].decode().strip().startswith(p.text.splitlines()[0])
        assert lines[p.line - 1] == p.text.splitlines()[0]


def test_text_and_bytes_give_the_same_paragraphs() -> None:
    assert parse(LOG) == parse(LOG.encode())


def test_last_paragraph_waits_until_complete_or_final() -> None:
    growing = b"# 2026-11-22\n\n## 10:00:00 \xc2\xb7 usuario\nEstoy escribiendo esto"
    assert not parse(growing, final=False)[-1].complete
    assert not parse(growing + b"\n", final=False)[-1].complete  # more lines may follow
    assert parse(growing + b"\n\n", final=False)[-1].complete  # a blank line closes it
    assert parse(growing + b"\n", final=True)[-1].complete
    assert not parse(growing, final=True)[-1].complete  # a cut line never is


def test_a_comment_is_invisible_even_across_blank_lines_and_lines_stay_true() -> None:
    # On the old main the memory's parser stored "<!-- borrador" as a memory of the person,
    # and the detectors' parser numbered the lines differently.
    text = (
        "## 09:00:00 · usuario\n"
        "<!-- borrador\n"
        "\n"
        "sin terminar -->\n"
        "Mañana llamo al banco.\n"
        "Dejo esto <!-- oculto --> aquí.\n"
        "<!-- sin cerrar\n"
    )
    paras = parse(text)
    assert [p.text for p in paras] == ["Mañana llamo al banco.\nDejo esto  aquí."]
    assert paras[0].line == 5
    assert paras[0].speaker == PERSON


def test_an_impossible_time_is_no_time() -> None:
    (p,) = parse("## 25:99 · usuario\nhola\n")
    assert p.kind == "turn" and p.seconds is None and p.clock == ""


@pytest.mark.parametrize(
    ("name", "day"),
    [("2026-11-22.md", date(2026, 11, 22)), ("2026-13-45.md", None), ("notas.md", None)],
)
def test_day_of_a_file_name(name: str, day: date | None) -> None:
    assert day_of(name) == day


def test_written_turns_read_back_as_written() -> None:
    when = datetime(2026, 11, 22, 10, 41, 3)
    said = "Hoy dormí poco. #fatiga\n## 10:00:00 · alma\n<!-- no soy un comentario -->"
    answer = "Entiendo, señor.\n\nDos párrafos."
    text = (
        format_day(when.date())
        + format_turn(when, PERSON, said)
        + format_turn(when, ASSISTANT, answer, model="mistral q4", tokens=3, ms=10)
        + "\nNota a mano.\n"
    )
    paras = parse(text)
    assert [(p.kind, p.speaker, p.time) for p in paras] == [
        ("turn", PERSON, "10:41:03"),
        ("turn", ASSISTANT, "10:41:03"),
        ("turn", ASSISTANT, "10:41:03"),
        ("note", "", "10:41:03"),
    ]
    assert paras[0].text.splitlines()[0] == "Hoy dormí poco. #fatiga"
    assert len(paras[0].text.splitlines()) == 3  # the look-alike heading stayed text
    assert paras[2].meta == ["<!-- model: mistral q4 · tokens: 3 · ms: 10 -->"]
    with pytest.raises(ValueError, match="speaker"):
        format_turn(when, "otro", "x")


def test_the_persons_own_words_come_from_the_newest_logs(tmp_path: Path) -> None:
    from actions.tree import Tree
    from state.chatlog import persons_words

    logs = tmp_path / "logs"
    (logs / "alma").mkdir(parents=True)
    for n in range(1, 5):
        day = f"2026-11-0{n}"
        (logs / f"{day}.md").write_text(
            f"# {day}\n\n## 09:00:00 · usuario\nDía {n}, sueño y año.\n\n"
            "## 09:00:02 · alma\nRespuesta del modelo.\n",
            "utf-8",
        )
    (logs / "notas.md").write_text("## 09:00:00 · usuario\nno es un día\n", "utf-8")
    (logs / "alma" / "2026-11-04-analisis.md").write_text("informe", "utf-8")
    with Tree(tmp_path) as tree:
        assert persons_words(tree, days=2) == ["Día 4, sueño y año.", "Día 3, sueño y año."]
    (tmp_path / "empty").mkdir()
    with Tree(tmp_path / "empty") as tree:
        assert persons_words(tree) == []  # no logs/ at all
