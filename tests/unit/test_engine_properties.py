"""Stateful property test of the action engine: any sequence of actions, undos and crashes.

A hypothesis ``RuleBasedStateMachine`` builds a small random tree in user/ (a few folders, files
of random bytes with duplicates, Spanish names with accents and ñ, in NFC and NFD), then applies
random valid plans (mkdir, moves within user/, trash), undoes the newest action, and tries plans
made stale by a person's change (before execution, or between two ops of the running plan). After
every step:

- bytes are conserved: the multiset of file contents in user/ + ALMA's trash never shrinks (and,
  in one process on one disk, never grows either: no stray copies);
- nothing outside user/ changed (system/, logs/, docs/, ALMA's own data, a folder outside the
  root), byte for byte;
- an undo gives back the tree as it was before the action, byte for byte, and undoing everything
  gives back the starting tree: undo(do(S)) == S.

The fast machine runs the executor in this process (the code the confined child runs, without
the sandbox) so a hundred examples take seconds; a second, smaller run goes through the real
Landlock-confined child.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from actions.ops import Mkdir, Move, Op, Trash
from policies.decide import RunContext
from policies.errors import ConflictError, RefusedError
from sandbox.engine import Engine
from tests.support.engine import AlmaRoot, InProcessEngine, make_engine
from tests.support.trees import total_bytes

APPROVED = RunContext(approved_by_person=True)
FOLDERS = ["fotos", "año", "niño", "nin\u0303o", "Música", "cañón", "Árbol", "docs"]
NAMES = [
    "foto.jpg",
    "señal.txt",
    "canción.mp3",
    "informe.pdf",
    "ñandú.png",
    "acción.doc",
    "copia.tmp",
    "notas.md",
    "niño.txt",
    "nin\u0303o.txt",
    "Ñ",
]
CONTENTS = st.one_of(
    st.sampled_from([b"", b"duplicado", b"duplicado", b"\x00\xff\xfe", "ñ".encode()]),
    st.binary(max_size=48),
)
TREES = st.dictionaries(
    st.tuples(
        st.lists(st.sampled_from(FOLDERS), max_size=2, unique=True),
        st.sampled_from(NAMES),
    ).map(lambda t: "/".join(["user", *t[0], t[1]])),
    CONTENTS,
    min_size=1,
    max_size=10,
)
STALE_CHANGES = ("touch", "append", "occupy", "remove")


def _checked(step: Callable[..., None]) -> Callable[..., None]:
    """Note whether a step finished, so teardown does not pile a second error on a first."""

    @functools.wraps(step)
    def run(self: EngineMachine, *args: object, **kwargs: object) -> None:
        self.steps_ok = False
        step(self, *args, **kwargs)
        self.steps_ok = True

    return run


def _walk(alma: AlmaRoot) -> tuple[list[str], list[str]]:
    """(files, folders) under user/, root-relative, folders including user itself."""
    files: list[str] = []
    folders: list[str] = ["user"]
    for dirpath, dirnames, filenames in os.walk(alma.root / "user"):
        rel = os.path.relpath(dirpath, alma.root)
        folders += sorted(f"{rel}/{d}" for d in dirnames)
        files += sorted(f"{rel}/{f}" for f in filenames)
    return sorted(files), sorted(folders)


def _is_under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def build_plan(alma: AlmaRoot, draw: Callable[[st.SearchStrategy[object]], object]) -> list[Op]:
    """A random plan that is valid against the tree as it is now."""
    files, folders = _walk(alma)
    existing = set(files) | set(folders)
    vacated: set[str] = set()
    occupied: set[str] = set()
    unused = list(files)
    plan: list[Op] = []
    n_ops = int(draw(st.integers(1, 6)))  # type: ignore[call-overload]  # hypothesis's draw is untyped here
    for _ in range(n_ops):
        kind = draw(st.sampled_from(["mkdir", "move", "move", "trash"]))
        if kind == "mkdir":
            parent = str(draw(st.sampled_from(folders)))
            path = f"{parent}/{draw(st.sampled_from(FOLDERS))}"
            if (path in existing and path not in vacated) or path in occupied:
                continue
            plan.append(Mkdir(path))
            folders.append(path)
            occupied.add(path)
            continue
        if not unused:
            continue
        src = str(draw(st.sampled_from(unused)))
        if kind == "trash":
            plan.append(alma.trash(src))
        else:
            parent = str(draw(st.sampled_from(folders)))
            dst = f"{parent}/{draw(st.sampled_from([*NAMES, src.rpartition('/')[2]]))}"
            if (dst in existing and dst not in vacated) or dst in occupied:
                continue
            plan.append(alma.move(src, dst))
            occupied.add(dst)
        unused.remove(src)
        vacated.add(src)
    return plan


def _sha(data: bytes) -> str:
    return "file:" + hashlib.sha256(data).hexdigest()


@dataclass
class Change:
    """A person's change to one file of a plan, with how it shows in a snapshot and its revert."""

    kind: str
    path: str
    alma: AlmaRoot
    saved: os.stat_result | None = None
    aside: Path | None = None

    def apply(self) -> None:
        path = self.alma.path(self.path)
        if self.kind == "occupy":
            path.write_bytes(b"the person saved a file here meanwhile")
            return
        self.saved = os.stat(path)
        if self.kind == "touch":
            os.utime(path, ns=(self.saved.st_atime_ns, self.saved.st_mtime_ns + 10**9))
        elif self.kind == "append":
            with path.open("ab") as f:
                f.write(b" + an edit")
            os.utime(path, ns=(self.saved.st_atime_ns, self.saved.st_mtime_ns + 10**9))
        else:  # remove: moved out of the root for a while (same inode when it comes back)
            self.aside = self.alma.base / "aside"
            self.aside.mkdir(exist_ok=True)
            path.rename(self.aside / "f")

    def expected(self, before: dict[str, str], content: bytes) -> dict[str, str]:
        out = dict(before)
        if self.kind == "occupy":
            out[self.path] = _sha(b"the person saved a file here meanwhile")
            # a folder the plan created stays when the person saved into it: it is theirs now
            folder = self.path.rpartition("/")[0]
            while folder not in out:
                out[folder] = "dir"
                folder = folder.rpartition("/")[0]
        elif self.kind == "append":
            out[self.path] = _sha(content + b" + an edit")
        elif self.kind == "remove":
            del out[self.path]
        return out

    def revert(self, before: dict[str, str]) -> None:
        path = self.alma.path(self.path)
        if self.kind == "occupy":
            path.unlink()
            folder = self.path.rpartition("/")[0]
            while folder not in before:
                self.alma.path(folder).rmdir()
                folder = folder.rpartition("/")[0]
            return
        assert self.saved is not None
        if self.kind == "remove":
            assert self.aside is not None
            (self.aside / "f").rename(path)
        if self.kind == "append":
            os.truncate(path, self.saved.st_size)
        os.utime(path, ns=(self.saved.st_atime_ns, self.saved.st_mtime_ns))


