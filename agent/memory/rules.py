"""Rule-based metadata: the deterministic answer a model may later improve, never replace blindly.

Tags come from ``#hashtags`` first, then from a small keyword table; the project from the
names of the person's folders under ``user/`` mentioned in the text; dates from the log's
day and words like "mañana"; the type and importance from a few Spanish patterns. Everything
matches on folded text (no case, no accents), so "Agotado" and "agotádo" both count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from policies.text import clean_tag, fold, hashtags, tag_key, without_hashtags
from state.memory.normalize import STOPWORDS, words

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

#: theme -> folded word prefixes: the area of the person's life a memory is about. A memory
#: gets the theme with the most matches (tags count too); ties go to the earlier theme.
THEMES: dict[str, tuple[str, ...]] = {
    "salud": (
        "salud",
        "medic",
        "doctor",
        "dolor",
        "enferm",
        "hospital",
        "ansiedad",
        "dentista",
        "muela",
        "alergi",
        "vacuna",
        "fisio",
        "psicolog",
        "terapia",
        "tension",
        "dormi",
        "sueño",
        "insomnio",
        "gimnasio",
        "pastilla",
        "receta",
        "rodilla",
        "lesion",
        "cansad",
        "agotad",
        "fatiga",
        "health",
        "doctor",
        "physio",
        "pain",
        "sleep",
    ),
    "familia": (
        "familia",
        "mama",
        "papa",
        "madre",
        "padre",
        "hermano",
        "hermana",
        "hijo",
        "hija",
        "abuel",
        "primo",
        "prima",
        "sobrin",
        "suegr",
        "pareja",
        "boda",
        "cumpleaños",
        "perro",
        "gato",
        "mascota",
        "niños",
        "family",
        "mother",
        "father",
        "sister",
        "brother",
        "kids",
    ),
    "dinero": (
        "dinero",
        "euro",
        "ahorr",
        "hipoteca",
        "prestamo",
        "banco",
        "factura",
        "hacienda",
        "renta",
        "impuesto",
        "trading",
        "btc",
        "bitcoin",
        "operacion",
        "invers",
        "cartera",
        "seguro",
        "presupuesto",
        "gast",
        "cuota",
        "pago",
        "pague",
        "money",
        "dollar",
        "invoice",
        "bill",
        "paid",
    ),
    "trabajo": (
        "trabajo",
        "reunion",
        "cliente",
        "jefe",
        "jefa",
        "equipo",
        "oficina",
        "proyecto",
        "jornada",
        "informe",
        "demo",
        "compañer",
        "evaluacion",
        "sueldo",
        "ascenso",
        "deadline",
        "work",
        "meeting",
        "client",
        "team",
        "office",
        "project",
        "report",
    ),
    "tecnologia": (
        "backup",
        "copia de seguridad",
        "respaldo",
        "disco",
        "servidor",
        "script",
        "portatil",
        "ordenador",
        "wifi",
        "router",
        "contraseña",
        "certificado",
        "software",
        "codigo",
        "python",
        "cron",
        "error",
        "falla",
        "fallo",
        "ssd",
        "hardware",
        "modelo",
        "memoria",
        "chroma",
        "cloud",
        "server",
        "laptop",
        "database",
        "app",
    ),
    "hogar": (
        "casa",
        "piso",
        "alquiler",
        "vecin",
        "coche",
        "itv",
        "taller",
        "limpieza",
        "fontaner",
        "bici",
        "cocina",
        "salon",
        "luz",
        "home",
        "flat",
        "car ",
    ),
    "ocio": (
        "guitarra",
        "musica",
        "libro",
        "lectura",
        "novela",
        "serie",
        "pelicula",
        "concierto",
        "viaje",
        "vacaciones",
        "excursion",
        "huerto",
        "jardin",
        "foto",
        "ajedrez",
        "correr",
        "carrera",
        "maraton",
        "receta",
        "paella",
        "aficion",
        "hobby",
        "chess",
        "trip",
        "book",
    ),
}
_THEME_RES = {
    theme: re.compile(r"\b(?:" + "|".join(prefixes) + r")", re.UNICODE)
    for theme, prefixes in THEMES.items()
}
#: Tags that name a theme outright (the keyword table's tags and common ones people use).
_TAG_THEMES = {
    "salud": "salud",
    "fatiga": "salud",
    "sueño": "salud",
    "familia": "familia",
    "trading": "dinero",
    "riesgo": "dinero",
    "finanzas": "dinero",
    "trabajo": "trabajo",
    "backup": "tecnologia",
    "hardware": "tecnologia",
    "error": "tecnologia",
    "arquitectura": "tecnologia",
    "scripts": "tecnologia",
    "aficiones": "ocio",
    "musica": "ocio",
    "fotos": "ocio",
}
DEFAULT_THEME = "personal"
#: A capitalized word inside a sentence: a name (person, place, product).
_NAME = re.compile(r"(?<=[\w,;:)] )([A-ZÁÉÍÓÚÑ][\wáéíóúñü]+(?: [A-ZÁÉÍÓÚÑ][\wáéíóúñü]+)*)")
#: A file, command or path: "backup.sh", "/mnt/respaldo", "git.casa.lan".
_THING = re.compile(
    r"(?<![\w/])((?:/[\w.-]+)+|[\w-]+\.(?:sh|py|md|toml|json|lan|com|es|txt|log))\b"
)
_NOT_NAMES = frozenset({"hoy", "ayer", "mañana", "alma", "i", "the", "my"})

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
    theme: str = DEFAULT_THEME
    related_to: str = ""
    #: The person only asks (``is_question``): kept as an episode of the conversation, never
    #: a fact ("¿soy alérgico a algo?" starts like one).
    question: bool = False


def keyword_tags(folded: str) -> list[str]:
    return [tag for tag, rx in _KEYWORD_RES.items() if rx.search(folded)]


def find_project(folded: str, projects: Iterable[str]) -> str:
    """The first known project whose name appears as a whole word (longest names first)."""
    for name in sorted(projects, key=len, reverse=True):
        key = fold(name)
        if key and re.search(r"(?<![\w-])" + re.escape(key) + r"(?![\w-])", folded):
            return name
    return ""


def theme(folded: str, tags: Iterable[str]) -> str:
    """The area of life the text is about (``THEMES``), ``DEFAULT_THEME`` when none shows."""
    counts = {name: len(rx.findall(folded)) for name, rx in _THEME_RES.items()}
    for tag in tags:
        if (name := _TAG_THEMES.get(tag_key(tag))) is not None:
            counts[name] += 2
    best = max(counts.values())
    return next(n for n, c in counts.items() if c == best) if best else DEFAULT_THEME


def related_to(text: str, project: str, tags: Sequence[str]) -> str:
    """What the memory is about, in a word or two: a file or a name the text mentions, else
    its project, else its longest word if it is specific (six letters or more: "dentista",
    "presupuesto"), else its first tag, else its longest word."""
    for rx in (_THING, _NAME):
        for match in rx.findall(text):
            if fold(match) not in _NOT_NAMES:
                return str(match)[:80]
    if project:
        return project
    longest = max((w for w in words(text) if w not in STOPWORDS), key=len, default="")
    if len(longest) < 6 and tags:
        return tags[0]
    return longest[:80]


def classify(folded: str, tags: Iterable[str]) -> str:
    keys = {tag_key(t) for t in tags}
    if keys & _PRINCIPLE_TAGS or _PRINCIPLE.search(folded):
        return "principle"
    if keys & _FACT_TAGS or (_FACT.search(folded) and not _EPISODIC_TIME.search(folded)):
        return "fact"
    return "episode"


#: A sentence that asks: "¿...?", or one that ends in "?".
_ASKED = re.compile(r"¿[^?]*\?|(?:[^.!?¿¡\n]|[.!](?=\S))*\?")  # "git.casa.lan" is one word
#: How a question starts when it is typed without its marks: the accented interrogatives
#: ("qué", not "que": "Que no se me olvide..." is a reminder) and English wh-words.
_ASKS = re.compile(
    r"^\s*(?:y\s+)?(?:qué|cómo|cuándo|dónde|adónde|cuál|cuáles|quién|quiénes|cuánto|cuánta"
    r"|cuántos|cuántas|por qué|dime|what|how|when|where|why|which|who|tell me)\b",
    re.IGNORECASE,
)
#: Words that carry nothing of their own around a question ("Oye, ¿...? Gracias").
_FILLER = frozenset(
    [
        "hola",
        "oye",
        "alma",
        "por",
        "favor",
        "gracias",
        "vale",
        "bueno",
        "pues",
        "y",
        "una",
        "pregunta",
        "hey",
        "hi",
        "please",
        "thanks",
        "ok",
    ]
)


#: A question that carries a statement: "¿sabes que mi perro se llama Toby?", "did you know
#: that ...?". "que" without its accent: "¿sabes qué hora es?" asks. Typed without accents
#: ("sabes que hora es") the words after it tell: a statement goes on with more than a word or
#: two, a question starts with what it asks about.
_CARRIES = re.compile(
    r"^\s*(?:oye,?\s+|y\s+)?(?:¿\s*)?(?:sab[ií]as|sabes|recuerdas|te\s+acuerdas\s+de|"
    r"te\s+(?:he|había)\s+dicho|te\s+dije|did\s+you\s+know|do\s+you\s+know|you\s+know)"
    r"\s+(?:que|that)\s+(?P<rest>[^?]+)\?",
    re.IGNORECASE,
)
#: What follows an unaccented "que" when it is a question's "qué" ("¿sabes que hora es?").
_ASKED_AFTER_QUE = frozenset(
    [
        "hora",
        "dia",
        "día",
        "tiempo",
        "hago",
        "hacer",
        "puedo",
        "debo",
        "tengo",
        "pasa",
        "paso",
        "es",
        "son",
        "fue",
        "significa",
        "quiere",
        "quieres",
        "día",
    ]
)


def carries_statement(text: str) -> bool:
    """Whether a question states something about the person: "¿sabes que mi perro se llama
    Toby?" tells ALMA the dog's name; "¿sabes cómo se llama mi perro?" does not."""
    m = _CARRIES.match(without_hashtags(text))
    if m is None:
        return False
    rest = words(m.group("rest"))
    return len(rest) >= 3 and rest[0] not in _ASKED_AFTER_QUE


