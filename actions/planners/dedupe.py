"""``duplicates``: identical files; keep one of each group, trash the others (restorable).

Rules:

- Candidates are people's content files only: images, documents, spreadsheets, presentations,
  audio, video, archives (:data:`DEDUPE_CATEGORIES`), not empty, not hidden, not temp. Code,
  data and unknown types are left out on purpose: two identical ``__init__.py`` or
  ``config.json`` in two projects are both needed.
- Files are grouped by size first (:func:`size_candidates`), and only those are hashed (full
  sha256 through fds, :func:`actions.scan.with_sha256`); a group is files of equal size and
  hash. Two names of one inode are one file, never duplicates of each other.
- The one kept (:func:`keep_order`): first the copy that lives where the person keeps things
  (:func:`stray_signs`: not in a downloads folder or a phone dump, not named as a copy, so an
  album keeps its photo when a ``cp -p`` or a phone sync gave the copies the same time), then
  the oldest ``mtime`` (most likely the original), then the shortest path (the least nested
  copy), then the first path in code-point order. The evidence says which of these decided.
- The others get ``Trash`` ops whose ``expect`` includes the sha256 the decision rests on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from actions.ops import Keep, Op, Trash, files_touched
from actions.planners.base import PlanResult, cap_evidence, fingerprint, identity_key
from actions.planners.categories import category_of
from actions.planners.temp_cleanup import is_temp_name
from actions.scan import ScannedFile
from policies.i18n import _, ngettext

KIND = "duplicates"
DEDUPE_CATEGORIES = frozenset(
    {"images", "documents", "spreadsheets", "presentations", "audio", "video", "archives"}
)


def _eligible(f: ScannedFile) -> bool:
    return (
        f.identity.size > 0
        and not f.name.startswith(".")
        and not is_temp_name(f.name)
        and category_of(f.name) in DEDUPE_CATEGORIES
    )


def _one_name_per_inode(files: Iterable[ScannedFile]) -> list[ScannedFile]:
    seen: set[tuple[int, int]] = set()
    out: list[ScannedFile] = []
    for f in sorted(files, key=keep_order):
        key = (f.identity.dev, f.identity.ino)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


#: Folders things land in rather than are kept in: downloads, and what a phone or a chat app
#: dumps (DCIM/100ANDRO, Camera, WhatsApp Images, Telegram...).
_STRAY_FOLDER = re.compile(
    r"descargas?|downloads?|dcim|c[aá]mara|camera|camera ?roll|\d{3}[a-z_]+"
    r"|whatsapp.*|telegram.*"
)
#: Names a copy gets: "foo (1).jpg", "foo copia.jpg", "foo - copia", "Copy of foo", "foo-copy".
_COPY_NAME = re.compile(
    r"(?:\s*\(\d+\)|[\s_-]+(?:copia|copy)(?:[\s_-]*\(?\d+\)?)?)$|^(?:copy of|copia de)\s"
)


def stray_signs(path: str) -> tuple[bool, bool]:
    """(in a downloads folder or a phone dump, named as a copy): what makes a copy the one to
    let go; (False, False) is a place the person chose (an album, a project)."""
    *folders, name = path.casefold().split("/")
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return (
        any(_STRAY_FOLDER.fullmatch(folder) for folder in folders),
        bool(_COPY_NAME.search(stem)),
    )


def keep_order(f: ScannedFile) -> tuple[tuple[bool, bool], int, int, str]:
    """Sort key whose first element is the file to keep."""
    return (stray_signs(f.path), f.identity.mtime_ns, len(f.path), f.path)


def why_kept(keep: ScannedFile, copies: list[ScannedFile]) -> str:
    """The rule of :func:`keep_order` that chose ``keep`` over ``copies``, as a sentence."""
    signs = stray_signs(keep.path)
    others = [stray_signs(c.path) for c in copies]
    if any(s > signs for s in others):
        if not signs[0] and any(s[0] for s in others):
            return _("it is in a folder of yours, the others in downloads or a phone's folder")
        return _("it has the original name, the others a copy's name")
    if any(c.identity.mtime_ns > keep.identity.mtime_ns for c in copies):
        return _("it is the oldest")
    return _("the same place and age, and the shortest path")


def size_candidates(files: Iterable[ScannedFile]) -> list[ScannedFile]:
    """The eligible files that share their size with another file: the only ones worth hashing."""
    by_size: dict[int, list[ScannedFile]] = {}
    for f in files:
        if _eligible(f):
            by_size.setdefault(f.identity.size, []).append(f)
    # Names of one inode share its size, so one name per inode is kept within each size group:
    # the same files as over the whole list, without sorting every file of the zone.
    shared = (_one_name_per_inode(g) for g in by_size.values() if len(g) > 1)
    return sorted((f for g in shared if len(g) > 1 for f in g), key=lambda f: f.path)


def duplicate_groups(files: Iterable[ScannedFile]) -> list[list[ScannedFile]]:
    """Groups of identical files (hashed ones only), each sorted with the one to keep first."""
    groups: dict[tuple[int, str], list[ScannedFile]] = {}
    for f in _one_name_per_inode(f for f in files if _eligible(f)):
        if f.identity.sha256 is not None:
            groups.setdefault((f.identity.size, f.identity.sha256), []).append(f)
    found = [sorted(g, key=keep_order) for g in groups.values() if len(g) > 1]
    return sorted(found, key=lambda g: g[0].path)


def plan_dedupe(
    target: str, files: Iterable[ScannedFile], *, max_ops: int | None = None
) -> PlanResult | None:
    """Trash all but one of each group of identical ``files`` (with sha256); None if no group.

    With ``max_ops``, whole groups are taken in order until the next would pass the limit.
    """
    groups = duplicate_groups(files)
    notes: list[str] = []
    if max_ops is not None:
        taken: list[list[ScannedFile]] = []
        ops = 0
        for g in groups:
            if ops + len(g) - 1 > max_ops:
                break
            taken.append(g)
            ops += len(g) - 1
        if len(taken) < len(groups):
            notes.append(
                _(
                    "Only {count} of {total} groups (the limit of one plan); the rest, later.",
                    count=len(taken),
                    total=len(groups),
                )
            )
        groups = taken
    if not groups:
        return None
    plan: list[Op] = []
    depends: list[str] = []
    evidence: list[str] = []
    for keep, *copies in groups:
        depends += [identity_key(f.path, f.identity) for f in (keep, *copies)]
        plan.append(Keep(path=keep.path, expect=keep.identity))
        plan += [Trash(path=f.path, expect=f.identity) for f in copies]
        sha = keep.identity.sha256 or ""
        evidence.append(
            _(
                "Kept: {path} ({why}); to the trash: {copies} ({size} bytes, sha256 {sha}…)",
                path=keep.path,
                why=why_kept(keep, copies),
                copies=", ".join(f.path for f in copies),
                size=keep.identity.size,
                sha=sha[:12],
            )
        )
    trashed = files_touched(plan)  # the kept files are preconditions, not changes
    return PlanResult(
        kind=KIND,
        target=target,
        title=_("Remove duplicate files in {folder}", folder=target),
        reason=ngettext(
            "{n} identical copy of {files}",
            "{n} identical copies of {files}",
            trashed,
            files=ngettext("{n} file", "{n} files", len(groups)),
        ),
        evidence=cap_evidence(notes + evidence),
        plan=plan,
        files=trashed,
        fingerprint=fingerprint(KIND, target, depends),
    )
