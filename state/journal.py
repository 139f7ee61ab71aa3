"""The action journal: actions and, per op, the intent made durable before any change.

Lives in ``.alma/journal/journal.db``, the one part of ``.alma/`` the confined executor may
write. The daemon creates an action row; the executor writes every op's intent in one durable
transaction, applies the ops, and records them done in batches (group commit). Recovery reads
what is left without ``done``.

One module, longer than most, because it is the only code that knows the journal's schema, its
migrations and its durability rules (the WAL, group commit, the folds after an action).
"""

from __future__ import annotations

import bisect
import itertools
import json
import logging
import os
import sqlite3
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

from actions.ops import (
    Identity,
    IdentityDict,
    Op,
    StoredPlan,
    decode_json_at,
    dumps_compact,
    encode_plan,
    iter_json_array,
    iter_json_array_at,
    plan_from_json,
)
from policies import limits as L
from policies.errors import NotFoundError
from policies.i18n import _
from policies.kinds import IN_DAEMON, RECORD_KINDS, SANDBOX
from policies.modes import PRIVATE_DIR
from policies.results import Action as Action  # the contract's action (§3), the one type of it
from policies.text import clip
from state.db import checkpoint, connect, migrate, utcnow

if TYPE_CHECKING:
    from policies.kinds import Family
    from policies.states import ActionStatus

#: An op's state in the journal: its intent written, done, or taken back.
RowState = Literal["intent", "done", "rolled_back"]


class Aux(TypedDict, total=False):
    """What the journal keeps of an op besides the plan (its row's ``aux``), by the op: a
    transfer's ends and what it kept aside (sandbox.transfer.Intent), an edit's or a create's
    temp and trash entry, a memory merge's before-state, a restore's files."""

    src: str
    dst: str
    xdev: bool
    tmp: str | None
    src_trash: str | None
    trash: str
    record: dict[str, Any]
    files: list[list[object]]
    #: A memory edit's two states (agent.memory.merge_actions.edit), swapped in its undo.
    before: dict[str, Any]
    after: dict[str, Any]


#: A done op's ``post`` as the executor hands it (Journal.mark_done): an identity, or only the
#: new ctime of a rename on one disk, or nothing.
Post = IdentityDict | int | None


