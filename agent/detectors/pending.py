"""``pending_task``: something the person promised in a chat log and did not say was done.

Rule-based, Spanish first and some English. Text is compared folded (lower case, accents
removed: "Mañana" and "manana" match), sentence by sentence; a sentence made only of hashtags
joins the one before it ("... sueltas. #pendiente").

A promise (:func:`is_promise`) is a sentence of the person's (a ``usuario`` turn or a
hand-written note) that carries ``#pendiente``, ``#todo`` or ``TODO:``, or commits the person
to a task: a verb and what it acts on, in one of these forms:

- an obligation or intention in the first person and an infinitive: "tengo que llamar al
  fontanero", "tendré que", "tenemos que", "tengo pendiente", "me toca", "me comprometo a",
  "voy a", "recuérdame", "no olvidar", "I have to", "I'll", "I need to", "remind me to";
- the first person present or future of a verb with its object, as Spanish promises it:
  after a time ("mañana llamo al banco", "esta tarde termino la presentación"), after whom it
  is for ("te mando el informe", "se lo escribo mañana"), or leading a sentence that names a
  time ("termino el capítulo esta tarde"); "haré la compra mañana".

Not a promise: an agenda (the time read after a colon is not the verb's: "miro la agenda:
mañana oficina"), a plan with no verb ("luego unas cañas"), "I'll take it"; a sentence about tomorrow with no task of the person's ("Mañana es lunes y hay
reunión", "Mañana empieza una semana dura"); a verb that is not a task ("tengo que decir que
…", "tengo que admitir", "tengo que descansar", "I'll be tired"); negated ("no tengo que",
"ya no"), hedged or conditional ("si", "quizás", "igual", "maybe", "if"), reported ("dijo
que", quoted words), the past ("tuve que"), a question, or a rule to keep ("#principio",
"recuérdame que nunca/siempre …", "remind me never to …": principles, which memory handles).

It counts as done (:func:`says_done_of`) when a later sentence of the person's (later that day
or on a later day), not negated, either shares at least two of its keywords (one if it has
just one) and says it is done ("hecho", "terminado", "listo", "ya está", ``#hecho``, "done",
or starts with "ya "), or says one of the promise's verbs in a done form and shares what it
acts on: "llamé al fontanero", "ya le mandé el informe", "DNI renovado", "he reservado mesa",
"sent the slides", "impresas las fichas", "hung the posters". Words are compared by their
Snowball stems (Spanish, and English for the English ones), so "llamar", "llamo" and "llamé"
meet; an irregular form takes its verb's stem ("impreso", "propuesto", "propongo", "built"). "Ha escrito" is someone else's doing.
Kept in other words too: a deed of the person's in a regular done form, not negated, with two
of its keywords ("Lo arreglo mañana" after "se ha roto el grifo de la cocina": a promise that
names its object by a pronoun is about the sentence before it; "grifo de la cocina
cambiado"), in one sentence or over a later turn; a promise to start something ("mañana
empiezo con el tema 7", "I'll start on the edits") by a later day naming it under way. A
number is a keyword ("el capítulo 9").
A later sentence that shares the keywords without saying it is done ("la carpeta sigue
igual") is shown as evidence.

Kept by meaning too (:mod:`agent.detectors.kept`): a later line or turn of the person's about
the same thing, sharing one of its keywords, that reads as done, handed over, under way or
settled another way ("Mandada la m3" for "les mando la maqueta tres").

A promise is reported once due (:func:`due`): at least a day old (a "mañana" is not due the
day it is said), after the Sunday of the next week for "la semana que viene", of the weekend
for "el fin de semana"; a task set for its own day only ("esta tarde", "antes de entrar") is
that day's plan, never reported; and at most :data:`MAX_AGE_DAYS` old. The fingerprint is (log path, the folded sentence).
The labelled set in ``tests/data/promises`` measures these rules (docs/agent.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

import snowballstemmer

from actions.planners.base import PlanResult, cap_evidence, fingerprint
from agent.detectors.kept import kept_by
from policies.i18n import _
from policies.text import loose_fold, without_hashtags
from state.chatlog import Paragraph

KIND = "pending_task"
MAX_AGE_DAYS = 30

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_TAG_TASK = re.compile(r"(?:^|\s)#(?:pendiente|todo)\b|\btodo:")
_LEAD = re.compile(r"^[¡\s*-]+")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»")
_RULE = re.compile(
    r"#principio\b|\bque (?:nunca|siempre|jamas)\b|^(?:nunca|siempre|jamas|never|always)\b"
    r"|\bremind me (?:to )?(?:never|always)\b"
)

_CLITICS = r"(?:(?:me|te|le|les|nos|os|se|lo|la|los|las) )*"
#: An obligation or an intention of the person's, then the infinitive of the task.
_INTENT = re.compile(
    _CLITICS + r"(?:(?:tengo|tendre|tenemos|tendremos) (?:que|pendiente)|me toca|nos toca"
    r"|me comprometo a|nos comprometemos a|(?P<soon>(?:voy|vamos) a)|recuerdame|recordarme"
    r"|no me dejes olvidar|no olvidar|hemos de|he de|(?P<en>i (?:will|have to|need to|must"
    r"|promise to|have got to)|i'll|i've got to|i gotta|we (?:will|have to|need to|must)"
    r"|we'll|remind me to|don't let me forget to"
    r"|(?P<en_soon>i'm going to|i am going to|i'm gonna|we're going to))) "
    r"(?:(?:acordarme|acordarnos) de |(?:intentar|tratar de|try to) )?(?P<verb>[\w']+)(?P<rest>.*)"
)
_INFINITIVE = re.compile(r"[a-zñ]+(?:ar|er|ir)(?:me|te|le|les|lo|la|los|las|nos|os|se)*")
#: Verbs that make no task: "tengo que decir que…", "tengo que descansar", "I'll be tired",
#: "I'll take it" (accepting what came).
_NOT_A_TASK = re.compile(
    r"(?:admitir|reconocer|confesar|ser|estar|descansar|dormir|relajar|calmar|respirar"
    r"|pensar|agobiar|madrugar|tomar(?=melo|noslo))\w*|(?:decir|ver)\w* (?:que|si)\b"
    r"|(?:be|say|admit|confess|sleep|rest|relax|never|not|always|have)\b"
    r"|take (?:it|that)(?: as [^,;]*)?[.!…\s]*$"
)
#: A time the sentence is set in, which makes a present tense a promise ("mañana llamo").
_TIME = (
    r"manana|hoy|luego|despues(?: de \w+)?|ahora|pronto|esta (?:tarde|noche|semana)"
    r"|este (?:finde|fin de semana)|el (?:lunes|martes|miercoles|jueves|viernes|sabado|domingo)"
    r"|a primera hora|por la (?:manana|tarde|noche)|sin falta|mismo|en cuanto \w+"
)
_HAS_TIME = re.compile(
    rf"\b(?:{_TIME}|semana que viene|proxima semana|antes del?|tomorrow|tonight|later|soon"
    r"|this (?:morning|afternoon|evening|week|weekend)|next \w+|after \w+|by \w+"
    r"|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
)
#: A first person present or future of a verb, where a promise puts it: at the start (after a
#: time), or after whom it is for ("te mando", "se lo escribo", "lo mando").
_DOING = re.compile(
    rf"(?:^(?:(?:{_TIME}),? )*(?P<lead>(?:(?:te|le|les|os|se) )?(?:(?:lo|la|los|las) )?)"
    r"|\b(?P<for>(?:te|le|les|os)(?: (?:lo|la|los|las))?|se (?:lo|la|los|las)) )"
    r"(?P<verb>[a-zñ]{2,}o|[a-zñ]+(?:[aei]re|dre))\b(?P<rest>.*)"
)
#: Words in those places that are not a task's verb (or not one the person commits to), and
#: the strong preterites that end as a first person present does ("hoy vino mi hija": the past,
#: someone else's).
_NOT_DOING_WORDS = """
    tengo yo lo no como todo algo solo pero creo pienso espero supongo quiero puedo necesito
    prefiero siento digo sere estare tendre habre podre sabre querre libro otro poco mucho
    claro dentro cuando casi tanto cuanto pasado madre padre
    vino hizo puso dijo tuvo pudo supo quiso trajo estuvo anduvo condujo produjo
