"""The model in a process of its own (agent.voice.process, agent.voice.worker), with a backend
that fails for real inside that process (tests.support.crashy_model): a signal, a hang, the
memory limit, a cancel, and the runtime that restarts a failed process or gives it up."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from agent.voice.model import ModelFailed, ModelRuntime, generate
from agent.voice.model_file import embedded_model_path
from agent.voice.process import ProcessBackend, ProcessOptions
from agent.voice.worker import LOADER_VARIABLE, named_loader
from policies.errors import AlmaError, BadArgumentError
from sandbox.confine import Backend as Sandbox
from sandbox.confine import Confinement, probe
from tests.support import crashy_model

T = TypeVar("T")

OPTIONS = ProcessOptions(n_ctx=512, threads=1, memory_mb=0, nice=0, stall_s=20.0)


@pytest.fixture(autouse=True)
def crashy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    control = tmp_path / "control"
    control.write_text("ok", encoding="utf-8")
    monkeypatch.setenv(LOADER_VARIABLE, "tests.support.crashy_model:load")
    monkeypatch.setenv(crashy_model.CONTROL, str(control))
    monkeypatch.setenv(crashy_model.PAUSE, "0.01")
    return control


@pytest.fixture
def backend() -> Iterator[ProcessBackend]:
    started = ProcessBackend.start("modelo", OPTIONS)
    yield started
    started.close()


def _answer(backend: ProcessBackend, text: str, max_tokens: int = 64) -> str:
    result = generate(
        backend,
        [{"role": "user", "content": text}],
        max_tokens=max_tokens,
        deadline=float("inf"),
        cancelled=lambda: False,
    )
    return result.text


def test_it_answers_counts_and_serves_one_request_after_another(backend: ProcessBackend) -> None:
    assert backend.pid != os.getpid() and backend.n_ctx == 512 and backend.threads == 1
    assert _answer(backend, "hola qué tal") == "eco: hola qué tal"
    assert backend.count_tokens("uno dos tres") == 4
    assert _answer(backend, "otra vez") == "eco: otra vez"
    assert backend.failure is None


def test_a_daemon_holding_more_than_1024_descriptors_still_talks_to_its_model() -> None:
    # select() refuses a descriptor past 1024, and a long-running daemon can hold that many.
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        backend = ProcessBackend.start("modelo", OPTIONS)
        try:
            assert _answer(backend, "hola") == "eco: hola"
            assert backend.failure is None
        finally:
            backend.close()
    finally:
        for fd in held:
            os.close(fd)


def test_a_segfault_ends_the_answer_with_one_sentence(backend: ProcessBackend) -> None:
    with pytest.raises(ModelFailed, match="SIGSEGV") as raised:
        _answer(backend, "esto hace SEGV")
    assert backend.failure is not None and backend.failure.counts
    assert "next message" in raised.value.message
    assert backend.process.poll() == -signal.SIGSEGV


def test_a_hang_is_killed_after_the_stall_bound() -> None:
    backend = ProcessBackend.start("modelo", ProcessOptions(n_ctx=512, threads=1, stall_s=1.0))
    try:
        with pytest.raises(ModelFailed, match="gave nothing for 1 seconds"):
            _answer(backend, "HANG")
        assert backend.process.poll() == -signal.SIGKILL
        assert backend.failure is not None and backend.failure.counts
    finally:
        backend.close()


def test_the_memory_limit_ends_the_process_not_the_caller() -> None:
    backend = ProcessBackend.start("modelo", ProcessOptions(n_ctx=512, threads=1, memory_mb=600))
    try:
        with pytest.raises(ModelFailed, match="out of memory"):
            _answer(backend, "OOM")
    finally:
        backend.close()


def test_a_kill_from_outside_mid_answer(backend: ProcessBackend) -> None:
    chunks = backend.stream([{"role": "user", "content": "uno dos tres cuatro"}], max_tokens=64)
    assert next(chunks)[0] == "eco:"
    os.kill(backend.pid, signal.SIGKILL)
    with pytest.raises(ModelFailed, match="SIGKILL"):
        list(chunks)


def test_a_cancelled_answer_leaves_the_process_ready_for_the_next(backend: ProcessBackend) -> None:
    result = generate(
        backend,
        [{"role": "user", "content": " ".join(["palabra"] * 50)}],
        max_tokens=64,
        deadline=float("inf"),
        cancelled=lambda: True,
    )
    assert result.stopped == "cancelled" and result.tokens == 1
    assert _answer(backend, "sigo aquí") == "eco: sigo aquí"
    assert backend.failure is None


def test_a_model_that_loads_but_cannot_generate_is_refused(crashy: Path) -> None:
    crashy.write_text("segv", encoding="utf-8")
    with pytest.raises(ModelFailed, match=r"loaded but could not generate.*SIGSEGV"):
        ProcessBackend.start("modelo", OPTIONS)


def test_a_load_error_is_the_loaders_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOADER_VARIABLE, "tests.support.crashy_model:missing")
    with pytest.raises(ModelFailed):
        ProcessBackend.start("modelo", OPTIONS)


@pytest.mark.parametrize("hook", ["os:system", "subprocess:run", "tests:load", "testsx.m:load"])
def test_a_loader_outside_the_tests_and_benchmarks_is_refused_in_one_sentence(hook: str) -> None:
    with pytest.raises(AlmaError) as refused:
        named_loader(hook)
    assert refused.value.message == (
        f"ALMA_MODEL_LOADER names {hook!r}, but only a loader of ALMA's tests or benchmarks "
        "(tests.… or bench.…) is honoured; unset it to load the model."
    )


def test_a_tests_loader_is_honoured() -> None:
    from tests.support import crashy_model

    assert named_loader("tests.support.crashy_model:load") is crashy_model.load


def test_the_refusal_reaches_the_daemon_from_the_model_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(LOADER_VARIABLE, "os:system")
    with pytest.raises(BadArgumentError, match="only a loader of ALMA's tests"):
        ProcessBackend.start("modelo", OPTIONS)


def _runtime(given_up: list[tuple[str, str | None]], unusable: str | None = None) -> ModelRuntime:
    return ModelRuntime(
        str(embedded_model_path()),  # use() checks it is a GGUF; the crashy loader ignores it
        lambda path, lora: ProcessBackend.start(path, OPTIONS, lora),
        unusable=unusable,
        on_unusable=lambda path, reason: given_up.append((path, reason)),
    )


def _complete(runtime: ModelRuntime, text: str) -> str | None:
    return runtime.complete([{"role": "user", "content": text}], max_tokens=32, timeout_s=60.0)


def test_the_runtime_restarts_a_crashed_process_and_answers_the_next_message() -> None:
    given_up: list[tuple[str, str | None]] = []
    runtime = _runtime(given_up)
    try:
        assert _complete(runtime, "hola") == "eco: hola"
        first = runtime.status()["pid"]
        assert _complete(runtime, "SEGV") is None  # background work falls back, never raises
        status = runtime.status()
        assert status["state"] in ("restarting", "ready") and status["crashes"] == 1
        assert "SIGSEGV" in status["last_failure"]
        assert _complete(runtime, "otra") == "eco: otra"
        assert runtime.status()["pid"] != first and runtime.status()["crashes"] == 0
        assert given_up == []
    finally:
        runtime.close()


def test_two_failures_in_a_row_give_the_model_up_until_model_use(crashy: Path) -> None:
    given_up: list[tuple[str, str | None]] = []
    runtime = _runtime(given_up)
    try:
        crashy.write_text("segv", encoding="utf-8")  # the probe at every load crashes too
        assert _complete(runtime, "hola") is None
        assert _complete(runtime, "hola") is None
        status = runtime.status()
        assert status["state"] == "unusable" and "SIGSEGV" in status["unusable"]
        assert "alma-ctl model use PATH" in status["error"]
        assert given_up == [(str(embedded_model_path()), status["unusable"])]
        assert not runtime.loading_needed()
        assert "given up" in runtime.unavailable_sentence()
        # Never a crash loop: nothing is started again on its own.
        threading.Event().wait(1.5)
        assert runtime.status()["state"] == "unusable" and "pid" not in runtime.status()
        crashy.write_text("ok", encoding="utf-8")
        assert _complete(runtime, "hola") is None
        status = runtime.use(str(embedded_model_path()))
        assert status["state"] == "ready" and "unusable" not in status
        assert given_up[-1] == (str(embedded_model_path()), None)
        assert _complete(runtime, "hola") == "eco: hola"
    finally:
        runtime.close()


def test_use_refuses_a_model_that_crashes_and_keeps_the_old_one(crashy: Path) -> None:
    given_up: list[tuple[str, str | None]] = []
    runtime = _runtime(given_up)
    try:
        assert _complete(runtime, "hola") == "eco: hola"
        before = runtime.status()["pid"]
        crashy.write_text("segv", encoding="utf-8")
        with pytest.raises(BadArgumentError, match=r"cannot be used.*SIGSEGV.*model in use stays"):
            runtime.use(str(embedded_model_path()))
        crashy.write_text("ok", encoding="utf-8")
        assert runtime.status()["pid"] == before
        assert _complete(runtime, "sigo") == "eco: sigo"
        # A model that answers after a switch clears any mark left by an earlier give-up of it.
        runtime.use(str(embedded_model_path()))
        assert given_up == [(str(embedded_model_path()), None)]
    finally:
        runtime.close()


def test_a_model_given_up_before_stays_so_and_is_never_started() -> None:
    runtime = _runtime([], unusable="the model process crashed (SIGSEGV) while answering")
    try:
        assert _complete(runtime, "hola") is None
        assert runtime.status()["state"] == "unusable" and "pid" not in runtime.status()
    finally:
        runtime.close()


def test_no_process_at_all_is_a_failure_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr("agent.voice.process.subprocess.Popen", refuse)
    with pytest.raises(ModelFailed, match="could not start") as raised:
        ProcessBackend.start("modelo", OPTIONS)
    assert raised.value.failure.counts


def _plant(folder: Path) -> Path:
    """Modules named after ALMA's package and a standard one, which leave a mark when run."""
    marker = folder / "ran"
    for name in ("agent.py", "queue.py", "json.py"):
        (folder / name).write_text(
            f"open({str(marker)!r}, 'a').write({name!r})\n", encoding="utf-8"
        )
    return marker


