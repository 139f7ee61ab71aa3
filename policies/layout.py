"""Where things live inside an ALMA root (contract §1). Pure path arithmetic, no I/O."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

#: Top-level folders of a root, created by ``alma-ctl init``.
ROOT_FOLDERS = ("system", "logs", "logs/alma", "user", "docs", ".alma")
#: The policy file, relative to the root: ``alma-ctl init`` writes it, so a root has one.
POLICY_FILE = "system/autonomy.conf"
#: ALMA's private folder in the root.
DATA_DIR = ".alma"
#: Folders no action may ever change, whatever the policy file says.
HARD_READ_ONLY = ("system", ".alma")
#: ALMA's private data, root-relative.
DATA_DIR = ".alma"
#: Root-relative, ``/``-separated, as plans and journal rows name them: ALMA's trash (an entry
#: of action A's op I is ``TRASH/A/I/NAME``) and the journal, the two parts of ``.alma/`` the
#: confined executor may write.
TRASH = ".alma/trash"
TRASH_PARTS = (".alma", "trash")
JOURNAL = ".alma/journal"
LANGUAGE_FILE = ".alma/language"
#: The name prefix of the engine's temporary copies (a transfer across filesystems).
ENGINE_TMP_PREFIX = ".alma-tmp-"
#: How the SQLite databases in ``.alma/`` are named (ALMA's own and the memory store's Chroma
#: file), and the files SQLite keeps beside one: only SQLite ever opens them (state.db).
DATABASE_SUFFIXES = (".db", ".sqlite3")
DATABASE_SIDE_SUFFIXES = ("-wal", "-shm", "-journal")


def is_database(name: str) -> bool:
    """Whether the file ``name`` in ``.alma/`` is a SQLite database (by its name: reading its
    header would open it outside SQLite)."""
    return name.endswith(DATABASE_SUFFIXES)


def is_database_side_file(name: str) -> bool:
    """Whether ``name`` is a file SQLite keeps beside a database (its WAL, shared memory or
    rollback journal)."""
    return name.endswith(DATABASE_SIDE_SUFFIXES)


def trash_entry(action_id: int, idx: int, name: str) -> str:
    """Where op ``idx`` of action ``action_id`` keeps the file ``name`` in the trash."""
    return f"{TRASH}/{action_id}/{idx}/{name}"


def root_name(cli_root: str | None) -> str:
    """``--root DIR``, else ``$ALMA_ROOT``, else ``~/ALMA``, absolute and with symlinks resolved:
    the one root resolution, used by alma-agentd and alma-ctl alike, so the socket a client
    looks for is the daemon's however the root was named (a link to a portable disk, say).

    A string, and this module imports :mod:`pathlib` only where it builds a path: alma-ctl's
    start pays for neither.
    """
    raw = cli_root or os.environ.get("ALMA_ROOT") or "~/ALMA"
    return os.path.realpath(os.path.expanduser(raw))


def language_file(root: str) -> str:
    """The language the daemon speaks, for clients whose locale names none (C, POSIX); a
    string, as :func:`root_name`, for alma-ctl's start."""
    return os.path.join(root, LANGUAGE_FILE)


def is_initialized(root: str) -> bool:
    """Whether ``alma-ctl init`` has made ``root`` an ALMA root (strings only, for alma-ctl)."""
    return os.path.isfile(os.path.join(root, POLICY_FILE))


def resolve_root(cli_root: str | None) -> Path:
    """:func:`root_name` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(root_name(cli_root))


class RootLayout:
    """Paths inside one root. A plain class, not a dataclass: ``alma-ctl`` imports this on
    every start, and ``dataclasses`` pulls in ``inspect`` (docs/benchmarks.md, alma-ctl's start)."""

    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"RootLayout(root={self.root!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RootLayout) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @property
    def system(self) -> Path:
        return self.root / "system"

    @property
    def policy_file(self) -> Path:
        return self.root / POLICY_FILE

    @property
    def settings_file(self) -> Path:
        return self.system / "alma.toml"

    @property
    def principles_file(self) -> Path:
        return self.system / "principles.md"

    @property
    def persona_file(self) -> Path:
        """Who ALMA is and how it speaks: the person's, read-only to ALMA (system/)."""
        return self.system / "persona.md"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def reports(self) -> Path:
        return self.logs / "alma"

    @property
    def user(self) -> Path:
        return self.root / "user"

    @property
    def data(self) -> Path:
        """``.alma/``: the daemon's own data. Never a target of any action."""
        return self.root / ".alma"

    @property
    def db_file(self) -> Path:
        return self.data / "alma.db"

    @property
    def language_file(self) -> Path:
        return self.root / LANGUAGE_FILE

    @property
    def checkpoints_file(self) -> Path:
        return self.data / "checkpoints.db"

    @property
    def journal_dir(self) -> Path:
        """The action journal: the only part of ``.alma/`` the confined executor may write."""
        return self.root / JOURNAL

    @property
    def journal_file(self) -> Path:
        return self.journal_dir / "journal.db"

    @property
    def trash(self) -> Path:
        return self.root / TRASH

    @property
    def memory_dir(self) -> Path:
        return self.data / "memory"

    @property
    def memory_state_file(self) -> Path:
        """The memory's catalog, lexicon and pending moves (SQLite)."""
        return self.memory_dir / "memory_state.db"

    @property
    def chroma_dir(self) -> Path:
        """The embedded Chroma store of the memories."""
        return self.memory_dir / "chroma"

    @property
    def examples_request_file(self) -> Path:
        """Left by ``alma-ctl init --with-examples`` when no daemon answers: the daemon stores
        the example memories when its memory store loads, then removes it."""
        return self.data / "examples.request"

    @property
    def lock_file(self) -> Path:
        """Held by the running daemon: one daemon per root."""
        return self.data / "daemon.lock"

    @property
    def executor_lock_file(self) -> Path:
        """Held by whoever applies a plan or recovers one: never two at once."""
        return self.journal_dir / "executor.lock"
