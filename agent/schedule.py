"""The schedule (apscheduler): the periodic rescan, and the daily analysis with its report."""

from __future__ import annotations

import logging
from collections.abc import Callable

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from tzlocal import get_localzone

from agent.settings import Schedule

log = logging.getLogger("alma.schedule")
#: How often the schedule looks whether a backup is due and its target present.
BACKUP_CHECK_MINUTES = 10


def _safe(name: str, fn: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except Exception:  # a failed run must not stop the schedule; the log has it
            log.exception("%s failed", name)

    return run


def start_schedule(
    settings: Schedule,
    *,
    rescan: Callable[[], object],
    daily: Callable[[], object],
    backup: Callable[[], object] | None = None,
) -> BackgroundScheduler:
    scheduler = BackgroundScheduler(timezone="UTC")
    scheduler.add_job(
        _safe("rescan", rescan),
        IntervalTrigger(minutes=settings.rescan_minutes),
        id="rescan",
        max_instances=1,
        coalesce=True,
    )
    hour, minute = (int(x) for x in settings.daily_analysis.split(":"))
    scheduler.add_job(
        _safe("daily analysis", daily),
        CronTrigger(hour=hour, minute=minute, timezone=get_localzone()),
        id="daily",
        max_instances=1,
        coalesce=True,
    )
    if backup is not None:  # asks often whether one is due: a portable disk comes and goes
        scheduler.add_job(
            _safe("backup", backup),
            IntervalTrigger(minutes=BACKUP_CHECK_MINUTES),
            id="backup",
            max_instances=1,
            coalesce=True,
        )
    scheduler.start()
    return scheduler
