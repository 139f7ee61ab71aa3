"""A reason asking for a folder by date changes how that folder is organized: the next plan for
it groups its loose files by month, in the analysis and when a failed action is planned again;
another folder keeps the policy's grouping by type; forgetting the memory brings back by type.

The real detectors, store and policy over a real root; the reason's reading is given (reading
it is tests/unit/test_reasons.py's)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from actions.ops import Mkdir, Move
from agent.detectors.files import detect_files, plan_organize_folder
from agent.loop.autonomy import Autonomy, PolicyHolder
from agent.loop.lifecycle import Agent
from agent.memory import reasons as R
from agent.memory.loader import MemoryLoader
from agent.memory.reasons import Reading
from policies.defaults import DEFAULT_POLICY_TOML
from state.journal import Journal
from state.suggestions import SuggestionStore
from tests.support.engine import AlmaRoot, InProcessEngine

BY_DATE = "ponlo por meses, que así me aclaro"
MONTHS = ("2026-01", "2026-02", "2026-03")
_MONTH_DIR = re.compile(r"/\d{4}-\d{2}$")


class _Reader:
    """What the memory's reader makes of each reason (the target: the suggestion's folder)."""

    def read(self, reason: str, kind: str, target: str, folders: Any) -> Reading:
        intent = R.GROUP_BY_DATE if reason == BY_DATE else R.NONE
        return Reading(intent, target, 0.9)


class _Memory:
    """The memory service's part the analysis and a rejection use: decisions kept as added."""

    def __init__(self) -> None:
        self.memories: list[dict[str, Any]] = []

    def list(self, *, limit: int = 20, memory_type: str | None = None, **_: Any) -> list[Any]:
        return [m for m in self.memories if m["memory_type"] == memory_type][:limit]

    def merge_candidates(self, *, wait: bool = True) -> list[list[str]] | None:
        return []

    def start_merge_scan(self) -> None:
        return None

    def reason_reader(self) -> _Reader:
        return _Reader()

    def add(self, text: str, *, memory_type: str, **_: Any) -> dict[str, Any]:
        mid = f"d{len(self.memories) + 1}"
        self.memories.append({"id": mid, "content": text, "memory_type": memory_type})
        return {"id": mid}

    def forget(self, mid: str) -> None:
        self.memories = [m for m in self.memories if m["id"] != mid]


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.alma = AlmaRoot(tmp_path).build()
        policy = re.sub(r"settle_seconds = \d+", "settle_seconds = 0", DEFAULT_POLICY_TOML)
        policy = policy.replace("allow_unconfined = false", "allow_unconfined = true")
        self.alma.layout.policy_file.write_text(policy, encoding="utf-8")
        self.memory = _Memory()
        self.holder = PolicyHolder(self.alma.layout)
        self.store = SuggestionStore(self.alma.layout.db_file)
        engine = InProcessEngine(
            self.alma.layout, Journal(self.alma.layout.journal_file), self.holder
        )
        gate = MemoryLoader()
        gate.set(self.memory)  # type: ignore[arg-type]  # a fake with what the loop calls
        root = self.alma.root

        def detect(now: float) -> list[Any]:
            return detect_files(root, self.holder(), now)

        self.agent = Agent(
            self.alma.layout,
            self.holder,
            self.store,
            engine,
            Autonomy(self.store, self.holder),
            detect,
            memory=gate,
        )

    def file(self, rel: str, month: str) -> None:
        path = self.alma.write(rel, rel.encode())
        when = datetime.strptime(f"{month}-15 12:00", "%Y-%m-%d %H:%M").timestamp()
        os.utime(path, (when, when))

    def messy(self, folder: str) -> None:
        """18 loose files of three types and three months."""
        for i in range(18):
            ext = ("pdf", "jpg", "txt")[i % 3]
            self.file(f"{folder}/f{i:02d}.{ext}", MONTHS[(i // 3) % 3])

    def pending(self, folder: str) -> int:
        (sid,) = [
            s["id"]
            for s in self.store.list(status="pending")
            if s["kind"] == "organize" and s["target"] == folder
        ]
        return int(sid)

    def mkdirs(self, sid: int) -> list[str]:
        return [op.path for op in self.store.plan(sid).ops if isinstance(op, Mkdir)]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.store.close()


def _by_month(mkdirs: list[str]) -> bool:
    return bool(mkdirs) and all(_MONTH_DIR.search(path) for path in mkdirs)


def test_a_reason_asking_for_dates_groups_that_folder_by_month_and_another_keeps_types(
    world: World,
) -> None:
    world.messy("user/Descargas")
    world.messy("user/Otros")
    world.agent.analyze(trigger="person")
    first = world.pending("user/Descargas")
    assert world.mkdirs(first) and not _by_month(world.mkdirs(first)), "by type at first"

    world.agent.reject(first, BY_DATE)
    world.file("user/Descargas/nuevo.pdf", MONTHS[1])
    world.file("user/Otros/nuevo.pdf", MONTHS[1])
    world.agent.analyze(trigger="person")
    again = world.pending("user/Descargas")
    assert sorted(world.mkdirs(again)) == [f"user/Descargas/{m}" for m in MONTHS]
    moves = [op for op in world.store.plan(again).ops if isinstance(op, Move)]
    assert len(moves) == 19 and world.store.row(again)["files"] == 19
    assert all(op.dst.split("/")[2] in MONTHS for op in moves)
    shown = world.store.get(again)
    assert any("d1" in line and "month" in line for line in shown["evidence"]), shown
    assert "month" in shown["title"]
    other = world.pending("user/Otros")
    assert world.mkdirs(other) and not _by_month(world.mkdirs(other)), "Otros keeps types"

    # A failed action planned again keeps the grouping asked for.
    plan = world.agent.analyst.plan_again(world.store.row(again)["fingerprint"])
    assert plan is not None
    assert sorted(op.path for op in plan if isinstance(op, Mkdir)) == sorted(world.mkdirs(again))

    # Forgetting the memory: the next plan for the folder is by type again.
    world.memory.forget("d1")
    world.file("user/Descargas/otro.pdf", MONTHS[2])
    world.agent.analyze(trigger="person")
    back = world.pending("user/Descargas")
    assert world.mkdirs(back) and not _by_month(world.mkdirs(back))


def test_by_date_when_every_file_is_of_one_month_proposes_nothing_and_says_why(
    world: World,
) -> None:
    for i in range(18):
        world.file(f"user/Descargas/f{i:02d}.{('pdf', 'jpg', 'txt')[i % 3]}", MONTHS[0])
    world.agent.analyze(trigger="person")
    world.agent.reject(world.pending("user/Descargas"), BY_DATE)
    world.file("user/Descargas/nuevo.pdf", MONTHS[0])
    done = world.agent.analysis(trigger="person")
    assert [s for s in world.store.list(status="pending") if s["kind"] == "organize"] == []
    (skip,) = [s for s in done["skipped"] if s["target"] == "user/Descargas"]
    assert skip["by"] == ["d1"] and "month" in skip["why"]


def test_plan_organize_folder_plans_one_folder_as_the_detector_would(world: World) -> None:
    world.messy("user/Descargas")
    policy = world.holder()
    now = datetime.now().timestamp()
    (detected,) = [f for f in detect_files(world.alma.root, policy, now) if f.kind == "organize"]
    assert plan_organize_folder(world.alma.root, "user/Descargas", policy, "type", now=now) == (
        detected
    )
    by_month = plan_organize_folder(world.alma.root, "user/Descargas", policy, "month", now=now)
    assert by_month is not None and by_month.fingerprint != detected.fingerprint
    assert plan_organize_folder(world.alma.root, "user/nada", policy, "month", now=now) is None


def test_a_failed_action_is_planned_again_without_a_memory_store_that_failed_to_load(
    world: World,
) -> None:
    gate = MemoryLoader()
    gate.fail("the store is broken")
    world.agent.analyst.memory = gate
    world.messy("user/Descargas")
    world.agent.analyze(trigger="person")
    sid = world.pending("user/Descargas")
    plan = world.agent.analyst.plan_again(world.store.row(sid)["fingerprint"])
    assert plan is not None
    assert sorted(op.path for op in plan if isinstance(op, Mkdir)) == sorted(world.mkdirs(sid))
