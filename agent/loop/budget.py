"""The noise budget: at most a few new suggestions a day, the most worth to the person first.

What the budget leaves out is not stored: the detectors find it again at the next analysis, and
it is proposed on a later day if it still holds (a messy folder stays messy; a promise kept in
between is no longer found). What runs on its own (level auto) asks nothing of the person and
is not counted.

What protects the person's data (a backup failing, or none taken for too long) is never held
back: it is proposed whatever the day's count, and it takes no room from the rest. A disk
almost full has no detector of its own; a backup that fails for lack of space is such a
warning. Kinds that repeat (a backup failing every night) stay one suggestion, found again by
its fingerprint (agent.loop.analysis), so this cannot flood the person.

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
#: The kinds that protect the person's data: outside the budget.
_PROTECTS = frozenset({"backup"})

T = TypeVar("T")


def worth(kind: str, files: int, welcome: float) -> tuple[int, float, int]:
    """A sort key, larger first: the kind's place, how welcome the kind has been (the share
    of its decided suggestions the person accepted; 0.5 when none was decided), its files."""
    return (_WORTH.get(kind, _FILES_WORTH), welcome, files)


def protects(kind: str) -> bool:
    """True for a kind that protects the person's data: never held back, never counted."""
    return kind in _PROTECTS


def within(
    findings: Sequence[T],
    room: int | None,
    key: Callable[[T], tuple[int, float, int]],
    *,
    exempt: Callable[[T], bool] = lambda finding: False,
) -> tuple[list[T], list[T]]:
    """(proposed now, waiting): the ``room`` worth most, in the order they came, and the rest;
    what ``exempt`` says protects the person's data is proposed always and takes no room.
    ``room`` None: no budget, all are proposed."""
    counted = [i for i, f in enumerate(findings) if not exempt(f)]
    if room is None or len(counted) <= room:
        return list(findings), []
    ranked = sorted(counted, key=lambda i: key(findings[i]), reverse=True)
    chosen = set(ranked[: max(room, 0)]) | {i for i, f in enumerate(findings) if exempt(f)}
    now = [f for i, f in enumerate(findings) if i in chosen]
    waiting = [f for i, f in enumerate(findings) if i not in chosen]
    return now, waiting
