"""Read-only listings of folders below the ALMA root, for the planners.

Every folder is reached through directory fds with ``O_NOFOLLOW`` (:mod:`actions.safefs`), and
every entry is ``lstat``-ed relative to its folder's fd, so a symlink is seen as a symlink and
never followed. A scan keeps only what an action may safely touch later; everything else is
reported in ``skipped`` with the reason (in the person's language, :mod:`policies.i18n`, since
it ends up in a suggestion's evidence), so a person can see why a file was left out:

- names :func:`~actions.safefs.check_name` refuses (newline and other control characters,
  invalid UTF-8, which ``os.listdir`` gives as surrogate escapes, more than 255 bytes);
- symlinks, and anything that is not a regular file or a folder (fifos, sockets, devices);
- hard-linked files (``st_nlink > 1``): other names share the bytes, moving one name is a
  surprise and trashing one frees nothing;
- the engine's own temp files (``.alma-tmp-*``), which belong to an action in flight;
- files changed (``mtime``) less than ``settle_seconds`` before ``now``: something may still be
  writing them. ``mtime`` and not ``ctime`` is the clock, because ``ctime`` moves on every
  rename and chmod; a future ``mtime`` counts as "just changed" and is left alone too.

The recursive :func:`scan_tree` walks breadth first with bounds on files, folders and depth, and
never descends into symlinks, ``.alma/``, hidden folders, dependency and cache folders, or the
folders it is told to exclude (read-only zones).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from actions.ops import FileKind, Identity
from actions.safe_read import open_regular
from actions.safefs import NAME_MAX, check_name, identity_of, kind_of, open_dir, split_relpath
from actions.tree import Tree
from policies.errors import RefusedError
from policies.i18n import _
from policies.layout import ENGINE_TMP_PREFIX
from policies.text import printable_name

#: Folders a recursive scan never enters: ALMA's own data, and trees that tools own (moving or
#: trashing a file in them breaks a program, and they hold many files no person placed).
SKIP_DIR_NAMES = frozenset(
    {
        ".alma",
        "node_modules",
        "__pycache__",
        "site-packages",
        "venv",
        ".venv",
        ".git",
        ".hg",
        ".svn",
        ".tox",
        ".cache",
    }
)


def local_time(seconds: float) -> datetime | None:
    """A file time (``mtime_ns / 1e9``) as local time; None when it is no date Python can hold
    (before year 1 or after 9999): tmpfs, btrfs and XFS keep such times (``touch -d``, a
    broken camera clock, an archive), and one of them must not stop an analysis."""
    try:
        return datetime.fromtimestamp(seconds)
    except (ValueError, OverflowError, OSError):
        return None


@dataclass(frozen=True)
class ScannedFile:
    """A regular file an action may touch, as it was when scanned."""

    path: str  # root-relative, "/"-separated
    name: str
    identity: Identity

    @property
    def folder(self) -> str:
        return self.path.rpartition("/")[0]


@dataclass(frozen=True)
class Skipped:
    path: str  # root-relative and printable (hostile bytes shown escaped)
    reason: str


@dataclass(frozen=True)
class FolderScan:
    """One folder's direct entries.

    ``entries`` names every entry present with its kind, skipped ones included, so a planner
    never picks a destination that exists. ``peeked`` holds the entry names of the subfolders
    the caller asked to look into (an organize planner's destinations).
    """

    folder: str
    files: tuple[ScannedFile, ...]
    entries: Mapping[str, FileKind]
    skipped: tuple[Skipped, ...]
    peeked: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def subfolders(self) -> tuple[str, ...]:
        return tuple(sorted(n for n, k in self.entries.items() if k == "dir"))


@dataclass(frozen=True)
class TreeScan:
    """A bounded recursive scan: the folders in breadth-first order."""

    top: str
    folders: tuple[FolderScan, ...]
    skipped: tuple[Skipped, ...]  # folders not entered, with the reason
    truncated: bool  # a bound was reached: some folders or files were not listed

    @property
    def files(self) -> list[ScannedFile]:
        return [f for folder in self.folders for f in folder.files]

    def all_skipped(self) -> list[Skipped]:
        return [*self.skipped, *(s for folder in self.folders for s in folder.skipped)]


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _refusal(name: str) -> str | None:
    """Why check_name refuses ``name``, in the person's language (None when it is fine)."""
    try:
        check_name(name, where="name")
    except RefusedError:
        if any(ord(c) < 32 or ord(c) == 127 for c in name):
            return _("the name has a control character (such as a line break); rename it")
        try:
            encoded = name.encode("utf-8")
        except UnicodeEncodeError:
            return _("the name is not valid UTF-8; rename it")
        if len(encoded) > NAME_MAX:
            return _("the name is longer than {limit} bytes", limit=NAME_MAX)
        return _("ALMA does not accept that name")
    return None


def _list_fd(fd: int) -> list[str]:
    # listdir on an fd gives str names; undecodable bytes come back as surrogate escapes, which
    # check_name refuses and os functions encode back to the original bytes.
    return sorted(os.listdir(fd))


def _classify(
    folder: str,
    fd: int,
    name: str,
    *,
    cutoff_ns: int | None,
    entries: dict[str, FileKind],
    files: list[ScannedFile],
    skipped: list[Skipped],
) -> os.stat_result | None:
    """Record one entry; return its stat when it is a folder worth entering."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:  # gone since the listing
        return None
    kind = kind_of(st)
    entries[name] = kind
    refusal = _refusal(name)
    if refusal is None:
        if kind == "dir":
            return st
        refusal = _file_refusal(name, kind, st, cutoff_ns)
        if refusal is None:
            files.append(ScannedFile(path=_join(folder, name), name=name, identity=identity_of(st)))
            return None
    # Only a skipped entry is shown: escaping every name of a large tree would weigh on a scan.
    skipped.append(Skipped(_join(folder, printable_name(name)), refusal))
    return None


def _file_refusal(
    name: str, kind: FileKind, st: os.stat_result, cutoff_ns: int | None
) -> str | None:
    """Why an entry with an acceptable name, not a folder, is not a file an action may touch."""
    if kind == "symlink":
        return _("it is a symbolic link: ALMA never follows or moves links")
    if kind != "file":
        return _("it is not a regular file (a device, fifo or socket)")
    if name.startswith(ENGINE_TMP_PREFIX):
        return _("it is a temporary file of an ALMA action in progress")
    if st.st_nlink > 1:
        return _("it has {n} hard links: other names share its bytes", n=st.st_nlink)
    if cutoff_ns is not None and st.st_mtime_ns > cutoff_ns:
        return _("it changed very recently (it may still be being written)")
    return None


def _cutoff_ns(now: float, settle_seconds: float | None) -> int | None:
    if settle_seconds is None:
        return None
    return int((now - settle_seconds) * 1_000_000_000)


def _scan_fd(
    fd: int, folder: str, *, cutoff_ns: int | None
) -> tuple[FolderScan, list[tuple[str, os.stat_result]]]:
    entries: dict[str, FileKind] = {}
    files: list[ScannedFile] = []
    skipped: list[Skipped] = []
    dirs: list[tuple[str, os.stat_result]] = []
    for name in _list_fd(fd):
        st = _classify(
            folder, fd, name, cutoff_ns=cutoff_ns, entries=entries, files=files, skipped=skipped
        )
        if st is not None:
            dirs.append((name, st))
    scan = FolderScan(folder=folder, files=tuple(files), entries=entries, skipped=tuple(skipped))
    return scan, dirs


def scan_folder(
    tree: Tree,
    folder: str,
    *,
    now: float,
    settle_seconds: float,
    peek: Callable[[str], bool] | None = None,
) -> FolderScan:
    """The direct entries of ``folder`` (root-relative).

    ``peek`` selects subfolders whose entry names are listed too (in ``peeked``), so a planner
    can check that a destination inside them is free. Raises FileNotFoundError when the folder
    is missing and RefusedError when a component of it is a symlink.
    """
    fd = tree.dir(tuple(split_relpath(folder)))
    scan, _dirs = _scan_fd(fd, folder, cutoff_ns=_cutoff_ns(now, settle_seconds))
    return scan if peek is None else _peek(fd, scan, peek)


def peek_into(tree: Tree, scan: FolderScan, peek: Callable[[str], bool]) -> FolderScan:
    """``scan`` (a folder a tree scan listed) with the entry names of the subfolders ``peek``
    selects, as :func:`scan_folder` gives them, without listing the folder's files again.
    Raises as :func:`scan_folder` does when the folder is gone or is now a link."""
    return _peek(tree.dir(tuple(split_relpath(scan.folder))), scan, peek)


def _peek(fd: int, scan: FolderScan, peek: Callable[[str], bool]) -> FolderScan:
    peeked: dict[str, frozenset[str]] = {}
    for name, kind in scan.entries.items():
        if kind != "dir" or _refusal(name) is not None or not peek(name):
            continue
        try:
            sub = open_dir(fd, [name])
        except (FileNotFoundError, RefusedError):  # replaced since the listing
            continue
        try:
            peeked[name] = frozenset(os.listdir(sub))
        finally:
            os.close(sub)
    return replace(scan, peeked=peeked)


def _inside(parts: tuple[str, ...], others: Iterable[tuple[str, ...]]) -> bool:
    return any(parts[: len(o)] == o for o in others)


def scan_tree(
    tree: Tree,
    top: str,
    *,
    now: float,
    settle_seconds: float | None,
    exclude: Collection[str] = (),
    max_files: int = 20_000,
    max_folders: int = 2_000,
    max_depth: int = 8,
) -> TreeScan:
    """Every folder below ``top`` (itself included), breadth first, within the bounds.

    ``exclude`` names root-relative folders never entered (read-only zones inside ``top``).
    ``settle_seconds=None`` keeps files however recent (for reading, as the log detectors do).
    Folders are reopened from the root fd one component at a time rather than kept open, so a
    wide tree never exhausts file descriptors and every step is an ``O_NOFOLLOW`` open. Raises
    FileNotFoundError when ``top`` is missing and RefusedError when it is (behind) a symlink.
    """
    folders: list[FolderScan] = []
    nfiles = 0
    truncated = False
    walk = FolderWalk(
        tree,
        top,
        now=now,
        settle_seconds=settle_seconds,
        exclude=exclude,
        max_folders=max_folders,
        max_depth=max_depth,
        stop=lambda: nfiles >= max_files,
    )
    for scan in walk:
        if nfiles + len(scan.files) > max_files:
            scan = replace(scan, files=scan.files[: max_files - nfiles])
            truncated = True
        nfiles += len(scan.files)
        folders.append(scan)
    return TreeScan(top, tuple(folders), tuple(walk.skipped), truncated or walk.truncated)


class FolderWalk:
    """The folders below ``top`` (itself included), breadth first, one listing at a time: what
    :func:`scan_tree` keeps within its bound on files, and what a planner that needs every
    folder but only one at a time (organize's search for messy folders) walks on its own.
    ``stop`` is asked before each folder is listed; ``skipped`` and ``truncated`` are known
    once the walk ends. Raises as :func:`scan_tree` does when ``top`` is missing or a link."""

    def __init__(
        self,
        tree: Tree,
        top: str,
        *,
        now: float,
        settle_seconds: float | None,
        exclude: Collection[str] = (),
        max_folders: int = 2_000,
        max_depth: int = 8,
        stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.tree = tree
        self.top = top
        self.cutoff = _cutoff_ns(now, settle_seconds)
        self.exclude = exclude
        self.max_folders = max_folders
        self.max_depth = max_depth
        self.stop = stop
        self.skipped: list[Skipped] = []
        self.truncated = False

    def __iter__(self) -> Iterator[FolderScan]:
        top_parts = tuple(split_relpath(self.top))
        excluded = [tuple(split_relpath(e)) for e in self.exclude]
        if _inside(top_parts, [(".alma",), *excluded]):
            self.skipped.append(Skipped(self.top, _("it is read-only or ALMA's own")))
            return
        queue: deque[tuple[str, ...]] = deque([top_parts])
        listed = 0
        while queue:
            parts = queue.popleft()
            if listed >= self.max_folders or self.stop():
                self.truncated = True
                return
            fd = _open_walked(self.tree, parts, top_parts)
            if fd is None:
                continue
            try:
                folder = "/".join(parts)
                scan, dirs = _scan_fd(fd, folder, cutoff_ns=self.cutoff)
            finally:
                os.close(fd)
            listed += 1
            for name, _st in dirs:
                child = (*parts, name)
                shown = _join(folder, name)
                if not _enters(name):
                    self.skipped.append(
                        Skipped(shown, _("a hidden folder, a tool's or ALMA's own"))
                    )
                elif _inside(child, excluded):
                    self.skipped.append(Skipped(shown, _("a read-only zone")))
                elif len(child) - len(top_parts) > self.max_depth:
                    self.skipped.append(
                        Skipped(shown, _("deeper than {n} levels", n=self.max_depth))
                    )
                    self.truncated = True
                else:
                    queue.append(child)
            yield scan


def _open_walked(tree: Tree, parts: tuple[str, ...], top_parts: tuple[str, ...]) -> int | None:
    """A folder of a walk, opened from the root one ``O_NOFOLLOW`` component at a time; None
    when it was replaced by a link or removed since its parent was listed (the top raises)."""
    try:
        return open_dir(tree.root_fd, list(parts))
    except (FileNotFoundError, RefusedError):
        if parts == top_parts:
            raise
        return None


def _enters(name: str) -> bool:
    """Whether a walk goes into a subfolder of this name (hidden ones, tools' and ALMA's own
    are left out)."""
    return name not in SKIP_DIR_NAMES and not name.startswith(".")


def find_named(
    tree: Tree, top: str, names: Collection[str], *, max_folders: int = 2_000, max_depth: int = 8
) -> dict[str, str]:
    """Root-relative paths of regular files below ``top`` named one of ``names`` (the first
    found, breadth first, for each name), entering the folders :func:`scan_tree` enters within
    the same bounds. Only the matches are examined: the other entries are told apart by the
    directory's own entry types (``scandir``), not a ``stat`` each, so looking for a script by
    name in 20,000 files costs a listing of the folders, not a scan. Raises as scan_tree does
    when ``top`` is missing or a link."""
    top_parts = tuple(split_relpath(top))
    queue: deque[tuple[str, ...]] = deque([top_parts])
    found: dict[str, str] = {}
    folders = 0
    while queue and folders < max_folders and len(found) < len(names):
        parts = queue.popleft()
        fd = _open_walked(tree, parts, top_parts)
        if fd is None:
            continue
        folders += 1
        try:
            with os.scandir(fd) as entries:
                listed = sorted(entries, key=lambda e: e.name)
            for entry in listed:
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    deep = len(parts) - len(top_parts) >= max_depth
                    if _enters(name) and not deep and _refusal(name) is None:
                        queue.append((*parts, name))
                elif name in names and name not in found and _refusal(name) is None:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if kind_of(st) == "file":
                        found[name] = _join("/".join(parts), name)
        finally:
            os.close(fd)
    return found


#: (dev, inode, size, mtime_ns) -> sha256: what a caller may keep between scans.
HashCache = MutableMapping[tuple[int, int, int, int], str]


def with_sha256(
    tree: Tree,
    files: Iterable[ScannedFile],
    *,
    max_bytes: int | None = None,
    cache: HashCache | None = None,
) -> tuple[list[ScannedFile], list[Skipped]]:
    """The files with ``identity.sha256`` filled in, read through fds without following links.

    The hash is taken between two ``fstat`` of the same fd that must both match the scanned
    identity, so a file changed while (or since) it was scanned is dropped, never hashed as
    something it no longer is. Hashing stops (the rest reported as skipped) after ``max_bytes``.
    ``cache`` (kept by the caller between scans) spares re-reading a file whose identity did
    not change; a periodic rescan then costs a listing, not a read of every candidate.
    """
    out: list[ScannedFile] = []
    skipped: list[Skipped] = []
    budget = max_bytes
    for f in files:
        ident = f.identity
        key = (ident.dev, ident.ino, ident.size, ident.mtime_ns)
        if cache is not None and key in cache:
            out.append(replace(f, identity=ident._replace(sha256=cache[key])))
            continue
        if budget is not None and f.identity.size > budget:
            skipped.append(Skipped(f.path, _("not checked: this scan has read all it may")))
            continue
        digest = _hash_if_same(tree, f)
        if digest is None:
            skipped.append(Skipped(f.path, _("it changed or disappeared during the scan")))
            continue
        if budget is not None:
            budget -= f.identity.size
        if cache is not None:
            cache[key] = digest
        out.append(replace(f, identity=f.identity._replace(sha256=digest)))
    return out, skipped


def open_scanned(tree: Tree, f: ScannedFile) -> int | None:
    """A read-only fd on a scanned file (see :func:`actions.safe_read.open_regular`); None
    when it is gone."""
    opened = open_regular(tree, f.path)
    return None if opened is None else opened[0]


def _hash_if_same(tree: Tree, f: ScannedFile) -> str | None:
    fd = open_scanned(tree, f)
    if fd is None:
        return None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode) or not f.identity.same_file(identity_of(before)):
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        after = os.fstat(fd)
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            return None
        return digest.hexdigest()
    finally:
        os.close(fd)
