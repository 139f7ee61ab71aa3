"""The analysis and the decisions in process: real store, policy and engine, findings given.

A finding is one value (PlanResult) from its detector to the store; a suggestion waits for a
person as its row alone, and a decision is a change of that row keyed to the journal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from actions.ops import Mkdir, Move
from actions.planners import PlanResult
from agent.backup.service import LAST_SETTING, REPO_SETTING, BackupService
from agent.loop.autonomy import Autonomy
from agent.loop.lifecycle import Agent
from agent.memory.loader import MemoryLoader
from agent.policy import PolicyHolder
from policies.defaults import DEFAULT_POLICY_TOML
from policies.errors import InvalidStateError
from state.journal import Journal
from state.suggestions import SuggestionStore
from tests.support.engine import AlmaRoot, InProcessEngine


def _finding(target: str, kind: str = "organize", fp: str | None = None) -> PlanResult:
    return PlanResult(
        kind=kind,
        target=target,
        title=f"Ordenar {target}",
        reason="muchos archivos sueltos",
        evidence=["20 archivos"],
        plan=[Mkdir(f"{target}/pdf"), Move(f"{target}/a.pdf", f"{target}/pdf/a.pdf")],
        files=1,
        fingerprint=fp or ("x" * 8 + target.replace("/", "_")),
    )


class _Memory:
    """The memory service's part the analysis and a rejection use."""

    def __init__(self, memories: list[dict[str, Any]]) -> None:
        self.memories = memories
        self.added: list[tuple[str, str]] = []

    def list(self, *, limit: int = 20, memory_type: str | None = None, **_: Any) -> list[Any]:
        return [m for m in self.memories if m["memory_type"] == memory_type]

    def merge_candidates(self, *, wait: bool = True) -> list[list[str]] | None:
        return []

    def start_merge_scan(self) -> None:
        return None

    def reason_reader(self) -> None:
        return None  # reasons only shown: reading them is tests/unit/test_reasons.py's

    def add(self, text: str, *, memory_type: str, **_: Any) -> dict[str, Any]:
        self.added.append((memory_type, text))
        return {"id": f"d{len(self.added)}"}


class World:
    """An ALMA root, its store and engine, and the findings the detectors give now."""

    def __init__(self, tmp_path: Path, level: str = "suggest") -> None:
        self.alma = AlmaRoot(tmp_path).build()
        policy = re.sub(r"settle_seconds = \d+", "settle_seconds = 0", DEFAULT_POLICY_TOML)
        policy = policy.replace("allow_unconfined = false", "allow_unconfined = true")
        policy = policy.replace('level = "suggest"', f'level = "{level}"')
        self.alma.layout.policy_file.write_text(policy, encoding="utf-8")
        self.findings: list[PlanResult] = []
        self.memory = _Memory([])
        self.stores: list[SuggestionStore] = []

    def agent(self) -> Agent:
        """A daemon's agent over the root (another call: the daemon started again)."""
        holder = PolicyHolder(self.alma.layout)
        store = SuggestionStore(self.alma.layout.db_file)
        self.stores.append(store)
        engine = InProcessEngine(self.alma.layout, Journal(self.alma.layout.journal_file), holder)
        gate = MemoryLoader()
        gate.set(self.memory)  # type: ignore[arg-type]  # a fake with what the loop calls

        def detect(now: float) -> list[PlanResult]:
            return list(self.findings)

        return Agent(
            self.alma.layout, holder, store, engine, Autonomy(store, holder), detect, memory=gate
        )

    def loose(self, folder: str) -> PlanResult:
        """A real file to move, and the finding that moves it."""
        self.alma.write(f"{folder}/a.pdf", b"%PDF")
        move = self.alma.move(f"{folder}/a.pdf", f"{folder}/pdf/a.pdf")
        return replace(_finding(folder), plan=[Mkdir(f"{folder}/pdf"), move])


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    for store in w.stores:
        store.close()