"""
_NOT_DOING = frozenset(_NOT_DOING_WORDS.split())
#: A participle ("llamado a la imprenta": done, not promised); a present in -ado is rare.
_PARTICIPLE = re.compile(r"[a-zñ]+ado")
#: A time or an order in a plan, where a verb would stand ("luego unas cañas", "primero el
#: mercado"): a plan with no verb of the person's.
_TIME_WORD = re.compile(rf"{_TIME}|primero|pronto|despues|antes")
_CLAUSE = re.compile(r"\s*[:;]\s*")
#: What the verb acts on: an article, a person ("a Juan", "al técnico"), "por"/"con" an errand.
_OBJECT = re.compile(
    r"^ (?:el|la|los|las|lo|un|una|unos|unas|al|a|mi|mis|tu|tus|su|sus|este|esta|estos|estas"
    r"|ese|esa|esos|esas|todo|toda|todos|todas|con|por|[0-9]+)\b"
)
#: "Por" and a time after the verb ends a stretch of work: "termino por hoy", "lo dejo por ahora".
_FOR_NOW = re.compile(
    r"^ por (?:hoy|ahora|el momento|esta (?:tarde|noche|semana)|la (?:manana|tarde|noche)"
    r"|este (?:rato|ano|mes))\b"
)
_GREETING = re.compile(r"\b(?:besos?|abrazos?|animos|saludos|recuerdos|carinos?)\b")
_NEGATED = re.compile(r"\b(?:no|nunca|jamas|tampoco|ni|sin)\s*$")
#: Before the commitment: a condition, a doubt, a relative ("lo que tengo que hacer es…"), or
#: someone else's words ("dijo que…").
_HEDGED = re.compile(
    r"\b(?:si(?!\s*,)|quizas?|tal vez|a lo mejor|igual|puede que|ojala|lo que|if|maybe"
    r"|perhaps|might)\b"
    r"|\b(?:dice|dijo|decia|dicen|dijeron|dicho|segun|says|said|told)\b"
)
_WORD = re.compile(r"[a-z0-9ñ]+")
#: A time that comes back (weekdays in the plural, every day or week): a habit, not one task
#: that is kept or left ("los martes llamo a mi abuela", "on Sundays", "every Friday").
_RECURRING = re.compile(
    r"(?<!\bde )\b(?:(?:todos )?los (?:lunes|martes|miercoles|jueves|viernes|sabados"
    r"|domingos)"
    r"|tod[oa]s (?:los|las) (?:dias|semanas|mananas|tardes|noches)|cada (?:dia|semana|manana"
    r"|tarde|noche|lunes|martes|miercoles|jueves|viernes|sabado|domingo)"
    r"|(?:on|every) (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)"
    r"|every (?:day|week|morning|evening|night|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)|each (?:day|week|morning|evening))\b"
)
#: A promise told as what the other will have: "I told her she'd have it by tomorrow".
_TOLD_THEY_HAVE = re.compile(
    r"(?:^|[,;] )(?:i )?(?:told|promised) (?:him|her|them|\w+) (?:that )?"
    r"(?:she|he|they|you)(?:'d| would|'ll| will) (?:have|get) "
)


def _task_follows(verb: str, rest: str, english: bool) -> bool:
    """An infinitive that is a task, with something it acts on (an object, a clitic on it)."""
    if _NOT_A_TASK.match(f"{verb}{rest}"):
        return False
    if not (verb.isalpha() if english else _INFINITIVE.fullmatch(verb)):
        return False
    attached = not english and re.search(r"(?:ar|er|ir)(?:le|les|lo|la|los|las|selo)$", verb)
    if re.match(r"\s*[,.;:!…]", rest):  # "I'll work, it helps": what follows is no object
        return bool(attached)
    return bool(attached or _WORD.search(rest))


def _commitment(folded: str) -> bool:
    told = _TOLD_THEY_HAVE.search(folded)
    if told and _HAS_TIME.search(folded[told.end() :]):
        return True
    for m in _INTENT.finditer(folded):
        before = folded[: m.start()]
        if _NEGATED.search(before) or _HEDGED.search(before):
            continue
        # "voy a abrir una posición" is what one does next, a promise only with a time
        soon = m["soon"] or m["en_soon"]
        if soon and not _HAS_TIME.search(folded):
            continue
        if _task_follows(m["verb"], m["rest"], english=bool(m["en"])):
            return True
    # A colon or a semicolon starts another clause: the time of an agenda read after it
    # ("miro la agenda: mañana oficina") is not the time of the verb before it.
    return any(_doing(clause) for clause in _CLAUSE.split(folded))


def _doing(folded: str) -> bool:
    for m in _DOING.finditer(folded):
        before = folded[: m.start()]
        verb, rest = m["verb"], m["rest"]
        if verb in _NOT_DOING or _PARTICIPLE.fullmatch(verb) or _TIME_WORD.fullmatch(verb):
            continue
        if _NEGATED.search(before) or _HEDGED.search(before):
            continue
        said_before = m["lead"] or m["for"] or ""
        has_object = bool(
            _OBJECT.match(rest) or re.search(r"\b(?:lo|la|los|las)$", said_before.strip())
        )
        if not has_object or _GREETING.search(rest[:30]) or _FOR_NOW.match(rest):
            continue
        if m["for"] or m["lead"] or verb.endswith("re") or _HAS_TIME.search(folded):
            return True
    return False


def is_promise(sentence: str) -> bool:
    text = sentence.strip()
    if text.startswith("¿") or text.endswith("?"):
        return False
    folded = _LEAD.sub("", loose_fold(text))
    if _RULE.search(folded):
        return False
    if _TAG_TASK.search(folded):
        return True
    spoken = re.sub(r"\s+", " ", _QUOTED.sub(" ", folded.replace("’", "'"))).strip()
    if _RECURRING.search(spoken):
        return False
    return _commitment(spoken)


# -- done ----------------------------------------------------------------------------------------

_DONE = re.compile(
    r"(?<!\bde )\b(?:hech[oa]s?|terminad[oa]s?|termine|list[oa]s?|ya esta|completad[oa]s?|complete"
    r"|acabe|acabad[oa]s?|resuelt[oa]s?|arreglad[oa]s?|arregle|solucionad[oa]s?|solucione"
    r"|done|finished)\b|#hecho\b|#done\b|^ya (?!no\b)"
)
_NOT_DONE = re.compile(
    r"\b(?:todavia no|aun no|sigue igual|siguen igual|sin hacer|no he|not yet|still"
    r"|didn't|did not|haven't|have not)\b"
)
_STOP_WORDS = """
    manana tengo tendre tenemos tendremos pendiente recuerdame recordarme comprometo olvidar
    dejes hacer hago haga esta este esto estos estas eso esos esas aquel para pero como cuando
    donde porque todo toda todos todas tiene tienes tener sobre entre desde hasta otra otro
    otras otros mucho mucha muy mas menos algo nada cada hace hacia luego ahora antes despues
    tambien solo sola bien quiero quieres voy vamos sera seria estoy estaba estan estamos
    tarde noche semana lunes martes miercoles jueves viernes sabado domingo hecho listo
    que los las del por con una uno unos unas sin hay muy les nos mis tus sus ese esa fue era
    ayer les mas the and for with this that have need will about after before tomorrow
    tonight done remind don't i'll i've i'm you your are was were his her him she they them
    but not all our its has had got
