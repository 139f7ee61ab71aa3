"""The daemon's one watcher: the writable zones and the logs, every folder below them, on one
inotify instance. Every batch of events pokes the analysis (:class:`Debouncer`: once things are
quiet) and names the chat logs touched (``logs/*.md``) for memory ingestion.

The events are read in bulk and never paired or turned into objects: what the daemon needs is
that something changed, which chat logs, and which new folders need a watch. An action of
100,000 moves is 200,000 events, and each costs a header read here. inotify is read directly
because the bulk is the point: a library that pairs each ``IN_MOVED_TO`` with its
``IN_MOVED_FROM`` (watchdog holds each for half a second and searches its queue for it) spends
CPU that grows with the square of an action's size (docs/benchmarks.md).

Only creations, moves, deletions and closes-after-write are asked of the kernel: a burst of
plain modifications could overflow its queue. An overflow (events lost) walks the folders again,
and the scheduled rescan (agent.schedule) covers whatever the events missed.

A folder costs one inotify watch, and the kernel caps them per user
(``fs.inotify.max_user_watches``). The walk that sets the watches up counts every folder and
every watch refused, so ``alma-ctl status`` shows the folders left out with the ``sysctl`` that
raises the limit; the rescan still sees them, and each rescan watches them once the kernel
grants one more watch (after the person raised the limit, it does).
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import select
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from actions import inotify
from policies.i18n import _, ngettext
from policies.results import WatchStatus

log = logging.getLogger("alma.watch")

#: What is asked of the kernel for every folder (never through a link, folders only).
MASK = (
    inotify.IN_CREATE
    | inotify.IN_DELETE
    | inotify.IN_MOVED_FROM
    | inotify.IN_MOVED_TO
    | inotify.IN_CLOSE_WRITE
    | inotify.IN_ONLYDIR
    | inotify.IN_DONT_FOLLOW
    | inotify.IN_EXCL_UNLINK
)
#: One read of the descriptor: up to about 25,000 events of a move.
READ_BYTES = 1 << 20
#: After a batch, the events gather this long before the next read: a reader faster than the
#: executor woke for every few events of an action and took the GIL from the daemon's own work
#: each time. At 100,000 events a second that is 2,000 events, far from the kernel's queue
#: (``fs.inotify.max_queued_events``, 16,384 by default); nothing waits on them but a debounce.
GATHER_SECONDS = 0.02


class Debouncer:
    """Calls ``fn`` once, ``delay`` seconds after the last poke (and again ``later`` seconds
    after that, so files too new to touch at the first call are seen once they settle).

    A poke only moves the deadlines: the watcher pokes once a batch of events, hundreds of
    times during one action. One thread waits for them, and ends once nothing is due."""

    def __init__(self, fn: Callable[[], None], delay: float, later: Callable[[], float]) -> None:
        self.fn = fn
        self.delay = delay
        self.later = later
        self._cond = threading.Condition()
        self._due: list[float] = []  # the calls to make, soonest first
        self._waiting = False  # a thread is waiting for them
        self._closed = False

    def poke(self) -> None:
        settle = self.later()
        with self._cond:
            if self._closed:
                return
            first = time.monotonic() + self.delay
            self._due = [first, first + settle + 1.0] if settle > 0 else [first]
            if self._waiting:
                self._cond.notify()
            else:
                self._waiting = True
                threading.Thread(target=self._wait, name="alma-debounce", daemon=True).start()

    def _wait(self) -> None:
        with self._cond:
            while not self._closed and self._due:
                left = self._due[0] - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._due.pop(0)
                self._cond.release()
                try:
                    self.fn()
                except Exception:  # a callback's failure must not kill the watcher; the log has it
                    log.exception("analysis after file events failed")
                finally:
                    self._cond.acquire()
            self._waiting = False

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()


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


def may_add_watch(path: Path) -> bool | None:
    """Whether the kernel grants this user one more inotify watch (on ``path``, at once
    removed): False at the limit (``ENOSPC``), None when it cannot be asked (no inotify
    instance to spare, or another error)."""
    try:
        fd = inotify.init()
    except OSError:
        return None
    try:
        inotify.add_watch(fd, os.fsencode(path), inotify.IN_DELETE_SELF)
        return True
    except OSError as exc:
        return False if exc.errno == errno.ENOSPC else None
    finally:
        os.close(fd)  # the watch goes with it


def suggested_limit(limit: int, missing: int) -> int:
    """A limit with room for every folder and for growth: the next power of two above the
    current limit plus twice what is missing (the person's other programs use watches too)."""
    return 1 << (limit + 2 * missing - 1).bit_length()


class Watcher:
    """Every folder below ``paths`` watched, and an account of how many the kernel refused.

    One thread owns the watches: it sets them up (:meth:`start`, :meth:`refresh` ask it and
    wait), reads the events, watches each new folder and drops the watches of a folder moved
    away. ``on_change`` is called from it once per batch of events, with the names of the files
    of ``names_of`` (a folder among ``paths``) that the batch touched."""

    def __init__(
        self,
        paths: Sequence[Path],
        on_change: Callable[[list[str]], None],
        *,
        names_of: Path | None = None,
        limit: Callable[[], int | None] = watch_limit,
        may_add: Callable[[Path], bool | None] = may_add_watch,
    ) -> None:
        real = [p for p in dict.fromkeys(paths) if p.is_dir() and not p.is_symlink()]
        for path in paths:
            if path not in real:
                log.warning("not watching %s: not a folder", path)
        # A path inside another is watched as part of it (the kernel has one watch a folder).
        tops = [p for p in real if not any(o != p and p.is_relative_to(o) for o in real)]
        self._tops = [os.fsencode(p) for p in tops]
        self._names_of = os.fsencode(names_of) if names_of is not None else None
        self._on_change = on_change
        self._limit = limit
        self._may_add = may_add
        self._lock = threading.Lock()  # the account below, read by `status`
        self._ready = False
        self._folders = 0
        self._watches = 0
        self._max: int | None = None
        self._seconds = 0.0
        # The watch thread's own: the descriptor, each watch's folder and back.
        self._fd = -1
        self._paths: dict[int, bytes] = {}
        self._wds: dict[bytes, int] = {}
        self._refused = 0  # folders whose watch the kernel refused at the last walk, and since
        self._requests: queue.SimpleQueue[tuple[str, threading.Event]] = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None

    # -- asked from other threads ----------------------------------------------------------
    def start(self) -> None:
        """Watch every folder (a walk of them all: seconds for tens of thousands) and count
        what the kernel refused; returns once that is done. Without an inotify instance to
        spare nothing is watched (logged); the rescan still covers every folder."""
        try:
            self._fd = inotify.init()
        except OSError as exc:
            log.error("cannot watch any folder (%s); the periodic rescan still covers them", exc)
        self._thread = threading.Thread(target=self._run, name="alma-watch", daemon=True)
        self._thread.start()
        self._ask("walk")

    def refresh(self) -> None:
        """If some folders went unwatched, walk them all again: the limit may have been raised,
        or watches freed, since. Called before each periodic rescan. Not while one more watch
        is still refused: the walk would get the same watches (seconds at 200,000 files)."""
        with self._lock:
            short = self._ready and self._folders > self._watches
        if short and self._tops and self._may_add(Path(os.fsdecode(self._tops[0]))) is False:
            log.info("some folders are not watched and the inotify limit is still reached")
            return
        if short:
            log.info("some folders are not watched: setting the watches up again")
            self._ask("walk")

    @property
    def ready(self) -> bool:
        with self._lock:
            return self._ready

    def status(self, rescan_minutes: int) -> WatchStatus:
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
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._ask("stop", wait=5.0)
            thread.join(timeout=5)
        for fd in (self._fd, self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._fd = self._wake_r = self._wake_w = -1

    def _ask(self, what: str, wait: float | None = None) -> None:
        done = threading.Event()
        self._requests.put((what, done))
        os.write(self._wake_w, b"!")
        done.wait(wait)

    # -- the watch thread ------------------------------------------------------------------
    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        if self._fd >= 0:
            poller.register(self._fd, select.POLLIN)
        while True:
            for fd, _mask in poller.poll():
                if fd != self._wake_r:
                    self._guarded(self._read)
                    time.sleep(GATHER_SECONDS)
                    continue
                os.read(self._wake_r, 4096)
                while not self._requests.empty():
                    what, done = self._requests.get()
                    try:
                        if what == "stop":
                            return
                        self._guarded(self._walk_all)
                    finally:
                        done.set()

    @staticmethod
    def _guarded(step: Callable[[], None]) -> None:
        try:
            step()
        except Exception:  # the watcher must outlive any one batch; the log has the cause
            log.exception("the watcher failed on a batch of events; the rescan covers it")

    def _read(self) -> None:
        try:
            data = os.read(self._fd, READ_BYTES)
        except BlockingIOError:
            return
        self._handle(data)

    def _handle(self, data: bytes) -> None:
        """One read's events: watches for new folders, none for folders moved away, a walk of
        everything after an overflow, then ``on_change`` if anything changed."""
        names: set[bytes] = set()
        new: list[bytes] = []
        gone: set[bytes] = set()
        changed = overflow = False
        paths = self._paths
        names_wd = self._wds.get(self._names_of, -2) if self._names_of is not None else -2
        for wd, mask, _cookie, name in inotify.events(data):
            if mask & inotify.IN_IGNORED:  # the folder was removed, or its watch dropped
                folder = paths.pop(wd, None)
                if folder is not None and self._wds.get(folder) == wd:
                    del self._wds[folder]
                continue
            changed = True
            if mask & inotify.IN_Q_OVERFLOW:
                overflow = True
            elif mask & inotify.IN_ISDIR:
                parent = paths.get(wd)
                if parent is not None and name:
                    if mask & (inotify.IN_CREATE | inotify.IN_MOVED_TO):
                        new.append(parent + b"/" + name)
                    elif mask & inotify.IN_MOVED_FROM:
                        gone.add(parent + b"/" + name)
            elif wd == names_wd and name:
                names.add(name)
        if gone:
            self._unwatch(gone)  # first: a folder moved within the roots is walked anew below
        if overflow:
            log.warning("the kernel's inotify queue overflowed: walking every folder again")
            self._walk_all()
        else:
            for folder in new:
                self._walk(folder)
            self._count()
        if changed:
            self._on_change(sorted(os.fsdecode(n) for n in names))

    def _walk_all(self) -> None:
        started = time.monotonic()
        with self._lock:
            self._ready = False
        self._refused = 0
        for top in self._tops:
            self._walk(top)
        limit = self._limit()
        with self._lock:
            self._max = limit
            self._seconds = time.monotonic() - started
            self._ready = True
        folders, watches = self._count()
        if watches < folders:
            log.warning(
                "%d of %d folders not watched (inotify limit %s)", folders - watches, folders, limit
            )
        else:
            log.info("watching %d folders (%.1f s to set up)", folders, self._seconds)

    def _walk(self, top: bytes) -> None:
        """Watch ``top`` and every folder below it, never through a link."""
        stack = [top]
        while stack:
            folder = stack.pop()
            try:
                if self._fd < 0:
                    raise OSError(errno.EBADF, "no inotify instance")
                wd = inotify.add_watch(self._fd, folder, MASK)
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EBADF):
                    # Gone meanwhile, not a folder (a link, with IN_DONT_FOLLOW), or not ours
                    # to read: the rescan cannot list it either.
                    log.debug("not watching %r: %s", folder, exc)
                    continue
                self._refused += 1  # the limit (or no instance): still counted, and walked
            else:
                known = self._paths.get(wd)
                if known is not None and known != folder and self._wds.get(known) == wd:
                    del self._wds[known]  # the same folder, seen under its new path
                self._paths[wd] = folder
                self._wds[folder] = wd
            try:
                with os.scandir(folder) as entries:
                    stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
            except OSError:  # gone or unreadable meanwhile
                continue

    def _unwatch(self, gone: set[bytes]) -> None:
        """Drop the watches of the folders moved away and of every folder below them: they are
        no longer where their paths say (one moved within the roots is walked again)."""
        for folder in [f for f in self._wds if _below_any(f, gone)]:
            wd = self._wds.pop(folder)
            self._paths.pop(wd, None)
            try:
                inotify.rm_watch(self._fd, wd)
            except OSError:  # nothing to drop: the kernel's own IN_IGNORED is on its way
                continue

    def _count(self) -> tuple[int, int]:
        watches = len(self._paths)
        folders = watches + self._refused
        with self._lock:
            self._folders, self._watches = folders, watches
        return folders, watches


def _below_any(folder: bytes, tops: set[bytes]) -> bool:
    """``folder`` is one of ``tops`` or below one of them."""
    while folder:
        if folder in tops:
            return True
        folder, sep, _name = folder.rpartition(b"/")
        if not sep:
            return False
    return False
