"""``routine``: the same manual copy on several days, seen in the chat logs and in the files.

Both must show it, on at least :data:`MIN_DAYS` distinct days:

- the logs: the person's own lines (never ALMA's) that say they copied something ("copiando a
  mano los CSV a entregas", "otra vez copiar el informe a la carpeta de hoy", "copied the
  report again"; a "copia de seguridad" is a backup, not a copy), naming the file, its type
  or the folder the copies go to;
- the files: one file (the same name, or the same content under other names) in dated folders
  side by side (``entregas/2026-11-23/``, ``entregas/2026-11-24/``...), with its original
  outside any dated folder of the zone.

The finding proposes a plan the person can accept: ``mkdir`` of ``scripts/`` in the zone when
missing, and ``create`` of a short POSIX ``sh`` script there that makes today's dated folder
and copies the files in, never over a file that is there. Accepting only writes the script, for
the person to read; ALMA never runs it. The exact command is in the evidence. The logs are read
first: without the log signal no file is listed. The fingerprint is the folder, the file names
and the plan, so the same routine is proposed once however many days it goes on.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from actions.ops import Create, Mkdir, Op
from actions.planners.base import PlanResult, cap_evidence, fingerprint
from actions.scan import ScannedFile, scan_tree, with_sha256
from actions.tree import Tree
from agent.detectors.files import scan_zones
from policies.config import Policy
from policies.decide import path_zone_problem
from policies.errors import RefusedError
from policies.i18n import _, language, process_language
from policies.text import loose_fold
from state.chatlog import Paragraph

KIND = "routine"
MIN_DAYS = 3
SCRIPTS = "scripts"
#: Bytes read per zone to find copies made under other names (only sizes seen on enough days).
HASH_BYTES = 256 << 20

# Folded text (lower case, no accents). A copy verb; "copia(s) de seguridad" is a backup.
_COPY = re.compile(
    r"\b(?:copi(?:ar|o|as|a|amos|ais|an|ando|ado|ada|ados|adas|e|aste|aron)"
    r"|vuelvo a copiar|pasar a mano|copy|copies|copying|copied)\b"
)
_BACKUP = re.compile(r"\bcopias? de seguridad\b|\bbackups?\b")
_WORD = re.compile(r"[a-z0-9]+")
# A dated folder's name: a prefix, the date (2026-11-23, 2026_11_23, 20261123), a suffix.
_DATED = re.compile(
    r"^(?P<pre>.*?)(?P<y>\d{4})(?P<sep>[-_.]?)(?P<m>\d{2})(?P=sep)(?P<d>\d{2})(?P<post>\D.*)?$"
)


@dataclass(frozen=True)
class _Mention:
    day: date
    where: str  # log path:line
    text: str
    words: frozenset[str]


def copy_mentions(days: Sequence[tuple[date, str, list[Paragraph]]]) -> list[_Mention]:
    """The person's lines that say they copied something, oldest first."""
    out: list[_Mention] = []
    for day, path, paragraphs in sorted(days, key=lambda d: d[0]):
        for p in paragraphs:
            if not p.by_person:
                continue
            for offset, line in enumerate(p.text.splitlines()):
                folded = loose_fold(line)
                if not _COPY.search(folded) or _BACKUP.search(folded):
                    continue
                shown = line.strip()
                shown = shown if len(shown) <= 120 else shown[:119] + "…"
                out.append(
                    _Mention(
                        day, f"{path}:{p.line + offset}", shown, frozenset(_WORD.findall(folded))
                    )
                )
    return out


@dataclass(frozen=True)
class _Dated:
    base: str  # the folder holding the dated folders
    pattern: tuple[str, str, str]  # prefix, date format for `date +...`, suffix
    day: date


def _dated(folder: str) -> _Dated | None:
    base, _sep, name = folder.rpartition("/")
    m = _DATED.match(name)
    if m is None or not base:
        return None
    try:
        day = date(int(m["y"]), int(m["m"]), int(m["d"]))
    except ValueError:
        return None
    sep = m["sep"]
    fmt = f"%Y{sep}%m{sep}%d"
    return _Dated(base, (m["pre"], fmt, m["post"] or ""), day)


