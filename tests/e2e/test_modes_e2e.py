"""The modes of what the real daemon creates (policies.modes is their one owner).

Files under ``.alma/`` are not created under the person's umask: with the common 022 the
memories, the journal and the databases would be readable by group and others (only the 0700
``.alma/`` would keep them out, and a copied or hand-made ``.alma/`` loses that)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from policies.modes import PRIVATE_DIR, PRIVATE_FILE
from tests.support.daemon import DaemonRoot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # the daemon inherits it when the test spawns it
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _loose(data: Path) -> list[str]:
    """Everything under ``.alma/`` whose mode is not private. The person's own files in the
    trash keep their mode (an undo gives them back as they were): only ALMA's are checked."""
    trash = data / "trash"
    found: list[str] = []
    for folder, dirs, files in os.walk(data):
        here = Path(folder)
        for name in dirs:
            if _mode(here / name) != PRIVATE_DIR:
                found.append(f"{here / name}: {_mode(here / name):o}")
        for name in files:
            path = here / name
            depth = len(path.relative_to(trash).parts) if path.is_relative_to(trash) else 0
            if depth >= 3:  # trash/ACTION/OP/NAME: the person's trashed file
                continue
            if _mode(path) != PRIVATE_FILE:
                found.append(f"{path}: {_mode(path):o}")
    return found


@pytest.mark.usefixtures("umask_022")
def test_under_umask_022_everything_alma_keeps_is_private_and_what_it_makes_is_the_persons(
    alma_mem: DaemonRoot,
) -> None:
    d = alma_mem
    d.start()
    d.ok("memory", "add", "Mi contraseña del banco es secreta.")
    d.messy_folder("user/desorden", 40)
    organize = d.wait_suggestion(kind="organize", target="user/desorden", timeout=120)
    action = d.ok("suggestions", "accept", str(organize["id"]))
    assert action["status"] == "done"
    d.write("user/copias/a.txt", b"igual\n" * 4096)
    d.write("user/copias/b.txt", b"igual\n" * 4096)
    os.chmod(d.root / "user/copias/b.txt", 0o640)
    d.analyze()  # duplicates are looked for by the analysis, not on file events
    dedupe = d.wait_suggestion(kind="duplicates", timeout=120)
    trashed = d.ok("suggestions", "accept", str(dedupe["id"]))
    assert trashed["status"] == "done"
    # The folders organize made, to check below.
    made = {
        op["path"]
        for op in d.ok("suggestions", "show", str(organize["id"]))["plan"]
        if op["op"] == "mkdir"
    }
    d.stop()

    data = d.root / ".alma"
    assert _mode(data) == PRIVATE_DIR
    names = {p.name for p in data.rglob("*")}
    assert {"journal.db", "manifest.json"} <= names, sorted(names)
    assert any(n.endswith(".sqlite3") for n in names), sorted(names)  # Chroma's own files
    assert _loose(data) == []
    # The person's trashed copy kept its own mode (undo gives it back as it was).
    kept = [p for p in (data / "trash").rglob("*.txt")]
    assert kept and all(_mode(p) in (0o644, 0o640) for p in kept), kept

    # What ALMA made among the person's files is like theirs: 0755 less the umask 022.
    assert made and {_mode(d.root / p) for p in made} == {0o755}
    reports = d.root / "logs" / "alma"
    for path in [reports, *reports.rglob("*")]:
        assert _mode(path) == (0o755 if path.is_dir() else 0o644), path
