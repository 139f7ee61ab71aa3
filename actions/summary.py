"""A plan in a few lines: how many ops of each kind, where the files go, which types they are.

A plan of 100,000 ops is read by a person as its summary and its first ops
(``alma-ctl suggestions show``); the whole plan stays one request away (``--all``, ``--json``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from actions.ops import FOLDER_OPS

#: Rows of each breakdown: the largest ones; the rest is counted in ``*_more``.
TOP = 20
#: A plan up to this long is shown whole: a person reads it op by op before accepting.
WHOLE_UP_TO = 100
#: Ops of a longer plan shown after its summary.
FIRST_OPS = 20


def _extension(path: str) -> str:
    name = path.rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    return f".{ext.lower()}" if dot and stem else ""


def plan_summary(plan: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of a plan's ops: by op, by (op, folder) and by extension of the files.

    The folder of a ``move`` or ``restore`` is where the file goes; of a ``trash`` or any other
    op on a file, where it is now. Extensions are lower-cased; ``""`` is a file without one.
    Folders and extensions are each cut to the :data:`TOP` largest (ties by name), with the
    number of the others left out in ``folders_more`` and ``extensions_more``.
    """
    ops: Counter[str] = Counter()
    folders: Counter[tuple[str, str]] = Counter()
    extensions: Counter[str] = Counter()
    for op in plan:
        name = str(op.get("op", "?"))
        ops[name] += 1
        if name in FOLDER_OPS:
            continue
        dst = op.get("dst")
        src = op.get("src", op.get("path"))
        where = dst if isinstance(dst, str) else src
        if isinstance(where, str):
            folders[(name, where.rpartition("/")[0])] += 1
        if isinstance(src, str):
            extensions[_extension(src)] += 1
    by_folder = sorted(folders.items(), key=lambda kv: (-kv[1], kv[0]))
    by_ext = sorted(extensions.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "ops": dict(sorted(ops.items())),
        "folders": [{"op": o, "folder": f, "files": n} for (o, f), n in by_folder[:TOP]],
        "folders_more": max(0, len(by_folder) - TOP),
        "extensions": [{"extension": e, "files": n} for e, n in by_ext[:TOP]],
        "extensions_more": max(0, len(by_ext) - TOP),
    }


def shown(suggestion: Mapping[str, Any], *, all_ops: bool) -> dict[str, Any]:
    """``suggestion`` as ``suggestions.show`` answers it: with ``plan_total`` and
    ``plan_summary``; without ``all_ops``, a plan longer than :data:`WHOLE_UP_TO` ops is cut to
    its first :data:`FIRST_OPS`. Its ``plan`` may be any iterable of ops, read once as the
    summary counts them: without ``all_ops`` only the first :data:`WHOLE_UP_TO` are kept (a
    plan of 100,000 ops is never held whole to be summarized)."""
    kept: list[Mapping[str, Any]] = []
    total = 0

    def reading() -> Iterator[Mapping[str, Any]]:
        nonlocal total
        for op in suggestion.get("plan") or ():
            total += 1
            if all_ops or total <= WHOLE_UP_TO:
                kept.append(op)
            yield op

    summary = plan_summary(reading())
    plan = kept if all_ops or total <= WHOLE_UP_TO else kept[:FIRST_OPS]
    return {**suggestion, "plan": plan, "plan_total": total, "plan_summary": summary}
