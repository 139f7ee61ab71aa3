"""What a person's reason for rejecting a suggestion asks for: its intent and its target.

The intent is read for its meaning, not its words: the reason's e5 query vector (the memory's
own embedder, the one loaded for memories; nothing else is loaded), the character n-grams of
its folded words (what carries across spellings, typos and missing accents that a vector of
the whole sentence blurs) and the kind of the suggestion rejected go through a small
multinomial logistic model whose weights are a data file in the package
(``agent/data/reasons.json``), fitted offline by ``python -m tests.support.reasons_eval --fit``
(docs/agent.md says on what). The arithmetic is a dot product in numpy: the same reason reads
the same on every run. Exact rules follow the model where a sentence's words settle what it
asks, whatever the vector read: a grouping asked while the other is turned down ("por
proyecto, no por fecha", "por año no, por empresa") or asked in so many words ("by topic");
deletion forbidden in so many words on a plan that deletes; a file named by its full name
(the file is kept, not the folder); "lo hago yo"; a slip of the button; "recuérdamelo más
tarde"; "for good". Each rule only moves a reading the kind can carry.

The target is read by rule, where rules are exact: a file the reason names (a path, a quoted
name, a name with an extension, a name after "archivo"/"file called") for ``keep_file``; a
folder the reason names (its name as the root has it, in either language's usual name, "la
carpeta X", "the X folder") for the others; else the suggestion's own folder ("ahí", "aquí",
"here" name it too). ``stop_kind`` and ``none`` have no target; ``not_now`` has one only when
the reason names a place.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from actions.planners.organize import KIND as ORGANIZE
from policies import kinds
from policies.text import loose_fold

Vector = npt.NDArray[np.float32]

FLAT = "flat"
NEVER_DELETE = "never_delete"
SELF_ORGANIZE = "self_organize"
NOT_NOW = "not_now"
GROUP_BY_DATE = "group_by_date"
GROUP_BY_PROJECT = "group_by_project"
KEEP_FILE = "keep_file"
STOP_KIND_INTENT = "stop_kind"
NONE = "none"
INTENTS = (
    FLAT,
    NEVER_DELETE,
    SELF_ORGANIZE,
    NOT_NOW,
    GROUP_BY_DATE,
    GROUP_BY_PROJECT,
    KEEP_FILE,
    STOP_KIND_INTENT,
    NONE,
)
#: Intents about no place.
_NO_TARGET = frozenset({STOP_KIND_INTENT, NONE})

MODEL_FILE = "reasons.json"
#: The reasons read and kept per process (a person's decisions are few; each is read once).
CACHE_SIZE = 2_000


@dataclass(frozen=True)
class Reading:
    """What ALMA took from one reason."""

    intent: str
    target: str | None  # root-relative folder or file, None when about no place
    confidence: float  # the model's probability of ``intent``


#: The lengths of the character n-grams read, each word padded with a space on either side.
GRAM_LENGTHS = (3, 4, 5)


def grams(text: str, buckets: int) -> npt.NDArray[np.float64]:
    """The character n-grams of ``text``'s words, folded (case, accents, ñ) and with anything
    but letters and digits taken as a space, hashed by CRC-32 into ``buckets`` (the same
    bucket on every machine and run), each count ``1 + log``, the whole of unit length."""
    counts: dict[int, int] = {}
    for word in _folded_words(as_read(text)).split():
        padded = f" {word} "
        for n in GRAM_LENGTHS:
            for i in range(max(1, len(padded) - n + 1)):
                bucket = zlib.crc32(padded[i : i + n].encode()) % buckets
                counts[bucket] = counts.get(bucket, 0) + 1
    out = np.zeros(buckets)
    for bucket, count in counts.items():
        out[bucket] = 1.0 + np.log(count)
    norm = float(np.linalg.norm(out))
    return out / norm if norm else out


@dataclass(frozen=True)
class ReasonModel:
    """The fitted model: ``softmax(W @ features + b)`` over ``intents``, where the features
    are the reason's vector centred and scaled as fitted, then the rejected kind one-hot, then
    the reason's hashed n-grams (``grams``) times ``gram_scale`` (their weight beside the
    vector's standardized coordinates, chosen as fitted)."""

    embedder: str  # the embedder whose vectors the weights read
    intents: tuple[str, ...]
    kinds: tuple[str, ...]
    mean: Vector
    scale: Vector
    weights: npt.NDArray[np.float64]  # (intents, dim + kinds + buckets)
    bias: npt.NDArray[np.float64]
    buckets: int
    gram_scale: float

    def features(self, vector: Vector, text: str, kind: str) -> npt.NDArray[np.float64]:
        v = (np.asarray(vector, dtype=np.float64) - self.mean) / self.scale
        onehot = np.array([1.0 if k == kind else 0.0 for k in self.kinds])
        return np.concatenate([v, onehot, self.gram_scale * grams(text, self.buckets)])

    def probabilities(self, vector: Vector, text: str, kind: str) -> npt.NDArray[np.float64]:
        z = self.weights @ self.features(vector, text, kind) + self.bias
        z = z - z.max()
        e = np.exp(z)
        return np.asarray(e / e.sum(), dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder,
            "intents": list(self.intents),
            "kinds": list(self.kinds),
            "mean": [round(float(x), 6) for x in self.mean],
            "scale": [round(float(x), 6) for x in self.scale],
            "weights": [[round(float(x), 5) for x in row] for row in self.weights],
            "bias": [round(float(x), 5) for x in self.bias],
            "buckets": self.buckets,
            "gram_scale": self.gram_scale,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ReasonModel:
        return ReasonModel(
            embedder=str(data["embedder"]),
            intents=tuple(data["intents"]),
            kinds=tuple(data["kinds"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=np.asarray(data["bias"], dtype=np.float64),
            buckets=int(data["buckets"]),
            gram_scale=float(data["gram_scale"]),
        )


@cache
def packaged_model() -> ReasonModel:
    """The model shipped with ALMA (read once)."""
    text = resources.files("agent.data").joinpath(MODEL_FILE).read_text(encoding="utf-8")
    return ReasonModel.from_json(json.loads(text))


class ReasonReader:
    """Reads reasons with ``embed`` (text -> the embedder's L2-normalized query vector).
    Intents are kept by text and kind: a decision memory is embedded once per process, not
    at every analysis (its target, a few rules, is read each time: folders come and go)."""

    def __init__(self, embed: Callable[[str], Vector], model: ReasonModel | None = None) -> None:
        self._embed = embed
        self.model = model or packaged_model()
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], tuple[str, float]] = {}

    def read(self, text: str, kind: str, folder: str, folders: Collection[str] = ()) -> Reading:
        """The intent of ``text`` (a reason for rejecting a suggestion of ``kind`` about
        ``folder``) and its target; ``folders`` are the root's folders a reason may name."""
        intent, confidence = self.intent(text, kind)
        return Reading(intent, target_of(intent, text, folder, folders), confidence)

    def intent(self, text: str, kind: str) -> tuple[str, float]:
        """The intent of ``text`` and the model's probability of it."""
        if not text.strip():
            return NONE, 1.0
        key = (text, kind)
        with self._lock:
            seen = self._seen.get(key)
        if seen is not None:
            return seen
        vector = self._embed(as_read(text))
        allowed = possible(self.model.intents, kind, text)
        p = self.model.probabilities(vector, text, kind) * allowed
        p = p / p.sum()
        read_by_model = self.model.intents[int(np.argmax(p))]
        intent = forbids_deleting(text, kind, by_project(text, contrasted(text, read_by_model)))
        for rule in (about_a_file, by_myself, unmeant, asked_later, for_good):
            intent = rule(text, intent)
        if not allowed[self.model.intents.index(intent)]:
            intent = read_by_model
        read = (intent, float(p[self.model.intents.index(intent)]))
        with self._lock:
            if len(self._seen) >= CACHE_SIZE:
                self._seen.clear()
            self._seen[key] = read
        return read


def as_read(text: str) -> str:
    """The reason as the model reads it: shouted text in lower case (the embedder's vocabulary
    is cased, and a reason in capitals means what it means in lower case)."""
    text = text.strip()
    return text.lower() if text.isupper() else text


def possible(intents: Sequence[str], kind: str, text: str) -> npt.NDArray[np.float64]:
    """1 for each intent ``text`` can carry when rejecting ``kind``, 0 for the others: a
    notice (a kind with no action family) is about no folder, so only stopping it, "not now"
    or nothing apply; only organize makes subfolders, so only its reasons ask for none or for
    another grouping; keeping one file is asked by naming it, so a reason that names no file
    asks for something else (about a whole place: never delete there, most often)."""
    if kind in kinds.KINDS and kinds.of(kind).family is None:
        allowed = {STOP_KIND_INTENT, NOT_NOW, NONE}
    elif kind != ORGANIZE:
        allowed = set(intents) - {FLAT, GROUP_BY_DATE, GROUP_BY_PROJECT}
    else:
        allowed = set(intents)
    if named_file(text) is None:
        allowed.discard(KEEP_FILE)
    return np.array([1.0 if i in allowed else 0.0 for i in intents])


#: What a grouping by date is by, and what a grouping by project is by (a client, a course,
#: a chapter...: whatever a person's work is divided in), folded, in both languages.
_DATE_CUES = (
    r"(?:fechas?|dates?|dated|mes|meses|months?|monthly|mensual\w*|anos?|years?|yearly|anual\w*|"
    r"dias?|days?|daily|diario|semanas?|weeks?|weekly|trimestres?|quarters?|semestres?|"
    r"semesters?|cronologic\w*|chronolog\w*|(?:19|20)\d\d)"
)
_PROJECT_CUES = (
    r"(?:proyectos?|projects?|clientes?|clients?|customers?|asignaturas?|materias?|cursos?|"
    r"courses?|subjects?|temas?|topics?|capitulos?|chapters?|papers?|repos?|repositorios?|"
    r"proveedor\w*|suppliers?|trabajos?|jobs?|encargos?|grupos?|cases?|casos?|events?|"
    r"eventos?|sesion\w*|sessions?|viajes?|trips?|asuntos?|matters?|shoots?|bodas?|weddings?|"
    r"pedidos?|orders?|expedientes?|obras?|campanas?|campaigns?|alumnos?|students?|"
    r"empresas?|compan(?:y|ies)|marcas?|brands?)"
)
#: A cue turned down: "no por fecha", "ni por proyecto", "not by date", "than by date",
#: "mejor que por mes", "en vez de por mes", a word or two between.
_TURNED_DOWN = (
    r"\b(?:no|ni|not|nor|nunca|never|than|instead\s+of|rather\s+than|en\s+vez\s+de|en\s+lugar\s+de|"
    r"(?:mejor|antes|mas)\s+que|sin|without|neither)\s+(?:\w+\s+)?(?:por|by|per|en|de|a)?\s*(?:\w+\s+)?{cue}\b"
)


#: A cue turned down after it is named: "la fecha me da igual", "dates are useless",
#: "client doesn't matter" (folded: "doesn t"), and "por año no," where a clause ends.
_TURNED_DOWN_AFTER = (
    r"\b{cue}\s+(?:\w+\s+)?(?:(?:me\s+|nos\s+)?(?:da|dan)\s+igual|"
    r"(?:me\s+)?(?:importa|importan|sirve|sirven)\s+poco|"
    r"no\s+(?:me\s+)?(?:importa|importan|sirve|sirven)|(?:is|are)\s+(?:\w+\s+)?useless|"
    r"useless|(?:don|doesn|do\s+not|does\s+not)\s*t?\s+matter|dont\s+matter|doesnt\s+matter|"
    r"(?:is|are)\s+(?:the\s+)?last\s+thing|(?:is|are)\s+irrelevant|irrelevant|"
    r"means?\s+nothing|no\s+(?:me\s+)?(?:significa|significan|dice|dicen)\s+nada|"
    r"nunca\s+(?:\w+\s+)?busco|never\s+(?:look|search)\w*)\b"
)
_TURNED_DOWN_AT_END = r"\b{cue}[?!,.]?\s+no\s*(?:[^\w\s]|$)"


#: A grouping by project asked in so many words ("por cliente", "by topic", "según el
#: cliente"), and what says the person will do it themselves ("lo ordeno yo por proyecto").
_BY_PROJECT = re.compile(
    r"\b(?:por|by|per|segun)\s+(?:el|la|los|las|the|each|cada|su|their|its|whatever|which)?\s*"
    + _PROJECT_CUES
    + r"\b"
)
_MYSELF = re.compile(
    r"\b(?:yo|myself|me\s+encargo|me\s+ocupo|i\s+ll|i\s+will|i\s+do|lo\s+hago|la\s+ordeno|"
    r"lo\s+ordeno|i\s+sort|i\s+organi[sz]e)\b"
)


def by_project(text: str, intent: str) -> str:
    """``intent``, or grouping by project when ``text`` asks for it in so many words and
    neither turns it down, asks for dates, nor keeps the sorting for the person."""
    folded = _folded_words(text)
    if intent == GROUP_BY_PROJECT or not _BY_PROJECT.search(folded) or _MYSELF.search(folded):
        return intent
    project_asked, _ = _asked_and_turned_down(text, _PROJECT_CUES)
    date_asked, _ = _asked_and_turned_down(text, _DATE_CUES)
    return GROUP_BY_PROJECT if project_asked and not date_asked else intent


def _asked_and_turned_down(text: str, cue: str) -> tuple[bool, bool]:
    """(whether ``text`` asks for ``cue`` anywhere it does not turn it down, whether it
    turns it down somewhere). Read on the folded words with the clause marks kept, since a
    comma decides which way a "no" points ("por año no, por empresa": the year is turned
    down, the company asked)."""
    marked = " ".join(re.sub(r"[^a-z0-9,;:.!?]+", " ", loose_fold(text)).split())
    down = sum(
        len(re.findall(pattern.format(cue=cue), marked))
        for pattern in (_TURNED_DOWN, _TURNED_DOWN_AFTER, _TURNED_DOWN_AT_END)
    )
    return len(re.findall(rf"\b{cue}\b", marked)) > down, down > 0


def contrasted(text: str, intent: str) -> str:
    """``intent``, or the other grouping when ``text`` asks for that one and turns this one
    down ("por proyecto, no por fecha" is by project whatever the model read between the two):
    a grouping reason often names the grouping it does not want."""
    if intent not in (GROUP_BY_DATE, GROUP_BY_PROJECT):
        return intent
    date_asked, date_down = _asked_and_turned_down(text, _DATE_CUES)
    project_asked, project_down = _asked_and_turned_down(text, _PROJECT_CUES)
    if date_asked and not project_asked and project_down:
        return GROUP_BY_DATE
    if project_asked and not date_asked and date_down:
        return GROUP_BY_PROJECT
    if intent == GROUP_BY_DATE and date_down and not date_asked and _grouped_by_other(text):
        return GROUP_BY_PROJECT
    return intent


#: "por X" / "by X" / "one folder per X": what a grouping is by.
_BY_WHAT = re.compile(
    r"\b(?:por|by|per|segun)\s+(?:el|la|los|las|the|each|cada|every|su|their|its)?\s*([a-z]\w+)"
)
#: What follows "por"/"by" without naming a grouping by project: a file's type, its name or
#: size, or no grouping at all ("por favor", "by the way", "by myself").
_NOT_A_GROUPING = frozenset(
    [
        "tipo",
        "tipos",
        "type",
        "types",
        "extension",
        "extensiones",
        "extensions",
        "formato",
        "formatos",
        "format",
        "formats",
        "kind",
        "kinds",
        "nombre",
        "nombres",
        "name",
        "names",
        "tamano",
        "size",
        "letra",
        "alfabetico",
        "alphabet",
        "nada",
        "nothing",
        "ahora",
        "now",
        "favor",
        "please",
        "ejemplo",
        "example",
        "eso",
        "esto",
        "that",
        "this",
        "si",
        "if",
        "lo",
        "cierto",
        "supuesto",
        "fin",
        "suerte",
        "way",
        "myself",
        "me",
        "yo",
        "mi",
        "hand",
        "mano",
        "default",
        "defecto",
        "mucho",
        "far",
        "all",
    ]
)


def _grouped_by_other(text: str) -> bool:
    """Whether ``text`` asks for a grouping by something that is no date nor a file's kind
    ("ni por día ni por semana, por entregable", "instead of by month, by experiment"): the
    person's own kind of project, named in their words."""
    for m in _BY_WHAT.finditer(_folded_words(text)):
        word = m[1]
        if word not in _NOT_A_GROUPING and not re.fullmatch(_DATE_CUES, word):
            return True
    return False


def _folded_words(text: str) -> str:
    """``text``'s words folded (case, accents, ñ), anything but letters and digits a space:
    what the n-grams and the exact rules read."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", loose_fold(text)).split())


#: A rejection made by mistake or to try the button ("le di sin querer", "misclick", "just
#: testing"): it asks nothing, whatever else the sentence says of the suggestion.
_UNMEANT = re.compile(
    r"\b(?:sin\s+querer|por\s+error|me\s+equivoque\s+de\s+boton|mis\s*clic?k(?:ed)?|"
    r"missclick\w*|wrong\s+button|by\s+accident|accidentally|apret[eo]\s+mal|le\s+di\s+mal|"
    r"puls[eo]\s+mal|toque\s+mal|fat\s*finger\w*|dedazo|"
    r"(?:just|only|was|solo|estaba|nomas)\s+(?:testing|probando|exploring|curioseando|curious)|"
    r"by\s+mistake|"
    r"(?:testing|probando)\s+(?:el|the|this|este)\s+(?:\w+\s+)?(?:boton|button))\b"
)
#: What says the click was the point: a deletion talked about without the button is about
#: the files ("si borras algo por error lo pierdo").
_CLICK = re.compile(r"\b(?:boton|button|clic|click|clicked|rechaz\w*|reject\w*|le\s+di|tap\w*)\b")
_DELETING = re.compile(r"\b(?:borr\w*|elimin\w*|delet\w*|remov\w*|tir\w*|perd\w*|los[et]\w*)\b")


def unmeant(text: str, intent: str) -> str:
    """``intent``, or none when ``text`` says the rejection was a slip or a try."""
    folded = _folded_words(text)
    if not _UNMEANT.search(folded):
        return intent
    if _DELETING.search(folded) and not _CLICK.search(folded):
        return intent
    return NONE


#: A reason that asks to be asked again ("recuérdamelo más tarde", "try again this
#: evening", "dame un rato", "wrong week"), and what makes it a refusal for good instead.
_LATER = re.compile(
    r"\b(?:mas\s+tarde|later|tmrw|tomorrow|tonight|this\s+evening|esta\s+tarde|esta\s+noche|"
    r"otro\s+dia|another\s+day|next\s+week|la\s+semana\s+que\s+viene|la\s+proxima\s+semana|"
    r"en\s+un\s+rato|dame\s+un\s+rato|un\s+par\s+de\s+horas|couple\s+(?:of\s+)?hours|"
    r"in\s+an\s+hour|en\s+una\s+hora|ask\s+me\s+(?:again|later|on|tomorrow|next|after|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|recuerdamelo|remind\s+me\s+"
    r"(?:later|tomorrow|again|next|in|on|after)|"
    r"try\s+again|snooze\w*|not\s+(?:right\s+)?now|ahora\s+no|for\s+now|por\s+ahora|"
    r"vuelve\w*\s+a\s+avisar|avisame\s+(?:luego|despues|cuando|mas\s+tarde)|"
    r"(?:a|one)\s+sec|un\s+segundo|after\s+(?:lunch|dinner|work|the\s+meeting)|"
    r"despues\s+de\s+(?:comer|cenar|la\s+reunion|clase|currar|trabajar)|"
    r"wrong\s+(?:moment|time|week|day)|mal\s+momento|not\s+a\s+good\s+time|"
    r"no\s+es\s+(?:buen\s+)?momento|(?:me\s+lo\s+)?recuerd(?:as|ame)|(?:bug|ping|nudge)\s+me|"
    r"when\s+i\s*(?:m|am|get)\s+back|cuando\s+(?:salga|termine|acabe|vuelva|llegue))\b"
)
_REFUSED = re.compile(
    r"\b(?:nunca|never|jamas|ever|stop|deja\s+de|dejes\s+de|para\s+de|ni|tampoco|fuera|"
    r"no\s+vuelvas|don\s+t\s+ask|dont\s+ask|no\s+me\s+preguntes|cualquier\s+otro|won\s+t|wont|"
    r"either|no\s+more|ya\s+no|not\s+even|ni\s+siquiera|whenever|anytime|any\s+time)\b"
)


def asked_later(text: str, intent: str) -> str:
    """``intent``, or "not now" when the model read a reason that asks to be asked again as
    stopping the kind or asking nothing."""
    if intent not in (STOP_KIND_INTENT, NONE):
        return intent
    folded = _folded_words(text)
    if _LATER.search(folded) and not _REFUSED.search(folded):
        return NOT_NOW
    return intent


#: Deleting forbidden in so many words ("no borres nada", "nothing goes in the bin", "no
#: quiero perder ninguno", "not losing a single one").
_NO_DELETING = re.compile(
    r"\b(?:no\s+(?:me\s+|se\s+|le\s+)?(?:borr\w*|elimin\w*|tir\w*)|"
    r"(?:don\s+t|dont|do\s+not|never|no)\s+(?:delete|deleting|remove|removing|bin|trash)\w*|"
    r"nothing\s+(?:gets\s+|goes\s+)?(?:deleted|removed|in\s+the\s+bin|binned)|"
    r"no\s+quiero\s+perder|not\s+losing|ni\s+se\s+te\s+ocurra\s+borrar|nada\s+se\s+borra)\b"
)
#: The kinds whose plans delete (to the journal's trash): what a reason forbids there.
_DELETING_KINDS = frozenset({"temp_cleanup", "duplicates"})


def forbids_deleting(text: str, kind: str, intent: str) -> str:
    """``intent``, or never deleting when ``text`` rejects a deleting plan by forbidding
    deletion in so many words and the model read it as a wait, a stop, nothing or the
    person's own sorting; not when it asks to be asked again ("no borres nada hoy, mañana
    sí")."""
    if kind not in _DELETING_KINDS or intent not in (
        NOT_NOW,
        STOP_KIND_INTENT,
        NONE,
        SELF_ORGANIZE,
    ):
        return intent
    folded = _folded_words(text)
    if _NO_DELETING.search(folded) and not _LATER.search(folded):
        return NEVER_DELETE
    return intent


#: A refusal said to hold from now on ("ni ahora ni después", "for good", "nunca más",
#: "everywhere").
_STOP_FOR_GOOD = re.compile(
    r"\b(?:ni\s+ahora\s+ni\s+(?:luego|despues|nunca|manana)|for\s+good|from\s+now\s+on|"
    r"nunca\s+mas|never\s+again|de\s+ahora\s+en\s+adelante|a\s+partir\s+de\s+ahora|"
    r"para\s+siempre|forever|en\s+ningun\s+sitio|en\s+ninguna\s+parte|anywhere|everywhere)\b"
)


def for_good(text: str, intent: str) -> str:
    """``intent``, or stopping the kind when the model read a refusal said to hold from now
    on as a wait or as asking nothing."""
    if intent in (NOT_NOW, NONE) and _STOP_FOR_GOOD.search(_folded_words(text)):
        return STOP_KIND_INTENT
    return intent


#: The person saying they do it themselves ("lo arreglo yo", "de eso me encargo yo", "I'll
#: sort it myself").
_BY_MYSELF = re.compile(
    r"\b(?:(?:lo|la|los|las)\s+(?:hago|ordeno|arreglo|organizo|clasifico|muevo|limpio|quito|"
    r"borro)\s+yo|(?:encargo|ocupo)\s+yo|me\s+(?:encargo|ocupo)|myself|i\s*ll\s+(?:do|sort|handle|organi[sz]e|clean|fix)\s+it)\b"
)


def by_myself(text: str, intent: str) -> str:
    """``intent``, or the person's own sorting when ``text`` says they do it themselves and
    the model read a grouping, a protection, a wait or nothing (not keeping it flat, a stop
    or one file: "it's not about doing it myself, I want no subfolders")."""
    if intent in (GROUP_BY_DATE, GROUP_BY_PROJECT, NEVER_DELETE, NONE, NOT_NOW) and (
        _BY_MYSELF.search(_folded_words(text))
    ):
        return SELF_ORGANIZE
    return intent


def about_a_file(text: str, intent: str) -> str:
    """``intent``, or keeping one file when ``text`` names a file by its full name and the
    model read a protection of the place, nothing, or a flat place ("tesis.aux no se borra",
    "scratch.pkl costs a day to compute, keep it", "the slides.pptx on my desktop needs to
    stay where it is"): a place is never named with an extension, so the reason is about that
    file."""
    if intent not in (NEVER_DELETE, NONE, FLAT):
        return intent
    name = named_file(text)
    if name is None:
        return intent
    last = name.rpartition("/")[2]
    return KEEP_FILE if _EXT_NAME.fullmatch(last) or _KNOWN_FILES.fullmatch(last) else intent


# --------------------------------------------------------------------------- the target

#: The usual names of a person's folders in Spanish and English: a reason may name a folder
#: in the other language ("downloads" for user/Descargas).
_ALIASES: tuple[frozenset[str], ...] = tuple(
    frozenset(group)
    for group in (
        {"descargas", "downloads", "download"},
        {"escritorio", "desktop"},
        {"documentos", "documents", "docs"},
        {"musica", "music"},
        {"fotos", "photos", "imagenes", "pictures", "images"},
        {"videos", "video"},
        {"proyectos", "projects"},
        {"trabajo", "work"},
        {"facturas", "invoices"},
        {"escaneos", "scans"},
        {"clases", "teaching"},
        {"entregas", "deliveries"},
        {"clientes", "clients"},
    )
)
_PLACE_WORDS = re.compile(
    r"\b(?:ahi|aqui|aki|alli|aca|alla|here|there|in\s+here|"
    r"(?:esta|esa|la|this|that|the)\s+(?:carpeta|folder|directory|directorio))\b"
)
_FOLDER_PHRASE = re.compile(
    r"\b(?:la\s+carpeta(?:\s+de)?|la\s+de|the\s+folder)\s+[«\"'“]?"
    r"([A-Za-zÁÉÍÓÚÑáéíóúñü][\w-]*)"
    r"|\b(?:the|my)\s+([A-Za-z][\w-]*)\s+(?:folder|directory)\b"
)
#: What may stand before a folder's name written in lower case ("the scans", "la de
#: clientes"); a name written as the folder is needs nothing before it.
_BEFORE_NAME = r"(?:\bthe|\bmy|\bcarpeta(?:\s+de)?|\bla\s+de|\bde)\s+"
_PATH = re.compile(r"(?<![\w/.-])(user(?:/[^\s/,;:«»\"'“”]+)+)")
#: A path below the root's ``user/`` written without it ("Fotos/2026"): a folder of ``user/``,
#: then one or more names.
_RELATIVE = re.compile(r"(?<![\w/.~-])([^\W\d_][\w-]*)((?:/[\w.-]+)+)")
#: What "la carpeta X" / "the X folder" says of a folder rather than names it.
_NOT_A_NAME = frozenset(
    (
        "de",
        "del",
        "lo",
        "la",
        "que",
        "y",
        "es",
        "me",
        "te",
        "se",
        "no",
        "that",
        "this",
        "one",
        "same",
        "plana",
        "entera",
        "completa",
        "misma",
        "principal",
        "raiz",
        "flat",
        "whole",
        "entire",
        "main",
        "root",
    )
)
#: Files known by a name with no extension.
_KNOWN_FILES = re.compile(
    r"(?<![\w/.])(Makefile|Dockerfile|Containerfile|Procfile|Gemfile|Rakefile|Vagrantfile|"
    r"Jenkinsfile|README|LICENSE|CHANGELOG)(?![\w.])"
)
_QUOTED = re.compile(r"(?<!\w)['\"«“‘`]([^'\"«»“”‘’`]{1,80})['\"»”’`](?!\w)")
#: A copy's mark in a file's name, as file managers write it: "x (1).pdf", "x (copia).jpg",
#: "x copy.heic", "x copy 2.heic", "x - copia.docx", "x - Copy (2).docx".
_COPY_MARK = (
    r"(?:\s?\((?:\d+|copia|copy)(?:\s\d+)?\)|\s(?:copy|copia)(?:\s\d+)?"
    r"|\s-\s(?:copia|copy|Copia|Copy)(?:\s\(\d+\))?)"
)
#: A word that stands before a name rather than begins it ("la copia.pdf" is "copia.pdf").
_ARTICLE = (
    r"(?:la|el|los|las|lo|un|una|mi|tu|su|esa|ese|esta|este|de|the|a|an|my|your|this|that|of)"
)
_EXT_NAME = re.compile(
    r"(?<![\w/])(?!" + _ARTICLE + r"\s)(\.?[~$\w][\w~$.-]*" + _COPY_MARK + r"?"
    r"\.(?:[A-Za-z0-9]{1,5}|crdownload|partial|download)#?)(?![\w/#])"
)
#: A name after "archivo"/"file": after "llamado"/"called", any word; right after the noun,
#: only a word written as a name is (a capital, a digit, "_"): "file type", "archivo suelto",
#: "archivo de aquí" say what kind of file, not which.
_CALLED = re.compile(
    r"\b(?:archivo|fichero|file)\s+(?:(?:llamado|que\s+se\s+llama|called|named|literally"
    r"\s+(?:called|named))\s+([A-Za-zÁÉÍÓÚÑ][\w~$.-]*)"
    r"|(?=[\w~$.-]*[A-ZÁÉÍÓÚÑ0-9_])([A-Za-zÁÉÍÓÚÑ][\w~$.-]*))"
)
_TRAILING = ".,;:!?)"
#: Where a reason turns from what it sets aside to what it asks.
_TURN = r"\b(?:pero|but|sino|however|aunque|though)\b"
_BUT = re.compile(_TURN, re.IGNORECASE)


#: A reason that widens its place to every folder under it ("in any of my photo folders", "en
#: ninguna carpeta de Fotos", "under projects"): only then is a folder above the suggestion's
#: the place meant, not the name of what the suggestion's folder holds ("sorting my photos is
#: my job" about Photos/2023).
_WIDENED = re.compile(
    r"\b(?:(?:any|all|every|each|ninguna?|ninguno|todas?|todos|cada)\s+(?:of\s+)?"
    r"(?:(?:my|mis|las|los|the)\s+)?(?:\w+\s+)?(?:sub)?(?:folders?|carpetas?|dirs?)|"
    r"en\s+ningun[oa]|under|bajo|or\s+otherwise|o\s+no)\b"
)
#: A name after "por" / "by" says how to group, not where ("por proyectos", "by projects").
_GROUPED_BY = r"\b(?:por|by|per|segun)\s+"


def _folds(name: str) -> str:
    return loose_fold(name).strip()


def _own_names(folder: str) -> set[str]:
    """The names the suggestion's ``folder`` goes by: its own, folded, and its usual name in
    the other language (none for ``user`` itself)."""
    base = _folds(folder.rpartition("/")[2]) if folder != "user" else ""
    names = {base} if base else set()
    for group in _ALIASES:
        if base in group:
            names |= group
    return names


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]+", loose_fold(text)))


