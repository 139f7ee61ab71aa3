"""``organize``: a folder's loose files into subfolders, by type (``images/``...) or by month.

Rules, in the order they apply:

- Only the folder's direct regular files move ("loose files"); subfolders are never touched.
  Hidden files (``.name``) and temp files stay: they belong to programs, and ``temp_cleanup``
  deals with the latter.
- A folder that is a code or tool project (``.git``, ``pyproject.toml``, ``package.json``,
  ``Makefile``... see :data:`PROJECT_MARKERS`) is never organized: moving its files by type
  would break it.
- By type, the group is the category of the extension (:mod:`actions.planners.categories`);
  by month, the ``YYYY-MM`` of the file's ``mtime`` in local time.
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
from collections.abc import Callable
from datetime import datetime
from typing import Literal

from actions.ops import Mkdir, Move, Op
from actions.planners.base import PlanResult, cap_evidence, fingerprint, identity_key, plural
from actions.planners.categories import CATEGORIES, category_of
from actions.planners.temp_cleanup import is_temp_name
from actions.scan import FolderScan, ScannedFile

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
_CATEGORY_FOLDS = frozenset(c.casefold() for c in CATEGORIES)
_TITLE_BY = {"type": "por tipo de archivo", "month": "por mes"}


def destination_filter(by: OrganizeBy) -> Callable[[str], bool]:
    """Which subfolders a scan must look into (``scan_folder(peek=...)``) for this planner."""
    if by == "month":
        return lambda name: bool(_MONTH.match(name))
    return lambda name: name.casefold() in _CATEGORY_FOLDS


def loose_files(scan: FolderScan) -> list[ScannedFile]:
    """The files organize would consider moving."""
    return [f for f in scan.files if not f.name.startswith(".") and not is_temp_name(f.name)]


def is_project(scan: FolderScan) -> bool:
    return any(name in PROJECT_MARKERS for name in scan.entries)


def group_of(f: ScannedFile, by: OrganizeBy) -> str:
    if by == "month":
        return datetime.fromtimestamp(f.identity.mtime_ns / 1e9).strftime("%Y-%m")
    return category_of(f.name)


def _existing_folder(scan: FolderScan, group: str) -> tuple[str | None, str | None]:
    """(name of the existing subfolder to use, or None to create one; why the group is blocked)."""
    kind = scan.entries.get(group)
    if kind == "dir":
        return group, None
    if kind is not None:
        return None, f"«{group}» ya existe y no es una carpeta"
    variants = sorted(n for n in scan.entries if n.casefold() == group.casefold())
    for name in variants:
        if scan.entries[name] == "dir":
            return name, None
    if variants:
        return None, f"«{variants[0]}» ya existe y no es una carpeta"
    return None, None


def _placements(
    scan: FolderScan, groups: dict[str, list[ScannedFile]], notes: list[str]
) -> list[tuple[str, bool, list[ScannedFile]]]:
    """(destination subfolder, whether it must be created, files that can go there) per group;
    why a group or a file stays goes to ``notes``."""
    out: list[tuple[str, bool, list[ScannedFile]]] = []
    for group in sorted(groups):
        members = sorted(groups[group], key=lambda f: f.name)
        dest, blocked = _existing_folder(scan, group)
        if blocked:
            notes.append(f"{plural(len(members), 'archivo', 'archivos')} de {group}: {blocked}")
            continue
        if dest is not None and dest not in scan.peeked:
            notes.append(f"{group}: no se pudo revisar «{dest}», así que sus archivos se quedan")
            continue
        taken = frozenset(n.casefold() for n in scan.peeked.get(dest or "", ()))
        placed: list[ScannedFile] = []
        for f in members:
            if dest is not None and f.name.casefold() in taken:
                notes.append(f"{f.path}: ya existe uno con ese nombre en {dest}/; se queda")
            else:
                placed.append(f)
        if placed:
            out.append((dest or group, dest is None, placed))
    return out


def plan_organize(
    scan: FolderScan, *, by: OrganizeBy = "type", max_ops: int | None = None
) -> PlanResult | None:
    """The organize plan for one folder's scan, or None when there is nothing sound to do.

    With ``max_ops``, only that many files move (the first groups in name order); the rest wait
    for the next scan.
    """
    if is_project(scan):
        return None
    groups: dict[str, list[ScannedFile]] = {}
    for f in loose_files(scan):
        groups.setdefault(group_of(f, by), []).append(f)
    notes: list[str] = [f"{s.path}: se queda ({s.reason})" for s in scan.skipped]
    placements = _placements(scan, groups, notes)
    if not placements or (len(groups) == 1 and placements[0][1]):
        # nothing can move, or all the loose files would land in one new subfolder: that only
        # adds a level
        return None
    total = sum(len(placed) for _, _, placed in placements)
    if max_ops is not None and total > max_ops:
        notes.insert(
            0, f"Solo {max_ops} de {total} archivos (el límite de un plan); el resto, después."
        )
        budget, capped = max_ops, []
        for dest, new, placed in placements:
            if budget > 0:
                capped.append((dest, new, placed[:budget]))
                budget -= len(capped[-1][2])
        placements = capped
    mkdirs: list[Op] = [Mkdir(path=f"{scan.folder}/{dest}") for dest, new, _ in placements if new]
    moves: list[Op] = []
    depends: list[str] = [f"by={by}"]
    evidence: list[str] = []
    for dest, _new, placed in placements:
        for f in placed:
            moves.append(Move(src=f.path, dst=f"{scan.folder}/{dest}/{f.name}", expect=f.identity))
            depends.append(identity_key(f.path, f.identity))
        names = [f.name for f in placed]
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        evidence.append(f"{dest}/: {plural(len(names), 'archivo', 'archivos')} ({shown})")
    unit = ("tipo", "tipos") if by == "type" else ("mes", "meses")
    return PlanResult(
        kind=KIND,
        target=scan.folder,
        title=f"Ordenar {scan.folder} {_TITLE_BY[by]}",
        reason=(
            f"{plural(len(moves), 'archivo suelto', 'archivos sueltos')} "
            f"de {plural(len(placements), *unit)}"
        ),
        evidence=cap_evidence(evidence + notes),
        plan=mkdirs + moves,
        files=len(moves),
        fingerprint=fingerprint(KIND, scan.folder, depends),
    )
