"""``organize``: a folder's loose files into subfolders, by type (``images/``...) or by month.

The subfolders of types are named in the person's language: the caller passes ``folders``
(category -> its names, the first one created, the others reused when a folder already has
one of them, e.g. ``images/`` made before the person's language was Spanish); by default the
category names themselves (:func:`english_folders`). The daemon builds them with
:func:`policies.i18n.folder_name`.

Rules, in the order they apply:

- Only the folder's direct regular files move ("loose files"); subfolders are never touched.
  Hidden files (``.name``) and temp files stay: they belong to programs, and ``temp_cleanup``
  deals with the latter.
- A folder that is a code or tool project (``.git``, ``pyproject.toml``, ``package.json``,
  ``Makefile``... see :data:`PROJECT_MARKERS`) is never organized: moving its files by type
  would break it.
- By type, the group is the category of the extension (:mod:`actions.planners.categories`);
  by month, the ``YYYY-MM`` of the file's ``mtime`` in local time (a file whose time is no
  date, before year 1 or after 9999, stays where it is).
- A group whose subfolder exists as a folder reuses it (one whose name differs only by case,
  like ``Images``, too: on a case-insensitive disk it is the same folder). If the name exists
  as anything else, the group gets no plan and the evidence says so.
- A destination that exists, even differing only by case, is never chosen: that file stays
  and the evidence says so. A subfolder the scan did not look into counts as "unknown" and
  its group stays put.
- When all the loose files belong to one group whose subfolder does not exist yet, there is
  nothing to organize (no plan): that would only add a level. Moving them into an existing
  subfolder is fine.

Ops: one ``Mkdir`` per subfolder to create, then ``Move`` ops with ``expect`` = the identity
seen by the scan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from actions.ops import Mkdir, Move, Op
from actions.planners.base import PlanResult, cap_evidence, fingerprint, identity_key
from actions.planners.categories import CATEGORIES, category_of
from actions.planners.temp_cleanup import is_temp_name
from actions.scan import FolderScan, ScannedFile, local_time
from policies.i18n import LANGUAGES, _, folder_name, ngettext

KIND = "organize"
OrganizeBy = Literal["type", "month"]
#: Entries that mark a folder as a project some tool owns.
PROJECT_MARKERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "pyproject.toml",
        "setup.py",
        "package.json",
        "Cargo.toml",
        "go.mod",
        "Makefile",
        "CMakeLists.txt",
        "pom.xml",
        "build.gradle",
        "Gemfile",
        "composer.json",
    }
)
_MONTH = re.compile(r"^\d{4}-\d{2}$")
#: Category -> the names of its folder, the one to create first.
Folders = Mapping[str, Sequence[str]]


def english_folders() -> dict[str, tuple[str, ...]]:
    return {category: (category,) for category in CATEGORIES}


def folders_for(lang: str) -> dict[str, tuple[str, ...]]:
    """Folder names in ``lang`` first, then those of the other languages (reused if present)."""
    return {
        category: tuple(
            dict.fromkeys(
                [
                    folder_name(category, lang),
                    *(folder_name(category, other) for other in LANGUAGES),
                ]
            )
        )
        for category in CATEGORIES
    }


def destination_filter(by: OrganizeBy, folders: Folders | None = None) -> Callable[[str], bool]:
    """Which subfolders a scan must look into (``scan_folder(peek=...)``) for this planner."""
    if by == "month":
        return lambda name: bool(_MONTH.match(name))
    names = folders if folders is not None else english_folders()
    folds = frozenset(name.casefold() for group in names.values() for name in group)
    return lambda name: name.casefold() in folds


def loose_files(scan: FolderScan) -> list[ScannedFile]:
    """The files organize would consider moving."""
    return [f for f in scan.files if not f.name.startswith(".") and not is_temp_name(f.name)]


def is_project(scan: FolderScan) -> bool:
    return any(name in PROJECT_MARKERS for name in scan.entries)


def group_of(f: ScannedFile, by: OrganizeBy) -> str | None:
    """The file's group; None by month when its time is no date (it stays where it is)."""
    if by == "month":
        when = local_time(f.identity.mtime_ns / 1e9)
        return None if when is None else when.strftime("%Y-%m")
    return category_of(f.name)


def _existing_folder(scan: FolderScan, names: Sequence[str]) -> tuple[str | None, str | None]:
    """(name of the existing subfolder to use, or None to create ``names[0]``; why the group is
    blocked). Any of ``names`` that is a folder is used, the first one preferred."""
    folds = {name.casefold() for name in names}
    for name in names:
        if scan.entries.get(name) == "dir":
            return name, None
    variants = sorted(n for n in scan.entries if n.casefold() in folds)
    for name in variants:
        if scan.entries[name] == "dir":
            return name, None
    # Only the name to create can be in the way; another language's name that is a file is not.
    wanted = names[0].casefold()
    for name in [names[0], *variants]:
        if name in scan.entries and name.casefold() == wanted:
            return None, _("“{name}” already exists and is not a folder", name=name)
    return None, None


