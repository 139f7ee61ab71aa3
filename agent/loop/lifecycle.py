"""The agent: analysis, the suggestions' life, accept/reject through the loop, undo.

It holds no file logic: detectors find, the loop decides who approves, the engine executes.
All loop runs are serialized by one lock (the checkpointer's threads never interleave).
The suggestions table owns each suggestion's status; the loop's checkpoints are only the
decision runs waiting for a person (agent.loop.graph).
"""

from __future__ import annotations

import ctypes
import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime, timedelta
from typing import Any, Literal, ParamSpec, TypeVar

from actions import summary
from actions.ops import Op, files_touched, plan_from_list, write_paths
from actions.planners import PlanResult
from agent.day import daily, report
from agent.day.reminders import Reminders, plan_words
from agent.detectors import diagnose
from agent.loop import graph as loop
from agent.loop.autonomy import Autonomy, PolicyHolder
from agent.loop.track import ANY_FOLDER, PROMOTION_KIND, UNDOS_TO_STOP, TrackRecord
from agent.memory import merge_actions as memory_actions
from agent.memory.gate import MemoryGate
from agent.memory.recall import MemoryNote, recall_notes, rejection_memory
from agent.voice.model import Complete
from policies.decide import PlanFacts, RunContext, Verdict, decide
from policies.errors import (
    AlmaError,
    BadArgumentError,
    ConflictError,
    InvalidStateError,
    RefusedError,
    UnavailableError,
    cause_of,
    error_from_wire,
)
from policies.i18n import _
from policies.layout import RootLayout
from policies.zones import ZoneCheck
from sandbox.engine import Engine
from state.db import utc_stamp, utcnow
from state.journal import Journal
from state.suggestions import SuggestionStore

log = logging.getLogger("alma.agent")

_P = ParamSpec("_P")
_R = TypeVar("_R")
_malloc_trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's; None elsewhere


