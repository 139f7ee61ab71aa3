"""Only SQLite opens ALMA's databases, and only through state.db; what the daemon journals is in
the journal's file at once, whatever ran before (a backup, a restore, a memory merge).

On Linux closing any descriptor of a file drops all of the process's POSIX locks on it: a header
read or a copy of a live database by the daemon let the executor child (another process) take
itself for the last user, fold the WAL and delete it under the daemon. Two nets: a scan of the
production code (a database opened by name, a SQLite connection or a header check outside
state.db) and an audit hook around a real backup, action, restore, memory merge, recovery and
reopening (any Python-level open of a database or its side files under ``.alma``).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actions.ops import Move, encode_plan, read_plan
from actions.safe_read import read_file
from actions.safefs import identity_of
from actions.tree import Tree
from agent.backup.service import BackupService
from agent.memory import merge_actions as memory_actions
from agent.memory.loader import MemoryLoader
from agent.memory.service import MemoryService
from policies.config import policy_from_dict
from policies.decide import RunContext
from policies.layout import RootLayout, is_database, is_database_side_file
from sandbox.confine import Backend, Confinement
from sandbox.engine import Engine
from state.journal import Journal
from state.memory.statedb import MemoryStateDB
from state.suggestions import SuggestionStore

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("agent", "sandbox", "state", "policies", "actions", "control")
OWNER = REPO / "state" / "db.py"

# -- the scan of the code ----------------------------------------------------------------------

#: Calls that open a file, or copy or move one (which opens it).
_OPENERS = frozenset({"open", "fdopen", "read_bytes", "read_text", "write_bytes", "write_text"})
_COPIERS = frozenset({"copy", "copy2", "copyfile", "copyfileobj", "copytree", "move"})
#: The layout's names of ALMA's databases, and how a database or its side files are spelled.
_DB_ATTRS = frozenset({"db_file", "journal_file", "memory_state_file", "checkpoints_file"})
_DB_TEXT = re.compile(r"\.(db|sqlite3?)\b|-(wal|shm)\b")


def _names_a_database(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in _DB_ATTRS:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str | bytes):
            text = sub.value if isinstance(sub.value, str) else sub.value.decode("latin-1")
            if _DB_TEXT.search(text) or "SQLite format" in text:
                return True
    return False


def raw_database_opens(source: str, name: str) -> list[str]:
    """Where ``source`` opens a SQLite database outside SQLite's owner: ``sqlite3.connect``,
    an open, copy or move of a path that names a database, or a header check."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, bytes)
            and node.value.startswith(b"SQLite format")
        ):
            found.append(f"{name}:{node.lineno}: reads a database's header")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = func.value if isinstance(func, ast.Attribute) else None
        if called == "connect" and isinstance(owner, ast.Name) and owner.id == "sqlite3":
            found.append(f"{name}:{node.lineno}: sqlite3.connect outside state.db")
            continue
        copies = called in _COPIERS and isinstance(owner, ast.Name) and owner.id == "shutil"
        if (called in _OPENERS or copies) and _names_a_database(node):
            found.append(f"{name}:{node.lineno}: {called} of a database by name")
    return found


def test_no_production_module_opens_an_alma_database_outside_state_db() -> None:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if path == OWNER:
                continue
            rel = str(path.relative_to(REPO))
            found += raw_database_opens(path.read_text(encoding="utf-8"), rel)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "import sqlite3\nsqlite3.connect(p)",
        "layout.journal_file.open('rb')",
        "open(layout.db_file, 'rb')",
        "shutil.copy2(root / '.alma/alma.db', dst)",
        "os.open(f'{path}-wal', os.O_RDONLY)",
        "def f(h):\n    return h.read(16) == b'SQLite format 3\\x00'",
    ],
)
def test_the_scan_finds_each_way_of_opening_a_database(code: str) -> None:
    assert raw_database_opens(code, "m.py")


# -- the audit hook around a real run ----------------------------------------------------------

_watch: list[list[str]] = []
_hooked = threading.Lock()
_installed: list[bool] = []


