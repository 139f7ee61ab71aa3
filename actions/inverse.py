"""The inverse of a done op, from what the journal recorded it left behind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from actions.ops import (
    Create,
    Edit,
    Keep,
    Mkdir,
    Move,
    Op,
    Restore,
    Rmdir,
    Trash,
    identity_from_dict,
    op_from_dict,
)
from policies.errors import InvalidStateError
from policies.i18n import _


def inverse_ops(op: Op, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
    """The ops that take ``op`` back, in order: one, except for an edit, whose version ALMA
    wrote goes to the trash (refused if the person changed it since: ``post``, ctime included)
    before the old version comes back from the trash, byte for byte and with its mode (the same
    inode; its hash is checked, its ctime moved with our own rename). Refused, nothing moves:
    both versions stay where they are. A kept copy needs nothing: it held for trashing its
    duplicates, and they are bytes of their own, so whatever became of it since, they come
    back (only a file in their place stops them)."""
    if isinstance(op, Keep):
        return ()
    if isinstance(op, Edit):
        if post is None or not isinstance(aux.get("trash"), str):
            raise InvalidStateError(
                _("the journal has no record of how {path!r} was edited.", path=op.path)
            )
        return (
            Trash(path=op.path, expect=identity_from_dict(post)),
            Restore(
                trash=str(aux["trash"]), path=op.path, expect=op.expect._replace(ctime_ns=None)
            ),
        )
    if isinstance(op, Create):
        # The file ALMA wrote goes to the trash only while it is that file (``post``, its
        # sha256 and ctime included): changed by the person since, the undo is refused.
        if post is None:
            raise InvalidStateError(
                _("the journal has no record of the file {path!r} ALMA created.", path=op.path)
            )
        return (Trash(path=op.path, expect=identity_from_dict(post)),)
    return (inverse_op(op, post, aux),)


def inverse_op(op: Op, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> Op:
    """The op that takes ``op`` back. ``post`` is the identity of the file the op left (the undo
    checks the file is still that one); ``aux`` holds where a trashed file went."""
    if isinstance(op, Mkdir):
        return Rmdir(op.path)
    if isinstance(op, Rmdir):
        return Mkdir(op.path)
    if post is None:
        raise InvalidStateError(
            _("the journal has no record of where {op} left its file.", op=op.op)
        )
    expect = identity_from_dict(post)
    if isinstance(op, Move):
        return Move(src=op.dst, dst=op.src, expect=expect)
    if isinstance(op, Trash):
        return Restore(trash=str(aux["dst"]), path=op.path, expect=expect)
    if isinstance(op, Restore):
        return Trash(path=op.path, expect=expect)
    raise InvalidStateError(_("op {op} cannot be undone.", op=op.op))  # pragma: no cover


_MOVE_KEYS = frozenset({"op", "src", "dst", "expect"})


def inverse_plan(
    rows: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Any]]],
) -> list[Op]:
    """Inverse ops, newest first, of (op, post, aux) rows in the order they were applied. The
    rows may be a generator (Journal.iter_done_rows): only the inverse ops are kept."""
    inverse: list[Op] = []
    for op, post, aux in rows:
        src, dst = op.get("src"), op.get("dst")
        plain_move = op.get("op") == "move" and op.keys() <= _MOVE_KEYS
        if plain_move and type(src) is str and type(dst) is str and post is not None:
            # The op of an organize, thousands a plan: its own ``expect`` is not needed (the
            # inverse expects ``post``), so it is not parsed. The inverse plan is parsed
            # strictly again, with every other op, where it is executed.
            inverse.append(Move(src=dst, dst=src, expect=identity_from_dict(post)))
        else:
            # Reversed here because the whole list is reversed below: an edit's two inverse
            # ops must stay in their order (its version to the trash, then the old one back).
            inverse.extend(reversed(inverse_ops(op_from_dict(op), post, aux)))
    inverse.reverse()
    return inverse