"""
_STOP = frozenset(_STOP_WORDS.split())
_NEGATED_ANYWHERE = re.compile(r"\b(?:no|ni|nunca|never|not|didn't|haven't|won't)\b")
#: A promise that names what it acts on by a pronoun only: "lo arreglo mañana", "I'll swap it".
_PRONOUN_OBJECT = re.compile(r"\b(?:lo|la|los|las|it|them)\b")
_SPANISH = snowballstemmer.stemmer("spanish")
_ENGLISH = snowballstemmer.stemmer("english")
#: Irregular forms a promise's verb takes once done, by the stem of its infinitive.
_IRREGULAR = {
    "hic": "hac", "hiz": "hac", "fui": "ir", "pus": "pon", "dij": "dec", "traj": "tra",
    "sent": "send", "paid": "pay", "wrote": "write", "written": "write", "made": "make",
    "did": "do", "bought": "buy", "took": "take", "gave": "give", "told": "tell", "met": "meet",
    "went": "go", "got": "get", "brought": "bring", "left": "leav", "spoke": "speak",
    "spoken": "speak", "sold": "sell", "hung": "hang", "built": "build", "found": "find",
    "drew": "draw", "drawn": "draw", "drove": "drive", "driven": "drive", "kept": "keep",
    "held": "hold", "taught": "teach", "caught": "catch", "spent": "spend", "chose": "choos",
    "chosen": "choos", "threw": "throw", "thrown": "throw", "stood": "stand", "swept": "sweep",
    "forgot": "forget", "forgotten": "forget", "woke": "wake", "woken": "wake", "dug": "dig",
    "laid": "lay",
}  # fmt: skip
#: Spanish irregular participles by the end of their stem, prefixed ones too ("impreso",
#: "reimpreso"; "propuesto"), -> the end of their verb's infinitive, whose stem they take so
#: that the promise and its done form meet.
_PARTICIPLES = (
    ("hech", "hacer"), ("dich", "decir"), ("crit", "cribir"), ("puest", "poner"),
    ("vuelt", "volver"), ("suelt", "solver"), ("biert", "brir"), ("impres", "imprimir"),
)  # fmt: skip
#: The same, only as whole words (with a prefix they would be other words: "revista").
_PARTICIPLE_WORDS = (("vist", "ver"), ("rot", "romper"), ("muert", "morir"), ("frit", "freir"))
#: Presents in -go, whose stem is not their infinitive's ("propongo", "hago").
_PRESENTS = (("pong", "poner"), ("hag", "hacer"))
_OTHER_STEM = re.compile(
    rf"(?P<pre>.*)(?P<end>{'|'.join(a for a, _b in _PARTICIPLES + _PRESENTS)})$"
    rf"|(?P<word>{'|'.join(a for a, _b in _PARTICIPLE_WORDS)})$"
)
_INFINITIVE_END = dict(_PARTICIPLES + _PARTICIPLE_WORDS + _PRESENTS)
#: A word in a done form: "llamé", "envié", "devolví", "reservado", "called"; "ya" before it.
_DONE_FORM = re.compile(
    r"[a-zñáéíóú]+(?:[éí]|ad[oa]s?|id[oa]s?|ed)"
    rf"|[a-zñ]*(?:{'|'.join(a for a, _b in _PARTICIPLES)})[oa]s?"
    rf"|(?:{'|'.join(a for a, _b in _PARTICIPLE_WORDS)})[oa]s?"
)
#: Before a done form: someone else did it ("ha escrito"), it is not done ("no llamé"), it is
#: a noun ("la subida") or a set phrase ("de vuelta", "de hecho").
_NOT_MINE = re.compile(r"\b(?:ha|han|has|habia|habian|se|no|me|la|el|los|las|un|una|de)\s*$")


@lru_cache(maxsize=8192)
def _stems(word: str) -> frozenset[str]:
    """The word's Spanish and English stems (written with its accents: "llamé" -> "llam"),
    folded, spelling changes evened out ("saqué"/"sacar", "empecé"/"empezar", "devuelvo"/
    "devolví"), irregular forms to their verb's ("hice" -> "hac", "sent" -> "send")."""
    out: set[str] = set()
    for stemmer in (_SPANISH, _ENGLISH):
        stem = loose_fold(str(stemmer.stemWord(word)))
        stem = _IRREGULAR.get(stem, stem)
        other = _OTHER_STEM.fullmatch(stem) if stemmer is _SPANISH else None
        if other is not None:
            pre, end = other["pre"] or "", other["end"] or other["word"]
            stem = loose_fold(str(stemmer.stemWord(pre + _INFINITIVE_END[end])))
        stem = re.sub(r"c$", "z", re.sub(r"gu$", "g", re.sub(r"qu$", "c", stem)))
        out.add(re.sub(r"(?<![qg])ue", "o", stem, count=1).replace("ie", "e", 1))
    return frozenset(out)


