"""Clients of the control socket that misbehave on purpose, for the server's resource promises.

- Tricklers (``python -m tests.support.abuse trickle SOCKET COUNT``): COUNT processes, each
  connected and sending one byte a second of a request it never finishes, reconnecting at once
  whenever it is dropped or refused. One process each, so a cap per peer process does not
  stop them; ``--one-process`` opens all of them from one process instead.
- Idlers (``python -m tests.support.abuse idle SOCKET PROCESSES PER_PROCESS``): PROCESSES
  processes, each holding PER_PROCESS connections that never send a byte, opened again
  whenever the daemon closes one.
- A flooder (:func:`flood`): starts a streamed answer, then writes whole request lines as fast
  as it can while the answer streams, reconnecting when it is cut off.

Both run until told to stop; their figures are counted so a test can show the attack ran.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from control import protocol

_STATUS_LINE = protocol.encode_request(2, "status", {})


def _trickle_one(path: str) -> None:
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(120)
                conn.connect(path)
                while True:
                    conn.sendall(b"{")
                    time.sleep(1.0)
        except OSError:
            continue  # dropped or refused: straight back in, as the attack did


def _trickle_many_in_one_process(path: str, count: int) -> None:
    for _ in range(count):
        threading.Thread(target=_trickle_one, args=(path,), daemon=True).start()
    while True:
        time.sleep(3600)


def _idle_one(path: str) -> None:
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(path)
                while conn.recv(65536):  # a refusal or goodbye; the end of input ends it
                    pass
        except OSError:
            pass
        time.sleep(0.1)  # closed: back in soon, without spinning on a refusing daemon


def _idle_process(path: str, per_process: int) -> None:
    for _ in range(per_process):
        threading.Thread(target=_idle_one, args=(path,), daemon=True).start()
    while True:
        time.sleep(3600)


def _trickle_main(path: str, count: int, one_process: bool) -> None:
    if one_process:
        _trickle_many_in_one_process(path, count)
        return
    _fork_and_wait(count, lambda: _trickle_one(path))


def _idle_main(path: str, processes: int, per_process: int) -> None:
    _fork_and_wait(processes, lambda: _idle_process(path, per_process))


def _fork_and_wait(count: int, run: Callable[[], None]) -> None:
    """``count`` child processes running ``run``; SIGTERM kills them all."""
    children = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            try:
                run()
            finally:
                os._exit(0)
        children.append(pid)

    def stop(_signum: int, _frame: object) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        signal.pause()


def start_tricklers(
    socket_path: Path, count: int, *, one_process: bool = False
) -> subprocess.Popen[bytes]:
    """The trickling clients, running until :func:`stop_tricklers`."""
    argv = [
        sys.executable,
        "-m",
        "tests.support.abuse",
        "trickle",
        os.fspath(socket_path),
        str(count),
    ]
    if one_process:
        argv.append("--one-process")
    return subprocess.Popen(argv, env=os.environ | {"PYTHONPATH": _repo_path()})


def start_idlers(socket_path: Path, processes: int, per_process: int) -> subprocess.Popen[bytes]:
    """Idle connections from ``processes`` processes, until :func:`stop_tricklers`."""
    argv = [sys.executable, "-m", "tests.support.abuse", "idle", os.fspath(socket_path)]
    argv += [str(processes), str(per_process)]
    return subprocess.Popen(argv, env=os.environ | {"PYTHONPATH": _repo_path()})


def stop_tricklers(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _repo_path() -> str:
    repo = str(Path(__file__).resolve().parents[2])
    extra = os.environ.get("PYTHONPATH")
    return f"{repo}{os.pathsep}{extra}" if extra else repo


def flood(socket_path: Path, stop: threading.Event, session: str, counts: dict[str, int]) -> None:
    """Start a streamed answer and write request lines without pause meanwhile, again and
    again until ``stop``. ``counts`` gets ``bytes`` written and ``cut`` (connections the daemon
    closed on us)."""
    burst = _STATUS_LINE * (256 * 1024 // len(_STATUS_LINE))
    chat = protocol.encode_request(1, "chat.send", {"session": session, "message": "hola"})
    while not stop.is_set():
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(5)
                conn.connect(os.fspath(socket_path))
                conn.sendall(chat)
                conn.recv(65536)  # the answer has started (or the daemon said it is busy)
                while not stop.is_set():
                    conn.sendall(burst)
                    counts["bytes"] = counts.get("bytes", 0) + len(burst)
        except TimeoutError:
            continue  # not a stream (busy): the daemon reads one request at a time and waits
        except OSError:
            counts["cut"] = counts.get("cut", 0) + 1
            time.sleep(0.05)


def rss_bytes(pid: int) -> int:
    """A process's resident set, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def _main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.abuse")
    sub = parser.add_subparsers(dest="what", required=True)
    trickle = sub.add_parser("trickle")
    trickle.add_argument("socket")
    trickle.add_argument("count", type=int)
    trickle.add_argument("--one-process", action="store_true")
    idle = sub.add_parser("idle")
    idle.add_argument("socket")
    idle.add_argument("processes", type=int)
    idle.add_argument("per_process", type=int)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    if args.what == "idle":
        _idle_main(args.socket, args.processes, args.per_process)
    else:
        _trickle_main(args.socket, args.count, args.one_process)


if __name__ == "__main__":
    _main()
