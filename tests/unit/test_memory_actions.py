"""memory_merge as an action: proposed from real clusters, journaled before it changes anything,
undone exactly, and an interrupted merge taken back when the store loads again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actions.ops import (
    MemoryMerge,
    Op,
    StoredPlan,
    encode_plan,
    op_from_dict,
    plan_from_list,
    read_plan,
)
from actions.tree import Tree
from agent.loop.families import Absent, Families
from agent.memory import merge_actions as memory_actions
from agent.memory.loader import MemoryLoader
from agent.memory.merge_actions import MemoryFamily
from agent.memory.service import MemoryService
from policies.decide import RunContext
from policies.errors import (
    AlmaError,
    BadArgumentError,
    ConflictError,
    RefusedError,
    UnavailableError,
)
from policies.i18n import language
from policies.kinds import BACKUP, MEMORY, SANDBOX
from policies.layout import RootLayout
from sandbox.executor import Executor, Zones
from state.journal import Journal
from tests.support.engine import InProcessEngine, default_policy
from tests.unit.test_memory_service import NOW


def _stored(plan: list[Op]) -> StoredPlan:
    """The plan as a suggestion's store hands it over."""
    return read_plan(encode_plan(plan)[0])


@pytest.fixture
def root(tmp_path: Path) -> RootLayout:
    for sub in ("system", "logs", "user", ".alma/journal"):
        (tmp_path / sub).mkdir(parents=True)
    return RootLayout(tmp_path)


@pytest.fixture
def svc(root: RootLayout, embedder_loaded: None) -> Iterator[MemoryService]:
    service = MemoryService(root, clock=lambda: NOW)
    yield service
    service.close()


@pytest.fixture
def journal(root: RootLayout) -> Iterator[Journal]:
    j = Journal(root.journal_file)
    yield j
    j.close()


def _cluster(svc: MemoryService) -> tuple[str, str]:
    a = svc.add("Prefiero respuestas cortas y en español.", tags=["estilo"], importance=4)["id"]
    b = svc.add(
        "Prefiero respuestas breves y en español, sin rodeos.", tags=["tono"], importance=2
    )["id"]
    svc.add("El backup nocturno falla si el disco no está montado.")
    return a, b


def test_a_cluster_becomes_a_finding_with_a_plan_that_parses(svc: MemoryService) -> None:
    a, b = _cluster(svc)
    findings = memory_actions.merge_findings(svc)
    assert len(findings) == 1
    f = findings[0]
    assert f.kind == "memory_merge" and f.files == 0 and f.target == "memory"
    plan = plan_from_list([op.to_dict() for op in f.plan])
    assert plan == [MemoryMerge(keep=a, merge=(b,))]  # the more important one is kept
    assert f.title.startswith("Merge 2 nearly identical memories")
    with language("es"):  # as a Spanish person's daemon writes it
        assert memory_actions.merge_findings(svc)[0].title.startswith("Unir 2 recuerdos")
    assert memory_actions.merge_findings(svc)[0].fingerprint == f.fingerprint


def test_execute_then_undo_restores_every_memory_exactly(
    svc: MemoryService, journal: Journal
) -> None:
    a, b = _cluster(svc)
    before = (svc.show(a), svc.show(b))
    plan = memory_actions.merge_findings(svc)[0].plan
    action = memory_actions.execute(
        journal, svc, _stored(plan), kind="memory_merge", suggestion_id=None, auto=False
    )
    assert action["status"] == "done" and action["sandbox"] == "memory"
    assert svc.show(b)["archived"] and svc.show(b)["merged_into"] == a
    rows = journal.rows(action["id"])
    assert rows[0].state == "done" and rows[0].aux["record"]["keep"]["id"] == a
    undo = memory_actions.undo(journal, svc, action["id"])
    assert undo["status"] == "done" and undo["undoes"] == action["id"]
    assert journal.action(action["id"])["status"] == "undone"
    assert (svc.show(a), svc.show(b)) == before


