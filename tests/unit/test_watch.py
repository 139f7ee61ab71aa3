"""The watcher (agent.watch): every folder below its paths watched on one inotify instance,
new folders watched as they come, folders moved away dropped, the chat logs touched named, and
the kernel's limit on watches counted, reported with the sysctl that raises it, while the daemon
keeps watching what it can."""

from __future__ import annotations

import errno
import json
import os
import shutil
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from actions import inotify
from agent.watch import Debouncer, Watcher, may_add_watch, suggested_limit, watch_limit
from policies.i18n import language
from tests.support.daemon import wait_for


def make_tree(top: Path, folders: int) -> None:
    """``folders`` folders below ``top`` (two levels), a file in each."""
    for i in range(folders):
        d = top / f"g{i % 5}" / f"d{i}" if i >= 5 else top / f"g{i}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "f.txt").write_text("x")


#: What on_change was called with, batch by batch.
Batches = list[list[str]]


@pytest.fixture
def events() -> Batches:
    return []


@pytest.fixture
def watcher_on(events: Batches) -> Iterator[Callable[..., Watcher]]:
    made: list[Watcher] = []

    def make(top: Path, names_of: Path | None = None) -> Watcher:
        w = Watcher([top], events.append, names_of=names_of)
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop()


def inotify_watches() -> int:
    """The inotify watches this process holds, as the kernel counts them: ``fdinfo`` lists one
    ``inotify wd:`` line per watch of each inotify descriptor."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", "rb") as f:
                count += sum(1 for line in f if line.startswith(b"inotify wd:"))
        except OSError:  # closed meanwhile
            continue
    return count


def limit_add_watch(monkeypatch: pytest.MonkeyPatch, allowed: int) -> list[int]:
    """The kernel's edge: after ``allowed`` watches, inotify_add_watch fails as the kernel does
    at the per-user limit (ENOSPC). Returns the counter of the watches granted."""
    real = inotify.add_watch
    granted = [0]

    def add_watch(fd: int, path: bytes, mask: int) -> int:
        wd = real(fd, path, mask)
        if granted[0] >= allowed:
            inotify.rm_watch(fd, wd)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        granted[0] += 1
        return wd

    monkeypatch.setattr(inotify, "add_watch", add_watch)
    return granted


def called_after(events: Batches, n: int, what: str) -> list[str]:
    """The names of the first batch after the ``n`` first ones, once it came."""
    wait_for(lambda: len(events) > n, timeout=30, what=what)
    return events[n]


def names_since(events: Batches, n: int) -> set[str]:
    return {name for batch in events[n:] for name in batch}


def test_every_folder_is_counted_and_watched(
    tmp_path: Path, watcher_on: Callable[..., Watcher], events: Batches
) -> None:
    make_tree(tmp_path, 40)
    (tmp_path / "link").symlink_to(tmp_path / "g1")  # never followed, never counted
    before = inotify_watches()
    deepest = tmp_path / "g3" / "d8"
    w = watcher_on(tmp_path, names_of=deepest)
    assert not w.ready and w.status(10)["ready"] is False
    w.start()
    st = w.status(10)
    assert st["ready"] is True
    assert st["folders"] == 41 and st["unwatched"] == 0 and st["warning"] is None
    assert st["watches"] == 41 and inotify_watches() - before == 41  # the kernel's own count
    assert may_add_watch(tmp_path) is True and inotify_watches() - before == 41
    assert st["limit"] == watch_limit() and isinstance(st["limit"], int)
    (deepest / "new.txt").write_text("y")  # the deepest level is watched
    assert called_after(events, 0, "an event for a file in a subfolder") == ["new.txt"]


def test_the_limit_reached_is_reported_with_the_sysctl_and_watching_goes_on(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    watcher_on: Callable[[Path], Watcher],
    events: Batches,
) -> None:
    make_tree(tmp_path, 30)  # 31 folders with the top
    limit_add_watch(monkeypatch, 10)
    w = Watcher([tmp_path], events.append, names_of=tmp_path, limit=lambda: 10)
    try:
        w.start()  # no exception: what cannot be watched is counted
        assert may_add_watch(tmp_path) is False
        st = w.status(10)
        assert st["ready"] is True and st["folders"] == 31
        assert st["watches"] == 10 and st["unwatched"] == 21 and st["limit"] == 10
        assert st["warning"] == (
            "21 folders of 31 are not watched: the system's limit of inotify watches (10 per "
            "user) is reached. Changes in them are seen at the periodic rescan (every 10 "
            "minutes). To watch them all, run as root `sysctl fs.inotify.max_user_watches=64` "
            "(and put it in /etc/sysctl.d/ to keep it); ALMA watches them at its next rescan."
        )
        with language("es"):
            es = w.status(10)["warning"]
        assert es is not None
        assert es.startswith("21 carpetas de 31 no se vigilan:")
        assert "`sysctl fs.inotify.max_user_watches=64`" in es and "próxima revisión" in es
        # The top is watched: the daemon still hears what happens there.
        (tmp_path / "top.txt").write_text("y")
        assert called_after(events, 0, "an event in the watched top folder") == ["top.txt"]
        # The person raised the limit: the next rescan's refresh watches everything.
        monkeypatch.undo()
        w._limit = watch_limit  # the raised limit, as the kernel now reports it
        w.refresh()
        st = w.status(10)
        assert st["unwatched"] == 0 and st["warning"] is None and st["watches"] == 31
    finally:
        w.stop()


def test_a_folder_the_kernel_will_not_watch_for_another_reason_is_not_blamed_on_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watcher_on: Callable[..., Watcher]
) -> None:
    make_tree(tmp_path, 6)  # 7 folders with the top
    real = inotify.add_watch

    def add_watch(fd: int, path: bytes, mask: int) -> int:
        if path.endswith(b"/g2"):  # not ours to read (only root reads every folder)
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        return real(fd, path, mask)

    monkeypatch.setattr(inotify, "add_watch", add_watch)
    w = watcher_on(tmp_path)
    w.start()
    st = w.status(10)
    assert st["watches"] == 6 and st["unwatched"] == 0 and st["warning"] is None


def test_a_zone_whose_own_watch_fails_does_not_stop_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: Batches
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_tree(a, 3)
    make_tree(b, 3)
    limit_add_watch(monkeypatch, 0)
    w = Watcher([a, b], events.append, limit=lambda: 0)
    try:
        w.start()
        st = w.status(10)
        assert st["ready"] is True and st["folders"] == 8 and st["watches"] == 0
        assert st["unwatched"] == 8
        assert "8 folders of 8 are not watched" in str(st["warning"])
    finally:
        w.stop()


def test_overlapping_paths_count_each_folder_once(tmp_path: Path) -> None:
    make_tree(tmp_path, 6)
    w = Watcher([tmp_path, tmp_path / "g1"], lambda e: None)
    try:
        w.start()
        st = w.status(10)
        assert st["folders"] == 7 and st["watches"] == 7 and st["warning"] is None
    finally:
        w.stop()


@pytest.mark.parametrize(
    ("limit", "missing", "suggested"),
    [(10, 21, 64), (8192, 1, 16384), (192536, 10000, 262144), (65536, 0, 65536)],
)
def test_the_suggested_limit_leaves_room(limit: int, missing: int, suggested: int) -> None:
    assert suggested_limit(limit, missing) == suggested
    assert suggested >= limit + missing


def test_the_limit_is_the_smaller_of_the_system_and_the_namespace(tmp_path: Path) -> None:
    (tmp_path / "sys").write_text("8192\n")
    (tmp_path / "ns").write_text("100\n")
    (tmp_path / "bad").write_text("x\n")
    assert watch_limit([str(tmp_path / "sys"), str(tmp_path / "ns")]) == 100
    assert watch_limit([str(tmp_path / "sys"), str(tmp_path / "missing")]) == 8192
    assert watch_limit([str(tmp_path / "bad")]) is None


REAL_LIMIT = """
import json, sys, threading
from pathlib import Path
with open("/proc/sys/user/max_inotify_watches", "w") as f:
    f.write("20")
