"""The noise budget: at most a few new suggestions a day, the most worth to the person first.

What the budget leaves out is not stored: the detectors find it again at the next analysis, and
it is proposed on a later day if it still holds (a messy folder stays messy; a promise kept in
between is no longer found). What runs on its own (level auto) asks nothing of the person and
is not counted.

Worth, highest first: something broken (a failing backup or script), then what the person
said (a promise, how they feel), then their time (a routine, long days), then their files (the
more files, the more worth). Within that order a kind the person has accepted more than
rejected comes before one they keep turning down.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

#: A kind's place in what matters to a person; a kind not named counts as files do.
_WORTH = {
    "backup": 6,
    "repeated_failure": 5,
    "pending_task": 4,
    "low_mood": 4,
    "routine": 3,
    "long_hours": 3,
    "autonomy_promotion": 2,
    "duplicates": 2,
    "organize": 1,
    "temp_cleanup": 1,
    "memory_merge": 0,
}
_FILES_WORTH = 1

T = TypeVar("T")


def worth(kind: str, files: int, welcome: float) -> tuple[int, float, int]:
    """A sort key, larger first: the kind's place, how welcome the kind has been (the share
    of its decided suggestions the person accepted; 0.5 when none was decided), its files."""
    return (_WORTH.get(kind, _FILES_WORTH), welcome, files)


def within(
    findings: Sequence[T], room: int | None, key: Callable[[T], tuple[int, float, int]]
) -> tuple[list[T], list[T]]:
    """(proposed now, waiting): the ``room`` worth most, in the order they came, and the rest.
    ``room`` None: no budget, all are proposed."""
    if room is None or len(findings) <= room:
        return list(findings), []
    ranked = sorted(range(len(findings)), key=lambda i: key(findings[i]), reverse=True)
    chosen = set(ranked[: max(room, 0)])
    now = [f for i, f in enumerate(findings) if i in chosen]
    waiting = [f for i, f in enumerate(findings) if i not in chosen]
    return now, waiting
