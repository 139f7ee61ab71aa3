"""The grounded chat without a model or an embedder: what is a question, the answer's guard (citations
that exist, loops cut), the history bounded in tokens, the memories given with the message."""

from __future__ import annotations

import re

import pytest

from agent.memory.rules import derive, is_question
from agent.voice.chat import AnswerGuard, Session, known_block, loop_start
from agent.voice.prompt import MEMORIES_HEADER, assemble


@pytest.mark.parametrize(
    "text",
    [
        "¿soy alérgico a algo?",
        "¿Por qué falla el backup?",
        "Oye, ¿cuándo es el cumpleaños de mi hermana? Gracias",
        "qué tengo pendiente para mañana",  # typed without its marks
        "cuándo vence el seguro?",
        "When is Emma's birthday?",
        "¿Qué cosas tengo por hacer? #pendiente",
    ],
)
def test_a_question_is_a_question(text: str) -> None:
    assert is_question(text)
    meta = derive(text)
    assert meta.question and meta.memory_type == "episode"


@pytest.mark.parametrize(
    "text",
    [
        "Soy alérgico a los frutos secos.",
        "Soy alérgico a los frutos secos. ¿Qué puedo cenar hoy?",  # states a fact too
        "Que no se me olvide llamar a mamá el domingo.",  # a reminder, not a question
        "El backup falla porque /mnt/respaldo no está montado.",
        "Como cada lunes, fui al gimnasio.",
        "Regla: ¿dudas? Nunca borres nada sin preguntar.",
    ],
)
def test_a_statement_is_not(text: str) -> None:
    assert not is_question(text)
    assert not derive(text).question


def test_a_question_is_never_typed_a_fact() -> None:
    assert derive("Soy alérgico a los frutos secos.").memory_type == "fact"
    assert derive("¿Soy alérgico a algo?").memory_type == "episode"


def _guarded(pieces: list[str], sources: set[str]) -> tuple[AnswerGuard, str]:
    shown: list[str] = []
    guard = AnswerGuard(sources, shown.append)
    for piece in pieces:
        guard.feed(piece)
    guard.finish()
    return guard, "".join(shown)


def test_a_citation_is_shown_only_if_it_exists() -> None:
    real = "logs/2026-11-20.md:12"
    pieces = [
        "Eres alérgico a los frutos ",
        "secos [logs/2026",
        "-11-20.md:12]. Lo dice ",
        "[logos/2026-11-27.md:84] y [alma-ctl].",
    ]
    guard, shown = _guarded(pieces, {real, "alma-ctl"})
    assert f"[{real}]" in shown and "[alma-ctl]" in shown
    assert "logos" not in shown and guard.invented == ["logos/2026-11-27.md:84"]
    assert "logos" not in guard.text
    # A path without an extension, or a name with a line, is a citation too.
    guard, shown = _guarded(["Dice [logs/1987-04-30:5] y [notas:12] y [logs/2026-14-30]."], set())
    assert shown == "Dice  y  y ." and len(guard.invented) == 3
    # Brackets that are not citations pass as they are, and so does one never closed.
    guard, shown = _guarded(["Una lista [1, 2] y [ver nota] y [abierto"], set())
    assert shown == "Una lista [1, 2] y [ver nota] y [abierto" and not guard.invented


def test_a_loop_is_cut_where_it_began() -> None:
    answer = "La copia falla porque el disco no está montado. "
    loop = "Revisa el disco externo. " * 6
    guard, _shown = _guarded([answer, *re.findall(r"\S+\s*", loop)], set())
    assert guard.looped
    assert guard.text == answer + "Revisa el disco externo. "
    # Numbered lines that repeat themselves are a loop too.
    lines = "".join(f"{i}. Revisa el montaje del disco.\n" for i in range(1, 6))
    assert loop_start(lines) == len("1. Revisa el montaje del disco.")


def test_ordinary_prose_is_not_a_loop() -> None:
    text = (
        "Tu hermana Lucía cumple años el 3 de mayo. Vive en Valencia desde hace años y le "
        "encanta el jazz, así que un disco o unas entradas para un concierto le gustarían.\n"
        "- Opción 1: un vinilo.\n- Opción 2: entradas.\n- Opción 3: una cena.\n"
        "| mes | día |\n|------|------|\n|------|------|\n"
    )
    guard, shown = _guarded([text[i : i + 5] for i in range(0, len(text), 5)], set())
    assert not guard.looped and shown == text == guard.text


def test_history_is_bounded_in_halves() -> None:
    session = Session("s")
    for i in range(10):
        session.remember(f"pregunta {i}", "respuesta " * 20, lambda t: len(t.split()))
    assert sum(session.tokens) == 10 * 22
    session.bound(100)
    assert sum(session.tokens) <= 50 and session.turns[0] == ("user", "pregunta 8")
    before = list(session.turns)
    session.bound(100)  # under the bound: nothing moves, the prompt's start stays the same
    assert list(session.turns) == before


def test_memories_go_with_the_message_and_history_has_a_cap() -> None:
    history = [("user", "hola " * 30), ("assistant", "qué tal " * 15)] * 4
    prompt = assemble(
        persona="Eres ALMA.",
        context="- principio uno",
        memories="Lo que sé:\n- Soy alérgico a los frutos secos.  [alma-ctl]",
        history=history,
        message="¿tengo alguna alergia?",
        n_ctx=4096,
        max_answer=256,
        count=lambda t: len(t.split()),
        history_tokens=100,
    )
    system, last = prompt.messages[0]["content"], prompt.messages[-1]["content"]
    assert "principio uno" in system and "frutos secos" not in system
    assert last.startswith(MEMORIES_HEADER) and last.endswith("¿tengo alguna alergia?")
    assert "frutos secos" in last
    assert prompt.turns_kept == 2 and prompt.turns_dropped == 6


def test_the_known_block_quotes_date_and_source() -> None:
    block = known_block(
        [
            {
                "content": "Soy alérgico a los  frutos secos.",
                "source": "logs/2026-11-20.md:12",
                "created_at": "2026-11-20T09:07:00+01:00",
            }
        ]
    )
    assert "«Soy alérgico a los frutos secos.» (2026-11-20, logs/2026-11-20.md:12)" in block