def named_folder(text: str, folder: str, folders: Collection[str]) -> str | None:
    """The folder ``text`` names: the suggestion's own (by name, alias or "ahí"), another of
    ``folders``, or one named as "la carpeta X" / "the X folder"; None when it names none."""
    path = _PATH.search(text)
    if path:
        return path[1].rstrip(_TRAILING).rstrip("/")
    for rel in _RELATIVE.finditer(text):
        if f"user/{rel[1]}" in folders:
            return f"user/{rel[1]}{rel[2]}".rstrip(_TRAILING).rstrip("/")
    words = _words(text)
    # The suggestion's folder in either language's name; another folder by its own name only
    # (an alias of another folder is as often a common noun: "imágenes" in "pdf/imágenes").
    if _own_names(folder) & words:
        return folder
    folded = loose_fold(text)
    for other in sorted(folders):
        name = other.rpartition("/")[2]
        if other == folder or other == "user" or _folds(name) not in words:
            continue
        # Written as the folder is ("Facturas"), or after "the", "la carpeta", "la de": a
        # lower-case "facturas" in a sentence is as often the common noun. A name joined by a
        # hyphen is part of another word ("2024" in "2024-05").
        if re.search(_GROUPED_BY + re.escape(_folds(name)) + r"(?![\w-])", folded):
            continue
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) or re.search(
            _BEFORE_NAME + re.escape(_folds(name)) + r"(?![\w-])", folded
        ):
            if folder.startswith(f"{other}/") and not _WIDENED.search(folded):
                return folder
            return other
    m = _FOLDER_PHRASE.search(text)
    if m:
        name = (m[1] or m[2]).strip(_TRAILING)
        if _folds(name) not in _NOT_A_NAME:
            parent = folder.rpartition("/")[0] or "user"
            return f"{parent}/{name}" if folder != "user" else f"user/{name}"
    if _PLACE_WORDS.search(loose_fold(text)):
        return folder
    return None


