"""``low_mood``: more and more negative words in the person's own chat turns, over days, or
a mood said in the person's own words without them.

Rule-based Spanish and some English: the text and the word list folded alike
(:func:`policies.text.loose_fold`: case and accents ignored, ñ read as n, so "desengañado" counts
typed either way). A word or phrase of :data:`_LEXICON` counts unless a negation ("no", "nunca",
"ni", "tampoco", "jamás", "not", "never", ...) stands among the three words before it ("no estoy
triste", "I'm not tired" do not count). A negation before a wish, a joy, sleep or one's worth
(:data:`_LOST`: "no tengo ganas", "nada me anima", "no he dormido", "I don't feel like") counts
as one, when the person says it of themselves and does not ask. Only the person's turns are
read, never ALMA's.

A turn with none of those words still counts as one when it reads low by its meaning (read by
:mod:`agent.detectors.meaning`: the packaged embedder and a reader fitted on sentences written for
ALMA, :data:`LOW` against :data:`NOT_LOW`, from a score of :data:`THRESHOLD`): a mood said
without the usual vocabulary ("se me hace todo cuesta arriba", "what's the use of trying", a
cancelled plan to stay alone). A turn about someone else's mood (:func:`meaning.others`) does
not; without the embedder, only the words count.

Each day of the last :data:`WINDOW_DAYS` with turns of the person gets a score: negative words
(and turns read low) per turn. With at least :data:`MIN_DAYS` such days, the older half and the
recent half are compared: a finding when the recent mean is higher by :data:`MIN_RISE` or more
and the recent days hold at least :data:`MIN_WORDS` negative words; or when the mood fell and
stayed low (:func:`_fell`: low on :data:`FALL_DAYS` of the last :data:`FALL_SPAN` days, more
than tired on two of them, after a day without). One bad day, or a mood that stays the same all week, is not a trend. The words are gentle and never name a condition: ALMA only says what it read,
and suggests a pause. ``[monitor] low_mood = false`` in the policy turns it off.

One finding at most; its fingerprint is the ISO week of the newest day, so it comes at most once
a week.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from actions.planners.base import PlanResult, cap_evidence
from agent.detectors.logread import last_days, weekly_fingerprint
from agent.detectors.meaning import Reader, others
from agent.detectors.pending import sentences
from policies.i18n import _
from policies.text import loose_fold
from state.chatlog import Paragraph

KIND = "low_mood"
WINDOW_DAYS = 7
MIN_DAYS = 3
MIN_RISE = 0.5
MIN_WORDS = 4
#: A fall: low on this many of the last FALL_SPAN days with turns, after a day without.
FALL_DAYS = 4
FALL_SPAN = 5
#: From this score a turn reads low by its meaning (the reader's scale: +1 is the low examples'
#: side). Chosen on the development weeks and sentences of our own (docs/agent.md, `low_mood`).
THRESHOLD = 0.5

# Sentences written for ALMA, never taken from a test set: a low mood said without naming a
# feeling, and what a day says otherwise (passing annoyance, good tiredness, someone else's
# mood, the body, the work).
LOW = (
    # nothing appeals any more
    "Ya no disfruto ni de las cosas que antes me gustaban.",
    "Antes me encantaba salir a correr, ahora ni me lo planteo.",
    "Nothing is fun anymore, not even the things I used to love.",
    "I used to look forward to weekends, now they're just empty.",
    # pulling away from people
    "He cancelado la cena con los amigos, prefiero quedarme solo en casa.",
    "Llevo días con el móvil en silencio para no hablar con nadie.",
    "Tengo mensajes de mi madre sin responder desde el lunes.",
    "Cancelled on my friends again, I just want to be left alone.",
    "I haven't replied to anyone's messages in days.",
    # pointless, hopeless
    "Total, da igual lo que haga, todo va a salir mal.",
    "Para qué me esfuerzo si al final nadie lo nota.",
    "No le veo sentido a nada de lo que hago.",
    "What's the use of trying, it never changes anything.",
    "I can't see this getting any better.",
    # not good enough
    "Soy un desastre, todo lo que toco sale mal.",
    "Siento que le fallo a todo el mundo.",
    "Cualquiera lo haría mejor que yo.",
    "I'm letting everyone down, as usual.",
    "Everyone else copes, I'm the one who can't.",
    # no strength, heavy
    "Me arrastro por el día, sin fuerzas para nada.",
    "Se me hace todo cuesta arriba, hasta ducharme.",
    "Running on empty, everything takes so much effort.",
    "Even getting dressed felt like too much today.",
    # nights
    "Otra noche dando vueltas en la cama hasta las cuatro.",
    "Me despierto de madrugada con el pecho encogido y ya no me duermo.",
    "Woke up at four again and just lay there.",
    # staying in, giving up on the day
    "Hoy no he sido capaz de levantarme hasta mediodía.",
    "He faltado al trabajo, no podía con el día.",
    "Called in sick, I just couldn't face anyone.",
    "Spent the whole day on the sofa with the curtains closed.",
    # flat, numb
    "Bah, me da todo igual.",
    "Me siento apagado, ni bien ni mal, como vacío.",
    "Whatever. Doesn't matter.",
    "I feel numb, like I'm watching my life from outside.",
    # tears, a knot
    "Se me saltan las lágrimas por cualquier tontería.",
    "Tengo un nudo en el estómago todo el día y no sé por qué.",
    "Teared up in the middle of the meeting over nothing.",
)
NOT_LOW = (
    # an ordinary day
    "Buenos días, hoy empiezo con el informe.",
    "Reunión a las diez y luego a revisar presupuestos.",
    "He terminado el capítulo, lo mando mañana.",
    "Cierro por hoy, mañana más.",
    "La copia de seguridad ha fallado otra vez.",
    "Good morning, starting on the report today.",
    "Meeting at ten, then the budget review.",
    "The build is broken again, looking into it.",
    "Done for today, see you tomorrow.",
    # a good day, a good tiredness
    "Día largo pero muy bonito, estoy contenta.",
    "Cansado pero satisfecho, ha salido todo bien.",
    "Qué gusto tener la tarde libre para leer.",
    "Tired but happy, the launch went well.",
    "Lovely walk by the river, feeling good.",
    # a passing annoyance, recovered
    "Qué rabia, se me ha escapado el autobús; bueno, el siguiente.",
    "Me dio pena despedirme de ella, pero estoy bien.",
    "Un mal rato con el cliente, pero ya está resuelto.",
    "Annoying morning with the printer, sorted now.",
    "Bit sad to say goodbye to the team, but excited for what's next.",
    # someone else's mood
    "Mi hermana está pasando una mala racha, la llamo esta noche.",
    "Mi compañero está muy quemado con el proyecto.",
    "A mi padre le cuesta dormir desde la operación.",
    "My friend has been really down lately, I'm worried about her.",
    "The team is stressed about the deadline.",
    # the body, the weather, the work
    "Me duele la espalda de tanto ordenador.",
    "Llueve sin parar, vaya tiempo.",
    "Mañana madrugo, a dormir pronto.",
    "My knee hurts after the run.",
    "Early start tomorrow, off to bed.",
    # a short answer
    "No, gracias, ya lo tengo.",
    "Unas treinta, si no se complica.",
    "Sí, eso es.",
    "Nope, all good.",
    "Just the usual stuff.",
    "About forty, should be done by five.",
    # asking, planning
    "¿Me recuerdas llamar al dentista el jueves?",
    "El viernes le devuelvo el libro a Marta.",
    "Can you remind me to book the train?",
)

READER = Reader(LOW, NOT_LOW)

_LEXICON = (
    r"triste[sz]?|tristeza|agotad[oa]s?|cansad[oa]s?|cansancio|hart[oa]s?|ansiedad|ansios[oa]s?"
    r"|angustia(?:d[oa]s?)?|fatal|desanimad[oa]s?|frustrad[oa]s?|frustracion|agobiad[oa]s?"
    r"|agobio|estresad[oa]s?|estres|deprimid[oa]s?|sin ganas|no puedo mas"
    r"|solo[a]? en el mundo|fracaso|fracasad[oa]s?|desesperad[oa]s?|quemad[oa]s?|abrumad[oa]s?"
    r"|fatiga|insomnio|no duermo|odio mi|desengañad[oa]s?|engañad[oa]s?|muert[oa]s? de sueño"
    r"|llor(?:e|o|ar|ando|ado)|no se (?:que|lo que) me pasa|todo me (?:pesa|cuesta)"
    r"|me pesa todo|me siento (?:inutil|vaci[oa]|perdid[oa]|sol[oa])"
    # English, for a person who writes in it
    r"|tired|exhausted|worn out|drained|stressed|anxious|anxiety|overwhelmed|burn(?:ed|t) out"
    r"|miserable|depressed|hopeless|frustrated|fed up|insomnia|i hate my|cried|crying"
    r"|i'?m useless|i am useless|i feel (?:useless|worthless|empty)|what'?s the point"
)
_WORD = re.compile(rf"\b(?:{loose_fold(_LEXICON)})\b")
#: A mood told by what is lost: a wish, a joy, sleep, one's worth, after a negation in the same
#: clause ("no tengo ganas", "nada me anima", "ni el viernes me alegra", "no he dormido",
#: "no valgo para esto", "I don't feel like", "nothing cheers me up", "couldn't sleep"); not
#: when the clause wonders ("no sé si me apetece", "no sabes las ganas que tengo"), is about
#: someone else ("no le apetece", "they don't enjoy") or advises ("no olvides dormir").
_LOST = re.compile(
    r"(?<!\bthey )(?<!\bshe )(?<!\bhe )(?<!\byou )"
    r"\b(?:no|nada|ni|nadie|nunca|jamas|apenas|nothing|never|not|don't|didn't|can't|couldn't"
    r"|doesn't|won't)"
    r"(?: (?!(?:si|que|sabes|sabe|if|know|te|le|les|os|you|olvides|dejes)\b)[\w']+){0,3}? "
    r"(?:ganas|animo|apetece|alegra|anima|ilusiona|motiva|disfruto|alivio|fuerzas|energia|valgo"
    r"|sirvo|dormido|dormir|dormi|pegue ojo|feel like|cheers? me up|enjoy\w*|motivated"
    r"|energy|sleep|slept|be bothered)\b"
)
#: Words of tiredness alone: every night of a long week says them, and a fall needs more.
_TIRED = re.compile(
    loose_fold(
        r"agotad[oa]s?|cansad[oa]s?|cansancio|fatiga|muert[oa]s? de sueño|tired|exhausted"
        r"|worn out|drained"
    )
)
#: After a tiredness, a good word says a good tiredness ("cansado pero bien", "tired but
#: happy"), not a low one; "pero bueno" (resignation) is not one.
_GOOD_AFTER = re.compile(
    r",? (?:pero|but) (?:muy |tan |so |very )?(?:bien|content[oa]s?|feliz|felices|satisfech[oa]s?"
    r"|a gusto|happy|good|fine|satisfied|content|pleased)\b"
)
_NEGATION = {"no", "nunca", "ni", "tampoco", "jamas", "not", "never", "nor", "don", "didn", "isn"}
_TOKEN = re.compile(r"[a-z]+")


def _asked(folded: str, start: int, end: int) -> bool:
    """Whether the sentence holding ``folded[start:end]`` is a question ("¿no te apetece?")."""
    opened = max(folded.rfind(c, 0, start) for c in ".!?\n¿")
    closes = [i for i in (folded.find(c, end) for c in ".!?\n") if i >= 0]
    return (opened >= 0 and folded[opened] == "¿") or (bool(closes) and folded[min(closes)] == "?")


def negative_words(text: str) -> list[str]:
    """The negative words of ``text`` that are not negated, and the losses a negation tells."""
    folded = loose_fold(text).replace("’", "'")
    out = [m.group(0) for m in _LOST.finditer(folded) if not _asked(folded, m.start(), m.end())]
    for m in _WORD.finditer(folded):
        if m.group(0).startswith("no ") or m.group(0) == "sin ganas":
            out.append(m.group(0))
            continue
        before = _TOKEN.findall(folded[: m.start()])[-3:]
        if _NEGATION & set(before):
            continue
        if _TIRED.fullmatch(m.group(0)) and _GOOD_AFTER.match(folded, m.end()):
            continue
        out.append(m.group(0))
    return out


def _turns(paragraphs: Sequence[Paragraph]) -> list[Paragraph]:
    return [p for p in paragraphs if p.by_person and p.kind == "turn"]


def read_low(texts: Sequence[str]) -> list[bool]:
    """Which texts read low by their meaning, of the person's own mood (all False without the
    embedder): a text, or one of its sentences (a low sentence among the day's news is not
    drowned by them), from :data:`THRESHOLD`; a text that opens on another person, or a
    sentence that does, is not the person's mood."""
    parts = [[t, *(p for p, _line in sentences(t))] for t in texts]
    scores = READER.scores([p for ps in parts for p in ps])
    if scores is None:
        return [False] * len(texts)
    out: list[bool] = []
    at = 0
    for ps in parts:
        mine = [s for p, s in zip(ps, scores[at : at + len(ps)], strict=True) if not others(p)]
        at += len(ps)
        out.append(not others(ps[0]) and any(s >= THRESHOLD for s in mine))
    return out


