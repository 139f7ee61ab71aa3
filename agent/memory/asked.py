"""What kind of detail a message asks for, whether a memory holds one, and whether it names
whom or what the message names.

A question that asks for a time, a date, an amount, an age, a number, a name or place, a
contact or a code is answered only by a memory that holds one that the question does not
already hold itself: "¿Cuánto pesa Boira?" is not answered by "Boira duerme en el sofá",
however close the two are (a memory of the same subject that lacks the detail asked is the
commonest way a context hands something that answers nothing). The answer model
(``search.ANSWER_FEATURES``) reads ``lacks``; the rule reads the message's interrogative
words and the memory's shapes (digits, currencies, months, capitals), never a subject's
words, so nothing here learns a set's wording. Spanish and English, accents folded.
"""

from __future__ import annotations

import re

from policies.text import fold
from state.memory.normalize import STOPWORDS

#: The kinds, each with what asks for it (in the folded message) and what holds one (in the
#: memory as written, the question's own tokens taken out). A message may ask for several
#: ("¿cuándo y dónde?"); a specific kind found leaves the generic ``number`` out.
_ASKS: dict[str, re.Pattern[str]] = {
    "time": re.compile(r"\ba que hora\b|\bque hora\b|\bwhat time\b|\bhorario\b"),
    "money": re.compile(
        r"\bcuanto (?:me |nos |te |le |les )?(?:cuesta|cuestan|costo|costaron|vale|valen|valio"
        r"|pag\w*|gast\w*|cobr\w*|ingres\w*|gan\w*|debo|debemos|debe|deben)\b"
        r"|\bcuanto dinero\b|\bprecio\b|\bsueldo\b|\bsalario\b"
        r"|\bhow much\b.*\b(?:cost|costs|pay|paid|spend|spent|earn|earned|charge|owe|price)\b"
        r"|\bprice\b|\bsalary\b"
    ),
    "age": re.compile(r"\bcuantos años\b|\bque edad\b|\bhow old\b|\bwhat age\b"),
    "weight": re.compile(
        r"\bcuanto (?:pesa|pesan|pesaba|pese|peso)\b|\bque peso\b|\bhow heavy\b|\bweigh\w*\b"
    ),
    "length": re.compile(
        r"\bcuanto (?:mide|miden|medio|mido)\b|\bque (?:altura|estatura|tamaño)\b"
        r"|\bmetros cuadrados\b|\bhow (?:tall|long|far|big)\b|\bheight\b|\bsquare (?:metres|meters|feet)\b"
    ),
    # "cuando" and "when" ask for a date where they open the question; inside it they are a
    # conjunction ("¿qué asiento prefiero cuando vuelo?").
    "date": re.compile(
        r"^\W*(?:(?:y|pero|oye|entonces|and|so)\W+)?(?:(?:hasta|desde|para|de|since|until)\s+)?"
        r"(?:cuando|when)\b|\b(?:hasta|desde|para) cuando\b"
        r"|\bque dia\b|\bque fecha\b|\ben que (?:mes|año|fecha|dia|semana)\b"
        r"|\bwhat (?:day|date|year|month)\b|\bwhich (?:day|date|year|month)\b"
        r"|\bcada cuanto\b|\bcon que frecuencia\b|\bhow often\b"
    ),
    # A contact asked for, not one talked about ("me llega un correo, ¿lo abro?").
    "contact": re.compile(
        r"\b(?:cual|que|what|whats|which|dame|give)\b.*\b(?:telefono|correo|email|e-mail"
        r"|phone)\b|\bnumero de (?:telefono|movil)\b|\bphone number\b|\bemail address\b"
    ),
    "code": re.compile(
        r"\bcontraseña\b|\bclave\b|\bpassword\b|\bpin\b|\bcodigo\b|\biban\b|\bmatricula\b"
        r"|\bnumero de (?:serie|poliza|socio|socia|cuenta|prestamo|microchip|pasaporte)\b"
        r"|\bserial\b|\bip\b|\blicen[cs]e plate\b|\bcode\b"
    ),
    "number": re.compile(
        r"\bcuant[oa]s?\b|\bhow (?:many|much)\b"
        r"|\bque (?:numero|talla|nota|tamaño|peso)\b|\bwhat (?:number|size|grade|score)\b"
    ),
    "name": re.compile(
        r"\bcomo se llama\b|\bcomo se llamaba\b|\bquien\b|\bquienes\b|\bwho\b|\bwhose\b"
        r"|\bname\b|\bnombre\b|\bapellido\b|\bsurname\b|\bcual es el nombre\b"
    ),
    "place": re.compile(
        r"\bdonde\b|\badonde\b|\bwhere\b"
        r"|\ben que (?:ciudad|pueblo|sitio|lugar|hotel|calle|barrio|pais|tienda|restaurante)\b"
        r"|\bwhich (?:city|town|hotel|place|street|country|shop|restaurant)\b"
    ),
}
_SPECIFIC = ("time", "money", "age", "weight", "length", "date", "contact", "code")