@lru_cache(maxsize=8192)
def _is_irregular(word: str) -> bool:
    return any(loose_fold(str(st.stemWord(word))) in _IRREGULAR for st in (_SPANISH, _ENGLISH))


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", unicodedata.normalize("NFC", text.lower()))


def sentences(text: str) -> Iterator[tuple[str, int]]:
    """(sentence, line offset within ``text``); hashtag-only sentences join the previous one."""
    out: list[tuple[str, int]] = []
    pos = 0
    for part in _SENTENCE_END.split(text):
        idx = text.find(part, pos)
        offset = text.count("\n", 0, max(idx, 0))
        pos = max(idx, pos) + len(part)
        part = part.strip()
        if not part:
            continue
        if out and not without_hashtags(part, "").strip():
            prev, prev_off = out[-1]
            out[-1] = (f"{prev} {part}", prev_off)
        else:
            out.append((part, offset))
    yield from out


@lru_cache(maxsize=4096)
def keywords(text: str) -> tuple[frozenset[str], ...]:
    """What a sentence is about: the stems of each of its words that is not a common one."""
    plain = without_hashtags(text)
    words = _words(plain)
    # a number names what it is about as well as a word: "el capítulo 9", "chapter 4"
    numbers = tuple(frozenset({n}) for n in re.findall(r"(?<![\w.,:])\d+(?![\w.,:]\d)", plain))
    return tuple(_stems(w) for w in words if len(w) >= 3 and loose_fold(w) not in _STOP) + numbers