MIGRATIONS = (
    """
    CREATE TABLE actions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        suggestion_id INTEGER,
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','done','failed','rolled_back','undone')),
        auto INTEGER NOT NULL DEFAULT 0,
        undoes INTEGER REFERENCES actions(id),
        undone_by INTEGER REFERENCES actions(id),
        plan TEXT NOT NULL,
        ops INTEGER NOT NULL,
        sandbox TEXT NOT NULL DEFAULT '',
        started_at TEXT NOT NULL,
        finished_at TEXT,
        error TEXT,
        error_code INTEGER
    );
    CREATE TABLE journal (
        action_id INTEGER NOT NULL REFERENCES actions(id),
        idx INTEGER NOT NULL,
        op TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('intent','done','rolled_back')),
        pre TEXT,
        post TEXT,
        aux TEXT,
        PRIMARY KEY (action_id, idx)
    ) WITHOUT ROWID;
    CREATE INDEX actions_status ON actions(status)
    """,
    # 2: the journal stops repeating what the action's plan (stored once, in its actions row)
    # already says. journal_intents marks that the intents of ops 0..ops-1 are written; a
    # journal row exists only for an op with something of its own (see rows()): its op NULL is
    # the plan's op, pre NULL a transfer's expected identity, aux NULL what _aux_of derives.
    # Ops done are one journal_done row per group commit, a JSON list of [idx, post] pairs,
    # instead of an UPDATE of each op's row. Writing the ops again, row by row, and rewriting
    # every row to mark it done would be a large share of a big action.
    """
    CREATE TABLE journal_v2 (
        action_id INTEGER NOT NULL REFERENCES actions(id),
        idx INTEGER NOT NULL,
        op TEXT,
        state TEXT NOT NULL CHECK (state IN ('intent','done','rolled_back')),
        pre TEXT,
        post TEXT,
        aux TEXT,
        PRIMARY KEY (action_id, idx)
    ) WITHOUT ROWID;
    INSERT INTO journal_v2(action_id, idx, op, state, pre, post, aux)
        SELECT action_id, idx, op, state, pre, post, aux FROM journal;
    DROP TABLE journal;
    ALTER TABLE journal_v2 RENAME TO journal;
    CREATE TABLE journal_done (
        action_id INTEGER NOT NULL REFERENCES actions(id),
        posts TEXT NOT NULL
    );
    CREATE INDEX journal_done_action ON journal_done(action_id);
    CREATE TABLE journal_intents (
        action_id INTEGER PRIMARY KEY REFERENCES actions(id),
        ops INTEGER NOT NULL
    )
    """,
    # 3: a rollback that copied a file back across filesystems left the same bytes under a new
    # inode; the action that left the original expects this copy instead (see done_rows).
    # And the day `trash empty` removed an action's trash for good: it can no longer be undone.
    """
    CREATE TABLE journal_copies (
        old TEXT PRIMARY KEY,
        new TEXT NOT NULL
    );
    ALTER TABLE actions ADD COLUMN trash_emptied_at TEXT
    """,
    # 4: a copy stands only for a file that existed when it was recorded. Inode numbers are
    # handed out again once freed and a copy keeps size and mtime, so a later file of the same
    # bytes had the key of an old record, and its undo expected that old copy and refused.
    # ``seq`` orders the records (a chain only goes forward); ``newest_action`` is the newest
    # action then: a record applies to the files of actions up to it. Records of an older ALMA
    # keep standing for the actions that existed then.
    """
    CREATE TABLE journal_copies_v4 (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        old TEXT NOT NULL,
        new TEXT NOT NULL,
        newest_action INTEGER NOT NULL
    );
    INSERT INTO journal_copies_v4(old, new, newest_action)
        SELECT old, new, (SELECT coalesce(max(id), 0) FROM actions) FROM journal_copies
        ORDER BY rowid;
    DROP TABLE journal_copies;
    ALTER TABLE journal_copies_v4 RENAME TO journal_copies;
    CREATE INDEX journal_copies_newest ON journal_copies(newest_action)
    """,
    # 5: a plan lives beside its action's row. SQLite rewrites a whole row on every UPDATE, so
    # each status change would rewrite the plan (twice at an undo's finish), and every read of
    # the row would read it too. ``actions.plan`` stays, always '' (dropping a
    # column needs SQLite 3.35).
    """
    CREATE TABLE action_plans (
        action_id INTEGER PRIMARY KEY REFERENCES actions(id),
        plan TEXT NOT NULL
    );
    INSERT INTO action_plans(action_id, plan) SELECT id, plan FROM actions;
    UPDATE actions SET plan = ''
    """,
)
#: Ops that move one file; the others (mkdir, rmdir, keep, memory ops) have no pre or aux,
#: except an edit or a create (its aux is always stored: where its temp file and the trash
#: entry go).
TRANSFERS = frozenset({"move", "trash", "restore"})
#: Ops whose NULL pre is the op's ``expect``.
_EXPECTING = TRANSFERS | {"edit"}
#: A transfer whose aux is NULL in the journal: same disk, nothing kept aside (see _aux_of).
PLAIN_TRANSFER: Aux = {"xdev": False, "tmp": None, "src_trash": None}
#: The transfers whose plain aux the journal derives from the op alone (see _aux_of): the
#: executor leaves it NULL (sandbox.ops).
DERIVES_AUX = frozenset({"move", "restore"})
#: Ops whose stored rows and done posts Journal.iter_rows reads at a time (never the action's).
ROW_BATCH = 1024


#: Built once per op walked (every op of an undo's inverse or a recovery): slots and no
#: ``frozen``, whose __init__ sets each field through object.__setattr__, several times slower.
#: Nothing assigns to a row's fields; its dicts are not immutable anyway.
@dataclass(slots=True)
class JournalRow:
    idx: int
    op: dict[str, Any]  # the op as the plan stores it: actions.ops.op_from_dict reads it
    state: RowState
    pre: IdentityDict | None
    post: IdentityDict | None
    aux: Aux


