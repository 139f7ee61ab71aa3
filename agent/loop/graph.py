"""The LangGraph loop: observe -> recall -> propose -> gate, then approve -> act -> learn.

Two compiled graphs, because only the second waits for a person:

- the *analysis* (observe, recall, propose, gate) runs once per analysis over every finding, in
  memory: it stores nothing of its own, so a finding that is not proposed (already decided,
  stopped by the track record, suppressed by a memory, refused by the policy) leaves no thread;
- the *decision* (approve, act, learn) runs once per admitted suggestion, on the thread
  ``s{id}``, persisted by the SQLite checkpointer: ``approve`` is an ``interrupt()``, so a
  pending approval survives restarts, and ``accept``/``reject`` resume it with
  ``Command(resume=...)``. The thread is deleted as soon as the run ends (executed, rejected,
  failed): the checkpoints hold exactly the suggestions that wait for a person.

The suggestions table owns a suggestion's lifecycle (its status); the checkpoint only holds where
its decision run stands. LangGraph runs a node again from its start when it resumes, and a crash
can cut a node short, so: nothing with a side effect stands before the ``interrupt()`` in
``approve``; ``admit`` finds a suggestion again by fingerprint instead of inserting twice; ``act``
is keyed to the journal (a suggestion with a done action is not executed again); ``learn``
records each outcome once per suggestion.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from actions.ops import plan_from_list
from agent.memory.recall import MemoryNote, apply_recall
from policies import limits as L
from policies.decide import Verdict
from policies.errors import AlmaError, BadArgumentError
from policies.i18n import _
from policies.modes import private_file

log = logging.getLogger("alma.agent")


class Finding(BaseModel):
    """A detector's finding as it enters the loop: validated, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(min_length=1, max_length=64)
    target: str = Field(max_length=L.PATH_CHARS)
    title: str = Field(min_length=1, max_length=500)
    reason: str = Field(max_length=L.REASON_CHARS)
    evidence: list[str] = Field(max_length=200)
    #: The ops as dicts, the detector's own, never copied: observe checks each one with
    #: actions.ops.plan_from_list, the one owner of what an op is (a copy of 100,000 ops is
    #: about 100 MB, and the loop validated and dumped each finding twice).
    plan: list[Any]
    files: int = Field(ge=0)
    fingerprint: str = Field(min_length=8, max_length=128)
    #: The plan is the model's (agent.detectors.diagnose): it never runs without a person, at any level.
    by_model: bool = False

    def as_dict(self) -> dict[str, Any]:
        """``model_dump()`` with the same plan list: its ops are not copied."""
        return {**self.model_dump(exclude={"plan"}), "plan": self.plan}


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Literal["accept", "reject"]
    by: Literal["person", "auto"] = "person"
    reason: str | None = Field(None, max_length=L.REASON_CHARS)


class Skipped(TypedDict):
    """A finding the analysis did not propose, and why (shown by ``analyze --wait``)."""

    kind: str
    target: str
    title: str
    why: str
    by: list[str]  # the memory ids that decided it, if any


class AnalysisState(TypedDict, total=False):
    now: float
    findings: list[dict[str, Any]]
    notes: list[MemoryNote]
    proposals: list[dict[str, Any]]
    skipped: list[Skipped]
    admitted: list[tuple[int, bool]]  # (suggestion id, runs on its own)


class DecisionState(TypedDict, total=False):
    suggestion_id: int
    auto: bool
    decision: dict[str, Any]
    action: dict[str, Any] | None
    error: dict[str, Any] | None
    outcome: str


