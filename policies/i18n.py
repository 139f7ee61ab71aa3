"""The language a person reads: the one owner of translation. Standard library only, a leaf.

English is the source language: messages are written in English in the code, marked with
:func:`_` (``_("Rejected suggestion {id}.", id=3)``), and the catalog ``policies/locale/es.po``
holds their Spanish. Which language a sentence is shown in:

1. while the daemon answers a request, the language the client sent in the request envelope
   (``"lang": "es"``; :func:`language` sets it for the request's dispatch);
2. else the process's own language: :func:`set_language` (the daemon's ``language`` setting),
   or the locale as gettext reads it: the first non-empty of ``LANGUAGE``, ``LC_ALL``,
   ``LC_MESSAGES``, ``LANG`` (``LANGUAGE`` may list several, ``es:en``); ``C``, ``POSIX`` or
   nothing set means English.

Why not :mod:`gettext`: importing it (with :mod:`locale`) and compiling ``.mo`` files would
cost every ``alma-ctl`` start and put a build step and binaries in the repository. The ``.po``
file is read directly, only when a sentence is first translated into a language other than
English; it is a few hundred entries and parses at once.

Messages marked at import time (help texts of the command table) are marked with :func:`N_`
and translated where they are shown, with ``_(text)``. Folder names ALMA creates are
translated with the context ``folder`` (:func:`folder_name`).
"""

from __future__ import annotations

import os
from _contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _contextvars import Token
    from collections.abc import Iterable

#: Languages with a catalog, the source language first.
LANGUAGES = ("en", "es")
SOURCE_LANGUAGE = "en"
_LOCALE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locale")
_CONTEXT_SEP = "\x04"  # GNU gettext's separator between msgctxt and msgid

# The request's language while the daemon dispatches it (threads start with no value).
_request_language: ContextVar[str | None] = ContextVar("alma_language", default=None)
_process_language: str | None = None
_setting: str | None = None  # set_language: a setting wins over the locale
_fallback_language: str | None = None  # where the locale names none: set_fallback_language
_SILENT_LOCALES = ("C", "POSIX")
_catalogs: dict[str, dict[str, tuple[str, ...]]] = {}


# --------------------------------------------------------------------------- which language


def normalize(tag: str) -> str | None:
    """``es_ES.UTF-8@euro`` -> ``es``; ``C``/``POSIX`` -> ``en``; None when it is no language.

    Only a well-formed tag of letters (and ``_``/``-`` regions) counts, so a value from the
    wire or the environment can never name a file.
    """
    if not tag.isascii() or not all(c.isalnum() or c in "_-.@" for c in tag):
        return None
    base = tag.partition(".")[0].partition("@")[0]
    if base in ("C", "POSIX"):
        return SOURCE_LANGUAGE
    lang = base.replace("-", "_").partition("_")[0].lower()
    if not (2 <= len(lang) <= 3 and lang.isascii() and lang.isalpha()):
        return None
    return lang


def locale_names(environ: dict[str, str] | os._Environ[str] | None = None) -> str | None:
    """The language the locale names, read as gettext reads it; None when it names none.

    The first non-empty of ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` decides (as
    Python's gettext does): its first entry with a catalog wins; an entry list that names only
    languages without a catalog means English; ``C``, ``POSIX`` (what containers and many
    machines have) or nothing set name no language at all, and the caller decides (the
    person's own chat logs, :func:`set_fallback_language`).
    """
    env = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name)
        if not value:
            continue
        named = False
        for item in value.split(":"):
            if not item or item.partition(".")[0].partition("@")[0] in _SILENT_LOCALES:
                continue
            named = True
            lang = normalize(item)
            if lang in LANGUAGES:
                assert lang is not None
                return lang
        return SOURCE_LANGUAGE if named else None
    return None


