"""Memory merges and a person's memory edits as actions: journaled, undoable.

They change only ALMA's own memory store, so they run in the daemon (not in the file sandbox),
with the same protocol: the before-state of every memory involved is journaled first,
and an interrupted one is taken back when the store loads; undo writes the
before-state back exactly. A merge is proposed like any suggestion; an edit is the person's
own (``memory.edit``), and its journal row holds the memory before and after it, so the undo
of an undo does the edit again.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from actions.ops import MemoryMerge, StoredPlan
from actions.planners import PlanResult, fingerprint
from agent.memory.loader import MemoryLoader
from policies.decide import RunContext
from policies.errors import AlmaError, ConflictError, UnavailableError, as_alma_error
from policies.i18n import _
from policies.kinds import MEMORY
from sandbox.engine import Engine
from state.journal import Action, Aux, Journal, JournalRow

if TYPE_CHECKING:
    from agent.memory.service import MemoryService

log = logging.getLogger("alma.memory")
KIND = "memory_merge"
#: A person's edit of one memory: its kind (policies.kinds) and its op in the journal.
EDIT = "memory_edit"
#: How an action of the memory family is undone, by its kind.
Undo = Callable[[Journal, "MemoryService", int], Action]


class MemoryFamily:
    """The memory family (agent.loop.families): its plans run here in the daemon, on its own
    memory store, one action at a time with the file actions, through the same policy gate.
    Each memory kind's undo is one entry of ``undoes``."""

    def __init__(self, engine: Engine, gate: MemoryLoader | None) -> None:
        self.engine = engine
        self.gate = gate
        self.undoes: Mapping[str, Undo] = {KIND: undo, EDIT: undo}

    def _service(self) -> MemoryService:
        if self.gate is None:
            raise UnavailableError(_("The memory store is not part of this daemon."))
        return self.gate.get()

    def execute(
        self, plan: StoredPlan, *, kind: str, ctx: RunContext, suggestion_id: int | None
    ) -> Action:
        self.engine.admit(plan.ops, kind, ctx, self.engine.policy())
        service = self._service()
        return self.engine.run_in_daemon(
            lambda journal: execute(
                journal,
                service,
                plan,
                kind=kind,
                suggestion_id=suggestion_id,
                auto=not ctx.approved_by_person,
            )
        )

    def undo(self, target: int) -> Action:
        service = self._service()
        undo_it = self.undoes[str(self.engine.journal.action_row(target)["kind"])]
        return self.engine.run_in_daemon(lambda journal: undo_it(journal, service, target))


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def merge_findings(memory: MemoryService, *, wait: bool = True) -> list[PlanResult] | None:
    """One ``memory_merge`` finding per cluster of near-identical memories; None with
    ``wait=False`` when the store's scan for them is still running (not looked at)."""
    clusters = memory.merge_candidates(wait=wait)
    if clusters is None:
        return None
    results: list[PlanResult] = []
    for cluster in clusters:
        mems = [memory.show(i) for i in cluster]
        # Keep the most important, then most used, then the oldest: the others fold into it.
        mems.sort(
            key=lambda m: (
                -int(m["importance"]),
                -int(m["use_count"]),
                str(m["created_at"]),
                m["id"],
            )
        )
        keep, rest = mems[0], mems[1:]
        if not rest:
            continue
        keys = [f"{m['id']}\x00{m['content']}" for m in mems]
        results.append(
            PlanResult(
                kind=KIND,
                target="memory",
                title=_("Merge {n} nearly identical memories", n=len(mems)),
                reason=_(
                    "“{content}” is stored {n} times",
                    content=_short(keep["content"], 60),
                    n=len(mems),
                ),
                evidence=[f"{m['id'][:12]}: {_short(m['content'])}" for m in mems],
                plan=[MemoryMerge(keep=keep["id"], merge=tuple(m["id"] for m in rest))],
                files=0,
                fingerprint=fingerprint(KIND, "memory", keys),
            )
        )
    return results


def execute(
    journal: Journal,
    memory: MemoryService,
    plan: StoredPlan,
    *,
    kind: str,
    suggestion_id: int | None,
    auto: bool,
) -> Action:
    """Run a suggestion's merges: its stored plan becomes the action's."""
    merges = [op for op in plan.ops if isinstance(op, MemoryMerge)]
    try:
        records = [memory.merge_record(op.keep, list(op.merge)) for op in merges]
    except AlmaError as exc:
        raise ConflictError(
            _("The memories changed since this was proposed: {exc}", exc=exc)
        ) from None
    action_id = journal.create_action(
        kind=kind,
        plan=plan,
        suggestion_id=suggestion_id,
        auto=auto,
        sandbox=MEMORY,
    )
    journal.write_intents(
        action_id,
        [
            (i, op.to_dict(), None, {"record": rec})
            for i, (op, rec) in enumerate(zip(merges, records, strict=True))
        ],
    )
    done: list[int] = []
    try:
        for i, op in enumerate(merges):
            memory.merge(op.keep, list(op.merge))
            done.append(i)
    except Exception as exc:  # whatever stopped it, the row is closed: never left running
        error = as_alma_error(exc)
        for i in reversed(done):
            memory.unmerge(records[i])
        journal.finish(action_id, "rolled_back", error=str(error), code=int(error.code))
        if error is exc:
            raise
        raise error from exc
    journal.mark_done(action_id, [(i, None) for i in done])
    journal.finish(action_id, "done")
    return journal.action(action_id)


