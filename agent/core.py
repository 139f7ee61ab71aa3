"""The agent: analysis, the suggestions' life, accept/reject through the loop, undo.

It holds no file logic: detectors find, the loop decides who approves, the engine executes.
All loop runs are serialized by one lock (the checkpointer's threads never interleave).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from actions.ops import Op, files_touched, plan_from_list, write_paths
from actions.planners import PlanResult
from agent import loop, memory_actions
from agent.autonomy import Autonomy, PolicyHolder
from agent.memory_gate import MemoryGate
from policies.decide import PlanFacts, RunContext, Verdict, decide
from policies.errors import (
    ERROR_CLASSES,
    AlmaError,
    ConflictError,
    InvalidStateError,
    RefusedError,
    UnavailableError,
)
from policies.layout import RootLayout
from sandbox.engine import Engine
from state.db import utcnow
from state.suggestions import SuggestionStore

log = logging.getLogger("alma.agent")
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
        self._lock = threading.RLock()
        self.graph = loop.build_loop(
            loop.LoopDeps(
                gate=self._gate, propose=self._propose, execute=self._execute, reject=self._reject
            ),
            layout.checkpoints_file,
        )

    # -- loop dependencies -----------------------------------------------------------------
    def _gate(self, finding: loop.Finding) -> tuple[Verdict, str]:
        plan = plan_from_list(finding.plan)
        facts = PlanFacts(kind=finding.kind, paths=write_paths(plan), files=files_touched(plan))
        decision = decide(self.policy(), facts, self.autonomy.run_context(approved_by_person=False))
        return decision.verdict, decision.reason

    def _propose(self, finding: loop.Finding, needs_approval: bool, thread_id: str) -> int:
        existing = self.store.find_blocking(finding.fingerprint)
        if existing is not None and existing > 0:
            return existing  # the node ran again after a crash: never insert twice
        sid = self.store.add(
            finding.model_dump(), needs_approval=needs_approval, thread_id=thread_id
        )
        log.info("suggestion %s proposed: %s", sid, finding.title)
        if needs_approval:
            self.notify(
                f"ALMA: sugerencia {sid}", f"{finding.title}. alma-ctl suggestions show {sid}"
            )
        return sid

    def _execute(self, sid: int, auto: bool) -> dict[str, Any]:
        for action in self.engine.journal.for_suggestion(sid):
            if action["status"] in ("done", "undone") and action["undoes"] is None:
                return action  # already executed: act ran again, the journal says so
        row = self.store.row(sid)
        self.store.update(sid, status="accepted", error=None)
        plan = plan_from_list(json.loads(row["plan"]))
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
        self.store.update(sid, status="executed", action_id=action["id"])
        if auto:
            log.info("suggestion %s executed on its own as action %s", sid, action["id"])
            self.notify(
                f"ALMA hizo: {row['title']}",
                f"Acción {action['id']} (alma-ctl undo {action['id']} la deshace).",
            )
        return action

    def _execute_memory(
        self, plan: list[Op], kind: str, ctx: RunContext, sid: int
    ) -> dict[str, Any]:
        """The same policy gate as files; then the merge, journaled, in the daemon's own store."""
        self.engine.admit(plan, kind, ctx)
        if self.memory is None:
            raise UnavailableError("The memory store is not part of this daemon.")
        service = self.memory.get()
        with self.engine._lock:
            return memory_actions.execute(
                self.engine.journal,
                service,
                plan,
                kind=kind,
                suggestion_id=sid,
                auto=not ctx.approved_by_person,
            )

    def _reject(self, sid: int, reason: str | None) -> None:
        row = self.store.row(sid)
        self.store.update(sid, status="rejected", reject_reason=reason)
        self.store.remember_rejection(row, reason)

    # -- analysis -----------------------------------------------------------------------------
    def analyze(self, *, trigger: Trigger) -> list[int]:
        level = self.autonomy.effective()
        if level == "off":
            if trigger == "person":
                raise RefusedError(
                    "Autonomy is off, so nothing is proposed; `alma-ctl autonomy on` resumes it."
                )
            return []
        if level == "manual" and trigger != "person":
            return []
        with self._lock:
            findings = list(self.detect(self.clock()))
            self._expire_stale({f.fingerprint for f in findings})
            proposed: list[int] = []
            for finding in findings:
                if self.store.find_blocking(finding.fingerprint) is not None:
                    continue
                thread = f"f{finding.fingerprint[:24]}.{time.time_ns()}"
                result = self.graph.invoke(
                    {"thread_id": thread, "finding": finding.to_dict()}, loop.config(thread)
                )
                if "suggestion_id" in result:
                    proposed.append(int(result["suggestion_id"]))
                elif result.get("outcome") == "refused":
                    log.info("not proposed (%s): %s", finding.title, result["error"]["message"])
            self.store.set_setting("last_analysis", utcnow())
            return proposed

    def _expire_stale(self, current: set[str]) -> None:
        """A pending plan whose files changed under it no longer describes them: expire it."""
        memory_seen = self.memory is not None and self.memory.loaded
        for row in self.store.with_status("pending"):
            if row["kind"] == memory_actions.KIND and not memory_seen:
                continue  # the store was not looked at this time
            if json.loads(row["plan"]) and row["fingerprint"] not in current:
                self.store.update(
                    row["id"],
                    status="expired",
                    error="its files changed after it was proposed; a new analysis proposes "
                    "a fresh plan if it still applies",
                )

    # -- a person's decisions -------------------------------------------------------------------
    def accept(self, sid: int) -> dict[str, Any]:
        with self._lock:
            row = self.store.row(sid)
            if row["status"] not in ("pending", "failed"):
                raise InvalidStateError(_not_open(sid, row["status"], row["action_id"]))
            thread = row["thread_id"]
            if (
                row["status"] == "pending"
                and thread
                and loop.waiting_for_approval(self.graph, thread)
            ):
                result = loop.resume(self.graph, thread, loop.Decision(verdict="accept"))
            else:  # accepting again after a failure, or a suggestion whose run has ended
                if row["status"] == "failed":
                    row = self._refresh_plan(row)
                thread = f"s{sid}.{time.time_ns()}"
                self.store.update(sid, thread_id=thread)
                result = self.graph.invoke(
                    {
                        "thread_id": thread,
                        "finding": _finding_of(row),
                        "suggestion_id": sid,
                        "decision": {"verdict": "accept", "by": "person"},
                    },
                    loop.config(thread),
                )
        return _action_or_raise(result)

    def _refresh_plan(self, row: Any) -> Any:
        """A failed action was rolled back: its files are back, but each rename moved their
        ctime, which the plan's identities record, so the stored plan would now conflict. A fresh
        detection of the same finding (same fingerprint: same paths, inodes, sizes, mtimes) gives
        the same plan with today's identities; if the finding is gone, the suggestion expired."""
        for finding in self.detect(self.clock()):
            if finding.fingerprint == row["fingerprint"]:
                plan = json.dumps(finding.to_dict()["plan"], ensure_ascii=False)
                self.store.update(row["id"], plan=plan)
                return self.store.row(row["id"])
        message = (
            f"The files of suggestion {row['id']} changed since it failed, so its plan no longer "
            "applies; `alma-ctl analyze` proposes a fresh one."
        )
        self.store.update(row["id"], status="expired", error=message)
        raise ConflictError(message)

    def reject(self, sid: int, reason: str | None) -> dict[str, Any]:
        with self._lock:
            row = self.store.row(sid)
            if row["status"] not in ("pending", "failed"):
                raise InvalidStateError(_not_open(sid, row["status"], row["action_id"]))
            thread = row["thread_id"]
            decision = loop.Decision(verdict="reject", reason=reason)
            if (
                row["status"] == "pending"
                and thread
                and loop.waiting_for_approval(self.graph, thread)
            ):
                loop.resume(self.graph, thread, decision)
            else:
                self._reject(sid, reason)
        return self.store.get(sid, with_plan=False)

    def undo(self, action_id: int | None) -> dict[str, Any]:
        with self._lock:
            target = self.engine.undo_target(action_id)
            if target["sandbox"] == memory_actions.SANDBOX:
                if self.memory is None:
                    raise UnavailableError("The memory store is not part of this daemon.")
                service = self.memory.get()
                with self.engine._lock:
                    action = memory_actions.undo(self.engine.journal, service, int(target["id"]))
            else:
                action = self.engine.undo(int(target["id"]))
            original = self.engine.journal.action(int(action["undoes"]))
            if original["auto"]:
                # The person undid something ALMA did on its own: that kind stops running alone.
                self.autonomy.disable_kind(str(original["kind"]))
                log.info("kind %s stops running on its own after an undo", original["kind"])
            return action

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


def _finding_of(row: Any) -> dict[str, Any]:
    return {
        "kind": row["kind"],
        "target": row["target"],
        "title": row["title"],
        "reason": row["reason"],
        "evidence": json.loads(row["evidence"]),
        "plan": json.loads(row["plan"]),
        "files": row["files"],
        "fingerprint": row["fingerprint"],
    }


def _not_open(sid: int, status: str, action_id: int | None) -> str:
    if status == "executed":
        return f"Suggestion {sid} was already executed as action {action_id}; `alma-ctl undo {action_id}` reverts it."
    if status == "expired":
        return f"Suggestion {sid} expired because its files changed; `alma-ctl analyze` proposes a fresh plan."
    return f"Suggestion {sid} is {status}; only pending or failed suggestions can be decided."


def _action_or_raise(result: loop.LoopState) -> dict[str, Any]:
    action = result.get("action")
    if result.get("outcome") == "executed" and action is not None:
        return action
    error = result.get("error") or {"code": 1, "message": "The suggestion could not be executed."}
    cls = ERROR_CLASSES.get(int(error["code"]), AlmaError)
    raise cls(str(error["message"]))