def _copy_key(ident: IdentityDict) -> str:
    """What tells one file from another across a copy's life: not ctime, which our renames move."""
    return f"{ident.get('dev')}:{ident.get('ino')}:{ident.get('size')}:{ident.get('mtime_ns')}"


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _aux_of(op: dict[str, Any], text: str | None) -> Aux:
    """A row's aux: as stored, or for NULL what it stands for. A move or a restore on one disk
    goes from its source to its destination and keeps nothing aside; other ops have none."""
    if text is not None:
        aux: Aux = json.loads(text)
        return aux
    # The op's paths as stored: a damaged one is refused where the op is parsed (op_from_dict).
    name = op.get("op")
    if name == "move":
        return cast("Aux", {"src": op.get("src"), "dst": op.get("dst"), **PLAIN_TRANSFER})
    if name == "restore":
        return cast("Aux", {"src": op.get("trash"), "dst": op.get("path"), **PLAIN_TRANSFER})
    return {}


def _pre_of(op: dict[str, Any], text: str | None) -> Any:
    """A row's pre: as stored, or for NULL a transfer's ``expect`` (the executor leaves it out
    when the identity it validated is exactly that); other ops have none."""
    if text is not None:
        return json.loads(text)
    return op.get("expect") if op.get("op") in _EXPECTING else None


def compact_aux(op: dict[str, Any], aux: Aux) -> Aux | None:
    """None when ``aux`` is exactly what a NULL aux stands for (see :func:`_aux_of`)."""
    return None if aux == _aux_of(op, None) else aux


_dumps = dumps_compact


log = logging.getLogger("alma.journal")

#: Past this size the daemon folds the WAL into the database after an action (checkpoint_later).
WAL_FOLD_BYTES = 4 * 2**20
#: Past this many pages the commit that crosses it folds the WAL itself and waits: the
#: backstop for a journal written with no daemon to fold it (the child, tools, a daemon that
#: died). Far above what the largest accept and undo write before the daemon folds it, so it
#: never fires inside an action; the next write cuts the WAL back (journal_size_limit).
WAL_BACKSTOP_PAGES = 65536


