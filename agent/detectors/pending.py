"""``pending_task``: something the person promised in a chat log and did not say was done.

Rule-based and Spanish-aware. Text is compared folded (lower case, accents removed: "Mañana"
and "manana" match), sentence by sentence; a sentence made only of hashtags joins the one
before it ("... sueltas. #pendiente").

A promise is a sentence of the person's (a ``usuario`` turn or a hand-written note) that:

- carries ``#pendiente`` or ``#todo``, or ``TODO:``; or
- starts with "mañana" (not "esta mañana"); or
- says "tengo que", "tendré que", "tenemos que", "tengo pendiente", "me comprometo a",
  "no me dejes olvidar", "recuérdame", "recordarme", "no olvidar";

and is not a question, nor a rule to keep ("#principio", "recuérdame que nunca/siempre ...":
those are principles, which memory handles, not tasks).

It counts as done when a later sentence (later in that day or on a later day) shares at least
two of its keywords (one if it has just one), and says it is done: "hecho", "terminado",
"terminé", "listo", "ya está", "completado", "acabé", "resuelto", "arreglado", "solucionado",
``#hecho``, ``#done``, or starts with "ya " ("Ya ordené la carpeta"). A later sentence that
shares the keywords without saying so ("la carpeta sigue igual") is shown as evidence.
Keywords are words of 4+ letters that are not common words, cut to 5 letters so "ordeno" and
"ordené" match.

Only promises at least a day old (a "mañana" is not due the day it is said) and at most
:data:`MAX_AGE_DAYS` old are reported. The fingerprint is (log path, the folded sentence).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from actions.planners.base import PlanResult, cap_evidence, fingerprint
from agent.chatlog import Paragraph
from policies.i18n import _

KIND = "pending_task"
MAX_AGE_DAYS = 30

_HASHTAG = re.compile(r"#[\w-]+")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_TAG_TASK = re.compile(r"(?:^|\s)#(?:pendiente|todo)\b|\btodo:")
_START_TOMORROW = re.compile(r"^manana\b")
_PROMISE = re.compile(
    r"\b(?:tengo|tendre|tenemos|tendremos) que\b|\btengo pendiente\b|\bme comprometo a\b"
    r"|\bno me dejes olvidar\b|\brecuerdame\b|\brecordarme\b|\bno olvidar\b"
)
_RULE = re.compile(r"#principio\b|\bque (?:nunca|siempre|jamas)\b|^(?:nunca|siempre|jamas)\b")
_DONE = re.compile(
    r"\b(?:hech[oa]s?|terminad[oa]s?|termine|list[oa]s?|ya esta|completad[oa]s?|complete"
    r"|acabe|acabad[oa]s?|resuelt[oa]s?|arreglad[oa]s?|arregle|solucionad[oa]s?|solucione)\b"
    r"|#hecho\b|#done\b|^ya (?!no\b)"
)
_NOT_DONE = re.compile(r"\b(?:todavia no|aun no|sigue igual|siguen igual|sin hacer|no he)\b")
_WORD = re.compile(r"[a-z0-9ñ]+")
_STOP_WORDS = """
    manana tengo tendre tenemos tendremos pendiente recuerdame recordarme comprometo olvidar
    dejes hacer hago haga esta este esto estos estas eso esos esas aquel para pero como cuando
    donde porque todo toda todos todas tiene tienes tener sobre entre desde hasta otra otro
    otras otros mucho mucha muy mas menos algo nada cada hace hacia luego ahora antes despues
    tambien solo sola bien quiero quieres voy vamos sera seria estoy estaba estan estamos
"""
_STOP = frozenset(_STOP_WORDS.split())
_LEAD = re.compile(r"^[¡\s*-]+")


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


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
        if out and not _HASHTAG.sub("", part).strip():
            prev, prev_off = out[-1]
            out[-1] = (f"{prev} {part}", prev_off)
        else:
            out.append((part, offset))
    yield from out


def keywords(folded: str) -> set[str]:
    words = _WORD.findall(_HASHTAG.sub(" ", folded))
    return {w[:5] for w in words if len(w) >= 4 and w not in _STOP and not w.isdigit()}


def is_promise(sentence: str) -> bool:
    text = sentence.strip()
    if text.startswith("¿") or text.endswith("?"):
        return False
    folded = _LEAD.sub("", fold(text))
    if _RULE.search(folded):
        return False
    return bool(
        _TAG_TASK.search(folded) or _START_TOMORROW.match(folded) or _PROMISE.search(folded)
    )


def says_done(folded: str) -> bool:
    return bool(_DONE.search(folded)) and not _NOT_DONE.search(folded)


@dataclass(frozen=True)
class _Said:
    day: date
    path: str
    line: int
    clock: str
    text: str
    folded: str


def _person_sentences(days: Sequence[tuple[date, str, list[Paragraph]]]) -> list[_Said]:
    out: list[_Said] = []
    for day, path, entries in sorted(days, key=lambda d: (d[0], d[1])):
        for e in entries:
            if not e.by_person:
                continue
            for sentence, offset in sentences(e.text):
                out.append(_Said(day, path, e.line + offset, e.clock, sentence, fold(sentence)))
    return out


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
        task = _HASHTAG.sub("", s.text).strip(" .,;")
        key = " ".join(_WORD.findall(fold(task)))
        if not key or key in seen:
            continue
        seen.add(key)
        words = keywords(s.folded)
        need = min(2, len(words))
        later = [t for t in said[i + 1 :] if need and len(words & keywords(t.folded)) >= need]
        if any(says_done(t.folded) for t in later):
            continue
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
