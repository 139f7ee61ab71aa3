"""alma-agentd's exit after its orderly stop: the code main returned, with the logs and the
standard streams flushed, and without the interpreter's teardown (its last collections walked
the whole heap, and native libraries' destructors could abort the process). The time is in
docs/benchmarks.md; the e2e tests stop real daemons with SIGTERM and check exit 0."""

from __future__ import annotations

import logging

import pytest

from agent import daemon


class _Exited(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def test_the_console_script_exits_with_mains_code_after_flushing_the_logs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done: list[str] = []
    monkeypatch.setattr(daemon, "main", lambda: done.append("main") or 3)
    monkeypatch.setattr(logging, "shutdown", lambda: done.append("logs"))

    def exit_now(code: int) -> None:
        done.append("exit")
        raise _Exited(code)

    monkeypatch.setattr(daemon.os, "_exit", exit_now)
    with pytest.raises(_Exited) as exited:
        daemon.entry()
    assert exited.value.code == 3 and done == ["main", "logs", "exit"]
