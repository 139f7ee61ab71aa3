"""The loop's nodes in process, with fakes at the edges (detectors, memory, policy, engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.loop import graph as loop
from agent.memory.recall import MemoryNote, recall_notes
from policies.decide import Verdict


def _finding(target: str, kind: str = "organize", fp: str | None = None) -> dict[str, Any]:
    return {
        "kind": kind,
        "target": target,
        "title": f"Ordenar {target}",
        "reason": "muchos archivos sueltos",
        "evidence": ["20 archivos"],
        "plan": [
            {"op": "mkdir", "path": f"{target}/pdf"},
            {"op": "move", "src": f"{target}/a.pdf", "dst": f"{target}/pdf/a.pdf"},
        ],
        "files": 1,
        "fingerprint": fp or ("x" * 8 + target.replace("/", "_")),
    }


class Edges:
    """Records what the nodes asked of the world."""

    def __init__(self, findings: list[dict[str, Any]]) -> None:
        self.findings = findings
        self.blocked: set[str] = set()
        self.stopped: dict[tuple[str, str], str] = {}
        self.memories: list[dict[str, Any]] = []
        self.refuse: set[str] = set()
        self.allow: set[str] = set()
        self.admitted: list[str] = []
        self.executed: list[tuple[int, bool]] = []
        self.rejected: list[tuple[int, str | None]] = []
        self.learned: list[tuple[int, str, str, str | None]] = []
        self.expired_seen: list[set[str]] = []

    def deps(self) -> loop.LoopDeps:
        def gate(f: loop.Finding) -> tuple[Verdict, str]:
            if f.target in self.refuse:
                return Verdict.REFUSE, f"{f.target} is read-only"
            return (Verdict.ALLOW if f.target in self.allow else Verdict.ASK), "ok"

        def admit(f: loop.Finding, needs_approval: bool) -> int:
            self.admitted.append(f.target)
            return len(self.admitted)

        def execute(sid: int, auto: bool) -> dict[str, Any]:
            self.executed.append((sid, auto))
            return {"id": 100 + sid, "suggestion_id": sid}

        def notes() -> list[MemoryNote]:
            memory = _Memory(self.memories)
            return recall_notes(memory)

        return loop.LoopDeps(
            detect=lambda now: self.findings,
            expire=self.expired_seen.append,
            blocked=lambda f: f.fingerprint in self.blocked,
            stopped=lambda kind, target, files: self.stopped.get((kind, target)),
            notes=notes,
            gate=gate,
            admit=admit,
            execute=execute,
            reject=lambda sid, reason: self.rejected.append((sid, reason)),
            learn=lambda sid, d, outcome, action: self.learned.append(
                (sid, d.verdict, outcome, d.reason)
            ),
        )


class _Memory:
    def __init__(self, memories: list[dict[str, Any]]) -> None:
        self.memories = memories

    def list(self, *, limit: int = 20, memory_type: str | None = None, **_: Any) -> list[Any]:
        return [m for m in self.memories if m["memory_type"] == memory_type]


@pytest.fixture
def make(tmp_path: Path) -> Any:
    def build(edges: Edges) -> loop.Loop:
        return loop.Loop(edges.deps(), tmp_path / "checkpoints.db")

    return build


def test_observe_leaves_out_what_is_decided_and_what_the_track_record_stopped(make: Any) -> None:
    edges = Edges([_finding("user/a"), _finding("user/b"), _finding("user/c"), {"kind": "?"}])
    edges.blocked.add(_finding("user/a")["fingerprint"])
    edges.stopped[("organize", "user/b")] = "rechazado 3 veces en user/b"
    state = make(edges).analyze(0.0)
    assert edges.admitted == ["user/c"]
    assert [(s["target"], s["why"]) for s in state["skipped"]] == [
        ("user/b", "rechazado 3 veces en user/b")
    ]
    # every detected fingerprint reached expiry, so pending ones that vanished expire
    assert _finding("user/a")["fingerprint"] in edges.expired_seen[0]


def test_recall_and_propose_a_principle_suppresses_and_names_the_memory(make: Any) -> None:
    edges = Edges([_finding("user/proyectos/tesis"), _finding("user/fotos")])
    edges.memories = [
        {"id": "m7", "content": "Nunca toques user/proyectos/tesis", "memory_type": "principle"}
    ]
    state = make(edges).analyze(0.0)
    assert edges.admitted == ["user/fotos"]
    (skip,) = state["skipped"]
    assert skip["target"] == "user/proyectos/tesis" and skip["by"] == ["m7"]


def test_gate_refuses_without_storing_anything_or_leaving_a_thread(make: Any) -> None:
    edges = Edges([_finding("docs/x")])
    edges.refuse.add("docs/x")
    the_loop = make(edges)
    state = the_loop.analyze(0.0)
    assert edges.admitted == [] and state["admitted"] == []
    assert state["skipped"][0]["why"] == "docs/x is read-only"
    assert the_loop.threads() == set()


def test_approve_waits_for_the_person_and_accept_acts_learns_and_ends_the_thread(
    make: Any,
) -> None:
    edges = Edges([_finding("user/a")])
    the_loop = make(edges)
    ((sid, auto),) = the_loop.analyze(0.0)["admitted"]
    assert not auto
    the_loop.start(sid, auto=False)
    assert the_loop.waiting(sid) and the_loop.threads() == {"s1"}
    assert edges.executed == []
    result = the_loop.decide(sid, loop.Decision(verdict="accept"))
    assert result["outcome"] == "executed" and result["action"] == {"id": 101, "suggestion_id": 1}
    assert edges.executed == [(1, False)]
    assert edges.learned == [(1, "accept", "executed", None)]
    assert the_loop.threads() == set()


def test_a_pending_approval_survives_a_new_loop_on_the_same_checkpoints(make: Any) -> None:
    edges = Edges([_finding("user/a")])
    make(edges).start(1, auto=False)
    again = make(edges)  # the daemon restarted
    assert again.waiting(1)
    again.decide(1, loop.Decision(verdict="reject", reason="esa carpeta la ordeno yo"))
    assert edges.rejected == [(1, "esa carpeta la ordeno yo")]
    assert edges.learned == [(1, "reject", "rejected", "esa carpeta la ordeno yo")]
    assert edges.executed == [] and again.threads() == set()


def test_allowed_on_its_own_runs_at_once_and_keeps_no_thread(make: Any) -> None:
    edges = Edges([_finding("user/tmp", kind="temp_cleanup")])
    edges.allow.add("user/tmp")
    the_loop = make(edges)
    ((sid, auto),) = the_loop.analyze(0.0)["admitted"]
    assert auto
    assert the_loop.start(sid, auto=True)["outcome"] == "executed"
    assert edges.executed == [(1, True)]
    assert edges.learned == [(1, "accept", "executed", None)]
    assert the_loop.threads() == set()


def test_deciding_one_whose_run_ended_runs_act_and_learn_from_the_decision(make: Any) -> None:
    edges = Edges([])
    the_loop = make(edges)
    result = the_loop.decide(5, loop.Decision(verdict="accept"))
    assert result["outcome"] == "executed" and edges.executed == [(5, False)]
    assert the_loop.threads() == set()


def test_sweep_keeps_only_the_runs_of_pending_suggestions(make: Any) -> None:
    edges = Edges([])
    the_loop = make(edges)
    for sid in (1, 2, 3):
        the_loop.start(sid, auto=False)
    assert the_loop.sweep({2}) == 2
    assert the_loop.threads() == {"s2"}


def test_storage_stays_bounded_over_many_decided_suggestions(make: Any, tmp_path: Path) -> None:
    edges = Edges([])
    the_loop = make(edges)
    for sid in range(1, 31):
        the_loop.start(sid, auto=False)
        the_loop.decide(sid, loop.Decision(verdict="reject" if sid % 2 else "accept"))
    assert the_loop.threads() == set()
    rows = the_loop.saver.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    writes = the_loop.saver.conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0]
    assert (rows, writes) == (0, 0)


def test_propose_asks_the_files_about_a_new_finding_before_recall(
    make: Any, tmp_path: Path
) -> None:
    edges = Edges([_finding("logs/backup.log", kind="repeated_failure")])
    deps = edges.deps()
    deps.explain = lambda f: {**f, "reason": f["reason"] + ". backup.conf:3 nombra /mnt/X"}
    the_loop = loop.Loop(deps, tmp_path / "cp2.db")
    state = the_loop.analyze(0.0)
    (proposal,) = state["proposals"]
    assert proposal["reason"].endswith("backup.conf:3 nombra /mnt/X")
