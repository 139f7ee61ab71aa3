"""``long_hours``: long working days, read from the chat logs' turn times.

A day (``logs/YYYY-MM-DD.md``) is long when its first and last turns are more than
:data:`LONG_DAY_HOURS` hours apart, or when the person wrote between midnight and
:data:`NIGHT_ENDS_HOUR` (a turn "after midnight" in that day's file). Chat times are only a
proxy for working hours: a chat open from breakfast to dinner (eleven to thirteen hours) is an
ordinary full day, and one or two long days are a busy week, not a pattern. The finding needs
:data:`MIN_LONG_DAYS` long days within the last :data:`WINDOW_DAYS` days (today included), or
:data:`MIN_NIGHTS` of them past midnight (a stronger sign than a long span).

One finding at most, for ``logs``; its fingerprint is the ISO week of the newest long day, so
it is proposed at most once a week, and again in a later week if the pattern goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from actions.planners.base import PlanResult
from agent.detectors.logread import last_days, weekly_fingerprint
from policies.i18n import _, ngettext
from state.chatlog import Paragraph

KIND = "long_hours"
LONG_DAY_HOURS = 14
NIGHT_ENDS_HOUR = 5
MIN_LONG_DAYS = 3
MIN_NIGHTS = 2
WINDOW_DAYS = 7


def _hm(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    return f"{h:02d}:{rest // 60:02d}"


def _night(entries: Sequence[Paragraph]) -> bool:
    return any(
        e.by_person and e.seconds is not None and e.seconds < NIGHT_ENDS_HOUR * 3600
        for e in entries
    )


def day_summary(entries: Sequence[Paragraph]) -> str | None:
    """Why a day was long, in Spanish; None when it was not."""
    times = [e.seconds for e in entries if e.seconds is not None]
    if not times:
        return None
    first, last = min(times), max(times)
    span = last - first
    night = [
        e.seconds
        for e in entries
        if e.by_person and e.seconds is not None and e.seconds < NIGHT_ENDS_HOUR * 3600
    ]
    reasons = []
    if span > LONG_DAY_HOURS * 3600:
        h, m = divmod(span // 60, 60)
        reasons.append(
            _(
                "from {start} to {end} ({hours} h {minutes} min)",
                start=_hm(first),
                end=_hm(last),
                hours=h,
                minutes=f"{m:02d}",
            )
        )
    if night:
        reasons.append(_("you wrote past midnight ({time})", time=_hm(max(night))))
    return "; ".join(reasons) or None


def detect_long_hours(
    days: Sequence[tuple[date, str, list[Paragraph]]], now: float
) -> PlanResult | None:
    """``days``: (day, log path, parsed entries) for each chat log."""
    since, today = last_days(now, WINDOW_DAYS)
    long_days: list[tuple[date, str, str]] = []
    nights = 0
    for day, path, entries in days:
        if since <= day <= today:
            why = day_summary(entries)
            if why:
                long_days.append((day, path, why))
                nights += _night(entries)
    if len(long_days) < MIN_LONG_DAYS and nights < MIN_NIGHTS:
        return None
    long_days.sort()
    newest = long_days[-1][0]
    n = len(long_days)
    return PlanResult(
        kind=KIND,
        target="logs",
        title=ngettext(
            "Long working days: {n} day in the last week",
            "Long working days: {n} days in the last week",
            n,
        ),
        reason=_(
            "{n} of the last {window} days with conversations of more than {hours} hours "
            "or past midnight",
            n=n,
            window=WINDOW_DAYS,
            hours=LONG_DAY_HOURS,
        ),
        evidence=[f"{day.isoformat()} ({path}): {why}" for day, path, why in long_days],
        plan=[],
        files=0,
        fingerprint=weekly_fingerprint(KIND, newest),
    )
