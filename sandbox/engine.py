"""The parent side of execution: the policy gate, the confined child, undo, recovery, trash.

The daemon calls :class:`Engine`; it never touches a person's file itself. Every change happens
in ``python -m sandbox.runner`` confined by the chosen backend (sandbox.confine).

One module, longer than most, because the gate, the child, undo, recovery and the trash share
the executor lock and the journal's action rows; what runs in the child lives apart
(sandbox.executor, sandbox.recovery).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import logging
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from actions.inverse import inverse_plan
from actions.ops import Op, Restore, StoredPlan, files_touched, write_paths
from actions.safe_read import read_file
from actions.safefs import identity_of, path_problem
from actions.tree import Tree
from policies.config import Policy
from policies.decide import Decision, PlanFacts, RunContext, Verdict, decide
from policies.errors import (
    AlmaError,
    ErrorCode,
    InvalidStateError,
    NotFoundError,
    RefusedError,
    UnavailableError,
    as_alma_error,
    cause_of,
    error_from_wire,
)
from policies.i18n import _, current_language
from policies.kinds import RECORD_KINDS, SANDBOX
from policies.layout import RootLayout
from policies.modes import PRIVATE_DIR, person_umask
from policies.zones import split_zone
from sandbox.confine import Backend, Confinement, isolated_start
from sandbox.runner import Answer, Recovered
from state.journal import Action, Journal, family_of, undo_refusal

log = logging.getLogger("alma.engine")
_T = TypeVar("_T")
_gc_lock = threading.Lock()
_gc_pauses = 0  # threads inside _collector_paused
_gc_was_enabled = False  # the collector's state when the first of them entered


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a plan's thousands of small, acyclic
    objects are built: it ran again and again over all of them, a fifth of an undo of 10,000
    files. Refcounting still frees everything. The switch is process-wide and plans are built
    from more than one thread, so the first to enter records the state and the last to leave
    restores it (checking and switching per thread once left it off for good)."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def _relax_ctime(plan: list[Op], touched_later: set[str]) -> list[Op]:
    """A file a later ALMA action renamed has a new ctime from our own rename: for those, the
    undo checks inode, size and mtime only. Every other file must be exactly the one the
    action left (ctime included: a deleted and recreated file is not it, even on the same
    inode number). Each op says which file it checks (actions.ops.Op.relax_ctime)."""
    if not touched_later:
        return plan
    return [op.relax_ctime(touched_later) for op in plan]


#: The kind of the action that puts files back from the trash (`alma-ctl trash restore`).
TRASH_RESTORE = "trash_restore"
_PERSON = RunContext(approved_by_person=True)  # an undo is always a person's (contract §2)


class _Child:
    """One run of the confined child: its answer is the last JSON line it prints."""

    def __init__(self, proc: subprocess.Popen[str], args: list[str]) -> None:
        self.proc = proc
        self.args = args

    def result(self, stdin: str | None = None) -> Answer:
        out, err = self.proc.communicate(stdin)
        rc = self.proc.returncode
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        if lines and err.strip():
            log.warning("executor child said: %s", err[-4000:])
        if not lines:
            log.error("executor child failed (exit %s): %s", rc, err[-4000:])
            return {"ok": False, "crashed": True, "rc": rc, "stderr": err[-2000:]}
        result: Answer = json.loads(lines[-1])
        log.info(
            "executor child %s: exit %s, peak RSS %s kB", self.args, rc, result.get("peak_rss_kb")
        )
        return result

    def run(self, action_id: int) -> Answer:
        """Hand a prestarted child its action (``--action -``) and wait for its answer."""
        self.args = ["--action", str(action_id)]
        return self.result(f"{action_id}\n")

    def cancel(self) -> None:
        """A prestarted child whose action never came: end of file on its stdin, and it exits
        having touched nothing."""
        try:
            self.proc.communicate("", timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()


class Engine:
    def __init__(
        self,
        layout: RootLayout,
        journal: Journal,
        confinement: Confinement,
        policy: Callable[[], Policy],
        *,
        python: str = sys.executable,
    ) -> None:
        self.layout = layout
        self.journal = journal
        self.confinement = confinement
        self.policy = policy
        self.python = python
        self._lock = threading.Lock()  # one action at a time from this daemon
        for d in (layout.journal_dir, layout.trash):
            d.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)

    # -- the child ------------------------------------------------------------------------
    def _writable_dirs(self, policy: Policy) -> list[str]:
        dirs = [self.layout.journal_dir, self.layout.trash]
        for zone in policy.zones.writable:
            # Every component from the root down, not only the last: a zone reached through a
            # symlinked parent would grant a folder outside the root. The executor's fd walk
            # refuses it anyway; the confinement must not grant it either.
            path = self.layout.root
            for part in split_zone(zone):
                path = path / part
                try:
                    st = path.lstat()
                except FileNotFoundError:
                    break
                if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
                    break
            else:
                dirs.append(path)
        return [os.path.realpath(d) for d in dirs]

    def runner_args(self, args: list[str], policy: Policy) -> list[str]:
        """The command line of ``sandbox.runner`` for ``args`` under ``policy``. A zone is
        given as ``--writable=ZONE``: a zone named ``-entrada`` would be read as an option."""
        argv = ["--root", os.path.realpath(self.layout.root), *args]
        argv += [f"--writable={zone}" for zone in policy.zones.writable]
        argv += [f"--read-only={zone}" for zone in policy.zones.read_only]
        return argv

    def _start_child(self, args: list[str], policy: Policy, *, stdin: bool = False) -> _Child:
        argv = isolated_start("sandbox.runner", self.runner_args(args, policy), self.python)
        cmd = self.confinement.wrap(argv, self._writable_dirs(policy))
        env = dict(os.environ, TMPDIR=str(self.layout.journal_dir))
        # The child's sentences (conflicts, refusals) are for the person who asked: their language.
        env["LANGUAGE"] = current_language()
        # The child creates the person's folders: under their umask, not the daemon's 077.
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            umask=person_umask(),
        )
        return _Child(proc, args)

    def _run_child(self, args: list[str], policy: Policy) -> Answer:
        return self._start_child(args, policy).result()

    def _prestart(self, policy: Policy) -> _Child | None:
        """The executor child for an action not recorded yet, started now: its interpreter's
        start and imports (a large share of a small action's time) overlap
        with the daemon's work on the plan (the gate, the inverse, storing it). It touches
        nothing, not even the executor lock, before it reads the action's id on its stdin, and
        exits at once on end of file (:meth:`_Child.cancel`)."""
        return self._start_child(["--action", "-"], policy, stdin=True)

    # -- executing ------------------------------------------------------------------------
    def check(self, plan: Sequence[Op], kind: str, ctx: RunContext, policy: Policy) -> Decision:
        """The policy's verdict on ``plan``. ``policy`` is the one read the action makes (its
        child is confined by that read's zones), so an action is never judged by one policy and
        confined by another when autonomy.conf changes in between."""
        # Names first: one that is not UTF-8 could not even be journaled, let alone shown.
        paths = write_paths(plan)  # once: 200,000 of them for an undo of 100,000 moves
        read = (name for op in plan for name in op.gate_names())
        for problem in filter(None, map(path_problem, itertools.chain(paths, read))):
            return Decision(Verdict.REFUSE, problem)
        facts = PlanFacts(kind=kind, paths=paths, files=files_touched(plan))
        return decide(policy, facts, ctx)

    def admit(self, plan: Sequence[Op], kind: str, ctx: RunContext, policy: Policy) -> None:
        """The policy gate, as an error: RefusedError when refused or when it needs a person's
        approval it does not have. Every executor (files here, memory merges in the agent)
        passes through it."""
        decision = self.check(plan, kind, ctx, policy)
        if decision.verdict is Verdict.REFUSE:
            raise RefusedError(_("Refused: {reason}", reason=decision.reason))
        if decision.verdict is Verdict.ASK:
            raise RefusedError(
                _("This needs a person's approval: {reason}", reason=decision.reason)
            )

    def execute(
        self,
        plan: Sequence[Op] | StoredPlan,
        *,
        kind: str,
        ctx: RunContext,
        suggestion_id: int | None = None,
        undoes: int | None = None,
    ) -> Action:
        """Run ``plan`` if the policy allows it now; return the Action. Raises RefusedError when
        refused or when it needs a person's approval it does not have; ConflictError (nothing
        changed) when the files are not as the plan expects. A suggestion's stored plan goes
        into the journal as the text it was read from."""
        policy = self.policy()
        with _collector_paused():
            self.admit(plan.ops if isinstance(plan, StoredPlan) else plan, kind, ctx, policy)
        self._require_sandbox(policy)
        return self._execute(
            plan,
            self._prestart(policy),
            policy,
            kind=kind,
            ctx=ctx,
            suggestion_id=suggestion_id,
            undoes=undoes,
        )

    def _require_sandbox(self, policy: Policy) -> None:
        if self.confinement.backend is Backend.NONE and not policy.sandbox.allow_unconfined:
            raise UnavailableError(
                _(
                    "No sandbox works on this machine, so nothing is executed; install bubblewrap "
                    "or firejail, or see docs/sandbox.md."
                )
            )

    def _execute(
        self,
        plan: Sequence[Op] | StoredPlan,
        child: _Child | None,
        policy: Policy,
        *,
        kind: str,
        ctx: RunContext,
        suggestion_id: int | None,
        undoes: int | None,
    ) -> Action:
        """Record the admitted ``plan`` as an action and run it in ``child`` (prestarted for
        ``policy``'s zones), or in a child started now; a child not used is cancelled."""
        try:
            with self._lock:
                with _collector_paused():
                    action_id = self.journal.create_action(
                        kind=kind,
                        plan=plan,  # copied as text, or encoded op by op
                        suggestion_id=suggestion_id,
                        auto=not ctx.approved_by_person,
                        undoes=undoes,
                        sandbox=str(self.confinement.backend),
                    )
                handed, child = child, None
                self._run_action(["--action", str(action_id)], action_id, policy, handed)
        finally:
            if child is not None:
                child.cancel()
        return self.journal.action(action_id)

    def _run_action(
        self, args: list[str], action_id: int, policy: Policy, child: _Child | None = None
    ) -> None:
        """Run the child on one action; raise what stopped it. Whatever happens (the child
        crashed, could not start, answered nonsense), the action is not left ``running``:
        recovery takes it back from the files, or it is closed ``failed`` with a sentence that
        says how to finish."""
        try:
            result = self._run_child(args, policy) if child is None else child.run(action_id)
            if result.get("crashed"):
                raise self._after_crash(action_id, result, policy)
            if not result.get("ok"):
                raise error_from_wire(result)
        except Exception as exc:
            error = as_alma_error(exc)
            if error is not exc:
                log.error("action %s: %s", action_id, cause_of(exc), exc_info=exc)
            raise error from (None if error is exc else exc)
        finally:
            self._close_if_running(action_id, policy)
            self.journal.checkpoint_later()  # the action is over: not while the person waits

    def _after_crash(self, action_id: int, result: Answer, policy: Policy) -> AlmaError:
        report = self._recover_locked(policy)
        for entry in report:
            if entry.get("action") == action_id and entry.get("status") == "failed":
                return AlmaError(str(entry.get("error")))
        return AlmaError(
            _(
                "The executor stopped unexpectedly (exit {rc}); action {id} was rolled back and "
                "nothing was changed. See the daemon log.",
                rc=result.get("rc"),
                id=action_id,
            )
        )

    def _close_if_running(self, action_id: int, policy: Policy) -> None:
        try:
            if self.journal.action_row(action_id)["status"] != "running":
                return
            self._recover_locked(policy)
            if self.journal.action_row(action_id)["status"] != "running":
                return
        except Exception:
            log.exception("action %s: recovery after a failure did not finish", action_id)
        try:
            self.journal.finish(
                action_id,
                "failed",
                error=f"ALMA could not check what action {action_id} left; run "
                f"`alma-ctl undo {action_id}` to take back whatever of it is still done.",
                code=int(ErrorCode.INTERNAL),
            )
        except Exception:
            log.exception("action %s stays running: the journal cannot be written", action_id)

    def undo_target(self, action_id: int | None) -> sqlite3.Row:
        """The action an undo reverts: the one named, or the newest done one that is not itself
        an undo. InvalidStateError when it is not done (already undone, rolled back, ...); a
        failed file action named by its id is one whose rollback stopped halfway, and undoing
        it finishes that rollback."""
        target = action_id if action_id is not None else self.journal.newest_undoable()
        if target is None:
            raise InvalidStateError(
                _("There is nothing to undo: no action is done and not undone.")
            )
        row = self.journal.action_row(target)
        refusal = undo_refusal(row)
        if refusal is None:
            return row
        named_failure = row["status"] == "failed" and action_id is not None
        if named_failure and family_of(row) == SANDBOX and row["kind"] not in RECORD_KINDS:
            return row
        raise InvalidStateError(refusal)

    def undo(self, action_id: int | None = None) -> Action:
        """Revert an action as a new journaled action (a bare undo never reverts an undo), or
        finish taking back a failed one (then the result is that action, now rolled back)."""
        row = self.undo_target(action_id)
        target = int(row["id"])
        if row["status"] == "failed":
            with self._lock:
                self._run_action(["--rollback", str(target)], target, self.policy())
            return self.journal.action(target)
        policy = self.policy()
        self._require_sandbox(policy)
        child = self._prestart(policy)  # it starts while the inverse is built
        try:
            plan = self.undo_plan(target)
            with _collector_paused():
                self.admit(plan, str(row["kind"]), _PERSON, policy)
        except BaseException:
            if child is not None:
                child.cancel()
            raise
        return self._execute(
            plan,
            child,
            policy,
            kind=str(row["kind"]),
            ctx=_PERSON,
            suggestion_id=row["suggestion_id"],
            undoes=target,
        )

    def undo_plan(self, target: int) -> list[Op]:
        """The inverse of what ``target`` did, newest op first: the plan its undo runs."""
        with _collector_paused():
            rows = self.journal.iter_done_rows(target)  # a stream: only the inverse ops are kept
            return _relax_ctime(inverse_plan(rows), self.journal.paths_touched_after(target))

    def run_in_daemon(self, apply: Callable[[Journal], _T]) -> _T:
        """Run a journaled change of ALMA's own data (a memory merge, or its undo) here in the
        daemon rather than in the sandbox, one action at a time with the file actions: ``apply``
        records its action in this journal. The caller passed the policy gate (``admit``)."""
        with self._lock:
            return apply(self.journal)

    @contextlib.contextmanager
    def between_actions(self) -> Iterator[None]:
        """Held while no action runs: the action in flight finishes (or rolls back) first, and
        none starts until the caller is done (the daemon closing its stores)."""
        with self._lock:
            yield

    def recover(self) -> list[Recovered]:
        """At start, before anything else: roll back every interrupted action."""
        with self._lock:
            return self._recover_locked(self.policy())

    def _recover_locked(self, policy: Policy) -> list[Recovered]:
        if not self.journal.running():
            return []
        result = self._run_child(["--recover"], policy)
        self.journal.checkpoint_later()
        if not result.get("ok"):
            raise AlmaError(
                _(
                    "Recovery of an interrupted action did not finish; ALMA changed nothing more. "
                    "Details: {details}",
                    details=result.get("message") or result.get("stderr"),
                )
            )
        return result.get("recovered", [])

    # -- trash ----------------------------------------------------------------------------
    def trash_list(self) -> list[dict[str, Any]]:
        """What is in the trash, action by action, with where each file was (from the
        action's manifest.json). A damaged manifest (or one that is not a plain file) does not
        hide its files: they are listed with ``original`` None and a ``problem`` sentence."""
        entries: list[dict[str, Any]] = []
        trash = self.layout.trash
        actions = sorted(trash.iterdir() if trash.is_dir() else [], key=lambda p: p.name)
        with Tree(self.layout.root) as tree:
            for adir in actions:
                if not adir.name.isdigit() or not _is_real_dir(adir):
                    continue
                if not os.path.lexists(adir / "manifest.json"):
                    continue  # nothing of an action was trashed before its manifest
                origins = _manifest_origins(tree, adir)
                problem = None
                if origins is None:
                    problem = _(
                        "The manifest of action {id} in the trash is damaged, so where its "
                        "files were is not shown here; `alma-ctl undo {id}` puts them back all "
                        "the same (it reads the journal).",
                        id=int(adir.name),
                    )
                for where in sorted(adir.iterdir(), key=lambda p: p.name):
                    if not where.name.isdigit() or not _is_real_dir(where):
                        continue
                    if origins is not None and where.name not in origins:
                        continue
                    inside = sorted(where.iterdir())
                    if not inside:
                        continue
                    entry: dict[str, Any] = {
                        "action": int(adir.name),
                        "original": None if origins is None else origins[where.name],
                        "trash": str(inside[0].relative_to(self.layout.root)),
                        "trashed_at": time.strftime(
                            "%Y-%m-%dT%H:%M:%S", time.gmtime(where.lstat().st_mtime)
                        ),
                    }
                    if problem is not None:
                        entry["problem"] = problem
                    entries.append(entry)
        return entries

    def trash_restore(self, action_id: int, path: str | None) -> Action:
        """Put back where it was the file of action ``action_id``'s trash that was at ``path``
        (every file of that entry when None), as one journaled action that undo takes back.
        Never over an existing file: then nothing comes back (ConflictError)."""
        held = [entry for entry in self.trash_list() if entry["action"] == action_id]
        if path is not None:
            held = [entry for entry in held if path in (entry["original"], entry["trash"])]
        if not held:
            what = _("action {id}", id=action_id) if path is None else repr(path)
            raise NotFoundError(
                _(
                    "The trash holds nothing of {what}; `alma-ctl trash list` shows what it "
                    "holds and where each file was.",
                    what=what,
                )
            )
        plan: list[Op] = []
        for entry in held:
            if entry["original"] is None:  # a damaged manifest: undo knows, this does not
                raise InvalidStateError(entry["problem"])
            trashed = os.lstat(self.layout.root / entry["trash"])
            plan.append(
                Restore(trash=entry["trash"], path=entry["original"], expect=identity_of(trashed))
            )
        return self.execute(plan, kind=TRASH_RESTORE, ctx=_PERSON)

    def trash_empty(self, older_than_days: int) -> dict[str, Any]:
        """Remove for good the trash of actions older than ``older_than_days`` (a person's
        command only: the daemon never calls this on its own)."""
        keep = self.policy().trash.retention_days
        if older_than_days < keep:
            raise RefusedError(
                _(
                    "The trash keeps everything at least {days} days (retention_days in "
                    "system/autonomy.conf): ask for {days} days or more, or lower retention_days "
                    "there first.",
                    days=keep,
                )
            )
        cutoff = time.time() - older_than_days * 86400
        removed = 0
        with self._lock:
            trash = self.layout.trash
            for adir in list(trash.iterdir()) if trash.is_dir() else []:
                if not adir.name.isdigit() or adir.is_symlink() or adir.stat().st_mtime > cutoff:
                    continue
                held = sum(1 for p in adir.rglob("*") if p.is_file() and p.name != "manifest.json")
                shutil.rmtree(adir)
                removed += held
                if held:  # a manifest alone (a create's) held nothing an undo needs
                    self.journal.mark_trash_emptied(int(adir.name))
        return {"removed": removed, "older_than_days": older_than_days}


#: A manifest lists one line per trashed file: room for the largest action a plan allows.
_MANIFEST_LIMIT = 64 * 2**20


def _is_real_dir(path: Path) -> bool:
    """A folder, not a link to one (the trash is ALMA's; a link planted there is not)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _manifest_origins(tree: Tree, adir: Path) -> dict[str, str] | None:
    """Entry number -> original path, from an action's manifest.json read the safe way
    (actions.safe_read.read_file: no link followed, a bounded read); None when it cannot be read
    or is not the shape the executor writes."""
    rel = str((adir / "manifest.json").relative_to(tree.root))
    got = read_file(tree, rel, limit=_MANIFEST_LIMIT)
    if got is None or got.cut:
        return None
    try:
        data = json.loads(got.data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError included
        return None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return None
    origins: dict[str, str] = {}
    for idx, entry in entries.items():
        original = entry.get("from") if isinstance(entry, dict) else None
        if not isinstance(original, str):
            return None
        origins[idx] = original
    return origins
