"""File findings in the writable zones: messy folders, duplicates, old temp files.

One bounded breadth-first scan per writable zone (:func:`actions.scan.scan_tree`) feeds all
three planners, so a zone is listed once per run:

- ``organize``: the zone and its subfolders down to ``organize_depth`` levels, each with at
  least ``monitor.messy_folder_files`` loose files (:func:`actions.planners.loose_files`), one
  suggestion per folder, at most ``max_organize`` per zone (the most crowded of those with
  something to organize: tidy folders never take a messy one's place, and when the zone is
  larger than one scan holds its folders are walked again one at a time); only the
  subfolders its files would go to are listed besides (:func:`actions.scan.peek_into`).
- ``duplicates``: one suggestion per zone (a group of copies often spans folders, and the file
  kept must be chosen once for the whole zone); only size-equal candidates are hashed, within
  ``hash_bytes`` per zone.
- ``temp_cleanup``: one suggestion per zone.

:func:`plan_organize_folder` plans one folder again another way (the grouping a person's
reason asks for there: agent.memory.recall), as ``organize`` would.

Plans are capped at ``thresholds.max_files`` ops, since a larger one would be refused outright.
Read-only zones, ``system/`` and ``.alma/`` are never scanned: a writable zone inside one is
skipped, and one inside a writable zone is not entered.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from actions.planners import (
    PlanResult,
    destination_filter,
    folders_for,
    loose_files,
    plan_dedupe,
    plan_organize,
    plan_temp_cleanup,
    size_candidates,
)
from actions.planners.organize import Folders, OrganizeBy
from actions.scan import (
    FolderScan,
    FolderWalk,
    HashCache,
    TreeScan,
    peek_into,
    scan_folder,
    scan_tree,
    with_sha256,
)
from actions.tree import Tree
from policies.config import Policy
from policies.errors import RefusedError
from policies.i18n import _, process_language


@dataclass(frozen=True)
class FileLimits:
    max_files: int = 20_000  # files listed per zone (more when the policy's max_files is)
    max_folders: int = 2_000  # folders listed per zone
    max_depth: int = 8  # levels below the zone
    organize_depth: int = 3  # a messy folder deeper than this is not proposed
    max_organize: int = 20  # organize suggestions per zone and run
    hash_bytes: int = 1 << 30  # bytes hashed per zone and run when looking for duplicates


def _inside(parts: tuple[str, ...], other: tuple[str, ...]) -> bool:
    return parts[: len(other)] == other


def scan_zones(policy: Policy) -> list[tuple[str, list[str]]]:
    """(zone, folders inside it not to enter) for each writable zone worth scanning."""
    read_only = policy.zones.read_only_parts()
    writable = policy.zones.writable_parts()
    out: list[tuple[str, list[str]]] = []
    for parts in dict.fromkeys(writable):
        if any(_inside(parts, ro) for ro in read_only):
            continue  # a writable zone inside a read-only one stays read-only
        if any(w != parts and _inside(parts, w) for w in writable):
            continue  # scanned as part of the zone that holds it
        excluded = ["/".join(ro) for ro in read_only if ro != parts and _inside(ro, parts)]
        out.append(("/".join(parts), excluded))
    return out


def _partial(result: PlanResult | None, scan: TreeScan) -> list[PlanResult]:
    if result is None:
        return []
    if not scan.truncated:
        return [result]
    note = _("Partial scan: the zone has more files or folders than are looked at in one go.")
    return [dataclasses.replace(result, evidence=[*result.evidence, note])]


def detect_files(
    root: Path,
    policy: Policy,
    now: float,
    *,
    limits: FileLimits | None = None,
    hash_cache: HashCache | None = None,
) -> list[PlanResult]:
    """Every file finding in the writable zones, as plans built from what is on disk now.

    ``hash_cache``, a dict the caller keeps between runs, spares re-hashing unchanged files.
    """
    lim = limits or FileLimits()
    monitor = policy.monitor
    max_ops = policy.thresholds.max_files
    results: list[PlanResult] = []
    with Tree(root) as tree:
        for zone, excluded in scan_zones(policy):
            try:
                scan = scan_tree(
                    tree,
                    zone,
                    now=now,
                    settle_seconds=monitor.settle_seconds,
                    exclude=excluded,
                    # A person who raised max_files asked for actions that large.
                    max_files=max(lim.max_files, max_ops),
                    max_folders=lim.max_folders,
                    max_depth=lim.max_depth,
                )
            except (FileNotFoundError, NotADirectoryError, RefusedError):
                continue  # a missing zone, or one that is a link: nothing ALMA may touch
            results += _organize(tree, zone, scan, policy, lim, excluded=excluded, now=now)
            hashed, _unread = with_sha256(
                tree, size_candidates(scan.files), max_bytes=lim.hash_bytes, cache=hash_cache
            )
            results += _partial(plan_dedupe(zone, hashed, max_ops=max_ops), scan)
            temp = plan_temp_cleanup(
                zone, scan.files, now=now, age_days=monitor.temp_age_days, max_ops=max_ops
            )
            results += _partial(temp, scan)
    return results


def _organize(
    tree: Tree,
    zone: str,
    scan: TreeScan,
    policy: Policy,
    lim: FileLimits,
    *,
    excluded: list[str],
    now: float,
) -> list[PlanResult]:
    """The most crowded folders with something to organize, at most ``max_organize``: a folder
    with nothing to organize (one type, a project) never takes the place of a messy one. When
    the zone's scan stopped at its bound on files, the folders are walked again one at a
    time (each listed, judged and let go), so tidy folders however many never hide one."""
    by = policy.monitor.organize_by
    folders = folders_for(process_language())  # the daemon's language, not a request's
    depth0 = zone.count("/")
    listed: Iterable[FolderScan] = scan.folders
    if scan.truncated:
        listed = FolderWalk(
            tree,
            zone,
            now=now,
            settle_seconds=policy.monitor.settle_seconds,
            exclude=excluded,
            max_folders=lim.max_folders,
            max_depth=min(lim.max_depth, lim.organize_depth),
        )
    found: list[tuple[int, str, PlanResult]] = []
    for folder in listed:
        if folder.folder.count("/") - depth0 > lim.organize_depth:
            continue
        count = len(loose_files(folder))
        if count < policy.monitor.messy_folder_files:
            continue
        if len(found) >= lim.max_organize and (-count, folder.folder) >= found[-1][:2]:
            continue  # less crowded than every one kept: not planned at all
        try:  # the destinations looked into; the files are as the zone's scan just saw them
            full = peek_into(tree, folder, destination_filter(by, folders))
        except (FileNotFoundError, NotADirectoryError, RefusedError):
            continue
        result = _plan(full, policy, by, folders)
        if result is not None:
            bisect.insort(found, (-count, folder.folder, result), key=lambda m: m[:2])
            del found[lim.max_organize :]
    return [result for _count, _folder, result in found]


def _plan(scan: FolderScan, policy: Policy, by: OrganizeBy, folders: Folders) -> PlanResult | None:
    return plan_organize(scan, by=by, max_ops=policy.thresholds.max_files, folders=folders)


def plan_organize_folder(
    root: Path, folder: str, policy: Policy, by: OrganizeBy, *, now: float
) -> PlanResult | None:
    """The organize plan for one folder the detectors flagged, grouped ``by`` (None when the
    folder is gone, is a link, or has nothing to organize that way)."""
    folders = folders_for(process_language())
    with Tree(root) as tree:
        try:
            scan = scan_folder(
                tree,
                folder,
                now=now,
                settle_seconds=policy.monitor.settle_seconds,
                peek=destination_filter(by, folders),
            )
        except (FileNotFoundError, NotADirectoryError, RefusedError):
            return None  # the folder is gone, is no folder or is out of reach: nothing to plan
    return _plan(scan, policy, by, folders)