def _alma_code(filename: str) -> bool:
    rel = os.path.relpath(filename, REPO)
    return rel.split(os.sep, 1)[0] in PACKAGES and filename != str(OWNER)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _watch or event not in ("open", "sqlite3.connect"):
        return
    target = args[0]
    if isinstance(target, int) or target is None:
        return
    path = os.fsdecode(target)
    if path.startswith("file:"):  # a URI: its path, without the query
        path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
    name = os.path.basename(path)
    if not (is_database(name) or is_database_side_file(name)):
        return
    if os.path.isabs(path) and "/.alma/" not in path:
        return  # a database outside a root (a test's own)
    if event == "open":
        flags = args[2] if isinstance(args[2], int) else 0
        if flags & os.O_CREAT and flags & os.O_EXCL:
            return  # a file made new (a database's mode set before SQLite creates it): no lock
        _watch[-1].append(f"open({path!r}, {args[1]!r}, {flags:#o})")
        return
    caller = sys._getframe(1).f_code.co_filename
    if _alma_code(caller):
        _watch[-1].append(f"sqlite3.connect({path!r}) from {caller}")


def _install() -> None:
    with _hooked:
        if not _installed:
            sys.addaudithook(_audit)  # a hook stays for the process: it records only when asked
            _installed.append(True)


class _Watch:
    def __enter__(self) -> list[str]:
        _install()
        _watch.append([])
        return _watch[-1]

    def __exit__(self, *exc: object) -> None:
        _watch.pop()


def seen_by_another_process(journal: Path) -> dict[int, tuple[str, str]]:
    """The journal's actions as a process of its own reads them: id -> (kind, status)."""
    code = (
        "import json, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], timeout=30)\n"
        "print(json.dumps(c.execute('SELECT id, kind, status FROM actions').fetchall()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(journal)], capture_output=True, text=True, check=True
    ).stdout
    return {int(i): (str(k), str(s)) for i, k, s in json.loads(out)}


@pytest.fixture
def layout(tmp_path: Path) -> RootLayout:
    root = tmp_path / "ALMA"
    for sub in ("system", "logs", "user/descargas", "docs", ".alma/journal", ".alma/trash"):
        (root / sub).mkdir(parents=True)
    (root / "user/descargas/nota.txt").write_text("hola\n", encoding="utf-8")
    (root / "user/descargas/foto.jpg").write_bytes(b"\xff\xd8" * 300)
    return RootLayout(root)


class _Parts:
    """The daemon's real parts on ``layout``: the journal, the store, the engine (its child a
    real process, unconfined), the memory and the backups."""

    def __init__(self, layout: RootLayout, memory: MemoryService | None) -> None:
        self.policy = policy_from_dict({"sandbox": {"allow_unconfined": True}})
        self.journal = Journal(layout.journal_file)
        self.store = SuggestionStore(layout.db_file)
        self.engine = Engine(
            layout, self.journal, Confinement(Backend.NONE, "tests"), lambda: self.policy
        )
        self.gate = MemoryLoader()
        if memory is None:
            self.gate.fail("off")
        else:
            self.gate.set(memory)
        self.backup = BackupService(
            layout,
            lambda: self.policy,  # type: ignore[arg-type]  # the holder's call
            self.store,
            self.engine,
            self.gate,
            lambda action: None,
        )

    def close(self) -> None:
        self.store.conn.close()
        self.journal.close()


def _move(layout: RootLayout, src: str, dst: str) -> Move:
    return Move(src, dst, identity_of(os.lstat(layout.root / src)))


def _person() -> RunContext:
    return RunContext(approved_by_person=True)