def test_observe_leaves_out_what_is_decided_what_the_track_record_stopped_and_bad_findings(
    world: World,
) -> None:
    ag = world.agent()
    world.findings = [_finding("user/a"), _finding("user/c")]
    (old, _pending) = ag.analyze(trigger="person")
    ag.reject(old, None)  # user/a decided
    for n in range(3):  # user/b rejected three times: the track record stops it there
        sid = ag.store.propose(_finding("user/b", fp=f"other{n:04d}"), needs_approval=True)
        ag.reject(sid, None)
    bad = PlanResult("organize", "user/d", "", "r", [], [], 0, "y" * 16)  # no title
    world.findings = [_finding("user/a"), _finding("user/b"), _finding("user/c"), bad]
    out = ag.analysis(trigger="person")
    assert out["proposed"] == []  # user/c is pending already: not news
    assert [(s["target"], s["by"]) for s in out["skipped"]] == [("user/b", [])]
    assert "user/b" in out["skipped"][0]["why"]


def test_a_pending_plan_whose_finding_is_gone_expires(world: World) -> None:
    ag = world.agent()
    world.findings = [_finding("user/a")]
    (sid,) = ag.analyze(trigger="person")
    world.findings = []
    ag.analyze(trigger="person")
    assert ag.store.row(sid)["status"] == "expired"


def test_a_principle_suppresses_a_finding_and_names_the_memory(world: World) -> None:
    world.memory.memories = [
        {"id": "m7", "content": "Nunca toques user/proyectos/tesis", "memory_type": "principle"}
    ]
    world.findings = [_finding("user/proyectos/tesis"), _finding("user/fotos")]
    ag = world.agent()
    out = ag.analysis(trigger="person")
    assert [ag.store.row(sid)["target"] for sid in out["proposed"]] == ["user/fotos"]
    (skip,) = out["skipped"]
    assert skip["target"] == "user/proyectos/tesis" and skip["by"] == ["m7"]


def test_the_gate_refuses_without_storing_anything(world: World) -> None:
    world.findings = [_finding("docs/x")]  # docs/ is read-only
    ag = world.agent()
    out = ag.analysis(trigger="person")
    assert out["proposed"] == [] and ag.store.list(all=True) == []
    assert "docs/x" in out["skipped"][0]["why"]


def test_a_pending_suggestion_is_its_row_alone_and_survives_a_restart(world: World) -> None:
    world.findings = [world.loose("user/a")]
    (sid,) = world.agent().analyze(trigger="person")
    again = world.agent()  # the daemon started again: nothing but the tables
    again.reconcile()
    assert again.store.row(sid)["status"] == "pending"
    action = again.accept(sid)
    assert action["status"] == "done" and action["suggestion_id"] == sid
    assert (world.alma.root / "user/a/pdf/a.pdf").exists()
    row = again.store.row(sid)
    assert (row["status"], row["action_id"]) == ("executed", action["id"])
    events = [(r["event"], r["auto"]) for r in again.store.outcomes()]
    assert events == [("proposed", 0), ("accepted", 0)]
    with pytest.raises(InvalidStateError, match="already executed"):
        again.accept(sid)


def test_the_suggestions_plan_becomes_its_actions_as_the_same_text(world: World) -> None:
    world.findings = [world.loose("user/a")]
    ag = world.agent()
    (sid,) = ag.analyze(trigger="person")
    stored = ag.store.plan(sid)
    action = ag.accept(sid)
    assert ag.engine.journal.plan_text(action["id"]) == stored.text


def test_a_stop_after_the_action_never_runs_it_twice(world: World) -> None:
    world.findings = [world.loose("user/a")]
    ag = world.agent()
    (sid,) = ag.analyze(trigger="person")
    action = ag.accept(sid)
    ag.store.update(sid, status="accepted", action_id=None)  # as a stop right after the child
    again = world.agent()
    again.reconcile()
    assert again.store.row(sid)["status"] == "executed"
    assert again.store.row(sid)["action_id"] == action["id"]
    assert again.decider.run(sid, auto=False)["id"] == action["id"]  # the journal's, not rerun
    assert len(again.engine.journal.for_suggestion(sid)) == 1


