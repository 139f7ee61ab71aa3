"""``python -m sandbox.table``: the kinds registry and the op table, as the code holds them.

The kinds come from policies.kinds; each op's row from its class in actions.ops (its family,
the fields it changes, whether it counts as a file, its inverse and its description, shown on a
sample op) and from its handler in sandbox.ops (which runs it in the confined child). A
developer's check that the registries say what the docs say; nothing here is a person's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from actions.ops import OPS, Identity, Op
from policies import kinds
from policies.errors import AlmaError
from policies.i18n import language
from sandbox.ops import HANDLERS

_IDENT = Identity(dev=1, ino=2, kind="file", size=3, mtime_ns=4, sha256="0" * 64, ctime_ns=5)
#: A sample value for each field type an op declares (its annotation, as written).
_SAMPLES: dict[str, Any] = {
    "str": None,  # the field's own name: the table shows which field a path comes from
    "Identity": _IDENT,
    "Identity | None": _IDENT,
    "bytes": b"",
    "tuple[str, ...]": ("ID2", "ID3"),
}


def sample(cls: type[Op]) -> Op:
    """An op of class ``cls`` whose paths are its fields' names (``Move(src="src", ...)``)."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        value = _SAMPLES[str(f.type)]
        values[f.name] = f.name.upper() if value is None else value
    return cls(**values)


def _inverse(op: Op) -> str:
    aux = {"dst": "TRASHED", "trash": "TRASHED"}
    try:
        back = op.inverse(_IDENT.to_dict(), aux)
    except AlmaError:
        return f"its family's undo ({op.family})"
    return " + ".join(b.op for b in back) or "nothing"


def op_rows() -> list[list[str]]:
    rows = []
    with language("en"):
        for name, cls in OPS.items():
            op = sample(cls)
            handler = HANDLERS.get(name)
            rows.append(
                [
                    name,
                    cls.family,
                    ", ".join(op.write_paths()) or "-",
                    "yes" if op.touches_file() else "-",
                    _inverse(op),
                    "-" if handler is None else type(handler).__name__,
                    op.describe(),
                ]
            )
    return rows


def _print(heads: Sequence[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    for line in (list(heads), *rows):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


def main() -> None:
    print("Kinds (policies.kinds):\n")
    kinds.main()
    print("\nOps (actions.ops; the sandbox family's handlers in sandbox.ops):\n")
    heads = ("op", "family", "changes", "file", "inverse", "handler", "description")
    _print(heads, op_rows())


if __name__ == "__main__":
    main()
