"""The files' side of a ``routine`` (:mod:`agent.detectors.routine`): dated folders side by side
(``entregas/2026-11-23/``, ``entregas/2026-11-24/``...) and what arrives in them day after day.

A routine from the files is, in one folder of dated folders named alike, a file copied into at
least :data:`MIN_DAYS` of them, by its name or (under other names) by its content, whose
original is outside any dated folder; or a file whose name carries its folder's date
(``pedidos_2026-11-23.csv``), on that many days, its original looked for outside the dated
folders.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from actions.planners.categories import category_of
from actions.scan import ScannedFile, TreeScan, with_sha256
from actions.tree import Tree

MIN_DAYS = 3
#: Bytes read per zone to find copies made under other names (only sizes seen on enough days).
HASH_BYTES = 256 << 20
# A dated folder's name: a prefix, the date (2026-11-23, 2026_11_23, 20261123), a suffix.
_DATED = re.compile(
    r"^(?P<pre>.*?)(?P<y>\d{4})(?P<sep>[-_.]?)(?P<m>\d{2})(?P=sep)(?P<d>\d{2})(?P<post>\D.*)?$"
)
#: Today's folder when the dated folders do not show how the person names it.
_DEFAULT_PATTERN = ("", "%Y-%m-%d", "")


@dataclass(frozen=True)
class Dated:
    base: str  # the folder holding the dated folders
    pattern: tuple[str, str, str]  # prefix, date format for `date +...`, suffix
    day: date


def dated(folder: str) -> Dated | None:
    base, _sep, name = folder.rpartition("/")
    m = _DATED.match(name)
    if m is None or not base:
        return None
    try:
        day = date(int(m["y"]), int(m["m"]), int(m["d"]))
    except ValueError:  # digits shaped like a date that is none (2026-13-40): no date
        return None
    sep = m["sep"]
    fmt = f"%Y{sep}%m{sep}%d"
    return Dated(base, (m["pre"], fmt, m["post"] or ""), day)


def _dated_name(name: str, day: date) -> tuple[str, str, str] | None:
    """A file name that carries ``day``: (before, the date's format, after)."""
    for fmt in ("%Y-%m-%d", "%Y_%m_%d", "%Y%m%d", "%d-%m-%Y", "%d_%m_%Y"):
        text = day.strftime(fmt)
        before, found, after = name.partition(text)
        if found:
            return before, fmt, after
    return None


@dataclass
class Routine:
    base: str
    pattern: tuple[str, str, str]
    #: the name each file gets in today's folder -> its original, and the days it was copied on
    sources: dict[str, str]
    copies: dict[str, set[date]]
    #: a file named with the day's date (before, format, after) -> the folder its original of
    #: each day is in ("" when none is found), and the days it arrived on
    templates: dict[tuple[str, str, str], tuple[str, set[date]]]

    def days(self) -> set[date]:
        out: set[date] = set()
        for days in [*self.copies.values(), *(d for _f, d in self.templates.values())]:
            out |= days
        return out

    def names(self) -> list[str]:
        return sorted(
            [*self.sources, *(f"{pre}{shown(fmt)}{post}" for pre, fmt, post in self.templates)]
        )


def shown(fmt: str) -> str:
    """A date format as a person reads it (``YYYY-MM-DD``)."""
    return fmt.replace("%Y", "YYYY").replace("%m", "MM").replace("%d", "DD")


def routines(tree: Tree, files: Sequence[ScannedFile]) -> list[Routine]:
    """Per folder of dated folders named alike: the files copied into at least MIN_DAYS of
    them, by name or (under other names) by content, whose original is found outside any
    dated folder (the newest of the name; of the content, the copy's own name first); and the
    files whose name carries the day's date, found on that many days."""
    groups: dict[tuple[str, tuple[str, str, str]], list[tuple[date, ScannedFile]]] = defaultdict(
        list
    )
    originals: dict[str, ScannedFile] = {}
    for f in sorted(files, key=lambda f: f.identity.mtime_ns):
        found = dated(f.folder)
        if found is None:
            originals[f.name] = f  # the newest of each name wins
        else:
            groups[(found.base, found.pattern)].append((found.day, f))
    out = []
    for (base, pattern), copies in sorted(groups.items()):
        routine = Routine(base, pattern, {}, {}, {})
        by_name: dict[str, set[date]] = defaultdict(set)
        for day, f in copies:
            by_name[f.name].add(day)
        for name, days in by_name.items():
            if len(days) >= MIN_DAYS and name in originals:
                routine.sources[name] = originals[name].path
                routine.copies[name] = days
        _by_content(tree, routine, copies, list(originals.values()))
        _by_template(routine, copies, list(originals.values()))
        if routine.sources or routine.templates:
            out.append(routine)
    return out


def _by_template(
    routine: Routine, copies: Sequence[tuple[date, ScannedFile]], originals: Sequence[ScannedFile]
) -> None:
    """Add the files named with their folder's date, one name pattern on MIN_DAYS days; their
    original of each day is looked for outside the dated folders, in the folder most of them
    are found in."""
    days_of: dict[tuple[str, str, str], set[date]] = defaultdict(set)
    for day, f in copies:
        if f.name in routine.sources:
            continue
        template = _dated_name(f.name, day)
        if template is not None:
            days_of[template].add(day)
    for template, days in days_of.items():
        if len(days) < MIN_DAYS:
            continue
        pre, fmt, post = template
        where: dict[str, int] = defaultdict(int)
        for o in originals:
            if any(o.name == f"{pre}{d.strftime(fmt)}{post}" for d in days):
                where[o.folder] += 1
        folder = max(sorted(where), key=lambda k: where[k]) if where else ""
        routine.templates[template] = (folder, days)


def _by_content(
    tree: Tree,
    routine: Routine,
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


def dated_folders(base: str, scan: TreeScan) -> tuple[tuple[str, str, str], set[date]]:
    """How the person names the dated folders of ``base`` (the most used way), and the days
    those folders are of."""
    seen: dict[tuple[str, str, str], set[date]] = defaultdict(set)
    for f in scan.folders:
        one = dated(f.folder)
        if one is not None and one.base == base:
            seen[one.pattern].add(one.day)
    if not seen:
        return _DEFAULT_PATTERN, set()
    pattern = max(sorted(seen), key=lambda k: len(seen[k]))
    return pattern, seen[pattern]


#: What a person exports or writes by hand each day: a camera's, a recorder's or a screen's
#: files (images, audio, video), code and what has no known type (a program's daily ``.log``)
#: are written by a device or a program, never a manual routine.
_MADE_BY_HAND = frozenset({"documents", "spreadsheets", "presentations", "data"})
#: Folders a browser fills on its own: what lands there is a download, not a routine.
_DOWNLOADS = frozenset({"downloads", "download", "descargas"})


@dataclass(frozen=True)
class Arrival:
    """Files of one name pattern, the day's date in the name, arriving in one folder."""

    folder: str
    template: tuple[str, str, str]  # before the date, its format, after it
    days: frozenset[date]


def arrivals(files: Sequence[ScannedFile]) -> list[Arrival]:
    """Per folder that is no dated folder, the files of one name pattern whose name carries
    the day they arrived on (their modification day, or the day after), on at least
    MIN_DAYS days: documents, sheets or data only, never in a downloads folder."""
    days_of: dict[tuple[str, tuple[str, str, str]], set[date]] = defaultdict(set)
    for f in files:
        if dated(f.folder) is not None or category_of(f.name) not in _MADE_BY_HAND:
            continue
        if f.folder.rpartition("/")[2].casefold() in _DOWNLOADS:
            continue
        arrived = datetime.fromtimestamp(f.identity.mtime_ns / 1e9).date()
        for day in (arrived, date.fromordinal(arrived.toordinal() - 1)):
            template = _dated_name(f.name, day)
            if template is not None:
                days_of[(f.folder, template)].add(day)
                break
    return [
        Arrival(folder, template, frozenset(days))
        for (folder, template), days in sorted(days_of.items())
        if len(days) >= MIN_DAYS
    ]
