"""The daemon's one watcher (watchdog): the writable zones and the logs. Every event pokes the
analysis (:class:`Debouncer`: once things are quiet) and, for ``logs/*.md``, memory ingestion.

Only creations, moves, deletions and closes-after-write are asked of the kernel (a narrow
``event_filter``): a burst of plain modifications can overflow the inotify queue and lose
events. Lost events are covered anyway by the scheduled rescan (agent.schedule).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

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
from watchdog.observers import Observer

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


class Watcher:
    def __init__(self, paths: Sequence[Path], on_event: Callable[[FileSystemEvent], None]) -> None:
        self.observer = Observer()
        handler = _Handler(on_event)
        for path in paths:
            if path.is_dir() and not path.is_symlink():
                self.observer.schedule(handler, str(path), recursive=True, event_filter=EVENTS)
            else:
                log.warning("not watching %s: not a folder", path)

    def start(self) -> None:
        self.observer.start()

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=5)
