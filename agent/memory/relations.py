"""Who is who, read from the person's own store: a message's family or relation words
("mi pareja", "el peque", "my kid", "el yayo") joined to the names the store holds for them.

A person asks about "mi pareja" while their memories say "Amparo"; e5-small does not know
they are one person, and the lexical side finds no shared word. So, before a message is
searched, :func:`expand` adds to it what the store says those words stand for:

- **The relation words** are closed-class and bilingual (``ROLES``): a fixed table, not a
  list fitted to any set. "el abuelo" / "el yayo" said by a parent is their own father or
  mother ("grandparent" also adds "padre"/"madre"); "mis suegros" are the partner's parents
  (the partner's names are added).
- **The names** come from the memories that state the relation ("Mi madre, Pilar", "mi
  hermano Sergio", "A Carmen, la jefa", "my sister Carla"; not "Ángel, el padre de Javi",
  someone else's), and, for a partner and a child, from what only that person has ("el
  aniversario con Amparo", "Javi y yo llevamos juntos", "la tutora de Pau", "la escuela
  infantil de Hugo"): ``_STATED`` and ``_CUES``. The memories are found by the lexical
  index (the role's words and cues) and read, at most ``READ`` of them; the names said most
  often win, at most ``MOST``.
- **The other way**: a message that names someone the store calls by a relation ("¿qué le
  tengo pendiente a Pilar?") gets the relation's words ("madre", "mamá").

The expansion is added to the message for the search only (the embedding and the lexical
terms); what the message names (``asked.names``) is read from the message as written.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from policies.text import KINSHIP, fold
from state.memory import MemoryStore
from state.memory.normalize import STOPWORDS

#: Each role's words (the first is the one added to a message that names the person, the
#: other direction): the kinship words every part reads.
ROLES: dict[str, tuple[str, ...]] = KINSHIP
#: A grandparent named by a parent ("el abuelo", "el yayo", not "mi abuelo") is the person's
#: own father or mother: those roles' words and names are added too.
GRANDPARENT = {
    "abuelo": "father",
    "yayo": "father",
    "grandpa": "father",
    "grandad": "father",
    "abuela": "mother",
    "yaya": "mother",
    "grandma": "mother",
    "granny": "mother",
}
#: Roles ambiguous without "my": "niño", "mujer" in a message about something else.
_OWN = {"mujer": "partner", "son": "child", "sons": "child"}
_POSSESSIVE = frozenset({"mi", "mis", "my", "our", "nuestro", "nuestra", "nuestros", "nuestras"})
#: What only one role has, as the store words it: the place in ``_CUES``' patterns.
_CHILD_CUES = (
    "cole",
    "colegio",
    "guarderia",
    "infantil",
    "tutora",
    "tutor",
    "profe",
    "pediatra",
    "extraescolares",
    "school",
    "teacher",
    "pediatrician",
    "nursery",
)
_PARTNER_CUES = ("aniversario", "anniversary")
#: What only a couple says of "X y yo" / "X and I": together, married, an anniversary.
_PARTNER_ES = ("pareja", "casados", "novios", "casamos", "juntos", "aniversario")
_PARTNER_EN = ("partners", "married", "together", "anniversary")
#: At most this many memories are read to find a role's names (records from the store).
READ = 60
#: Memories read for each of a role's words.
EACH = 8
#: How many of a name's mentions are counted (enough to tell a person talked about often).
MENTIONS = 30
#: At most this many names stand for one role.
MOST = 2

_NAME = r"([A-ZÁÉÍÓÚÑ][\wáéíóúñü'-]+)"
_WORD = re.compile(r"[\w'-]+")


def _alt(words: tuple[str, ...]) -> str:
    return "|".join(sorted(set(words), key=len, reverse=True))


def _stated(role: str) -> list[re.Pattern[str]]:
    """The statements of who is who for a role: "mi madre, Pilar", "Pilar, mi madre",
    "Carmen, la jefa", "my sister Carla", "Carla, my sister"."""
    words = _alt(ROLES[role] + tuple(w for w, r in _OWN.items() if r == role))
    own = r"(?i:mi|mis|my|our|nuestr[oa]s?)"
    the = r"(?i:mi|my|la|el|the|our|nuestr[oa])"
    return [
        re.compile(rf"\b{own}\s+(?i:{words})\s*,?\s+{_NAME}"),
        # "Ángel, el padre de Javi" is someone else's father.
        re.compile(rf"{_NAME}\s*,\s*{the}\s+(?i:{words})\b(?!\s+(?i:de|del|of)\b)"),
        re.compile(rf"{_NAME}\s*\(\s*{own}\s+(?i:{words})\s*\)"),
    ]


_STATED = {role: _stated(role) for role in ROLES}
_CHILD_PLACES = _alt(_CHILD_CUES)
_CUES: dict[str, list[re.Pattern[str]]] = {
    "child": [
        re.compile(rf"\b(?i:{_CHILD_PLACES})\s+de\s+{_NAME}"),
        re.compile(rf"{_NAME}'s\s+(?i:{_CHILD_PLACES})\b"),
    ],
    "partner": [
        re.compile(rf"\b(?i:aniversario\s+con)\s+{_NAME}"),
        re.compile(rf"\b(?i:anniversary\s+with)\s+{_NAME}"),
        re.compile(rf"{_NAME}\s+y\s+yo\b[^.]*\b(?i:{_alt(_PARTNER_ES)})\b"),
        re.compile(rf"{_NAME}\s+and\s+I\b[^.]*\b(?i:{_alt(_PARTNER_EN)})\b"),
    ],
}
_CUE_WORDS = {
    "child": _CHILD_CUES,
    "partner": tuple(dict.fromkeys(_PARTNER_CUES + _PARTNER_ES + _PARTNER_EN)),
}
_NOT_NAMES = frozenset({"alma", "yo", "i"})


@dataclass(frozen=True)
class Expansion:
    """What a message's relation words stand for in the store (``names``), and the words
    added for a role (``words``); ``text`` is the message with both appended."""

    text: str
    names: tuple[str, ...] = ()
    words: tuple[str, ...] = ()


def roles(message: str) -> list[str]:
    """The roles ``message`` asks about by a relation word, in the order named; someone
    else's relation ("el hijo de Sergio", "Amparo's brother") is none of the person's."""
    written = _WORD.findall(message)
    tokens = [fold(t).removesuffix("'s") for t in written]
    out: dict[str, None] = {}
    for i, token in enumerate(tokens):
        before = tokens[i - 1] if i else ""
        after = tokens[i + 1 : i + 3]  # "el hijo (mayor) de Sergio"
        theirs = bool({"de", "del", "of"} & set(after)) or (
            i > 0 and fold(written[i - 1]).endswith("'s")
        )
        if theirs and before not in _POSSESSIVE:
            continue
        if token in GRANDPARENT and before not in _POSSESSIVE:
            out.setdefault(GRANDPARENT[token], None)
            continue
        if token in _OWN and before in _POSSESSIVE:
            out.setdefault(_OWN[token], None)
            continue
        for role, words in ROLES.items():
            if token in words:
                out.setdefault(role, None)
    return list(out)


