"""The daily analysis: the facts of one day, extractive, and the report made from them.

The facts come from what the day left in ``logs/`` (read through the detectors' safe reader):
the chat log ``logs/YYYY-MM-DD.md`` gives the hours of activity (first and last turn), the
topics (the person's hashtags), the projects (folders of ``user/`` the person named, words like
"proyectoX", and the day's memories' projects) and the promises (the ``pending_task`` rule);
the script logs give the day's failures, by signature. ALMA's own record (suggestions, actions,
memory growth) is passed in. A model's summary, when there is one, is only accepted if every
project, hour and failure it names is among these facts (:func:`check_summary`).
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from actions.tree import Tree
from agent.chatlog import MAX_DAY_BYTES, Paragraph, parse
from agent.detectors.failures import failures
from agent.detectors.logread import TAIL_BYTES, list_logs, read_text
from agent.detectors.pending import is_promise, sentences
from policies.errors import RefusedError

_HASHTAG = re.compile(r"(?<![\w#])#([\w-]+)")
_PROJECT_WORD = re.compile(r"\b((?:proyecto|project)[\w-]+)", re.IGNORECASE)
_HOURS_LATE = 23


@dataclass
class DayFacts:
    day: date
    first: str = ""  # HH:MM of the first turn
    last: str = ""
    person_turns: int = 0
    topics: list[str] = field(default_factory=list)  # hashtags, most used first
    projects: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)  # log, count, example, line
    promises: list[dict[str, str]] = field(default_factory=list)  # text, where


def _subdirs(tree: Tree, parts: tuple[str, ...]) -> list[str]:
    try:
        fd = tree.dir(parts)
    except (OSError, RefusedError):
        return []
    with os.scandir(os.dup(fd)) as entries:  # scandir closes the fd it is given
        return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))


def _user_folders(tree: Tree) -> list[str]:
    """Names of the folders in user/ and one level below (the person's projects, likely)."""
    names: list[str] = []
    for name in _subdirs(tree, ("user",)):
        names += [name, *_subdirs(tree, ("user", name))]
    return names


def day_facts(root: Path, day: date, *, memory_projects: Sequence[str] = ()) -> DayFacts:
    facts = DayFacts(day)
    now = time.time()
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
            fallback = date.fromtimestamp(f.identity.mtime_ns / 1e9)
            seen: dict[str, dict[str, Any]] = {}
            for sig, d, number, raw in failures(text, first, fallback):
                if d != day:
                    continue
                entry = seen.setdefault(sig, {"log": f.path, "count": 0, "example": raw})
                entry["count"] += 1
                entry["line"] = number
            facts.failures += sorted(seen.values(), key=lambda e: -int(e["count"]))
        folders = _user_folders(tree)
    turns = [p for _, p in paragraphs if p.kind == "turn" and p.seconds is not None]
    if turns:
        facts.first = min(turns, key=lambda p: p.seconds or 0).clock
        facts.last = max(turns, key=lambda p: p.seconds or 0).clock
    person = [(path, p) for path, p in paragraphs if p.by_person]
    facts.person_turns = len({p.turn for _, p in person if p.kind == "turn"})
    text = "\n".join(p.text for _, p in person)
    facts.topics = [t for t, _ in Counter(t.lower() for t in _HASHTAG.findall(text)).most_common()]
    projects = dict.fromkeys(memory_projects)
    lowered = text.lower()
    for name in folders:
        if re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered):
            projects[name] = None
    for word in _PROJECT_WORD.findall(text):
        if word.lower() not in {p.lower() for p in projects}:
            projects[word] = None
    facts.projects = [p for p in projects if p]
    for path, p in person:
        for sentence, offset in sentences(p.text):
            if is_promise(sentence):
                facts.promises.append({"text": sentence, "where": f"{path}:{p.line + offset}"})
    return facts


_STATUS = {
    "pending": "pendiente",
    "accepted": "aceptada",
    "executed": "aceptada y hecha",
    "rejected": "rechazada",
    "failed": "falló",
    "expired": "caducada",
}


def render(
    facts: DayFacts,
    *,
    suggestions: Sequence[dict[str, Any]],
    actions: Sequence[dict[str, Any]],
    memories: dict[str, int] | None,
    summary: str | None = None,
) -> str:
    """The report of the day, in Spanish, as markdown."""
    day = facts.day.isoformat()
    out = [f"# Análisis del día · {day}", ""]
    if summary:
        out += [summary.strip(), ""]
    out += ["## El día", ""]
    if facts.person_turns:
        late = facts.last[:2].isdigit() and int(facts.last[:2]) >= _HOURS_LATE
        span = f"Actividad de {facts.first} a {facts.last}"
        out.append(
            f"- {span}, {facts.person_turns} mensajes tuyos" + (" (hasta tarde)" if late else "")
        )
    else:
        out.append("- No hay conversaciones registradas ese día.")
    if facts.projects:
        out.append(f"- Proyectos: {', '.join(facts.projects)}")
    if facts.topics:
        out.append(f"- Temas: {', '.join('#' + t for t in facts.topics)}")
    out += ["", "## Fallos", ""]
    if facts.failures:
        for f in facts.failures:
            where = f"{f['log']}:{f['line']}" if f.get("line") else f["log"]
            out.append(f"- {f['count']} × en {where}: {f['example']}")
    else:
        out.append("- Ningún fallo en los registros de scripts.")
    out += ["", "## Promesas", ""]
    if facts.promises:
        out += [f"- {p['text']} ({p['where']})" for p in facts.promises]
    else:
        out.append("- Ninguna.")
    out += ["", "## Lo que hizo ALMA", ""]
    if suggestions:
        for s in suggestions:
            status = _STATUS.get(str(s["status"]), str(s["status"]))
            out.append(f"- Sugerencia #{s['id']} ({s['kind']}, {status}): {s['title']}")
    else:
        out.append("- Ninguna sugerencia nueva.")
    for a in actions:
        who = "por su cuenta" if a.get("auto") else "aceptada por ti"
        if a.get("undoes"):
            out.append(f"- acción {a['id']} deshizo la {a['undoes']}")
        else:
            out.append(
                f"- acción {a['id']} ({a['kind']}, {who}); `alma-ctl undo {a['id']}` la deshace"
            )
    if memories is not None:
        out.append(
            f"- Memoria: {memories['added']} recuerdos nuevos ({memories['total']} en total)"
        )
    return "\n".join(out) + "\n"


def check_summary(summary: str, facts: DayFacts) -> bool:
    """A model's summary is kept only if every time it names is one of the day's and it names
    no project the facts do not have (it may say less, never something else)."""
    times = set(re.findall(r"\b\d{1,2}:\d{2}\b", summary))
    if not times <= {facts.first, facts.last}:
        return False
    named = {w.lower() for w in _PROJECT_WORD.findall(summary)}
    return named <= {p.lower() for p in facts.projects}