def locale_language(environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The language the locale asks for, among :data:`LANGUAGES`; English where it names none."""
    return locale_names(environ) or SOURCE_LANGUAGE


def supported(tag: str) -> str:
    """The catalog language for a tag (``es-MX`` -> ``es``); English when there is none."""
    lang = normalize(tag)
    return lang if lang in LANGUAGES and lang is not None else SOURCE_LANGUAGE


def set_language(tag: str | None) -> None:
    """Fix the process's language (a setting); None goes back to reading the locale."""
    global _process_language, _setting
    _setting = None if tag is None else supported(tag)
    _process_language = None


def set_fallback_language(tag: str | None) -> None:
    """The language to speak where no setting and no locale names one: the daemon passes the
    language of the person's own chat logs (:func:`guess_language`)."""
    global _process_language, _fallback_language
    _fallback_language = None if tag is None else supported(tag)
    _process_language = None


def follow_root_language(path: str) -> None:
    """A client at a root: where no setting and no locale names a language, speak the one
    its daemon wrote down (:func:`remembered_language`), the language of the person's logs."""
    if _setting is None and locale_names() is None:
        set_fallback_language(remembered_language(path))


def current_language() -> str:
    """The language sentences are written in right now (see the module's docstring)."""
    lang = _request_language.get()
    if lang is not None:
        return lang
    return process_language()


def process_language() -> str:
    """The process's own language, whoever it is answering: :func:`set_language`, else the locale.

    What the daemon decides on its own, such as the names of the folders it creates, follows
    this and not the language of the request that happened to start an analysis.
    """
    global _process_language
    if _process_language is None:
        _process_language = _setting or locale_names() or _fallback_language or SOURCE_LANGUAGE
    return _process_language


class language:
    """``with language("es"): ...``: sentences made inside are Spanish (this thread only).

    ``None`` leaves the language as it is. A class, not :mod:`contextlib`: it keeps this leaf
    free of imports that alma-ctl would pay for.
    """

    __slots__ = ("_tag", "_token")

    def __init__(self, tag: str | None) -> None:
        self._tag = None if tag is None else supported(tag)
        self._token: Token[str | None] | None = None

    def __enter__(self) -> str:
        if self._tag is not None:
            self._token = _request_language.set(self._tag)
        return current_language()

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _request_language.reset(self._token)
            self._token = None


#: Words only one of the two languages writes often; shared ones (``no``, ``a``) tell nothing.
_MARKERS = {
    "es": frozenset(
        [
            "que",
            "el",
            "la",
            "los",
            "las",
            "y",
            "de",
            "del",
            "por",
            "para",
            "con",
            "una",
            "pero",
            "más",
            "qué",
            "cómo",
            "estoy",
            "tengo",
            "hoy",
            "mañana",
            "muy",
            "también",
            "porque",
            "está",
            "es",
            "mi",
            "me",
            "se",
            "lo",
            "he",
            "ya",
            "hay",
            "esto",
            "eso",
        ]
    ),
    "en": frozenset(
        [
            "the",
            "and",
            "of",
            "to",
            "is",
            "it",
            "that",
            "this",
            "with",
            "for",
            "but",
            "my",
            "have",
            "has",
            "today",
            "tomorrow",
            "i'm",
            "i'll",
            "what",
            "how",
            "very",
            "also",
            "because",
            "was",
            "are",
            "you",
            "i",
        ]
    ),
}
#: How many marker words it takes to tell a language, and by how much one must lead.
_GUESS_MIN_WORDS = 5
_GUESS_LEAD = 2.0


def guess_language(texts: Iterable[str]) -> str | None:
    """The language of a person's own words (their chat turns), among :data:`LANGUAGES`, or
    None when they are too few or too mixed to tell."""
    counts = dict.fromkeys(_MARKERS, 0)
    for text in texts:
        for word in text.lower().replace("¿", " ").replace("¡", " ").split():
            word = word.strip('.,;:!?"()[]«»')
            for lang, markers in _MARKERS.items():
                if word in markers:
                    counts[lang] += 1
    (best, top), (_other, second) = sorted(counts.items(), key=lambda kv: -kv[1])[:2]
    if top < _GUESS_MIN_WORDS or top < _GUESS_LEAD * second:
        return None
    return best


#: Marks only Spanish writes: its opening question and exclamation marks, ñ, accented vowels.
_SPANISH_LETTERS = frozenset("¿¡ñáéíóú")
#: Words of a short message that tell its language beyond the markers above (a question to
#: ALMA is often a handful of words: "what is my dog called?").
_MESSAGE_MARKERS = {
    "es": frozenset(["cómo", "como", "cuál", "cual", "dónde", "donde", "cuándo", "cuando",
                     "quién", "quien", "cuánto", "cuanto", "llama", "sabes", "tu", "tus",
                     "mis", "hola", "gracias", "puedo", "soy", "dime", "recuerdas"]),
    "en": frozenset(["where", "when", "who", "which", "what's", "do", "does", "did", "your",
                     "name", "called", "can", "should", "am", "hello", "hi", "thanks", "tell",
                     "know", "remember", "about"]),
}  # fmt: skip


def message_language(text: str, default: str) -> str:
    """The language one message is written in, among :data:`LANGUAGES`; ``default`` (the
    daemon's) when it does not tell. Unlike :func:`guess_language` one short message is
    enough: a Spanish mark or letter, or more words of one language than of the other."""
    lowered = text.lower()
    counts = dict.fromkeys(_MARKERS, 0)
    counts["es"] += 2 * sum(ch in _SPANISH_LETTERS for ch in lowered)
    for word in lowered.replace("¿", " ").replace("¡", " ").split():
        word = word.strip('.,;:!?"()[]«»')
        for lang in counts:
            counts[lang] += word in _MARKERS[lang] or word in _MESSAGE_MARKERS[lang]
    if counts["es"] == counts["en"]:
        return supported(default)
    return max(counts, key=lambda lang: counts[lang])


def remembered_language(path: str | os.PathLike[str]) -> str | None:
    """The language a daemon wrote for its root (``.alma/language``: one tag on a line), or
    None when there is none or it is not a language with a catalog. Never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = os.read(fd, 16)
    except OSError:
        return None
    finally:
        os.close(fd)
    lang = normalize(raw.decode("ascii", "replace").strip())
    return lang if lang in LANGUAGES else None


# --------------------------------------------------------------------------- translating


def _(message: str, /, **values: object) -> str:
    """``message`` in the current language, with ``{name}`` fields filled from ``values``
    (a :class:`Said`: typed ``str``, since a sentence is text to everyone but its store)."""
    return _say(message, None, 0, values)


def ngettext(singular: str, plural: str, n: int, /, **values: object) -> str:
    """The form of a message for the count ``n`` (``{n}`` is filled in with it).

    English and Spanish both use the singular for exactly one and the plural otherwise.
    """
    return _say(singular, plural, n, values)


def _say(message: str, plural: str | None, n: int, values: dict[str, object]) -> Said:
    index = 0 if plural is None or n == 1 else 1
    text = message if index == 0 else str(plural)
    lang = current_language()
    if lang != SOURCE_LANGUAGE:
        found = _catalog(lang).get(message)
        if found and (plural is None or len(found) == 2) and found[index]:
            text = found[index]
    key: dict[str, object] = {"m": message, "v": _kept(values)}
    if plural is None:
        return Said(text.format(**values) if values else text, key)
    key.update(p=plural, n=n)
    return Said(text.format(n=n, **values), key)


class Said(str):
    """A sentence of the catalog as it was said, which can say itself again in another language.

    What ALMA writes down to show later (a suggestion's title and reason) is stored with its
    :attr:`key`, so it reads in the language of the moment it is shown (:func:`say_again`), not
    in the one the daemon spoke when it was written. Anything done to it as a string (a slice,
    a concatenation) gives a plain ``str``: only a whole sentence is said again.
    """

    key: dict[str, object]

    def __new__(cls, text: str, key: dict[str, object] | None = None) -> Said:
        said = super().__new__(cls, text)
        said.key = {"m": text, "v": {}} if key is None else key  # a copy's state sets its own
        return said


def _kept(values: dict[str, object]) -> dict[str, object]:
    """The values of a sentence as JSON can hold them: a sentence in it is kept said."""
    kept: dict[str, object] = {}
    for name, value in values.items():
        if isinstance(value, Said):
            kept[name] = {"said": value.key}
        elif isinstance(value, bool | int | float):
            kept[name] = value
        else:
            kept[name] = str(value)
    return kept


def say_again(key: object) -> str | None:
    """The sentence of a :attr:`Said.key` in the current language; None when the key is not one
    (damaged, or from another ALMA) or its message has left the catalog (the caller shows the
    text it kept)."""
    if not isinstance(key, dict) or not isinstance(key.get("m"), str):
        return None
    message: str = key["m"]
    raw = key.get("v", {})
    if not isinstance(raw, dict):
        return None
    values: dict[str, object] = {}
    for name, value in raw.items():
        if isinstance(value, dict):
            inner = say_again(value.get("said"))
            if inner is None:
                return None
            value = inner
        values[str(name)] = value
    plural, n = key.get("p", None), key.get("n", 0)
    lang = current_language()
    if lang != SOURCE_LANGUAGE and message not in _catalog(lang):
        return None
    if not (plural is None or isinstance(plural, str)) or not isinstance(n, int):
        return None
    try:
        message.format(**{"n": n, **values})  # every field filled, even where nothing else is
        return str(_say(message, plural, n, values))
    except (KeyError, IndexError, ValueError):  # fields the stored values do not fill
        return None


def pgettext(context: str, message: str, /) -> str:
    """``message`` translated in ``context`` (a word that means different things elsewhere)."""
    return _in_context(context, message)


def _in_context(context: str, message: str) -> str:
    lang = current_language()
    if lang != SOURCE_LANGUAGE:
        found = _catalog(lang).get(context + _CONTEXT_SEP + message)
        if found and found[0]:
            return found[0]
    return message


def N_(message: str, /) -> str:
    """Mark a message for the catalog without translating it yet (see the module docstring)."""
    return message


def folder_name(category: str, lang: str | None = None) -> str:
    """The name of the folder ALMA creates for ``category`` (``images`` -> ``imágenes``).

    The catalog's reader takes the categories of :mod:`actions.planners.categories` as the
    messages of the context ``folder``.
    """
    with language(lang):
        return _in_context("folder", category)


# --------------------------------------------------------------------------- the catalog


def catalog_path(lang: str) -> str:
    return os.path.join(_LOCALE_DIR, f"{lang}.po")


def _catalog(lang: str) -> dict[str, tuple[str, ...]]:
    catalog = _catalogs.get(lang)
    if catalog is None:
        try:
            with open(catalog_path(lang), encoding="utf-8") as handle:
                catalog = parse_po(handle.read())
        except OSError:
            catalog = {}  # a missing catalog shows English, never an error
        _catalogs[lang] = catalog
    return catalog


def parse_po(text: str, duplicates: list[str] | None = None) -> dict[str, tuple[str, ...]]:
    """``msgid`` (with ``msgctxt`` and the 0x04 separator when there is one) -> its msgstr(s).

    Reads what gettext's ``.po`` files hold: comments, ``#, fuzzy`` entries (skipped, as
    msgfmt does), ``msgctxt``, ``msgid_plural`` with ``msgstr[N]``, and strings continued on
    the following lines. The header (empty msgid) is left out. A key seen twice is appended to
    ``duplicates`` when given (msgfmt refuses such a file; the last entry wins here).
    """
    entries: dict[str, tuple[str, ...]] = {}
    fields: dict[str, str] = {}
    current = ""
    fuzzy = False

    def flush() -> None:
        nonlocal fuzzy
        msgid = fields.get("msgid")
        if msgid and not fuzzy:
            key = msgid
            if "msgctxt" in fields:
                key = fields["msgctxt"] + _CONTEXT_SEP + msgid
            if "msgid_plural" in fields:
                forms = tuple(fields.get(f"msgstr[{i}]", "") for i in range(2))
            else:
                forms = (fields.get("msgstr", ""),)
            if duplicates is not None and key in entries:
                duplicates.append(key)
            entries[key] = forms
        fields.clear()
        fuzzy = False

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if current.startswith("msgstr"):
                flush()
                current = ""
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            continue
        if line.startswith('"'):
            if current:
                fields[current] += _unquote(line)
            continue
        keyword, _space, rest = line.partition(" ")
        if keyword in ("msgctxt", "msgid") and current.startswith("msgstr"):
            flush()  # a fuzzy mark of the new entry is a comment: it would have flushed already
        current = keyword
        fields[current] = _unquote(rest.strip())
    flush()
    return entries


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


def _unquote(quoted: str) -> str:
    if len(quoted) < 2 or quoted[0] != '"' or quoted[-1] != '"':
        raise ValueError(f"not a quoted .po string: {quoted[:40]!r}")
    body = quoted[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    chars = iter(body)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(_ESCAPES.get(following, "\\" + following))
        else:
            out.append(char)
    return "".join(out)
