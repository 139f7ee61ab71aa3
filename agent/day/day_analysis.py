"""The daily analysis: the facts of one day, extractive, and the report made from them.

The facts come from what the day left in ``logs/`` (read through the detectors' safe reader):
the chat log ``logs/YYYY-MM-DD.md`` gives the hours of activity (first and last turn), the
topics (the person's hashtags), the projects (folders of ``user/`` the person named, words like
"proyectoX", and the day's memories' projects) and the promises (the ``pending_task`` rule);
the script logs give the day's failures, by signature. ALMA's own record (suggestions, actions,
memory growth) is passed in.

With a model loaded, :func:`summarize` asks it for a few sentences from these facts alone, and
keeps them only if every project, count and hour they state is among the facts
(:func:`summary_problem`); otherwise, or without a model, the report is the extractive one.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TypedDict

from actions.scan import local_time
from actions.tree import Tree
from agent.detectors.failures import failures
from agent.detectors.logread import TAIL_BYTES, list_logs, read_text
from agent.detectors.logs import detect_logs
from agent.detectors.pending import is_promise, sentences
from agent.voice.model import Complete
from agent.voice.verify import Grounds, verify_text
from policies import kinds
from policies.config import Policy
from policies.i18n import N_, _, language, ngettext, process_language
from policies.results import Action, Suggestion
from policies.text import clean_tag, hashtags
from state.chatlog import MAX_DAY_BYTES, Paragraph, parse

_PROJECT_WORD = re.compile(r"\b((?:proyecto|project)[\w-]+)", re.IGNORECASE)
_HOURS_LATE = 23
MAX_FOLDERS = 500
log = logging.getLogger("alma.agent")


class Failure(TypedDict):
    """A script's failure on the day: its log, how many times, an example and its line."""

    log: str
    count: int
    example: str
    line: int


@dataclass
class DayFacts:
    day: date
    first: str = ""  # HH:MM of the first turn
    last: str = ""
    person_turns: int = 0
    topics: list[str] = field(default_factory=list)  # hashtags, most used first
    projects: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    promises: list[dict[str, str]] = field(default_factory=list)  # text, where
    folders: list[str] = field(default_factory=list)  # user/'s folders: what could be named
    #: What returns day after day, as of the day's end: a script failing night after night, a
    #: mood going down, a routine done by hand (the log detectors' titles)
    trends: list[str] = field(default_factory=list)


def _user_folders(tree: Tree) -> list[str]:
    """Names of the folders in user/ and one level below (the person's projects, likely), at
    most :data:`MAX_FOLDERS`: each is looked for in the day's text."""
    return [parts[-1] for parts in tree.folders(("user",), 2, MAX_FOLDERS)]


def turn_span(paragraphs: Sequence[Paragraph]) -> tuple[Paragraph, Paragraph] | None:
    """A day's first and last timed turns: its hours of activity (the report's, the panel's)."""
    turns = [p for p in paragraphs if p.kind == "turn" and p.seconds is not None]
    if not turns:
        return None
    return min(turns, key=lambda p: p.seconds or 0), max(turns, key=lambda p: p.seconds or 0)


