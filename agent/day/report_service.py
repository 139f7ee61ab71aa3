"""The day's analysis as the daemon answers for it: which day, kept as written or written now.

``logs/alma/DATE-analisis.md`` is made by agent.day.day_analysis (the facts, the text) and written
by agent.day.alma_logs; this decides which day a request means and whether the file on disk
stands (a model's summary or a person's note in it stays) or is written again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta

from agent.day import alma_logs, day_analysis
from agent.day.days import report_days
from agent.memory.loader import MemoryLoader
from agent.voice.model import Complete
from policies.config import Policy
from policies.errors import AlmaError, BadArgumentError, InvalidStateError
from policies.i18n import _
from policies.layout import RootLayout
from policies.results import Action, DaysReport, Report, as_action
from state.db import utc_stamp
from state.journal import Journal
from state.suggestions import SuggestionStore

log = logging.getLogger("alma.agent")


class DailyReports:
    def __init__(
        self,
        layout: RootLayout,
        store: SuggestionStore,
        journal: Journal,
        lock: threading.RLock,
        *,
        memory: MemoryLoader | None = None,
        complete: Complete | None = None,
        clock: Callable[[], float] = time.time,
        model_timeout_s: float = 120.0,
        policy: Callable[[], Policy] | None = None,
    ) -> None:
        self.layout = layout
        self.store = store
        self.journal = journal
        self._lock = lock  # the agent's: the store and the journal are read between decisions
        self.memory = memory
        self.complete = complete  # the model, when one is loaded: the report's summary
        self.clock = clock
        self.model_timeout_s = model_timeout_s
        self.policy = policy  # whether the mood is looked for, where routines are

    def days(self, days: int) -> DaysReport:
        """``report.days``: the last ``days`` days as series (agent.day.days)."""
        return report_days(self.layout.root, self.store, days)

    def scheduled(self) -> Report:
        """The scheduled report: of the day that ended when the schedule runs before noon
        (03:00 by default, the day before is whole by then), else of the day running. A report
        of that day written before it ended (a person asked at 18:00) is written again, whole;
        one written after is left as it is, with whatever a person added to it."""
        now = datetime.fromtimestamp(self.clock())
        day = now.date() - timedelta(days=1) if now.hour < 12 else now.date()
        kept = self._kept_report(day)
        if kept is not None and kept[1] >= _day_span(day)[1]:
            return kept[0]
        return self._write_report(day)

    def show(self, date: str | None, refresh: bool = False) -> Report:
        """The day's analysis, logs/alma/DATE-analisis.md (today by default): as it is when it
        was written already (contract §2: a model's summary or a person's note in it stays);
        else, or with ``refresh``, built now from what the day's logs and ALMA's records hold."""
        day = date  # the command's argument, named as alma-ctl names it
        today = datetime.fromtimestamp(self.clock()).date()
        try:
            when = Day.fromisoformat(day) if day else today
        except ValueError:
            raise BadArgumentError(
                _("{day} is not a date; write it as YYYY-MM-DD.", day=repr(day))
            ) from None
        if when > today:
            raise BadArgumentError(
                _(
                    "{day} has not come yet; give today's date or an earlier one.",
                    day=when.isoformat(),
                )
            )
        try:
            _day_span(when)
        except (OverflowError, ValueError, OSError):  # before the first day the clock can hold
            raise BadArgumentError(
                _(
                    "{day} is too long ago for a report; give a day ALMA has logs of.",
                    day=when.isoformat(),
                )
            ) from None
        if not refresh:
            kept = self._kept_report(when)
            if kept is not None and not self._stale(when, kept[1]):
                return kept[0]
        return self._write_report(when)

    def _stale(self, when: date, written: float) -> bool:
        """Whether a report of ``when`` written at ``written`` misses what happened since: a
        report written after its day ended is whole; one written while the day ran is stale
        once the day's chat log changed, or ALMA proposed or did something, after it."""
        end = _day_span(when)[1]
        if written >= end:
            return False
        try:
            said = os.stat(self.layout.logs / f"{when.isoformat()}.md", follow_symlinks=False)
        except OSError:
            said = None
        if said is not None and said.st_mtime > written:
            return True
        since, until = utc_stamp(written), utc_stamp(end)
        with self._lock:
            return bool(
                self.store.created_between(since, until)
                or self.journal.started_between(since, until)
            )

    def _kept_report(self, when: date) -> tuple[Report, float] | None:
        """The report of ``when`` already on disk (``written`` False) and its mtime, or None."""
        name = _report_name(when)
        got = alma_logs.read_own(self.layout, name)
        if got is None:
            return None
        why = _("larger than any report ALMA writes") if got.cut else None
        try:
            text = got.data.decode("utf-8")
        except UnicodeDecodeError:
            why = _("not UTF-8 text")
        if why is not None:
            raise InvalidStateError(
                _(
                    "logs/alma/{name} cannot be shown ({why}); `alma-ctl report --refresh "
                    "{day}` writes the day's analysis again in its place.",
                    name=name,
                    why=why,
                    day=when.isoformat(),
                )
            )
        mtime = got.mtime_ns / 1e9
        written_at = datetime.fromtimestamp(mtime).astimezone().isoformat(timespec="seconds")
        shown: Report = {
            "date": when.isoformat(),
            "path": str(self.layout.reports / name),
            "text": text,
            "written": False,
            "written_at": written_at,
        }
        return shown, mtime

    def _write_report(self, when: date) -> Report:
        memory_projects: list[str] = []
        memories: dict[str, int] | None = None
        start, end = _day_span(when)
        if self.memory is not None and self.memory.loaded:
            try:
                created = self.memory.service.created(start, end)
                memory_projects = [project for project in created if project]
                memories = {"added": sum(created.values()), "total": self.memory.service.count()}
            except AlmaError as exc:
                log.error("the report goes without memory: %s", exc)
        facts = day_analysis.day_facts(
            self.layout.root,
            when,
            memory_projects=memory_projects,
            policy=None if self.policy is None else self.policy(),
        )
        # Outside the lock: the model may take a while, and decisions must not wait for it.
        summary = day_analysis.summarize(facts, self.complete, timeout_s=self.model_timeout_s)
        since, until = utc_stamp(start), utc_stamp(end)
        with self._lock:
            made = self.store.created_between(since, until)
            done: list[Action] = []
            for a in map(as_action, self.journal.started_between(since, until)):
                if a["status"] in ("done", "undone"):
                    a["undoable"] = self.journal.undo_refusal(a["id"]) is None
                    done.append(a)
        text = day_analysis.render(
            facts, suggestions=made, actions=done, memories=memories, summary=summary
        )
        path = alma_logs.write_own(self.layout, _report_name(when), text, append=False)
        return {"date": when.isoformat(), "path": path, "text": text, "written": True}


#: The date type: ``show`` takes the command's ``date`` argument by its name.
Day = date


def _day_span(day: date) -> tuple[float, float]:
    """The local day's first instant and the next day's, as timestamps (a DST day included)."""
    start = datetime.combine(day, datetime.min.time())
    return start.timestamp(), datetime.combine(day + timedelta(days=1), start.time()).timestamp()


def _report_name(when: date) -> str:
    return f"{when.isoformat()}-analisis.md"
