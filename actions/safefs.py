"""Safe filesystem primitives: directory-fd walks, no-replace renames, file identity.

Every path below the ALMA root is reached one component at a time with ``O_NOFOLLOW`` relative to
its parent's fd, so a symlink anywhere in a path (planted or swapped in mid-action) makes the
walk fail instead of leading outside. Renames never replace (``renameat2(RENAME_NOREPLACE)``, or
``link`` + ``unlink`` where a filesystem lacks it). ``realpath`` + ``startswith`` is never used as
a containment check.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import re
import select
import stat
import sys
from collections.abc import Iterator
from functools import cache

from actions import inotify
from actions.ops import FileKind, Identity
from policies.errors import ConflictError, RefusedError
from policies.i18n import _
from policies.modes import PRIVATE_FILE, SHARED_DIR

NAME_MAX = 255
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOREPLACE = 1  # renameat2's RENAME_NOREPLACE
#: os.fsencode's codec, applied directly (fsencode is a Python function: two calls per rename).
_FS, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
_AT_FDCWD = -100

_libc = ctypes.CDLL(None, use_errno=True)
_renameat2 = getattr(_libc, "renameat2", None)
if _renameat2 is not None:
    _renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    _renameat2.restype = ctypes.c_int


class FolderWatch:
    """The kernel's word (inotify) on whether a folder held open was moved, removed or had its
    filesystem unmounted. Only the folders themselves are watched, not what is in them: moving
    files in and out of them says nothing. When inotify is unavailable (no instance or watch
    left, no /proc), :attr:`active` is False and the caller looks the folders up itself."""

    def __init__(self) -> None:
        try:
            self._fd: int | None = inotify.init()
        except OSError:
            self._fd = None
            return
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)

    @property
    def active(self) -> bool:
        return self._fd is not None

    def add(self, dir_fd: int) -> bool:
        """Watch the folder ``dir_fd`` is open on (its inode, wherever it goes); False, and the
        watch inactive from then on, when the kernel refuses."""
        if self._fd is None:
            return False
        try:
            inotify.add_watch(
                self._fd,
                f"/proc/self/fd/{dir_fd}".encode(),
                inotify.IN_MOVE_SELF
                | inotify.IN_DELETE_SELF
                | inotify.IN_UNMOUNT
                | inotify.IN_ONLYDIR,
            )
        except OSError:
            self.close()
            return False
        return True

    def quiet(self) -> bool:
        """True when nothing watched moved since the last call; the events are consumed."""
        if self._fd is None:
            return False
        if not self._poll.poll(0):
            return True
        with contextlib.suppress(BlockingIOError):
            while os.read(self._fd, 65536):
                pass
        return False

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class CrossDevice(Exception):
    """Source and destination are on different filesystems: a rename cannot do it."""


@cache
def boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


def check_name(name: str, *, where: str = "") -> None:
    """Refuse a path component ALMA will not handle: it could not be shown or typed safely."""
    # The common case (a scan asks for every entry), settled without the checks below:
    # printable ASCII has no control character and is valid UTF-8 one byte per character.
    plain = name.isascii() and name.isprintable() and len(name) <= NAME_MAX
    if plain and name not in ("", ".", "..") and "/" not in name:
        return
    label = where or repr(name)
    if name in ("", ".", ".."):
        raise RefusedError(
            _("{label}: empty, '.' or '..' path components are refused.", label=label)
        )
    if "/" in name or "\x00" in name:
        raise RefusedError(_("{label}: a name may not contain '/' or NUL.", label=label))
    if _CONTROL.search(name):
        raise RefusedError(
            _(
                (
                    "{label}: the name contains a control character (such as a newline); rename it "
                    "first."
                ),
                label=label,
            )
        )
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        raise RefusedError(
            _(
                "{label}: the name is not valid UTF-8; rename the file before ALMA touches it.",
                label=label,
            )
        ) from None
    if len(encoded) > NAME_MAX:
        raise RefusedError(
            _("{label}: the name is longer than {NAME_MAX} bytes.", label=label, NAME_MAX=NAME_MAX)
        )


def split_relpath(relpath: str) -> list[str]:
    """Components of a root-relative ``/`` path, each checked by :func:`check_name`."""
    return list(split_relpath_cached(relpath))


def split_relpath_cached(relpath: str) -> tuple[str, ...]:
    """As :func:`split_relpath`, as a tuple. A plan of 100,000 moves splits half a million
    paths: the whole path is checked in one pass (:func:`_plain`), and only a path that fails
    it is checked name by name, which says what is wrong. (An ``lru_cache`` here held 65,536
    paths, tens of MB, and missed on every file of a large plan.)"""
    if _plain(relpath):
        return tuple(relpath.split("/"))
    return _split_checked(relpath)


def _plain(relpath: str) -> bool:
    """True only when every component passes :func:`check_name`: none empty, '.' or '..', no
    control character or lone surrogate, none longer than NAME_MAX bytes. False sends the path
    to the full check, which decides and says why. String methods rather than one regular
    expression: faster, and every op of a plan asks it several times."""
    # isprintable() is False for every control character and lone surrogate (and for some
    # names the full check accepts, such as a no-break space: those just take the long way).
    if not relpath or not relpath.isprintable() or "//" in relpath:
        return False
    if relpath[0] == "/" or relpath[-1] == "/":
        return False
    if "." in relpath and (
        relpath in (".", "..")
        or relpath.startswith(("./", "../"))
        or relpath.endswith(("/.", "/.."))
        or "/./" in relpath
        or "/../" in relpath
    ):
        return False
    if len(relpath) * 4 <= NAME_MAX or len(relpath.encode("utf-8")) <= NAME_MAX:
        return True  # the whole path fits, so each name does
    return all(len(part.encode("utf-8")) <= NAME_MAX for part in relpath.split("/"))


def plain_name(name: str) -> bool:
    """True when :func:`check_name` surely accepts ``name`` (one component, no ``/``): the same
    one-pass check as a whole path's."""
    return "/" not in name and _plain(name)


