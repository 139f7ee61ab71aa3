"""A root opened once, with its directories reached by fd walks and kept open while a plan runs.

Holding each directory's fd means a symlink swapped in after the walk cannot redirect an op: the
op acts on the directory that was walked. Walking again after a change goes through the same
``O_NOFOLLOW`` checks.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from actions.safefs import (
    FolderWatch,
    lstat_at,
    open_dir,
    open_root,
    plain_name,
    split_relpath,
    split_relpath_cached,
)
from policies.errors import ConflictError, RefusedError
from policies.i18n import _


class Tree:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root_fd = open_root(root)
        self._dirs: dict[tuple[str, ...], int] = {(): self.root_fd}
        #: (device, inode) of each cached directory when it was walked, to see it replaced.
        self._ids: dict[tuple[str, ...], tuple[int, int]] = {}
        #: Folder path -> its cached fd, for :meth:`parent` (every op asks it of two paths).
        self._folder_fds: dict[str, int] = {}
        #: Bumped whenever a cached fd is opened or closed: checks built from the cache
        #: (:meth:`quick_checks`) are valid only within one generation.
        self.generation = 0
        #: Folders watched for moves (verify_watched), made at its first call; ``_epoch`` is
        #: bumped whenever the watch reports anything, which voids every token handed out.
        #: ``_watched`` holds only folders whose fd is cached: the fd pins the inode, so no
        #: other folder can have that (dev, ino) meanwhile.
        self._watch: FolderWatch | None = None
        self._watched: set[tuple[int, int]] = set()
        self._epoch = 0

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs = {}
        self._ids = {}
        self._folder_fds = {}
        self.generation += 1
        if self._watch is not None:
            self._watch.close()

    def __enter__(self) -> Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def dir(self, parts: tuple[str, ...]) -> int:
        """The fd of directory ``parts`` (FileNotFoundError if missing, RefusedError if a link)."""
        fd = self._dirs.get(parts)
        if fd is not None:
            return fd
        parent = self.dir(parts[:-1])
        fd = open_dir(parent, [parts[-1]], label="/".join(parts))
        self._dirs[parts] = fd
        st = os.fstat(fd)
        self._ids[parts] = (st.st_dev, st.st_ino)
        self.generation += 1
        return fd

    def ensure_dir(self, parts: tuple[str, ...], mode: int) -> int:
        """The fd of directory ``parts``, creating the missing ones with exactly ``mode`` (not
        narrowed by the umask: see policies.modes), never through a link (RefusedError when a
        component is one)."""
        for i in range(1, len(parts) + 1):
            try:
                self.dir(parts[:i])
            except FileNotFoundError:
                try:
                    os.mkdir(parts[i - 1], mode, dir_fd=self.dir(parts[: i - 1]))
                except FileExistsError:
                    continue
                fd = self.dir(parts[:i])
                if stat.S_IMODE(os.fstat(fd).st_mode) != mode:
                    os.fchmod(fd, mode)
        return self.dir(parts)

    def verify(self, parts: tuple[str, ...]) -> None:
        """Check that the path ``parts`` still leads to the folder walked earlier.

        A cached fd keeps pointing at the folder it opened even after that folder is renamed
        away (into system/, say) and a symlink or another folder takes its name. Before an op
        acts through cached fds, every component is looked up again, without following links,
        in its parent: RefusedError when one became a symlink, ConflictError when one was moved
        or replaced. Components not walked yet are walked now, with the same checks.
        """
        self.verify_many((parts,))

    def verify_many(self, paths: Iterable[tuple[str, ...]]) -> None:
        """:meth:`verify` for several paths, each shared parent folder checked once."""
        self.verify_keys(prefixes(paths))

    def verify_keys(self, keys: Iterable[tuple[str, ...]]) -> None:
        """:meth:`verify` of each folder in ``keys``, given parents first (see :func:`prefixes`)."""
        for key in keys:
            if key not in self._dirs:
                try:
                    self.dir(key)
                except FileNotFoundError:
                    raise ConflictError(
                        _(
                            (
                                "{key!r} disappeared while the plan ran; ALMA stopped and took back what it "
                                "had done."
                            ),
                            key="/".join(key),
                        )
                    ) from None
                continue
            st = lstat_at(self._dirs[key[:-1]], key[-1])
            if st is not None and (st.st_dev, st.st_ino) == self._ids[key]:
                continue
            label = "/".join(key)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise RefusedError(
                    _(
                        (
                            "{label!r} was replaced by a symlink while the plan ran; ALMA never follows "
                            "links, so it stopped and took back what it had done."
                        ),
                        label=label,
                    )
                )
            raise ConflictError(
                _(
                    (
                        "{label!r} was moved or replaced while the plan ran; ALMA stopped and took "
                        "back what it had done, so look at that folder and make the plan again."
                    ),
                    label=label,
                )
            )

    def verify_watched(
        self, keys: tuple[tuple[str, ...], ...], token: FolderToken | None
    ) -> FolderToken:
        """:meth:`verify_keys` for an op about to act in ``keys``, given what the previous call
        for the same keys returned. The first call looks every folder up (stats, as verify) and
        has the kernel watch each one; the next ones need only the watch's word that no watched
        folder moved, was removed or unmounted since (one poll, not a stat per folder). Any
        report, a folder walked since, or no watch at all, and the folders are looked up again.
        A move is reported before the rename that made it returns, so an op that starts after
        it always sees it."""
        if (
            token is not None
            and token.epoch == self._epoch
            and token.generation == self.generation
            and self._unmoved()
        ):
            return token
        generation = self.generation
        watching = self._watch_keys(keys)
        self._unmoved()  # what was reported so far is spent: the lookups below answer it
        triples = token.triples if token is not None and token.generation == generation else None
        if triples is None:
            triples = self.quick_checks(keys)
        if triples is None or not still_there(triples):
            self.verify_keys(keys)  # says what moved; or walks a folder not walked yet
        watched = watching and self.generation == generation
        return FolderToken(self.generation, self._epoch if watched else -1, triples)

    def _watch_keys(self, keys: Iterable[tuple[str, ...]]) -> bool:
        """Watch each folder of ``keys`` not watched yet; False when one is not walked yet or
        the kernel gives no watch."""
        if self._watch is None:
            self._watch = FolderWatch()
        for key in keys:
            ident = self._ids.get(key)
            if ident is None:
                return False
            if ident not in self._watched:
                if not self._watch.add(self._dirs[key]):
                    return False
                self._watched.add(ident)
        return self._watch.active

    def _unmoved(self) -> bool:
        assert self._watch is not None
        if self._watch.quiet():
            return True
        self._epoch += 1
        return False

    def quick_checks(
        self, keys: Iterable[tuple[str, ...]]
    ) -> tuple[tuple[int, str, tuple[int, int]], ...] | None:
        """What :meth:`verify_keys` looks up for ``keys``, as (parent fd, name, (dev, ino))
        triples, for :func:`still_there`; None if a folder is not walked yet. Valid while
        :attr:`generation` is unchanged (no fd opened or closed)."""
        checks = []
        for key in keys:
            if key not in self._ids:
                return None
            checks.append((self._dirs[key[:-1]], key[-1], self._ids[key]))
        return tuple(checks)

    def parent_verified(self, relpath: str) -> tuple[int, str]:
        """:meth:`parent`, after :meth:`verify` of the parent's path (for forward ops)."""
        parts = tuple(split_relpath(relpath))
        self.verify(parts[:-1])
        return self.dir(parts[:-1]), parts[-1]

    def parent(self, relpath: str) -> tuple[int, str]:
        """(fd of the parent directory, last component) of a root-relative path. A folder seen
        before was checked then, name by name: only the last name is checked again."""
        folder, _sep, name = relpath.rpartition("/")
        fd = self._folder_fds.get(folder)
        if fd is None or not plain_name(name):
            parts = split_relpath_cached(relpath)
            fd = self._folder_fds[folder] = self.dir(parts[:-1])
            return fd, parts[-1]
        return fd, name

    def lstat(self, relpath: str) -> os.stat_result | None:
        try:
            fd, name = self.parent(relpath)
        except FileNotFoundError:
            return None
        return lstat_at(fd, name)

    def forget(self, relpath: str) -> None:
        """Drop a cached directory fd (after it was removed or renamed)."""
        parts = tuple(split_relpath(relpath))
        for key in [k for k in self._dirs if k[: len(parts)] == parts and k]:
            os.close(self._dirs.pop(key))
            # With its fd closed the inode may be freed and its number given to a new folder
            # (ext4 does at once): that folder must get a watch of its own.
            self._watched.discard(self._ids.pop(key, (-1, -1)))
        self._folder_fds.clear()
        self.generation += 1

    def sync(self, relpaths: Iterable[str]) -> None:
        """fsync these folders, deepest first: the renames in them are durable before the
        journal records them (executor's done marks, recovery's rolled-back marks). A folder
        removed meanwhile is skipped: whoever removed it fsynced its parent."""
        for relpath in sorted(relpaths, key=len, reverse=True):
            with contextlib.suppress(FileNotFoundError):
                os.fsync(self.dir(tuple(split_relpath(relpath)) if relpath else ()))

    def dev_of_dir(self, parts: tuple[str, ...]) -> int:
        return os.fstat(self.dir(parts)).st_dev

    def folders(self, parts: tuple[str, ...], depth: int, limit: int) -> list[tuple[str, ...]]:
        """The folders below ``parts`` down to ``depth`` levels, breadth first, each level's
        names sorted, at most ``limit``: the person's folders as ALMA may name them (links and
        hidden folders left out). Each is opened only to be listed, and closed: a root with
        thousands of folders holds no descriptor for them. One that cannot be read is listed
        without what is below it."""
        out: list[tuple[str, ...]] = []
        level = [parts]
        for _depth in range(depth):
            below: list[tuple[str, ...]] = []
            for parent in level:
                try:
                    fd = open_dir(self.root_fd, list(parent), label="/".join(parent))
                except (OSError, RefusedError):  # gone, or now a link: nothing below it is named
                    continue
                try:
                    with os.scandir(fd) as entries:  # it reads a duplicate of fd
                        names = sorted(
                            e.name
                            for e in entries
                            if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                        )
                except OSError:  # unreadable: it is named, what is below it is not
                    continue
                finally:
                    os.close(fd)
                for name in names:
                    if len(out) >= limit:
                        return out
                    out.append((*parent, name))
                    below.append((*parent, name))
            level = below
        return out


class FolderToken(NamedTuple):
    """What :meth:`Tree.verify_watched` hands back for the next op in the same folders."""

    generation: int  # of the tree's cached fds
    epoch: int  # of the watch when the folders were looked up; -1: not watched
    triples: tuple[tuple[int, str, tuple[int, int]], ...] | None  # their lookups (quick_checks)


def still_there(checks: tuple[tuple[int, str, tuple[int, int]], ...]) -> bool:
    """Each name still leads, in its cached parent, to the folder walked (no link followed)."""
    for parent_fd, name, ident in checks:
        try:
            st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != ident:
            return False
    return True


def prefixes(paths: Iterable[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    """Every folder on the way to each of ``paths``, once, parents first."""
    return tuple(sorted({p[:i] for p in paths for i in range(1, len(p) + 1)}, key=len))