@dataclass
class _Routine:
    base: str
    pattern: tuple[str, str, str]
    #: the name each file gets in today's folder -> its original, and the days it was copied on
    sources: dict[str, str]
    copies: dict[str, set[date]]


def _routines(tree: Tree, files: Sequence[ScannedFile]) -> list[_Routine]:
    """Per folder of dated folders named alike: the files copied into at least MIN_DAYS of
    them, by name or (under other names) by content, whose original is found outside any
    dated folder (the newest of the name; of the content, the copy's own name first)."""
    groups: dict[tuple[str, tuple[str, str, str]], list[tuple[date, ScannedFile]]] = defaultdict(
        list
    )
    originals: dict[str, ScannedFile] = {}
    for f in sorted(files, key=lambda f: f.identity.mtime_ns):
        dated = _dated(f.folder)
        if dated is None:
            originals[f.name] = f  # the newest of each name wins
        else:
            groups[(dated.base, dated.pattern)].append((dated.day, f))
    out = []
    for (base, pattern), copies in sorted(groups.items()):
        routine = _Routine(base, pattern, {}, {})
        by_name: dict[str, set[date]] = defaultdict(set)
        for day, f in copies:
            by_name[f.name].add(day)
        for name, days in by_name.items():
            if len(days) >= MIN_DAYS and name in originals:
                routine.sources[name] = originals[name].path
                routine.copies[name] = days
        _by_content(tree, routine, copies, list(originals.values()))
        if routine.sources:
            out.append(routine)
    return out


def _by_content(
    tree: Tree,
    routine: _Routine,
    copies: Sequence[tuple[date, ScannedFile]],
    originals: Sequence[ScannedFile],
) -> None:
    """Add the files copied under other names: one content on MIN_DAYS days or more. Only
    files of a size seen on that many days are read (within HASH_BYTES)."""
    rest = [(day, f) for day, f in copies if f.name not in routine.sources]
    days_of_size: dict[int, set[date]] = defaultdict(set)
    for day, f in rest:
        days_of_size[f.identity.size].add(day)
    sizes = {size for size, days in days_of_size.items() if len(days) >= MIN_DAYS}
    if not sizes:
        return
    day_of = {f.path: day for day, f in rest}
    wanted = [f for _day, f in rest if f.identity.size in sizes]
    wanted += [o for o in originals if o.identity.size in sizes]
    hashed, _skipped = with_sha256(tree, wanted, max_bytes=HASH_BYTES)
    days_of: dict[str, set[date]] = defaultdict(set)
    found: dict[str, ScannedFile] = {}
    for f in hashed:
        digest = f.identity.sha256 or ""
        if f.path in day_of:
            days_of[digest].add(day_of[f.path])
        else:
            found.setdefault(digest, f)
    for digest, days in days_of.items():
        original = found.get(digest)
        if len(days) >= MIN_DAYS and original is not None and original.name not in routine.sources:
            routine.sources[original.name] = original.path
            routine.copies[original.name] = days


def _slug(text: str) -> str:
    return "-".join(_WORD.findall(loose_fold(text))) or "archivos"


def _related(m: _Mention, routine: _Routine) -> bool:
    """The line names the folder the copies go to, a file, its stem or its type."""
    names: set[str] = set(_WORD.findall(loose_fold(routine.base.rpartition("/")[2])))
    for name in routine.copies:
        stem, dot, ext = name.rpartition(".")
        names.update(_WORD.findall(loose_fold(stem if dot else name)))
        if dot:
            names.add(loose_fold(ext))
    return bool(m.words & names)