def _split_checked(relpath: str) -> tuple[str, ...]:
    if not relpath or relpath.startswith("/"):
        raise RefusedError(
            _("{relpath!r} is not a path relative to the ALMA root.", relpath=relpath)
        )
    parts = tuple(relpath.split("/"))
    for part in parts:
        check_name(part, where=repr(relpath))
    return parts


def path_problem(relpath: str) -> str | None:
    """Why ``relpath`` cannot be handled (see :func:`split_relpath`), or None when it can."""
    try:
        split_relpath_cached(relpath)
    except RefusedError as exc:
        return str(exc)
    return None


def open_root(root: str | os.PathLike[str]) -> int:
    """The root is trusted as given (it may itself be a symlink to a portable disk)."""
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def open_dir(base_fd: int, parts: list[str], *, label: str = "") -> int:
    """Open the directory ``parts`` below ``base_fd`` without following any symlink.

    Raises FileNotFoundError when a component is missing, RefusedError when one is a symlink or
    not a directory. The caller owns (and closes) the returned fd.
    """
    fd = os.dup(base_fd)
    try:
        for part in parts:
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise RefusedError(
                        _(
                            "{value!r}: {part!r} is a symlink or not a folder; ALMA never follows links.",
                            value=label or "/".join(parts),
                            part=part,
                        )
                    ) from None
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def kind_of(st: os.stat_result) -> FileKind:
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    return "other"


def identity_of(st: os.stat_result, sha256: str | None = None) -> Identity:
    return Identity(
        dev=st.st_dev,
        ino=st.st_ino,
        kind=kind_of(st),
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        sha256=sha256,
        boot=boot_id(),
        ctime_ns=st.st_ctime_ns,
    )


def rename_noreplace(src_dir: int, src: str, dst_dir: int, dst: str) -> None:
    """Rename without ever replacing: ConflictError when ``dst`` exists, CrossDevice on EXDEV."""
    if _renameat2 is not None:
        rc = _renameat2(
            src_dir, src.encode(_FS, _FS_ERRORS), dst_dir, dst.encode(_FS, _FS_ERRORS), _NOREPLACE
        )
        if rc == 0:
            return
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise ConflictError(_("{dst!r} already exists; ALMA never overwrites a file.", dst=dst))
        if err == errno.EXDEV:
            raise CrossDevice(dst)
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), src)
    # No RENAME_NOREPLACE on this filesystem: link never replaces either (regular files only).
    st = os.stat(src, dir_fd=src_dir, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise RefusedError(
            _("{src!r}: this filesystem cannot rename folders without risk of replacing.", src=src)
        )
    try:
        os.link(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
    except FileExistsError:
        raise ConflictError(
            _("{dst!r} already exists; ALMA never overwrites a file.", dst=dst)
        ) from None
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise CrossDevice(dst) from None
        raise
    os.unlink(src, dir_fd=src_dir)


def fsync_dir(fd: int) -> None:
    """Make renames in a directory durable. An fsync error is final: never retried."""
    os.fsync(fd)


def _read_chunks(fd: int) -> Iterator[bytes]:
    while chunk := os.read(fd, 1 << 20):
        yield chunk


def sha256_at(dir_fd: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        digest = hashlib.sha256()
        for chunk in _read_chunks(fd):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


def copy_file_at(src_dir: int, src: str, dst_dir: int, tmp: str) -> tuple[str, os.stat_result]:
    """Copy ``src`` to a new file ``tmp`` (never existing), fsync it; return (sha256, src stat).

    The copy keeps the source's mode and times. The hash is of the bytes written, computed while
    copying, so the caller can verify the published file against the source.
    """
    sfd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=src_dir)
    try:
        st = os.fstat(sfd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedError(_("{src!r} is not a regular file.", src=src))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        dfd = os.open(tmp, flags, PRIVATE_FILE, dir_fd=dst_dir)
        try:
            digest = hashlib.sha256()
            for chunk in _read_chunks(sfd):
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dfd, view) :]
            os.fchmod(dfd, stat.S_IMODE(st.st_mode))
            os.utime(dfd, ns=(st.st_atime_ns, st.st_mtime_ns))
            os.fsync(dfd)
        finally:
            os.close(dfd)
        after = os.fstat(sfd)
        if (after.st_size, after.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
            os.unlink(tmp, dir_fd=dst_dir)
            raise ConflictError(
                _("{src!r} changed while it was being copied; nothing was moved.", src=src)
            )
        return digest.hexdigest(), st
    finally:
        os.close(sfd)


def mkdir_at(dir_fd: int, name: str, mode: int = SHARED_DIR) -> None:
    try:
        os.mkdir(name, mode, dir_fd=dir_fd)
    except FileExistsError:
        raise ConflictError(_("{name!r} already exists.", name=name)) from None
