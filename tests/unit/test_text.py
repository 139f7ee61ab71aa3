"""policies.text: the one folding, hashtag, tag and printable rule every part calls."""

from __future__ import annotations

import os

import pytest

from policies.text import (
    clean_tag,
    fold,
    hashtags,
    loose_fold,
    printable,
    printable_name,
    project_key,
    tag_key,
    without_hashtags,
)


def test_fold_ignores_case_and_accents_but_keeps_enye() -> None:
    assert fold("ÁRBOL Energía") == "arbol energia"
    assert fold("Año") == "año" != fold("ano")
    assert fold("PEQUEÑO") == "pequeño"
    assert fold("plain ascii") == "plain ascii"


def test_loose_fold_reads_enye_as_n_too() -> None:
    assert loose_fold("Mañana, Autonomía") == "manana, autonomia"
    assert loose_fold("¡SUEÑO!") == "¡sueno!"
    assert loose_fold("pingüino") == "pinguino"


def test_tag_and_project_keys_share_the_words_rule() -> None:
    assert tag_key("#Fatiga") == tag_key("fatiga") == tag_key("FÁTIGA") == "fatiga"
    assert tag_key("#Año") != tag_key("ano")
    assert clean_tag("  #Energía  Alta ") == "energía-alta"
    assert project_key(" ProyectoÑ ") == "proyectoñ"


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("Hoy operé con 5% de riesgo #trading #fatiga", ["trading", "fatiga"]),
        ("#Energía y #año-nuevo, #mi_tag.", ["Energía", "año-nuevo", "mi_tag"]),
        ("Cerrado en #2024, ver #12 y #3a", []),  # numbers: a year, a suggestion's id
        ("Programo en C# y leo &#39;cita&#39; en page/#top", []),
        ("(#salud) o «#sueño»", ["salud", "sueño"]),
    ],
)
def test_a_hashtag_is_a_word_that_starts_with_a_letter(text: str, tags: list[str]) -> None:
    assert hashtags(text) == tags


def test_without_hashtags_keeps_the_numbers() -> None:
    assert without_hashtags("Hecho #trading en #2024") == "Hecho   en #2024"
    assert without_hashtags("a #b c", "") == "a  c"


def test_printable_shows_controls_as_escapes_and_keeps_text() -> None:
    hostile = "Nota \x1b[2J con\r retorno \u202eoculto\u202c\x9b y ñ 😀\tfin\nlínea"
    shown = printable(hostile)
    assert "\x1b" not in shown and "\r" not in shown and "\u202e" not in shown
    assert "\x9b" not in shown
    assert "\\x1b[2J" in shown and "ñ 😀\tfin\nlínea" in shown
    assert printable(shown) == shown


def test_printable_name_is_one_line() -> None:
    assert printable_name("a\nb") == "a\\x0ab"
    assert printable_name("a\tb") == "a\\x09b"
    assert printable_name(os.fsdecode(b"\xff")) == "\\xff"
    assert printable_name("año") == "año"
    assert printable_name("x\u202ey\x1b") == "x\\u202ey\\x1b"
