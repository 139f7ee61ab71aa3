"""``routine``: the same manual copy on several days, seen in the files, told in the chat, or both.

Either kind of evidence is enough on its own, on at least :data:`MIN_DAYS` distinct days; both
together make the finding's evidence stronger (it lists both):

- the files: in dated folders side by side (``entregas/2026-11-23/``, ``entregas/2026-11-24/``...)
  one file under one name, or one content under other names, with its original outside any
  dated folder; or a file whose name carries the day's date (``pedidos_2026-11-23.csv``),
  found on that many days; or, in one folder, a document or data file whose name carries the
  day it arrived on, on that many days (a checklist to review: where it comes from is unseen);
- the words: the person's own lines (never ALMA's) that tell, in any phrasing and either
  language, that they moved files by hand (read by meaning: :mod:`agent.detectors.told`), about
  one folder of the tree they name (matched exactly, case and accents folded) or about the
  files of a routine the files show; a told line naming no folder joins the task of another
  day it says the same as.

The finding proposes a plan the person can accept: ``mkdir`` of ``scripts/`` in the zone when
missing, and ``create`` of a short POSIX ``sh`` script there that makes today's dated folder
and copies the files in, never over a file that is there: the originals the files show, today's
file of a dated name, and any file named on its command line. Accepting only writes the
script, for the person to read; ALMA never runs it. The exact command is in the evidence. The
fingerprint is the folder, the file names and the plan, so the same routine is proposed once
however many days it goes on.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from actions.ops import Create, Mkdir, Op
from actions.planners.base import PlanResult, cap_evidence, fingerprint
from actions.scan import TreeScan, scan_tree
from actions.tree import Tree
from agent.detectors import told
from agent.detectors.dated import (
    MIN_DAYS,
    Arrival,
    Routine,
    arrivals,
    dated,
    dated_folders,
    routines,
    shown,
)
from agent.detectors.files import scan_zones
from policies.config import Policy
from policies.decide import path_zone_problem
from policies.errors import RefusedError
from policies.i18n import _, language, process_language
from policies.text import loose_fold
from state.chatlog import Paragraph

KIND = "routine"
SCRIPTS = "scripts"
#: A folder's name shorter than this (folded) is not looked for in the person's words.
MIN_NAME = 4

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class _Line:
    """One of the person's lines in a chat log."""

    day: date
    where: str  # log path:line
    text: str
    words: tuple[str, ...]  # folded, in order


def person_lines(days: Sequence[tuple[date, str, list[Paragraph]]]) -> list[_Line]:
    """The person's own lines (never ALMA's), oldest first."""
    out: list[_Line] = []
    for day, path, paragraphs in sorted(days, key=lambda d: d[0]):
        for p in paragraphs:
            if not p.by_person:
                continue
            for offset, line in enumerate(p.text.splitlines()):
                shown = line.strip()
                if not shown:
                    continue
                shown = shown if len(shown) <= 120 else shown[:119] + "…"
                words = tuple(_WORD.findall(loose_fold(line)))
                out.append(_Line(day, f"{path}:{p.line + offset}", shown, words))
    return out


def _name_words(words: Iterable[str]) -> tuple[str, ...]:
    """Folded words as a name is matched: a final "s" of a word over 3 letters dropped, so
    that one report or many name one folder ("el informe" and "Informes", "scans" and "Scan")."""
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def _folders(zone: str, scan: TreeScan) -> dict[tuple[str, ...], str]:
    """The folders a person may name, by their folded words: never the zone itself, a dated
    folder or a short name; of two folders named alike, the one holding dated folders, then
    the one nearer the zone (two at one depth: neither)."""
    holds_dated = {d.base for f in scan.folders if (d := dated(f.folder)) is not None}
    ranked: dict[tuple[str, ...], list[tuple[int, int, str]]] = defaultdict(list)
    for f in scan.folders:
        folder = f.folder
        name = folder.rpartition("/")[2]
        words = tuple(_WORD.findall(loose_fold(name)))
        if folder == zone or dated(folder) is not None or len("".join(words)) < MIN_NAME:
            continue
        ranked[words].append((folder not in holds_dated, folder.count("/"), folder))
    out: dict[tuple[str, ...], str] = {}
    for words, choices in ranked.items():
        choices.sort()
        if len(choices) == 1 or choices[0][:2] != choices[1][:2]:
            out[words] = choices[0][2]
    return out


