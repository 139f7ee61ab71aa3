"""The one way ALMA reads a file below its root (logs, principles, the persona, reports): every
folder walked through fds with ``O_NOFOLLOW``, a regular file only, opened non-blocking (a FIFO
planted as a log never hangs the daemon), and at most a given number of bytes read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from actions.safefs import split_relpath_cached
from actions.tree import Tree
from policies import limits as L
from policies.errors import ConfigError, RefusedError
from policies.i18n import _
from policies.layout import DATA_DIR, is_database, is_database_side_file
from policies.modes import open_to_others


def open_regular(tree: Tree, relpath: str) -> tuple[int, os.stat_result] | None:
    """A read-only fd on a regular file under the root and its ``fstat``: every folder walked
    with ``O_NOFOLLOW``, never a link, never blocking on a FIFO; None when it is gone or cannot
    be reached safely (the checks are made on the open fd, so nothing can be swapped in).
    Never one of ALMA's databases in ``.alma/``: only SQLite opens those (state.db)."""
    try:
        parts = split_relpath_cached(relpath)
        if parts[0] == DATA_DIR and (is_database(parts[-1]) or is_database_side_file(parts[-1])):
            return None
        dir_fd, name = tree.parent(relpath)
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd
        )
    except (OSError, RefusedError, ValueError):
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st


@dataclass(frozen=True)
class FileRead:
    data: bytes
    offset: int  # where ``data`` starts in the file: 0 unless a tail was read
    size: int  # the file's size when read
    mtime_ns: int

    @property
    def cut(self) -> bool:
        """True when the file holds more than ``data``."""
        return self.offset > 0 or self.offset + len(self.data) < self.size


def read_file(tree: Tree, relpath: str, *, limit: int, tail: bool = False) -> FileRead | None:
    """The one way ALMA reads a file below its root (logs, principles, the persona): through
    folder fds without following links, regular files only, non-blocking, and at most
    ``limit`` bytes (the head, or the tail with ``tail``), so a huge sparse file costs
    ``limit`` bytes of memory, not its size. None when the file is missing, a link, a FIFO
    or anything else that is not a regular file."""
    opened = open_regular(tree, relpath)
    if opened is None:
        return None
    fd, st = opened
    try:
        offset = max(0, st.st_size - limit) if tail else 0
        chunks: list[bytes] = []
        want = min(limit, st.st_size - offset)
        while want > 0:  # a regular file can still answer short (NFS, FUSE)
            chunk = os.pread(fd, want, offset + sum(map(len, chunks)))
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return FileRead(b"".join(chunks), offset, st.st_size, st.st_mtime_ns)


def read_config(path: Path, *, limit: int = L.CONFIG_BYTES) -> str | None:
    """The text of a configuration file (``system/autonomy.conf``, ``system/alma.toml``), read
    as :func:`read_file` reads (no link, no FIFO, at most ``limit`` bytes) from its folder.
    None when there is no such file; anything else that keeps it from being read is a
    :class:`ConfigError` that says what to do."""
    try:
        with Tree(path.parent) as tree:
            got = read_file(tree, path.name, limit=limit + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if got is None:
        _why_not_read(path)
        return None
    if len(got.data) > limit:
        raise ConfigError(
            _(
                "{path} is larger than {limit} bytes, which no configuration is; check that "
                "it is the right file.",
                path=path,
                limit=limit,
            )
        )
    try:
        return got.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _unreadable(path, exc) from None


def read_secret(path: Path, *, limit: int = L.SECRET_BYTES) -> bytes:
    """The bytes of a file that holds a password (the backup repository's), read as
    :func:`read_config` reads (no link, no FIFO, at most ``limit`` bytes), and only when no
    other user may read it: a password others can read protects nothing, so it is refused, as
    ssh refuses a private key others can read. Anything wrong is a :class:`ConfigError` that
    says what to do."""
    try:
        with Tree(path.parent) as tree:
            opened = open_regular(tree, path.name)
            if opened is None:
                _why_not_read(path)
                raise _unreadable(path, FileNotFoundError("no such file"))
            fd, st = opened
            try:
                data = os.pread(fd, limit + 1, 0)
            finally:
                os.close(fd)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if open_to_others(st.st_mode):
        raise ConfigError(
            _(
                "{path} holds a password and other users may read it (mode {mode}); make it "
                "private with `chmod 600 {path}` and try again.",
                path=path,
                mode=format(stat.S_IMODE(st.st_mode), "o"),
            )
        )
    if len(data) > limit:
        raise ConfigError(
            _(
                "{path} is larger than {limit} bytes, which no password is; name the file "
                "that holds only the password.",
                path=path,
                limit=limit,
            )
        )
    return data


def _why_not_read(path: Path) -> None:
    """Raise the reason :func:`read_file` found nothing at ``path``; return if it is missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(
            _(
                "{path} is not a regular file (a link, a folder or a fifo); put the file "
                "itself there.",
                path=path,
            )
        )
    try:  # a regular file read_file could not open: say why (permissions, most often)
        os.close(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError as exc:
        raise _unreadable(path, exc) from None
    raise _unreadable(path, OSError("it changed while being read"))


def _unreadable(path: Path, exc: Exception) -> ConfigError:
    return ConfigError(
        _(
            "{path} cannot be read ({error}); check its permissions and encoding.",
            path=path,
            error=exc,
        )
    )
