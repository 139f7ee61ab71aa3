"""Reading ``logs/`` for the detectors: listed and opened through fds, never through a link.

``logs/alma/`` (the daemon's own reports) is left out, so ALMA never reacts to what it wrote.
Files are read up to a bound: the tail of a script log (the recent failures are at its end),
the head of a chat log (a day's chat is small; a huge one is not a chat log).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from actions.planners.base import fingerprint
from actions.safe_read import read_file
from actions.scan import ScannedFile, scan_tree
from actions.tree import Tree
from policies.errors import RefusedError
from state.chatlog import LOGS, REPORTS, day_of

TAIL_BYTES = 4 << 20  # per script log


def last_days(now: float, days: int) -> tuple[date, date]:
    """(first, today): the ``days`` local days that end today, today included."""
    today = datetime.fromtimestamp(now).date()
    return today - timedelta(days=days - 1), today


def weekly_fingerprint(kind: str, day: date) -> str:
    """The fingerprint of a finding about the chat logs that comes at most once in ``day``'s
    ISO week."""
    year, week, _weekday = day.isocalendar()
    return fingerprint(kind, "logs", [f"{year}-W{week:02d}"])


@dataclass(frozen=True)
class LogFiles:
    scripts: list[ScannedFile]  # logs/**/*.log
    chats: list[tuple[date, ScannedFile]]  # logs/**/YYYY-MM-DD.md, oldest first


def list_logs(tree: Tree, now: float) -> LogFiles:
    try:
        # reading needs no settling: a log being written is read as it is now
        scan = scan_tree(tree, LOGS, now=now, settle_seconds=None, exclude=[REPORTS])
    except (FileNotFoundError, NotADirectoryError, RefusedError):
        return LogFiles([], [])
    scripts = [f for f in scan.files if f.name.endswith(".log")]
    chats: list[tuple[date, ScannedFile]] = []
    for f in scan.files:
        day = day_of(f.name)
        if day is not None:
            chats.append((day, f))
    chats.sort(key=lambda c: (c[0], c[1].path))
    return LogFiles(sorted(scripts, key=lambda f: f.path), chats)


def read_text(tree: Tree, f: ScannedFile, *, limit: int, tail: bool) -> tuple[str, int] | None:
    """(text, number of the first line it holds, 1-based; 0 when unknown because cut)."""
    read = read_file(tree, f.path, limit=limit, tail=tail)
    if read is None:
        return None
    data = read.data
    if read.offset:
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""  # drop the cut first line
    return data.decode("utf-8", errors="replace"), 0 if read.offset else 1