#: Before a folder's name, the words that make it where the files come from, not where they
#: go ("desde Descargas", "from exports"); "de" too, unless it follows the word for a folder
#: ("la carpeta de entregas" names the folder).
_FROM = frozenset({"desde", "from", "de", "del"})
_FOLDER_WORDS = frozenset(
    {"carpeta", "carpetas", "carpetita", "directorio", "folder", "subcarpeta"}
)


def _named(line: _Line, folders: dict[tuple[str, ...], str], *, loose: bool = False) -> str | None:
    """The folder of the tree the line names as where files go (its words, in order), the
    longest name first; ``loose``: one or many alike (:func:`_name_words`)."""
    best: tuple[int, str] | None = None
    words = line.words
    said = _name_words(words) if loose else words
    for name, folder in folders.items():
        n = len(name)
        wanted = _name_words(name) if loose else name
        for i in range(len(words) - n + 1):
            if said[i : i + n] != wanted:
                continue
            before = words[i - 1] if i else ""
            if before in _FROM and not (i >= 2 and words[i - 2] in _FOLDER_WORDS):
                continue  # where the files come from
            if best is None or n > best[0]:
                best = (n, folder)
    return None if best is None else best[1]


def _names_files(line: _Line, routine: Routine) -> bool:
    """The line names the folder the copies go to, a file, its stem or its type."""
    names: set[str] = set(_WORD.findall(loose_fold(routine.base.rpartition("/")[2])))
    for name in [*routine.copies, *(pre + post for pre, _f, post in routine.templates)]:
        stem, dot, ext = name.rpartition(".")
        names.update(_WORD.findall(loose_fold(stem if dot else name)))
        if dot:
            names.add(loose_fold(ext))
    return bool(set(line.words) & names)


#: Words that hold data, before a file's name ("la hoja de plazos", "the tracker sheet"), and
#: the words that send something into what follows ("a", "en", "into"): a file named after
#: either is where the task puts things, not what it copies ("copio ventas.csv a ...").
_HOLDERS = frozenset(
    {
        "hoja", "hojas", "excel", "tabla", "libro", "documento", "fichero", "archivo", "base",
        "planilla", "registro", "listado", "sheet", "spreadsheet", "workbook", "tracker",
        "table", "document", "file", "database", "log",
    }
)  # fmt: skip
_INTO = frozenset({"a", "al", "en", "into", "to", "in", "onto"})
_ARTICLES = frozenset(
    {"el", "la", "los", "las", "mi", "mis", "su", "sus", "the", "my", "our", "this", "that"}
)


def _files(scan: TreeScan) -> dict[tuple[str, ...], str]:
    """The files a person may name as where data goes, by the folded words of their stem
    without its numbers and codes ("plazos_2026.xlsx" is "plazos", "lecturas_3B.xlsx"
    "lecturas": a class, a version or a year is not said of the file): never a file in a dated folder or a
    short name; of files named alike in two folders, the shallower (two at one depth:
    neither)."""
    ranked: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for f in scan.files:
        stem = f.name.rpartition(".")[0] or f.name
        words = _name_words(
            w for w in _WORD.findall(loose_fold(stem)) if not any(c.isdigit() for c in w)
        )
        if dated(f.folder) is not None or len("".join(words)) < MIN_NAME:
            continue
        ranked[words].add(f.path)
    out: dict[tuple[str, ...], str] = {}
    for words, paths in ranked.items():
        choices = sorted((p.count("/"), p.rpartition("/")[0], p) for p in paths)
        if len({c[1] for c in choices if c[0] == choices[0][0]}) == 1:
            out[words] = choices[0][2]
    return out


