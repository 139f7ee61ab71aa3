"""A chat log that grows while ingestion runs, and across a restart: every paragraph of the
person is ingested exactly once; alma's turns and model comments never become memories."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent.memory.service import MemoryService
from policies import limits as L
from policies.layout import RootLayout

TODAY = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _wait_for(cond: Callable[[], bool], timeout: float = 120.0) -> None:
    """Poll; the assertion is on the condition, never on how long it took."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "ingestion did not catch up"
        time.sleep(0.1)


def _turn(n: int) -> str:
    topics = [
        "el huerto",
        "la bicicleta",
        "el examen de alemán",
        "la mudanza",
        "el presupuesto",
        "la guitarra",
        "el viaje a Lisboa",
        "la tesis",
        "el coche",
        "la cocina nueva",
    ]
    return (
        f"## 10:{n:02d}:00 · usuario\nPárrafo número {n}: hoy avancé con "
        f"{topics[n % len(topics)]}, paso {n}.\n\n"
        f"## 10:{n:02d}:05 · alma\nRespuesta de alma al párrafo {n}.\n"
        f"<!-- model: test · tokens: 9 · ms: 1 -->\n\n"
    )


def _contents(svc: MemoryService) -> list[str]:
    return [m["content"] for m in svc.list(limit=L.LIST_MAX) if m["kind"] in ("turn", "note")]


def _open(layout: RootLayout) -> MemoryService:
    # settle_seconds high: the last paragraph must wait for a blank line, as in a live chat
    return MemoryService(layout, clock=lambda: TODAY, settle_seconds=3600, rescan_seconds=0.5)


def test_growing_log_across_restart(tmp_path: Path) -> None:
    layout = RootLayout(tmp_path)
    layout.logs.mkdir(parents=True)
    log = layout.logs / "2026-11-22.md"
    log.write_text("# 2026-11-22\n\n")

    svc = _open(layout)
    svc.start_ingestion()
    with log.open("a") as f:
        for n in range(0, 6):
            f.write(_turn(n))
            f.flush()
    _wait_for(lambda: len(_contents(svc)) == 6)
    # A paragraph still being written (no blank line after it yet) waits.
    with log.open("a") as f:
        f.write("## 11:00:00 · usuario\nNota a medio escribir sobre el jardín")
    svc.wait_idle()
    assert svc.rescan_logs() == 0
    assert not any("jardín" in c for c in _contents(svc))
    svc.close()

    # While stopped, the paragraph is finished and more is written.
    with log.open("a") as f:
        f.write(" y las tomateras.\n\n")
        for n in range(6, 10):
            f.write(_turn(n))
        f.write("Nota a mano: llamar al fontanero el lunes.\n\n")
    svc = _open(layout)
    svc.start_ingestion()
    _wait_for(lambda: len(_contents(svc)) == 12)
    with log.open("a") as f:
        for n in range(10, 13):
            f.write(_turn(n))
    _wait_for(lambda: len(_contents(svc)) == 15)
    svc.wait_idle()
    assert svc.rescan_logs() == 0
    contents = _contents(svc)
    svc.close()

    assert len(contents) == len(set(contents)) == 15
    for n in range(13):
        assert sum(c.startswith(f"Párrafo número {n}:") for c in contents) == 1
    assert any(c.endswith("y las tomateras.") for c in contents)
    assert any(c.startswith("Nota a mano") for c in contents)
    assert not any("alma" in c.lower() or "<!--" in c for c in contents)


def test_replay_after_crash_adds_nothing(tmp_path: Path) -> None:
    """A crash between the store write and the offset commit replays the batch: no-op."""
    layout = RootLayout(tmp_path)
    layout.logs.mkdir(parents=True)
    log = layout.logs / "2026-11-21.md"  # yesterday: complete, summarized
    log.write_text(
        "# 2026-11-21\n\n"
        + "".join(_turn(n) for n in range(4))
        + "## 23:00:00 · usuario\nOtra vez trabajando hasta medianoche.\n\n"
        + "## 23:10:00 · usuario\nOtra vez trabajando hasta medianoche\n"
    )
    svc = _open(layout)
    assert svc.rescan_logs() == 6
    before = {m["id"]: m for m in svc.list(limit=100)}
    twice = [m for m in before.values() if m["content"].startswith("Otra vez")]
    assert len(twice) == 1 and twice[0]["mentions"] == 2
    assert any(m["kind"] == "summary" and m["layer"] == "L1" for m in before.values())
    svc._state.reset_offset("logs/2026-11-21.md")  # as if the offset commit was lost
    assert svc.rescan_logs() == 0
    after = {m["id"]: m for m in svc.list(limit=100)}
    assert after.keys() == before.keys()
    assert [m["mentions"] for m in after.values()] == [m["mentions"] for m in before.values()]
    svc.close()


def test_close_waits_for_a_rescan_in_flight_and_none_runs_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon's scheduled rescan calls rescan_logs on the scheduler's thread, which a stop
    does not wait for: close() must wait for a pass inside the store, and a pass asked for
    after close must do nothing (not write to a closed store)."""
    layout = RootLayout(tmp_path)
    layout.logs.mkdir(parents=True)
    (layout.logs / "2026-11-21.md").write_text(
        "# 2026-11-21\n\n" + "".join(_turn(n) for n in range(3))
    )
    svc = _open(layout)
    embedder = svc.store.embedder
    real = embedder.passages
    inside, release = threading.Event(), threading.Event()

    def held(texts: Sequence[str]) -> Any:
        inside.set()
        assert release.wait(120)
        return real(texts)

    monkeypatch.setattr(embedder, "passages", held)
    failures: list[BaseException] = []

    def rescan() -> None:
        try:
            svc.rescan_logs()
        except BaseException as exc:  # what the pass hit on a closed store is the finding
            failures.append(exc)

    scan = threading.Thread(target=rescan, daemon=True)
    scan.start()
    assert inside.wait(120), "the rescan never reached the store"
    closer = threading.Thread(target=svc.close, daemon=True)
    closer.start()
    # A close that does not wait for the rescan returns as soon as the store is shut, well
    # within this (seen: a close that skips the ingestor's lock fails here).
    closer.join(2)
    closed_early = not closer.is_alive()
    release.set()
    scan.join(120)
    closer.join(120)
    assert not closed_early, "close() returned while a rescan was writing to the store"
    assert not failures, failures
    monkeypatch.setattr(embedder, "passages", real)
    assert svc.rescan_logs() == 0  # after close: nothing read, nothing written
