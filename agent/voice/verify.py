"""The one check between a model's text and the person's screen, whatever the model.

A model's text is read sentence by sentence as it streams; a sentence is shown once it is
complete and has been judged (:class:`Verifier`). What ALMA gave the model is the ground a
sentence may stand on (:class:`Grounds`): the memories and principles handed, the day's facts,
the person's own message (its names and numbers), the persona. A sentence is left out when

- it names something (a name, a number, a date, a path or file) that none of them holds;
- it is about the person or their world (it speaks to them, names something, or uses the words
  of what was handed) and no one source, or one sentence of it, says it: fewer than
  :data:`LEXICAL_MIN` of its stems (small talk's aside) are in it, or one negates and the
  other does not;
- it echoes the prompt's framing (the headers that frame the memories as data);
- it repeats a sentence already shown in this answer or in an earlier one of the session.

Small talk passes ("¡Hola! ¿En qué puedo ayudarte?", "No sé cómo se llama tu perro."), and so
does a sentence about nothing of the person's ("La manzana es una fruta."). A ``[...]`` that
looks like a citation is kept only if it names a source the model was given, and the text is cut
as soon as it starts looping (:func:`loop_start`): the model is stopped there. What was left out
is kept as the model wrote it (``dropped``) for the log, and the person is told in one line how
many sentences were not shown (:func:`dropped_sentence`).

Lexical overlap rather than the embedder's cosine: a changed word ("tu madre Lucía" for "mi
hermana Lucía") is a missing stem, while the cosine stays as high as a faithful sentence's
(``python -m tests.support.verify_tune`` measures both; docs/chat.md has the figures).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from policies.i18n import ngettext
from policies.results import ContextItem
from policies.text import fold
from state.memory.normalize import NEGATIONS, STOPWORDS, search_terms, words

#: A statement stands when at least this share of its stems is in one source.
LEXICAL_MIN = 0.9
#: A sentence that shares at least this share of its stems, and ``ECHO_STEMS`` or more, with
#: the prompt's framing (all of its texts together: a small model stitches them) echoes it.
ECHO_MIN = 0.5
ECHO_STEMS = 3
#: What looks like a citation of a source inside [brackets]: a path ("logs/1987-04-30:5"), a
#: file with an extension, a name with a line ("notas:12"), or a source that is not a file.
CITATION = re.compile(
    r"(?:[\w.-]+/)+[\w.-]*(?::\d+)?|[\w.-]+\.[A-Za-z]\w*(?::\d+)?|[\w.-]+:\d+|alma-ctl|examples"
)
#: A bracket is held back until it closes, for at most this many characters.
_HELD = 160
_BRACKET = re.compile(rf" ?\[([^\[\]\n]{{1,{_HELD}}})\]")
#: A sentence longer than this is judged as it stands (a model that never ends one).
_LONGEST = 600
#: A loop: the text's end repeats the text before it, 3 times for a short piece, twice for a
#: long one (a 40-character run written twice in a row is not prose).
_PERIODS = range(6, 400)
_LONG = 40
#: A line written this many times (numbers and case aside) is a loop too.
_SAME_LINES = 3

#: Where a sentence ends: after . ! ? … (and closing quotes or brackets) before a space, or at
#: a line's end. "logs/2026-11-20.md:12" and "2.5" do not end one (no space after the dot).
_END = re.compile(r"[.!?…]+[\"'»)\]*_]*\s+|\n+")
#: A list's number ("1. ", "2) ") ends no sentence.
_LIST_MARK = re.compile(r"(?:^|\n)\s*\d{1,2}[.)]\s+$")
#: Abbreviations that end in a dot inside a sentence.
_ABBREVIATIONS = frozenset({"p.ej", "ej", "etc", "e.g", "i.e", "sr", "sra", "dr", "dra", "vs"})

#: Tokens a sentence names: a path or file, a number (dates and times are numbers too), a name.
_PATH = re.compile(
    r"(?:~|\.{1,2})?(?:/[\w.\-]+)+/?|[\w.\-]+(?:/[\w.\-]+)+/?(?::\d+)?|[\w\-]+\.[A-Za-z][A-Za-z0-9]{0,5}(?::\d+)?"
)
_NUMBER = re.compile(r"\d+(?:[.,:/\-]\d+)*")
_TOKEN = re.compile(
    r"[^\s\"'«»“”‘’()\[\]{}<>*`_,;:!?¿¡.…]+(?:[._][^\s\"'«»“”‘’()\[\]{}<>*`_,;:!?¿¡.…]+)*"
)
#: Terminal controls are judged as spaces (the screen shows them escaped, policies.text).
_CONTROLS = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MARKDOWN = re.compile(r"^\s*(?:#+|>|[-*+•·]|\d{1,2}[.)])\s*")
#: Words that speak of the person (a statement about them needs a source).
_PERSONAL = frozenset(
    [
        "tu",
        "tus",
        "tú",
        "te",
        "ti",
        "contigo",
        "tuyo",
        "tuya",
        "tuyos",
        "tuyas",
        "usted",
        "ustedes",
        "your",
        "yours",
        "you",
        "you're",
        "yourself",
    ]
)
#: Small talk's own words (stems, folded): a sentence made of these and function words asks,
#: greets, offers or says it does not know; it states nothing about the person.
_SMALL_TALK = frozenset(
    search_terms(
        "hola buenas gracias claro vale perfecto entiendo pregunta preguntar ayudar ayudarte "
        "ayuda puedo puedes podría quieres quisieras necesitas decir dime dímelo decirme "
        "información informacion datos dato sé saber sabía conozco conocer "
        "recordar recuerde recuerdo recordarlo guardar guardado guardada guardo apuntar "
        "memoria encuentro encontrar mensaje respuesta responder pena siento lamento "
        "algo nada esto eso aquí ahí más otra cosa cosas gusto encantado encantada favor "
        "hello hi thanks thank sure okay help helping know knowing tell told ask asking "
        "information data remember store stored saved save memory find found message "
        "answer sorry glad anything nothing else something please happy "
        "alma asistente assistant "
        "según dijiste dicho contaste comentaste mencionaste apuntaste escribiste nota notas "
        "registro registros according said mentioned wrote note notes record records"
    )
)
#: What a model says when it does not know: it states nothing (its names are still checked).
_IGNORANCE = re.compile(
    r"\b(?:no sé|no lo s[eé]|no (?:tengo|encuentro|hay|consta|me consta|dispongo)|desconozco"
    r"|(?:i )?(?:do not|don't|dont) (?:know|have)|no (?:information|record)|nothing (?:stored|about))\b"
)
#: Names the framing itself uses for ALMA (never an invented name).
_OWN_NAMES = frozenset({"alma"})


@dataclass(frozen=True)
class Grounds:
    """What ALMA gave the model, and so what a sentence may rest on. ``names``: the sources'
    own names (what a citation may name); ``framing``: the prompt's framing texts (an echo of
    them is left out); ``earlier``: the sentences already shown in this session (as
    :func:`sentence_key` keys)."""

    sources: tuple[str, ...]
    names: frozenset[str] = frozenset()
    #: The person's message: it may give names, numbers and the words of "I do not know
    #: what X is", never a statement (a question says nothing is so).
    message: str = ""
    #: Texts that support a statement without being the person's world (the persona: who
    #: ALMA is), so a sentence about them is not about the person's world for that alone.
    about_alma: tuple[str, ...] = ()
    #: Whether a statement must say what one source says (its words), besides naming only
    #: what they name. False for sources that are data rather than sentences (the day's
    #: facts, as fields): their names, numbers, dates and paths are all a sentence can match.
    wording: bool = True
    framing: tuple[str, ...] = ()
    earlier: frozenset[str] = frozenset()


@dataclass
class _Index:
    words: set[str]
    numbers: set[str]
    text: str
    stems: list[set[str]]
    negated: list[bool]
    framing: set[str]
    asked: set[str]
    wording: bool
    world: set[str]

    @classmethod
    def of(cls, grounds: Grounds) -> _Index:
        texts = [*grounds.sources, *grounds.about_alma, *grounds.names, grounds.message]
        # A statement is matched against each source whole and each of its sentences (a
        # memory may hold a negation in one sentence and not in the next).
        units = [*grounds.sources, *grounds.about_alma]
        for text in units[:]:
            parts = [p for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
            units += parts if len(parts) > 1 else []
        allwords: set[str] = set(_OWN_NAMES)
        numbers: set[str] = set()
        for text in texts:
            for w in words(text):
                allwords.add(w)
                allwords.update(p for p in re.split(r"[._\-/:']", w) if p)
            for written in _NUMBER.findall(text):
                numbers.add(_plain_number(written))
                numbers.update(_plain_number(g) for g in re.findall(r"\d+", written))
        return cls(
            words=allwords,
            numbers=numbers,
            text=fold(" ".join(texts)),
            stems=[set(search_terms(t)) for t in units],
            negated=[_negated(t) for t in units],
            framing={stem for text in grounds.framing for stem in search_terms(text)},
            asked=set(search_terms(grounds.message)),
            wording=grounds.wording,
            world={stem for text in grounds.sources for stem in search_terms(text)},
        )


def _plain_number(written: str) -> str:
    """A number as a key: thousands separators and leading zeros off ("1.500" -> "1500")."""
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", written):
        written = re.sub(r"[.,]", "", written)
    return written.lstrip("0") or "0"


def _negated(text: str) -> bool:
    return any(w in NEGATIONS for w in words(text))


def sentence_key(sentence: str) -> str:
    """A sentence as a repeat is recognised: its stems, in order ("" for a short one)."""
    stems = search_terms(sentence)
    return " ".join(stems) if len(stems) >= 3 else ""


def anchors(sentence: str) -> list[str]:
    """What ``sentence`` names: paths and files, numbers, and names (a capitalised word after
    the first, a word in capitals or one that mixes letters with digits or underscores; the
    first word of a fragment of three words or fewer, "Shakira (guitarro).", when it is not a
    common word)."""
    found: list[str] = []
    rest = sentence
    for m in _PATH.finditer(sentence):
        if re.search(r"[A-Za-z]", m.group()) and not re.fullmatch(r"[\d.,:/\-]+", m.group()):
            found.append(m.group().rstrip("./"))
            rest = rest.replace(m.group(), " ")
    found += _NUMBER.findall(rest)
    rest = _NUMBER.sub(" ", rest)
    tokens = _TOKEN.findall(rest)
    for i, token in enumerate(tokens):
        if not any(c.isalpha() for c in token):
            continue
        capitals = sum(c.isupper() for c in token)
        if (
            (len(token) >= 2 and token.isupper())
            or "_" in token
            or (capitals and i > 0 and token[0].isupper())
            or (capitals > 1 and not token.isupper())
            or (i == 0 and token[0].isupper() and len(tokens) <= 3 and _uncommon(token))
        ):
            found.append(token)
    return found


def _uncommon(word: str) -> bool:
    folded = fold(word)
    return folded not in STOPWORDS and not set(search_terms(word)) <= _SMALL_TALK


class Verifier:
    """What the person is shown of the model's text as it streams, through ``emit``: whole
    sentences, each once judged. ``looped`` is set when the text starts repeating itself (the
    caller stops the model); ``dropped`` holds what was left out, as (why, the sentence as the
    model wrote it): ``unsupported``, ``echo`` or ``repeat``; ``invented`` the citations left
    out."""

    def __init__(self, grounds: Grounds, emit: Callable[[str], None]) -> None:
        self.grounds = grounds
        self.emit = emit
        self.looped = False
        self.dropped: list[tuple[str, str]] = []
        self.invented: list[str] = []
        self._index = _Index.of(grounds)
        self._raw = ""
        self._done = 0  # characters of ``_raw`` already judged
        self._shown: list[str] = []
        self._keys: set[str] = set()

    @property
    def text(self) -> str:
        return "".join(self._shown)

    @property
    def keys(self) -> set[str]:
        """The shown sentences' keys (for the session's ``earlier``)."""
        return {k for k in self._keys if k}

    def feed(self, piece: str) -> None:
        if self.looped or not piece:
            return
        self._raw += piece
        start = loop_start(self._raw)
        if start is not None:
            self.looped = True
            self._raw = self._raw[:start]
            self._take(final=True)
            return
        self._take(final=False)

    def finish(self) -> None:
        if not self.looped:
            self._take(final=True)

    def _take(self, *, final: bool) -> None:
        while True:
            end = _sentence_end(self._raw, self._done)
            if end is None:
                break
            self._judge(self._raw[self._done : end])
            self._done = end
        if final and self._done < len(self._raw):
            self._judge(self._raw[self._done :])
            self._done = len(self._raw)

    def _judge(self, written: str) -> None:
        if not written.strip():
            if self._shown:
                self._show(written)
            return
        sentence = self._citations(written)
        verdict = judge(sentence, self._index, self.grounds.earlier | self._keys)
        if verdict != "shown":
            self.dropped.append((verdict, written.strip()))
            return
        self._keys.add(sentence_key(sentence))
        self._show(sentence)

    def _citations(self, sentence: str) -> str:
        def resolve(m: re.Match[str]) -> str:
            inner = m.group(1).strip()
            if CITATION.fullmatch(inner) and inner not in self.grounds.names:
                self.invented.append(inner)
                return ""
            return m.group(0)

        return _BRACKET.sub(resolve, sentence)

    def _show(self, text: str) -> None:
        if text:
            self._shown.append(text)
            self.emit(text)


def _sentence_end(text: str, start: int) -> int | None:
    """Where the sentence that starts at ``start`` ends (after its spaces), or None while it
    may go on. A bracket still open holds the sentence (a citation is judged whole)."""
    pos = start
    while True:
        m = _END.search(text, pos)
        if m is None:
            if len(text) - start > _LONGEST:
                return len(text)
            return None
        before = text[start : m.start()]
        if "\n" not in m.group() and (
            _LIST_MARK.search(text[start : m.end()])
            or fold(before.rsplit(None, 1)[-1] if before.split() else "") in _ABBREVIATIONS
            or before.count("[") > before.count("]")
        ):
            pos = m.end()
            continue
        return m.end()


def judge(sentence: str, index: _Index, earlier: set[str] | frozenset[str]) -> str:
    """``shown``, or why the sentence is left out: ``unsupported``, ``echo``, ``repeat``."""
    body = _CONTROLS.sub(" ", sentence.replace("**", "").replace("__", ""))
    body = _MARKDOWN.sub("", body).strip()
    if not body:
        return "shown"
    stems = search_terms(body)
    key = sentence_key(body)
    if key and key in earlier:
        return "repeat"
    if sentence.lstrip().startswith("#") or _echoes(stems, index):
        return "echo"
    for anchor in anchors(body):
        if not _held(anchor, index):
            return "unsupported"
    lowered = body.lower()
    own = [s for s in stems if s not in _SMALL_TALK]
    personal = any(w in _PERSONAL for w in words(body))
    asks = body.rstrip("*_ )»\"'").endswith("?")
    if asks or not index.wording:
        return "shown"  # it asks: its names were checked above
    given = [index.asked, *index.stems]
    if _IGNORANCE.search(lowered) and all(any(s in src for src in given) for s in own):
        return "shown"  # it does not know what it was asked (in the words it was given)
    about = bool(anchors(body)) or (personal and own) or bool(set(own) & index.world)
    if not about:
        return "shown"  # small talk, or nothing of the person or their world
    return "shown" if _supported(own, _negated(body), index) else "unsupported"


def _held(anchor: str, index: _Index) -> bool:
    key = fold(anchor)
    if re.fullmatch(r"[\d.,:/\-]+", anchor):
        plain = _plain_number(anchor)
        if plain in index.numbers or anchor in index.text:
            return True
        parts = re.findall(r"\d+", anchor)
        return len(parts) > 1 and all(_plain_number(p) in index.numbers for p in parts)
    if "/" in anchor or "." in anchor:
        return key.rstrip("/") in index.text
    return key in index.words


def _supported(stems: Sequence[str], negated: bool, index: _Index) -> bool:
    mine = set(stems)
    if not mine:
        return True
    return any(
        len(mine & source) / len(mine) >= LEXICAL_MIN and negation == negated
        for source, negation in zip(index.stems, index.negated, strict=True)
    )


def _echoes(stems: Sequence[str], index: _Index) -> bool:
    mine = set(stems)
    shared = len(mine & index.framing)
    return shared >= ECHO_STEMS and shared / len(mine) >= ECHO_MIN


def verify_text(text: str, grounds: Grounds) -> Verifier:
    """A whole text through the same check (the daily report's summary): the verifier, its
    ``text`` what may be shown and its ``dropped`` what may not."""
    verifier = Verifier(grounds, lambda _text: None)
    verifier.feed(text)
    verifier.finish()
    return verifier


def dropped_sentence(n: int) -> str:
    """The one line that tells the person how many of the model's sentences were left out."""
    return ngettext(
        "{n} sentence of the model rests on nothing I know: I do not show it.",
        "{n} sentences of the model rest on nothing I know: I do not show them.",
        n,
    )


def loop_start(text: str) -> int | None:
    """Where the repetition that ``text`` ends in began (its first copy kept), or None."""
    n = len(text)
    for period in _PERIODS:
        copies = 3 if period < _LONG else 2
        if copies * period > n:
            break
        unit = text[n - period :]
        if any(c.isalpha() for c in unit) and all(
            text[n - (k + 1) * period : n - k * period] == unit for k in range(1, copies)
        ):
            return n - (copies - 1) * period
    lines = text.split("\n")
    if len(lines) > _SAME_LINES:
        last = _line_key(lines[-2])  # the last complete line
        if len(last) >= 8:
            same = [i for i, line in enumerate(lines[:-1]) if _line_key(line) == last]
            if len(same) >= _SAME_LINES:
                return len("\n".join(lines[: same[1]]))
    return None


def _line_key(line: str) -> str:
    return " ".join(re.sub(r"[\d\W_]+", " ", line.lower()).split())


def grounds_of(
    items: Iterable[ContextItem],
    *,
    message: str,
    extra: Sequence[str] = (),
    framing: Sequence[str] = (),
    earlier: Iterable[str] = (),
) -> Grounds:
    """The grounds of a chat answer: each item handed (its text, day and source), the message,
    and ``extra`` (the persona)."""
    sources: list[str] = []
    names: set[str] = set()
    for item in items:
        source = item.get("source", "")
        day = item.get("created_at", "")[:10]
        sources.append(f"{item.get('content', '')} {day} {source}")
        if source:
            names.add(source)
    return Grounds(
        sources=tuple(sources),
        names=frozenset(names),
        message=message,
        about_alma=tuple(extra),
        framing=tuple(framing),
        earlier=frozenset(earlier),
    )