def _counted(turns: Sequence[Paragraph]) -> list[tuple[int, bool]]:
    """Each turn's count (its negative words, or one when it has none and reads low), and
    whether it says more than tiredness."""
    words = [negative_words(p.text) for p in turns]
    out = [(len(w), any(_TIRED.fullmatch(x) is None for x in w)) for w in words]
    unread = [i for i, w in enumerate(words) if not w]
    for i, low in zip(unread, read_low([turns[i].text for i in unread]), strict=True):
        out[i] = (1, True) if low else (0, False)
    return out


def day_score(paragraphs: Sequence[Paragraph]) -> tuple[float, int] | None:
    """A day's mood measure: the person's negative words (and turns read low) per turn of
    theirs, and how many; None when the person wrote no turn that day (the detector's, the
    panel's plot)."""
    turns = _turns(paragraphs)
    if not turns:
        return None
    return _measure(turns, [n for n, _more in _counted(turns)])


def _measure(turns: Sequence[Paragraph], counts: Sequence[int]) -> tuple[float, int]:
    words = sum(counts)
    return words / len({p.turn for p in turns}), words


def _fell(days: Sequence[tuple[int, bool]]) -> bool:
    """A mood that turned low and stayed so (``days``: each day's count, and whether it says
    more than tiredness): low on :data:`FALL_DAYS` of the last :data:`FALL_SPAN` days with
    turns, more than tired on two of them, with :data:`MIN_WORDS` in those days, after a day
    without a low word. A mood low from the window's first day to its last is no fall, and
    tiredness every night is a long week's (``long_hours``), not a mood."""
    last, before = days[-FALL_SPAN:], days[:-FALL_SPAN]
    low = sum(1 for n, _more in last if n)
    more = sum(1 for n, more in last if n and more)
    words = sum(n for n, _more in last)
    return low >= FALL_DAYS and more >= 2 and words >= MIN_WORDS and any(not n for n, _m in before)


