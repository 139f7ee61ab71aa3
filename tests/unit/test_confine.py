"""The sandbox backends, tested by really trying to escape them.

For each backend a confined child tries to write outside its writable directory, to write
inside it, to reach a TCP listener and a UDP socket of this test on 127.0.0.1, and to rename a
file out of its directory. An unconfined control run of the same child proves the checks would
see an escape. A backend whose tool is missing is skipped, unless ALMA_REQUIRE_BACKENDS=1.
"""

from __future__ import annotations

import errno
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from policies.errors import BadArgumentError, ErrorCode, UnavailableError
from sandbox import confine, landlock
from sandbox.confine import Backend, Confinement

REQUIRE = os.environ.get("ALMA_REQUIRE_BACKENDS") == "1"
REAL = (Backend.LANDLOCK, Backend.BWRAP, Backend.FIREJAIL)

_CHILD = r"""
import json, os, socket, sys
cfg = json.loads(sys.argv[1])
results = {}

def attempt(name, action):
    try:
        action()
    except OSError as exc:
        results[name] = f"errno {exc.errno}: {exc.strerror}"
    else:
        results[name] = "ok"

def write(path):
    with open(path, "w") as f:
        f.write("written from the sandbox")

def tcp():
    socket.create_connection(("127.0.0.1", cfg["tcp_port"]), timeout=10).close()

def udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"from-sandbox", ("127.0.0.1", cfg["udp_port"]))

def rename(src_dir, dst_dir, name):
    os.rename(os.path.join(src_dir, name), os.path.join(dst_dir, name))

attempt("write_outside", lambda: write(os.path.join(cfg["outside"], "escaped.txt")))
attempt("write_inside", lambda: write(os.path.join(cfg["zone"], "inside.txt")))
if cfg["shm_zone"]:
    attempt("write_shm", lambda: write(os.path.join(cfg["shm_zone"], "inside.txt")))
attempt("tcp", tcp)
attempt("udp", udp)
attempt("rename_out", lambda: rename(cfg["zone"], cfg["outside"], "victim.txt"))
attempt("rename_between_zones", lambda: rename(cfg["zone"], cfg["zone2"], "between.txt"))
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith(("CapEff:", "CapBnd:")):
            key, value = line.split(":")
            results[key] = value.strip()
results["ALMA_SANDBOX"] = os.environ.get("ALMA_SANDBOX", "")
print(json.dumps(results))
"""


def _missing(backend: Backend) -> str | None:
    """Why the backend's tool (or kernel feature) is absent, or None when it is there."""
    if backend is Backend.LANDLOCK:
        try:
            abi = landlock.abi_version()
        except landlock.LandlockError as exc:
            return str(exc)
        return None if abi >= landlock.MIN_ABI else f"Landlock ABI {abi} is below 2"
    return None if shutil.which(str(backend)) else f"{backend} is not installed"


def _require(backend: Backend) -> Confinement:
    """The working confinement, or skip (fail under ALMA_REQUIRE_BACKENDS=1) if its tool is missing.

    An installed backend whose probe fails is a failure: skipping it would hide a broken
    sandbox. The one exception is firejail refusing a non-root user by its own configuration.
    """
    missing = _missing(backend)
    if missing is not None:
        if REQUIRE:
            pytest.fail(f"ALMA_REQUIRE_BACKENDS=1 but {missing}")
        pytest.skip(missing)
    ok, detail = confine.probe(backend)
    if not ok and "firejail.users" in detail and not REQUIRE:
        pytest.skip(detail)
    assert ok, f"{backend} is installed but does not confine: {detail}"
    return Confinement(backend, detail)


@dataclass
class Escape:
    """What the confined child reported, and what the test saw from outside."""

    backend: Backend
    results: dict[str, str]
    zone: Path
    zone2: Path
    outside: Path
    shm_zone: Path | None
    tcp_pending: bool
    udp_first: bytes


