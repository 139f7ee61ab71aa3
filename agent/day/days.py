"""The last days as series (``report.days``): what the panel's plots draw.

Each figure comes from the owner the daily report and the detectors already read: the hours
of activity are a day's first and last turns (``day_analysis.turn_span``), the mood the low_mood
detector's day score (``low_mood.day_score``: the person's negative words per turn, higher is
lower), the suggestions the store's rows of the day with their status, ``undone`` read as the
store derives it (``policies.states.UNDONE``). The chat logs are read once, through the
detectors' safe reader.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path

from actions.tree import Tree
from agent.day.day_analysis import turn_span
from agent.detectors.logread import list_logs, read_text
from agent.detectors.low_mood import day_score
from control.commands import REPORT_DAYS
from policies.results import Day, DaysReport
from policies.states import UNDONE
from state.chatlog import MAX_DAY_BYTES, Paragraph, parse
from state.db import utc_stamp
from state.suggestions import SuggestionStore

#: What became of a suggestion, as a person reads it (a store status, or undone).
OUTCOMES = ("accepted", "rejected", "undone", "pending", "expired", "failed")
#: The store's statuses as outcomes: an executed suggestion was accepted; one still running
#: (``accepted``) too.
_OUTCOME = {
    "pending": "pending",
    "accepted": "accepted",
    "executed": "accepted",
    "rejected": "rejected",
    "failed": "failed",
    "expired": "expired",
}


def day_series(
    root: Path,
    store: SuggestionStore,
    days: int = REPORT_DAYS,
    *,
    clock: Callable[[], float] = time.time,
) -> list[Day]:
    """The last ``days`` days (today included), oldest first."""
    now = clock()
    today = datetime.fromtimestamp(now).date()
    first = today - timedelta(days=days - 1)
    series = {first + timedelta(days=n): _empty(first + timedelta(days=n)) for n in range(days)}
    with Tree(root) as tree:
        for day, f in list_logs(tree, now).chats:
            if day not in series:
                continue
            read = read_text(tree, f, limit=MAX_DAY_BYTES, tail=False)
            if read is not None:
                _chat(series[day], parse(read[0]))
    since = datetime.combine(first, datetime.min.time()).timestamp()
    until = datetime.combine(today + timedelta(days=1), datetime.min.time()).timestamp()
    for row in store.created_between(utc_stamp(since), utc_stamp(until)):
        made = datetime.fromisoformat(str(row["created_at"])).astimezone().date()
        if made not in series:
            continue
        outcome = UNDONE if row.get("undone") else _OUTCOME.get(str(row["status"]), "pending")
        counts = series[made]["suggestions"].setdefault(
            str(row["kind"]), dict.fromkeys(OUTCOMES, 0)
        )
        counts[outcome] += 1
    return list(series.values())


def _empty(day: date) -> Day:
    return Day(
        date=day.isoformat(), hours=0.0, messages_by_hour=[0] * 24, mood=None, suggestions={}
    )


def _chat(day: Day, paragraphs: list[Paragraph]) -> None:
    span = turn_span(paragraphs)
    if span is not None:
        day["hours"] = round(((span[1].seconds or 0) - (span[0].seconds or 0)) / 3600, 2)
    seen: set[int] = set()
    for p in paragraphs:
        seconds = p.seconds
        if p.by_person and seconds is not None and p.turn not in seen:
            seen.add(p.turn)
            day["messages_by_hour"][seconds // 3600] += 1
    score = day_score(paragraphs)
    day["mood"] = None if score is None else round(score[0], 3)


def report_days(
    root: Path, store: SuggestionStore, days: int, *, clock: Callable[[], float] = time.time
) -> DaysReport:
    return DaysReport(days=day_series(root, store, days, clock=clock), outcomes=list(OUTCOMES))
