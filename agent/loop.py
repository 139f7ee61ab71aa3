"""The LangGraph loop: monitor -> propose -> approve -> act, one thread per suggestion.

Approval is an ``interrupt()`` persisted by the SQLite checkpointer, so a pending approval
survives restarts; ``accept``/``reject`` on the socket resume it with ``Command(resume=...)``.

LangGraph runs a node again from its start when it resumes, and a crash can cut a node short, so:
nothing with a side effect stands before the ``interrupt()`` in ``approve``; ``propose`` finds its
suggestion again by fingerprint instead of inserting twice; ``act`` is keyed to the journal: a
suggestion that already has a done action is not executed again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from actions.ops import plan_from_list
from policies.decide import Verdict
from policies.errors import AlmaError, BadArgumentError


class Finding(BaseModel):
    """A detector's finding as it enters the loop: validated, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(min_length=1, max_length=64)
    target: str = Field(max_length=4096)
    title: str = Field(min_length=1, max_length=500)
    reason: str = Field(max_length=2000)
    evidence: list[str] = Field(max_length=200)
    plan: list[dict[str, Any]]
    files: int = Field(ge=0)
    fingerprint: str = Field(min_length=8, max_length=128)


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Literal["accept", "reject"]
    by: Literal["person", "auto"] = "person"
    reason: str | None = Field(None, max_length=2000)


class LoopState(TypedDict, total=False):
    thread_id: str
    finding: dict[str, Any]
    suggestion_id: int
    auto: bool
    decision: dict[str, Any]
    action: dict[str, Any] | None
    error: dict[str, Any] | None
    outcome: str


@dataclass
class LoopDeps:
    """What the nodes act through; the composition root passes the real ones."""

    #: policy gate for a finding with nobody's approval: ALLOW (run on its own), ASK or REFUSE
    gate: Callable[[Finding], tuple[Verdict, str]]
    #: store the suggestion (or find it again by fingerprint); returns its id
    propose: Callable[[Finding, bool, str], int]
    #: execute an accepted suggestion (idempotent, keyed to the journal); returns the Action
    execute: Callable[[int, bool], dict[str, Any]]
    #: record a rejection
    reject: Callable[[int, str | None], None]


def build_loop(deps: LoopDeps, checkpoints: Path) -> Any:
    def monitor(state: LoopState) -> LoopState:
        try:
            finding = Finding.model_validate(state["finding"])
            plan_from_list(finding.plan)
        except (ValidationError, AlmaError, KeyError) as exc:
            return {"outcome": "invalid", "error": {"code": 14, "message": f"bad finding: {exc}"}}
        verdict, reason = deps.gate(finding)
        if verdict is Verdict.REFUSE:
            return {"outcome": "refused", "error": {"code": 20, "message": reason}}
        return {"finding": finding.model_dump(), "auto": verdict is Verdict.ALLOW}

    def after_monitor(state: LoopState) -> str:
        return END if state.get("outcome") in ("invalid", "refused") else "propose"

    def propose(state: LoopState) -> LoopState:
        if "suggestion_id" in state:
            return {}
        finding = Finding.model_validate(state["finding"])
        needs_approval = not state.get("auto", False)
        return {"suggestion_id": deps.propose(finding, needs_approval, state["thread_id"])}

    def approve(state: LoopState) -> LoopState:
        if "decision" in state:  # decided before the run (accepting a failed one again)
            return {}
        if state.get("auto"):
            return {"decision": {"verdict": "accept", "by": "auto"}}
        answer = interrupt({"suggestion_id": state["suggestion_id"]})
        try:
            decision = Decision.model_validate(answer)
        except ValidationError:
            raise BadArgumentError("an approval must be accept or reject.") from None
        return {"decision": decision.model_dump()}

    def act(state: LoopState) -> LoopState:
        decision = Decision.model_validate(state["decision"])
        sid = state["suggestion_id"]
        if decision.verdict == "reject":
            deps.reject(sid, decision.reason)
            return {"outcome": "rejected", "action": None}
        try:
            action = deps.execute(sid, decision.by == "auto")
        except AlmaError as exc:
            return {"outcome": "failed", "error": {"code": int(exc.code), "message": str(exc)}}
        return {"outcome": "executed", "action": action}

    builder = StateGraph(LoopState)
    builder.add_node("monitor", monitor)
    builder.add_node("propose", propose)
    builder.add_node("approve", approve)
    builder.add_node("act", act)
    builder.add_edge(START, "monitor")
    builder.add_conditional_edges("monitor", after_monitor, ["propose", END])
    builder.add_edge("propose", "approve")
    builder.add_edge("approve", "act")
    builder.add_edge("act", END)
    conn = sqlite3.connect(checkpoints, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return builder.compile(checkpointer=saver)


def config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def waiting_for_approval(graph: Any, thread_id: str) -> bool:
    state = graph.get_state(config(thread_id))
    return tuple(state.next) == ("approve",)


def resume(graph: Any, thread_id: str, decision: Decision) -> LoopState:
    result: LoopState = graph.invoke(Command(resume=decision.model_dump()), config(thread_id))
    return result
