"""Who is who, read from the person's store: a message's relation words joined to the names
the store ties to them before the context's search (agent/memory/relations.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.detectors.meaning import others
from agent.memory.relations import ROLES, expand, names_for, roles
from agent.memory.service import MemoryService
from policies.layout import RootLayout
from policies.text import KINSHIP

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("message", "asked"),
    [
        ("¿qué no puede comer mi pareja?", ["partner"]),
        ("¿a qué hora sale del cole el peque?", ["child"]),
        ("When's my son's birthday?", ["child"]),
        ("what does my kid eat at school?", ["child"]),
        ("¿qué tren cojo para ir a casa del yayo?", ["father"]),
        ("¿cuándo llamo a la abuela?", ["mother"]),
        ("¿qué le regalo a mi hermana y a mi jefe?", ["sibling_f", "boss"]),
        # "son" is Spanish too; "mi abuelo" is the person's own grandparent.
        ("¿cuáles son los horarios del gimnasio?", []),
        ("¿dónde vivía mi abuelo?", []),
        # Someone else's relation is none of the person's.
        ("¿cómo se llama el hijo mayor de Sergio?", []),
        ("What's the name of Amparo's brother?", []),
        ("¿dónde viven mis suegros?", ["in_law"]),
        ("¿qué tal el concierto?", []),
    ],
)
def test_the_relation_words_a_message_asks_about(message: str, asked: list[str]) -> None:
    assert roles(message) == asked


@pytest.fixture
def svc(tmp_path: Path, embedder_loaded: None) -> Iterator[MemoryService]:
    for sub in ("system", "logs", "user", ".alma"):
        (tmp_path / sub).mkdir(parents=True)
    service = MemoryService(RootLayout(tmp_path), clock=lambda: NOW)
    yield service
    service.close()


_LIFE = [
    "Nuestro aniversario con Nuria es el 14 de mayo.",
    "Nuria odia el cilantro, no lo soporta ni en la ensalada.",
    "Nuria y yo vimos una película coreana muy larga.",
    "La tutora de Lucas este curso es Begoña.",
    "Lucas no puede tomar fresas: le salen ronchas.",
    "Lucas ha aprendido a nadar sin manguitos.",
    "Mi madre, Rosario, vive en Logroño.",
    "Rosario me ha mandado una receta de croquetas.",
    "A Tomás, el jefe, hay que escribirle por correo, nunca por teléfono.",
    "Tomás ha vuelto de vacaciones moreno.",
    "Compré un candado en U para la bici nueva.",
    "El backup nocturno falla porque el disco USB no se monta solo al reiniciar.",
    "Cociné lentejas para cenar y sobró para mañana.",
    "Mi compañero de piso se llama Iván y toca la trompeta.",
    "Mi madre tiene un huerto con tomates.",
    "Reunión con Laura sobre el presupuesto del trimestre.",
    # Look-alikes about other people: only who is who tells them from the answers.
    "Iván no puede tomar piña: le pica la boca.",
    "Laura no soporta el perejil en la comida.",
    "A Javier, el portero, se le avisa por el telefonillo.",
]


def test_the_names_come_from_what_the_store_states(svc: MemoryService) -> None:
    for text in _LIFE:
        svc.add(text)
    store = svc.store
    assert names_for(store, "partner") == ["Nuria"]  # "aniversario con Nuria"
    assert names_for(store, "child") == ["Lucas"]  # "la tutora de Lucas"
    assert names_for(store, "mother") == ["Rosario"]  # "Mi madre, Rosario"
    assert names_for(store, "boss") == ["Tomás"]  # "A Tomás, el jefe"
    assert names_for(store, "sibling_f") == []  # nothing says who the sister is
    asked = expand(store, "¿qué fruta no puede tomar mi hijo?")
    assert asked.names == ("Lucas",) and "Lucas" in asked.text
    # A grandparent named by a parent is their own father or mother.
    assert expand(store, "¿dónde vive la abuela?").words == ("madre",)
    assert "Rosario" in expand(store, "¿dónde vive la abuela?").names
    # "Mis suegros" are the partner's parents.
    assert expand(store, "¿dónde viven mis suegros?").names == ("Nuria",)
    # Nothing asked by relation, or nothing the store states: the message as it is.
    assert expand(store, "¿qué candado compré?").text == "¿qué candado compré?"
    assert expand(store, "¿dónde vive mi hermana?").names == ()


def test_the_context_finds_the_answer_by_the_name_the_store_holds(svc: MemoryService) -> None:
    ids = {text: svc.add(text)["id"] for text in _LIFE}
    for question, answer in (
        ("what can't my kid eat?", _LIFE[4]),  # the other language, and "Lucas"
        ("¿qué me mandó mamá?", _LIFE[7]),  # "mamá" is Rosario
    ):
        ctx = svc.context(question, count_use=False)
        got = [i["id"] for i in ctx["items"] if i["answers"]]
        assert ids[answer] in got, (question, [i["content"] for i in ctx["items"]])


def test_a_couple_s_words_and_a_nursery_name_the_partner_and_the_child(
    svc: MemoryService,
) -> None:
    for text in (
        "Javi y yo celebramos el aniversario el 17 de mayo, que es cuando nos casamos en Jaca.",
        "Javi quiere cambiar el coche el año que viene.",
        "La escuela infantil de Hugo abre a las 7:45 y cierra a las 17:00.",
        "Hugo solo desayuna leche con galletas.",
        "Mi padre, Julián, vive en Huesca.",
        "Julián ha llamado para lo del huerto.",
        # Someone else's father: not the person's.
        "Ángel, el padre de Javi, tiene marcapasos desde 2024.",
        "Ángel ha venido a comer el domingo.",
        "Ángel, el padre de Javi, no puede acercarse a la inducción.",
        "Sam and I have been together since 2015.",
        "Sam wants a new bike.",
    ):
        svc.add(text)
    store = svc.store
    assert names_for(store, "partner") == ["Javi", "Sam"]
    assert names_for(store, "child") == ["Hugo"]
    assert names_for(store, "father") == ["Julián"]
    assert "Javi" in expand(store, "¿qué día cumple años mi suegra?").names


def test_kinship_has_one_owner_and_a_line_about_a_relative_is_someone_elses() -> None:
    assert ROLES is KINSHIP
    # every word by which the store's names are read also tells a line about someone else
    for words in KINSHIP.values():
        for word in words:
            assert others(f"mi {word} tiene que mandar el informe"), word
    assert others("my kid has to hand in the form") and others("el peque no duerme")
    assert not others("mi informe sale hoy") and not others("my sonata is done")