class EngineMachine(RuleBasedStateMachine):
    BACKEND = "inprocess"

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="alma-prop-"))
        self.alma = AlmaRoot(self.base)
        self.engine: Engine | None = None
        self.start: dict[str, str] = {}
        self.fixed: dict[str, str] = {}
        self.start_bytes: Counter[str] = Counter()
        self.done: list[tuple[int, dict[str, str]]] = []  # (action id, user tree before it)
        self.placed: list[set[str]] = []  # per live action: where its moves put files
        self.steps_ok = True

    @property
    def eng(self) -> Engine:
        assert self.engine is not None
        return self.engine

    @initialize(tree=TREES)
    @_checked
    def make_tree(self, tree: dict[str, bytes]) -> None:
        files: dict[str, bytes] = {}
        for path, data in tree.items():
            # a name cannot be both a file and a folder: drop the file that clashes
            if not any(_is_under(other, path) and other != path for other in tree):
                files[path] = data
        self.alma.build(files)
        self.engine = make_engine(self.alma, self.BACKEND)
        self.start = self.alma.user_tree()
        self.fixed = self.alma.outside_user()
        self.start_bytes = self._bytes()

    def _bytes(self) -> Counter[str]:
        return Counter(total_bytes(self.alma.root / "user")) + Counter(
            total_bytes(self.alma.layout.trash)
        )

    @rule(data=st.data())
    @_checked
    def execute_plan(self, data: st.DataObject) -> None:
        plan = build_plan(self.alma, data.draw)
        if not plan:
            return
        before = self.alma.user_tree()
        action = self.eng.execute(plan, kind="organize", ctx=APPROVED)
        assert action["status"] == "done"
        event(f"plan executed ({len(self.done) + 1} live)")
        self.done.append((action["id"], before))
        self.placed.append({op.dst for op in plan if isinstance(op, Move)})

    @precondition(lambda self: bool(self.done))
    @rule()
    @_checked
    def undo_newest(self) -> None:
        action_id, before = self.done.pop()
        self.placed.pop()
        undo = self.eng.undo()
        assert undo["undoes"] == action_id and undo["status"] == "done"
        assert self.alma.user_tree() == before

    @rule(data=st.data())
    @_checked
    def execute_stale_plan(self, data: st.DataObject) -> None:
        plan = build_plan(self.alma, data.draw)
        # A person's change to a file a live action placed would (rightly, ctime tells) make
        # that action's undo a conflict later: change only files no live action has placed.
        placed = set().union(*self.placed)
        targets = [
            i
            for i, op in enumerate(plan)
            if isinstance(op, Move | Trash)
            and (op.src if isinstance(op, Move) else op.path) not in placed
        ]
        if not targets:
            return
        k = int(data.draw(st.sampled_from(targets)))
        op = plan[k]
        assert isinstance(op, Move | Trash)
        src = op.src if isinstance(op, Move) else op.path
        kind = str(data.draw(st.sampled_from(STALE_CHANGES)))
        # when: after planning, after validation, or right before op k (earlier ops applied)
        when = "before"
        if self.BACKEND == "inprocess":
            when = str(data.draw(st.sampled_from(["before", "validated", f"op{k}"])))
        path = src
        if kind == "occupy":
            dst = op.dst if isinstance(op, Move) else None
            ready = dst is not None and (
                when == f"op{k}" or (self.alma.path(dst).parent.is_dir() and dst != src)
            )
            if dst is None or not ready or (when != f"op{k}" and self.alma.path(dst).exists()):
                kind = "touch"
            else:
                path = dst
        event(f"stale plan: {kind} at {when.rstrip('0123456789')}")
        change = Change(kind, path, self.alma)
        content = self.alma.path(src).read_bytes()
        before = self.alma.world()
        if when == "before":
            change.apply()
        else:
            assert isinstance(self.engine, InProcessEngine)
            self.engine.checkpoint = lambda label: change.apply() if label == when else None
        try:
            with pytest.raises((ConflictError, RefusedError)):
                self.eng.execute(plan, kind="organize", ctx=APPROVED)
        finally:
            if isinstance(self.engine, InProcessEngine):
                self.engine.checkpoint = _no_checkpoint
        assert self.alma.world() == change.expected(before, content)
        change.revert(before)
        assert self.alma.world() == before

    @invariant()
    @_checked
    def bytes_are_conserved(self) -> None:
        if self.engine is None:
            return
        now = self._bytes()
        assert not self.start_bytes - now, "file contents were lost"
        if self.BACKEND == "inprocess":
            assert now == self.start_bytes, "stray copies were left behind"

    @invariant()
    @_checked
    def nothing_outside_user_changed(self) -> None:
        if self.engine is not None:
            assert self.alma.outside_user() == self.fixed

    def teardown(self) -> None:
        # Undo everything and compare with the start, unless a step already failed (its error
        # is the one to report, not a second one from undoing a half-checked state).
        try:
            if self.engine is not None and self.steps_ok:
                while self.done:
                    action_id, before = self.done.pop()
                    assert self.eng.undo()["undoes"] == action_id
                    assert self.alma.user_tree() == before
                assert self.alma.user_tree() == self.start
                self.eng.journal.close()
        finally:
            shutil.rmtree(self.base, ignore_errors=True)


def _no_checkpoint(label: str) -> None:
    return None


EngineMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=10,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    report_multiple_bugs=False,
)
test_engine_in_process = EngineMachine.TestCase
test_engine_in_process.pytestmark = [pytest.mark.slow]  # a stateful search: minutes


class ConfinedEngineMachine(EngineMachine):
    """The same machine through the real Landlock-confined child: fewer, slower examples."""

    BACKEND = "landlock"


ConfinedEngineMachine.TestCase.settings = settings(
    max_examples=6,
    stateful_step_count=6,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    report_multiple_bugs=False,
)
test_engine_confined = pytest.mark.slow(ConfinedEngineMachine.TestCase)