def test_a_rejection_is_one_change_and_leaves_a_decision_memory(world: World) -> None:
    world.findings = [_finding("user/a")]
    ag = world.agent()
    (sid,) = ag.analyze(trigger="person")
    shown = ag.reject(sid, "esa carpeta la ordeno yo")
    assert shown["status"] == "rejected" and shown["reject_reason"] == "esa carpeta la ordeno yo"
    assert ag.store.find_blocking(_finding("user/a").fingerprint) == sid
    assert [(r["event"], r["reason"]) for r in ag.store.outcomes()][-1] == (
        "rejected",
        "esa carpeta la ordeno yo",
    )
    ((kind, text),) = world.memory.added
    assert kind == "decision" and "«esa carpeta la ordeno yo»" in text
    with pytest.raises(InvalidStateError):
        ag.reject(sid, None)


def test_allowed_on_its_own_runs_at_once(tmp_path: Path) -> None:
    world = World(tmp_path, level="auto")
    try:
        world.findings = [replace(world.loose("user/tmp"), kind="temp_cleanup")]
        ag = world.agent()
        (sid,) = ag.analyze(trigger="person")
        row = ag.store.row(sid)
        assert row["status"] == "executed" and not row["needs_approval"]
        assert [(r["event"], r["auto"]) for r in ag.store.outcomes()][-1] == ("accepted", 1)
    finally:
        for store in world.stores:
            store.close()