@dataclass
class LoopDeps:
    """What the nodes act through; the composition root passes the real ones."""

    #: every finding of the detectors now (the clock's time), as dicts
    detect: Callable[[float], Sequence[dict[str, Any]]]
    #: the findings seen now, so pending suggestions whose files changed expire
    expire: Callable[[set[str]], None]
    #: why this finding is not proposed (already pending or decided), or None
    blocked: Callable[[Finding], bool]
    #: why this kind is no longer proposed for this folder with a plan of so many files (the
    #: track record), or None
    stopped: Callable[[str, str, int], str | None]
    #: the principles and decisions recall reads (empty without a memory store)
    notes: Callable[[], list[MemoryNote]]
    #: policy gate for a finding with nobody's approval: ALLOW (run on its own), ASK or REFUSE
    gate: Callable[[Finding], tuple[Verdict, str]]
    #: store the suggestion (or find it again by fingerprint); returns its id
    admit: Callable[[Finding, bool], int]
    #: execute an accepted suggestion (idempotent, keyed to the journal); returns the Action
    execute: Callable[[int, bool], dict[str, Any]]
    #: record a rejection in the suggestions table
    reject: Callable[[int, str | None], None]
    #: write an outcome back: statistics, a decision memory, the audit log
    learn: Callable[[int, Decision, str, dict[str, Any] | None], None]
    #: what the files say about a new finding (a failing script's configuration)
    explain: Callable[[dict[str, Any]], dict[str, Any]] = lambda finding: finding


def _skip(finding: dict[str, Any], why: str, by: list[str] | None = None) -> Skipped:
    return {
        "kind": str(finding.get("kind", "?")),
        "target": str(finding.get("target", "")),
        "title": str(finding.get("title", "")),
        "why": why,
        "by": by or [],
    }


def build_analysis(deps: LoopDeps) -> Any:
    def observe(state: AnalysisState) -> AnalysisState:
        raw = list(deps.detect(state["now"]))
        deps.expire({str(f.get("fingerprint")) for f in raw})
        findings: list[dict[str, Any]] = []
        skipped: list[Skipped] = []
        for item in raw:
            try:
                finding = Finding.model_validate(item)
                plan_from_list(finding.plan)
            except (ValidationError, AlmaError) as exc:
                log.error("a detector gave a bad finding, left out: %s", exc)
                continue
            if deps.blocked(finding):
                continue  # pending, or decided: not news
            why = deps.stopped(finding.kind, finding.target, finding.files)
            if why is not None:
                skipped.append(_skip(item, why))
                continue
            findings.append(finding.as_dict())
        return {"findings": findings, "skipped": skipped}

    def recall(state: AnalysisState) -> AnalysisState:
        return {"notes": deps.notes() if state["findings"] else []}

    def propose(state: AnalysisState) -> AnalysisState:
        proposals: list[dict[str, Any]] = []
        skipped = list(state["skipped"])
        for finding in state["findings"]:
            try:
                finding = deps.explain(finding)
            except (OSError, AlmaError) as exc:  # proposed as detected, without the explanation
                log.error("could not look into %s: %s", finding["target"], exc)
            shaped = apply_recall(finding, state["notes"])
            if shaped.finding is None:
                skipped.append(_skip(finding, shaped.why, shaped.by))
            else:
                proposals.append(shaped.finding)
        return {"proposals": proposals, "skipped": skipped}

    def gate(state: AnalysisState) -> AnalysisState:
        admitted: list[tuple[int, bool]] = []
        skipped = list(state["skipped"])
        for item in state["proposals"]:
            finding = Finding.model_validate(item)
            verdict, reason = deps.gate(finding)
            if verdict is Verdict.REFUSE:
                skipped.append(_skip(item, reason))
                continue
            auto = verdict is Verdict.ALLOW
            admitted.append((deps.admit(finding, not auto), auto))
        return {"admitted": admitted, "skipped": skipped}

    builder = StateGraph(AnalysisState)
    builder.add_node("observe", observe)
    builder.add_node("recall", recall)
    builder.add_node("propose", propose)
    builder.add_node("gate", gate)
    builder.add_edge(START, "observe")
    builder.add_edge("observe", "recall")
    builder.add_edge("recall", "propose")
    builder.add_edge("propose", "gate")
    builder.add_edge("gate", END)
    return builder.compile()