def _script(routine: _Routine, script: str) -> bytes:
    pre, fmt, post = routine.pattern
    today = f'{shlex.quote(routine.base + "/" + pre)}"$(date +{fmt})"' + (
        shlex.quote(post) if post else ""
    )
    lines = [
        "#!/bin/sh",
        "# " + _("Written by ALMA for you to read: it does what you did by hand every day."),
        "# "
        + _(
            "It creates today's folder in {folder} and copies these files into it,",
            folder=routine.base,
        ),
        "# " + _("never over a file that is already there. ALMA never runs it."),
        "# " + _("To run it, from the ALMA folder: {command}", command=f"sh {script}"),
        "set -eu",
        'cd "$(dirname "$0")/' + "/".join([".."] * script.count("/")) + '"',
        f"dest={today}",
        'mkdir -p "$dest"',
        "copy_in() {",
        '\tif [ -e "$dest/$2" ]; then',
        '\t\techo "' + _("Already there, left as it is: {path}", path="$dest/$2") + '"',
        "\telse",
        '\t\tcp -p -- "$1" "$dest/$2"',
        '\t\techo "' + _("Copied: {src} -> {dst}", src="$1", dst="$dest/$2") + '"',
        "\tfi",
        "}",
    ]
    sources = routine.sources
    lines += [f"copy_in {shlex.quote(sources[n])} {shlex.quote(n)}" for n in sorted(sources)]
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
    mentions = copy_mentions(days)
    if len({m.day for m in mentions}) < MIN_DAYS:
        return []  # the logs do not show it: the files are not even listed
    results: list[PlanResult] = []
    for zone, excluded in scan_zones(policy):
        try:
            scan = scan_tree(tree, zone, now=now, settle_seconds=None, exclude=excluded)
        except (FileNotFoundError, NotADirectoryError, RefusedError):
            continue
        files = scan.files
        for routine in _routines(tree, files):
            found = _finding(tree, policy, zone, routine, mentions)
            if found is not None:
                results.append(found)
    return results


def _finding(
    tree: Tree,
    policy: Policy,
    zone: str,
    routine: _Routine,
    mentions: Sequence[_Mention],
) -> PlanResult | None:
    said = [m for m in mentions if _related(m, routine)]
    if len({m.day for m in said}) < MIN_DAYS:
        return None
    sources = routine.sources
    folder = f"{zone}/{SCRIPTS}"
    # The script is a file of the person's, named and written in the daemon's language as the
    # folders organize makes are, whoever asked for the analysis.
    with language(process_language()):
        name = _("copy-{folder}.sh", folder=_slug(routine.base.rpartition("/")[2]))
        script = f"{folder}/{name}"
        content = _script(routine, script)
    if tree.lstat(script) is not None or path_zone_problem(policy, script) is not None:
        return None  # a script of that name is there already (maybe this very one)
    plan: list[Op] = []
    if tree.lstat(folder) is None:
        plan.append(Mkdir(folder))
    plan.append(Create(script, content))
    names = ", ".join(sorted(sources))
    command = f"sh {script}"
    evidence = [f"{m.where}: «{m.text}»" for m in said]
    for name in sorted(sources):
        dates = sorted(routine.copies[name])
        evidence.append(
            _(
                "{name}, from {source}, is copied into {n} dated folders of {folder}: {dates}.",
                name=name,
                source=sources[name],
                n=len(dates),
                folder=routine.base,
                dates=", ".join(d.isoformat() for d in dates),
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
    return PlanResult(
        kind=KIND,
        target=routine.base,
        title=_(
            "You copy {names} into a dated folder of {folder} by hand",
            names=names,
            folder=routine.base,
        ),
        reason=_(
            "On {days} days your notes say you copied them by hand, and {folder} has a dated "
            "copy of each day: a short script can do it in one command.",
            days=len({m.day for m in said}),
            folder=routine.base,
        ),
        evidence=cap_evidence(evidence),
        plan=plan,
        files=1,
        # The plan's ops too (not the script's words, which follow the language): a folder
        # made meanwhile makes the old plan fail and a new one is proposed; the same plan is
        # never proposed twice however many days go by.
        fingerprint=fingerprint(
            KIND, routine.base, [*(f"{n} {p}" for n, p in sources.items()), *_shape(plan)]
        ),
    )