#: A later sentence is read against every promise before it: fold it once.
_fold_once = lru_cache(maxsize=4096)(loose_fold)


@lru_cache(maxsize=4096)
def _bag(text: str) -> frozenset[str]:
    return frozenset().union(*keywords(text))


def shared_words(promise: str, later: str) -> int:
    """How many of ``promise``'s keywords ``later`` has too."""
    theirs = _bag(later)
    return sum(1 for word in keywords(promise) if word & theirs)


@lru_cache(maxsize=4096)
def _done_verbs(text: str, regular: bool = False) -> tuple[frozenset[str], ...]:
    """The stems of the words of ``text`` in a done form that the person did ("llamé",
    "DNI renovado", "sent"), not someone else ("ha escrito") nor a noun ("la subida");
    ``regular``: only the regular forms, common words left out ("nada" is no participle)."""
    lower = unicodedata.normalize("NFC", text.lower())
    out: list[frozenset[str]] = []
    for m in re.finditer(r"[^\W\d_]+", lower):
        word = m.group()
        if regular and (not _DONE_FORM.fullmatch(word) or loose_fold(word) in _STOP):
            continue
        if not (_DONE_FORM.fullmatch(word) or _is_irregular(word)):
            continue
        if not _NOT_MINE.search(loose_fold(lower[max(0, m.start() - 12) : m.start()])):
            out.append(_stems(word))
    return tuple(out)


