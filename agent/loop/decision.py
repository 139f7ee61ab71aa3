"""A decision on a suggestion: run it (a person's accept, or on its own), or reject it; then learn.

Whether a suggestion waits for a person is its row's status in the suggestions table, and
nothing else: ``pending`` survives a restart as any row does. A decision is a change of that
row, made so that a stop at any instant loses nothing and never runs a plan twice:

- run: a suggestion whose action the journal holds as done is not executed again (the
  journal's action carries the suggestion's id); otherwise it is marked ``accepted`` before its
  action starts, and the start-up's reconcile turns an ``accepted`` left by a stop into
  ``executed`` (its action is done) or ``failed`` (it was rolled back: accept it again);
- reject: the status, the fingerprint not proposed again and the track record's outcome are
  one transaction (state.suggestions.SuggestionStore.reject).

Then *learn* writes the outcome back: the audit log, the track record, a break reminder, and for
a rejection a decision memory that recall reads at the next analysis. An error is the one the
engine raised, passed up as it is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from agent.day import alma_logs
from agent.day.reminders import Reminders
from agent.loop.analysis import Notify, no_notify
from agent.loop.autonomy import Autonomy
from agent.loop.families import Families
from agent.memory.loader import MemoryLoader
from agent.memory.recall import rejection_memory
from policies import kinds
from policies.errors import (
    AlmaError,
    BadArgumentError,
    ConflictError,
    RefusedError,
    cause_of,
)
from policies.i18n import _
from policies.layout import RootLayout
from sandbox.engine import Engine
from state.journal import Action
from state.suggestions import SuggestionStore, shown

log = logging.getLogger("alma.agent")


class AuditLog:
    """logs/alma/acciones.md: every action, with what it came from. A failed write is not
    fatal (the journal and `alma-ctl history` hold the same facts) but never silent:
    ``problem`` says it, to the action's answer and to `status`, until an entry is written
    again."""

    def __init__(self, layout: RootLayout, engine: Engine) -> None:
        self.layout = layout
        self.engine = engine
        self.problem: str | None = None

    def write(self, action: Mapping[str, Any], suggestion: Mapping[str, Any] | None) -> None:
        try:
            ops = self.engine.journal.iter_plan(int(action["id"]))
            entry = alma_logs.audit_entry(action, suggestion, ops, datetime.now())
            alma_logs.append_audit(self.layout, entry)
        except (OSError, AlmaError) as exc:
            log.error("action %s is not in logs/alma/acciones.md: %s", action["id"], exc)
            self.problem = _(
                "Action {id} is not in logs/alma/acciones.md: {why}; `alma-ctl history` has it.",
                id=action["id"],
                why=cause_of(exc),
            )
        else:
            self.problem = None


class Decider:
    """Runs or rejects one suggestion at a time (the caller holds the agent's lock)."""

    def __init__(
        self,
        store: SuggestionStore,
        engine: Engine,
        autonomy: Autonomy,
        reminders: Reminders,
        audit: AuditLog,
        families: Families,
        *,
        memory: MemoryLoader | None = None,
        clock: Callable[[], float] = time.time,
        notify: Notify = no_notify,
    ) -> None:
        self.store = store
        self.engine = engine
        self.autonomy = autonomy
        self.reminders = reminders
        self.audit = audit
        self.families = families
        self.memory = memory
        self.clock = clock
        self.notify = notify

    def run(self, sid: int, *, auto: bool) -> Action:
        """Execute an accepted suggestion (``auto``: on its own, allowed by the policy) and
        learn from it; returns the Action. Raises what stopped it, the row already saying so
        (``failed``, ``expired``, or ``pending`` again when a run of its own is refused now)."""
        done = self._done_action(sid)
        if done is not None:
            return done  # a stop came after the action was done: the journal says so
        row = self.store.row(sid)
        try:
            plan = self.store.plan(sid)
        except BadArgumentError as exc:  # nothing ran: it fails, and stays out of the way
            self.store.update(sid, status="failed", error=str(exc))
            raise
        self.store.update(sid, status="accepted", error=None)
        ctx = self.autonomy.run_context(approved_by_person=not auto)
        try:
            action = self.families.execute(plan, kind=row["kind"], ctx=ctx, suggestion_id=sid)
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
                _("ALMA did: {title}", title=shown(row, "title")),
                _("Action {id} (alma-ctl undo {id} undoes it).", id=action["id"]),
            )
        self._learn_executed(sid, action, auto=auto)
        return action

    def reject(self, sid: int, reason: str | None) -> None:
        """A person's rejection, and its decision memory, which recall reads at the next
        analysis (a reason like «esa carpeta la ordeno yo» stops the kind there)."""
        row = self.store.reject(sid, reason)
        if self.memory is None or not self.memory.loaded:
            return
        text = rejection_memory(sid, row["kind"], row["target"], reason)
        try:
            self.memory.service.add(
                text, tags=["decision", row["kind"]], memory_type="decision", source=f"alma:{sid}"
            )
        except AlmaError as exc:  # the rejection stands; only the memory of it is missing
            log.error("the decision memory of suggestion %s was not stored: %s", sid, exc)

    def _done_action(self, sid: int) -> Action | None:
        for action in self.engine.journal.for_suggestion(sid):
            if action["status"] in ("done", "undone") and action["undoes"] is None:
                return action
        return None

    def _learn_executed(self, sid: int, action: Action, *, auto: bool) -> None:
        """The audit log, a break reminder for an accepted long_hours, the track record."""
        row = self.store.row(sid)
        self.audit.write(action, dict(row))
        if kinds.of(row["kind"]).breaks and not auto:
            self.reminders.add_break(sid, datetime.fromtimestamp(self.clock()))
        self.store.record_outcome(
            "accepted", row["kind"], row["target"], suggestion_id=sid, auto=auto
        )