@pytest.fixture
def memory(layout: RootLayout, embedder_loaded: None) -> Iterator[MemoryService]:
    service = MemoryService(layout)
    yield service
    service.close()


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("restic"), reason="no restic")
def test_a_backup_action_restore_merge_recovery_and_reopening_open_no_database_raw(
    layout: RootLayout, memory: MemoryService, tmp_path: Path
) -> None:
    secret = tmp_path / "pw"
    secret.write_bytes(b"correct horse battery\n")
    secret.chmod(0o600)  # a password file others may read is refused
    a = memory.add("Prefiero respuestas cortas y en español.", importance=4)["id"]
    b = memory.add("Prefiero respuestas breves y en español, sin rodeos.", importance=2)["id"]
    assert a != b
    with _Watch() as opened:
        parts = _Parts(layout, memory)  # the journal's and the store's migrations
        try:
            parts.backup.init(str(tmp_path / "disk"), str(secret))
            first = parts.backup.now()
            assert opened == [], "\n".join(opened)  # the staging of live databases
            assert seen_by_another_process(layout.journal_file)[first["id"]] == ("backup", "done")
            moved = parts.engine.execute(
                [_move(layout, "user/descargas/nota.txt", "user/nota.txt")],
                kind="organize",
                ctx=_person(),
            )
            assert seen_by_another_process(layout.journal_file)[moved["id"]] == (
                "organize",
                "done",
            )  # after a backup
            undo = parts.engine.undo()
            assert seen_by_another_process(layout.journal_file)[undo["id"]] == ("organize", "done")
            second = parts.backup.now()
            assert seen_by_another_process(layout.journal_file)[second["id"]] == ("backup", "done")
            back = parts.backup.restore(second["snapshot"], ["user"], str(tmp_path / "rescate"))
            assert seen_by_another_process(layout.journal_file)[back["id"]] == (
                "backup_restore",
                "done",
            )
            again = parts.engine.execute(
                [_move(layout, "user/descargas/foto.jpg", "user/foto.jpg")],
                kind="organize",
                ctx=_person(),
            )
            assert seen_by_another_process(layout.journal_file)[again["id"]] == (
                "organize",
                "done",
            )  # after a restore
            findings = memory_actions.merge_findings(memory)
            assert findings
            plan = findings[0].plan
            merged = parts.engine.run_in_daemon(
                lambda journal: memory_actions.execute(
                    journal,
                    memory,
                    read_plan(encode_plan(plan)[0]),
                    kind="memory_merge",
                    suggestion_id=None,
                    auto=False,
                )
            )
            assert seen_by_another_process(layout.journal_file)[merged["id"]] == (
                "memory_merge",
                "done",
            )
            third = parts.backup.now()  # the memory's files held open, copied
            last = parts.engine.undo(again["id"])
            assert seen_by_another_process(layout.journal_file)[last["id"]] == (
                "organize",
                "done",
            )  # after a merge and a backup
            assert seen_by_another_process(layout.journal_file)[third["id"]] == ("backup", "done")
            # An action a crash left running: the recovery (the child) takes it back.
            left = parts.journal.create_action(
                kind="organize",
                plan=[_move(layout, "user/descargas/nota.txt", "user/otra.txt").to_dict()],
            )
            recovered = parts.engine.recover()
            assert recovered == [{"action": left, "status": "rolled_back"}], recovered
            assert seen_by_another_process(layout.journal_file)[left] == ("organize", "rolled_back")
            assert parts.backup.recover() == []
            listed = {int(x["id"]): (x["kind"], x["status"]) for x in parts.journal.history()}
        finally:
            parts.close()
        reopened = _Parts(layout, memory)  # migrations of databases that exist
        reopened.close()
        MemoryStateDB(layout.memory_state_file).close()
    assert opened == [], "\n".join(opened)
    assert seen_by_another_process(layout.journal_file) == listed


def test_the_audit_hook_sees_a_raw_open_of_a_database(layout: RootLayout) -> None:
    Journal(layout.journal_file).close()
    with _Watch() as opened, layout.journal_file.open("rb") as handle:
        handle.read(16)
    assert opened and "journal.db" in opened[0]


def test_the_one_safe_reader_never_opens_a_database_of_alma(layout: RootLayout) -> None:
    Journal(layout.journal_file).close()
    (layout.data / "notes.txt").write_text("ALMA's own\n", encoding="utf-8")
    (layout.user / "mine.db").write_bytes(b"the person's own file\n")
    with Tree(layout.root) as tree, _Watch() as opened:
        assert read_file(tree, ".alma/journal/journal.db", limit=100) is None
        assert read_file(tree, ".alma/journal/journal.db-wal", limit=100) is None
        assert read_file(tree, ".alma/notes.txt", limit=100) is not None
    assert opened == []
    with Tree(layout.root) as tree:  # a person's file of that name is the person's to read
        assert read_file(tree, "user/mine.db", limit=100) is not None