def day_facts(
    root: Path, day: date, *, memory_projects: Sequence[str] = (), policy: Policy | None = None
) -> DayFacts:
    facts = DayFacts(day)
    now = time.time()
    end = datetime.combine(day + timedelta(days=1), datetime.min.time()).timestamp()
    found = detect_logs(root, policy or Policy(), min(now, end))
    facts.trends = [f.title for f in found if kinds.of(f.kind).trends]
    paragraphs: list[tuple[str, Paragraph]] = []
    with Tree(root) as tree:
        logs = list_logs(tree, now)
        for d, f in logs.chats:
            if d != day:
                continue
            read = read_text(tree, f, limit=MAX_DAY_BYTES, tail=False)
            if read is not None:
                paragraphs += [(f.path, p) for p in parse(read[0])]
        for f in logs.scripts:
            read = read_text(tree, f, limit=TAIL_BYTES, tail=True)
            if read is None:
                continue
            text, first = read
            when = local_time(f.identity.mtime_ns / 1e9)  # undated lines: no day if no date
            fallback = date.min if when is None else when.date()
            seen: dict[str, Failure] = {}
            for sig, d, number, raw in failures(text, first, fallback):
                if d != day:
                    continue
                entry = seen.setdefault(sig, {"log": f.path, "count": 0, "example": raw, "line": 0})
                entry["count"] += 1
                entry["line"] = number
            facts.failures += sorted(seen.values(), key=lambda e: -e["count"])
        folders = _user_folders(tree)
    span = turn_span([p for _path, p in paragraphs])
    if span is not None:
        facts.first, facts.last = span[0].clock, span[1].clock
    person = [(path, p) for path, p in paragraphs if p.by_person]
    facts.person_turns = len({p.turn for _path, p in person if p.kind == "turn"})
    text = "\n".join(p.text for _path, p in person)
    facts.topics = [t for t, _count in Counter(clean_tag(t) for t in hashtags(text)).most_common()]
    projects = dict.fromkeys(memory_projects)
    lowered = text.lower()
    for name in folders:
        if re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered):
            projects[name] = None
    for word in _PROJECT_WORD.findall(text):
        if word.lower() not in {p.lower() for p in projects}:
            projects[word] = None
    facts.projects = [p for p in projects if p]
    facts.folders = folders
    for path, p in person:
        for sentence, offset in sentences(p.text):
            if is_promise(sentence):
                facts.promises.append({"text": sentence, "where": f"{path}:{p.line + offset}"})
    return facts


_STATUS = {
    "pending": N_("pending"),
    "accepted": N_("accepted"),
    "executed": N_("accepted and done"),
    "rejected": N_("rejected"),
    "failed": N_("failed"),
    "expired": N_("expired"),
}


def render(
    facts: DayFacts,
    *,
    suggestions: Sequence[Suggestion],
    actions: Sequence[Action],
    memories: dict[str, int] | None,
    summary: str | None = None,
) -> str:
    """The report of the day, as markdown, in the daemon's language: it is a file the person
    reads later, whichever request happened to write it (policies.i18n.process_language)."""
    with language(process_language()):
        return _render(facts, suggestions, actions, memories, summary)


def _render(
    facts: DayFacts,
    suggestions: Sequence[Suggestion],
    actions: Sequence[Action],
    memories: dict[str, int] | None,
    summary: str | None,
) -> str:
    day = facts.day.isoformat()
    out = [_("# Analysis of the day · {day}", day=day), ""]
    if summary:
        out += [
            summary.strip(),
            "",
            _("_Summary written by the model and checked against the facts below._"),
            "",
        ]
    out += [_("## The day"), ""]
    if facts.person_turns:
        late = facts.last[:2].isdigit() and int(facts.last[:2]) >= _HOURS_LATE
        line = ngettext(
            "- Activity from {first} to {last}, {n} message of yours",
            "- Activity from {first} to {last}, {n} messages of yours",
            facts.person_turns,
            first=facts.first,
            last=facts.last,
        )
        out.append(line + (_(" (until late)") if late else ""))
    else:
        out.append(_("- No conversation was logged that day."))
    if facts.projects:
        out.append(_("- Projects: {names}", names=", ".join(facts.projects)))
    if facts.topics:
        out.append(_("- Topics: {names}", names=", ".join("#" + t for t in facts.topics)))
    out += ["", _("## Failures"), ""]
    if facts.failures:
        for f in facts.failures:
            where = f"{f['log']}:{f['line']}" if f.get("line") else f["log"]
            out.append(
                _(
                    "- {count} × in {where}: {example}",
                    count=f["count"],
                    where=where,
                    example=f["example"],
                )
            )
    else:
        out.append(_("- No failure in the scripts' logs."))
    out += ["", _("## Across the last days"), ""]
    if facts.trends:
        out += [f"- {title}" for title in facts.trends]
    else:
        out.append(_("- Nothing that returns day after day."))
    out += ["", _("## Promises"), ""]
    if facts.promises:
        out += [f"- {p['text']} ({p['where']})" for p in facts.promises]
    else:
        out.append(_("- None."))
    out += ["", _("## What ALMA did"), ""]
    if suggestions:
        for s in suggestions:
            known = _STATUS.get(str(s["status"]))
            status = _(known) if known else str(s["status"])
            out.append(
                _(
                    "- Suggestion #{id} ({kind}, {status}): {title}",
                    id=s["id"],
                    kind=s["kind"],
                    status=status,
                    title=s["title"],
                )
            )
    else:
        out.append(_("- No new suggestion."))
    for a in actions:
        if a.get("undoes"):
            out.append(_("- action {id} undid action {undone}", id=a["id"], undone=a["undoes"]))
        elif a.get("status") == "undone":
            out.append(_("- action {id} ({kind}), undone since", id=a["id"], kind=a["kind"]))
        elif not a.get("undoable"):  # a record (a backup taken): nothing an undo changes
            who = _("on its own") if a.get("auto") else _("accepted by you")
            out.append(_("- action {id} ({kind}, {who})", id=a["id"], kind=a["kind"], who=who))
        elif a.get("auto"):
            out.append(
                _(
                    "- action {id} ({kind}, on its own); `alma-ctl undo {id}` undoes it",
                    id=a["id"],
                    kind=a["kind"],
                )
            )
        else:
            out.append(
                _(
                    "- action {id} ({kind}, accepted by you); `alma-ctl undo {id}` undoes it",
                    id=a["id"],
                    kind=a["kind"],
                )
            )
    if memories is not None:
        out.append(
            ngettext(
                "- Memory: {n} new memory ({total} in all)",
                "- Memory: {n} new memories ({total} in all)",
                memories["added"],
                total=memories["total"],
            )
        )
    return "\n".join(out) + "\n"