def names_for(store: MemoryStore, role: str) -> list[str]:
    """The names the store gives ``role``, most often stated first (at most ``MOST``): from
    the memories holding the role's words or its cues, read up to ``READ``."""
    terms = [w for w in ROLES[role] if "-" not in w] + list(_CUE_WORDS.get(role, ()))
    # Each word its own share of the memories read: a role's word common in the store (a
    # "mi pareja" said often) must not leave out the cues that name the person.
    ids = list(dict.fromkeys(i for term in terms for i in store.lexical([term], EACH)))[:READ]
    if not ids:
        return []
    stated: Counter[str] = Counter()
    patterns = _STATED[role] + _CUES.get(role, [])
    for rec in store.records(ids):
        for pattern in patterns:
            for name in pattern.findall(rec.content):
                if _is_name(name):
                    stated[name] += 1
    if not stated:
        return []
    # The names the store ties to the role most often; between as many statements, the one
    # it talks about most (a person's partner or child fills their memories).
    mentions = {n: len(store.lexical([fold(n)], MENTIONS)) for n in stated}
    # A name in one memory only is no one the person talks about ("el Colegio de
    # Veterinarios").
    top = sorted(
        (n for n in stated if mentions[n] > 1), key=lambda n: (-stated[n], -mentions[n], n)
    )
    if not top:
        return []
    best = stated[top[0]]
    return [n for n in top if stated[n] * 2 >= best][:MOST]


def _is_name(word: str) -> bool:
    folded = fold(word)
    return (
        folded not in STOPWORDS
        and folded not in _NOT_NAMES
        and not any(folded in words for words in ROLES.values())
        and folded not in GRANDPARENT
    )


def expand(store: MemoryStore, message: str) -> Expansion:
    """``message`` with the names its relation words stand for in ``store`` appended (and a
    grandparent's role words); unchanged when it names no relation the store states."""
    asked = roles(message)
    if not asked:
        return Expansion(message)
    names: dict[str, None] = {}
    added: dict[str, None] = {}
    tokens = {fold(t) for t in _WORD.findall(message)}
    for role in asked:
        if not tokens & set(ROLES[role]):
            added.setdefault(ROLES[role][0], None)  # "el yayo": "padre"
        # "Mis suegros" are the partner's parents: the store says "los padres de Amparo".
        for name in names_for(store, "partner" if role == "in_law" else role):
            if fold(name) not in tokens:
                names.setdefault(name, None)
    extra = [*added, *names]
    if not extra:
        return Expansion(message)
    return Expansion(f"{message} ({', '.join(extra)})", tuple(names), tuple(added))