def gives_back_memory(work: Callable[_P, _R]) -> Callable[_P, _R]:
    """After ``work``, the heap's free pages go back to the system (glibc's malloc_trim, 4 ms
    at most). An analysis or an action of 100,000 files frees most of what it used, but glibc
    keeps it: the daemon stayed 80 MB larger, and the next action's peak stood on top of that
    (docs/benchmarks.md)."""

    @functools.wraps(work)
    def then_trim(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return work(*args, **kwargs)
        finally:
            if _malloc_trim is not None:
                _malloc_trim(0)

    return then_trim


#: Plan-less kinds that describe a condition which can end by itself: a backup that works
#: again (agent.backup.service), a kind no longer trusted after an undo (agent.loop.track).
_CONDITION_KINDS = frozenset({"backup", PROMOTION_KIND})
Trigger = Literal["person", "event", "schedule"]
Detect = Callable[[float], Sequence[PlanResult]]
Notify = Callable[[str, str], None]


def _no_notify(title: str, body: str) -> None:
    return None


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
        notify: Notify = _no_notify,
        clock: Callable[[], float] = time.time,
        memory: MemoryGate | None = None,
        complete: Complete | None = None,
        model_timeout_s: float = 120.0,
    ) -> None:
        self.layout = layout
        self.policy = policy
        self.store = store
        self.engine = engine
        self.autonomy = autonomy
        self.detect = detect
        self.notify = notify
        self.clock = clock
        self.memory = memory
        self.complete = (
            complete  # the model, when one is loaded: the report's summary, a config fix
        )
        self.model_timeout_s = model_timeout_s
        self._lock = threading.RLock()
        #: Undo of the actions that change things outside the sandbox's reach, by their
        #: ``sandbox`` (a restore of a backup: agent.backup.restore.undo).
        self.undo_in_daemon: dict[str, Callable[[Journal, int], dict[str, Any]]] = {}
        self._closed = False  # see close()
        self.audit_problem: str | None = None  # why the last action is not in acciones.md
        self.reminders = Reminders(store)
        self._track = self._track_record()
        self._memory_seen = False  # the last observe step read the memory store's merges
        self.loop = loop.Loop(
            loop.LoopDeps(
                detect=self._findings,
                expire=self._expire_stale,
                blocked=lambda f: self.store.find_blocking(f.fingerprint) is not None,
                stopped=lambda kind, target, files: self._track.stopped(kind, target, files=files),
                notes=self._notes,
                gate=self._gate,
                admit=self._admit,
                execute=self._execute,
                reject=self._reject,
                learn=self._learn,
                explain=self._explain,
            ),
            layout.checkpoints_file,
        )

    # -- loop dependencies -----------------------------------------------------------------
    def _gate(self, finding: loop.Finding) -> tuple[Verdict, str]:
        plan = plan_from_list(finding.plan)
        facts = PlanFacts(kind=finding.kind, paths=write_paths(plan), files=files_touched(plan))
        decision = decide(self.policy(), facts, self.autonomy.run_context(approved_by_person=False))
        if finding.by_model and decision.verdict is Verdict.ALLOW:
            # Contract §5: the model's text never becomes an action without a person's word.
            return Verdict.ASK, _("the model wrote this plan: a person decides.")
        return decision.verdict, decision.reason

    def _explain(self, finding: dict[str, Any]) -> dict[str, Any]:
        """The words of a plan the files or the clock give: a failing script's configuration,
        the time of the break a long_hours suggestion offers."""
        if finding["kind"] == "long_hours":
            when = datetime.fromtimestamp(self.clock())
            return {**finding, "evidence": [*finding["evidence"], plan_words(when)]}
        policy = self.policy()
        zones = ZoneCheck(policy.zones.writable, policy.zones.read_only)
        return diagnose.explain_failure(
            self.layout.root,
            finding,
            writable=lambda path: zones.problem(path) is None,
            complete=self.complete,
        )

    def remind_due(self) -> list[dict[str, Any]]:
        """Show the reminders that are due as desktop notifications (the schedule calls it)."""
        due = self.reminders.due(datetime.fromtimestamp(self.clock()))
        for item in due:
            self.notify("ALMA: un descanso", str(item["text"]))
        return due

    def _track_record(self) -> TrackRecord:
        return TrackRecord(self.store.outcomes(), auto_kinds=self.policy().auto.kinds)

    def _findings(self, now: float) -> list[dict[str, Any]]:
        found = [f.to_dict() for f in self.detect(now)]
        merges = None  # the memory store not looked at: its pending merges stay as they are
        if self.memory is not None and self.memory.loaded:
            # Not waiting for, nor doing, a full scan of the store (seconds at 10,000 memories:
            # it runs on its own thread after an analysis); its merges come with a later one.
            merges = memory_actions.merge_findings(self.memory.service, wait=False)
        self._memory_seen = merges is not None
        found += [f.to_dict() for f in merges or ()]
        return found + [f.to_dict() for f in self._track.promotion_findings()]

    def _notes(self) -> list[MemoryNote]:
        if self.memory is None or not self.memory.loaded:
            return []
        try:
            return recall_notes(self.memory.service)
        except Exception:  # proposing goes on without what memory would have added
            log.exception("recall failed; proposing without memory this time")
            return []

    def _admit(self, finding: loop.Finding, needs_approval: bool) -> int:
        existing = self.store.find_blocking(finding.fingerprint)
        if existing is not None and existing > 0:
            return existing  # the node ran again after a crash: never insert twice
        sid = self.store.propose(finding.as_dict(), needs_approval=needs_approval)
        log.info("suggestion %s proposed: %s", sid, finding.title)
        if needs_approval:
            self.notify(
                _("ALMA: suggestion {id}", id=sid),
                _("{title}. alma-ctl suggestions show {id}", title=finding.title, id=sid),
            )
        return sid

    def _execute(self, sid: int, auto: bool) -> dict[str, Any]:
        for action in self.engine.journal.for_suggestion(sid):
            if action["status"] in ("done", "undone") and action["undoes"] is None:
                return action  # already executed: act ran again, the journal says so
        row = self.store.row(sid)
        try:
            plan = self.store.plan_ops(sid)
        except BadArgumentError as exc:  # nothing ran: it fails, and stays out of the way
            self.store.update(sid, status="failed", error=str(exc))
            raise
        self.store.update(sid, status="accepted", error=None)
        ctx = self.autonomy.run_context(approved_by_person=not auto)
        try:
            if memory_actions.is_memory_plan(plan):
                action = self._execute_memory(plan, row["kind"], ctx, sid)
            else:
                action = self.engine.execute(plan, kind=row["kind"], ctx=ctx, suggestion_id=sid)
        except ConflictError as exc:
            self.store.update(sid, status="expired", error=str(exc))
            raise
        except RefusedError as exc:
            # Not allowed now (paused, lowered, over a threshold): it waits for a person again.
            self.store.update(sid, status="pending" if auto else "failed", error=str(exc))
            raise
        except AlmaError as exc:
            self.store.update(sid, status="failed", error=str(exc))
            raise
        try:
            self.store.update(sid, status="executed", action_id=action["id"])
        except Exception as exc:  # the action is done: say so, whatever failed after it
            log.exception("suggestion %s: action %s done but not recorded", sid, action["id"])
            raise AlmaError(
                _(
                    (
                        "Action {id} was done (`alma-ctl undo {id}` reverts it), but suggestion {sid} "
                        "could not be marked executed: {exc}."
                    ),
                    id=action["id"],
                    sid=sid,
                    exc=cause_of(exc),
                )
            ) from exc
        if auto:
            log.info("suggestion %s executed on its own as action %s", sid, action["id"])
            self.notify(
                _("ALMA did: {title}", title=row["title"]),
                _("Action {id} (alma-ctl undo {id} undoes it).", id=action["id"]),
            )
        return action

    def _execute_memory(
        self, plan: list[Op], kind: str, ctx: RunContext, sid: int
    ) -> dict[str, Any]:
        """The same policy gate as files; then the merge, journaled, in the daemon's own store."""
        self.engine.admit(plan, kind, ctx, self.engine.policy())
        if self.memory is None:
            raise UnavailableError(_("The memory store is not part of this daemon."))
        service = self.memory.get()
        return self.engine.run_in_daemon(
            lambda journal: memory_actions.execute(
                journal,
                service,
                plan,
                kind=kind,
                suggestion_id=sid,
                auto=not ctx.approved_by_person,
            )
        )

    def _reject(self, sid: int, reason: str | None) -> None:
        row = self.store.row(sid)
        self.store.update(sid, status="rejected", reject_reason=reason)
        self.store.remember_rejection(row, reason)

    def _learn(
        self, sid: int, decision: loop.Decision, outcome: str, action: dict[str, Any] | None
    ) -> None:
        """Write an outcome back: the track record, and for a rejection a decision memory with
        its reason, which recall reads at the next analysis."""
        row = self.store.row(sid)
        if outcome == "executed" and action is not None:
            self.audit(action, dict(row))
        if outcome == "executed" and row["kind"] == "long_hours" and decision.by == "person":
            self.reminders.add_break(sid, datetime.fromtimestamp(self.clock()))
        event = {"executed": "accepted", "rejected": "rejected"}.get(outcome)
        if event is not None:
            self.store.record_outcome(
                event,
                row["kind"],
                row["target"],
                suggestion_id=sid,
                auto=decision.by == "auto",
                reason=decision.reason,
            )
        if outcome != "rejected" or self.memory is None or not self.memory.loaded:
            return
        text = rejection_memory(sid, row["kind"], row["target"], decision.reason)
        try:
            self.memory.service.add(
                text, tags=["decision", row["kind"]], memory_type="decision", source=f"alma:{sid}"
            )
        except AlmaError as exc:  # the rejection stands; only the memory of it is missing
            log.error("the decision memory of suggestion %s was not stored: %s", sid, exc)

    def close(self) -> None:
        """The daemon stops: the op in flight finishes (or rolls back) first, and no analysis
        starts after, whatever thread asks (a debounced file event, the schedule, `analyze`
        without --wait): the journal and the stores it writes to are closed next."""
        with self._lock, self.engine._lock:
            self._closed = True

    # -- analysis -----------------------------------------------------------------------------
    def analyze(self, *, trigger: Trigger) -> list[int]:
        return [int(sid) for sid in self.analysis(trigger=trigger)["proposed"]]

    @gives_back_memory
    def analysis(self, *, trigger: Trigger) -> dict[str, Any]:
        """Run the loop once: what was proposed, and what was not and why."""
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
            self._track = self._track_record()
            state = self.loop.analyze(self.clock())
            for sid, auto in state["admitted"]:
                self.loop.start(sid, auto=auto)
            for skip in state["skipped"]:
                log.info("not proposed (%s %s): %s", skip["kind"], skip["target"], skip["why"])
            self.store.set_setting("last_analysis", utcnow())
            if self.memory is not None and self.memory.loaded:
                # After the analysis, not during it: the scan's seconds of work would slow
                # the analysis down (the GIL, two cores) for merges that can wait for the next.
                self.memory.service.start_merge_scan()
            proposed = [sid for sid, _auto in state["admitted"]]
            return {"proposed": proposed, "skipped": state["skipped"]}

    def _expire_stale(self, current: set[str]) -> None:
        """A pending plan whose files changed under it no longer describes them, and a notice
        of a condition that ended (a backup succeeded since) no longer holds: expire it."""
        for row in self.store.with_status("pending"):
            if row["kind"] == memory_actions.KIND and not self._memory_seen:
                continue  # the store was not looked at this time
            ended = row["kind"] in _CONDITION_KINDS
            if (row["has_plan"] or ended) and row["fingerprint"] not in current:
                if ended:
                    why = _("what it said no longer holds")
                else:
                    why = _(
                        "its files changed after it was proposed; a new analysis proposes "
                        "a fresh plan if it still applies"
                    )
                self.store.update(row["id"], status="expired", error=why)
                self.loop.forget(int(row["id"]))

    # -- the track record -------------------------------------------------------------------
    def feedback(
        self, ref: int, useful: bool, reason: str | None, *, action: bool = False
    ) -> dict[str, Any]:
        """A person's verdict on a suggestion, or (``action``) on an action, which is a verdict
        on the suggestion it came from: the track record counts per suggestion."""
        with self._lock:
            aid = ref if action else None
            sid = ref if aid is None else self._suggestion_of(aid)
            row = self.store.row(sid)
            event = "useful" if useful else "useless"
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

    def stats(self) -> dict[str, Any]:
        return self._track_record().summary()

    def allow(self, kind: str, folder: str | None) -> dict[str, Any]:
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
    def accept(self, sid: int) -> dict[str, Any]:
        with self._lock:
            row = self.store.row(sid)
            if row["status"] not in ("pending", "failed"):
                # Expired: its files are not as the plan expects, a conflict (exit 5), as when
                # the accept itself finds them changed, whichever noticed first.
                closed = ConflictError if row["status"] == "expired" else InvalidStateError
                raise closed(_not_open(sid, row["status"], row["action_id"]))
            if row["status"] == "failed":
                self._refresh_plan(row)
            result = self.loop.decide(sid, loop.Decision(verdict="accept"))
            return self._told(_action_or_raise(result))

    def _refresh_plan(self, row: Any) -> Any:
        """A failed action was rolled back: its files are back, but each rename moved their
        ctime, which the plan's identities record, so the stored plan would now conflict. A fresh
        detection of the same finding (same fingerprint: same paths, inodes, sizes, mtimes) gives
        the same plan with today's identities; if the finding is gone, the suggestion expired."""
        for finding in self.detect(self.clock()):
            if finding.fingerprint == row["fingerprint"]:
                # The plan the analysis would propose now (a config fix is read from the files).
                fresh = self._explain(finding.to_dict())["plan"]
                plan = json.dumps(fresh, ensure_ascii=False)
                self.store.update(row["id"], plan=plan)
                return self.store.row(row["id"])
        message = _(
            "The files of suggestion {id} changed since it failed, so its plan no longer "
            "applies; `alma-ctl analyze` proposes a fresh one.",
            id=row["id"],
        )
        self.store.update(row["id"], status="expired", error=message)
        raise ConflictError(message)

    @gives_back_memory
    def show(self, sid: int, *, all_ops: bool = True) -> dict[str, Any]:
        """A suggestion as `suggestions show` answers it (actions.summary.shown), its plan read
        as it is summarized; an edit in it comes with its diff (``diffs``)."""
        edits: list[dict[str, Any]] = []

        def plan() -> Iterator[Any]:
            for op in self.store.iter_plan(sid):
                if isinstance(op, dict) and op.get("op") in ("edit", "create"):
                    edits.append(op)
                yield op

        out = summary.shown(
            {**self.store.get(sid, with_plan=False), "plan": plan()}, all_ops=all_ops
        )
        diffs = diagnose.edit_diffs(self.layout.root, edits)
        return {**out, "diffs": diffs} if diffs else out

    def reject(self, sid: int, reason: str | None) -> dict[str, Any]:
        with self._lock:
            row = self.store.row(sid)
            if row["status"] not in ("pending", "failed"):
                raise InvalidStateError(_not_open(sid, row["status"], row["action_id"]))
            self.loop.decide(sid, loop.Decision(verdict="reject", reason=reason))
        return self.store.get(sid, with_plan=False)

    @gives_back_memory
    def undo(self, action_id: int | None) -> dict[str, Any]:
        with self._lock:
            target = self.engine.undo_target(action_id)
            in_daemon = self.undo_in_daemon.get(str(target["sandbox"]))
            if in_daemon is not None:
                target_id = int(target["id"])
                action = self.engine.run_in_daemon(lambda journal: in_daemon(journal, target_id))
            elif target["sandbox"] == memory_actions.SANDBOX:
                if self.memory is None:
                    raise UnavailableError(_("The memory store is not part of this daemon."))
                service = self.memory.get()
                target_id = int(target["id"])
                action = self.engine.run_in_daemon(
                    lambda journal: memory_actions.undo(journal, service, target_id)
                )
            else:
                action = self.engine.undo(int(target["id"]))
            if action["undoes"] is None:
                return action  # a failed action's rollback finished: nothing was undone
            original = self.engine.journal.action(int(action["undoes"]))
            self._undone(original)
            sid = original["suggestion_id"]
            self.audit(action, dict(self.store.row(int(sid))) if sid is not None else None)
            return self._told(action)

    def trash_restore(self, action_id: int, path: str | None) -> dict[str, Any]:
        """`alma-ctl trash restore`: an action of the person's, audited like any other."""
        with self._lock:
            action = self.engine.trash_restore(action_id, path)
            self.audit(action, None)
            return self._told(action)

    def audit(self, action: dict[str, Any], suggestion: dict[str, Any] | None) -> None:
        """Every action goes to logs/alma/acciones.md. A failed write is not fatal (the journal
        and `alma-ctl history` hold the same facts) but never silent: ``audit_problem`` says
        it, to the action's answer and to `status`, until an entry is written again."""
        try:
            ops = self.engine.journal.iter_plan(int(action["id"]))
            entry = report.audit_entry(action, suggestion, ops, datetime.now())
            report.append_audit(self.layout, entry)
        except (OSError, AlmaError) as exc:
            log.error("action %s is not in logs/alma/acciones.md: %s", action["id"], exc)
            self.audit_problem = _(
                "Action {id} is not in logs/alma/acciones.md: {why}; `alma-ctl history` has it.",
                id=action["id"],
                why=cause_of(exc),
            )
        else:
            self.audit_problem = None

    def _told(self, action: dict[str, Any]) -> dict[str, Any]:
        """The action as its person is answered: with the audit log's problem, if any."""
        if self.audit_problem is None:
            return action
        return {**action, "audit_problem": self.audit_problem}

    # -- the daily analysis -----------------------------------------------------------------
    def daily_report(self) -> dict[str, Any]:
        """The scheduled report: of the day that ended when the schedule runs before noon
        (03:00 by default, the day before is whole by then), else of the day running. A report
        of that day written before it ended (a person asked at 18:00) is written again, whole;
        one written after is left as it is, with whatever a person added to it."""
        now = datetime.fromtimestamp(self.clock())
        day = now.date() - timedelta(days=1) if now.hour < 12 else now.date()
        kept = self._kept_report(day)
        if kept is not None and kept[1] >= _day_span(day)[1]:
            return kept[0]
        return self._write_report(day)

    def report(self, day: str | None, *, refresh: bool = False) -> dict[str, Any]:
        """The day's analysis, logs/alma/DATE-analisis.md (today by default): as it is when it
        was written already (contract §2: a model's summary or a person's note in it stays);
        else, or with ``refresh``, built now from what the day's logs and ALMA's records hold."""
        today = datetime.fromtimestamp(self.clock()).date()
        try:
            when = date.fromisoformat(day) if day else today
        except ValueError:
            raise BadArgumentError(
                _("{day} is not a date; write it as YYYY-MM-DD.", day=repr(day))
            ) from None
        if when > today:
            raise BadArgumentError(
                _(
                    "{day} has not come yet; give today's date or an earlier one.",
                    day=when.isoformat(),
                )
            )
        try:
            _day_span(when)
        except (OverflowError, ValueError, OSError):  # before the first day the clock can hold
            raise BadArgumentError(
                _(
                    "{day} is too long ago for a report; give a day ALMA has logs of.",
                    day=when.isoformat(),
                )
            ) from None
        if not refresh:
            kept = self._kept_report(when)
            if kept is not None:
                return kept[0]
        return self._write_report(when)

    def _kept_report(self, when: date) -> tuple[dict[str, Any], float] | None:
        """The report of ``when`` already on disk (``written`` False) and its mtime, or None."""
        name = _report_name(when)
        got = report.read_own(self.layout, name)
        if got is None:
            return None
        why = _("larger than any report ALMA writes") if got.cut else None
        try:
            text = got.data.decode("utf-8")
        except UnicodeDecodeError:
            why = _("not UTF-8 text")
        if why is not None:
            raise InvalidStateError(
                _(
                    "logs/alma/{name} cannot be shown ({why}); `alma-ctl report --refresh "
                    "{day}` writes the day's analysis again in its place.",
                    name=name,
                    why=why,
                    day=when.isoformat(),
                )
            )
        mtime = got.mtime_ns / 1e9
        written_at = datetime.fromtimestamp(mtime).astimezone().isoformat(timespec="seconds")
        shown = {
            "date": when.isoformat(),
            "path": str(self.layout.reports / name),
            "text": text,
            "written": False,
            "written_at": written_at,
        }
        return shown, mtime

    def _write_report(self, when: date) -> dict[str, Any]:
        memory_projects: list[str] = []
        memories: dict[str, int] | None = None
        start, end = _day_span(when)
        if self.memory is not None and self.memory.loaded:
            try:
                created = self.memory.service.created(start, end)
                memory_projects = [project for project in created if project]
                memories = {"added": sum(created.values()), "total": self.memory.service.count()}
            except AlmaError as exc:
                log.error("the report goes without memory: %s", exc)
        facts = daily.day_facts(self.layout.root, when, memory_projects=memory_projects)
        # Outside the lock: the model may take a while, and decisions must not wait for it.
        summary = daily.summarize(facts, self.complete, timeout_s=self.model_timeout_s)
        since, until = utc_stamp(start), utc_stamp(end)
        with self._lock:
            made = self.store.created_between(since, until)
            done = [
                a
                for a in self.engine.journal.started_between(since, until)
                if a["status"] in ("done", "undone")
            ]
        text = daily.render(
            facts, suggestions=made, actions=done, memories=memories, summary=summary
        )
        path = report.write_own(self.layout, _report_name(when), text, append=False)
        return {"date": when.isoformat(), "path": path, "text": text, "written": True}

    def _undone(self, original: dict[str, Any]) -> None:
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
                    error="ALMA stopped while executing it; it was rolled back and nothing changed. "
                    "Accept it again to retry.",
                )
        # The checkpoints hold only the runs that wait for a person.
        swept = self.loop.sweep({int(r["id"]) for r in self.store.with_status("pending")})
        if swept:
            log.info("%s finished decision threads removed from the checkpoints", swept)


def _day_span(day: date) -> tuple[float, float]:
    """The local day's first instant and the next day's, as timestamps (a DST day included)."""
    start = datetime.combine(day, datetime.min.time())
    return start.timestamp(), datetime.combine(day + timedelta(days=1), start.time()).timestamp()


def _report_name(when: date) -> str:
    return f"{when.isoformat()}-analisis.md"


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


def _action_or_raise(result: loop.DecisionState) -> dict[str, Any]:
    action = result.get("action")
    if result.get("outcome") == "executed" and action is not None:
        return action
    fallback = AlmaError(_("The suggestion could not be executed.")).to_wire()
    raise error_from_wire(result.get("error") or fallback)
