"""A rollback that copied a file back across filesystems records the copy (Journal.record_copy):
the undo of the action that left the original expects the copy instead. Inode numbers are
handed out again once freed (ext4 does at once), and a copy keeps size and mtime, so a later
file of the same bytes can carry the very key of an old record: it must not be taken for that
old file. This flaked test_cross_fs's killed-anywhere undo test (an undo refused with
"'.alma/trash/49/4/viejo.tmp' changed since the plan was made"): the copy back got an inode
number an earlier round's record had as its old file, and the chain was followed to that
round's copy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actions.ops import Identity, Trash
from state import journal as journal_module
from state.journal import MIGRATIONS, Journal

SHA = "a4" * 32


def ident(ino: int, ctime_ns: int) -> Identity:
    """The one file's bytes (same size, same mtime) under inode ``ino``."""
    return Identity(
        dev=1792, ino=ino, kind="file", size=10, mtime_ns=5_000, sha256=SHA, boot="b",
        ctime_ns=ctime_ns,
    )  # fmt: skip


def trashed(
    journal: Journal, ino: int, ctime_ns: int, *, plan_in_row: bool = False
) -> tuple[int, dict[str, Any]]:
    """A done action that left the file as inode ``ino`` in its trash; (its id, its post).
    ``plan_in_row``: its plan stored as a journal before version 5 stored it."""
    plan = [Trash("user/viejo.tmp", ident(100, 1)).to_dict()]
    if plan_in_row:
        action = journal.conn.execute(
            "INSERT INTO actions(kind, status, plan, ops, started_at) "
            "VALUES ('organize', 'running', ?, 1, '2026-11-01T00:00:00+00:00')",
            (json.dumps(plan),),
        ).lastrowid
        assert action is not None
    else:
        action = journal.create_action(kind="organize", plan=plan)
    dst = f".alma/trash/{action}/0/viejo.tmp"
    aux = {"src": "user/viejo.tmp", "dst": dst, "xdev": True, "tmp": "t", "src_trash": None}
    journal.write_intents(action, [(0, None, None, aux)])
    post = ident(ino, ctime_ns).to_dict()
    journal.mark_done(action, [(0, post)])
    journal.finish(action, "done")
    return action, post


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    j = Journal(tmp_path / "journal.db")
    try:
        yield j
    finally:
        j.close()


def expected_post(journal: Journal, action: int) -> dict[str, Any] | None:
    [(_op, post, _aux)] = journal.done_rows(action)
    return post


def test_a_copy_stands_for_the_file_it_replaced(journal: Journal) -> None:
    action, _post = trashed(journal, 709, 10)
    copy = ident(681, 20)
    journal.record_copy(ident(709, 10), copy)  # a rollback copied it back
    assert expected_post(journal, action) == copy.to_dict()
    again = ident(690, 30)
    journal.record_copy(copy, again)  # and the next one again
    assert expected_post(journal, action) == again.to_dict()


def test_a_copy_recorded_before_a_file_existed_never_stands_for_it(journal: Journal) -> None:
    _old, _post = trashed(journal, 709, 10)
    journal.record_copy(ident(709, 10), ident(681, 20))  # inode 709 freed
    action, post = trashed(journal, 709, 40)  # a later file gets inode 709 again
    assert expected_post(journal, action) == post


def test_a_chain_of_copies_never_goes_back_to_an_older_record(journal: Journal) -> None:
    _old, _post = trashed(journal, 681, 10)
    journal.record_copy(ident(681, 10), ident(624, 20))  # an earlier round; 681 freed
    action, _post = trashed(journal, 709, 30)
    copy = ident(681, 40)  # its copy back reuses inode 681
    journal.record_copy(ident(709, 30), copy)
    assert expected_post(journal, action) == copy.to_dict()


def test_copies_recorded_by_an_older_alma_keep_standing_for_the_actions_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.db"
    monkeypatch.setattr(journal_module, "MIGRATIONS", MIGRATIONS[:3])  # before copies had order
    journal = Journal(path)
    try:
        action, _post = trashed(journal, 709, 10, plan_in_row=True)
        copy = ident(681, 20)
        journal.conn.execute(
            "INSERT INTO journal_copies(old, new) VALUES (?, ?)",
            ("1792:709:10:5000", json.dumps(copy.to_dict())),
        )
    finally:
        journal.close()
    monkeypatch.setattr(journal_module, "MIGRATIONS", MIGRATIONS)
    journal = Journal(path)  # migrated to the current version
    try:
        assert expected_post(journal, action) == copy.to_dict()
        later, post = trashed(journal, 709, 40)
        assert expected_post(journal, later) == post
    finally:
        journal.close()