def named_file(text: str) -> str | None:
    """The file ``text`` names (a root-relative path, a quoted name, a name with an extension,
    a name after "archivo"/"file called", a file known by a name with no extension such as
    "Makefile"), as written; None when it names none."""
    quoted = [
        m[1].strip().rstrip(_TRAILING)
        for m in _QUOTED.finditer(text)
        if len(m[1].split()) <= 3  # longer: a quoted phrase, not a name
    ]
    paths = [m[1].rstrip(_TRAILING) for m in _PATH.finditer(text)]
    # Of several names, the last: the one kept is said after the ones set aside ("thumbs.db
    # whatever, but edits.xmp is mine", "a.bib and a_v2.bib differ, keep a_v2.bib").
    with_ext = [m[1] for m in _EXT_NAME.finditer(text)][::-1]
    called = [(m[1] or m[2]).rstrip(_TRAILING) for m in _CALLED.finditer(text)]
    known = [m[1] for m in _KNOWN_FILES.finditer(text)]
    # A quoted name with an extension is the whole name ("'ticket ikea.jpg'"); a name with an
    # extension beats a quoted word ("that 'duplicate' wedding_042.jpg").
    for name in (
        *paths,
        *(q for q in quoted if _EXT_NAME.fullmatch(q) or "." in q),
        *with_ext,
        *quoted,
        *called,
        *known,
    ):
        if name:
            return name
    return None