def test_a_failing_script_is_explained_and_a_file_finding_skips_that_step(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.detectors import diagnose

    seen: list[str] = []

    def explain(root: Path, finding: PlanResult, **_: Any) -> PlanResult:
        seen.append(finding.kind)
        return replace(finding, reason=finding.reason + ". backup.conf:3 nombra /mnt/X")

    monkeypatch.setattr(diagnose, "explain_failure", explain)
    failing = replace(_finding("logs/backup.log", kind="repeated_failure"), plan=[], files=0)
    world.findings = [failing, _finding("user/a")]
    ag = world.agent()
    out = ag.analysis(trigger="person")
    assert seen == ["repeated_failure"]  # a file finding does not take the step
    reasons = [ag.store.row(sid)["reason"] for sid in out["proposed"]]
    assert reasons == [
        "muchos archivos sueltos. backup.conf:3 nombra /mnt/X",
        "muchos archivos sueltos",
    ]


def test_an_analysis_that_must_not_wait_for_the_model_leaves_its_findings_for_the_next(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not proposed without its fix, nor waited for: counted, and proposed (with the model's
    plan) by the next analysis that may ask the model."""
    from agent.detectors import diagnose

    def explain(root: Path, finding: PlanResult, **kw: Any) -> PlanResult:
        answer = kw["complete"]([], max_tokens=10, timeout_s=1.0)
        return replace(finding, reason=f"{finding.reason}. {answer}")

    monkeypatch.setattr(diagnose, "explain_failure", explain)
    failing = replace(_finding("logs/backup.log", kind="repeated_failure"), plan=[], files=0)
    world.findings = [failing, _finding("user/a")]
    ag = world.agent()
    ag.analyst.complete = lambda *_a, **_k: "el modelo lo explica"  # type: ignore[assignment]  # a model that answers at once
    first = ag.analysis(trigger="event", model=False)
    assert first["deferred"] == 1
    assert [ag.store.row(sid)["target"] for sid in first["proposed"]] == ["user/a"]
    assert [s["target"] for s in first["skipped"]] == ["logs/backup.log"]
    second = ag.analysis(trigger="event")
    assert second["deferred"] == 0
    (sid,) = second["proposed"]
    assert ag.store.row(sid)["reason"] == "muchos archivos sueltos. el modelo lo explica"


def test_a_checkpoints_file_of_an_older_root_goes_at_start(world: World) -> None:
    cp = world.alma.layout.checkpoints_file
    cp.parent.mkdir(parents=True, exist_ok=True)
    for path in (cp, cp.with_name(cp.name + "-wal")):
        path.write_bytes(b"SQLite format 3\x00")
    world.findings = [_finding("user/a")]
    ag = world.agent()
    (sid,) = ag.analyze(trigger="person")
    ag.reconcile()
    assert not cp.exists() and not cp.with_name(cp.name + "-wal").exists()
    assert ag.store.row(sid)["status"] == "pending"
    ag.reconcile()  # again, with nothing to remove


def test_the_noise_budget_proposes_a_few_a_day_the_most_worth_first_and_the_rest_later(
    world: World,
) -> None:
    def plain(kind: str, target: str) -> PlanResult:
        return replace(_finding(target, kind=kind), plan=[], files=0)

    week = [world.loose(f"user/d{i}") for i in range(4)] + [
        plain("repeated_failure", "logs/backup.log"),
        plain("pending_task", "logs/2026-11-20.md"),
        plain("low_mood", "logs"),
    ]
    world.findings = week
    ag = world.agent()
    done = ag.analysis(trigger="person")
    store = world.stores[-1]
    first = [store.get(sid)["kind"] for sid in done["proposed"]]
    assert len(first) == 5  # [monitor] new_per_day's default
    assert first[:3] == ["repeated_failure", "pending_task", "low_mood"] or sorted(first) == sorted(
        ["repeated_failure", "pending_task", "low_mood", "organize", "organize"]
    )
    waiting = [s for s in done["skipped"] if s["why"].startswith("waiting")]
    assert [s["kind"] for s in waiting] == ["organize", "organize"]
    assert ag.analysis(trigger="person")["proposed"] == []  # the same day: still waiting
    # The next day: what waited is proposed.
    store.conn.execute("UPDATE suggestions SET created_at = '2000-01-01T00:00:00+00:00'")
    store.conn.commit()
    later = ag.analysis(trigger="person")["proposed"]
    assert [store.get(sid)["kind"] for sid in later] == ["organize", "organize"]


def test_failing_backups_are_one_suggestion_that_no_used_up_budget_holds_back(
    world: World,
) -> None:
    ag = world.agent()
    store = world.stores[-1]
    backups = BackupService(
        world.alma.layout,
        ag.policy,
        store,
        None,  # type: ignore[arg-type]  # no engine: findings read the settings only
        None,  # type: ignore[arg-type]  # no memory store either
        lambda action: None,
    )
    store.set_setting(REPO_SETTING, {"target": "/media/d/b", "password_file": "/p", "since": 0})
    store.set_setting(LAST_SETTING, {"ok_at": 1.0, "error": None})
    loose = [world.loose(f"user/d{i}") for i in range(7)]

    def fail(n: int) -> None:
        last = store.setting(LAST_SETTING)
        store.set_setting(LAST_SETTING, {**last, "failed_at": 2.0 + n, "error": f"Fallo {n}."})
        world.findings = loose + backups.findings(ag.clock())

    fail(0)
    first = ag.analysis(trigger="person")
    kinds = sorted(store.get(sid)["kind"] for sid in first["proposed"])
    # The warning, and the day's five ([monitor] new_per_day) for the rest: it took no room.
    assert kinds == ["backup"] + ["organize"] * 5
    for n in range(1, 5):  # four more failures, each in its own words, the budget used up
        fail(n)
        done = ag.analysis(trigger="person")
        assert done["proposed"] == [] and all(s["kind"] != "backup" for s in done["skipped"])
    [warning] = [s for s in store.list() if s["kind"] == "backup"]
    assert warning["reason"].startswith("Fallo 4.")  # one suggestion, in the last words
    # A good backup, then a failure again the same day: a new problem, told at once.
    store.set_setting(LAST_SETTING, {"ok_at": 10.0, "error": None})
    world.findings = loose + backups.findings(ag.clock())
    ag.analysis(trigger="person")
    assert store.get(warning["id"])["status"] == "expired"
    fail(5)
    [again] = ag.analysis(trigger="person")["proposed"]
    assert store.get(again)["kind"] == "backup" and again != warning["id"]