def says_done(folded: str) -> bool:
    return bool(_DONE.search(folded)) and not _NOT_DONE.search(folded)


def says_done_of(promise: str, later: str, about: str = "") -> bool:
    """Whether ``later``, a sentence (or a turn) of the person's written after ``promise``,
    says it done: "done" and two of its keywords (one if it has one), one of its verbs in a
    done form and another of its keywords, or a deed of the person's in other words and two
    of its keywords. ``about``: the sentence a promise that names its object by a pronoun
    ("lo arreglo mañana", "I'll swap it in") is about; its keywords count as the promise's."""
    subject = f"{about} {promise}" if about else promise
    shared = shared_words(subject, later)
    if not shared or later.strip().endswith("?"):
        return False
    folded = _fold_once(later)
    if _NOT_DONE.search(folded):
        return False
    ours = keywords(subject)
    if says_done(folded) and shared >= min(2, len(ours)):
        return True
    theirs = _bag(later)
    said = _verb_keys(_every_stem(promise))
    for verb in _done_verbs(later):
        if _verb_keys(verb) & said and any(w & theirs and not w & verb for w in ours):
            return True
    if _NEGATED_ANYWHERE.search(folded):
        return False
    return any(
        sum(1 for w in ours if w & theirs and not w & verb) >= 2
        for verb in _done_verbs(later, regular=True)
    )