def is_question(text: str) -> bool:
    """Whether the person only asks here: every sentence of the text is a question (what is
    left around them is filler). "Soy alérgico a los frutos secos. ¿Qué puedo cenar?" states a
    fact and is not one; "¿soy alérgico a algo?" is; "¿sabes que mi perro se llama Toby?"
    states the dog's name and is not one either (:func:`carries_statement`)."""
    body = without_hashtags(text).strip()
    if carries_statement(body):
        return False
    if "?" in body:
        rest = _ASKED.sub(" ", body)
        return all(w in _FILLER for w in words(rest))
    sentences = [s for s in re.split(r"[.!\n]+", body) if s.strip()]
    return len(sentences) == 1 and bool(_ASKS.match(body))


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
    tags = [clean_tag(t) for t in hashtags(text)]
    keys = {tag_key(t) for t in tags}
    tags += [t for t in keyword_tags(folded) if tag_key(t) not in keys]
    memory_type = classify(folded, tags)
    question = memory_type != "principle" and is_question(text)
    if question:
        memory_type = "episode"
    project = find_project(folded, projects)
    return RuleMeta(
        tags=tags,
        project=project,
        memory_type=memory_type,
        importance=importance(folded, memory_type, tags, base),
        event_date=event_date(folded, day),
        theme=theme(folded, tags),
        related_to=related_to(text, project, tags),
        question=question,
    )