#: What a model's summary may be: a few sentences (the facts below it say the rest).
SUMMARY_MAX_TOKENS = 220
SUMMARY_MAX_CHARS = 1200
_SYSTEM = (
    "Eres ALMA. Resume en español, en dos a cuatro frases y en segunda persona, el día de la "
    "persona a partir de estos hechos y de nada más. No inventes proyectos, cifras ni horas: "
    "usa solo los que aparecen en los hechos. Sin listas ni títulos."
)
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
#: A number as a summary may write it: digits with thousands separators or a decimal part
#: (``1.500``, ``2,5``), glued to letters or not (``30min``, ``3h``): each is checked.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_FILE = re.compile(r"[\w.-]+\.(?:sh|py|pl|rb|js|ts|php|bash|ps1|log)\b")
_PATH = re.compile(r"\buser/[\w./-]+")
#: Spanish number words a summary may use for a count, up to the millions; ``un``, ``una``
#: and ``uno`` count only inside a number (``treinta y un``, ``un millón``): alone they are
#: articles far more often than counts.
_UNITS = ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"]
_TEENS = ["diez", "once", "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete"]
_TEENS += ["dieciocho", "diecinueve"]
_TWENTIES = ["veinte", "veintiuno", "veintidós", "veintitrés", "veinticuatro", "veinticinco"]
_TWENTIES += ["veintiséis", "veintisiete", "veintiocho", "veintinueve"]
_TENS = ["treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"]
_HUNDREDS = ["ciento", "doscientos", "trescientos", "cuatrocientos", "quinientos"]
_HUNDREDS += ["seiscientos", "setecientos", "ochocientos", "novecientos"]
_WORDS: dict[str, int] = {
    **{w: n for n, w in enumerate(_UNITS)},
    **{w: 10 + n for n, w in enumerate(_TEENS)},
    **{w: 20 + n for n, w in enumerate(_TWENTIES)},
    **{w: 30 + 10 * n for n, w in enumerate(_TENS)},
    **{w: 100 * (n + 1) for n, w in enumerate(_HUNDREDS)},
    **{w.replace("ientos", "ientas"): 100 * (n + 2) for n, w in enumerate(_HUNDREDS[1:])},
    **{"un": 1, "una": 1, "veintiún": 21, "veintiuna": 21, "cien": 100, "quinientas": 500},
}
_WORDS |= {w.translate(str.maketrans("áéíóú", "aeiou")): n for w, n in _WORDS.items()}
#: English ones too: the embedded model is mostly English and, told to answer in Spanish, may
#: not. Left out: "once" (Spanish 11) and "ten" (Spanish "ten en cuenta").
_EN_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_EN_TEENS = ["eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"]
_EN_TEENS += ["eighteen", "nineteen"]
_EN_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORDS |= {
    **{w: n for n, w in enumerate(_EN_UNITS)},
    **{w: 11 + n for n, w in enumerate(_EN_TEENS)},
    **{w: 20 + 10 * n for n, w in enumerate(_EN_TENS)},
    **{"a": 1, "twice": 2, "thrice": 3},
}
_SCALES = {"mil": 1000, "millón": 10**6, "millon": 10**6, "millones": 10**6}
_SCALES |= {"hundred": 100, "thousand": 1000, "million": 10**6, "millions": 10**6}
_ARTICLES = {"un", "una", "uno", "a", "one"}
_TENS_VALUES = {30, 40, 50, 60, 70, 80, 90}
_EN_TENS_VALUES = {20 + 10 * n for n in range(len(_EN_TENS))}  # "twenty-three": no "y"
_TOKEN = re.compile(r"\w+")


