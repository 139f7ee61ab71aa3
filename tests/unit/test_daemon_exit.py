"""alma-agentd's exit after its orderly stop (issue 20: SIGTERM on an idle daemon took 11 s).

py-spy showed the wait: after "stopped" is logged (the op in flight finished or rolled back,
every store closed), the interpreter's last garbage collections walked the whole heap (the
model's, the memory store's) in ``gc_collect_main``. Nothing is left to collect that matters
then, so the heap is frozen out of those collections. The time is in docs/benchmarks.md.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import daemon


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("unfrozen")
def test_the_heap_is_left_out_of_the_last_collections_once_the_daemon_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frozen_while_running: list[int] = []

    def run(self: daemon.Daemon) -> int:
        frozen_while_running.append(gc.get_freeze_count())
        return 0

    monkeypatch.setattr(daemon.Daemon, "run", run)
    assert daemon.main(["--root", str(tmp_path / "ALMA")]) == 0
    assert frozen_while_running == [0]  # collections run as usual while it serves
    assert gc.get_freeze_count() > 0
