"""What kind of detail a message asks for, and whether a memory holds one (``agent.memory.asked``)."""

from __future__ import annotations

import pytest

from agent.memory.asked import holds, kinds, lacks, names, unnamed


@pytest.mark.parametrize(
    ("message", "asked"),
    [
        ("¿A qué hora sale el tren?", {"time"}),
        ("what time does the shop open?", {"time"}),
        ("¿Cuánto me costó la bici?", {"money"}),
        ("How much did the flights cost?", {"money"}),
        ("cuantos años tiene mi sobrina", {"age"}),
        ("how old is my cat?", {"age"}),
        ("¿Cuánto pesa el perro?", {"weight"}),
        ("¿Cuántos metros cuadrados tiene el piso?", {"length"}),
        ("¿Cuándo caduca el pasaporte?", {"date"}),
        ("When does the ID card expire?", {"date"}),
        ("¿Cuál es el teléfono de mi madre?", {"contact"}),
        ("What's Ana's email?", {"contact"}),
        ("cual es la contraseña del wifi", {"code"}),
        ("¿Cuántos hijos tiene Nerea?", {"number"}),
        ("¿Cómo se llama el novio de Elena?", {"name"}),
        ("who is my tutor?", {"name"}),
        ("¿Dónde dejé las llaves?", {"place"}),
        ("¿aprobé el examen?", set()),
        ("Mi perro se llama Toby.", set()),
        ("Hoy he ido al mercado", set()),
    ],
)
def test_the_kind_asked_is_read_from_the_question_words(message: str, asked: set[str]) -> None:
    assert kinds(message) == frozenset(asked)


@pytest.mark.parametrize(
    ("message", "content", "held"),
    [
        ("¿Cuánto pesa Boira?", "Boira pesa 4,2 kg desde la última visita.", True),
        ("¿Cuánto pesa Boira?", "Boira duerme en el sofá desde 2024.", False),
        ("¿A qué hora sale Vega del colegio?", "Vega sale a las 16:30 los martes.", True),
        ("¿A qué hora sale Vega del colegio?", "Vega va al colegio Cervantes.", False),
        ("¿Cuánto cuesta el gimnasio?", "El gimnasio cuesta 35 euros al mes.", True),
        ("¿Cuánto cuesta el gimnasio?", "Voy al gimnasio tres días por semana.", False),
        ("cuantos años tiene Canelo", "Canelo tiene 9 años.", True),
        ("cuantos años tiene Canelo", "El 4 de abril Canelo se comió un calcetín.", False),
        ("¿Cómo se llama el marido de Eider?", "Eider está casada con Iñaki.", True),
        ("¿Cómo se llama el marido de Eider?", "Eider trabaja en el hospital.", False),
        ("¿Quién aprueba los cambios?", "Patricia aprueba los cambios de facturación.", True),
        ("When does the backup run?", "The server backs up every night at 1:20.", True),
        ("¿Cuál es el teléfono de Rosa?", "Rosa: 612 345 678.", True),
        ("¿Cuál es el teléfono de Rosa?", "Rosa vive en Tarazona.", False),
        ("cual es la contraseña del wifi", "La clave del wifi es Boira2019.", True),
        ("cual es la contraseña del wifi", "El router está en el salón.", False),
        ("¿Dónde guardo las llaves?", "Las llaves están en el cajón de la entrada.", True),
        ("¿Cuántos hijos tiene Nerea?", "El cumpleaños de Nerea es el 27 de febrero.", False),
        ("¿aprobé el examen?", "Nada que ver.", True),  # nothing asked: nothing lacking
    ],
)
def test_a_memory_holds_the_detail_asked_or_lacks_it(
    message: str, content: str, held: bool
) -> None:
    assert holds(kinds(message), content, message) is held
    assert lacks(kinds(message), content, message) == (0.0 if held else 1.0)


def test_the_question_own_details_do_not_count() -> None:
    """A name or a number the question already holds is not the one it asks for."""
    message = "¿Cómo se llama el hijo de Sergio?"
    assert not holds(kinds(message), "Sergio trabaja en el hospital.", message)
    assert holds(kinds(message), "Sergio tiene un hijo, Dani.", message)
    message = "¿Cuántos km hice con Noah el día 12?"
    assert not holds(kinds(message), "Caminé con Noah el día 12.", message)


def test_a_memory_of_another_person_lacks_the_name_asked_about() -> None:
    message = "¿Cuándo es el cumpleaños de Martí?"
    assert names(message) == ["marti"]
    assert unnamed(names(message), "El cumpleaños de mi suegra Maite es el 26 de marzo.") == 1.0
    assert unnamed(names(message), "Martí cumple años el 2 de junio.") == 0.0
    assert names("What is Carmen's surname?") == ["carmen"]
    # Nothing named (the first word, ALMA): nothing to lack.
    assert names("Toby come pienso") == [] and names("ALMA, ¿qué sabes?") == []
    assert unnamed([], "cualquier cosa") == 0.0