def test_modules_in_the_working_folder_or_pythonpath_never_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    marker = _plant(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    backend = ProcessBackend.start("modelo", OPTIONS)
    try:
        assert _answer(backend, "hola") == "eco: hola"
        assert os.readlink(f"/proc/{backend.pid}/cwd") == "/"  # its own, not the daemon's
    finally:
        backend.close()
    assert not marker.exists(), marker.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def sandbox() -> Confinement:
    ok, why = probe(Sandbox.LANDLOCK)
    if not ok:
        pytest.skip(f"Landlock does not confine here: {why}")
    return Confinement(Sandbox.LANDLOCK, why)


def test_the_confined_process_writes_nowhere_reaches_nothing_and_gains_nothing(
    sandbox: Confinement, tmp_path: Path
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        options = dataclasses.replace(OPTIONS, confinement=sandbox, workdir=str(tmp_path))
        backend = ProcessBackend.start("modelo", options)
        try:
            assert crashy_model.status_field(backend.pid, "NoNewPrivs") == "1"
            assert crashy_model.status_field(backend.pid, "Seccomp") == "2"  # a filter
            assert "landlock" in backend.confined and "sockets denied" in backend.confined
            target = tmp_path / "escaped"
            assert _answer(backend, f"WRITE {target}") == f"eco: WRITE {target} PermissionError"
            assert not target.exists()
            assert _answer(backend, f"CONNECT {port}").endswith("PermissionError")
            assert _answer(backend, "hola") == "eco: hola"
        finally:
            backend.close()


def test_unconfined_it_says_so_and_still_gains_no_privilege() -> None:
    backend = ProcessBackend.start("modelo", OPTIONS)
    try:
        assert backend.confined.startswith("NOT CONFINED")
        assert crashy_model.status_field(backend.pid, "NoNewPrivs") == "1"
    finally:
        backend.close()


def test_closing_a_dead_process_never_raises(backend: ProcessBackend) -> None:
    os.kill(backend.pid, signal.SIGKILL)
    backend.process.wait()
    assert backend.process.stdin is not None
    backend.process.stdin.write(b'{"op": "cancel"}\n')  # left in the buffer: the pipe is gone
    assert backend.failure is not None and "SIGKILL" in backend.failure.reason
    backend.close()
    backend.close()


def test_a_process_that_died_between_answers_is_replaced_before_the_next() -> None:
    runtime = _runtime([])
    try:
        assert _complete(runtime, "hola") == "eco: hola"
        first = runtime.status()["pid"]
        os.kill(first, signal.SIGKILL)
        _wait(lambda: crashy_model.ended(first))
        assert _complete(runtime, "otra") == "eco: otra"
        status = runtime.status()
        assert status["pid"] != first and status["crashes"] == 0
        assert "SIGKILL" in status["last_failure"]
    finally:
        runtime.close()


def test_a_crash_while_loading_costs_the_waiting_job_and_the_next_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(crashy_model.LOAD_PAUSE, "3")
    runtime = _runtime([])
    try:
        answer: list[str | None] = []
        asking = threading.Thread(target=lambda: answer.append(_complete(runtime, "hola")))
        asking.start()
        loading = _wait(lambda: crashy_model.model_processes(os.getpid()))
        os.kill(loading[0], signal.SIGSEGV)
        asking.join(60)
        assert answer == [None]  # background work falls back, never raises
        status = runtime.status()
        assert "SIGSEGV" in status["last_failure"] and "loading" in status["last_failure"]
        assert _complete(runtime, "otra") == "eco: otra"
        assert runtime.status()["crashes"] == 0
    finally:
        runtime.close()


def _wait(check: Callable[[], T], timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
    return value
