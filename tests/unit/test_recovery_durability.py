"""Recovery's marks never outlive its renames: a rolled-back op is never examined again, so the
folders it renamed in are fsynced before its mark is committed, in batches, not per file.

The SIGKILL tests cannot see this (a killed process loses nothing of the page cache; a power cut
does), so the order of the calls themselves is checked here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actions.safefs import rename_noreplace as real_rename
from actions.tree import Tree
from policies.layout import RootLayout
from sandbox import recovery, runner, transfer
from sandbox.executor import Zones
from state.journal import Journal
from tests.unit.test_crash import Witness, make_root, new_action, organize_plan


class Killed(BaseException):
    """SIGKILL in-process: no handler of the engine catches it, nothing is taken back."""


def test_recovery_fsyncs_the_folders_it_renamed_in_before_it_marks_their_ops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = make_root(tmp_path, n_files=600)  # more ops than one batch of marks
    witness = Witness(root, outside)
    plan = organize_plan(root)
    action = new_action(root, plan)
    journal = Journal(RootLayout(root).journal_file)

    def kill(label: str) -> None:
        if label == "op500":
            raise Killed

    with pytest.raises(Killed):
        runner.execute(root, journal, action, Zones.from_lists(["user"], []), kill)

    events: list[tuple[str, object]] = []
    real_fsync, real_mark = os.fsync, journal.mark_rolled_back

    def rename(sdir: int, sname: str, ddir: int, dname: str) -> None:
        real_rename(sdir, sname, ddir, dname)
        events.append(("rename", {os.fstat(sdir).st_ino, os.fstat(ddir).st_ino}))

    def fsync(fd: int) -> None:
        real_fsync(fd)
        events.append(("fsync", os.fstat(fd).st_ino))

    def mark(action_id: int, idx: int) -> None:
        events.append(("mark", idx))
        real_mark(action_id, idx)

    monkeypatch.setattr(transfer, "rename_noreplace", rename)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(journal, "mark_rolled_back", mark)
    with Tree(root) as tree:
        recovery.rollback(tree, journal, action)
    monkeypatch.undo()
    journal.close()

    dirty: set[object] = set()
    counts = {"rename": 0, "fsync": 0, "mark": 0}
    for kind, value in events:
        counts[kind] += 1
        if kind == "rename":
            assert isinstance(value, set)
            dirty |= value
        elif kind == "fsync":
            dirty.discard(value)
        else:
            assert not dirty, f"op {value} marked rolled back before its folders were fsynced"
    assert counts["rename"] == 500 - 5  # the files moved before the kill (5 ops were mkdirs)
    assert counts["mark"] == len(plan)
    assert counts["fsync"] < counts["rename"] / 10, counts  # per batch, not per file
    witness.check_restored("rolled back")
