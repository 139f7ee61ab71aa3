"""The modes of what ALMA creates: the one owner.

``.alma/`` holds the memories, the journal, the trash and the databases: it is private to the
user who runs ALMA (0700; files 0600), and so is the runtime folder of the socket. What ALMA
makes among the person's own folders (the root's top folders, ``logs/alma/`` and its reports,
the folders organize creates) is like the person's own: 0755 and 0644, less their umask.
Standard library only: alma-ctl's ``init`` uses it.
"""

from __future__ import annotations

import contextlib
import os
import stat

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
SHARED_DIR = 0o755
SHARED_FILE = 0o644


def ensure_private_dir(path: str | os.PathLike[str]) -> bool:
    """Create the folder ``path`` with mode 0700, or narrow it to 0700 when it exists with a
    looser mode (a ``.alma/`` made by hand, by a copy or by an old version let other users
    read the memories). Returns True when it narrowed one. Raises PermissionError with a
    sentence when the folder is a link, not a folder, or another user's."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, PRIVATE_DIR)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        raise PermissionError(
            f"{os.fspath(path)} is a symlink or not a folder; ALMA keeps its private data in a "
            "real folder: move it away and start again."
        ) from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise PermissionError(
                f"{os.fspath(path)} belongs to uid {info.st_uid}, not to you (uid "
                f"{os.geteuid()}); ALMA's private data must be yours: fix its owner."
            )
        if stat.S_IMODE(info.st_mode) != PRIVATE_DIR:
            os.fchmod(fd, PRIVATE_DIR)  # also clears setgid and sticky bits
            return True
        return False
    finally:
        os.close(fd)