def _number_words(text: str) -> list[tuple[str, int]]:
    """The numbers written in words in ``text`` (Spanish, and English), each as (its words, its
    value): ``treinta y cuatro`` is 34, ``doscientos cuatro`` 204, ``dos mil`` 2000,
    ``twenty-three`` 23, ``two hundred four`` 204; ``dos tres`` is two numbers."""
    tokens = [t.casefold() for t in _TOKEN.findall(text)]
    found: list[tuple[str, int]] = []
    i = 0
    while i < len(tokens):
        word = tokens[i]
        scaled = i + 1 < len(tokens) and tokens[i + 1] in _SCALES
        if not (word in _SCALES or (word in _WORDS and (word not in _ARTICLES or scaled))):
            i += 1
            continue
        words: list[str] = []
        total = current = 0
        last: int | None = None  # the value of the run's last word; 0 after a scale
        while i < len(tokens):
            word, after_y = tokens[i], False
            if word == "y" and last in _TENS_VALUES and i + 1 < len(tokens):
                word, after_y = tokens[i + 1], True
                if not 0 < _WORDS.get(word, 0) < 10:
                    break
            if word in _SCALES:
                current = (current or 1) * _SCALES[word]
                total, current, last = total + current, 0, 0
            elif word in _WORDS and (
                last is None
                or after_y
                or last == 0
                or (last >= 100 and _WORDS[word] < 100)
                or (last in _EN_TENS_VALUES and 0 < _WORDS[word] < 10 and tokens[i - 1] in _EN_TENS)
            ):
                current += _WORDS[word]
                last = _WORDS[word]
            else:
                break
            words.append(word)
            i += 2 if after_y else 1
        found.append((" ".join(words), total + current))
    return found


def _number_value(written: str) -> int | None:
    """``written`` (digits, perhaps with separators) as a whole number: ``1.500`` and ``1,500``
    are 1500; a decimal (``2,5``) or anything else is None."""
    head, *groups = re.split(r"[.,]", written)
    if not groups:
        return int(head)
    one_separator = len(set(re.findall(r"[.,]", written))) == 1
    if one_separator and len(head) <= 3 and all(len(g) == 3 for g in groups):
        return int(head + "".join(groups))
    return None


def _fact_numbers(facts: DayFacts) -> set[int]:
    """Every number the facts state: counts, the day's date, and those inside the quoted lines."""
    counts = [
        facts.person_turns,
        len(facts.projects),
        len(facts.topics),
        len(facts.promises),
        len(facts.failures),
        sum(int(f["count"]) for f in facts.failures),
        *(int(f["count"]) for f in facts.failures),
        facts.day.year,
        facts.day.month,
        facts.day.day,
    ]
    for clock in (facts.first, facts.last):
        if clock:
            counts += [int(part) for part in clock.split(":")]
    for written in _NUMBER.findall(" ".join(_stated(facts))):
        value = _number_value(written)
        counts += [int(n) for n in re.findall(r"\d+", written)] + ([] if value is None else [value])
    return set(counts)