def _named_file(line: _Line, files: dict[tuple[str, ...], str]) -> str | None:
    """The file of the tree the line names as where the task puts things."""
    words, said = line.words, _name_words(line.words)
    for name, path in sorted(files.items(), key=lambda item: -len(item[0])):
        n = len(name)
        for i in range(len(words) - n + 1):
            if said[i : i + n] != name:
                continue
            j = i - 1
            if j >= 1 and words[j] in {"de", "del", "of"} and words[j - 1] in _HOLDERS:
                return path  # "la hoja de plazos"
            while j >= 0 and words[j] in _ARTICLES:
                j -= 1
            if j >= 0 and (words[j] in _HOLDERS or words[j] in _INTO):
                return path  # "en plazos.xlsx", "the sheet plazos"
    return None


@dataclass
class _Task:
    """The lines that tell one task, and the folder or file of the tree they name as where it
    goes (None when they name only where things come from, or nothing)."""

    lines: list[_Line]
    into: str | None = None


def _told_tasks(
    zone: str,
    lines: Sequence[_Line],
    scan: TreeScan,
    routines: Sequence[Routine],
) -> dict[str, _Task]:
    """The lines that tell a task done by hand, by the folder they are about: the folder they
    name, else the routine whose files they name, else the folder of a file they name as where
    things go, else a folder they name in the singular or plural; a line naming none joins the task of another day it says the same as, and lines
    that name none and say the same as each other are a task of their own, about the folder
    they name as where things come from, else about the zone."""
    scores = told.scores([line.text for line in lines])
    if scores is None:
        return {}
    telling = [
        line
        for line, score in zip(lines, scores, strict=True)
        if score >= told.THRESHOLD and not told.others(line.text)
    ]
    folders, files = _folders(zone, scan), _files(scan)
    tasks: dict[str, _Task] = {}
    unnamed: list[_Line] = []
    for line in telling:
        folder = _named(line, folders)
        if folder is None:
            folder = next((r.base for r in routines if _names_files(line, r)), None)
        into = folder
        if folder is None and (into := _named_file(line, files)) is not None:
            folder = into.rpartition("/")[0]
        if folder is None:  # a folder named in the singular ("el informe" for Informes)
            folder = into = _named(line, folders, loose=True)
        if folder is None:
            unnamed.append(line)
            continue
        task = tasks.setdefault(folder, _Task([]))
        task.lines.append(line)
        if task.into is None or task.into == folder:  # a file named beats its folder
            task.into = into
    alone: list[list[_Line]] = []
    for line in unnamed:
        best = max(
            (
                (told.similarity(line.text, other.text), folder)
                for folder, task in tasks.items()
                for other in task.lines
                if other.day != line.day
            ),
            default=None,
        )
        if best is not None and best[0] >= told.SAME_TASK:
            tasks[best[1]].lines.append(line)
            continue
        # Said the same as a line of another day that named nothing either: one task.
        near = [
            group
            for group in alone
            if any(
                o.day != line.day and told.similarity(line.text, o.text) >= told.SAME_TASK
                for o in group
            )
        ]
        merged = [line, *(o for group in near for o in group)]
        alone = [group for group in alone if group not in near] + [merged]
    for group in alone:
        if len({line.day for line in group}) < MIN_DAYS:
            continue  # told on too few days to be a routine: no other line's days are added
        sources = [f for line in group if (f := _named_from(line, folders)) is not None]
        folder = max(sorted(set(sources)), key=sources.count) if sources else zone
        tasks.setdefault(folder, _Task([])).lines.extend(group)
    return tasks


def _named_from(line: _Line, folders: dict[tuple[str, ...], str]) -> str | None:
    """The folder of the tree the line names as where things come from ("desde Descargas")."""
    words, said = line.words, _name_words(line.words)
    for name, folder in sorted(folders.items(), key=lambda item: -len(item[0])):
        n = len(name)
        for i in range(1, len(words) - n + 1):
            if said[i : i + n] == _name_words(name) and words[i - 1] in _FROM:
                return folder
    return None


def _slug(text: str) -> str:
    return "-".join(_WORD.findall(loose_fold(text))) or "archivos"


def _today(pattern: tuple[str, str, str], before: str) -> str:
    """A shell word for today's name in ``pattern``, after ``before``."""
    pre, fmt, post = pattern
    return shlex.quote(before + pre) + f'"$(date +{fmt})"' + (shlex.quote(post) if post else "")


