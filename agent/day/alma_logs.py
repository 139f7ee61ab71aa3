"""ALMA's own writing in ``logs/alma/``: the daily analysis and the audit log ``acciones.md``.

Both are written through one helper that reaches ``logs/alma`` through folder fds
(:meth:`actions.tree.Tree.ensure_dir`: a ``logs/alma`` planted as a symlink is refused, never
written through) and opens files with ``O_NOFOLLOW``: the analysis is replaced whole (written beside, then renamed
over), the audit log only ever appended to.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from actions.ops import OPS, op_from_dict
from actions.safe_read import FileRead, read_file
from actions.tree import Tree
from policies.errors import BadArgumentError, RefusedError
from policies.i18n import _, language, ngettext, process_language
from policies.kinds import RECORD_KINDS
from policies.layout import RootLayout
from policies.modes import SHARED_DIR, SHARED_FILE, for_person
from state.chatlog import REPORTS

AUDIT_LOG = "acciones.md"
#: Lines of ops written per action in the audit log; the rest is counted (the journal has all).
MAX_AUDIT_OPS = 200
#: A day's analysis is a few kilobytes: a larger file under its name is not one to show whole.
MAX_REPORT_BYTES = 2**20


def _open_regular(name: str, flags: int, dir_fd: int) -> int:
    """Open ``logs/alma/NAME`` never through a link; a file it creates gets the person's mode
    (policies.modes: the daemon's own umask would make it 0600)."""
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    created = False
    try:
        if flags & os.O_CREAT:
            try:
                fd = os.open(name, flags | os.O_EXCL, SHARED_FILE, dir_fd=dir_fd)
                created = True
            except FileExistsError:
                if flags & os.O_EXCL:
                    raise
                fd = os.open(name, flags & ~os.O_CREAT, dir_fd=dir_fd)
        else:
            fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RefusedError(
                _("logs/alma/{name} is a symlink; ALMA never writes through links.", name=name)
            ) from None
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads, opened without blocking
            raise _not_regular(name) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_regular(name)
    if created:
        os.fchmod(fd, for_person(SHARED_FILE))
    return fd


def _not_regular(name: str) -> RefusedError:
    return RefusedError(_("logs/alma/{name} is not a regular file; move it away.", name=name))


def write_own(layout: RootLayout, name: str, text: str, *, append: bool, header: str = "") -> str:
    """Write ``logs/alma/NAME`` (appended to, ``header`` first when it is new, or replaced
    whole); returns its path."""
    with Tree(layout.root) as tree:
        folder = tree.ensure_dir(tuple(REPORTS.split("/")), for_person(SHARED_DIR))
        if append:
            fd = _open_regular(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, folder)
            try:
                if header and os.fstat(fd).st_size == 0:
                    text = header + text
                os.write(fd, text.encode("utf-8"))
            finally:
                os.close(fd)
        else:
            tmp = f".{name}.{os.getpid()}.tmp"
            fd = _open_regular(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, folder)
            try:
                os.write(fd, text.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    return str(layout.reports / name)


def read_own(layout: RootLayout, name: str) -> FileRead | None:
    """``logs/alma/NAME`` as it is, read the one safe way (actions.safe_read.read_file: no link
    followed, at most MAX_REPORT_BYTES); None when there is no such regular file."""
    with Tree(layout.root) as tree:
        return read_file(tree, f"{REPORTS}/{name}", limit=MAX_REPORT_BYTES)


def _op_line(op: Mapping[str, Any]) -> str:
    if op["op"] in OPS:
        try:
            return op_from_dict(op).describe()  # each op says its own (actions.ops)
        except BadArgumentError:
            pass  # a damaged op still gets its line, the one below
    if op["op"] == "backup":
        if op.get("snapshot"):
            return _(
                "- backup {snapshot} in {target}: {files} files, {bytes} bytes",
                snapshot=op["snapshot"],
                target=op["target"],
                files=op.get("files"),
                bytes=op.get("bytes"),
            )
        return _("- backup in {target}, not taken", target=op["target"])
    if op["op"] == "backup_forget":
        return _(
            "- snapshots forgotten in {target} by the retention: {ids}",
            target=op["target"],
            ids=", ".join(op.get("removed") or ()) or _("none"),
        )
    if op["op"] == "restore_snapshot":
        return _(
            "- snapshot {snapshot} restored into {to}: {paths}",
            snapshot=op["snapshot"],
            to=op["to"],
            paths=", ".join(op.get("paths") or ()) or _("everything"),
        )
    if op["op"] == "unrestore":
        return _("- restored folder removed: {to}", to=op["to"])
    return f"- {op['op']} {op.get('path', '')}".rstrip()


def audit_entry(
    action: Mapping[str, Any],
    suggestion: Mapping[str, Any] | None,
    ops: Iterable[Mapping[str, Any]],
    now: datetime,
) -> str:
    """One action in ``acciones.md``: what moved from where to where, why, by whom, and the
    command that undoes it. In the daemon's language: the log is read later, by anyone. The
    ops are read as they come and only as far as the lines shown: past MAX_AUDIT_OPS the rest
    is counted from the action's ``ops``, never decoded (100,000 of them, an undo's second)."""
    with language(process_language()):
        return _audit_entry(action, suggestion, ops, now)


def _audit_entry(
    action: Mapping[str, Any],
    suggestion: Mapping[str, Any] | None,
    ops: Iterable[Mapping[str, Any]],
    now: datetime,
) -> str:
    who = _("ALMA on its own") if action.get("auto") else _("the person")
    when = now.strftime("%Y-%m-%d %H:%M")
    if action.get("undoes"):
        head = _(
            "## {when} · action {id} · undoes action {undone}",
            when=when,
            id=action["id"],
            undone=action["undoes"],
        )
        why = _("Why: {who} asked for it (`alma-ctl undo`).", who=who)
        undo = _("Undo: an undo is not undone; accept the suggestion again if you want it.")
    else:
        head = _(
            "## {when} · action {id} ({kind})", when=when, id=action["id"], kind=action["kind"]
        )
        if suggestion:
            because = _(
                "suggestion {id}: «{title}» ({reason})",
                id=suggestion["id"],
                title=suggestion["title"],
                reason=suggestion["reason"],
            )
        else:
            because = _("no suggestion")
        why = _("Why: {because}. Decided by: {who}.", because=because, who=who)
        if action["kind"] in RECORD_KINDS:
            undo = _("Undo: nothing to undo, it changed nothing in the root.")
        else:
            undo = _("Undo: `alma-ctl undo {id}`", id=action["id"])
    shown: list[str] = []
    for read, op in enumerate(ops):
        if len(shown) == MAX_AUDIT_OPS:  # and there is more
            rest = int(action["ops"]) - read
            shown.append(
                ngettext(
                    "- … and {n} more op (`alma-ctl history`)",
                    "- … and {n} more ops (`alma-ctl history`)",
                    rest,
                )
            )
            break
        if op["op"] != "keep":  # a kept file is a check, not a change
            shown.append(_op_line(op))
    return "\n".join(["", head, "", *shown, "", why, undo, ""])


def audit_header() -> str:
    """The first lines of ``acciones.md`` (the file keeps its name in every language: it is
    the one the person already knows)."""
    with language(process_language()):
        return _("# ALMA's actions\n\nEvery change ALMA made, why, and how to undo it.\n")


def append_audit(layout: RootLayout, entry: str) -> None:
    write_own(layout, AUDIT_LOG, entry, append=True, header=audit_header())
