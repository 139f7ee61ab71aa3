"""The agent: the daemon's one entry to a suggestion's life, and to undo and the day's report.

It holds no file logic and no step of its own: the analysis (agent.loop.analysis) finds and
admits suggestions, a decision (agent.loop.decision) runs or rejects one, the engine executes
and undoes. Every analysis and decision is serialized by one lock. The suggestions table is
the only record of a suggestion's state (``pending`` is a row that waits for a person).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, Literal, NotRequired, ParamSpec, TypedDict, TypeVar, cast

from actions import summary
from actions.ops import CONTENT_OPS
from agent.day.reminders import Reminders
from agent.day.report_service import DailyReports
from agent.detectors import diagnose
from agent.loop.analysis import Analyst, Detect, Notify, no_notify, track_record
from agent.loop.autonomy import Autonomy
from agent.loop.decision import AuditLog, Decider
from agent.loop.families import Absent, ActionFamily, Families
from agent.loop.track import ANY_FOLDER, UNDOS_TO_STOP, TrackRecord
from agent.memory import merge_actions as memory_actions
from agent.memory.loader import MemoryLoader
from agent.memory.merge_actions import MemoryFamily
from agent.memory.recall import taken
from agent.policy import PolicyHolder
from agent.voice.model import Complete
from policies.errors import (
    AlmaError,
    BadArgumentError,
    ConflictError,
    InvalidStateError,
    RefusedError,
    UnavailableError,
)
from policies.i18n import _
from policies.kinds import BACKUP, MEMORY, SANDBOX
from policies.layout import RootLayout
from policies.results import (
    Action,
    Analysis,
    AnalysisStarted,
    AutonomyStatus,
    Break,
    Feedback,
    JSONObject,
    MemoryEdited,
    Skipped,
    Stats,
    Suggestion,
    SuggestionShown,
    as_action,
)
from sandbox.engine import Engine
from state.db import utcnow
from state.suggestions import SuggestionStore

__all__ = ["Agent", "Detect"]

log = logging.getLogger("alma.agent")

_P = ParamSpec("_P")
_R = TypeVar("_R")
_malloc_trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's; None elsewhere


def gives_back_memory(work: Callable[_P, _R]) -> Callable[_P, _R]:
    """After ``work``, the heap's free pages go back to the system (glibc's malloc_trim, quick).
    An analysis or an action of 100,000 files frees most of what it used, but glibc keeps it,
    and the next action's peak would stand on top of it (docs/benchmarks.md)."""

    @functools.wraps(work)
    def then_trim(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return work(*args, **kwargs)
        finally:
            if _malloc_trim is not None:
                _malloc_trim(0)

    return then_trim


Trigger = Literal["person", "event", "schedule"]


class Analysed(TypedDict):
    """One run of the loop: the suggestions it proposed, what it did not propose and why, and
    how many findings wait for the model (``model=False``)."""

    proposed: list[int]
    skipped: list[Skipped]
    deferred: NotRequired[int]


class Agent:
    def __init__(
        self,
        layout: RootLayout,
        policy: PolicyHolder,
        store: SuggestionStore,
        engine: Engine,
        autonomy: Autonomy,
        detect: Detect,
        *,
        notify: Notify = no_notify,
        clock: Callable[[], float] = time.time,
        memory: MemoryLoader | None = None,
        complete: Complete | None = None,
        model_timeout_s: float = 120.0,
        backup: ActionFamily | None = None,
    ) -> None:
        self.layout = layout
        self.policy = policy
        self.store = store
        self.engine = engine
        self.autonomy = autonomy
        self.notify = notify
        self.clock = clock
        self.memory = memory
        self._lock = threading.RLock()
        self._asked = threading.Lock()  # one analysis a person asked for at a time
        #: Where each action family's plans run and its actions are undone; ``backup`` from
        #: the composition root (agent.backup.restore.BackupFamily: a wing above this one).
        self.families = Families(
            {
                SANDBOX: engine,
                MEMORY: MemoryFamily(engine, memory),
                BACKUP: Absent(BACKUP) if backup is None else backup,
            }
        )
        self._closed = False  # see close()
        self.reminders = Reminders(store)
        self.auditlog = AuditLog(layout, engine)
        self.reports = DailyReports(
            layout,
            store,
            engine.journal,
            self._lock,
            memory=memory,
            complete=complete,
            clock=clock,
            model_timeout_s=model_timeout_s,
            policy=policy,
        )
        self.analyst = Analyst(
            layout,
            policy,
            store,
            autonomy,
            detect,
            memory=memory,
            complete=complete,
            clock=clock,
            notify=notify,
        )
        self.decider = Decider(
            store,
            engine,
            autonomy,
            self.reminders,
            self.auditlog,
            self.families,
            memory=memory,
            clock=clock,
            notify=notify,
        )

    @property
    def audit_problem(self) -> str | None:
        """Why the last action is not in acciones.md (agent.loop.decision.AuditLog), or None."""
        return self.auditlog.problem

    def remind_due(self) -> list[Break]:
        """Show the reminders that are due as desktop notifications (the schedule calls it)."""
        due = self.reminders.due(datetime.fromtimestamp(self.clock()))
        for item in due:
            self.notify(_("ALMA: a break"), str(item["text"]))
        return due

    def _track_record(self) -> TrackRecord:
        return track_record(self.store, self.policy)

    def close(self) -> None:
        """The daemon stops: the op in flight finishes (or rolls back) first, and no analysis
        starts after, whatever thread asks (a debounced file event, the schedule, `analyze`
        without --wait): the journal and the stores it writes to are closed next."""
        with self._lock, self.engine.between_actions():
            self._closed = True

    # -- analysis -----------------------------------------------------------------------------
    def analyze(self, *, trigger: Trigger) -> list[int]:
        return [int(sid) for sid in self.analysis(trigger=trigger)["proposed"]]

    def analyze_requested(self, wait: bool) -> Analysis | AnalysisStarted:
        """``alma-ctl analyze``: with ``wait``, what it proposed and what waits; else started
        in the background (at level off refused at once, so the person hears why)."""
        if wait:
            with self._asked:
                done = self.analysis(trigger="person")
            pending = self.store.count("pending")
            return {"proposed": done["proposed"], "skipped": done["skipped"], "pending": pending}
        if self.autonomy.effective() == "off":
            self.analyze(trigger="person")  # raises the refusal
        self._analyze_in_background()
        return {"started": True}

    def autonomy_on(self) -> AutonomyStatus:
        return self._catch_up(self.autonomy.on)

    def autonomy_level(self, level: str) -> AutonomyStatus:
        return self._catch_up(lambda: self.autonomy.set_level(level))

    def _catch_up(self, change: Callable[[], AutonomyStatus]) -> AutonomyStatus:
        """Change autonomy; if proposals on events resume (off or manual -> suggest or auto),
        analyse now, as at start: the events seen while paused proposed nothing, and the next
        rescan may be many minutes away."""
        quiet = ("off", "manual")
        before = self.autonomy.effective()
        status = change()
        if before in quiet and self.autonomy.effective() not in quiet:
            self._analyze_in_background()
        return status

    def _analyze_in_background(self) -> None:
        threading.Thread(target=self._analyze_quietly, daemon=True, name="analyze").start()

    def _analyze_quietly(self) -> None:
        with self._asked:
            try:
                self.analyze(trigger="person")
            except Exception:  # a background run has nobody to answer; the log has it
                log.exception("analysis failed")

    @gives_back_memory
    def analysis(self, *, trigger: Trigger, model: bool = True) -> Analysed:
        """Run the loop once: what was proposed, and what was not and why; ``model`` False
        leaves what the model would explain to the next analysis (``deferred`` counts it)."""
        level = self.autonomy.effective()
        if level == "off":
            if trigger == "person":
                raise RefusedError(
                    _("Autonomy is off, so nothing is proposed; `alma-ctl autonomy on` resumes it.")
                )
            return {"proposed": [], "skipped": []}
        if level == "manual" and trigger != "person":
            return {"proposed": [], "skipped": []}
        with self._lock:
            if self._closed:
                return {"proposed": [], "skipped": []}
            found = self.analyst.run(self.clock(), model=model)
            for sid, auto in found.admitted:
                if auto:
                    try:
                        self.decider.run(sid, auto=True)
                    except AlmaError as exc:  # the row says why; the analysis goes on
                        log.info("suggestion %s did not run on its own: %s", sid, exc)
            for skip in found.skipped:
                log.info("not proposed (%s %s): %s", skip["kind"], skip["target"], skip["why"])
            self.store.set_setting("last_analysis", utcnow())
            if self.memory is not None and self.memory.loaded:
                # After the analysis, not during it: the scan's work would slow the analysis
                # down (the GIL, two cores) for merges that can wait for the next.
                self.memory.service.start_merge_scan()
            proposed = [sid for sid, _auto in found.admitted]
            return {"proposed": proposed, "skipped": found.skipped, "deferred": found.deferred}

    # -- the track record -------------------------------------------------------------------
    def feedback(self, id: int, verdict: str, reason: str | None, action: bool = False) -> Feedback:
        """A person's verdict (``util`` or ``inutil``, control.commands.VERDICTS) on a
        suggestion, or (``action``) on an action, which is a verdict on the suggestion it came
        from: the track record counts per suggestion."""
        with self._lock:
            aid = id if action else None
            sid = id if aid is None else self._suggestion_of(aid)
            row = self.store.row(sid)
            event: Literal["useful", "useless"] = "useful" if verdict == "util" else "useless"
            self.store.record_outcome(
                event, row["kind"], row["target"], suggestion_id=sid, action_id=aid, reason=reason
            )
            return {
                "suggestion_id": sid,
                "action_id": aid,
                "kind": row["kind"],
                "feedback": event,
                "reason": reason,
            }

    def _suggestion_of(self, action_id: int) -> int:
        done = self.engine.journal.action(action_id)  # NotFoundError: no such action
        undoes = done["undoes"]
        if undoes is None and done["suggestion_id"] is not None:
            return int(done["suggestion_id"])
        if undoes is not None:  # it keeps its original's suggestion_id: not a verdict on it
            raise InvalidStateError(
                _(
                    "Action {id} undoes action {undoes}, so it says nothing ALMA can learn "
                    "from; tell it about action {undoes} instead "
                    "(`alma-ctl feedback --action {undoes} util|inutil`).",
                    id=action_id,
                    undoes=undoes,
                )
            )
        raise InvalidStateError(
            _(
                "Action {id} was not made from a suggestion, so there is nothing to learn "
                "from a verdict on it.",
                id=action_id,
            )
        )

    def stats(self) -> Stats:
        """The track record's counts and rules, and what ALMA took from a person's reasons."""
        return {**self._track_record().summary(), "reasons": taken(self.analyst.notes())}

    def allow(self, kind: str, folder: str | None) -> AutonomyStatus:
        """Lift a stop: at auto (no folder), or the proposals of ``kind`` in ``folder``."""
        with self._lock:
            if folder is None:
                status = self.autonomy.allow_kind(kind)
                self.store.record_outcome("lifted", kind, ANY_FOLDER)
                return status
            if self._track_record().stopped(kind, folder) is None:
                raise BadArgumentError(
                    _(
                        "{kind} is still proposed in {folder}; nothing to allow "
                        "(`alma-ctl stats` lists what ALMA stopped proposing).",
                        kind=kind,
                        folder=folder,
                    )
                )
            self.store.record_outcome("lifted", kind, folder)
            return self.autonomy.status()

    # -- a person's decisions -------------------------------------------------------------------
    @gives_back_memory
    def accept(self, id: int) -> Action:
        sid = id
        with self._lock:
            row = self.store.row(sid)
            if row["status"] not in ("pending", "failed"):
                # Expired: its files are not as the plan expects, a conflict (exit 5), as when
                # the accept itself finds them changed, whichever noticed first.
                closed = ConflictError if row["status"] == "expired" else InvalidStateError
                raise closed(_not_open(sid, row["status"], row["action_id"]))
            if row["status"] == "failed":
                self._refresh_plan(sid, row["fingerprint"])
            return self._told(as_action(self.decider.run(sid, auto=False)))

    def _refresh_plan(self, sid: int, fingerprint: str) -> None:
        """A failed action was rolled back: its files are back, but each rename moved their
        ctime, which the plan's identities record, so the stored plan would now conflict. A fresh
        detection of the same finding (same fingerprint: same paths, inodes, sizes, mtimes) gives
        the same plan with today's identities; if the finding is gone, the suggestion expired."""
        plan = self.analyst.plan_again(fingerprint)
        if plan is not None:
            self.store.replace_plan(sid, plan)
            return
        message = _(
            "The files of suggestion {id} changed since it failed, so its plan no longer "
            "applies; `alma-ctl analyze` proposes a fresh one.",
            id=sid,
        )
        self.store.update(sid, status="expired", error=message)
        raise ConflictError(message)

    @gives_back_memory
    def show(self, id: int, all: bool = True) -> SuggestionShown:
        """A suggestion as `suggestions show` answers it (actions.summary.shown), its plan read
        as it is summarized (``all``: every op); an edit in it comes with its diff
        (``diffs``)."""
        sid = id
        edits: list[JSONObject] = []

        def plan() -> Iterator[Any]:
            for op in self.store.iter_plan(sid):
                if isinstance(op, dict) and op.get("op") in CONTENT_OPS:
                    edits.append(op)
                yield op

        shown = summary.shown({**self.store.get(sid, with_plan=False), "plan": plan()}, all_ops=all)
        out = cast("SuggestionShown", shown)  # the stored suggestion, its plan summarized
        diffs = diagnose.edit_diffs(self.layout.root, edits)
        if diffs:
            out["diffs"] = diffs
        return out

    def reject(self, id: int, reason: str | None) -> Suggestion:
        sid = id
        with self._lock:
            row = self.store.row(sid)
            if row["status"] not in ("pending", "failed"):
                raise InvalidStateError(_not_open(sid, row["status"], row["action_id"]))
            self.decider.reject(sid, reason)
        return self.store.get(sid, with_plan=False)

    @gives_back_memory
    def undo(self, id: int | None) -> Action:
        action_id = id
        with self._lock:
            action = self.families.undo(self.engine.undo_target(action_id))
            if action["undoes"] is None:
                return as_action(action)  # a failed action's rollback finished: nothing was undone
            original = self.engine.journal.action(int(action["undoes"]))
            self._undone(original)
            sid = original["suggestion_id"]
            self.audit(action, dict(self.store.row(int(sid))) if sid is not None else None)
            return self._told(action)

    def edit_memory(
        self,
        id: str,
        text: str | None,
        tags: list[str] | None,
        importance: int | None,
        memory_type: str | None,
    ) -> MemoryEdited:
        """`alma-ctl memory edit`: a person's edit of a memory, journaled in the memory family
        (agent.memory.merge_actions.edit) and audited like any other action."""
        if self.memory is None:
            raise UnavailableError(_("The memory store is not part of this daemon."))
        service = self.memory.get()
        changes = {"text": text, "tags": tags, "importance": importance, "memory_type": memory_type}
        with self._lock:
            edited = self.engine.run_in_daemon(
                lambda journal: memory_actions.edit(journal, service, id, **changes)
            )
            self.audit(self.engine.journal.action(int(edited["action_id"])), None)
        return cast("MemoryEdited", edited)

    def trash_restore(self, id: int, path: str | None) -> Action:
        """`alma-ctl trash restore`: an action of the person's, audited like any other."""
        with self._lock:
            action = as_action(self.engine.trash_restore(id, path))
            self.audit(action, None)
            return self._told(action)

    def audit(self, action: Mapping[str, Any], suggestion: Mapping[str, Any] | None) -> None:
        """Every action goes to logs/alma/acciones.md (agent.loop.decision.AuditLog)."""
        self.auditlog.write(action, suggestion)

    def _told(self, action: Mapping[str, Any]) -> Action:
        """The action as its person is answered: with the audit log's problem, if any."""
        told = as_action(action)
        if self.audit_problem is not None:
            told["audit_problem"] = self.audit_problem
        return told

    def _undone(self, original: Action) -> None:
        """The track record learns of an undo; at auto, a kind whose actions of its own were
        undone too often stops running on its own until the person lifts it."""
        sid = original["suggestion_id"]
        if sid is None:
            return
        row = self.store.row(int(sid))
        kind = str(row["kind"])
        self.store.record_outcome(
            "undone",
            kind,
            row["target"],
            suggestion_id=int(sid),
            action_id=int(original["id"]),
            auto=bool(original["auto"]),
        )
        if original["auto"] and self._track_record().auto_stopped(kind):
            self.autonomy.disable_kind(kind)
            log.info("kind %s stops running on its own after %s undos", kind, UNDOS_TO_STOP)

    # -- start-up ------------------------------------------------------------------------------
    def reconcile(self) -> None:
        """After recovery: a suggestion accepted when ALMA stopped is failed unless its action is
        done; it can be accepted again."""
        for row in self.store.with_status("accepted"):
            actions = self.engine.journal.for_suggestion(row["id"])
            done = [a for a in actions if a["status"] == "done" and a["undoes"] is None]
            if done:
                self.store.update(row["id"], status="executed", action_id=done[-1]["id"])
            else:
                last = actions[-1] if actions else None
                self.store.update(
                    row["id"],
                    status="failed",
                    action_id=last["id"] if last else None,
                    error=_(
                        "ALMA stopped while executing it; it was rolled back and nothing "
                        "changed. Accept it again to retry."
                    ),
                )
        forget_checkpoints(self.layout)


def forget_checkpoints(layout: RootLayout) -> None:
    """``.alma/checkpoints.db`` held LangGraph's copy of each pending approval; a suggestion
    waits for a person as its row in the suggestions table alone, which holds all the copy
    held, so a root that has the file loses it at start (with its WAL and shared memory)."""
    base = layout.checkpoints_file
    for path in (base, base.with_name(base.name + "-wal"), base.with_name(base.name + "-shm")):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        log.info("%s removed: pending suggestions live in the suggestions table", path.name)


def _not_open(sid: int, status: str, action_id: int | None) -> str:
    if status == "executed":
        return _(
            "Suggestion {id} was already executed as action {action}; "
            "`alma-ctl undo {action}` reverts it.",
            id=sid,
            action=action_id,
        )
    if status == "expired":
        return _(
            "Suggestion {id} expired because its files changed; "
            "`alma-ctl analyze` proposes a fresh plan.",
            id=sid,
        )
    return _(
        "Suggestion {id} is {status}; only pending or failed suggestions can be decided.",
        id=sid,
        status=_(status),
    )