class Journal:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        self.path = path
        self.conn = connect(path, durable=True, autocheckpoint_pages=WAL_BACKSTOP_PAGES)
        migrate(self.conn, MIGRATIONS, name="journal")
        self._fold_lock = threading.Lock()
        self._folder: threading.Thread | None = None
        self._folding = False  # a fold is under way (or about to start)
        self._fold_again = False  # asked for while one was under way

    def close(self) -> None:
        self.wait_checkpoint()
        self.conn.close()

    # -- the WAL --------------------------------------------------------------------------
    def checkpoint_later(self) -> None:
        """Fold the WAL into the database on a thread of its own, when it has grown past
        WAL_FOLD_BYTES. The engine asks after each action: with SQLite's default the commit
        that crosses its limit (an accept's done marks, an undo's finish) would fold megabytes
        of plan while the person waits. Durability is the WAL's either way (synchronous=FULL)."""
        try:
            if os.stat(f"{self.path}-wal").st_size <= WAL_FOLD_BYTES:
                return
        except FileNotFoundError:
            return
        with self._fold_lock:
            if self._folding:
                self._fold_again = True
                return
            self._folding = True
            self._folder = threading.Thread(target=self._fold, name="journal-fold", daemon=True)
            self._folder.start()

    def wait_checkpoint(self) -> None:
        """Return once no fold is under way."""
        folder = self._folder
        if folder is not None:
            folder.join()

    def _fold(self) -> None:
        while True:
            try:
                checkpoint(self.path)
            except (sqlite3.Error, OSError):
                log.warning(
                    "the journal's WAL checkpoint failed; SQLite folds it itself past %d pages",
                    WAL_BACKSTOP_PAGES,
                    exc_info=True,
                )
            with self._fold_lock:
                if not self._fold_again:
                    self._folding = False
                    return
                self._fold_again = False

    # -- actions -------------------------------------------------------------------------
    def create_action(
        self,
        *,
        kind: str,
        plan: StoredPlan | Iterable[Mapping[str, Any] | Op],
        suggestion_id: int | None = None,
        auto: bool = False,
        undoes: int | None = None,
        sandbox: str = "",
    ) -> int:
        """Record a running action and its plan: a suggestion's stored plan is copied as its
        text; ops or their dicts (a generator too) are encoded (actions.ops.encode_plan)."""
        if isinstance(plan, StoredPlan):
            text, count = plan.text, len(plan.ops)
        else:
            text, count = encode_plan(plan)
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO actions(suggestion_id, kind, status, auto, undoes, plan, ops, "
                "sandbox, started_at) VALUES (?, ?, 'running', ?, ?, '', ?, ?, ?)",
                (suggestion_id, kind, int(auto), undoes, count, sandbox, utcnow()),
            )
            assert cur.lastrowid is not None
            self.conn.execute(
                "INSERT INTO action_plans(action_id, plan) VALUES (?, ?)", (cur.lastrowid, text)
            )
        return cur.lastrowid

    def action_row(self, action_id: int) -> sqlite3.Row:
        row: sqlite3.Row | None = self.conn.execute(
            "SELECT * FROM actions WHERE id = ?", (action_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(
                _("There is no action {id}; `alma-ctl history` lists them.", id=action_id)
            )
        return row

    def action(self, action_id: int) -> Action:
        return action_json(self.action_row(action_id))

    def undo_refusal(self, action_id: int) -> str | None:
        """Why action ``action_id`` cannot be undone, or None when it can: the one rule an undo
        (``Engine.undo_target``) and everything that offers one (the day's report) follow."""
        return undo_refusal(self.action_row(action_id))

    def plan_text(self, action_id: int) -> str:
        """The action's plan as stored: a JSON array, one op a line."""
        row = self.conn.execute(
            "SELECT plan FROM action_plans WHERE action_id = ?", (action_id,)
        ).fetchone()
        if row is None:
            self.action_row(action_id)  # NotFoundError when there is no such action
            raise ValueError(f"action {action_id} has no stored plan")
        return str(row[0])

    def iter_plan(self, action_id: int) -> Iterator[dict[str, Any]]:
        """The action's stored plan as dicts, decoded one at a time as they are asked for."""
        return iter_json_array(self.plan_text(action_id))

    def plan(self, action_id: int) -> list[dict[str, Any]]:
        """The action's stored plan as dicts, read as every stored plan is read
        (actions.ops.iter_json_array: ValueError, as json raises, when it is damaged)."""
        return list(self.iter_plan(action_id))

    def plan_ops(self, action_id: int) -> list[Op]:
        """The action's plan as ops, parsed strictly, op by op (actions.ops.plan_from_json)."""
        return plan_from_json(self.plan_text(action_id))

    def started_between(self, since: str, until: str) -> list[Action]:
        """Actions started in [since, until) (state.db.utc_stamp times), oldest first."""
        rows = self.conn.execute(
            "SELECT * FROM actions WHERE started_at >= ? AND started_at < ? ORDER BY id",
            (since, until),
        )
        return [action_json(r) for r in rows]

    def history(self, limit: int = 20) -> list[Action]:
        rows = self.conn.execute("SELECT * FROM actions ORDER BY id DESC LIMIT ?", (limit,))
        # ``undoable``: whoever offers an undo (the web panel's buttons) asks the one rule.
        return [{**action_json(r), "undoable": undo_refusal(r) is None} for r in rows]

    def done_of_kind(self, kind: str) -> list[int]:
        """The ids of the done actions of ``kind``, oldest first."""
        rows = self.conn.execute(
            "SELECT id FROM actions WHERE kind = ? AND status = 'done' ORDER BY id", (kind,)
        )
        return [int(r[0]) for r in rows]

    def for_suggestion(self, suggestion_id: int) -> list[Action]:
        rows = self.conn.execute(
            "SELECT * FROM actions WHERE suggestion_id = ? ORDER BY id", (suggestion_id,)
        )
        return [action_json(r) for r in rows]

    def paths_touched_after(self, action_id: int) -> set[str]:
        """Every path an op of a later action moved a file from or to."""
        paths: set[str] = set()
        later = self.conn.execute("SELECT id FROM actions WHERE id > ?", (action_id,)).fetchall()
        for (other,) in later:
            for row in self.iter_rows(int(other)):
                op, aux = row.op, row.aux
                for value in (
                    *(op.get(key) for key in ("path", "src", "dst", "trash")),
                    *(aux.get("src"), aux.get("dst"), aux.get("trash")),
                ):
                    if isinstance(value, str):
                        paths.add(value)
        return paths

    def running(self, *, sandbox: str | None = None) -> list[int]:
        """Actions left running, newest first. By default the file actions (the executor's to
        recover); ``sandbox="memory"``: the memory merges, recovered when the store loads;
        ``sandbox="backup"``: the restores, recovered by agent.backup.service at start."""
        if sandbox is None:
            rows = self.conn.execute(
                "SELECT id FROM actions WHERE status = 'running' "
                f"AND sandbox NOT IN {IN_DAEMON!r} ORDER BY id DESC"
            )
        else:
            rows = self.conn.execute(
                "SELECT id FROM actions WHERE status = 'running' AND sandbox = ? ORDER BY id DESC",
                (sandbox,),
            )
        return [int(r[0]) for r in rows]

    def newest_undoable(self) -> int | None:
        """The newest done action a bare undo reverts: one that does something forward (an
        action, or a redo: the undo of an undo does the action again), never an undo of one,
        never one whose trash was emptied for good, and never a record (RECORD_KINDS)."""
        undoes = dict(self.conn.execute("SELECT id, undoes FROM actions WHERE undoes IS NOT NULL"))
        rows = self.conn.execute(
            "SELECT id FROM actions WHERE status = 'done' AND trash_emptied_at IS NULL "
            f"AND kind NOT IN {tuple(sorted(RECORD_KINDS))!r} ORDER BY id DESC"
        )
        for (action_id,) in rows:
            depth, current = 0, undoes.get(action_id)
            while current is not None:
                depth, current = depth + 1, undoes.get(current)
            if depth % 2 == 0:
                return int(action_id)
        return None

    def mark_trash_emptied(self, action_id: int) -> None:
        self.conn.execute(
            "UPDATE actions SET trash_emptied_at = ? WHERE id = ?", (utcnow(), action_id)
        )

    def finish(
        self,
        action_id: int,
        status: ActionStatus,
        *,
        error: str | None = None,
        code: int | None = None,
    ) -> None:
        if error is not None:
            error = clip(error, L.ERROR_CHARS)
        self.conn.execute(
            "UPDATE actions SET status = ?, finished_at = ?, error = ?, error_code = ? WHERE id = ?",
            (status, utcnow(), error, code, action_id),
        )

    def mark_undone(self, action_id: int, by: int) -> None:
        self.conn.execute(
            "UPDATE actions SET status = 'undone', undone_by = ? WHERE id = ?", (by, action_id)
        )

    # -- the journal proper -----------------------------------------------------------------
    def write_intents(
        self,
        action_id: int,
        intents: Iterable[tuple[int, dict[str, Any] | None, IdentityDict | None, Aux | None]],
    ) -> None:
        """The intents of ops 0..n-1 of an action, in one durable transaction, before anything
        changes.

        Each is (idx, op, pre, aux); None stands for what the plan already says: ``op`` the
        plan's op at ``idx``, ``pre`` a transfer's ``expect``, ``aux`` what :func:`_aux_of`
        derives. Only ops with something of their own get a row; the rest is one marker."""
        rows = []
        count = 0
        for idx, op, pre, aux in intents:
            if idx != count:
                raise ValueError("intents are written for ops 0..n-1, in order")
            count += 1
            if op is not None or pre is not None or aux is not None:
                rows.append(
                    (
                        action_id,
                        idx,
                        None if op is None else _dumps(op),
                        None if pre is None else _dumps(pre),
                        None if aux is None else _dumps(aux),
                    )
                )
        with self.transaction():
            self.conn.execute(
                "INSERT INTO journal_intents(action_id, ops) VALUES (?, ?)", (action_id, count)
            )
            self.conn.executemany(
                "INSERT INTO journal(action_id, idx, op, state, pre, aux) "
                "VALUES (?, ?, ?, 'intent', ?, ?)",
                rows,
            )

    def mark_done(self, action_id: int, done: Iterable[tuple[int, Post]]) -> None:
        """Record ops done, each with the identity of what it left (``post``): one durable row
        for the whole batch (a group commit), never a rewrite of the intents' rows. Its pairs
        ascend by index (the executor's order already): its first and last are its span. A
        post that is an int is a ctime_ns: the op left its ``pre`` with only that changed."""
        pairs = sorted(([idx, post] for idx, post in done), key=_first)
        if not pairs:
            return
        with self.transaction():
            self.conn.execute(
                "INSERT INTO journal_done(action_id, posts) VALUES (?, ?)",
                (action_id, _dumps(pairs)),
            )

    def mark_rolled_back(self, action_id: int, idx: int) -> None:
        self.conn.execute(
            "INSERT INTO journal(action_id, idx, state) VALUES (?, ?, 'rolled_back') "
            "ON CONFLICT(action_id, idx) DO UPDATE SET state = 'rolled_back'",
            (action_id, idx),
        )

    def rows(self, action_id: int) -> list[JournalRow]:
        """Every op's row, in order, as a list: for small actions and tests; a walk over an
        action's ops (undo, recovery, a failed action's report) uses :meth:`iter_rows`."""
        return list(self.iter_rows(action_id))

    def started(self, action_id: int) -> bool:
        """Whether the action's intents (or any row of it) are written."""
        row = self.conn.execute(
            "SELECT 1 FROM journal_intents WHERE action_id = ? "
            "UNION ALL SELECT 1 FROM journal WHERE action_id = ? LIMIT 1",
            (action_id, action_id),
        ).fetchone()
        return row is not None

    def iter_rows(self, action_id: int, *, newest_first: bool = False) -> Iterator[JournalRow]:
        """Every op's row, in order (or ``newest_first``, as a rollback takes them back): what
        the journal stores of it, completed from the plan (see :meth:`write_intents`). ``state``
        is rolled_back, else done (journal_done or, in a journal of version 1, the row itself),
        else intent.

        The stored rows and done posts are read :data:`ROW_BATCH` ops at a time, the plan's ops
        one by one, and each row is built as it is asked for: a walk over 100,000 ops never
        holds every row, or every post, at once (a recovery that held them all peaked at 443
        MB). What stays for the whole walk is the plan's text and, newest first, where each of
        its ops starts."""
        marker = self.conn.execute(
            "SELECT ops FROM journal_intents WHERE action_id = ?", (action_id,)
        ).fetchone()
        if marker is not None:
            count = int(marker[0])
        else:  # no marker (a version-1 journal, a memory action): only the rows stored exist
            (top,) = self.conn.execute(
                "SELECT MAX(idx) FROM journal WHERE action_id = ?", (action_id,)
            ).fetchone()
            count = 0 if top is None else int(top) + 1
        done = _DonePosts(self.conn, action_id)
        plan = _PlanOps(lambda: self.plan_text(action_id), action_id)
        starts = range(0, count, ROW_BATCH)
        for lo in reversed(starts) if newest_first else starts:
            hi = min(lo + ROW_BATCH, count)
            stored = {
                int(r[0]): r
                for r in self.conn.execute(
                    "SELECT idx, op, state, pre, post, aux FROM journal "
                    "WHERE action_id = ? AND idx >= ? AND idx < ?",
                    (action_id, lo, hi),
                )
            }
            posts = done.between(lo, hi)
            # Each row is built as it is asked for and never kept here: a consumer that drops
            # it frees it at once.
            for idx in range(hi - 1, lo - 1, -1) if newest_first else range(lo, hi):
                r = stored.get(idx)
                if r is None and marker is None:
                    continue  # without a marker, only the rows stored exist
                text = r["op"] if r else None
                op: dict[str, Any] = plan.op(idx) if text is None else json.loads(text)
                state: RowState = r["state"] if r else "intent"  # the table CHECKs it
                post = _loads(r["post"]) if r else None
                pre = _pre_of(op, r["pre"] if r else None)
                if idx in posts:  # a rollback keeps the row's state, and the post stays readable
                    state = "done" if state == "intent" else state
                    post = posts[idx] if post is None else post
                    if type(post) is int:  # only the ctime changed (see mark_done)
                        if not isinstance(pre, dict):
                            raise ValueError(f"journal row {action_id}/{idx}: a ctime, no pre")
                        post = {**pre, "ctime_ns": post}
                yield JournalRow(
                    idx=idx,
                    op=op,
                    state=state,
                    pre=pre,
                    post=post,
                    aux=_aux_of(op, r["aux"] if r else None),
                )

    def done_rows(self, action_id: int) -> list[tuple[dict[str, Any], IdentityDict | None, Aux]]:
        """(op, post, aux) of the ops done, in order: what an undo inverts. A post whose file a
        rollback later copied back across filesystems is the copy's identity."""
        return list(self.iter_done_rows(action_id))

    def iter_done_rows(
        self, action_id: int
    ) -> Iterator[tuple[dict[str, Any], IdentityDict | None, Aux]]:
        """:meth:`done_rows`, one at a time (see :meth:`iter_rows`)."""
        copies: dict[str, list[tuple[int, str]]] = {}
        for seq, old, new in self.conn.execute(
            "SELECT seq, old, new FROM journal_copies WHERE newest_action >= ? ORDER BY seq",
            (action_id,),
        ):
            copies.setdefault(old, []).append((seq, new))
        for r in self.iter_rows(action_id):
            if r.state != "done":
                continue
            post = r.post
            after = 0
            while post is not None and copies:  # a chain, when copied back more than once
                # The first record after the copy in hand: an earlier one with its key was
                # about another file, whose inode number this copy was given again.
                hop = next((c for c in copies.get(_copy_key(post), ()) if c[0] > after), None)
                if hop is None:
                    break
                after, post = hop[0], json.loads(hop[1])
            yield r.op, post, r.aux

    def record_copy(self, old: Identity, new: Identity) -> None:
        """A rollback replaced the file ``old`` by its verified copy ``new`` (durable). It
        stands for ``old`` in the actions that exist now, never in a later one's files."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO journal_copies(old, new, newest_action) "
                "VALUES (?, ?, (SELECT coalesce(max(id), 0) FROM actions))",
                (_copy_key(old.to_dict()), _dumps(new.to_dict())),
            )

    def transaction(self) -> _Tx:
        return _Tx(self.conn)


class _PlanOps:
    """The ops of an action's stored plan, decoded as a walk over its rows asks for them: in
    order, streamed (each op decoded once, none kept); newest first or out of order, from where
    each op starts in the text (found by one pass)."""

    def __init__(self, text_of: Callable[[], str], action_id: int) -> None:
        self._text_of = text_of
        self._action_id = action_id
        self._text: str | None = None
        self._stream: Iterator[tuple[int, Any]] | None = None
        self._next = 0
        self._starts: array[int] | None = None

    def op(self, idx: int) -> dict[str, Any]:
        """The plan's op ``idx``; ValueError when the plan has none there."""
        if self._text is None:
            self._text = self._text_of()
        item: Any = None
        if self._starts is None and idx >= self._next:
            if self._stream is None:
                self._stream = iter_json_array_at(self._text)
            skipped = itertools.islice(self._stream, idx - self._next, None)
            _start, item = next(skipped, (0, None))
            self._next = idx + 1
        else:
            if self._starts is None:
                self._starts = array("q", (at for at, _item in iter_json_array_at(self._text)))
                self._stream = None
            if 0 <= idx < len(self._starts):
                item = decode_json_at(self._text, self._starts[idx])
        if not isinstance(item, dict):
            raise ValueError(f"journal row {self._action_id}/{idx} has no op in its plan")
        return item


class _DonePosts:
    """idx -> post of the ops recorded done, a range of ops at a time. Each journal_done row is
    one group commit's [idx, post] pairs, ascending (Journal.mark_done): SQLite reads each row's
    span from its first and last pair, and a range decodes only the rows that overlap it, once
    (a row is kept while the next, adjacent range still needs it)."""

    def __init__(self, conn: sqlite3.Connection, action_id: int) -> None:
        self.conn = conn
        self.spans = [
            (int(rowid), int(first), int(last))
            for rowid, first, last in conn.execute(
                "SELECT rowid, json_extract(posts, '$[0][0]'), json_extract(posts, '$[#-1][0]') "
                "FROM journal_done WHERE action_id = ? AND posts != '[]' ORDER BY rowid",
                (action_id,),
            )
        ]
        self.kept: dict[int, list[Any]] = {}

    def between(self, lo: int, hi: int) -> dict[int, Any]:
        posts: dict[int, Any] = {}
        kept: dict[int, list[Any]] = {}
        for rowid, first, last in self.spans:  # in rowid order: a later mark wins
            if first >= hi or last < lo:
                continue
            pairs = self.kept.get(rowid)
            if pairs is None:
                (text,) = self.conn.execute(
                    "SELECT posts FROM journal_done WHERE rowid = ?", (rowid,)
                ).fetchone()
                pairs = json.loads(text)
            kept[rowid] = pairs
            start = bisect.bisect_left(pairs, lo, key=_first)
            for idx, post in itertools.islice(pairs, start, None):
                if idx >= hi:
                    break
                posts[int(idx)] = post
        self.kept = kept
        return posts


def _first(pair: list[Any]) -> Any:
    return pair[0]


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def family_of(row: sqlite3.Row) -> Family:
    """The action family of an action's row (policies.kinds): its ``sandbox`` column names a
    family that runs in the daemon, or the confinement a ``sandbox`` action ran under."""
    sandbox = row["sandbox"]
    return cast("Family", sandbox) if sandbox in IN_DAEMON else SANDBOX


def undo_refusal(row: sqlite3.Row) -> str | None:
    """Why the action of ``row`` cannot be undone (a record, its trash emptied for good, not
    done), or None. A failed action is not undone but its rollback finished, by its id:
    ``Engine.undo_target`` says when."""
    target = row["id"]
    if row["kind"] in RECORD_KINDS:
        return _(
            "Action {id} records a backup ({kind}) and changed nothing in the root; "
            "there is nothing to undo.",
            id=target,
            kind=row["kind"],
        )
    if row["trash_emptied_at"] is not None:
        return _(
            "Action {id} can no longer be undone: `trash empty` removed what it had put "
            "in the trash for good ({when}).",
            id=target,
            when=row["trash_emptied_at"],
        )
    if row["status"] == "done":
        return None
    if row["undone_by"]:
        return _(
            "Action {id} is {status} (undone by action {by}); only a done action can be undone.",
            id=target,
            status=_(row["status"]),
            by=row["undone_by"],
        )
    return _(
        "Action {id} is {status}; only a done action can be undone.",
        id=target,
        status=_(row["status"]),
    )


def action_json(row: sqlite3.Row) -> Action:
    """The action of ``row`` (:class:`Action`)."""
    return {
        "id": row["id"],
        "suggestion_id": row["suggestion_id"],
        "kind": row["kind"],
        "status": row["status"],
        "ops": row["ops"],
        "auto": bool(row["auto"]),
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "undone_by": row["undone_by"],
        "undoes": row["undoes"],
        "error": row["error"],
        "sandbox": row["sandbox"],
    }