_START = re.compile(
    r"\b(?:empiezo|empezare|arranco|arrancare|comienzo|comenzare|me pongo|me pondre"
    r"|(?:i'll|i will|we'll|we will|i'm going to|i am going to) (?:start|begin|get started))\b"
)


def says_begun_of(promise: str, later: str) -> bool:
    """Whether ``later``, said on a later day, shows ``promise``, a promise to start
    something ("mañana empiezo con el tema 7", "I'll start on the edits"), under way: it
    names what was to be started (two of its keywords, one if it has one), not negated, not
    asked."""
    start = _START.search(_fold_once(promise))
    if start is None or later.strip().endswith("?"):
        return False
    folded = _fold_once(later)
    if _NOT_DONE.search(folded) or _NEGATED_ANYWHERE.search(folded):
        return False
    verbs = _every_stem(start.group())
    ours = [w for w in keywords(promise) if not w & verbs]
    theirs = _bag(later)
    return bool(ours) and sum(1 for w in ours if w & theirs) >= min(2, len(ours))


@lru_cache(maxsize=4096)
def _verb_keys(stems: frozenset[str]) -> frozenset[str]:
    """Stems as a verb's forms meet, its last vowel's e/i change and its final j/g evened
    out: "corrij" (corrijo) and "correg" (corregido), "pid" and "ped". Only a verb is compared
    so: as keywords, "peso" and "piso" stay apart."""
    return frozenset(re.sub(r"j$", "g", re.sub(r"[ei](?=[^aeiou]*$)", "i", s)) for s in stems)


@lru_cache(maxsize=1024)
def _every_stem(text: str) -> frozenset[str]:
    """The stems of all of ``text``'s words, common ones too ("hacer" for "hice")."""
    return frozenset().union(*(_stems(w) for w in _words(text)))


@dataclass(frozen=True)
class _Said:
    day: date
    path: str
    line: int
    clock: str
    text: str
    before: str  # the sentence before it in the same turn, "" if none
    turn: str  # the whole turn (or note) it is in
    turn_line: int


def _person_sentences(days: Sequence[tuple[date, str, list[Paragraph]]]) -> list[_Said]:
    out: list[_Said] = []
    for day, path, entries in sorted(days, key=lambda d: (d[0], d[1])):
        for e in entries:
            if not e.by_person:
                continue
            before = ""
            for sentence, offset in sentences(e.text):
                out.append(
                    _Said(day, path, e.line + offset, e.clock, sentence, before, e.text, e.line)
                )
                before = sentence
    return out


