"""Which sandbox confines the plan runner here, and the command line that confines it.

Three backends, tried in this order by ``choose("auto")``: Landlock (our own launcher,
``sandbox.landlock``, no setuid helper, no extra package), bubblewrap and firejail. A backend is
trusted only after ``probe`` saw a real confined child fail to write outside a temporary zone,
succeed inside it, and fail to open a TCP connection. Running unconfined is never silent: it
needs ``allow_unconfined`` and says so loudly in ``detail`` and in the log.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path

from policies.errors import BadArgumentError, UnavailableError
from policies.i18n import N_, _
from sandbox import landlock

log = logging.getLogger(__name__)


class Backend(StrEnum):
    LANDLOCK = "landlock"
    BWRAP = "bwrap"
    FIREJAIL = "firejail"
    NONE = "none"


AUTO_ORDER = (Backend.LANDLOCK, Backend.BWRAP, Backend.FIREJAIL)

#: What a person can do when a backend does not work, appended to the reason.
FIXES: dict[Backend, str] = {
    Backend.LANDLOCK: "Landlock needs Linux 5.19+ with landlock in the kernel's lsm= list",
    Backend.BWRAP: "install bubblewrap (apt install bubblewrap) and allow user namespaces",
    Backend.FIREJAIL: (
        "install firejail (apt install firejail); a user other than root must be listed "
        "in /etc/firejail/firejail.users"
    ),
}

_PROBE_TIMEOUT_S = 60.0


def validate_writable(writable: Sequence[os.PathLike[str] | str]) -> list[str]:
    """The writable directories as normalized absolute paths, or ValueError saying which is wrong.

    Every component is checked with lstat: a symlink anywhere in the path could point a zone
    at a place the person never approved.
    """
    zones: list[str] = []
    for raw in writable:
        path = Path(raw)
        if not path.is_absolute():
            raise ValueError(f"writable path {str(raw)!r} is relative: give an absolute path")
        if ".." in path.parts:
            raise ValueError(f"writable path {str(raw)!r} contains '..': give the plain path")
        if path == Path("/"):
            raise ValueError("refusing to make the whole filesystem writable: name a directory")
        current = Path("/")
        for part in path.parts[1:]:
            current = current / part
            try:
                mode = current.lstat().st_mode
            except FileNotFoundError:
                raise ValueError(f"writable path {str(raw)!r} does not exist") from None
            if stat.S_ISLNK(mode):
                raise ValueError(
                    f"writable path {str(raw)!r} goes through the symlink {str(current)!r}: "
                    "give the real path"
                )
        if not stat.S_ISDIR(mode):
            raise ValueError(f"writable path {str(raw)!r} is not a directory")
        zones.append(str(path))
    return zones


#: The folder that holds ALMA's packages: the one place an isolated child imports ALMA from.
PROJECT = Path(__file__).resolve().parent.parent
_BOOT = (
    "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"
)


def isolated_start(
    module: str, args: Sequence[str] = (), python: str = sys.executable
) -> list[str]:
    """The command line that runs ``module`` with ``args`` as ``python -m`` would, isolated.

    ``-I``: the child's sys.path is the interpreter's own and :data:`PROJECT`, never the
    daemon's working folder, PYTHONPATH or the user's site, so a module planted there (a
    ``queue.py``) never runs as the person; ``-B``: no bytecode written.
    """
    return [python, "-I", "-B", "-c", _BOOT, str(PROJECT), module, *args]


# Run by path with -I: the launcher then imports nothing from the working directory,
# PYTHONPATH or even this project, and works however the project is installed.
_LAUNCHER = (sys.executable, "-I", str(Path(landlock.__file__).resolve()))


#: Run inside bubblewrap and firejail, in front of the command: the child makes no socket (the
#: Landlock launcher installs the same filter itself). See landlock.deny_sockets.
_DENY_SOCKETS = (*_LAUNCHER, "--only-deny-sockets", "--")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise UnavailableError(
            _("{name} is not installed or not on PATH: cannot confine the run.", name=name)
        )
    return found


def _landlock_prefix(zones: list[str], detail: str) -> list[str]:
    # The launcher reports in ALMA_SANDBOX what really held, not what the probe saw.
    rw = [arg for zone in zones for arg in ("--rw", zone)]
    launcher = [*_LAUNCHER, "--parent", str(os.getpid())]
    return [*launcher, *rw, "--"]


def _bwrap_prefix(zones: list[str], detail: str) -> list[str]:
    # --bind after --dev: a zone under /dev/shm must be bound over bwrap's fresh /dev.
    # --cap-drop ALL: otherwise root inside can remount / read-write.
    binds = [arg for zone in zones for arg in ("--bind", zone, zone)]
    return [
        _tool("bwrap"),
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *binds,
        *("--setenv", landlock.ENV_REPORT, detail),
        *("--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--"),
        *_DENY_SOCKETS,
    ]


#: Characters firejail 0.9.72 rejects in a path ("invalid filename"), checked here.
FIREJAIL_REJECTS = frozenset(',&!"<>%^{};\\')


def _firejail_prefix(zones: list[str], detail: str) -> list[str]:
    for zone in zones:
        if any(c in FIREJAIL_REJECTS or not c.isprintable() for c in zone):
            raise ValueError(
                f"firejail cannot confine to {zone!r}: it refuses control characters and any of "
                f"{''.join(sorted(FIREJAIL_REJECTS))} in a path; use landlock or bwrap"
            )
    shim = [*_LAUNCHER, "--only-die-with-parent", "--parent", str(os.getpid()), "--"]
    firejail = [_tool("firejail"), "--quiet", "--noprofile", "--read-only=/"]
    rw = [f"--read-write={zone}" for zone in zones]
    flags = [
        f"--env={landlock.ENV_REPORT}={detail}",
        "--net=none",
        "--caps.drop=all",
        "--seccomp",
        "--nonewprivs",
        "--",
        *_DENY_SOCKETS,
    ]
    return [*shim, *firejail, *rw, *flags]


_PREFIXES: dict[Backend, Callable[[list[str], str], list[str]]] = {
    Backend.LANDLOCK: _landlock_prefix,
    Backend.BWRAP: _bwrap_prefix,
    Backend.FIREJAIL: _firejail_prefix,
    Backend.NONE: lambda zones, detail: [],
}


@dataclass(frozen=True)
class Confinement:
    backend: Backend
    detail: str  # one line for `alma-ctl status`

    @property
    def renames_across_zones(self) -> bool:
        """Whether a rename between two writable directories on one filesystem works inside.

        bubblewrap and firejail bind each directory as its own mount, and the kernel refuses a
        rename between mounts (EXDEV) even on the same filesystem: the caller must copy across,
        as between filesystems. Landlock leaves the mounts alone.
        """
        return self.backend in (Backend.LANDLOCK, Backend.NONE)

    def wrap(self, argv: list[str], writable: Sequence[os.PathLike[str] | str]) -> list[str]:
        """The command to exec so that ``argv`` runs confined to ``writable``.

        Exec it from this process (the launchers die with the process that called ``wrap``),
        with ``close_fds=True``: a descriptor opened before confinement keeps its rights.
        """
        if not argv:
            raise ValueError("nothing to run: the command is empty")
        zones = validate_writable(writable)
        return [*_PREFIXES[self.backend](zones, self.detail), *argv]


_PROBE_CHILD = """
import os, socket, sys
zone, outside, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(os.path.join(zone, "inside"), "w") as f:
    f.write("ok")
