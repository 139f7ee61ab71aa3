"""Helpers to drive the action engine in tests: a temp ALMA root, ops with real identities, an
Engine on a real sandbox, and the same engine run in-process for fast stateful tests.

In-process runs call the very code the confined child runs (``sandbox.runner.main``), minus the
confinement, so what they find is a bug of the engine, not of the harness. The attack tests that
need a hook between validation and execution use the executor's ``checkpoint`` callback.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from actions.ops import Identity, Move, Op, Trash, plan_to_list
from actions.safefs import identity_of
from policies.config import Policy, policy_from_dict
from policies.layout import RootLayout
from sandbox import confine, landlock, runner
from sandbox.confine import Backend, Confinement
from sandbox.engine import Engine
from sandbox.executor import Zones
from state.journal import Journal
from tests.support.trees import snapshot

Checkpoint = Callable[[str], None]
REQUIRE_BACKENDS = os.environ.get("ALMA_REQUIRE_BACKENDS") == "1"
REAL_BACKENDS = ("landlock", "bwrap", "firejail")

#: What every test root starts with outside user/: read-only zones, ALMA's own data, a neighbour.
SYSTEM_FILES = {
    "system/autonomy.conf": b'level = "suggest"\n',
    "system/principles.md": b"# Principios\nNunca pierdas un archivo.\n",
    "logs/2026-11-22.md": b"# 2026-11-22\n\n## 10:41:03 \xc2\xb7 usuario\nHola\n",
    "docs/leeme.md": b"documentaci\xc3\xb3n\n",
    ".alma/daemon-data.txt": b"the daemon's own data: never a target\n",
}
OUTSIDE_FILES = {"precious.txt": b"outside the ALMA root: never touched\n"}


@dataclass
class AlmaRoot:
    """``base/ALMA`` (the root) beside ``base/outside`` (a folder no action may reach)."""

    base: Path
    root: Path = field(init=False)
    outside: Path = field(init=False)
    layout: RootLayout = field(init=False)

    def __post_init__(self) -> None:
        self.root = self.base / "ALMA"
        self.outside = self.base / "outside"
        self.layout = RootLayout(self.root)

    def build(self, user_files: dict[str, bytes] | None = None) -> AlmaRoot:
        for folder in ("system", "logs", "user", "docs", ".alma/journal", ".alma/trash"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        self.outside.mkdir(parents=True, exist_ok=True)
        for rel, data in SYSTEM_FILES.items():
            self.write(rel, data)
        for name, data in OUTSIDE_FILES.items():
            (self.outside / name).write_bytes(data)
        for rel, data in (user_files or {}).items():
            self.write(rel, data)
        return self

    def path(self, rel: str | bytes) -> Path:
        if isinstance(rel, bytes):
            return Path(os.fsdecode(os.path.join(os.fsencode(self.root), rel)))
        return self.root / rel

    def write(self, rel: str, data: bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def ident(self, rel: str, *, sha256: bool = False) -> Identity:
        """The identity a planner records for ``rel`` right now (with the hash if asked)."""
        path = self.path(rel)
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if sha256 else None
        return identity_of(os.lstat(path), sha256=digest)

    def move(self, src: str, dst: str, *, sha256: bool = False) -> Move:
        return Move(src, dst, self.ident(src, sha256=sha256))

    def trash(self, rel: str, *, sha256: bool = False) -> Trash:
        return Trash(rel, self.ident(rel, sha256=sha256))

    def user_tree(self) -> dict[str, str]:
        """user/ alone, byte for byte (what undo(do(S)) == S compares)."""
        return {f"user/{k}": v for k, v in snapshot(self.root / "user", skip=()).items()}

    def world(self) -> dict[str, str]:
        """Everything an action could touch, byte for byte: the whole root (ALMA's trash and
        data included, the journal database excepted, since every attempt is recorded there)
        and the sibling folder outside the root."""
        out = {k: v for k, v in snapshot(self.root, skip=(".alma",)).items()}
        data = snapshot(self.root / ".alma", skip=("journal",))
        out.update({f".alma/{k}": v for k, v in data.items()})
        out.update({f"<outside>/{k}": v for k, v in snapshot(self.outside, skip=()).items()})
        return out

    def outside_user(self) -> dict[str, str]:
        """Everything but user/ and ALMA's trash and journal: what no action may ever change."""
        return {
            k: v
            for k, v in self.world().items()
            if not k.startswith(("user/", ".alma/trash")) and k != "user"
        }