#: A place set aside in its own clause ("descargas me da igual", "forget downloads", "the
#: desktop's fine", "esto del escritorio no").
_SET_ASIDE = re.compile(
    r"\b(?:(?:me\s+)?da\s+igual|igual\s+da|me\s+dan\s+igual|ni\s+caso|haz\s+lo\s+que\s+"
    r"(?:quieras|veas)|como\s+sean?|esta\s+bien(?:\s+asi)?|lo\s+dejo|dejalo|no\s+me\s+importa|"
    r"forget|never\s+mind|whatever|is\s+fine|s\s+fine|can\s+stay|don\s+t\s+care|dont\s+care|"
    r"aside|no|not)\b"
)
#: Where a clause ends: a stop or a turn (``_TURN``).
_CLAUSE = re.compile(rf"[,;.:!?]|{_TURN}", re.IGNORECASE)


def _set_aside(text: str, folder: str, folders: Collection[str]) -> str | None:
    """Of the suggestion's ``folder`` and another of ``folders``, each named in a clause of
    its own, the one the reason is about when the other's clause sets it aside; None when
    that is not said."""
    clauses = [
        (_words(clause), bool(_SET_ASIDE.search(_folded_words(clause))))
        for clause in _CLAUSE.split(text)
    ]
    own = _own_names(folder)
    own_aside = next((aside for words, aside in clauses if own & words), None)
    if own_aside is None:
        return None
    for other in sorted(folders):
        if other in (folder, "user") or folder.startswith(f"{other}/"):
            continue
        theirs = _folds(other.rpartition("/")[2])
        other_aside = next((aside for words, aside in clauses if theirs in words), None)
        if other_aside is not None and other_aside != own_aside:
            return other if own_aside else folder
    return None


