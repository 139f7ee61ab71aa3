"""``repeated_failure``: a script or tool failing again and again in ``logs/**/*.log``.

A failure line is one of (checked in this order):

- a Python traceback (``Traceback (most recent call last):``), whose signature is the exception
  line that ends it (``ValueError: ...``);
- a line with the word ``ERROR``, ``CRITICAL`` or ``FATAL`` (upper case, as log levels are);
- a line with the word ``FAILED`` (upper case, as pytest, systemd and make write it);
- a non-zero exit: ``exit status 23``, ``exited with code 1``, ``returned non-zero exit
  status 2``, ``exit code: 127`` (any case).

Its signature ignores timestamps and numbers: a leading date/time is cut, every other digit
run and long hex id becomes ``#``, and spaces are collapsed. The day of a line is its leading
``YYYY-MM-DD`` when it has one, else the last date seen above it in the file, else the day the
file was last written.

A log is reported when one signature occurs at least :data:`MIN_OCCURRENCES` times on at least
:data:`MIN_DAYS` distinct days within the last :data:`WINDOW_DAYS` days (one failing run a
day for a few days is the pattern), or at least :data:`BURST_OCCURRENCES` times on one day (a
burst: something broke badly today, its own higher threshold). One finding per log,
listing every signature that qualifies; its fingerprint is (log, signatures), so the same
recurring problem is not proposed again as it keeps failing, and a new kind of failure is.

The failure's neighbourhood is evidence too: the tool's own lines beside the last failure
(:data:`NEIGHBOURS` lines either side: ``tar (child): /mnt/X/a.tar.gz: Cannot open: No such
file or directory`` next to ``ERROR backup failed``), where the path the diagnosis
(:mod:`agent.detectors.diagnose`) needs often is, and what the person wrote about it in the chat logs
of those days (:func:`with_person_notes`: a sentence that names the script, a folder of a path
of those lines, or, for a path on a mounted disk, the disk: "creo que cambié el nombre del
punto de montaje").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date

from actions.planners.base import PlanResult, cap_evidence, fingerprint
from actions.scan import local_time
from agent.detectors.logread import last_days
from agent.detectors.pending import sentences
from policies.i18n import _, ngettext
from policies.text import loose_fold
from state.chatlog import Paragraph

KIND = "repeated_failure"
MIN_OCCURRENCES = 3
MIN_DAYS = 2
BURST_OCCURRENCES = 10
WINDOW_DAYS = 14

_LEAD_TS = re.compile(
    r"^\s*\[?(?P<date>\d{4}-\d{2}-\d{2})(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?\]?[\s:|-]*"
)
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?\b")
_HEX = re.compile(r"\b(?:0x[0-9a-fA-F]+|[0-9a-fA-F]{8,})\b")
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_LEVEL = re.compile(r"\b(?:ERROR|CRITICAL|FATAL|FAILED)\b")
_EXIT = re.compile(
    r"\b(?:exit(?:ed)?|returned|terminated)\b(?:[^\n]{0,40}?)\b(?:status|code)\b\s*[:=]?\s*(-?\d+)",
    re.IGNORECASE,
)
_TRACEBACK = "Traceback (most recent call last):"
_SCRIPT = re.compile(r"(?<![\w/.-])([\w.-]+\.(?:sh|py|pl|rb|js|ts|php|bash|ps1))\b")
NEIGHBOURS = 3
#: A tool's own words beside a failure: "tar (child): …", "rsync: …", "No such file".
_TOOL_LINE = re.compile(
    r"^\s*[\w.-]+(?: \([\w -]+\))?: |no such file|cannot|can't|not found|denied|failed|error"
    r"|no existe|no se puede|denegado",
    re.IGNORECASE,
)
#: An absolute path in a log line (what the diagnosis looks for, too).
ABS_PATH = re.compile(r"(?<![\w.])/(?:[\w.+-]+/?)+")
#: Path parts that say where, not what: the folders after the last of them name the thing.
_GENERIC_WORDS = "mnt media volumes home tmp var run usr opt srv data backup backups root etc"
_GENERIC_PARTS = frozenset(_GENERIC_WORDS.split())
_MOUNTS = frozenset({"mnt", "media", "volumes"})
#: Words a person uses for a disk or its mount point.
_DISK_WORDS = ("montaje", "montar", "monte", "disco", "unidad", "usb", "mount", "drive", "disk")
_WORDS = re.compile(r"[a-z0-9ñ_]+")


@dataclass
class _Signature:
    count: int = 0
    days: set[date] = field(default_factory=set)
    per_day: Counter[date] = field(default_factory=Counter)
    last_line: int = 0
    last_index: int = 0
    example: str = ""


def signature(line: str) -> str:
    text = _LEAD_TS.sub("", line, count=1)
    text = _TIME.sub("#", text)
    text = _HEX.sub("#", text)
    text = _DIGITS.sub("#", text)
    return _SPACES.sub(" ", text).strip()[:200]


def is_failure(line: str) -> bool:
    if _LEVEL.search(line):
        return True
    m = _EXIT.search(line)
    return bool(m and int(m.group(1)) != 0)


def _day_of(line: str) -> date | None:
    m = _LEAD_TS.match(line)
    if not m:
        return None
    try:
        return date.fromisoformat(m.group("date"))
    except ValueError:
        return None


def failures(text: str, first_line: int, fallback: date) -> Iterable[tuple[str, date, int, str]]:
    """(signature, day, line number or 0, raw line) for each failure in a log's text."""
    for sig, day, number, raw, _index in _failures(text.splitlines(), first_line, fallback):
        yield sig, day, number, raw


