"""The modes of what ALMA creates: the one owner.

``.alma/`` holds the memories, the journal, the trash and the databases: it is private to the
user who runs ALMA (folders 0700, files 0600), and so is the runtime folder of the socket. What
ALMA makes among the person's own folders (the root's top folders, ``logs/alma/`` and its
reports, the folders organize creates) is like the person's own: 0755 and 0644, less the
person's umask.

The daemon runs under the umask 077 (:func:`keep_private`), so whatever it or a library it
uses creates (SQLite's databases and their WAL files, Chroma's segments, logs) is private
without each of them being told. What it makes for the person is created with
:func:`for_person` and set to that mode explicitly (``Tree.ensure_dir``, the reports), and the
confined child, which creates the person's folders, runs under the person's umask
(:func:`person_umask`). Standard library only, and no :mod:`contextlib`: alma-ctl imports it on
every start.
"""

from __future__ import annotations

import os
import stat

from policies.i18n import _

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
SHARED_DIR = 0o755
SHARED_FILE = 0o644
#: The daemon's umask: nothing it creates is readable by group or others unless asked.
PRIVATE_UMASK = 0o077

_person_umask: int | None = None


def open_to_others(mode: int) -> bool:
    """Whether a file of this mode may be read or written by anyone but its owner (a secret
    in it is no longer one: ssh refuses such a key for the same reason)."""
    return bool(mode & PRIVATE_UMASK)


def keep_private() -> int:
    """Run this process under :data:`PRIVATE_UMASK` (the daemon, at its start); the person's
    own umask is kept for :func:`for_person` and returned."""
    global _person_umask
    previous = os.umask(PRIVATE_UMASK)
    if _person_umask is None:
        _person_umask = previous
    return _person_umask


def person_umask() -> int:
    """The umask the person runs ALMA with (the process's own until :func:`keep_private`)."""
    if _person_umask is not None:
        return _person_umask
    current = os.umask(PRIVATE_UMASK)  # the only way to read it is to set it
    os.umask(current)
    return current


def for_person(mode: int) -> int:
    """``mode`` (:data:`SHARED_DIR`, :data:`SHARED_FILE`) less the person's umask: the mode of
    what ALMA makes among the person's files, set explicitly (the daemon's umask is 077)."""
    return mode & ~person_umask()


def private_file(path: str | os.PathLike[str]) -> None:
    """Create the file ``path`` 0600 if it is missing, or narrow it to 0600 (a database before
    SQLite opens it: its journal and WAL files take the database's mode). Never through a link.

    An existing file is changed by name, never opened: closing any descriptor of a file drops
    every POSIX lock the process holds on it, SQLite's included (a connection of the same
    process would then read the database as malformed)."""
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE
        )
    except FileExistsError:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) != PRIVATE_FILE:
            os.chmod(path, PRIVATE_FILE)
        return
    os.close(fd)


def ensure_private_dir(path: str | os.PathLike[str]) -> bool:
    """Create the folder ``path`` with mode 0700, or narrow it to 0700 when it exists with a
    looser mode (a ``.alma/`` made by hand, by a copy or by an old version let other users
    read the memories). Returns True when it narrowed one. Raises PermissionError with a
    sentence when the folder is a link, not a folder, or another user's."""
    try:  # noqa: SIM105 (contextlib.suppress: an import every alma-ctl start would pay for)
        os.mkdir(path, PRIVATE_DIR)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        raise PermissionError(
            _(
                "{path} is a symlink or not a folder; ALMA keeps its private data in a real "
                "folder: move it away and start again.",
                path=os.fspath(path),
            )
        ) from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise PermissionError(
                _(
                    "{path} belongs to uid {owner}, not to you (uid {uid}); ALMA's private data "
                    "must be yours: fix its owner.",
                    path=os.fspath(path),
                    owner=info.st_uid,
                    uid=os.geteuid(),
                )
            )
        if stat.S_IMODE(info.st_mode) != PRIVATE_DIR:
            os.fchmod(fd, PRIVATE_DIR)  # also clears setgid and sticky bits
            return True
        return False
    finally:
        os.close(fd)