def require_backend(name: str) -> Confinement:
    """The working confinement ``name``, or skip when its tool is missing (fail under
    ALMA_REQUIRE_BACKENDS=1). An installed backend that does not confine is a failure."""
    backend = Backend(name)
    missing: str | None = None
    if backend is Backend.LANDLOCK:
        try:
            if landlock.abi_version() < landlock.MIN_ABI:
                missing = "Landlock ABI is below 2"
        except landlock.LandlockError as exc:
            missing = str(exc)
    elif shutil.which(name) is None:
        missing = f"{name} is not installed"
    if missing is not None:
        if REQUIRE_BACKENDS:
            pytest.fail(f"ALMA_REQUIRE_BACKENDS=1 but {missing}")
        pytest.skip(missing)
    ok, detail = confine.probe(backend)
    if not ok and "firejail.users" in detail and not REQUIRE_BACKENDS:
        pytest.skip(detail)
    assert ok, f"{name} is installed but does not confine: {detail}"
    return Confinement(backend, detail)


def default_policy(*, retention_days: int | None = None, **thresholds: int) -> Policy:
    data: dict[str, Any] = {"sandbox": {"allow_unconfined": True}}
    if thresholds:
        data["thresholds"] = thresholds
    if retention_days is not None:
        data["trash"] = {"retention_days": retention_days}
    return policy_from_dict(data)


class InProcessEngine(Engine):
    """The Engine with its child run in this process: ``sandbox.runner.main``, the code the
    confined child runs, called directly. ``checkpoint`` sees the executor's labels."""

    def __init__(
        self,
        layout: RootLayout,
        journal: Journal,
        policy: Callable[[], Policy],
        checkpoint: Checkpoint | None = None,
    ) -> None:
        super().__init__(layout, journal, Confinement(Backend.NONE, "in-process (tests)"), policy)
        self.checkpoint: Checkpoint = checkpoint or (lambda label: None)

    def _prestart(self, policy: Policy) -> None:
        return None  # the child runs in this process, when its action is recorded

    def _run_child(self, args: list[str], policy: Policy) -> dict[str, Any]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            runner.main(self.runner_args(args, policy), checkpoint=self.checkpoint)
        lines = [ln for ln in out.getvalue().splitlines() if ln.startswith("{")]
        result: dict[str, Any] = json.loads(lines[-1])
        return result


def make_engine(alma: AlmaRoot, backend: str = "landlock", policy: Policy | None = None) -> Engine:
    """An Engine on the real confinement ``backend`` (or ``"inprocess"``)."""
    pol = policy or default_policy()
    journal = Journal(alma.layout.journal_file)
    if backend == "inprocess":
        return InProcessEngine(alma.layout, journal, lambda: pol)
    return Engine(alma.layout, journal, require_backend(backend), lambda: pol)


def execute_in_process(
    alma: AlmaRoot,
    plan: Sequence[Op],
    *,
    checkpoint: Checkpoint | None = None,
    policy: Policy | None = None,
) -> dict[str, Any]:
    """Run ``plan`` through the executor alone (no policy gate, no sandbox): the executor's own
    defences, as the confined child applies them. Raises what the child would report."""
    pol = policy or default_policy()
    journal = Journal(alma.layout.journal_file)
    try:
        action_id = journal.create_action(kind="organize", plan=plan_to_list(plan))
        zones = Zones.from_lists(pol.zones.writable, pol.zones.read_only)
        return runner.execute(
            alma.root, journal, action_id, zones, checkpoint or (lambda label: None)
        )
    finally:
        journal.close()