def _failures(
    lines: list[str], first_line: int, fallback: date
) -> Iterable[tuple[str, date, int, str, int]]:
    """As :func:`failures`, with the index of the line in ``lines``."""
    day = fallback
    i = 0
    while i < len(lines):
        line = lines[i]
        number = first_line + i if first_line else 0
        day = _day_of(line) or day
        if line.strip().startswith(_TRACEBACK) or line.strip().endswith(_TRACEBACK):
            # the exception line is the first one after the indented frames
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j][:1].isspace()):
                j += 1
            last = lines[j].strip() if j < len(lines) else ""
            yield "Traceback: " + signature(last), day, number, last or line.strip(), min(j, i)
            i = j + 1
            continue
        if is_failure(line):
            yield signature(line), day, number, line.strip(), i
        i += 1


def _beside(lines: list[str], index: int, first_line: int, path: str) -> list[str]:
    """The tool's own lines around ``lines[index]``, as evidence."""
    out = []
    for i in range(max(0, index - NEIGHBOURS), min(len(lines), index + NEIGHBOURS + 1)):
        line = lines[i].strip()
        if i == index or not line or is_failure(line) or not _TOOL_LINE.search(line):
            continue
        where = f"{path}:{first_line + i}" if first_line else path
        out.append(_("Beside it at {where}: {line}", where=where, line=line[:200]))
    return out


def detect_failures(
    path: str, text: str, first_line: int, written: float, now: float
) -> PlanResult | None:
    """The finding for one log (``path`` root-relative), or None when nothing repeats enough."""
    since, _today = last_days(now, WINDOW_DAYS)
    seen: dict[str, _Signature] = {}
    # Lines without a date of their own are of the day the log was written, if that is a date.
    when = local_time(written)
    fallback = date.min if when is None else when.date()
    lines = text.splitlines()
    for sig, day, number, raw, index in _failures(lines, first_line, fallback):
        if day < since:
            continue
        s = seen.setdefault(sig, _Signature())
        s.count += 1
        s.days.add(day)
        s.per_day[day] += 1
        s.last_line, s.last_index, s.example = number, index, raw
    hits = sorted(
        (
            (sig, s)
            for sig, s in seen.items()
            if (s.count >= MIN_OCCURRENCES and len(s.days) >= MIN_DAYS)
            or max(s.per_day.values()) >= BURST_OCCURRENCES
        ),
        key=lambda item: (-item[1].count, item[0]),
    )
    if not hits:
        return None
    scripts = Counter(m for _sig, s in hits for m in _SCRIPT.findall(s.example))
    name = scripts.most_common(1)[0][0] if scripts else path.rpartition("/")[2].removesuffix(".log")
    # a failing run often writes several failure lines: the most repeated one counts the runs
    runs = max(s.count for _sig, s in hits)
    days = set().union(*(s.days for _sig, s in hits))
    last = max(days)
    evidence = []
    for _sig, s in hits:
        where = f"{path}:{s.last_line}" if s.last_line else path
        evidence.append(
            ngettext(
                "{n} time in {days}, the last one at {where}: {example}",
                "{n} times in {days}, the last one at {where}: {example}",
                s.count,
                days=ngettext("{n} day", "{n} days", len(s.days)),
                where=where,
                example=s.example[:200],
            )
        )
        evidence += _beside(lines, s.last_index, first_line, path)
    how_many = ngettext("{n} failure", "{n} failures", runs)
    if len(days) == 1:
        reason = _(
            "{failures} on {day} in {path}: a burst",
            failures=how_many,
            day=last.isoformat(),
            path=path,
        )
    else:
        reason = _(
            "{failures} on {days} in {path} (the last one on {day})",
            failures=how_many,
            days=ngettext("{n} different day", "{n} different days", len(days)),
            path=path,
            day=last.isoformat(),
        )
    return PlanResult(
        kind=KIND,
        target=path,
        title=_("“{name}” fails again and again", name=name),
        reason=reason,
        evidence=cap_evidence(evidence),
        plan=[],
        files=0,
        fingerprint=fingerprint(KIND, path, (sig for sig, _hit in hits)),
    )


def with_person_notes(
    result: PlanResult, days: list[tuple[date, str, list[Paragraph]]], now: float
) -> PlanResult:
    """``result`` (a ``repeated_failure``) with what the person wrote about it in the chat logs
    of its window: a sentence that names its script, a folder of a path its lines name, or,
    when such a path is on a mounted disk, the disk."""
    text = "\n".join(result.evidence)
    names = {m.rsplit(".", 1)[0] for m in _SCRIPT.findall(text + " " + result.title)}
    names.add(result.target.rpartition("/")[2].removesuffix(".log"))
    disk = False
    for path in ABS_PATH.findall(text):
        parts = path.strip("/").split("/")
        generic = [i for i, part in enumerate(parts) if part.lower() in _GENERIC_PARTS]
        after = parts[generic[-1] + 1 :] if generic else parts[-1:]
        names |= {part for part in after if "." not in part}
        disk = disk or any(part.lower() in _MOUNTS for part in parts)
    keys = {loose_fold(n) for n in names if len(n) >= 4}
    since, _today = last_days(now, WINDOW_DAYS)
    notes = []
    for day, path, entries in sorted(days, key=lambda d: (d[0], d[1])):
        if day < since:
            continue
        for e in entries:
            if not e.by_person:
                continue
            for sentence, offset in sentences(e.text):
                words = _WORDS.findall(loose_fold(sentence))
                about = any(w.startswith(k) for w in words for k in keys)
                if about or (disk and any(w.startswith(_DISK_WORDS) for w in words)):
                    where = f"{path}:{e.line + offset}" + (f" ({e.clock})" if e.clock else "")
                    notes.append(_("You wrote at {where}: {text}", where=where, text=sentence))
    if not notes:
        return result
    return replace(result, evidence=cap_evidence([*result.evidence, *notes[-3:]]))
