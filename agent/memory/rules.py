"""Rule-based metadata: the deterministic answer a model may later improve, never replace blindly.

Tags come from ``#hashtags`` first, then from a small keyword table; the project from the
names of the person's folders under ``user/`` mentioned in the text; dates from the log's
day and words like "mañana"; the type and importance from a few Spanish patterns. Everything
matches on folded text (no case, no accents), so "Agotado" and "agotádo" both count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

from state.memory.normalize import clean_tag, fold, tag_key, words

_HASHTAG = re.compile(r"(?<![\w&/])#([^\W\d_][\w-]*)")

#: tag -> folded word prefixes (a prefix matches at the start of a word).
KEYWORD_TAGS: dict[str, tuple[str, ...]] = {
    "backup": ("backup", "copia de seguridad", "copias de seguridad", "respaldo"),
    "trading": ("trading", "btc", "bitcoin", "apalancamiento", "posicion en", "opere", "operar"),
    "riesgo": ("riesgo",),
    "fatiga": ("agotad", "cansad", "fatiga", "exhaust", "sin dormir", "dormi poco", "dormi \\d"),
    "salud": ("salud", "medico", "doctor", "dolor", "enferm", "hospital", "ansiedad"),
    "error": ("error", "falla", "fallo", "traceback", "se rompio", "no funciona"),
    "pendiente": ("tengo que", "recuerdame", "pendiente", "no olvid", "hay que", "debo "),
    "hardware": ("disco", "smartctl", "ssd", "memoria ram"),
    "sueño": ("dormi", "sueño", "insomnio"),
    "trabajo": ("trabajando", "reunion", "cliente", "jornada"),
}
_KEYWORD_RES = {
    tag: re.compile(r"\b(?:" + "|".join(prefixes) + r")", re.UNICODE)
    for tag, prefixes in KEYWORD_TAGS.items()
}

_PRINCIPLE_TAGS = {"principio", "principios", "principle", "regla"}
_FACT_TAGS = {"dato", "hecho", "fact"}
_PRINCIPLE = re.compile(
    r"^(regla|principio)\s*:|\b(recuerdame|recuerda|acuerdate de) que (nunca|siempre|no)\b"
    r"|^(nunca|siempre) (debo|voy a|hay que)\b"
)
_FACT = re.compile(
    r"^(yo )?(soy|me llamo|vivo en|trabajo (en|como|de)|tengo \d+ años|naci\b|prefiero"
    r"|me gusta|no me gusta|odio|uso|mi \w+ (es|se llama|favorit)|mis \w+ son)\b"
)
_EPISODIC_TIME = re.compile(
    r"\b(hoy|ayer|anoche|ahora|esta (mañana|tarde|noche)|mañana|otra vez|acabo de)\b"
)
_STRONG = re.compile(
    r"\b(murio|muerte|falleci|hospital|urgencias|ansiedad|depresi|riesgo|apalancamiento"
    r"|deuda|perdi|perdida|falla|fallo|error|roto|importante|urgente|nunca|siempre|jamas)"
)
_MONTH_NAMES = (
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre"
)
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), start=1)}
_DATE_NAMED = re.compile(r"\b(\d{1,2}) de (" + "|".join(_MONTHS) + r")\b")
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


@dataclass
class RuleMeta:
    tags: list[str] = field(default_factory=list)
    project: str = ""
    memory_type: str = "episode"
    importance: int = 3
    event_date: str = ""


def hashtags(text: str) -> list[str]:
    return [clean_tag(t) for t in _HASHTAG.findall(text)]


def keyword_tags(folded: str) -> list[str]:
    return [tag for tag, rx in _KEYWORD_RES.items() if rx.search(folded)]


def find_project(folded: str, projects: Iterable[str]) -> str:
    """The first known project whose name appears as a whole word (longest names first)."""
    for name in sorted(projects, key=len, reverse=True):
        key = fold(name)
        if key and re.search(r"(?<![\w-])" + re.escape(key) + r"(?![\w-])", folded):
            return name
    return ""


def classify(folded: str, tags: Iterable[str]) -> str:
    keys = {tag_key(t) for t in tags}
    if keys & _PRINCIPLE_TAGS or _PRINCIPLE.search(folded):
        return "principle"
    if keys & _FACT_TAGS or (_FACT.search(folded) and not _EPISODIC_TIME.search(folded)):
        return "fact"
    return "episode"


def event_date(folded: str, day: date | None) -> str:
    if m := _DATE_ISO.search(folded):
        return f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    if day is None:
        return ""
    if m := _DATE_NAMED.search(folded):
        try:
            return date(day.year, _MONTHS[m.group(2)], int(m.group(1))).isoformat()
        except ValueError:
            return ""
    if re.search(r"\bpasado mañana\b", folded):
        return (day + timedelta(days=2)).isoformat()
    if re.search(r"(?<!esta )\bmañana\b", folded) and not re.search(r"\besta mañana\b", folded):
        return (day + timedelta(days=1)).isoformat()
    if re.search(r"\b(ayer|anoche)\b", folded):
        return (day - timedelta(days=1)).isoformat()
    return day.isoformat()


def importance(folded: str, memory_type: str, tags: Iterable[str], base: int) -> int:
    keys = {tag_key(t) for t in tags}
    if memory_type == "principle":
        return 5
    score = max(base, 4) if memory_type == "fact" else base
    if len(words(folded)) < 4 and not keys:
        return 1  # "Sí.", "Vale, gracias": kept, but never crowding out anything
    if _STRONG.search(folded) or "!" in folded:
        score += 1
    if keys & {"importante", "urgente"}:
        score += 1
    return max(1, min(5, score))


def derive(
    text: str, *, projects: Iterable[str] = (), day: date | None = None, base: int = 3
) -> RuleMeta:
    """Metadata for one text. ``base`` is the importance before the rules: 2 for a chat
    turn, 3 for a note or a memory the person adds."""
    folded = fold(text)
    tags = hashtags(text)
    keys = {tag_key(t) for t in tags}
    tags += [t for t in keyword_tags(folded) if tag_key(t) not in keys]
    memory_type = classify(folded, tags)
    return RuleMeta(
        tags=tags,
        project=find_project(folded, projects),
        memory_type=memory_type,
        importance=importance(folded, memory_type, tags, base),
        event_date=event_date(folded, day),
    )