def _kept(s: _Said, later: Sequence[_Said]) -> bool:
    """Whether a later sentence of the person's says ``s``'s promise done, or the whole of a
    later turn does (what it was in one sentence, the deed in the next), or, for a promise to
    start something, a later day shows it under way; else whether one of them keeps it by
    meaning (:mod:`agent.detectors.kept`)."""
    pronoun = _PRONOUN_OBJECT.search(_fold_once(s.text)) and len(keywords(s.text)) <= 2
    about = s.before if pronoun else ""
    read: list[str] = []
    for t in later:
        if says_done_of(s.text, t.text, about):
            return True
        read.append(t.text)
        other_turn = (t.path, t.turn_line) != (s.path, s.turn_line) and t.turn != t.text
        if other_turn and says_done_of(s.text, t.turn, about):
            return True
        if other_turn and t.turn not in read:
            read.append(t.turn)
        if t.day > s.day and says_begun_of(s.text, t.text):
            return True
    subject = f"{about} {s.text}" if about else s.text
    return kept_by(subject, [t for t in read if shared_words(subject, t)])


#: The time a promise names, for when it falls due: the next week or month, a weekend, or
#: only the day it is said ("esta tarde", "antes de entrar", "tonight": a plan of that day).
_NEXT_WEEK = re.compile(
    r"\b(?:semana que viene|proxima semana|mes que viene|proximo mes|next (?:week|month))\b"
)
_WEEKEND = re.compile(r"\b(?:fin de semana|finde|weekend)\b")
_TODAY_ONLY = re.compile(
    r"\b(?:hoy|esta (?:manana|tarde|noche)|antes de (?:entrar|salir|comer|cenar|irme|acostarme)"
    r"|tonight|today|this (?:morning|afternoon|evening)|later today)\b"
)


def due(said: date, sentence: str) -> date | None:
    """The last day a promise said on ``said`` leaves for its task, or None for a plan of
    that day only (a task set for the day it is told is the day's plan: whether it was done
    goes unsaid). A promise with no such time is due the day it is said, and so reported
    from the next (a "mañana" is not due the day it is said)."""
    folded = _fold_once(sentence)
    if _NEXT_WEEK.search(folded):
        return said + timedelta(days=13 - said.weekday())  # the next week's Sunday
    if _WEEKEND.search(folded):
        # this week's Sunday; said on a Sunday, the next weekend is meant
        return said + timedelta(days=(6 - said.weekday()) or 7)
    if _TODAY_ONLY.search(folded) and not _HAS_TIME.search(_TODAY_ONLY.sub(" ", folded)):
        return None
    return said


def detect_pending(
    days: Sequence[tuple[date, str, list[Paragraph]]], now: float
) -> list[PlanResult]:
    """``days``: (day, log path, parsed entries) for each chat log, any order."""
    today = datetime.fromtimestamp(now).date()
    oldest = today - timedelta(days=MAX_AGE_DAYS)
    said = _person_sentences(days)
    results: list[PlanResult] = []
    seen: set[str] = set()
    for i, s in enumerate(said):
        if not (oldest <= s.day < today) or not is_promise(s.text):
            continue
        deadline = due(s.day, s.text)
        if deadline is None or deadline >= today:
            continue
        task = without_hashtags(s.text, "").strip(" .,;")
        key = " ".join(_WORD.findall(loose_fold(task)))
        if not key or key in seen:
            continue
        seen.add(key)
        if _kept(s, said[i + 1 :]):
            continue
        need = min(2, len(keywords(s.text)))
        later = [t for t in said[i + 1 :] if need and shared_words(s.text, t.text) >= need]
        where = f"{s.path}:{s.line}" + (f" ({s.clock})" if s.clock else "")
        evidence = [f"{where}: {s.text}"]
        evidence += [
            _("Mentioned again at {path}:{line}: {text}", path=t.path, line=t.line, text=t.text)
            for t in later
        ]
        shown = task if len(task) <= 80 else task[:79] + "…"
        if s.clock:
            when = _("on {day} at {time}", day=s.day.isoformat(), time=s.clock)
        else:
            when = _("on {day}", day=s.day.isoformat())
        results.append(
            PlanResult(
                kind=KIND,
                target=s.path,
                title=_("Pending: {task}", task=shown),
                reason=_("You wrote it down {when} and nothing says it is done", when=when),
                evidence=cap_evidence(evidence),
                plan=[],
                files=0,
                fingerprint=fingerprint(KIND, s.path, [key]),
            )
        )
    return results
