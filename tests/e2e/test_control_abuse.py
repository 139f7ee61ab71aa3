"""The control socket abused by the owner's own programs, against a real daemon: a client writing without pause during a streamed answer, 50 clients
trickling a byte a second and reconnecting when dropped, and 200 connections from 25 processes
that send nothing. The owner's ``alma-ctl status`` keeps
being answered, and the daemon's memory stays bounded.

The figures are printed (``pytest -s``) for docs/benchmarks.md.
"""

from __future__ import annotations

import threading
import time

import pytest

from control.client import Client
from tests.support.abuse import (
    flood,
    rss_bytes,
    start_idlers,
    start_tricklers,
    stop_tricklers,
)
from tests.support.daemon import DaemonRoot
from tests.support.openai_stub import ModelStub
from tests.support.wire import obj

pytestmark = pytest.mark.slow

MB = 1 << 20


def test_a_client_flooding_during_a_streamed_answer_is_cut_off(alma: DaemonRoot) -> None:
    """The daemon keeps a bounded part of what such a client writes, never every line."""
    # A long answer that never repeats itself (the chat cuts a loop at once, and the stream
    # with it), so the attack runs for as long as it writes.
    answer = " ".join(f"ñu{i}" for i in range(4000))
    with ModelStub("Hola, aquí estoy.", piece=2, pause=0.005) as stub:
        alma.set_settings("model", "url", stub.url)
        alma.start(timeout=120)
        session = obj(Client(alma.socket, 60).call("chat.start"))["session"]
        # What any first answer costs (the backend, the chat's first turns) is not the flood's.
        warm_up = Client(alma.socket, 120).stream("chat.send", session=session, message="hola")
        assert [e for e in warm_up] and warm_up.result is not None
        alma.ok("status")
        stub.answer = answer  # the flood's answers stream for a minute and more
        before = peak = rss_bytes(alma.pid)
        stop = threading.Event()
        counts: dict[str, int] = {}
        flooder = threading.Thread(target=flood, args=(alma.socket, stop, session, counts))
        flooder.start()
        codes = []
        try:
            end = time.monotonic() + 20
            while time.monotonic() < end:
                codes.append(alma.ctl("status", timeout=60).rc)
                peak = max(peak, rss_bytes(alma.pid))
        finally:
            stop.set()
            flooder.join(60)
        peak = max(peak, rss_bytes(alma.pid))
        print(
            f"\nflood: {counts.get('bytes', 0) / MB:.0f} MiB written, cut {counts.get('cut', 0)}"
            f" times; daemon RSS {before / MB:.0f} -> peak {peak / MB:.0f} MiB;"
            f" status {codes.count(0)}/{len(codes)} answered"
        )
        assert counts.get("cut", 0) >= 2, counts  # the attack ran, and was cut off each time
        assert peak - before <= 64 * MB
        assert codes and all(code == 0 for code in codes), codes
        assert alma.ok("status")["running"]


@pytest.mark.parametrize("one_process", [False, True], ids=["50 processes", "one process"])
def test_the_owner_is_not_locked_out_by_trickling_clients(
    alma: DaemonRoot, one_process: bool
) -> None:
    """50 such clients never hold every connection slot: the owner's status calls are answered."""
    alma.start()
    tricklers = start_tricklers(alma.socket, 50, one_process=one_process)
    codes = []
    try:
        time.sleep(3)  # every trickler connected
        end = time.monotonic() + 45  # several rounds of the 10 s request deadline
        while time.monotonic() < end:
            codes.append(alma.ctl("status", timeout=60).rc)
    finally:
        stop_tricklers(tricklers)
    answered = codes.count(0)
    print(
        f"\ntrickle ({'one process' if one_process else '50 processes'}): "
        f"status {answered}/{len(codes)} answered"
    )
    assert len(codes) >= 10
    assert answered >= 0.95 * len(codes), codes


def test_idle_connections_from_many_processes_do_not_lock_the_owner_out(
    alma: DaemonRoot,
) -> None:
    """200 connections from 25 processes (8 each, every process's share) that never send a
    byte and come back whenever closed: more than the daemon holds. The owner's status is
    answered within seconds, every time."""
    alma.start()
    idlers = start_idlers(alma.socket, 25, 8)
    took = []
    try:
        time.sleep(5)  # every idle connection opened (and the first ones closed and back)
        for _ in range(10):
            started = time.monotonic()
            result = alma.ctl("status", timeout=60)
            took.append(time.monotonic() - started)
            assert result.rc == 0, result
            assert result.data["running"]
    finally:
        stop_tricklers(idlers)
    print(f"\nidle: status answered 10/10, slowest {max(took):.1f} s")
    assert max(took) < 10, took