def build_decision(deps: LoopDeps, saver: SqliteSaver) -> Any:
    def approve(state: DecisionState) -> DecisionState:
        if "decision" in state:  # decided before the run (accepting a failed one again)
            return {}
        if state.get("auto"):
            return {"decision": {"verdict": "accept", "by": "auto"}}
        answer = interrupt({"suggestion_id": state["suggestion_id"]})
        try:
            decision = Decision.model_validate(answer)
        except ValidationError:
            raise BadArgumentError(_("an approval must be accept or reject.")) from None
        return {"decision": decision.model_dump()}

    def act(state: DecisionState) -> DecisionState:
        decision = Decision.model_validate(state["decision"])
        sid = state["suggestion_id"]
        if decision.verdict == "reject":
            deps.reject(sid, decision.reason)
            return {"outcome": "rejected", "action": None}
        try:
            action = deps.execute(sid, decision.by == "auto")
        except AlmaError as exc:
            return {"outcome": "failed", "error": exc.to_wire()}
        return {"outcome": "executed", "action": action}

    def learn(state: DecisionState) -> DecisionState:
        decision = Decision.model_validate(state["decision"])
        deps.learn(state["suggestion_id"], decision, state["outcome"], state.get("action"))
        return {}

    builder = StateGraph(DecisionState)
    builder.add_node("approve", approve)
    builder.add_node("act", act)
    builder.add_node("learn", learn)
    builder.add_edge(START, "approve")
    builder.add_edge("approve", "act")
    builder.add_edge("act", "learn")
    builder.add_edge("learn", END)
    return builder.compile(checkpointer=saver)


def open_saver(checkpoints: Path) -> SqliteSaver:
    private_file(checkpoints)
    conn = sqlite3.connect(checkpoints, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


class Loop:
    """The two graphs and the checkpointer, with the few operations the agent needs."""

    def __init__(self, deps: LoopDeps, checkpoints: Path) -> None:
        self.saver = open_saver(checkpoints)
        self.analysis = build_analysis(deps)
        self.decision = build_decision(deps, self.saver)

    def analyze(self, now: float) -> AnalysisState:
        result: AnalysisState = self.analysis.invoke({"now": now, "skipped": []})
        return result

    def start(self, sid: int, *, auto: bool) -> DecisionState:
        """Run a new suggestion's decision: on its own, or up to the interrupt."""
        return self._run(sid, {"suggestion_id": sid, "auto": auto})

    def decide(self, sid: int, decision: Decision) -> DecisionState:
        """A person's decision: resume the waiting run, or run one decided from the start."""
        if self.waiting(sid):
            return self._run(sid, Command(resume=decision.model_dump()))
        self.forget(sid)
        return self._run(sid, {"suggestion_id": sid, "decision": decision.model_dump()})

    def waiting(self, sid: int) -> bool:
        state = self.decision.get_state(config(sid))
        return tuple(state.next) == ("approve",)

    def forget(self, sid: int) -> None:
        self.saver.delete_thread(thread(sid))

    def threads(self) -> set[str]:
        return {str(c.config["configurable"]["thread_id"]) for c in self.saver.list(None)}

    def sweep(self, pending: set[int]) -> int:
        """Delete every thread that is not a pending suggestion's (left by a stop mid-run, or
        by an older ALMA that kept one per finding). Returns how many."""
        keep = {thread(sid) for sid in pending}
        stale = self.threads() - keep
        for name in stale:
            self.saver.delete_thread(name)
        return len(stale)

    def _run(self, sid: int, payload: Any) -> DecisionState:
        result: DecisionState = self.decision.invoke(payload, config(sid), durability="sync")
        if "outcome" in result:  # the run ended: the table says the rest
            self.forget(sid)
        return result


def thread(sid: int) -> str:
    return f"s{sid}"


def config(sid: int) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread(sid)}}
