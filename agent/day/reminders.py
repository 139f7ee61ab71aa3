"""Reminders: the break a person accepted after long days, and the promises still pending.

Accepting a ``long_hours`` suggestion sets a break reminder at :data:`BREAK_HOUR` (or in
:data:`SOON` if that hour has passed): the schedule shows it as a desktop notification when it
is due, and the ``reminders`` command gives it to the chat, with the pending ``pending_task``
suggestions, when a session starts. Reminders live in ``.alma/alma.db`` (a run-time setting).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from policies import results
from policies.i18n import _
from policies.results import Break, PendingTask
from state.suggestions import SuggestionStore

BREAK_HOUR = 20
SOON = timedelta(minutes=15)
_KEY = "reminders"


def break_time(accepted: datetime) -> datetime:
    at = accepted.replace(hour=BREAK_HOUR, minute=0, second=0, microsecond=0)
    return at if at > accepted else accepted + SOON


def plan_words(now: datetime) -> str:
    at = break_time(now)
    return _(
        "Plan: if you accept, at {time} I remind you to stop (a notice on the desktop and in "
        "the chat).",
        time=f"{at:%H:%M}",
    )


class Reminders:
    def __init__(self, store: SuggestionStore) -> None:
        self.store = store

    def _all(self) -> list[Break]:
        return list(self.store.setting(_KEY, []))

    def add_break(self, suggestion_id: int, accepted: datetime) -> Break:
        items = [r for r in self._all() if r["suggestion_id"] != suggestion_id]
        at = break_time(accepted)
        item: Break = {
            "suggestion_id": suggestion_id,
            "kind": "break",
            "at": at.isoformat(timespec="minutes"),
            "text": _("It is {time}: as agreed, time to stop and rest.", time=f"{at:%H:%M}"),
            "shown": False,
        }
        self.store.set_setting(_KEY, [*items, item])
        return item

    def due(self, now: datetime) -> list[Break]:
        """The reminders due now and not shown yet; they are marked shown."""
        items = self._all()
        due = [r for r in items if not r["shown"] and datetime.fromisoformat(r["at"]) <= now]
        if due:
            for r in due:
                r["shown"] = True
            self.store.set_setting(_KEY, items)
        return due

    def listing(self, now: datetime | None = None) -> results.Reminders:
        """For the chat at session start: breaks (due or coming today) and pending promises."""
        today = (now or datetime.now()).date()
        breaks = [r for r in self._all() if datetime.fromisoformat(r["at"]).date() >= today]
        tasks: list[PendingTask] = [
            {"suggestion_id": s["id"], "title": s["title"], "reason": s["reason"]}
            for s in self.store.list(status="pending")
            if s["kind"] == "pending_task"
        ]
        return {"breaks": breaks, "pending_tasks": tasks}