try:
    open(os.path.join(outside, "escaped"), "w").close()
except OSError:
    pass
else:
    sys.exit("the sandbox let a write outside the writable directory through")
try:
    socket.create_connection(("127.0.0.1", port), timeout=10).close()
except OSError:
    pass
else:
    sys.exit("the sandbox let a TCP connection through")
try:
    socket.socketpair()
except OSError:
    pass
else:
    sys.exit("the sandbox let a Unix socket be made (the control socket would be reachable)")
print(os.environ.get("ALMA_SANDBOX", ""))
"""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _version(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return tool
    lines = out.stdout.splitlines()
    words = lines[0].split() if lines else []
    return f"{Path(tool).name} {words[-1]}" if words else tool


def _run_probe(backend: Backend) -> tuple[bool, str]:
    if backend is Backend.NONE:
        return False, _("'none' is the absence of a sandbox")
    if backend is Backend.LANDLOCK:
        try:
            abi = landlock.abi_version()
        except landlock.LandlockError as exc:
            return False, str(exc)
        if abi < landlock.MIN_ABI:
            return False, _(
                "Landlock ABI {abi} cannot rename across directories (ALMA needs 2+)", abi=abi
            )
    tool = ""
    if backend is not Backend.LANDLOCK:
        tool = shutil.which(str(backend)) or ""
        if not tool:
            return False, _("{backend} is not installed or not on PATH", backend=backend)
    with tempfile.TemporaryDirectory(prefix="alma-probe-") as tmp, socket.socket() as listener:
        zone, outside = Path(tmp, "zone"), Path(tmp, "outside")
        zone.mkdir()
        outside.mkdir()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = str(listener.getsockname()[1])
        child = [sys.executable, "-I", "-c", _PROBE_CHILD, str(zone), str(outside), port]
        command = Confinement(backend, "probe").wrap(child, [zone])
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=_PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return False, _("the confined test child did not run: {exc}", exc=exc)
        if done.returncode != 0:
            why = _last_line(done.stderr) or _("exit status {rc}", rc=done.returncode)
            if "not allowed to use Firejail" in done.stderr:
                why = _(
                    "firejail refuses this user (uid {uid}): list them in "
                    "/etc/firejail/firejail.users",
                    uid=os.getuid(),
                )
            return False, why
        if (outside / "escaped").exists():
            return False, _("a write outside the writable directory got through")
        if not (zone / "inside").is_file():
            return False, _("the confined test child could not write inside its directory")
    if backend is Backend.LANDLOCK:
        return True, _last_line(done.stdout) or "landlock"
    net = landlock.NEW_NETNS if backend is Backend.BWRAP else "--net=none"
    return True, f"{_version(tool)}, {landlock.NETWORK_DENIED} ({net}), {landlock.CAPS_DROPPED}"


@cache
def probe(backend: Backend) -> tuple[bool, str]:
    """Whether ``backend`` really confines here, and the detail line or the reason it does not.

    Runs a tiny confined child; cached per process because the answer does not change while
    the daemon runs and each probe costs a process start or two.
    """
    return _run_probe(Backend(backend))


#: The report's words (sandbox.landlock) as a person reads them: the report itself stays in
#: one language, it is what the confined child is told and what the log keeps.
_SPOKEN = (
    (landlock.NEW_USER_NETNS, N_("a new user and network namespace")),
    (landlock.NEW_NETNS, N_("a new network namespace")),
    (landlock.TCP_DENY, N_("Landlock's TCP rules")),
    (landlock.NETWORK_DENIED, N_("network denied")),
    (landlock.SCOPED, N_("signals and abstract sockets scoped")),
    (landlock.SOCKETS_DENIED, N_("sockets denied (seccomp)")),
    (landlock.CAPS_DROPPED, N_("capabilities dropped")),
)


def spoken(detail: str) -> str:
    """A confinement's detail line in the language of the moment."""
    for words, message in _SPOKEN:
        detail = detail.replace(words, _(message))
    return detail


