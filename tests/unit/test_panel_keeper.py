"""The daemon's keeper of the web panel (agent.web): a panel that exits is started again after
a pause that doubles, and the keeper's close ends the one running. A stand-in child (a shell)
takes the panel's place: what is tested is the keeping, not the panel."""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent import web
from agent.web import PanelKeeper


class Counting(PanelKeeper):
    def __init__(self, script: str, log: Path) -> None:
        super().__init__("/nowhere", 1)
        self.script = script
        self.log = log

    def _spawn(self) -> subprocess.Popen[bytes]:
        with self.log.open("a") as out:
            out.write(f"{time.monotonic()}\n")
        return subprocess.Popen(["sh", "-c", self.script], start_new_session=True)


def starts(log: Path) -> list[float]:
    return [float(x) for x in log.read_text().split()] if log.exists() else []


def wait(probe: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_panel_that_exits_is_started_again_after_a_doubling_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web, "RESTART_FIRST_S", 0.05)
    log = tmp_path / "starts"
    keeper = Counting("exit 3", log).start()
    try:
        wait(lambda: len(starts(log)) >= 4, "four starts of a panel that keeps exiting")
    finally:
        keeper.close()
    times = starts(log)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # Pauses of 0.05, 0.1 and 0.2 s: each at least its bound (a loaded machine only adds).
    assert gaps[1] >= 0.1 and gaps[2] >= 0.2, gaps


def test_close_ends_the_running_panel_and_starts_no_other(tmp_path: Path) -> None:
    log = tmp_path / "starts"
    keeper = Counting("sleep 600", log).start()
    wait(lambda: keeper._proc is not None, "the panel's start")
    proc = keeper._proc
    assert proc is not None
    keeper.close()
    assert proc.poll() is not None  # ended by SIGTERM
    time.sleep(0.2)
    assert len(starts(log)) == 1
