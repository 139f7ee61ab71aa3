"""Desktop notifications: sent through notify-send when it exists and they are on; never else."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent.day.notify import make_notifier


def fake_notify_send(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir, record = tmp_path / "bin", tmp_path / "calls.txt"
    bin_dir.mkdir()
    script = bin_dir / "notify-send"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {record}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return record


def wait_for(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= 3:
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError("notify-send was not called")


def test_a_notification_goes_through_notify_send(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = fake_notify_send(tmp_path, monkeypatch)
    make_notifier(True)("ALMA: sugerencia 3", "Ordenar user/descargas por tipo")
    lines = wait_for(record).splitlines()
    assert lines == ["--app-name=ALMA", "ALMA: sugerencia 3", "Ordenar user/descargas por tipo"]


def test_off_means_never_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = fake_notify_send(tmp_path, monkeypatch)
    notifier = make_notifier(False)
    assert notifier.command is None
    notifier("t", "b")  # with no command, no thread is even started
    assert not record.exists()


def test_without_notify_send_nothing_breaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    notifier = make_notifier(True)
    assert notifier.command is None
    notifier("t", "b")