def _unconfined(why: str) -> Confinement:
    detail = _(
        "UNCONFINED: {why}; plans run with the daemon's full rights, nothing stops a bad op",
        why=why,
    )
    log.warning("sandbox: %s", detail)
    return Confinement(Backend.NONE, detail)


def choose(preference: str = "auto", *, allow_unconfined: bool = False) -> Confinement:
    """The confinement to use: the preferred backend, or the first that works for "auto"."""
    wanted = preference.strip().lower()
    names = ", ".join(["auto", *Backend])
    if wanted != "auto" and wanted not in set(Backend):
        raise BadArgumentError(
            _(
                "Unknown sandbox {preference!r}: use one of {names}.",
                preference=preference,
                names=names,
            )
        )
    if wanted == Backend.NONE:
        if allow_unconfined:
            return _unconfined("the configuration asks for no sandbox")
        raise UnavailableError(
            _(
                "The configuration asks for no sandbox but running unconfined is not allowed: "
                "choose auto, landlock, bwrap or firejail, or allow unconfined runs."
            )
        )
    if wanted != "auto":
        backend = Backend(wanted)
        ok, detail = probe(backend)
        if ok:
            return Confinement(backend, detail)
        raise UnavailableError(
            _(
                (
                    "The {backend} sandbox does not work here ({detail}): {value}, or set the "
                    "sandbox to auto."
                ),
                backend=backend,
                detail=detail,
                value=FIXES[backend],
            )
        )
    reasons: list[str] = []
    for backend in AUTO_ORDER:
        ok, detail = probe(backend)
        if ok:
            return Confinement(backend, detail)
        reasons.append(f"{backend}: {detail}")
    why = _("no sandbox works here ({reasons})", reasons="; ".join(reasons))
    if allow_unconfined:
        return _unconfined(why)
    raise UnavailableError(
        _(
            ("Refusing to run plans: {why}. Enable Landlock, or install bubblewrap or firejail."),
            why=why,
        )
    )