def _script(routine: Routine, script: str) -> bytes:
    base = routine.base + "/"
    lines = [
        "#!/bin/sh",
        "# " + _("Written by ALMA for you to read: it does what you did by hand every day."),
        "# "
        + _(
            "It creates today's folder in {folder} and copies these files into it,",
            folder=routine.base,
        ),
        "# " + _("and the files you name after the command,"),
        "# " + _("never over a file that is already there. ALMA never runs it."),
        "# " + _("To run it, from the ALMA folder: {command}", command=f"sh {script}"),
        "set -eu",
        'cd "$(dirname "$0")/' + "/".join([".."] * script.count("/")) + '"',
        f"dest={_today(routine.pattern, base)}",
        'mkdir -p "$dest"',
        "copy_in() {",
        '\tif [ ! -e "$1" ]; then',
        '\t\techo "' + _("Not found, not copied: {path}", path="$1") + '"',
        '\telif [ -e "$dest/$2" ]; then',
        '\t\techo "' + _("Already there, left as it is: {path}", path="$dest/$2") + '"',
        "\telse",
        '\t\tcp -p -- "$1" "$dest/$2"',
        '\t\techo "' + _("Copied: {src} -> {dst}", src="$1", dst="$dest/$2") + '"',
        "\tfi",
        "}",
    ]
    sources = routine.sources
    lines += [f"copy_in {shlex.quote(sources[n])} {shlex.quote(n)}" for n in sorted(sources)]
    for (pre, fmt, post), (folder, _days) in sorted(routine.templates.items()):
        if folder:
            name = _today(("", fmt, post), pre)
            lines.append(f"copy_in {_today((pre, fmt, post), folder + '/')} {name}")
    lines += ['for f in "$@"; do', '\tcopy_in "$f" "$(basename -- "$f")"', "done"]
    return ("\n".join(lines) + "\n").encode()


def _shape(plan: Sequence[Op]) -> list[str]:
    return [f"{op.op} {path}" for op in plan for path in op.write_paths()]


def detect_routine(
    tree: Tree,
    policy: Policy,
    days: Sequence[tuple[date, str, list[Paragraph]]],
    now: float,
) -> list[PlanResult]:
    """``days``: (day, log path, parsed paragraphs) of the chat logs read for the analysis."""
    lines = person_lines(days)
    if len({line.day for line in lines}) < MIN_DAYS:
        lines = []  # no task can be told on enough days: the embedder is not even loaded
    results: list[PlanResult] = []
    for zone, excluded in scan_zones(policy):
        try:
            scan = scan_tree(tree, zone, now=now, settle_seconds=None, exclude=excluded)
        except (FileNotFoundError, NotADirectoryError, RefusedError):
            continue
        found = {r.base: r for r in routines(tree, scan.files)}
        arrived: dict[str, list[Arrival]] = defaultdict(list)
        for arrival in arrivals(scan.files):
            if arrival.folder not in found:
                arrived[arrival.folder].append(arrival)
        tasks = _told_tasks(zone, lines, scan, list(found.values())) if lines else {}
        for base in sorted(set(found) | set(tasks) | set(arrived)):
            task = tasks.get(base) or _Task([])
            said = task.lines
            pattern, folder_days = dated_folders(base, scan)
            routine = found.get(base) or Routine(base, pattern, {}, {}, {})
            seen = arrived.get(base, [])
            if (
                len(routine.days()) < MIN_DAYS
                and len({m.day for m in said}) < MIN_DAYS
                and len({d for a in seen for d in a.days}) < MIN_DAYS
            ):
                continue
            copy = task.into == base and told.copies([m.text for m in said])
            if base in found or folder_days or copy:
                result = _finding(tree, policy, zone, routine, said, folder_days)
            else:  # not into a folder of the tree: the task is written down for the person
                result = _checklist(tree, policy, zone, base, task, seen)
            if result is not None:
                results.append(result)
    return results


