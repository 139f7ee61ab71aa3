"""Code inside the confined child cannot reach the daemon's control socket, in every backend.

A pathname Unix socket is covered neither by Landlock's filesystem rules nor by a network
namespace, and the peer-uid check passes for the child: only a child that cannot make a socket
at all is safe. Each backend runs code that connects to the real daemon's socket and asks for
``autonomy.off``; it must fail, and the daemon must stay unpaused. An unconfined run of the same
code proves the attempt would reach the daemon.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.confine import Backend, Confinement
from tests.support.daemon import DaemonRoot
from tests.unit.test_confine import REAL, _require

pytestmark = pytest.mark.e2e

_ATTACK = r"""
import json, socket, sys
path = sys.argv[1]
request = json.dumps({"v": 1, "id": 1, "cmd": "autonomy.off", "args": {}}) + "\n"
results = {}
for name, family, kind in (
    ("unix_stream", socket.AF_UNIX, socket.SOCK_STREAM),
    ("unix_seqpacket", socket.AF_UNIX, socket.SOCK_SEQPACKET),
):
    try:
        with socket.socket(family, kind) as s:
            s.settimeout(20)
            s.connect(path)
            s.sendall(request.encode())
            results[name] = "answered: " + s.recv(4096).decode(errors="replace")
    except OSError as exc:
        results[name] = f"errno {exc.errno}"
try:
    a, b = socket.socketpair()
    a.close(); b.close()
    results["socketpair"] = "ok"
except OSError as exc:
    results["socketpair"] = f"errno {exc.errno}"
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonRoot]:
    d = DaemonRoot().init()
    d.start()
    try:
        yield d
    finally:
        if d.proc is not None:
            d.stop()
        d.close()


def _attack(daemon: DaemonRoot, conf: Confinement, zone: Path) -> dict[str, str]:
    argv = [sys.executable, "-I", "-c", _ATTACK, str(daemon.socket)]
    cmd = conf.wrap(argv, [zone]) if conf.backend is not Backend.NONE else argv
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False
    )
    assert done.returncode == 0, f"the attacking child failed: {done.stderr}"
    results: dict[str, str] = json.loads(done.stdout.splitlines()[-1])
    return results


def _paused(daemon: DaemonRoot) -> bool:
    return bool(daemon.ok("autonomy", "status")["paused"])


def test_unconfined_code_reaches_the_socket(daemon: DaemonRoot, tmp_path: Path) -> None:
    """The control: without a sandbox the same code switches autonomy off."""
    results = _attack(daemon, Confinement(Backend.NONE, "control"), tmp_path)
    try:
        assert results["unix_stream"].startswith("answered"), results
        assert _paused(daemon)
    finally:
        daemon.ok("autonomy", "on")
    assert not _paused(daemon)


@pytest.mark.parametrize("backend", REAL, ids=str)
def test_confined_code_cannot_reach_the_socket(
    daemon: DaemonRoot, tmp_path: Path, backend: Backend
) -> None:
    conf = _require(backend)
    results = _attack(daemon, conf, tmp_path)
    assert not _paused(daemon), f"{backend}: the confined child paused autonomy: {results}"
    for name in ("unix_stream", "unix_seqpacket", "socketpair"):
        assert results[name] == "errno 1", f"{backend}: {name} -> {results[name]}"
