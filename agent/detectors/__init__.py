"""Detectors: what the monitor looks for, turned into findings (:class:`PlanResult`).

``detect_files`` proposes file changes in the writable zones (organize, duplicates,
temp_cleanup); ``detect_logs`` reports what the logs show (repeated_failure, long_hours,
pending_task, low_mood) with an empty plan, and the routine the logs tell or the dated copies
show (either, or both) with a script to write. Both take the clock as ``now`` so tests and the schedule
decide what "recent" and "old" mean. Titles, reasons and evidence are in Spanish, the person's
language; kind names stay as the contract spells them.
"""

from __future__ import annotations

from agent.detectors.files import FileLimits, detect_files
from agent.detectors.logs import detect_logs

__all__ = ["FileLimits", "detect_files", "detect_logs"]