def target_of(intent: str, text: str, folder: str, folders: Collection[str] = ()) -> str | None:
    """The root-relative folder or file the reason is about (see the module's docstring)."""
    if intent in _NO_TARGET:
        return None
    if intent == KEEP_FILE:
        name = named_file(text)
        if name is None:
            return folder
        if name.startswith("user/"):
            return name
        # "el archivo X de descargas": the folder named beside the file, else the suggestion's.
        rest = text.replace(name, " ")
        beside = named_folder(rest, folder, folders) or folder
        return f"{beside}/{name}"
    where = named_folder(text, folder, folders)
    # "descargas me da igual, pero de la tesis no borres nada": two places, the first set
    # aside; the reason is about the one after the "but".
    turn = _BUT.search(text)
    if turn and where is not None:
        after = named_folder(text[turn.end() :], folder, folders)
        if after is not None and after != where:
            where = after
    if where == folder:
        # "forget downloads, Documents is the one", "el escritorio está bien así, pero
        # documentos sí": the suggestion's folder set aside beside another named in any case.
        where = _set_aside(text, folder, folders) or where
    if intent == NOT_NOW:
        return where
    return where or folder


def reader_folders(paths: Sequence[str]) -> list[str]:
    """The folders among ``paths`` a reason may name (every folder above each path)."""
    out: set[str] = set()
    for path in paths:
        while "/" in path:
            out.add(path)
            path = path.rpartition("/")[0]
    return sorted(out)