def _stated(facts: DayFacts) -> list[str]:
    """The facts' own text: the quoted lines, and the names (a number in ``proyecto2`` or
    ``run2.sh`` is a fact when the summary names them)."""
    return [
        *(str(f["example"]) for f in facts.failures),
        *(str(f["log"]) for f in facts.failures),
        *(p["text"] for p in facts.promises),
        *facts.projects,
        *facts.topics,
        *facts.folders,
    ]


def summary_problem(summary: str, facts: DayFacts) -> str | None:
    """Why a model's summary may not stand in the report (None when it may): it may say less
    than the facts, never something else. Every hour, number (digits or a Spanish word),
    project or folder, path and script or log it names must be among the day's facts."""
    if not summary.strip():
        return "it is empty"
    if len(summary) > SUMMARY_MAX_CHARS:
        return f"it is longer than {SUMMARY_MAX_CHARS} characters"
    clocks = {c for c in (facts.first, facts.last) if c}
    for h, m in _TIME.findall(summary):
        if f"{int(h):02d}:{m}" not in clocks:
            return f"it names the hour {h}:{m}, which is not the day's first or last turn"
    known = _fact_numbers(facts)
    literal = set(_NUMBER.findall(" ".join(_stated(facts))))  # a decimal quoted as it was
    for written in _NUMBER.findall(_TIME.sub(" ", summary)):
        value = _number_value(written)
        if written not in literal and (value is None or value not in known):
            return f"it states {written}, which no fact of the day has"
    for words, value in _number_words(summary):
        if value not in known:
            return f"it states «{words}» ({value}), which no count of the day is"
    projects = {p.casefold() for p in facts.projects}
    lowered = summary.casefold()
    for name in [*facts.folders, *_PROJECT_WORD.findall(summary)]:
        key = name.casefold()
        if key not in projects and re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", lowered):
            return f"it names {name}, which is not among the day's projects"
    for path in _PATH.findall(summary):
        parts = path.rstrip("./").split("/")[1:]
        if not any(part.casefold() in projects for part in parts):
            return f"it names {path.rstrip('.')}, which is not among the day's projects"
    stated = " ".join(
        [str(f["log"]) + " " + str(f["example"]) for f in facts.failures]
        + [p["text"] for p in facts.promises]
    ).casefold()
    for name in _FILE.findall(summary):
        if name.casefold() not in stated:
            return f"it names {name}, which no failure or promise of the day mentions"
    return None


def check_summary(summary: str, facts: DayFacts) -> bool:
    return summary_problem(summary, facts) is None


def _facts_for_model(facts: DayFacts) -> str:
    return json.dumps(
        {
            "día": facts.day.isoformat(),
            "primer_mensaje": facts.first or None,
            "último_mensaje": facts.last or None,
            "mensajes_tuyos": facts.person_turns,
            "proyectos": facts.projects,
            "temas": facts.topics,
            "fallos": [
                {"registro": f["log"], "veces": f["count"], "línea": f["example"]}
                for f in facts.failures
            ],
            "promesas": [p["text"] for p in facts.promises],
        },
        ensure_ascii=False,
    )


def summarize(facts: DayFacts, complete: Complete | None, *, timeout_s: float) -> str | None:
    """The model's summary of the day, if a model is loaded and what it wrote holds against
    the facts; None otherwise (the report is then the extractive one)."""
    if complete is None or (not facts.person_turns and not facts.failures):
        return None
    messages = [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": _facts_for_model(facts)},
    ]
    text = complete(messages, max_tokens=SUMMARY_MAX_TOKENS, timeout_s=timeout_s)
    if text is None:
        return None
    # The one check of a model's text; a summary that says one thing no fact holds is not
    # trusted for the rest (the report is then the extractive one).
    checked = verify_text(text, Grounds(sources=(_facts_for_model(facts),), wording=False))
    for why, sentence in checked.dropped:
        log.info("the summary of %s says (%s): %r", facts.day.isoformat(), why, sentence)
    text = text.strip()
    problem = summary_problem(text, facts) or (
        f"{len(checked.dropped)} of its sentences rest on no fact" if checked.dropped else None
    )
    if problem is not None:
        log.info("the model's summary of %s is not used: %s", facts.day.isoformat(), problem)
        return None
    return text