def _finding(
    tree: Tree,
    policy: Policy,
    zone: str,
    routine: Routine,
    said: Sequence[_Line],
    folder_days: set[date],
) -> PlanResult | None:
    """The finding, with the evidence there is: the person's words, the files, and (for
    words alone) the dated folders made on the days they told it."""
    folder = f"{zone}/{SCRIPTS}"
    # The script is a file of the person's, named and written in the daemon's language as the
    # folders organize makes are, whoever asked for the analysis.
    with language(process_language()):
        name = _("copy-{folder}.sh", folder=_slug(routine.base.rpartition("/")[2]))
        script = f"{folder}/{name}"
        content = _script(routine, script)
    if tree.lstat(script) is not None or path_zone_problem(policy, script) is not None:
        return None  # a script of that name is there already (maybe this very one)
    if path_zone_problem(policy, routine.base + "/x") is not None:
        return None  # today's folder could not be made there
    plan: list[Op] = []
    if tree.lstat(folder) is None:
        plan.append(Mkdir(folder))
    plan.append(Create(script, content))
    names = routine.names()
    # Nothing the files show can be copied by the script alone: it copies what it is given.
    found = routine.sources or any(origin for origin, _days in routine.templates.values())
    command = f"sh {script}" + ("" if found else " " + _("FILE..."))
    said_days = len({m.day for m in said})
    evidence = [f"{m.where}: «{m.text}»" for m in said]
    evidence += _file_evidence(routine)
    files_days = len(routine.days())
    made = sorted(folder_days & {m.day for m in said})
    if not files_days and len(made) >= MIN_DAYS:
        files_days = len(made)
        evidence.append(
            _(
                "{folder} has a dated folder of each of those days: {dates}.",
                folder=routine.base,
                dates=", ".join(d.isoformat() for d in made),
            )
        )
    evidence.append(_("To run it, from the ALMA folder: {command}", command=command))
    evidence.append(
        _(
            "ALMA never runs it: accepting only writes {script} for you to read first; "
            "`alma-ctl undo` takes it back while you have not changed it.",
            script=script,
        )
    )
    if said_days >= MIN_DAYS and files_days >= MIN_DAYS:
        reason = _(
            "On {days} days your notes say you copied them by hand, and {folder} has a dated "
            "copy of each day: a short script can do it in one command.",
            days=said_days,
            folder=routine.base,
        )
    elif said_days >= MIN_DAYS:
        reason = _(
            "On {days} days your notes say you did it by hand: a short script can make "
            "today's folder in {folder} and copy the files in one command.",
            days=said_days,
            folder=routine.base,
        )
    else:
        reason = _(
            "{folder} got the same file in a dated folder on {days} days: a short script can "
            "do it in one command.",
            days=files_days,
            folder=routine.base,
        )
    title = (
        _(
            "You copy {names} into a dated folder of {folder} by hand",
            names=", ".join(names),
            folder=routine.base,
        )
        if names
        else _(
            "You copy the day's files into a dated folder of {folder} by hand", folder=routine.base
        )
    )
    return PlanResult(
        kind=KIND,
        target=routine.base,
        title=title,
        reason=reason,
        evidence=cap_evidence(evidence),
        plan=plan,
        files=1,
        # The plan's ops too (not the script's words, which follow the language): a folder
        # made meanwhile makes the old plan fail and a new one is proposed; the same plan is
        # never proposed twice however many days go by.
        fingerprint=fingerprint(
            KIND,
            routine.base,
            [*(f"{n} {p}" for n, p in routine.sources.items()), *names, *_shape(plan)],
        ),
    )