def edit(
    journal: Journal,
    memory: MemoryService,
    memory_id: str,
    **changes: Any,
) -> dict[str, Any]:
    """A person's edit of one memory (``memory.edit``: ``text``, ``tags``, ``importance``,
    ``memory_type``), journaled before it is written: the memory as ``memory.show`` gives it,
    with the ``action_id`` that `alma-ctl undo` takes back."""
    before, after = memory.edited(memory_id, **changes)
    fields = [
        name
        for name in ("content", "tags", "importance", "memory_type")
        if getattr(before, name) != getattr(after, name)
    ]
    op = {"op": EDIT, "id": before.id, "fields": fields}
    action_id = journal.create_action(kind=EDIT, plan=[op], sandbox=MEMORY)
    states: Aux = {"before": before.model_dump(), "after": after.model_dump()}
    journal.write_intents(action_id, [(0, None, None, states)])
    try:
        memory.rewrite(after.model_dump())
    except Exception as exc:
        error = as_alma_error(exc)
        memory.rewrite(before.model_dump())
        journal.finish(action_id, "rolled_back", error=str(error), code=int(error.code))
        if error is exc:
            raise
        raise error from exc
    journal.mark_done(action_id, [(0, None)])
    journal.finish(action_id, "done")
    return memory.show(before.id) | {"action_id": action_id}


def undo(journal: Journal, memory: MemoryService, target: int) -> Action:
    row = journal.action_row(target)
    rows = list(reversed(journal.rows(target)))
    if rows and rows[0].op.get("op") == EDIT:
        return _undo_edit(journal, memory, row, rows[0])
    plan = [{"op": "memory_unmerge", "keep": r.op["keep"], "merge": r.op["merge"]} for r in rows]
    action_id = journal.create_action(
        kind=str(row["kind"]),
        plan=plan,
        suggestion_id=row["suggestion_id"],
        undoes=target,
        sandbox=MEMORY,
    )
    journal.write_intents(
        action_id,
        [
            (i, p, None, {"record": r.aux["record"]})
            for i, (p, r) in enumerate(zip(plan, rows, strict=True))
        ],
    )
    _unmerge_all(journal, memory, action_id)
    return journal.action(action_id)


def _undo_edit(
    journal: Journal, memory: MemoryService, row: sqlite3.Row, done: JournalRow
) -> Action:
    """The undo of an edit is an edit back: its row holds the two states swapped, so that
    undoing it in turn writes the edit again. Refused when the memory changed since."""
    state: Aux = {"before": done.aux["after"], "after": done.aux["before"]}
    memory.check_edited(state["before"])
    action_id = journal.create_action(
        kind=str(row["kind"]),
        plan=[done.op],
        suggestion_id=row["suggestion_id"],
        undoes=int(row["id"]),
        sandbox=MEMORY,
    )
    journal.write_intents(action_id, [(0, None, None, state)])
    _unmerge_all(journal, memory, action_id)
    return journal.action(action_id)


def _write_back(memory: MemoryService, r: JournalRow, *, forward: bool) -> None:
    """One journal row of a memory action written to the store: an edit's ``after`` when
    it is done forward (an undo completed), its ``before`` when taken back; a merge's
    before-state either way (its undo's rows hold it too)."""
    if r.op.get("op") == EDIT:
        memory.rewrite(r.aux["after" if forward else "before"])
    else:
        memory.unmerge(r.aux["record"])


def _unmerge_all(journal: Journal, memory: MemoryService, action_id: int) -> None:
    """Take an interrupted action back, or complete an undo (idempotent), and finish it."""
    rows = journal.rows(action_id)
    undoes = journal.action_row(action_id)["undoes"]
    try:
        for r in reversed(rows) if undoes is None else rows:
            _write_back(memory, r, forward=undoes is not None)
    except Exception as exc:
        error = as_alma_error(exc)
        journal.finish(action_id, "failed", error=str(error), code=int(error.code))
        if error is exc:
            raise
        raise error from exc
    journal.mark_done(action_id, [(r.idx, None) for r in rows])
    with journal.transaction():
        if undoes is None:
            journal.finish(action_id, "rolled_back", error="interrupted; rolled back at start")
        else:
            journal.finish(action_id, "done")
            journal.mark_undone(int(undoes), action_id)


def recover(journal: Journal, memory: MemoryService) -> list[int]:
    """When the store loads: a merge interrupted by a crash is taken back; an interrupted undo
    of one is completed (unmerging is writing the before-state again, safe to repeat)."""
    recovered: list[int] = []
    for action_id in journal.running(sandbox=MEMORY):
        try:
            _unmerge_all(journal, memory, action_id)
        except AlmaError:
            log.exception("could not recover memory action %s", action_id)
            continue
        recovered.append(action_id)
    return recovered
