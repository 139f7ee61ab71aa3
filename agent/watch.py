"""The daemon's one watcher (watchdog): the writable zones and the logs. Every event pokes the
analysis (:class:`Debouncer`: once things are quiet) and, for ``logs/*.md``, memory ingestion.

Only creations, moves, deletions and closes-after-write are asked of the kernel (a narrow
``event_filter``): a burst of plain modifications can overflow the inotify queue and lose
events. Lost events are covered anyway by the scheduled rescan (agent.schedule).

A recursive watch costs one inotify watch per folder, and the kernel caps them per user
(``fs.inotify.max_user_watches``). watchdog skips, without a word, every subfolder it cannot
watch, so the :class:`Watcher` asks the kernel after the set-up: the watches this process holds
and, when one more watch is refused (the limit is reached), how many folders there are. ``alma-ctl status`` shows the difference with
the ``sysctl`` that raises the limit; the folders left out are still seen by the rescan, and
each rescan tries to watch them again once the kernel grants one more watch (after the person
raised the limit, it succeeds).
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer, inotify_c

from policies.i18n import _, ngettext

log = logging.getLogger("alma.watch")
EVENTS = [
    FileCreatedEvent,
    DirCreatedEvent,
    FileMovedEvent,
    DirMovedEvent,
    FileDeletedEvent,
    DirDeletedEvent,
    FileClosedEvent,
]


class Debouncer:
    """Calls ``fn`` once, ``delay`` seconds after the last poke (and again ``later`` seconds
    after that, so files too new to touch at the first call are seen once they settle)."""

    def __init__(self, fn: Callable[[], None], delay: float, later: Callable[[], float]) -> None:
        self.fn = fn
        self.delay = delay
        self.later = later
        self._timers: list[threading.Timer] = []
        self._lock = threading.Lock()
        self._closed = False

    def poke(self) -> None:
        with self._lock:
            if self._closed:
                return
            for timer in self._timers:
                timer.cancel()
            self._timers = [self._timer(self.delay)]
            settle = self.later()
            if settle > 0:
                self._timers.append(self._timer(self.delay + settle + 1.0))

    def _timer(self, seconds: float) -> threading.Timer:
        timer = threading.Timer(seconds, self._fire)
        timer.daemon = True
        timer.start()
        return timer

    def _fire(self) -> None:
        try:
            self.fn()
        except Exception:  # a callback's failure must not kill the watcher; the log has it
            log.exception("analysis after file events failed")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for timer in self._timers:
                timer.cancel()


def chat_logs_touched(event: FileSystemEvent, logs: Path) -> list[str]:
    """Names of the ``logs/*.md`` files an event is about (a move has two paths)."""
    if event.is_directory:
        return []
    names = []
    for raw in (event.src_path, getattr(event, "dest_path", "")):
        path = Path(os.fsdecode(raw)) if raw else None
        if path is not None and path.parent == logs and path.suffix == ".md":
            names.append(path.name)
    return names


class _Handler(FileSystemEventHandler):
    def __init__(self, poke: Callable[[FileSystemEvent], None]) -> None:
        self._poke = poke

    def on_any_event(self, event: FileSystemEvent) -> None:
        self._poke(event)


#: The kernel's caps on inotify watches per user: the system's, and (Linux 5.11+) the user
#: namespace's, which may be lower (a container); the smaller one applies.
LIMIT_FILES = ("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches")


def watch_limit(files: Sequence[str] = LIMIT_FILES) -> int | None:
    """The number of inotify watches this process's user may hold, None if unknown."""
    values = []
    for name in files:
        try:
            with open(name, "rb") as f:
                values.append(int(f.read()))
        except (OSError, ValueError):
            continue
    return min(values) if values else None


def inotify_watches(proc: str = "/proc/self") -> int:
    """The inotify watches this process holds, as the kernel counts them: ``fdinfo`` lists one
    ``inotify wd:`` line per watch of each inotify descriptor."""
    count = 0
    for fd in os.listdir(f"{proc}/fd"):
        try:
            if os.readlink(f"{proc}/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"{proc}/fdinfo/{fd}", "rb") as f:
                count += sum(1 for line in f if line.startswith(b"inotify wd:"))
        except OSError:  # closed meanwhile
            continue
    return count


def count_folders(top: Path) -> int:
    """``top`` and the folders below it that a recursive watch needs a watch for: every real
    folder (watchdog walks them all and never follows a link)."""
    count = 0
    stack = [os.fspath(top)]
    while stack:
        path = stack.pop()
        count += 1
        try:
            with os.scandir(path) as entries:
                stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:  # gone or unreadable meanwhile: watchdog cannot watch it either
            continue
    return count


def may_add_watch(path: Path) -> bool | None:
    """Whether the kernel grants this user one more inotify watch (on ``path``, at once
    removed): False at the limit (``ENOSPC``), None when it cannot be asked (no inotify
    instance to spare, or another error)."""
    fd = inotify_c.inotify_init()
    if fd < 0:
        return None
    try:
        mask = inotify_c.InotifyConstants.IN_DELETE_SELF
        if inotify_c.inotify_add_watch(fd, os.fsencode(path), mask) >= 0:
            return True
        return False if ctypes.get_errno() == errno.ENOSPC else None
    finally:
        os.close(fd)  # the watch goes with it


def suggested_limit(limit: int, missing: int) -> int:
    """A limit with room for every folder and for growth: the next power of two above the
    current limit plus twice what is missing (the person's other programs use watches too)."""
    return 1 << (limit + 2 * missing - 1).bit_length()


class Watcher:
    """watchdog's observer on the given folders, recursively, and an account of how many of
    their folders the kernel actually watches."""

    def __init__(
        self,
        paths: Sequence[Path],
        on_event: Callable[[FileSystemEvent], None],
        *,
        limit: Callable[[], int | None] = watch_limit,
        held: Callable[[], int] = inotify_watches,
        may_add: Callable[[Path], bool | None] = may_add_watch,
    ) -> None:
        self.observer = Observer()
        self._handler = _Handler(on_event)
        self._paths = [p for p in paths if p.is_dir() and not p.is_symlink()]
        for path in paths:
            if path not in self._paths:
                log.warning("not watching %s: not a folder", path)
        self._limit = limit
        self._held = held
        self._may_add = may_add
        self._lock = threading.Lock()
        self._ready = False
        self._folders = 0
        self._watches = 0
        self._max: int | None = None
        self._seconds = 0.0

    def start(self) -> None:
        """Watch every path (this walks all their folders: seconds for tens of thousands) and
        count what the kernel granted. A path that cannot be watched at all is logged; the
        rescan still covers it."""
        self.observer.start()
        self._watch_all()

    def refresh(self) -> None:
        """If some folders went unwatched, watch everything again: the limit may have been
        raised, or watches freed, since. Called before each periodic rescan. Not while one more
        watch is still refused: it would drop every watch and walk the whole tree to get the
        same ones back (seconds of CPU at 200,000 files, each rescan)."""
        with self._lock:
            short = self._ready and self._folders > self._watches
        if short and self._may_add(self._paths[0]) is False:
            log.info("some folders are not watched and the inotify limit is still reached")
            return
        if short:
            log.info("some folders are not watched: setting the watches up again")
            self.observer.unschedule_all()
            self._watch_all()

    def _watch_all(self) -> None:
        started = time.monotonic()
        with self._lock:
            self._ready = False
        for path in self._paths:
            try:
                self.observer.schedule(
                    self._handler, str(path), recursive=True, event_filter=EVENTS
                )
            except OSError as exc:  # the limit reached before this path's own watch, or gone
                log.error("cannot watch %s: %s; the periodic rescan still covers it", path, exc)
        watches, limit = self._held(), self._limit()
        folders = watches
        # watchdog skips silently what it cannot watch. Only at the limit (one more watch
        # refused) are the folders counted: a second walk of the whole tree, a third of the
        # set-up's cost (docs/benchmarks.md).
        if self._paths and self._may_add(self._paths[0]) is not True:
            # A path inside another shares its watches (the kernel has one per folder).
            tops = [
                p
                for p in self._paths
                if not any(o != p and p.is_relative_to(o) for o in self._paths)
            ]
            folders = max(watches, sum(count_folders(p) for p in dict.fromkeys(tops)))
        with self._lock:
            self._folders, self._watches, self._max = folders, watches, limit
            self._seconds = time.monotonic() - started
            self._ready = True
        if watches < folders:
            log.warning(
                "%d of %d folders not watched (inotify limit %s)", folders - watches, folders, limit
            )
        else:
            log.info("watching %d folders (%.1f s to set up)", folders, self._seconds)

    @property
    def ready(self) -> bool:
        with self._lock:
            return self._ready

    def status(self, rescan_minutes: int) -> dict[str, Any]:
        """The watch set-up as ``status`` reports it (docs/protocol.md)."""
        with self._lock:
            ready, folders, watches, limit = self._ready, self._folders, self._watches, self._max
            seconds = self._seconds
        missing = max(0, folders - watches) if ready else 0
        warning = None
        if missing:
            warning = (
                ngettext(
                    "{n} folder of {total} is not watched: the system's limit of inotify watches "
                    "({limit} per user) is reached.",
                    "{n} folders of {total} are not watched: the system's limit of inotify watches "
                    "({limit} per user) is reached.",
                    missing,
                    total=folders,
                    limit=limit if limit is not None else "?",
                )
                + " "
                + _(
                    "Changes in them are seen at the periodic rescan (every {minutes} minutes). To "
                    "watch them all, run as root `sysctl fs.inotify.max_user_watches={suggested}` "
                    "(and put it in /etc/sysctl.d/ to keep it); ALMA watches them at its next rescan.",
                    minutes=rescan_minutes,
                    suggested=suggested_limit(limit or watches, missing),
                )
            )
        return {
            "ready": ready,
            "folders": folders if ready else None,
            "watches": watches if ready else None,
            "limit": limit,
            "unwatched": missing,
            "setup_seconds": round(seconds, 1) if ready else None,
            "warning": warning,
        }

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=5)