def detect_low_mood(
    days: Sequence[tuple[date, str, list[Paragraph]]], now: float
) -> PlanResult | None:
    """``days``: (day, log path, parsed paragraphs) for each chat log, any order."""
    since, today = last_days(now, WINDOW_DAYS)
    scores: list[tuple[date, float, int]] = []
    moods: list[bool] = []  # per day: more than tiredness said
    evidence: list[str] = []
    read = [
        (day, path, turns)
        for day, path, paragraphs in sorted(days, key=lambda d: d[0])
        if since <= day <= today and (turns := _turns(paragraphs))
    ]
    if len(read) < MIN_DAYS:
        return None  # no trend over so few days: no line is even read by meaning
    for day, path, turns in read:
        counted = _counted(turns)
        for p, (n, _more) in zip(turns, counted, strict=True):
            if n:
                shown = p.text if len(p.text) <= 120 else p.text[:119] + "…"
                evidence.append(f"{path}:{p.line}: «{shown}»")
        scores.append((day, *_measure(turns, [n for n, _more in counted])))
        moods.append(any(n and more for n, more in counted))
    if len(scores) < MIN_DAYS:
        return None
    half = len(scores) // 2
    older, recent = scores[:half], scores[half:]
    older_mean = sum(s for _day, s, _words in older) / len(older)
    recent_mean = sum(s for _day, s, _words in recent) / len(recent)
    recent_words = sum(w for _day, _score, w in recent)
    rose = recent_mean - older_mean >= MIN_RISE and recent_words >= MIN_WORDS
    fell = _fell([(w, more) for (_day, _score, w), more in zip(scores, moods, strict=True)])
    if not rose and not fell:
        return None
    newest = scores[-1][0]
    return PlanResult(
        kind=KIND,
        target="logs",
        title=_("These days your messages sound more tired"),
        reason=_(
            "Your messages of the last days hold more and more words like “exhausted”, "
            "“sad” or “fed up”. It is only what I read; if it helps, a break or talking "
            "with someone you trust can help."
        ),
        evidence=cap_evidence(evidence[-10:]),
        plan=[],
        files=0,
        fingerprint=weekly_fingerprint(KIND, newest),
    )