_MONTHS = (
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre"
    "|diciembre|january|february|march|april|may|june|july|august|september|october"
    "|november|december|ene|feb|mar|abr|jun|jul|ago|sep|sept|oct|nov|dic|jan|apr|aug|dec"
)
_DAYS = (
    "lunes|martes|miercoles|jueves|viernes|sabado|domingo|monday|tuesday|wednesday|thursday"
    "|friday|saturday|sunday|finde|weekend|fin de semana"
)
_RELATIVE = (
    "hoy|ayer|mañana|today|yesterday|tomorrow|verano|invierno|primavera|otoño|navidad|semana"
    "|mes|año|dia|dias|semanas|meses|años|summer|winter|spring|autumn|christmas|week|weeks"
    "|month|months|year|years|day|days|siguiente|proximo|proxima|next|last|pasado|pasada"
    "|noche|noches|night|nights|morning|evening|cada|every|daily|weekly|monthly|diario|semanal"
    "|mensual|anual|tarde|tardes|hora|horas|hour|hours"
)
_HOLDS: dict[str, re.Pattern[str]] = {
    "time": re.compile(
        r"\b\d{1,2}(?::|h|\.)\d{2}\b|\ba la?s? \d|\b\d{1,2} ?(?:am|pm|h)\b|\bmediodia\b"
        r"|\bmedianoche\b|\bde la (?:mañana|tarde|noche)\b|\bnoon\b|\bmidnight\b|o'clock"
    ),
    "money": re.compile(
        r"[€$£]|\beuros?\b|\beur\b|\bdolares\b|\bdollars?\b|\blibras\b|\bpounds?\b"
        r"|\b\d+(?:[.,]\d+)? ?k\b|\bgratis\b|\bfree\b"
    ),
    "age": re.compile(
        r"\b\d+ ?(?:años|anos|years?|meses|months?)\b|\bnaci\w*|\bborn\b|\bcumpl\w*|\b(?:19|20)\d{2}\b"
    ),
    "weight": re.compile(r"\d ?(?:kg|kilos?|g|gramos?|lb|lbs|pounds?|toneladas?|tons?)\b"),
    "length": re.compile(
        r"\d ?(?:cm|mm|m|km|m2|m²|metros?|centimetros?|kilometros?|pulgadas?|inch\w*|feet|foot"
        r"|ft|miles?)\b|\d[.,']\d{2}\b"
    ),
    "date": re.compile(
        rf"\b(?:{_MONTHS})\b|\b(?:{_DAYS})\b|\b(?:{_RELATIVE})\b|\b(?:19|20)\d{{2}}\b"
        r"|\b\d{1,2}/\d{1,2}\b|\b\d{1,2} de\b|\bel \d{1,2}\b"
    ),
    "contact": re.compile(r"\S@\S|\d[\d ]{6,}\d"),
    "code": re.compile(
        r"\b(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[\w-]{4,}\b|\d{5,}|\d+\.\d+\.\d+\.\d+|\b[A-Z]{2,}\b"
    ),
    "number": re.compile(
        r"\d|\b(?:dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|veinte"
        r"|treinta|cuarenta|cincuenta|cien|ciento|mil|docena|one|two|three|four"
        r"|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundred|thousand|half"
        r"|dozen)\b"
    ),
}
_WORDS = re.compile(r"[\w'@.:/-]+")
_NAMED = re.compile(r"[\w'-]+")
_CAPITAL = re.compile(r"[A-ZÁÉÍÓÚÑ][\w'-]+")
_PLACE = re.compile(
    r"(?:^|\s)/\w|\ben (?:el|la|los|las|casa|mi|mis|su|sus|un|una|del)\b|\bcalle\b"
    r"|\b(?:in|at|on) (?:the|my|a|his|her|our)\b|\bstreet\b|\broad\b"
)
#: A date or a clock time is not the number a "¿cuántos...?" asks for.
_DATED = re.compile(
    rf"\b\d{{1,2}}(?: de)? (?:{_MONTHS})\b|\b(?:19|20)\d{{2}}\b|\b\d{{1,2}}(?::|h)\d{{2}}\b"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"
)


