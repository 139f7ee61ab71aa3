"""ALMA travels on its disk (docs/portable.md): a bundle prepared here starts ALMA as another
user, with an empty HOME, a PATH without the project's venv and no network; the README's quick
start works; that HOME is left exactly as it was; and the disk mounted elsewhere starts again.

As root only: the guest is ``nobody`` (``setpriv``) inside a network namespace of its own
(``unshare --net``). The figures it prints (``-s``) are the ones docs/benchmarks.md quotes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import wait_for

PROJECT = Path(__file__).resolve().parents[2]
GUEST_UID = GUEST_GID = 65534  # nobody
HOST_PYTHON = "/usr/bin/python3"

pytestmark = [pytest.mark.root, pytest.mark.timeout(1800)]


def _why_not() -> str:
    if os.geteuid() != 0:
        return "needs root: the guest is another user (setpriv) in its own network namespace"
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            return f"needs {tool} (util-linux)"
    ok = subprocess.run(
        [HOST_PYTHON, "-c", "import sys; sys.exit(sys.version_info < (3, 11))"], check=False
    )
    if ok.returncode != 0:
        return f"needs a Python 3.11+ at {HOST_PYTHON} for the guest"
    return ""


def _listing(folder: Path) -> list[tuple[str, int, int, int]]:
    """Every entry below ``folder`` and the folder itself: path, mode, size, mtime (a file
    written and removed again still moves its folder's mtime)."""
    entries = []
    for path in [folder, *sorted(folder.rglob("*"))]:
        st = path.lstat()
        entries.append((str(path.relative_to(folder)), st.st_mode, st.st_size, st.st_mtime_ns))
    return entries


def _guests_temporary_files(disk: Path) -> list[str]:
    """The guest's files in the host's temporary folders, the disk's own folder aside."""
    found = []
    for top in ("/tmp", "/var/tmp"):
        # Other tests come and go in /tmp meanwhile: what vanishes mid-walk is theirs.
        for folder, dirs, files in os.walk(top, onerror=lambda _error: None):
            if Path(folder).is_relative_to(disk):
                dirs.clear()
                continue
            for name in dirs + files:
                path = os.path.join(folder, name)
                try:
                    if os.lstat(path).st_uid == GUEST_UID:
                        found.append(path)
                except OSError:
                    continue
    return sorted(found)


class Guest:
    """Runs commands as ``nobody`` with only HOME, PATH, LANG and XDG_RUNTIME_DIR set, in a
    network namespace of its own per command (the socket is a path: it crosses them)."""

    def __init__(self, home: Path, runtime: Path) -> None:
        self.env = {
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": str(runtime),
        }

    def run(
        self, *argv: str, timeout: float = 300.0, cpuinfo: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``cpuinfo``: a file shown as /proc/cpuinfo (a mount namespace of its own too)."""
        guest = ["setpriv", f"--reuid={GUEST_UID}", f"--regid={GUEST_GID}", "--clear-groups"]
        if cpuinfo is None:
            wrapped = ["unshare", "--net", *guest, "--", *argv]
        else:
            mount = f'mount --bind {cpuinfo} /proc/cpuinfo && exec "$@"'
            wrapped = ["unshare", "--net", "--mount", "sh", "-c", mount, "sh", *guest, "--", *argv]
        return subprocess.run(
            wrapped,
            env=self.env,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def ok(self, *argv: str, timeout: float = 300.0) -> str:
        done = self.run(*argv, timeout=timeout)
        assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def ctl(self, bundle: Path, *args: str) -> Any:
        return json.loads(self.ok(str(bundle / "alma"), "ctl", "--json", *args))


@pytest.fixture
def disk() -> Iterator[Path]:
    """A folder standing for the portable disk, reachable by the guest, removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="alma-portable-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _chown_tree(top: Path) -> None:
    for path in [top, *top.rglob("*")]:
        os.lchown(path, GUEST_UID, GUEST_GID)


def test_a_bundle_starts_alma_offline_as_another_user_and_leaves_no_trace(disk: Path) -> None:
    why = _why_not()
    if why:
        pytest.skip(why)
    mount = disk / "media" / "usb"
    root, bundle = mount / "ALMA", mount / "alma-portable"
    ctl = str(Path(sys.executable).parent / "alma-ctl")
    subprocess.run([ctl, "--root", str(root), "init", "--with-examples"], check=True)
    # The quick start's messy download folder, old enough for any settle time.
    messy = root / "user" / "descargas"
    messy.mkdir(parents=True)
    old = time.time() - 3600
    for i in range(1, 21):
        for name, text in ((f"foto_{i}.jpg", f"foto {i}"), (f"nota_{i}.pdf", f"nota {i}")):
            (messy / name).write_text(text + "\n")
            os.utime(messy / name, (old, old))

    host_python = subprocess.run(
        [HOST_PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    started = time.monotonic()
    subprocess.run(
        [str(PROJECT / "alma.sh"), "portable", str(bundle), str(root)],
        env={**os.environ, "ALMA_PORTABLE_PYTHONS": host_python},
        check=True,
        capture_output=True,
    )
    print(f"\nprepare (Python {host_python} only): {time.monotonic() - started:.1f} s")
    # The disk is the guest's: a person's disk is theirs, whoever prepared it.
    _chown_tree(mount)
    (mount.parent).chmod(0o755)

    home, runtime = disk / "home", disk / "run"
    for folder, mode in ((home, 0o755), (runtime, 0o700)):
        folder.mkdir(mode=mode)
        folder.chmod(mode)
        os.chown(folder, GUEST_UID, GUEST_GID)
    guest = Guest(home, runtime)
    # The harness itself: no network, not the project's venv, not root.
    # Offline: the guest's network namespace has the loopback alone (nothing is sent to learn it).
    table = guest.ok("cat", "/proc/net/dev").splitlines()[2:]  # the reader's own namespace
    links = [line.split(":")[0].strip() for line in table]
    assert links == ["lo"], f"the guest sees network links {links}"
    assert guest.ok("sh", "-c", "id -u; command -v alma-ctl || true").split() == [str(GUEST_UID)]
    before = _listing(home)
    temporary = _guests_temporary_files(disk)

    started = time.monotonic()
    first = guest.run(str(bundle / "alma"), "start", timeout=900)
    first_start = time.monotonic() - started
    assert first.returncode == 0, first.stdout + first.stderr
    try:
        status = guest.ctl(bundle, "status")
        assert status["running"] is True and status["root"] == str(root), status
        print(f"first start on a new host, to status answering: {first_start:.1f} s")
        print(f"sandbox in use: {status.get('sandbox')}")

        # The README's quick start.
        guest.ctl(bundle, "analyze", "--wait")
        pending = guest.ctl(bundle, "suggestions", "list")
        (tidy,) = [s for s in pending if s["kind"] == "organize"]
        guest.ctl(bundle, "suggestions", "show", str(tidy["id"]))
        guest.ctl(bundle, "suggestions", "accept", str(tidy["id"]))
        assert not (messy / "foto_1.jpg").exists(), "the accepted plan moved nothing"
        assert guest.ctl(bundle, "history")
        guest.ctl(bundle, "undo")
        assert sorted(p.name for p in messy.iterdir()) == sorted(
            [f"foto_{i}.jpg" for i in range(1, 21)] + [f"nota_{i}.pdf" for i in range(1, 21)]
        )

        def found() -> Any:
            done = guest.run(
                str(bundle / "alma"),
                "ctl",
                "--json",
                "memory",
                "search",
                "¿cómo quiero que me respondas?",
            )
            return json.loads(done.stdout) if done.returncode == 0 and done.stdout else None

        hits = wait_for(found, timeout=300, interval=1.0, what="memory search answering")
        assert hits, "memory search found none of the example memories"
        said = guest.ok(
            str(bundle / "alma"), "chat", "--once", "hola, ¿qué sabes hacer?", timeout=600
        )
        assert said.strip(), "alma chat --once said nothing"

        guest.ok(str(bundle / "alma"), "stop")
        started = time.monotonic()
        guest.ok(str(bundle / "alma"), "start")
        print(f"later start on the same host: {time.monotonic() - started:.1f} s")
        guest.ok(str(bundle / "alma"), "stop")

        # The disk mounted elsewhere: the same environment starts, nothing rebuilt.
        moved = disk / "media" / "otro"
        mount.rename(moved)
        bundle, root = moved / "alma-portable", moved / "ALMA"
        started = time.monotonic()
        again = guest.run(str(bundle / "alma"), "start", timeout=900)
        assert again.returncode == 0, again.stdout + again.stderr
        print(f"start from another mount point: {time.monotonic() - started:.1f} s")
        assert "once" not in again.stderr, f"the environment was built again: {again.stderr}"
        status = guest.ctl(bundle, "status")
        assert status["running"] is True and status["root"] == str(root), status
        assert status["model"]["embedded"] is True, status["model"]
        guest.ok(str(bundle / "alma"), "stop")

        # A CPU without AVX2: said in one sentence, the model off, the rest as always.
        plain = disk / "cpuinfo"
        plain.write_text(
            "".join(
                line.replace(" avx2", "")
                for line in Path("/proc/cpuinfo").read_text().splitlines(keepends=True)
            )
        )
        slow = guest.run(str(bundle / "alma"), "start", cpuinfo=plain)
        assert slow.returncode == 0, slow.stdout + slow.stderr
        assert "this CPU has no AVX2: the local model is off" in slow.stderr, slow.stderr
        status = guest.ctl(bundle, "status")
        assert status["model"]["state"] == "none", status["model"]
        assert wait_for(found, timeout=300, interval=1.0, what="memory search without AVX2")
    finally:
        guest.run(str(bundle / "alma"), "stop")
    assert _listing(home) == before, "ALMA left files in the guest's HOME"
    assert _guests_temporary_files(disk) == temporary, "ALMA left files in the host's /tmp"
    size = sum(p.stat().st_size for p in (bundle / "wheels").iterdir())
    venvs = sum(p.lstat().st_size for p in (bundle / "venvs").rglob("*"))
    print(f"bundle wheels: {size / 2**20:.0f} MB; the guest's venv: {venvs / 2**20:.0f} MB")
