"""The small rules of text every part shares: folding, hashtags, tags, and text safe to show.

Standard library only: alma-ctl and the chat client import it at every start.

Two foldings, because two questions are asked of Spanish text:

- :func:`fold` answers "is this the same word?" (tags, projects, the memory's words): case and
  accents are ignored, because people type Spanish without accents half of the time, but the
  tilde of ñ is kept: "año" and "ano" are different words, and a memory keyed on one must not
  answer for the other.
- :func:`loose_fold` answers "did the person type one of a rule's words?" (chat commands,
  promises, moods, a claimed folder): ñ is read as n too, because a keyboard without ñ types
  "manana" for "mañana", and a rule's own word list holds no pair that differs only there.
  A rule folds its word list with the same function as the text it reads, so the list may be
  written in plain Spanish ("desengañado").
"""

from __future__ import annotations

import os
import re
import unicodedata

_COMBINING_TILDE = "\u0303"


def fold(text: str) -> str:
    """Casefold and drop accents, except the tilde of ñ."""
    text = text.casefold()
    if text.isascii():  # nothing to decompose: most tags, projects and English text
        return text
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch) and not (ch == _COMBINING_TILDE and out and out[-1] == "n"):
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def loose_fold(text: str) -> str:
    """Casefold and drop every accent, the tilde of ñ too: "Mañana" is "manana"."""
    text = text.casefold()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


#: A hashtag: ``#`` and a word that starts with a letter ("#trading", "#año-nuevo"). A number
#: is not a topic: "#12" names a suggestion and "#2024" a year. Not after a letter or digit
#: ("C#"), ``&`` (an HTML entity, "&#39;") or ``/`` (a link's fragment, "page/#top").
HASHTAG = re.compile(r"(?<![\w&/])#([^\W\d_][\w-]*)")


def hashtags(text: str) -> list[str]:
    """The hashtags of ``text`` as written, without their ``#``."""
    return HASHTAG.findall(text)


def without_hashtags(text: str, sep: str = " ") -> str:
    """``text`` with each hashtag replaced by ``sep``."""
    return HASHTAG.sub(sep, text)


def clean_tag(raw: str) -> str:
    """The stored form of a tag: trimmed, without '#', lowercase NFC, as written otherwise."""
    tag = unicodedata.normalize("NFC", raw.strip().lstrip("#").strip()).lower()
    return re.sub(r"\s+", "-", tag)[:60]


def tag_key(raw: str) -> str:
    """The key filters match on: "Fatiga", "#fatiga" and "fátiga" share it."""
    return fold(clean_tag(raw))


def project_key(raw: str) -> str:
    return fold(raw.strip())


#: What a terminal would obey instead of showing: C0 controls but tab and newline (ESC starts
#: the sequences that clear the screen, retitle the window or fake a prompt; CR overwrites a
#: line), DEL, C1 controls, and the bidirectional overrides that reorder what is read.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` safe to write to a terminal: every control character shown as an escape
    (``\\x1b``), never sent raw. Names, logs, memories and model output reach the person's
    screen through here (alma-ctl, alma chat); Spanish text and emoji pass untouched."""
    return _UNPRINTABLE.sub(lambda m: ascii(m[0])[1:-1], text)


def printable_name(name: str) -> str:
    """A file name as a person can read it on one line: bytes that are not UTF-8, tabs and
    newlines shown as ``\\xNN`` escapes, and the rest made :func:`printable`."""
    text = os.fsencode(name).decode("utf-8", errors="backslashreplace")
    return printable(text.replace("\t", "\\x09").replace("\n", "\\x0a"))


def clip(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters: what is cut is marked with an ellipsis, so a
    stored error or title never carries a whole file (a long path quoted in it, say)."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def name_hex(name: str) -> str:
    """A file name's very bytes as hex text: how a name that may not be UTF-8 travels in JSON
    (the socket's requests, a restore's manifest in the journal)."""
    return os.fsencode(name).hex()


def name_from_hex(text: str) -> str:
    """The name :func:`name_hex` wrote (ValueError when ``text`` is not hex)."""
    return os.fsdecode(bytes.fromhex(text))


#: Kinship words by role, folded (Spanish and English): how a person names someone by their
#: relation ("mi pareja", "el peque", "my kid"). The first word of each role stands for it.
#: Who a memory's names are (``agent.memory.relations``) and whether a line is about someone
#: else (``agent.detectors.meaning``) read the same words.
KINSHIP: dict[str, tuple[str, ...]] = {
    "partner": (
        "pareja",
        "novio",
        "novia",
        "marido",
        "esposo",
        "esposa",
        "partner",
        "wife",
        "husband",
        "girlfriend",
        "boyfriend",
    ),
    "child": (
        "hijo",
        "hija",
        "hijos",
        "hijas",
        "peque",
        "crio",
        "cria",
        "nino",
        "nina",
        "nene",
        "nena",
        "daughter",
        "kid",
        "kids",
        "child",
    ),
    "mother": ("madre", "mama", "mami", "mum", "mom", "mother"),
    "father": ("padre", "papa", "papi", "dad", "father"),
    "sibling_m": ("hermano", "brother"),
    "sibling_f": ("hermana", "sister"),
    "in_law": ("suegro", "suegra", "suegros", "in-laws"),
    "boss": ("jefe", "jefa", "boss"),
}
