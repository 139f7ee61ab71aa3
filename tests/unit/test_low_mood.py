"""low_mood: a growing trend of negative words in the person's own turns, read by rule."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest

from agent.detectors.low_mood import KIND, detect_low_mood, negative_words, read_low
from policies.config import policy_from_dict
from state.chatlog import parse

TODAY = date(2026, 11, 23)
NOW = datetime(2026, 11, 23, 20, 0).timestamp()


def day(n: int, person: list[str], alma: str = "Vaya, lo siento.") -> tuple[date, str, list]:
    d = TODAY - timedelta(days=n)
    turns = []
    for i, text in enumerate(person):
        turns.append(f"## 1{i}:00:00 · usuario\n{text}\n")
        turns.append(f"## 1{i}:00:05 · alma\n{alma}\n<!-- model: m -->\n")
    return d, f"logs/{d.isoformat()}.md", parse("\n".join(turns))


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Estoy agotado y triste.", 2),
        ("No estoy triste, estoy contento.", 0),  # negated
        ("Nada me sale bien, me siento fatal.", 1),
        ("ESTOY HARTA, ¡qué ANSIEDAD!", 2),  # case and accents folded
        ("El test falla otra vez.", 0),  # the scripts' failures are not the person's mood
        ("So tired. Overwhelmed by everything.", 2),
        ("I'm not tired at all, and I don't feel stressed.", 0),  # negated
        ("Exhausted and anxious, I can't sleep.", 3),
    ],
)
def test_negative_words_are_counted_with_negation(text: str, count: int) -> None:
    assert len(negative_words(text)) == count


def test_a_growing_trend_over_days_is_a_gentle_finding_with_its_evidence() -> None:
    days = [
        day(6, ["Buen día, todo bien."]),
        day(5, ["Avanzo con el proyecto."]),
        day(3, ["Estoy cansado."]),
        day(2, ["Estoy agotado y triste, nada sale."]),
        day(1, ["Me siento fatal, agotada, sin ganas de nada.", "Harta de todo."]),
    ]
    found = detect_low_mood(days, NOW)
    assert found is not None and found.kind == KIND
    assert found.plan == [] and found.files == 0
    assert "diagn" not in found.reason.lower() and "depres" not in found.title.lower()
    assert any("logs/" in e and "agotad" in e for e in found.evidence)
    # ALMA's own turns never count (its "lo siento" is not the person's)
    assert detect_low_mood([day(1, ["Hola."], alma="Triste, agotado, fatal.")], NOW) is None


def test_one_bad_day_or_a_steady_mood_is_not_a_trend() -> None:
    assert detect_low_mood([day(1, ["Estoy agotado y triste, fatal."])], NOW) is None
    steady = [day(n, ["Estoy cansado."]) for n in range(1, 7)]
    assert detect_low_mood(steady, NOW) is None


def test_off_with_one_line_in_the_policy() -> None:
    assert policy_from_dict({}).monitor.low_mood is True
    assert policy_from_dict({"monitor": {"low_mood": False}}).monitor.low_mood is False


@pytest.mark.parametrize(
    "text",
    [
        "Me siento desengañada.",
        "Estoy muerto de sueño.",
        "ME SIENTO ENGAÑADO",
        "me siento desenganada",  # typed on a keyboard without ñ
    ],
)
def test_words_with_enye_count_as_written_or_typed_without_it(text: str) -> None:
    assert len(negative_words(text)) == 1


def test_a_word_with_enye_is_negated_like_any_other() -> None:
    assert negative_words("No me siento engañado, ni desengañada.") == []


@pytest.mark.parametrize(
    "text",
    [
        # a mood told by what is lost: no wish, no joy, no sleep, no worth
        "Hoy no tengo ganas de nada.",
        "No me apetece ir a trabajar mañana.",
        "Nada me ilusiona últimamente.",
        "Ni la música me anima ya.",
        "Casi no he dormido.",
        "Esta noche no he podido dormir.",
        "Siento que no valgo para este trabajo.",
        "Lloré un rato al salir de la oficina.",
        "No sé qué me pasa.",
        "Todo me pesa esta semana.",
        "I don't feel like doing anything.",
        "Nothing cheers me up lately.",
        "Couldn't sleep again.",
        "I cried in the car park.",
        "I'm useless at this job.",
        "Can't be bothered with anything.",
    ],
)
def test_a_mood_told_by_what_is_lost_counts(text: str) -> None:
    assert len(negative_words(text)) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Tengo ganas de ver la película del sábado.",
        "Me apetece un café con Laura.",
        "No tengo prisa, me apetece pasear.",
        "No sabes las ganas que tengo de vacaciones.",
        "No sé si me apetece pizza o pasta.",
        "No te preocupes, he dormido bien.",
        "I feel like pizza tonight.",
        "Don't worry, I slept fine.",
        "Nothing broke in the deploy, I enjoyed the demo.",
        # a question, someone else's mood, an advice
        "¿No te apetece un café?",
        "A Luis no le apetece venir a la cena.",
        "No olvides dormir ocho horas.",
        "Don't you feel like going out?",
        "They don't enjoy the course at all.",
    ],
)
def test_a_wish_or_a_negation_elsewhere_does_not(text: str) -> None:
    assert negative_words(text) == []


def test_a_week_that_darkens_in_plain_words_is_a_trend() -> None:
    days = [
        day(6, ["Semana nueva, a por ella.", "Hoy toca inventario en la tienda."]),
        day(5, ["Algo cansada del inventario, pero bien.", "Mañana más."]),
        day(4, ["Los clientes hoy, insoportables. No me apetece nada volver.", "En fin."]),
        day(3, ["Casi no he dormido.", "Me siento inútil, no valgo para esto.", "Reunión."]),
        day(2, ["Lloré al salir del trabajo.", "No sé qué me pasa."]),
        day(1, ["Nada me anima, ni el sol.", "Todo me pesa."]),
        day(0, ["No tengo ganas de nada.", "A ver si mañana."]),
    ]
    found = detect_low_mood(days, NOW)
    assert found is not None and found.kind == KIND


def test_the_same_plain_words_every_day_are_no_trend() -> None:
    steady = [day(n, ["No me apetece madrugar.", "Bien."]) for n in range(0, 7)]
    assert detect_low_mood(steady, NOW) is None


@pytest.mark.parametrize(
    "text",
    [
        "Este finde prefiero encerrarme en casa y no ver a nadie.",
        "Ya ni sé para qué sigo con esto.",
        "He vuelto a dejar el gimnasio, y los amigos ya ni me llaman.",
        "Nothing I do seems to matter.",
        "Stayed under the duvet until noon, couldn't face the day.",
    ],
)
def test_a_low_mood_in_the_persons_own_words_reads_low_by_meaning(text: str) -> None:
    assert negative_words(text) == []  # none of the usual words
    assert read_low([text]) == [True]


@pytest.mark.parametrize(
    "text",
    [
        "Mi hermano está muy bajo desde que perdió el trabajo.",  # someone else's mood
        "My colleague feels hopeless about the project.",
        "Se ha muerto el gato de mi tía, qué pena; luego la llamo.",
        "El cliente ha cambiado otra vez el diseño, qué paciencia.",
        "Qué tarde más buena, paseo y cervecita.",
        "Unas veinte, las acabo mañana.",
        "Long day at the office, finished the slides.",
        "Nope, nothing else today.",
    ],
)
def test_an_ordinary_line_or_someone_elses_mood_does_not(text: str) -> None:
    assert read_low([text]) == [False]


def test_a_week_that_falls_in_the_persons_own_words_is_a_finding() -> None:
    days = [
        day(6, ["Domingo de playa con los primos, genial.", "Mañana a trabajar."]),
        day(5, ["Ya ni sé para qué sigo con esto.", "Reunión a las diez."]),
        day(4, ["Este finde prefiero encerrarme en casa y no ver a nadie.", "Vale."]),
        day(3, ["He vuelto a dejar el gimnasio, y los amigos ya ni me llaman."]),
        day(2, ["Nada de lo que hago sirve de algo.", "Bueno."]),
        day(1, ["Me he quedado en la cama hasta las doce, no podía con el día."]),
        day(0, ["Hoy tampoco he salido.", "Da todo igual."]),
    ]
    found = detect_low_mood(days, NOW)
    assert found is not None and found.kind == KIND
    assert any("para qué sigo" in e for e in found.evidence)


def test_a_sad_day_in_a_calm_week_and_someone_elses_low_mood_are_no_finding() -> None:
    days = [
        day(6, ["Domingo tranquilo, paseo por el río.", "Mañana oficina."]),
        day(5, ["Reunión larga pero productiva.", "Cierro ya."]),
        day(4, ["Se ha muerto el perro de mis padres, estoy triste.", "Hoy trabajo poco."]),
        day(3, ["Mejor hoy, gracias. Lo echaremos de menos.", "Informe enviado."]),
        day(2, ["Mi hermana está pasando una mala racha, la llamo luego.", "Buen día."]),
        day(1, ["Mi hermana sigue muy baja, no sale de casa.", "Presupuesto cerrado."]),
        day(0, ["Sábado de mercado y cine.", "Mi hermana dice que ya ni le apetece salir."]),
    ]
    assert detect_low_mood(days, NOW) is None


def test_a_mood_that_turns_low_and_stays_low_is_a_finding_though_it_rises_little() -> None:
    days = [day(6, ["Semana nueva, con ganas.", "Hoy inventario.", "Bien."])]
    days += [day(n, ["Estoy harta de todo.", "Hoy inventario.", "Bien."]) for n in range(5, -1, -1)]
    found = detect_low_mood(days, NOW)
    assert found is not None and found.kind == KIND


def test_tiredness_every_night_of_a_long_week_is_no_fall() -> None:
    days = [day(6, ["Semana nueva, con ganas.", "Hoy inventario.", "Bien."])]
    days += [day(n, ["Estoy agotada.", "Hoy inventario.", "Bien."]) for n in range(5, -1, -1)]
    assert detect_low_mood(days, NOW) is None


@pytest.mark.parametrize(
    "text",
    [
        "Bus was late again, the printer jammed too. Honestly I feel like I'm not good enough "
        "for any of this. Anyway, soup for dinner.",
        "Parcel for the neighbour arrived. Spent the evening on the sofa, couldn't face calling "
        "anyone back. Early night.",
        "Reunión de equipo a las diez, luego correos. La verdad es que ya no sé para qué me "
        "esfuerzo tanto. Cena con Luis.",
    ],
)
def test_a_low_sentence_among_ordinary_ones_reads_low(text: str) -> None:
    # a turn is read sentence by sentence: the day's news around it does not drown it
    assert read_low([text]) == [True]


@pytest.mark.parametrize(
    "text",
    [
        "Good day at the market, sold most of the jars. Rain later. Pasta for dinner.",
        "Long meeting, then the dentist. Tired but fine. Film tonight.",
        "Mi hermana está muy baja con lo de su trabajo. Yo bien, la verdad. Cena tranquila.",
    ],
)
def test_ordinary_sentences_and_someone_elses_mood_do_not(text: str) -> None:
    assert read_low([text]) == [False]


@pytest.mark.parametrize(
    "text",
    [
        "Salgo ya. Cansada pero bien.",
        "Agotado, pero contento con cómo ha salido.",
        "Tired but happy, good gig tonight.",
        "Exhausted but fine.",
    ],
)
def test_a_tiredness_said_with_a_good_word_is_no_low_word(text: str) -> None:
    assert negative_words(text) == []


@pytest.mark.parametrize(
    "text", ["Cansado, pero bueno, qué le vamos a hacer.", "Tired, but I can't sleep."]
)
def test_a_tiredness_with_no_good_word_after_still_counts(text: str) -> None:
    assert negative_words(text)
