"""Following the chat logs: watchdog events wake a worker thread, a periodic rescan covers
whatever inotify dropped (its queue overflows under bursts; see shared/stack.md)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from agent.memory.ingest import LogIngestor

log = logging.getLogger(__name__)


class _Handler(FileSystemEventHandler):
    def __init__(self, worker: IngestWorker) -> None:
        self._worker = worker

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = Path(raw if isinstance(raw, str) else raw.decode())
            if raw and path.suffix == ".md":
                self._worker.poke(path)


class IngestWorker:
    def __init__(self, ingestor: LogIngestor, *, rescan_seconds: float = 60.0) -> None:
        self._ingestor = ingestor
        self._rescan_seconds = rescan_seconds
        self._dirty: set[Path] = set()
        self._cond = threading.Condition()
        self._busy = False
        self._stop = False
        self._observer: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        logs = self._ingestor.layout.logs
        logs.mkdir(parents=True, exist_ok=True)
        self._observer = Observer()
        self._observer.schedule(_Handler(self), str(logs), recursive=False)
        self._observer.start()
        self._busy = True  # the first pass catches up with what happened while stopped
        self._thread = threading.Thread(target=self._run, name="alma-memory-ingest", daemon=True)
        self._thread.start()

    def poke(self, path: Path) -> None:
        with self._cond:
            self._dirty.add(path)
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """True once nothing is queued or running (tests and shutdown use it)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._dirty and not self._busy, timeout)

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=10)
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._thread = None

    def _run(self) -> None:
        try:
            self._pass(None)
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
        while True:
            with self._cond:
                if not self._dirty and not self._stop:
                    self._cond.wait(self._rescan_seconds)
                if self._stop:
                    return
                paths = set(self._dirty) if self._dirty else None
                self._dirty.clear()
                self._busy = True
            try:
                self._pass(paths)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _pass(self, paths: set[Path] | None) -> None:
        try:
            if paths is None:
                self._ingestor.rescan()
            else:
                for path in sorted(paths):
                    if path.parent == self._ingestor.layout.logs and path.exists():
                        self._ingestor.ingest_file(path)
        except Exception:
            log.exception("memory ingestion pass failed; the next event or rescan retries")
