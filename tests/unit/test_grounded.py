"""The grounded chat without a model or an embedder: what is a question, the history bounded in
tokens, the memories given with the message (the answer's check: test_verify.py)."""

from __future__ import annotations

import pytest

from agent.memory.rules import derive, is_question
from agent.voice.chat import Session, known_block
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
        "¿sabes qué hora es?",
        "sabes que hora es?",  # typed without the accent: still asks
        "¿Sabes cómo se llama mi perro?",
        "do you know what my dog is called?",
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
        "¿sabes que mi perro se llama Toby?",  # a question that tells the dog's name
        "sabes que mi perro se llama Toby?",
        "¿Sabías que me mudé a Valencia en 2020?",
        "Did you know that my dog is called Toby?",
    ],
)
def test_a_statement_is_not(text: str) -> None:
    assert not is_question(text)
    assert not derive(text).question


def test_a_question_is_never_typed_a_fact() -> None:
    assert derive("Soy alérgico a los frutos secos.").memory_type == "fact"
    assert derive("¿Soy alérgico a algo?").memory_type == "episode"


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