def _placements(
    scan: FolderScan, groups: dict[str, list[ScannedFile]], notes: list[str], folders: Folders
) -> list[tuple[str, bool, list[ScannedFile]]]:
    """(destination subfolder, whether it must be created, files that can go there) per group;
    why a group or a file stays goes to ``notes``."""
    out: list[tuple[str, bool, list[ScannedFile]]] = []
    for group in sorted(groups):
        members = sorted(groups[group], key=lambda f: f.name)
        names = folders.get(group) or (group,)
        dest, blocked = _existing_folder(scan, names)
        if blocked:
            notes.append(
                ngettext(
                    "{n} file of {group}: {why}",
                    "{n} files of {group}: {why}",
                    len(members),
                    group=names[0],
                    why=blocked,
                )
            )
            continue
        if dest is not None and dest not in scan.peeked:
            notes.append(
                _(
                    "{group}: “{folder}” could not be looked into, so its files stay",
                    group=names[0],
                    folder=dest,
                )
            )
            continue
        taken = frozenset(n.casefold() for n in scan.peeked.get(dest or "", ()))
        placed: list[ScannedFile] = []
        for f in members:
            if dest is not None and f.name.casefold() in taken:
                notes.append(
                    _(
                        "{path}: {folder}/ already has one with that name; it stays",
                        path=f.path,
                        folder=dest,
                    )
                )
            else:
                placed.append(f)
        if placed:
            out.append((dest or names[0], dest is None, placed))
    return out


def plan_organize(
    scan: FolderScan,
    *,
    by: OrganizeBy = "type",
    max_ops: int | None = None,
    folders: Folders | None = None,
) -> PlanResult | None:
    """The organize plan for one folder's scan, or None when there is nothing sound to do.

    With ``max_ops``, only that many files move (the first groups in name order); the rest wait
    for the next scan. ``folders`` names the subfolders of types (see the module docstring).
    """
    folders = folders if folders is not None else english_folders()
    if is_project(scan):
        return None
    notes: list[str] = [
        _("{path}: stays ({reason})", path=s.path, reason=s.reason) for s in scan.skipped
    ]
    groups: dict[str, list[ScannedFile]] = {}
    for f in loose_files(scan):
        group = group_of(f, by)
        if group is None:
            reason = _("its modification time is no date")
            notes.append(_("{path}: stays ({reason})", path=f.path, reason=reason))
            continue
        groups.setdefault(group, []).append(f)
    placements = _placements(scan, groups, notes, folders)
    if not placements or (len(groups) == 1 and placements[0][1]):
        # nothing can move, or all the loose files would land in one new subfolder: that only
        # adds a level
        return None
    total = sum(len(placed) for _dest, _new, placed in placements)
    if max_ops is not None and total > max_ops:
        notes.insert(
            0,
            _(
                "Only {count} of {total} files (the limit of one plan); the rest, later.",
                count=max_ops,
                total=total,
            ),
        )
        budget, capped = max_ops, []
        for dest, new, placed in placements:
            if budget > 0:
                capped.append((dest, new, placed[:budget]))
                budget -= len(capped[-1][2])
        placements = capped
    mkdirs: list[Op] = [
        Mkdir(path=f"{scan.folder}/{dest}") for dest, new, _placed in placements if new
    ]
    moves: list[Op] = []
    depends: list[str] = [f"by={by}"]
    evidence: list[str] = []
    for dest, _new, placed in placements:
        for f in placed:
            moves.append(Move(src=f.path, dst=f"{scan.folder}/{dest}/{f.name}", expect=f.identity))
            depends.append(identity_key(f.path, f.identity))
        names = [f.name for f in placed]
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        evidence.append(
            ngettext(
                "{folder}/: {n} file ({names})",
                "{folder}/: {n} files ({names})",
                len(names),
                folder=dest,
                names=shown,
            )
        )
    if by == "type":
        title = _("Organize {folder} by file type", folder=scan.folder)
        groups_text = ngettext("{n} type", "{n} types", len(placements))
    else:
        title = _("Organize {folder} by month", folder=scan.folder)
        groups_text = ngettext("{n} month", "{n} months", len(placements))
    return PlanResult(
        kind=KIND,
        target=scan.folder,
        title=title,
        reason=ngettext(
            "{n} loose file of {groups}",
            "{n} loose files of {groups}",
            len(moves),
            groups=groups_text,
        ),
        evidence=cap_evidence(evidence + notes),
        plan=mkdirs + moves,
        files=len(moves),
        fingerprint=fingerprint(KIND, scan.folder, depends),
    )
