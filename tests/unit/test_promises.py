"""The promise rules (agent.detectors.pending) measured on a labelled set of their own.

``tests/data/promises``: sentences labelled promise or not, and promise/later-line pairs
labelled closed or not, written before the rules and split at random into a dev half (the
rules were designed on it) and a test half (only evaluated). Both halves are measured and
printed; the figures are in docs/agent.md with the command.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from agent.detectors.pending import detect_pending, due, is_promise, says_done_of
from state.chatlog import parse

DATA = Path(__file__).resolve().parents[1] / "data" / "promises"
SPLITS = ("dev", "test")


def rows(name: str) -> list[list[str]]:
    lines = (DATA / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("split", SPLITS)
def test_promise_precision_and_recall(split: str, capsys: pytest.CaptureFixture[str]) -> None:
    labelled = [(label == "1", sentence) for label, sentence in rows(f"sentences_{split}")]
    said = [(truth, is_promise(sentence)) for truth, sentence in labelled]
    tp = sum(truth and found for truth, found in said)
    fp = sum(found and not truth for truth, found in said)
    fn = sum(truth and not found for truth, found in said)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    with capsys.disabled():
        print(
            f"\npromises ({split}, {len(said)} sentences, {tp + fn} promises): "
            f"precision {precision:.3f}, recall {recall:.3f}"
        )
    assert len(labelled) >= 150
    assert precision >= 0.9 and recall >= 0.9


@pytest.mark.parametrize("split", SPLITS)
def test_closing_accuracy(split: str, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = rows(f"pairs_{split}")
    right = sum(says_done_of(promise, later) is (label == "1") for label, promise, later in pairs)
    accuracy = right / len(pairs)
    with capsys.disabled():
        print(f"\nclosing ({split}, {len(pairs)} pairs): accuracy {accuracy:.3f}")
    assert accuracy >= 0.9


def test_the_set_is_large_and_has_both_languages_and_both_labels() -> None:
    sentences = [r for split in SPLITS for r in rows(f"sentences_{split}")]
    assert len(sentences) >= 300
    assert {label for label, _ in sentences} == {"0", "1"}
    english = [s for _, s in sentences if s.startswith(("I ", "I'", "Tomorrow", "Remind"))]
    assert len(english) >= 30


@pytest.mark.parametrize(
    "sentence",
    ["Termino por hoy.", "Lo dejo por hoy.", "Acabo por ahora.", "Paro por hoy, mañana sigo."],
)
def test_ending_the_day_is_no_promise(sentence: str) -> None:
    assert not is_promise(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["Mañana paso por el banco.", "Esta tarde termino el informe.", "Te mando las fotos hoy."],
)
def test_an_errand_or_a_task_with_a_time_still_is(sentence: str) -> None:
    assert is_promise(sentence)


@pytest.mark.parametrize(
    ("promise", "later"),
    [
        # Spanish irregular participles, alone or with a prefix, say the promise done
        ("Mañana imprimo las fichas del taller de cerámica.", "Impresas las fichas del taller."),
        ("El lunes reimprimo los carteles de la feria.", "Ya tengo reimpresos los carteles."),
        ("Esta tarde cubro el turno de Rosa en la tienda.", "Cubierto el turno de Rosa."),
        ("Mañana describo el montaje en la wiki del club.", "Descrito el montaje en la wiki."),
        (
            "Mañana le propongo a Nuria otra fecha para la cena.",
            "Le he propuesto otra fecha a Nuria.",
        ),
        ("Mañana envuelvo los regalos de los sobrinos.", "Regalos de los sobrinos envueltos."),
        (
            "Tengo que abrir la cuenta del banco de la asociación.",
            "Cuenta de la asociación abierta.",
        ),
        ("Tengo que deshacer la maleta del viaje.", "Maleta del viaje deshecha."),
        # verbs whose vowel changes ("corrijo"/"corregidos", "pido"/"pedido", "elijo"/"elegidas")
        ("Mañana corrijo los exámenes de 2ºA.", "Corregidos los exámenes de 2ºA."),
        ("Mañana le pido el certificado a la gestoría.", "Pedido el certificado a la gestoría."),
        ("Esta tarde elijo las fotos del álbum.", "Elegidas las fotos del álbum."),
        # English irregular past forms the map did not hold
        ("I'll hang the posters in the hall tomorrow.", "Hung the posters in the hall."),
        ("I'll build the shelf for the garage this weekend.", "Built the garage shelf."),
        ("I'll find the receipt for the blender tonight.", "Found the blender receipt."),
        ("I'll drive Ana to the station tomorrow.", "Drove Ana to the station."),
    ],
)
def test_an_irregular_done_form_closes_its_promise(promise: str, later: str) -> None:
    assert is_promise(promise)
    assert says_done_of(promise, later)


@pytest.mark.parametrize(
    ("promise", "later"),
    [
        # the same words, not said done: a noun, someone else's doing, not yet
        ("Mañana imprimo las fichas del taller.", "La impresora del taller no va."),
        ("Esta tarde cubro el turno de Rosa.", "Rosa ha cubierto su turno de mañana ella sola."),
        ("Tengo que abrir la cuenta del banco.", "Todavía no he abierto la cuenta del banco."),
        ("I'll hang the posters in the hall tomorrow.", "The posters for the hall haven't come."),
        # "de vuelta", "de hecho": a participle after "de" is no deed
        (
            "Mañana vuelvo a llamar a Pedro por la caldera.",
            "De vuelta en casa; Pedro sin dar señales.",
        ),
        (
            "Mañana le escribo a Pedro lo de la caldera.",
            "De hecho, Pedro no sabe nada de la caldera.",
        ),
        ("Tengo que hacer la declaración de la renta.", "De hecho la renta me agobia."),
    ],
)
def test_the_same_words_without_the_deed_leave_it_open(promise: str, later: str) -> None:
    assert is_promise(promise)
    assert not says_done_of(promise, later)


@pytest.mark.parametrize(
    "sentence",
    [
        # a day's agenda read aloud: what happens on which day, no task the person commits to
        "Repaso el calendario: el lunes reunión de vecinos, el jueves dentista.",
        "Echo un ojo a la semana: mañana taller, viernes cena con Lucía.",
        "Miro el planning un segundo: mañana guardia, miércoles libre.",
        "Checking the diary: tomorrow the office, Thursday the site visit.",
        # a plan with no verb of the person's: "luego", "primero" are times, not verbs
        "Luego unas cañas con Marta y a dormir.",
        "Primero el mercado y luego comida en casa de mis padres.",
    ],
)
def test_an_agenda_or_a_plan_is_no_promise(sentence: str) -> None:
    assert not is_promise(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Repaso el calendario: mañana llamo a la gestoría.",
        "Luego llamo al taller por lo del coche.",
        "Mañana le mando a Lucía las entradas del teatro.",
    ],
)
def test_a_task_in_a_plan_still_is(sentence: str) -> None:
    assert is_promise(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        # accepting what came, not a task
        "Got a thumbs up from my manager on the draft, I'll take it.",
        "Not the result we wanted, but we'll take it.",
        "A compliment from Ruth, I'll take that as a win.",
    ],
)
def test_taking_it_as_it_comes_is_no_promise(sentence: str) -> None:
    assert not is_promise(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["I'll take it to the post office tomorrow.", "I'll take the bins out tonight."],
)
def test_taking_something_somewhere_still_is(sentence: str) -> None:
    assert is_promise(sentence)


def pending(*days: str) -> list[str]:
    """The pending promises of a chat log a day, the last one yesterday: their sentences."""
    today = date(2026, 3, 10)
    logs = []
    for back, text in enumerate(reversed(days), start=1):
        day = today - timedelta(days=back)
        turns = "".join(
            f"## 10:{i:02d}:00 · usuario\n{t}\n\n" for i, t in enumerate(text.split("|"))
        )
        logs.append((day, f"logs/{day}.md", parse(f"# {day}\n\n{turns}")))
    now = datetime(today.year, today.month, today.day, 12).timestamp()
    return [r.evidence[0].partition("): ")[2] for r in detect_pending(logs, now)]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # "lo", "it": the promise is about the sentence before it, kept in other words
        (
            "Se ha roto el grifo de la cocina otra vez. Lo arreglo mañana.",
            "Grifo de la cocina cambiado por uno nuevo.",
        ),
        (
            "The studio printer jammed again this morning. I'll sort it out tomorrow.",
            "Studio printer unjammed and printing.",
        ),
        # told over a turn: what it was in one sentence, the deed in the next
        (
            "El router del despacho se colgó anoche. Lo reviso mañana.",
            "Lo del router del despacho era un cable suelto. Enchufado otra vez y va bien.",
        ),
        # a start promised, then the work under way or done
        (
            "Mañana empiezo con el tema 7 del temario.",
            "Tema 7 a buen ritmo, ya llevo la mitad.",
        ),
        (
            "I'll start on the chapter 4 edits tomorrow.",
            "Chapter 4 edits going well.",
        ),
    ],
)
def test_a_promise_kept_in_other_words_is_not_pending(said: str, kept: str) -> None:
    assert pending(said, kept) == []


@pytest.mark.parametrize(
    ("said", "later"),
    [
        (
            "Se ha roto el grifo de la cocina otra vez. Lo arreglo mañana.",
            "El grifo de la cocina sigue goteando.",
        ),
        (
            "The studio printer jammed again this morning. I'll sort it out tomorrow.",
            "Printer in the studio still jammed, no time.",
        ),
        (
            "The studio printer jammed again this morning. I'll sort it out tomorrow.",
            "Studio printer not fixed, ordered a new roller.",
        ),
        ("Mañana empiezo con el tema 7 del temario.", "¿Cuántas páginas tiene el tema 7?"),
        ("Mañana empiezo con el tema 7 del temario.", "Todavía no he empezado el tema 7."),
    ],
)
def test_the_same_subject_not_kept_stays_pending(said: str, later: str) -> None:
    assert len(pending(said, later)) == 1


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # handed over in words no rule lists: where the thing is now, another name for it
        (
            "Mañana le mando a Ainhoa el plano de la cocina.",
            "El plano de la cocina ya lo tiene Ainhoa en su correo.",
        ),
        (
            "Mañana les mando la maqueta tres a los de la revista.",
            "Mandada la m3 de la revista, con los cambios.",
        ),
        (
            "I'll send Priyanka the budget sheet tomorrow.",
            "The budget sheet is in Priyanka's inbox.",
        ),
        (
            "I'll look at Omar's pull request tomorrow morning.",
            "Went through Omar's pull request over coffee and approved it.",
        ),
        # a day's work told as under way
        (
            "Mañana recuento de stock en el almacén, entro a las siete.",
            "Llevamos medio stock del almacén contado.",
        ),
    ],
)
def test_a_promise_kept_by_meaning_is_not_pending(said: str, kept: str) -> None:
    assert pending(said, kept) == []


@pytest.mark.parametrize(
    ("said", "later"),
    [
        (
            "Mañana le mando a Ainhoa el plano de la cocina.",
            "Ainhoa me ha vuelto a pedir el plano de la cocina.",
        ),
        (
            "Mañana le mando a Ainhoa el plano de la cocina.",
            "Todavía no he mandado el plano de la cocina.",
        ),
        ("Mañana le mando a Ainhoa el plano de la cocina.", "Primera hora con Ainhoa en la obra."),
        ("I'll send Priyanka the budget sheet tomorrow.", "Didn't get to the budget sheet today."),
        # a deed about something else that shares a word
        ("I'll send Priyanka the budget sheet tomorrow.", "Cleared the sheet music off the piano."),
    ],
)
def test_a_later_line_about_it_that_keeps_nothing_leaves_it_pending(said: str, later: str) -> None:
    assert len(pending(said, later)) == 1


def test_a_promise_told_as_what_the_other_will_have_is_one() -> None:
    assert is_promise("I told him he'd have the quote by Monday, no problem.")
    assert is_promise("Promised her she'll get the keys tomorrow.")
    assert not is_promise("She told me he'd have it by Friday.")
    assert not is_promise("I told her she'd love the film.")


@pytest.mark.parametrize(
    "sentence",
    ["I'll work, it helps.", "I'll cook, you choose the film.", "Tengo que trabajar, qué remedio."],
)
def test_a_verb_with_no_object_is_no_promise(sentence: str) -> None:
    assert not is_promise(sentence)


@pytest.mark.parametrize(
    "said",
    [
        # not due yet: the next week
        "Le pregunto a la gestora por el IVA la semana que viene.",
        "I'll ask IT for proper access next week.",
        # a plan of that day only
        "Tengo que llevar a Leire al dentista antes de entrar.",
        "I'll hoover the flat tonight.",
    ],
)
def test_a_promise_not_due_or_for_its_own_day_is_not_pending(said: str) -> None:
    assert pending(said, "Día tranquilo.") == []


@pytest.mark.parametrize(
    "said",
    ["Le mando a Koldo el presupuesto mañana.", "Tengo que devolver el taladro a Koldo."],
)
def test_a_promise_due_before_today_is_pending(said: str) -> None:
    assert len(pending(said, "Día tranquilo.")) == 1


def test_a_promise_falls_due_on_the_day_it_names() -> None:
    friday = date(2026, 11, 27)
    weekend = "La impresora sigue fallando, el fin de semana le echo un ojo."
    assert due(friday, weekend) == date(2026, 11, 29)
    assert due(date(2026, 11, 29), weekend) == date(2026, 12, 6)
    assert due(friday, "I'll ask IT for proper access next week.") == date(2026, 12, 6)
    assert due(friday, "Mañana le mando el plano a Ainhoa.") == friday
    assert due(friday, "Esta tarde llamo al taller.") is None
    assert due(friday, "Esta tarde llamo al taller o mañana a primera hora.") == friday


@pytest.mark.parametrize(
    "sentence",
    [
        # a habit set on a day that comes back each week, or every day: no one task to keep
        "Cuesta, pero lo intentaré los jueves y los viernes.",
        "No será fácil, pero lo intentaré los jueves y viernes.",
        "Los martes llamo a mi abuela, es sagrado.",
        "Voy a ir al gimnasio todos los días a partir de ahora.",
        "Tengo que regar las plantas cada semana.",
        "I'll walk the dog on Sundays from now on.",
        "I'm going to call my dad every Friday.",
    ],
)
def test_a_habit_on_days_that_come_back_is_no_promise(sentence: str) -> None:
    assert not is_promise(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "El jueves llamo a la gestoría.",
        "Mañana te mando las fotos de los lunes.",
        "I'll send the slides on Monday.",
    ],
)
def test_a_promise_on_one_day_still_is(sentence: str) -> None:
    assert is_promise(sentence)
