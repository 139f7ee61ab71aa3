"""policies.modes, the one owner of the modes of what ALMA creates, and its callers."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from actions.tree import Tree
from policies import modes
from policies.modes import PRIVATE_DIR, PRIVATE_FILE, SHARED_DIR, SHARED_FILE
from state.db import connect


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_daemons_umask_is_private_and_the_persons_is_kept_for_what_it_makes(
    tmp_path: Path,
) -> None:
    # A process of its own: the umask is per process and the test run's must stay as it is.
    code = (
        "import os\n"
        "from policies import modes\n"
        "os.umask(0o027)\n"
        "assert modes.person_umask() == 0o027\n"
        "assert modes.keep_private() == 0o027\n"
        "assert modes.keep_private() == 0o027  # a second call keeps the person's\n"
        "assert modes.person_umask() == 0o027\n"
        "assert modes.for_person(modes.SHARED_DIR) == 0o750\n"
        "assert modes.for_person(modes.SHARED_FILE) == 0o640\n"
        f"os.close(os.open({str(tmp_path / 'f')!r}, os.O_CREAT | os.O_WRONLY, 0o666))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert _mode(tmp_path / "f") == 0o600


def test_a_database_is_private_under_any_umask_and_its_wal_files_too(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        conn = connect(tmp_path / "x.db")
        conn.execute("CREATE TABLE t (a)")
        conn.execute("INSERT INTO t VALUES (1)")
        made = sorted(tmp_path.iterdir())
        assert {p.name for p in made} >= {"x.db", "x.db-wal", "x.db-shm"}
        assert {_mode(p) for p in made} == {PRIVATE_FILE}
        conn.close()
    finally:
        os.umask(old)


def test_private_file_narrows_a_loose_one_and_never_follows_a_link(tmp_path: Path) -> None:
    loose = tmp_path / "loose.db"
    loose.write_bytes(b"")
    loose.chmod(0o664)
    modes.private_file(loose)
    assert _mode(loose) == PRIVATE_FILE
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    target.chmod(0o644)
    (tmp_path / "link.db").symlink_to(target)
    modes.private_file(tmp_path / "link.db")
    assert _mode(target) == 0o644


def test_private_file_keeps_the_locks_of_an_open_database(tmp_path: Path) -> None:
    # Closing any fd of a file drops the process's POSIX locks on it: a second connect() of an
    # open database must not (the journal read as "malformed" when private_file opened it).
    path = tmp_path / "j.db"
    first = connect(path)
    first.execute("CREATE TABLE t (a)")
    first.execute("BEGIN IMMEDIATE")
    first.execute("INSERT INTO t VALUES (1)")
    second = connect(path)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        second.execute("PRAGMA busy_timeout=0").fetchall()
        second.execute("BEGIN IMMEDIATE")
    first.execute("COMMIT")
    assert [tuple(r) for r in second.execute("SELECT a FROM t")] == [(1,)]


def test_tree_ensure_dir_creates_exactly_the_mode_asked_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        with Tree(tmp_path) as tree:
            tree.ensure_dir(("a", "b"), SHARED_DIR)
            tree.ensure_dir(("p",), PRIVATE_DIR)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a") == _mode(tmp_path / "a" / "b") == SHARED_DIR
    assert _mode(tmp_path / "p") == PRIVATE_DIR
    (tmp_path / "mine").mkdir(mode=0o750)
    with Tree(tmp_path) as tree:  # a folder that exists is the person's: left as it is
        tree.ensure_dir(("mine",), SHARED_DIR)
    assert _mode(tmp_path / "mine") == 0o750


def test_the_shared_modes_are_the_common_ones() -> None:
    assert (SHARED_DIR, SHARED_FILE, PRIVATE_DIR, PRIVATE_FILE) == (0o755, 0o644, 0o700, 0o600)


def test_no_module_writes_a_literal_mode() -> None:
    # One owner: every mode ALMA creates with comes from policies.modes.

    repo = Path(__file__).resolve().parents[2]
    literal = re.compile(r"\b0o[0-7]{3}\b")
    found = []
    for package in ("agent", "control", "sandbox", "state", "actions"):
        for path in sorted((repo / package).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if literal.search(line) and "umask" not in line:
                    found.append(f"{path.relative_to(repo)}:{n}: {line.strip()}")
    assert found == []
