"""The inverse of a done action, from what the journal recorded its ops left behind: each op
says its own inverse (actions.ops.Op.inverse); this reads them in the order an undo runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from actions.ops import Move, Op, identity_from_dict, op_from_dict

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
            inverse.extend(reversed(op_from_dict(op).inverse(post, aux)))
    inverse.reverse()
    return inverse