def _try_to_escape(conf: Confinement, base: Path, shm_zone: Path | None) -> Escape:
    zone, zone2, outside = base / "zone", base / "zone2", base / "outside"
    for d in (zone, zone2, outside):
        d.mkdir()
    (zone / "victim.txt").write_text("victim")
    (zone / "between.txt").write_text("between")
    with (
        socket.socket() as listener,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as marker,
    ):
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        udp.bind(("127.0.0.1", 0))
        cfg = {
            "zone": str(zone),
            "zone2": str(zone2),
            "outside": str(outside),
            "shm_zone": str(shm_zone) if shm_zone else "",
            "tcp_port": listener.getsockname()[1],
            "udp_port": udp.getsockname()[1],
        }
        zones = [zone, zone2, *([shm_zone] if shm_zone else [])]
        argv = [sys.executable, "-I", "-c", _CHILD, json.dumps(cfg)]
        done = subprocess.run(
            conf.wrap(argv, zones),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, f"confined child failed: {done.stderr}"
        results = json.loads(done.stdout.splitlines()[-1])
        listener.setblocking(False)
        try:
            listener.accept()[0].close()
            tcp_pending = True
        except BlockingIOError:
            tcp_pending = False
        # Loopback delivers a datagram inside sendto(), so had the child's datagram arrived
        # it would be queued before this marker: reading the marker first proves it did not.
        marker.sendto(b"marker", udp.getsockname())
        udp.settimeout(30)
        udp_first = udp.recv(64)
    return Escape(conf.backend, results, zone, zone2, outside, shm_zone, tcp_pending, udp_first)


@pytest.fixture
def shm_zone() -> Iterator[Path | None]:
    """A writable directory on another filesystem (tmpfs), where there is one."""
    if not Path("/dev/shm").is_dir():
        yield None
        return
    path = Path(tempfile.mkdtemp(prefix="alma-test-", dir="/dev/shm"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module", params=REAL, ids=str)
def escape(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Escape]:
    conf = _require(request.param)
    base = tmp_path_factory.mktemp(f"escape-{request.param}")
    has_shm = Path("/dev/shm").is_dir()
    shm = Path(tempfile.mkdtemp(prefix="alma-test-", dir="/dev/shm")) if has_shm else None
    try:
        yield _try_to_escape(conf, base, shm)
    finally:
        if shm is not None:
            shutil.rmtree(shm, ignore_errors=True)


def test_write_outside_the_zone_fails(escape: Escape) -> None:
    assert escape.results["write_outside"] != "ok"
    assert not (escape.outside / "escaped.txt").exists()


def test_write_inside_the_zone_succeeds(escape: Escape) -> None:
    assert escape.results["write_inside"] == "ok"
    assert (escape.zone / "inside.txt").read_text() == "written from the sandbox"


def test_zone_on_another_filesystem_is_writable(escape: Escape) -> None:
    if escape.shm_zone is None:
        pytest.skip("no /dev/shm here")
    assert escape.results["write_shm"] == "ok"
    assert (escape.shm_zone / "inside.txt").read_text() == "written from the sandbox"


def test_tcp_connection_fails(escape: Escape) -> None:
    assert escape.results["tcp"] != "ok"
    assert not escape.tcp_pending


def test_udp_datagram_never_arrives(escape: Escape) -> None:
    assert escape.udp_first == b"marker", f"the sandbox said: {escape.results['udp']}"


def test_rename_out_of_the_zone_fails(escape: Escape) -> None:
    assert escape.results["rename_out"] != "ok"
    assert (escape.zone / "victim.txt").read_text() == "victim"
    assert not (escape.outside / "victim.txt").exists()


def test_rename_between_two_zones(escape: Escape) -> None:
    """Landlock allows it; bubblewrap and firejail bind each zone as its own mount, so the
    kernel answers EXDEV and the action engine must copy across, as between filesystems.
    ``Confinement.renames_across_zones`` must say which."""
    outcome = escape.results["rename_between_zones"]
    landed = (escape.zone2 / "between.txt").exists()
    stayed = (escape.zone / "between.txt").exists()
    assert landed != stayed, "the file must be in exactly one of the zones"
    if outcome == "ok":
        assert landed
    else:
        assert outcome.startswith(f"errno {errno.EXDEV}:"), outcome
        assert stayed
    assert (outcome == "ok") is Confinement(escape.backend, "").renames_across_zones


def test_confined_child_is_told_how_it_is_confined(escape: Escape) -> None:
    assert escape.results["ALMA_SANDBOX"].startswith(str(escape.backend))
    assert "network denied" in escape.results["ALMA_SANDBOX"]


def test_capabilities_are_dropped(escape: Escape) -> None:
    assert int(escape.results["CapEff"], 16) == 0
    assert int(escape.results["CapBnd"], 16) == 0


def test_unconfined_control_run_does_escape(tmp_path: Path, shm_zone: Path | None) -> None:
    """The same checks against no sandbox see every escape, so a pass above means something."""
    seen = _try_to_escape(Confinement(Backend.NONE, "UNCONFINED: test"), tmp_path, shm_zone)
    assert seen.results["write_outside"] == "ok"
    assert seen.results["tcp"] == "ok" and seen.tcp_pending
    assert seen.udp_first == b"from-sandbox"
    assert seen.results["rename_out"] == "ok"


_ORPHANING_PARENT = """
import os, subprocess, sys
from sandbox.confine import Backend, Confinement
backend, zone, fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
argv = Confinement(Backend(backend), "test").wrap(["sh", "-c", "echo started; exec sleep 60"], [zone])
subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=subprocess.DEVNULL)
os.close(fd)
sys.stdin.read()
"""


@pytest.mark.parametrize("backend", REAL, ids=str)
def test_confined_child_dies_with_its_parent(backend: Backend, tmp_path: Path) -> None:
    _require(backend)
    if backend is Backend.FIREJAIL and os.geteuid() != 0:
        pytest.skip("firejail is setuid: the kernel clears PDEATHSIG for a non-root caller")
    read_end, write_end = os.pipe()
    parent = subprocess.Popen(
        [
            sys.executable,
            "-I",
            "-c",
            _ORPHANING_PARENT,
            str(backend),
            str(tmp_path),
            str(write_end),
        ],
        pass_fds=[write_end],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        try:
            assert pipe.readline() == b"started\n"
        finally:
            parent.kill()
            parent.wait()
        # EOF comes once every holder of the pipe (the confined sleep included) is gone; the
        # deadline only bounds a failing run, it is not what the test measures.
        ready, _, _ = select.select([pipe], [], [], 60)
        assert ready and pipe.read() == b"", "the confined child outlived its parent"


# -- validation of the writable directories ------------------------------------------------


@pytest.mark.parametrize("backend", list(Backend), ids=str)
def test_wrap_refuses_bad_writable_paths(backend: Backend, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "file").write_text("")
    conf = Confinement(backend, "test")
    (real / "sub").mkdir()
    cases = [
        ("relative", Path("relative/dir")),
        ("does not exist", tmp_path / "missing"),
        ("not a directory", tmp_path / "file"),
        ("symlink", tmp_path / "link"),
        ("symlink", tmp_path / "link" / "sub"),
        ("'..'", tmp_path / "real" / ".." / "real"),
        ("whole filesystem", Path("/")),
    ]
    for words, path in cases:
        with pytest.raises(ValueError, match=words):
            conf.wrap(["true"], [path])


@pytest.mark.parametrize("name", ["a,b", "a;b", "a\\b", "a\nb"])
def test_firejail_wrap_refuses_paths_firejail_would_reject(name: str, tmp_path: Path) -> None:
    (tmp_path / name).mkdir()
    with pytest.raises(ValueError, match="firejail cannot confine"):
        Confinement(Backend.FIREJAIL, "test").wrap(["true"], [tmp_path / name])
    assert Confinement(Backend.LANDLOCK, "test").wrap(["true"], [tmp_path / name])[-1] == "true"


def test_wrap_refuses_an_empty_command(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        Confinement(Backend.LANDLOCK, "test").wrap([], [tmp_path])


def test_unconfined_wrap_runs_the_command_as_is(tmp_path: Path) -> None:
    assert Confinement(Backend.NONE, "UNCONFINED").wrap(["true", "x"], [tmp_path]) == ["true", "x"]


# -- the Landlock launcher refuses rather than run half-confined ----------------------------


def _launch(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-I", "-m", "sandbox.landlock", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--rw", "relative", "--", "true"), "not absolute"),
        (("--rw", "/nonexistent-alma", "--", "true"), "symlinks"),
        (("--rw", "/tmp"), "usage"),
        (("--rw", "/tmp", "--"), "no command"),
        (("--parent", "1", "--rw", "/tmp", "--", "true"), "parent process exited"),
        (("--only-die-with-parent", "--rw", "/tmp", "--", "true"), "takes no --rw"),
        (("--only-die-with-parent", "--parent", "1", "--", "true"), "parent process exited"),
    ],
)
def test_landlock_launcher_errors_are_one_sentence(args: tuple[str, ...], words: str) -> None:
    _require(Backend.LANDLOCK)
    done = _launch(*args)
    assert done.returncode == landlock.LAUNCHER_FAILED
    assert words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_landlock_launcher_refuses_a_symlinked_zone(tmp_path: Path) -> None:
    """The launcher walks the path again itself: a symlink swapped in after validation fails."""
    _require(Backend.LANDLOCK)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    done = _launch("--rw", str(tmp_path / "link"), "--", "true")
    assert done.returncode == landlock.LAUNCHER_FAILED
    assert "symlinks" in done.stderr


# -- choose() ------------------------------------------------------------------------------


def _fake_probe(working: set[Backend]) -> Callable[[Backend], tuple[bool, str]]:
    def probe(backend: Backend) -> tuple[bool, str]:
        if backend in working:
            return True, f"{backend} (fake)"
        return False, f"{backend} fake reason"

    return probe


def test_auto_picks_a_backend_that_works() -> None:
    if all(_missing(b) for b in REAL) and not REQUIRE:
        pytest.skip("no sandbox backend is installed here")
    conf = confine.choose()
    assert conf.backend in REAL
    assert confine.probe(conf.backend) == (True, conf.detail)
    first_working = next(b for b in REAL if confine.probe(b)[0])
    assert conf.backend is first_working


def test_auto_skips_a_backend_that_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine, "probe", _fake_probe({Backend.BWRAP, Backend.FIREJAIL}))
    assert confine.choose("auto") == Confinement(Backend.BWRAP, "bwrap (fake)")


def test_named_backend_is_used_when_it_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine, "probe", _fake_probe(set(REAL)))
    assert confine.choose("Firejail").backend is Backend.FIREJAIL