from agent.watch import Watcher
w = Watcher([Path(sys.argv[1])], lambda e: None)
w.start()
print(json.dumps(w.status(10)))
w.stop()
"""


def test_the_real_kernel_limit_in_a_user_namespace(tmp_path: Path) -> None:
    """The kernel's own ENOSPC: a user namespace of this test's own gets a limit of 20 watches
    (``user.max_inotify_watches``; the system's limit is not touched)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = subprocess.run(
        [unshare, "--user", "--map-root-user", "true"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"user namespaces are not available here: {probe.stderr.decode().strip()}")
    make_tree(tmp_path / "top", 49)
    done = subprocess.run(
        [
            unshare,
            "--user",
            "--map-root-user",
            sys.executable,
            "-c",
            REAL_LIMIT,
            str(tmp_path / "top"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0 and "max_inotify_watches" in done.stderr:
        pytest.skip(f"this kernel has no per-namespace inotify limit: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    st = json.loads(done.stdout)
    assert st["limit"] == 20 and st["folders"] == 50
    assert st["watches"] == 20 and st["unwatched"] == 30
    assert "sysctl fs.inotify.max_user_watches=128" in st["warning"]


def test_status_is_safe_to_ask_while_the_watches_are_set_up(tmp_path: Path) -> None:
    make_tree(tmp_path, 200)
    w = Watcher([tmp_path], lambda e: None)
    seen: list[bool] = []
    stop = threading.Event()

    def ask() -> None:
        while not stop.is_set():
            seen.append(bool(w.status(10)["ready"]))

    t = threading.Thread(target=ask)
    t.start()
    try:
        w.start()
    finally:
        stop.set()
        t.join()
        w.stop()
    assert seen and w.status(10)["folders"] == 201


def test_a_rescan_at_the_limit_does_not_set_every_watch_up_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: Batches
) -> None:
    """refresh() (before each periodic rescan) walks the whole tree again to set the watches
    up: worth it once the limit was raised or watches freed, wasted while one more watch is
    still refused (seconds of CPU at 200,000 files, every rescan)."""
    make_tree(tmp_path, 30)
    limit_add_watch(monkeypatch, 10)
    w = Watcher([tmp_path], events.append, limit=lambda: 10)
    walks = [0]
    real_walk_all = w._walk_all

    def walk_all() -> None:
        walks[0] += 1
        real_walk_all()

    monkeypatch.setattr(w, "_walk_all", walk_all)
    try:
        w.start()
        assert walks[0] == 1 and w.status(10)["unwatched"] == 21
        w.refresh()  # still at the limit: nothing to gain
        assert walks[0] == 1
        assert w.status(10)["unwatched"] == 21 and w.ready
        monkeypatch.setattr(inotify, "add_watch", _real_add_watch)  # room again
        w._limit = watch_limit
        w.refresh()
        assert walks[0] == 2
        assert w.status(10)["unwatched"] == 0
    finally:
        w.stop()


_real_add_watch = inotify.add_watch


def test_new_folders_are_watched_and_folders_moved_away_are_dropped(
    tmp_path: Path, watcher_on: Callable[..., Watcher], events: Batches
) -> None:
    top, outside = tmp_path / "top", tmp_path / "outside"
    make_tree(top, 6)  # 7 folders
    outside.mkdir()
    w = watcher_on(top)
    w.start()
    assert w.status(10)["watches"] == 7
    (top / "a" / "b" / "c").mkdir(parents=True)  # three new folders in one go
    wait_for(lambda: w.status(10)["watches"] == 10, timeout=30, what="watches on the new folders")
    seen = len(events)
    (top / "a" / "b" / "c" / "x.txt").write_text("x")
    called_after(events, seen, "an event in the newest folder")
    (top / "a").rename(top / "g0" / "a")  # moved within: walked again at its new path
    wait_for(lambda: len(events) > seen + 1, timeout=30, what="the move within the tree")
    seen = len(events)
    (top / "g0" / "a" / "b" / "c" / "y.txt").write_text("y")
    called_after(events, seen, "an event in a folder moved within the tree")
    assert w.status(10)["watches"] == 10 and w.status(10)["folders"] == 10
    (top / "g0" / "a").rename(outside / "a")  # moved away: its three watches dropped
    wait_for(lambda: w.status(10)["watches"] == 7, timeout=30, what="the watches dropped")
    seen = len(events)
    (outside / "a" / "z.txt").write_text("z")
    (top / "g1" / "after.txt").write_text("after")  # the next batch is this one alone
    called_after(events, seen, "an event in the tree")
    shutil.rmtree(top / "g2")  # removed: the kernel drops its watches
    wait_for(lambda: w.status(10)["watches"] == 6, timeout=30, what="a removed folder's watch")


def test_the_chat_logs_touched_are_named_once_a_batch(
    tmp_path: Path, watcher_on: Callable[..., Watcher], events: Batches
) -> None:
    logs = tmp_path / "logs"
    (logs / "scripts").mkdir(parents=True)
    w = watcher_on(tmp_path, names_of=logs)
    w.start()
    (logs / "2026-11-27.md").write_text("# 2026-11-27\n\nsueño y ñandú\n", encoding="utf-8")
    assert called_after(events, 0, "the chat log") == ["2026-11-27.md"]
    seen = len(events)
    (logs / "2026-11-27.md").rename(logs / "día.md")  # both names
    wait_for(lambda: "día.md" in names_since(events, seen), timeout=30, what="the rename")
    assert names_since(events, seen) == {"2026-11-27.md", "día.md"}
    seen = len(events)
    (logs / "scripts" / "backup.log").write_text("ERROR\n")  # a log below: no name, a poke
    assert called_after(events, seen, "a log below logs/") == []


def test_an_overflow_of_the_kernels_queue_walks_every_folder_again(
    tmp_path: Path,
    watcher_on: Callable[..., Watcher],
    events: Batches,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Events lost: a folder made meanwhile may have no watch; the walk gives it one, and the
    analysis is poked (it scans everything anyway)."""
    make_tree(tmp_path, 4)
    w = watcher_on(tmp_path)
    w.start()
    made = tmp_path / "hecho-mientras"

    def refused(fd: int, path: bytes, mask: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(inotify, "add_watch", refused)
    made.mkdir()
    wait_for(lambda: w.status(10)["unwatched"] == 1, timeout=30, what="the folder left out")
    assert w.status(10)["watches"] == 5
    monkeypatch.undo()
    overflow = struct.pack("iIII", -1, inotify.IN_Q_OVERFLOW, 0, 0)
    seen = len(events)
    w._handle(overflow)  # as the watch thread reads it
    st = w.status(10)
    assert st["watches"] == 6 and st["unwatched"] == 0 and len(events) == seen + 1


# -------------------------------------------------------------------------------- the debouncer


def test_the_debouncer_calls_once_after_the_last_poke_then_once_after_the_settle_time() -> None:
    calls: list[float] = []
    d = Debouncer(lambda: calls.append(time.monotonic()), 0.3, lambda: 0.2)
    try:
        for _ in range(20):
            d.poke()
            time.sleep(0.01)
        last = time.monotonic()
        wait_for(lambda: len(calls) == 2, timeout=30, what="the two calls")
        time.sleep(0.3)
        assert len(calls) == 2  # and no more
        assert calls[0] - last >= 0.3 - 0.02  # after the last poke, not the first
        assert calls[1] - calls[0] >= 0.2 + 1.0 - 0.02  # the settle time and a second
    finally:
        d.close()


def test_a_burst_of_pokes_starts_one_thread_not_one_a_poke(monkeypatch: pytest.MonkeyPatch) -> None:
    # The watcher pokes once a batch of events; an action's events come in hundreds of batches.
    started = [0]
    real_start = threading.Thread.start

    def counting(self: threading.Thread) -> None:
        started[0] += 1
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", counting)
    calls = [0]
    d = Debouncer(lambda: calls.__setitem__(0, calls[0] + 1), 0.2, lambda: 0.0)
    try:
        for _ in range(1000):
            d.poke()
        assert started[0] <= 1
        wait_for(lambda: calls[0] == 1, timeout=30, what="the call")
        d.poke()  # quiet since: a new timer
        wait_for(lambda: calls[0] == 2, timeout=30, what="the next call")
        assert started[0] <= 2
    finally:
        d.close()


def test_nothing_is_called_once_the_debouncer_is_closed() -> None:
    calls = [0]
    d = Debouncer(lambda: calls.__setitem__(0, calls[0] + 1), 0.1, lambda: 0.0)
    d.poke()
    d.close()
    d.poke()
    time.sleep(0.4)
    assert calls[0] == 0
