"""The kernel's inotify, through ctypes: its calls, the constants ALMA uses and its event records.

The one owner of that ABI: the executor's folder watch (:class:`actions.safefs.FolderWatch`) and
the daemon's watcher (:mod:`agent.watch`) both call it. Standard library only: the confined
child imports it at every start.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from collections.abc import Iterator

IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)  # the process's own libc: no search at import
_c_init1 = getattr(_libc, "inotify_init1", None)
_c_add_watch = getattr(_libc, "inotify_add_watch", None)
_c_rm_watch = getattr(_libc, "inotify_rm_watch", None)
if _c_add_watch is not None:
    _c_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    _c_add_watch.restype = ctypes.c_int

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)


def _failed() -> OSError:
    err = ctypes.get_errno()
    return OSError(err, os.strerror(err))


def init() -> int:
    """A new inotify instance, non-blocking and closed on exec; OSError when none is left."""
    if _c_init1 is None:
        raise OSError(errno.ENOSYS, "no inotify_init1 in this libc")
    fd = int(_c_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    if fd < 0:
        raise _failed()
    return fd


def add_watch(fd: int, path: bytes, mask: int) -> int:
    """Watch ``path`` (its inode, wherever it goes); the watch descriptor. OSError with the
    kernel's errno: ENOSPC at the per-user limit of watches, ENOENT/ENOTDIR when it is gone or
    not a folder (with IN_ONLYDIR)."""
    if _c_add_watch is None:
        raise OSError(errno.ENOSYS, "no inotify_add_watch in this libc")
    wd = int(_c_add_watch(fd, path, mask))
    if wd < 0:
        raise _failed()
    return wd


def rm_watch(fd: int, wd: int) -> None:
    """Drop a watch; one the kernel dropped already (its folder removed) is not an error."""
    if _c_rm_watch is not None and int(_c_rm_watch(fd, wd)) < 0:
        err = _failed()
        if err.errno != errno.EINVAL:
            raise err


def events(data: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    """The records of one read of an inotify descriptor: (wd, mask, cookie, name), the name
    without its NUL padding (b"" for an event about the watched folder itself)."""
    unpack, size, end = _HEADER.unpack_from, _HEADER.size, len(data)
    offset = 0
    while offset < end:
        wd, mask, cookie, length = unpack(data, offset)
        offset += size
        name = data[offset : offset + length].rstrip(b"\0") if length else b""
        offset += length
        yield wd, mask, cookie, name