def kinds(message: str) -> frozenset[str]:
    """The kinds of detail ``message`` asks for (empty: it asks for none, or is no question:
    "¿aprobé el examen?", "ya he llegado")."""
    folded = fold(message)
    found = {k for k, p in _ASKS.items() if p.search(folded)}
    if found & set(_SPECIFIC):
        found.discard("number")
    return frozenset(found)


def _named(tokens: list[str]) -> bool:
    """A capitalised word: a name, unless it starts the text and is a common word."""
    for i, token in enumerate(tokens):
        if _CAPITAL.match(token) and (i > 0 or fold(token) not in STOPWORDS):
            return True
    return False


def holds(asked: frozenset[str], content: str, message: str) -> bool:
    """Whether ``content`` holds a detail of one of the ``asked`` kinds that ``message`` does
    not (true when nothing is asked)."""
    if not asked:
        return True
    own = {fold(w) for w in _WORDS.findall(message)} - STOPWORDS
    tokens = [w for w in content.split() if fold(w.strip(",.;:!?()«»\"'")) not in own]
    rest = " ".join(tokens)
    folded = fold(rest)
    for kind in asked:
        if kind == "name":
            found = _named(tokens)
        elif kind == "place":
            found = _named(tokens) or bool(_PLACE.search(folded))
        elif kind == "code":
            found = bool(_HOLDS["code"].search(rest))
        elif kind == "date":
            found = bool(_HOLDS["date"].search(folded) or _HOLDS["time"].search(folded))
        elif kind in ("number", "age"):
            # An age may be a bare number ("tiene 9" once "años" is the question's own).
            found = bool(_HOLDS["number"].search(_DATED.sub(" ", folded))) or (
                kind == "age" and bool(_HOLDS["age"].search(folded))
            )
        else:
            found = bool(_HOLDS[kind].search(folded))
        if found:
            return True
    return False


def names(message: str) -> list[str]:
    """What ``message`` names, folded: its capitalised words after the first ("¿Cuándo es el
    cumpleaños de Martí?"), ALMA aside; a possessive's "'s" off."""
    tokens = _NAMED.findall(message)
    return [
        fold(t).removesuffix("'s")
        for i, t in enumerate(tokens)
        if i > 0 and _CAPITAL.match(t) and fold(t) not in STOPWORDS and fold(t) != "alma"
    ]


def unnamed(named: list[str], content: str) -> float:
    """1.0 when ``content`` lacks one of the ``named`` (a word of it starting with the name's
    first five letters: "Martí" and "Martín's" meet), else 0.0: the answer model's
    ``unnamed`` feature. A memory of another person or place answers nothing about this one."""
    if not named:
        return 0.0
    found = _NAMED.findall(fold(content))
    return 0.0 if all(any(w.startswith(n[:5]) for w in found) for n in named) else 1.0


def lacks(asked: frozenset[str], content: str, message: str) -> float:
    """1.0 when ``message`` asks for a kind of detail that ``content`` does not hold, else 0.0:
    the answer model's ``lacks`` feature."""
    return 0.0 if holds(asked, content, message) else 1.0
