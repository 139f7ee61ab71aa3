"""A root opened once, with its directories reached by fd walks and kept open while a plan runs.

Holding each directory's fd means a symlink swapped in after the walk cannot redirect an op: the
op acts on the directory that was walked. Walking again after a change goes through the same
``O_NOFOLLOW`` checks.
"""

from __future__ import annotations

import os
from pathlib import Path

from actions.safefs import lstat_at, open_dir, open_root, split_relpath


class Tree:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root_fd = open_root(root)
        self._dirs: dict[tuple[str, ...], int] = {(): self.root_fd}

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs = {}

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
        return fd

    def parent(self, relpath: str) -> tuple[int, str]:
        """(fd of the parent directory, last component) of a root-relative path."""
        parts = tuple(split_relpath(relpath))
        return self.dir(parts[:-1]), parts[-1]

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

    def dev_of_dir(self, parts: tuple[str, ...]) -> int:
        return os.fstat(self.dir(parts)).st_dev