@pytest.mark.parametrize("allow", [False, True])
def test_named_unavailable_backend_raises(monkeypatch: pytest.MonkeyPatch, allow: bool) -> None:
    monkeypatch.setattr(confine, "probe", _fake_probe({Backend.LANDLOCK}))
    with pytest.raises(UnavailableError, match="bwrap") as caught:
        confine.choose("bwrap", allow_unconfined=allow)
    assert caught.value.code == ErrorCode.UNAVAILABLE
    assert "bwrap fake reason" in caught.value.message
    assert "install bubblewrap" in caught.value.message


def test_nothing_available_raises_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine, "probe", _fake_probe(set()))
    with pytest.raises(UnavailableError) as caught:
        confine.choose()
    for backend in REAL:
        assert f"{backend} fake reason" in caught.value.message


def test_nothing_available_and_allowed_is_loudly_unconfined(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(confine, "probe", _fake_probe(set()))
    conf = confine.choose(allow_unconfined=True)
    assert conf.backend is Backend.NONE
    assert conf.detail.startswith("UNCONFINED: ")
    assert "full rights" in conf.detail
    assert any("UNCONFINED" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


def test_explicit_none_needs_the_allowance() -> None:
    with pytest.raises(UnavailableError, match="not allowed"):
        confine.choose("none")
    assert confine.choose("none", allow_unconfined=True).detail.startswith("UNCONFINED: ")


def test_unknown_preference_is_a_bad_argument() -> None:
    with pytest.raises(BadArgumentError, match="auto, landlock, bwrap, firejail, none"):
        confine.choose("chroot")


def test_probe_is_cached_per_process() -> None:
    assert confine.probe(Backend.NONE) is confine.probe(Backend.NONE)
    assert confine.probe(Backend.NONE)[0] is False


def test_landlock_launcher_options_are_read_exactly() -> None:
    opts = landlock._parse(["--rw", "/a", "--rw=/b", "--parent", "7", "--", "x", "--rw", "y"])
    assert (opts.writable, opts.parent, opts.only) == (["/a", "/b"], 7, "")
    assert opts.command == ["x", "--rw", "y"]  # after "--", everything is the command's
    die = landlock._parse(["--only-die-with-parent", "--parent=3", "--", "x"])
    assert (die.writable, die.parent, die.only) == ([], 3, "die-with-parent")
    deny = landlock._parse(["--only-deny-sockets", "--", "x"])
    assert (deny.writable, deny.only, deny.command) == ([], "deny-sockets", ["x"])
    for bad in (
        ["--bogus", "--", "x"],
        ["--parent", "x", "--", "y"],
        ["--rw", "--", "x"][:1],
        ["--only-deny-sockets", "--only-die-with-parent", "--", "x"],
        ["--only-deny-sockets", "--rw", "/a", "--", "x"],
    ):
        with pytest.raises(landlock.LandlockError):
            landlock._parse(bad)


def test_an_isolated_start_runs_the_module_with_its_arguments_never_a_planted_one(
    tmp_path: Path,
) -> None:
    from sandbox.confine import PROJECT, isolated_start

    (tmp_path / "calendar.py").write_text("print('planted')\n", encoding="utf-8")
    argv = isolated_start("calendar", ["2026", "1"])
    assert argv[1:4] == ["-I", "-B", "-c"] and argv[5:7] == [str(PROJECT), "calendar"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    assert "January 2026" in done.stdout and "planted" not in done.stdout
    assert not list(tmp_path.glob("**/*.pyc"))