def _checklist(
    tree: Tree,
    policy: Policy,
    zone: str,
    base: str,
    task: _Task,
    seen: Sequence[Arrival] = (),
) -> PlanResult | None:
    """A task told on enough days whose words name no folder of the tree it goes into (data
    typed into a sheet, files uploaded to a website, a report sent), or files of one name
    pattern made day after day in one folder (``seen``): a checklist of it for the person to
    review, next to the scripts, as the first step to doing it in one command. A copy script
    would guess where things come from and go. ALMA never runs anything."""
    folder = f"{zone}/{SCRIPTS}"
    where = task.into
    topic = (where or (base if base != zone else "")).rpartition("/")[2]
    topic = topic.rpartition(".")[0] or topic
    said = sorted(task.lines, key=lambda m: (m.day, m.where))
    days = len({m.day for m in said})
    files_days = len({d for a in seen for d in a.days})

    def arrived() -> list[str]:
        return [
            _(
                "{name} arrives in {folder} on {n} days: {dates}.",
                name=f"{a.template[0]}{shown(a.template[1])}{a.template[2]}",
                folder=base,
                n=len(a.days),
                dates=", ".join(d.isoformat() for d in sorted(a.days)),
            )
            for a in seen
        ]

    with language(process_language()):
        name = _("routine-{task}.md", task=_slug(topic) if topic else _("task"))
        script = f"{folder}/{name}"
        text = [
            "# " + _("A task you do by hand: {what}", what=where or base),
            "",
            _(
                "Written by ALMA for you to read: what your notes say you did by hand on "
                "{days} days. ALMA never runs anything.",
                days=days,
            )
            if said
            else _(
                "Written by ALMA for you to read: a file of the same name arrived in {folder} "
                "on {days} days. ALMA never runs anything.",
                folder=base,
                days=files_days,
            ),
            "",
        ]
        if said:
            text += ["## " + _("What you said")]
            text += [f"- {m.day.isoformat()}: «{m.text}»" for m in said] + [""]
        if seen:
            text += ["## " + _("What the files show"), *(f"- {a}" for a in arrived()), ""]
        text += [
            "## " + _("To stop doing it by hand"),
            "- [ ] " + _("Where the data comes from (a file, a mail, a website):"),
            "- [ ] " + (_("Where it goes: {where}", where=where) if where else _("Where it goes:")),
            "- [ ] " + _("The steps you take each time, in order:"),
            "- [ ] " + _("What changes from one day to the next (the date, a name, the figures):"),
            "- [ ] "
            + _(
                "With these answers a script can do it in one command: ask ALMA in the chat, "
                "or write it in {folder}.",
                folder=folder,
            ),
        ]
        content = ("\n".join(text) + "\n").encode()
    if tree.lstat(script) is not None or path_zone_problem(policy, script) is not None:
        return None  # a checklist of that name is there already, or not where ALMA may write
    plan: list[Op] = []
    if tree.lstat(folder) is None:
        plan.append(Mkdir(folder))
    plan.append(Create(script, content))
    evidence = [f"{m.where}: «{m.text}»" for m in said]
    evidence += arrived()
    evidence.append(
        _(
            "ALMA never runs anything: accepting only writes {script} for you to read first; "
            "`alma-ctl undo` takes it back while you have not changed it.",
            script=script,
        )
    )
    return PlanResult(
        kind=KIND,
        target=base,
        title=_("You do the same task by hand again and again: {what}", what=where or base),
        reason=(
            _(
                "On {days} days your notes say you did the same task by hand ({what}): a "
                "checklist of its steps, for you to review, is the first step to doing it in "
                "one command.",
                days=days,
                what=where or base,
            )
            if days >= MIN_DAYS
            else _(
                "On {days} days a new file of the same name, dated that day, arrived in "
                "{folder}: if you make it by hand, a checklist of its steps, for you to "
                "review, is the first step to doing it in one command.",
                days=files_days,
                folder=base,
            )
        ),
        evidence=cap_evidence(evidence),
        plan=plan,
        files=1,
        # The place and the plan, not the lines (new days' words are the same task).
        fingerprint=fingerprint(KIND, base, [where or "", *_shape(plan)]),
    )


def _file_evidence(routine: Routine) -> Iterable[str]:
    sources = routine.sources
    for name in sorted(sources):
        dates = sorted(routine.copies[name])
        yield _(
            "{name}, from {source}, is copied into {n} dated folders of {folder}: {dates}.",
            name=name,
            source=sources[name],
            n=len(dates),
            folder=routine.base,
            dates=", ".join(d.isoformat() for d in dates),
        )
    for (pre, fmt, post), (origin, days) in sorted(routine.templates.items()):
        when = ", ".join(d.isoformat() for d in sorted(days))
        name = f"{pre}{shown(fmt)}{post}"
        if origin:
            yield _(
                "{name}, from {source}, arrives in {n} dated folders of {folder}: {dates}.",
                name=name,
                source=origin,
                n=len(days),
                folder=routine.base,
                dates=when,
            )
        else:
            yield _(
                "{name} arrives in {n} dated folders of {folder}: {dates}.",
                name=name,
                n=len(days),
                folder=routine.base,
                dates=when,
            )
