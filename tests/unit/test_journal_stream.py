"""A walk over an action's journal rows (recovery, undo, a failed action's report) holds one
batch of rows at a time, never the whole action (a recovery that read every row of a large
action at once would hold them all). Counted in rows alive, not in time or bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from actions.inverse import inverse_plan
from actions.ops import Move, Op, Trash
from actions.tree import Tree
from policies.layout import RootLayout
from sandbox import executor, recovery, runner
from sandbox.executor import Zones
from state import journal as journal_module
from state.journal import Journal, JournalRow
from tests.unit.test_crash import Witness, make_root, new_action, organize_plan

BATCH = 16
N_FILES = 300


class Killed(BaseException):
    """SIGKILL in-process: no handler of the engine catches it, nothing is taken back."""


class Alive:
    """How many JournalRow objects exist at once (CPython frees them when the last reference
    goes), and the most there ever were."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0


@pytest.fixture
def alive(monkeypatch: pytest.MonkeyPatch) -> Alive:
    counter = Alive()

    class Counted(JournalRow):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            counter.now += 1
            counter.peak = max(counter.peak, counter.now)

        def __del__(self) -> None:
            counter.now -= 1

    monkeypatch.setattr(journal_module, "JournalRow", Counted)
    monkeypatch.setattr(journal_module, "ROW_BATCH", BATCH)
    return counter


def plan_with_trash(root: Path) -> list[Op]:
    """The organize plan with every 10th move a trash instead: rows of their own in the
    journal (the trash entry's place), beside rows that are only the plan's op."""
    plan = organize_plan(root)
    return [
        Trash(op.src, op.expect) if i % 10 == 9 and isinstance(op, Move) else op
        for i, op in enumerate(plan)
    ]


def start_killed(root: Path, journal: Journal, plan: list[Op], at: str) -> int:
    action = new_action(root, plan)

    def kill(label: str) -> None:
        if label == at:
            raise Killed

    with pytest.raises(Killed):
        runner.execute(root, journal, action, Zones.from_lists(["user"], []), kill)
    return action


def test_recovery_holds_one_batch_of_rows_not_the_action(tmp_path: Path, alive: Alive) -> None:
    root, outside = make_root(tmp_path, n_files=N_FILES)
    witness = Witness(root, outside)
    journal = Journal(RootLayout(root).journal_file)
    try:
        plan = plan_with_trash(root)
        action = start_killed(root, journal, plan, "op250")
        # A recovery killed midway first: the next one walks rows already rolled back too.
        with Tree(root) as tree, pytest.raises(Killed):
            recovery.rollback(tree, journal, action, lambda label: _die_at(label, "rollback120"))
        seen: list[int] = []

        def watch(label: str) -> None:
            if label.removeprefix("rollback").isdigit():  # before an op is taken back
                seen.append(alive.now)

        alive.peak = 0
        with Tree(root) as tree:
            recovery.rollback(tree, journal, action, watch)
        journal.finish(action, "rolled_back")
    finally:
        journal.close()
    witness.check_restored("after the recovery")
    assert len(seen) == 121  # ops 120 down to 0: the rest were rolled back before
    assert len(plan) > 10 * BATCH
    # Never the action's 305 rows; not even one batch of them.
    assert alive.peak <= BATCH, f"{alive.peak} rows alive at once, batches of {BATCH}"


def _die_at(label: str, at: str) -> None:
    if label == at:
        raise Killed


def test_undo_and_the_report_of_a_failed_action_walk_one_batch_at_a_time(
    tmp_path: Path, alive: Alive
) -> None:
    root, _outside = make_root(tmp_path / "done", n_files=N_FILES)
    journal = Journal(RootLayout(root).journal_file)
    try:
        plan = plan_with_trash(root)
        done = new_action(root, plan)
        runner.execute(root, journal, done, Zones.from_lists(["user"], []), lambda label: None)
        inverse = inverse_plan(journal.iter_done_rows(done))
        assert len(inverse) == len(plan)
        assert 0 < alive.peak <= BATCH, f"undo: {alive.peak} rows alive at once"
    finally:
        journal.close()

    alive.peak = 0
    root, _outside = make_root(tmp_path / "failed", n_files=N_FILES)
    journal = Journal(RootLayout(root).journal_file)
    try:
        killed = start_killed(root, journal, plan_with_trash(root), "op200")
        said = runner.unfinished(journal, killed, "a test", None)
        assert "up to 300 files" in said, said  # every transfer, none rolled back yet
        assert 0 < alive.peak <= BATCH, f"report: {alive.peak} rows alive at once"
    finally:
        journal.close()


def test_rows_read_in_batches_are_the_rows_read_whole(
    tmp_path: Path, alive: Alive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches cut anywhere (a group commit of done marks spans several) give the same rows,
    in order and newest first, as one read of everything (a batch of the whole action)."""
    monkeypatch.setattr(executor, "BATCH_OPS", 7)  # group commits that straddle the batches
    root, _outside = make_root(tmp_path, n_files=N_FILES)
    journal = Journal(RootLayout(root).journal_file)
    try:
        action = start_killed(root, journal, plan_with_trash(root), "op250")
        with Tree(root) as tree, pytest.raises(Killed):
            recovery.rollback(tree, journal, action, lambda label: _die_at(label, "rollback200"))
        batched = [_fields(r) for r in journal.iter_rows(action)]
        newest_first = [_fields(r) for r in journal.iter_rows(action, newest_first=True)]
        monkeypatch.setattr(journal_module, "ROW_BATCH", 1 << 20)
        whole = [_fields(r) for r in journal.iter_rows(action)]
    finally:
        journal.close()
    assert batched == whole
    assert newest_first == whole[::-1]
    # Ops 0..200 done (their posts from group commits of 7), 201..304 rolled back by the
    # recovery killed at op 200 (newest first: the ops never started were marked too).
    assert [f[2] for f in whole] == ["done"] * 201 + ["rolled_back"] * 104
    assert all(f[4] is not None for f in whole[:201])


def _fields(row: JournalRow) -> tuple[Any, ...]:
    return (row.idx, row.op, row.state, row.pre, row.post, row.aux)


def test_done_marks_given_out_of_order_are_read_back_exactly(tmp_path: Path, alive: Alive) -> None:
    """A group commit's pairs are stored ascending (a batch reads a row's span from its first
    and last pair); given out of order, or one op twice, each op still reads its last post."""
    journal = Journal(tmp_path / "journal.db")
    try:
        n = 5 * BATCH
        action = journal.create_action(kind="x", plan=[{"op": "keep", "path": "user/a"}] * n)
        journal.write_intents(action, ((i, None, None, None) for i in range(n)))
        journal.mark_done(action, [(i, {"n": i}) for i in reversed(range(BATCH, n - 3))])
        journal.mark_done(action, [(n - 1, None), (3, {"n": -1}), (3, {"n": 3}), (0, None)])
        rows = list(journal.iter_rows(action))
    finally:
        journal.close()
    done = {r.idx: r.post for r in rows if r.state == "done"}
    assert done == {0: None, 3: {"n": 3}, n - 1: None, **{i: {"n": i} for i in range(BATCH, n - 3)}}