def test_a_merge_runs_and_is_undone_through_the_one_registry_of_families(
    root: RootLayout, svc: MemoryService, journal: Journal
) -> None:
    gate = MemoryLoader()
    gate.set(svc)
    engine = InProcessEngine(root, journal, default_policy)
    families = Families(
        {SANDBOX: engine, MEMORY: MemoryFamily(engine, gate), BACKUP: Absent(BACKUP)}
    )
    a, b = _cluster(svc)
    before = (svc.show(a), svc.show(b))
    plan = _stored(memory_actions.merge_findings(svc)[0].plan)
    person = RunContext(approved_by_person=True)
    action = families.execute(plan, kind="memory_merge", ctx=person, suggestion_id=None)
    assert action["sandbox"] == MEMORY and svc.show(b)["archived"]
    undone = families.undo(engine.undo_target(action["id"]))
    assert undone["undoes"] == action["id"] and undone["sandbox"] == MEMORY
    assert (svc.show(a), svc.show(b)) == before
    without = Families({SANDBOX: engine, MEMORY: MemoryFamily(engine, None), BACKUP: engine})
    with pytest.raises(UnavailableError):
        without.execute(plan, kind="memory_merge", ctx=person, suggestion_id=None)


def test_a_merge_interrupted_after_its_intent_is_taken_back(
    svc: MemoryService, journal: Journal
) -> None:
    a, b = _cluster(svc)
    before = (svc.show(a), svc.show(b))
    plan = memory_actions.merge_findings(svc)[0].plan
    # The crash: the intent (the before-state) is durable, the merge ran, nothing after it.
    record = svc.merge_record(a, [b])
    aid = journal.create_action(
        kind="memory_merge", plan=[op.to_dict() for op in plan], sandbox="memory"
    )
    journal.write_intents(aid, [(0, plan[0].to_dict(), None, {"record": record})])
    svc.merge(a, [b])
    assert journal.running() == []  # the file executor's recovery leaves it alone
    assert memory_actions.recover(journal, svc) == [aid]
    assert journal.action(aid)["status"] == "rolled_back"
    assert (svc.show(a), svc.show(b)) == before
    assert memory_actions.recover(journal, svc) == []  # nothing left: safe to run again


def test_merging_memories_that_changed_or_vanished_is_a_conflict_with_nothing_done(
    svc: MemoryService, journal: Journal
) -> None:
    a, b = _cluster(svc)
    plan = [MemoryMerge(keep=a, merge=("no-such-memory",))]
    with pytest.raises(ConflictError, match="changed since"):
        memory_actions.execute(
            journal, svc, _stored(plan), kind="memory_merge", suggestion_id=None, auto=False
        )
    assert not svc.show(b)["archived"]
    assert journal.history() == []


def test_memory_ops_parse_strictly() -> None:
    op = op_from_dict({"op": "memory_merge", "keep": "a", "merge": ["b"]})
    assert op.write_paths() == () and op.to_dict()["merge"] == ["b"]
    for bad in ([], ["b", 3], "b"):
        with pytest.raises(BadArgumentError, match="merge must be a non-empty list"):
            op_from_dict({"op": "memory_merge", "keep": "a", "merge": bad})


def test_the_file_executor_refuses_a_memory_op(root: RootLayout, journal: Journal) -> None:
    aid = journal.create_action(kind="memory_merge", plan=[])
    with Tree(root.root) as tree:
        executor = Executor(tree, journal, aid, Zones.from_lists(["user"], []))
        with pytest.raises(RefusedError):
            executor.validate([MemoryMerge(keep="a", merge=("b",))])


def test_a_merge_stopped_by_any_error_is_taken_back_and_closed(
    svc: MemoryService, journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any error once the action started, not only an AlmaError, takes the merge back and
    closes the action as rolled back."""
    a, b = _cluster(svc)
    before = (svc.show(a), svc.show(b))
    plan = memory_actions.merge_findings(svc)[0].plan

    def full_disk(keep: str, merge: list[str]) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(svc, "merge", full_disk)
    with pytest.raises(AlmaError, match="disk is full"):
        memory_actions.execute(
            journal, svc, _stored(plan), kind="memory_merge", suggestion_id=None, auto=False
        )
    [action] = journal.history()
    assert action["status"] == "rolled_back"
    assert (svc.show(a), svc.show(b)) == before
