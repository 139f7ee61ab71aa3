"""Findings from the logs, without file changes (their plan is empty; accepting acknowledges),
except ``routine``'s, which proposes a script.

- ``repeated_failure`` (:mod:`agent.detectors.failures`): from ``logs/**/*.log``;
- ``long_hours`` (:mod:`agent.detectors.long_hours`) and ``pending_task``
  (:mod:`agent.detectors.pending`) and ``low_mood`` (:mod:`agent.detectors.low_mood`, off
  with ``[monitor] low_mood = false``): from the chat logs ``logs/YYYY-MM-DD.md``;
- ``routine`` (:mod:`agent.detectors.routine`): a copy done by hand on several days, told in
  the chat logs or seen in the dated copies of the writable zones (either is enough); its plan
  writes a script.

Only chat days that can matter are read: the last ``pending.MAX_AGE_DAYS`` days (long hours
look at fewer). Titles and reasons are in Spanish, the person's language.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

from actions.planners.base import PlanResult
from actions.tree import Tree
from agent.detectors.failures import detect_failures, with_person_notes
from agent.detectors.logread import TAIL_BYTES, list_logs, read_text
from agent.detectors.long_hours import detect_long_hours
from agent.detectors.low_mood import detect_low_mood
from agent.detectors.pending import MAX_AGE_DAYS, detect_pending
from agent.detectors.routine import detect_routine
from policies.config import Policy
from state.chatlog import MAX_DAY_BYTES, Paragraph, parse


def detect_logs(root: Path, policy: Policy, now: float) -> list[PlanResult]:
    """Every log finding as of ``now``. Logs are only read, so no zone or threshold applies;
    the policy says whether ``low_mood`` is looked for."""
    results: list[PlanResult] = []
    failing: list[PlanResult] = []
    today = datetime.fromtimestamp(now).date()
    with Tree(root) as tree:
        logs = list_logs(tree, now)
        for f in logs.scripts:
            read = read_text(tree, f, limit=TAIL_BYTES, tail=True)
            if read is None:
                continue
            text, first = read
            written = f.identity.mtime_ns / 1e9
            found = detect_failures(f.path, text, first, written, now)
            if found is not None:
                failing.append(found)
        days: list[tuple[date, str, list[Paragraph]]] = []
        for day, f in logs.chats:
            if not today - timedelta(days=MAX_AGE_DAYS) <= day <= today:
                continue
            read = read_text(tree, f, limit=MAX_DAY_BYTES, tail=False)
            if read is not None:
                days.append((day, f.path, parse(read[0])))
        results += detect_routine(tree, policy, days, now)
    results += [with_person_notes(found, days, now) for found in failing]
    long_hours = detect_long_hours(days, now)
    if long_hours is not None:
        results.append(long_hours)
    results += detect_pending(days, now)
    if policy.monitor.low_mood:
        low_mood = detect_low_mood(days, now)
        if low_mood is not None:
            results.append(low_mood)
    return results
