"""Landlock launcher: confine this process to the writable directories, then exec a command.

Usage: ``python -m sandbox.landlock [--parent PID] --rw DIR [--rw DIR ...] -- CMD ARGS...``

Read and execute stay allowed everywhere; every write right is handled and granted only beneath
the ``--rw`` directories (and on /dev/null). The network is cut twice: Landlock denies TCP bind
and connect (ABI >= 4), and a new network namespace with its loopback down cuts UDP, raw and
everything else. Each step either holds or the launcher exits with ``LAUNCHER_FAILED`` and one
sentence on stderr: it never runs the command half-confined.

Imports only the standard library (ctypes), so it also runs as a plain script
(``python -I /path/to/landlock.py``): it needs neither the project installed nor a trusted
working directory. Syscall numbers are those of x86_64. For that reason it is one file, longer
than most: a script run by path cannot import a sibling module.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import stat
import sys

# No argparse, dataclasses or pathlib: every action starts this launcher, and those imports
# would be most of its start (it runs with -I, before the confined child's own start).
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446

LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1

# Filesystem rights (linux/landlock.h); the comment is the ABI that introduced each.
FS_EXECUTE = 1 << 0  # 1
FS_WRITE_FILE = 1 << 1  # 1
FS_READ_FILE = 1 << 2  # 1
FS_READ_DIR = 1 << 3  # 1
FS_REMOVE_DIR = 1 << 4  # 1
FS_REMOVE_FILE = 1 << 5  # 1
FS_MAKE_CHAR = 1 << 6  # 1
FS_MAKE_DIR = 1 << 7  # 1
FS_MAKE_REG = 1 << 8  # 1
FS_MAKE_SOCK = 1 << 9  # 1
FS_MAKE_FIFO = 1 << 10  # 1
FS_MAKE_BLOCK = 1 << 11  # 1
FS_MAKE_SYM = 1 << 12  # 1
FS_REFER = 1 << 13  # 2
FS_TRUNCATE = 1 << 14  # 3
FS_IOCTL_DEV = 1 << 15  # 5

NET_BIND_TCP = 1 << 0  # 4
NET_CONNECT_TCP = 1 << 1  # 4

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # 6
SCOPE_SIGNAL = 1 << 1  # 6

# seccomp: the confined command makes no socket at all (see deny_sockets).
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_RET_K = 0x06
_X32_SYSCALL_BIT = 0x40000000
#: machine -> (AUDIT_ARCH of its native calls, the numbers of socket, socketpair, connect and
#: io_uring_setup: io_uring can open and connect sockets without the first three).
_SOCKET_CALLS = {
    "x86_64": (0xC000003E, (41, 53, 42, 425)),
    "aarch64": (0xC00000B7, (198, 199, 203, 425)),
}

#: ABI 1 refuses every rename or link across directories (no REFER), which breaks moves.
MIN_ABI = 2

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

#: Exit status when confinement could not be set up (as env(1) and podman use 125).
LAUNCHER_FAILED = 125
#: The launcher tells the confined command (and the probe) what held, in this variable.
ENV_REPORT = "ALMA_SANDBOX"

#: What deny_sockets adds to the report once the filter holds.
SOCKETS_DENIED = "sockets denied (seccomp)"
#: The other words of the report a confined child gets in ALMA_SANDBOX (what really held):
#: written here once, and said in the person's language by sandbox.confine.spoken.
NETWORK_DENIED = "network denied"
TCP_DENY = "Landlock TCP deny"
NEW_NETNS = "new network namespace"
NEW_USER_NETNS = "new user+network namespace"
SCOPED = "signals and abstract sockets scoped"
CAPS_DROPPED = "capabilities dropped"

_READ_EVERYWHERE = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR


class LandlockError(Exception):
    """A confinement step failed; the message is one sentence for a person."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel struct is packed: 12 bytes, not 16
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = (
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
)
_libc.prctl.restype = ctypes.c_int


def _syscall(number: int, *args: object) -> int:
    return int(_libc.syscall(ctypes.c_long(number), *args))


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())


def _prctl(option: int, arg: int, what: str) -> None:
    if _libc.prctl(option, arg, 0, 0, 0) != 0:
        raise LandlockError(f"cannot {what}: {_errno_text()}")


def abi_version() -> int:
    """The kernel's Landlock ABI, or LandlockError saying why there is none."""
    abi = _syscall(
        SYS_LANDLOCK_CREATE_RULESET,
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION),
    )
    if abi >= 0:
        return abi
    err = ctypes.get_errno()
    if err == errno.ENOSYS:
        raise LandlockError("this kernel has no Landlock (it needs Linux 5.19 or later)")
    if err == errno.EOPNOTSUPP:
        raise LandlockError("Landlock is disabled at boot: add landlock to the kernel's lsm= list")
    raise LandlockError(f"cannot query the Landlock ABI: {os.strerror(err)}")


def handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # every ABI 1 right
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def handled_net(abi: int) -> int:
    return NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0


def scoped(abi: int) -> int:
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0


def zone_rights(abi: int) -> int:
    # Never device nodes: root could mknod the disk inside a zone and write it raw.
    return handled_fs(abi) & ~(FS_MAKE_CHAR | FS_MAKE_BLOCK | FS_IOCTL_DEV)


def _ruleset_size(abi: int) -> int:
    # Older kernels reject a struct larger than the one they know unless the tail is zero;
    # passing the exact size of this ABI keeps the intent plain.
    return 8 if abi < 4 else 16 if abi < 6 else 24


def open_zone(path: str) -> int:
    """An O_PATH fd of ``path`` reached one component at a time without following symlinks.

    The parent validated the path already; walking again here closes the window in which a
    component could have been swapped for a symlink to somewhere else.
    """
    if not os.path.isabs(path):
        raise LandlockError(f"writable path {path!r} is not absolute")
    flags = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
    fd = os.open("/", flags)
    try:
        for part in (p for p in path.split("/") if p not in ("", ".")):  # as pathlib splits
            if part == "..":
                raise LandlockError(f"writable path {path!r} contains '..'")
            nxt = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        raise LandlockError(
            f"writable path {path!r} is not a directory reachable without symlinks ({exc.strerror})"
        ) from None
    except LandlockError:
        os.close(fd)
        raise
    return fd


def _add_rule(ruleset_fd: int, target_fd: int, rights: int, what: str) -> None:
    attr = _PathBeneathAttr(rights, target_fd)
    rule_type = ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH)
    flags = ctypes.c_uint32(0)
    if _syscall(
        SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset_fd), rule_type, ctypes.byref(attr), flags
    ):
        raise LandlockError(f"cannot add the Landlock rule for {what}: {_errno_text()}")


def restrict_self(zone_fds: Sequence[int], abi: int) -> None:
    """Enforce the ruleset on this process and every process it will exec or fork."""
    attr = _RulesetAttr(handled_fs(abi), handled_net(abi), scoped(abi))
    size = ctypes.c_size_t(_ruleset_size(abi))
    ruleset_fd = _syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, ctypes.c_uint32(0))
    if ruleset_fd < 0:
        raise LandlockError(f"cannot create the Landlock ruleset: {_errno_text()}")
    try:
        root_fd = os.open("/", os.O_PATH | os.O_CLOEXEC)
        null_fd = os.open("/dev/null", os.O_PATH | os.O_CLOEXEC)
        try:
            _add_rule(ruleset_fd, root_fd, _READ_EVERYWHERE, "/")
            # Programs open /dev/null for writing all the time (subprocess, logging).
            null_rights = FS_READ_FILE | FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0)
            _add_rule(ruleset_fd, null_fd, null_rights, "/dev/null")
        finally:
            os.close(root_fd)
            os.close(null_fd)
        for fd in zone_fds:
            _add_rule(ruleset_fd, fd, zone_rights(abi), "a writable directory")
        if _syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)):
            raise LandlockError(f"cannot enforce the Landlock ruleset: {_errno_text()}")
    finally:
        os.close(ruleset_fd)


def _write_proc(name: str, text: str) -> None:
    with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
        f.write(text)


def isolate_network() -> str:
    """Move into a new network namespace (loopback down: nothing reaches any socket).

    Root (or CAP_SYS_ADMIN) can unshare the network directly; anyone else needs a user
    namespace first, in which their own uid and gid are mapped to themselves.
    """
    if _libc.unshare(ctypes.c_int(CLONE_NEWNET)) == 0:
        return NEW_NETNS
    first = _errno_text()
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNET)) != 0:
        raise LandlockError(
            f"cannot create a network namespace ({first}) nor a user namespace for one "
            f"({_errno_text()}): allow unprivileged user namespaces or run as root"
        )
    try:
        _write_proc("setgroups", "deny")
        _write_proc("uid_map", f"{uid} {uid} 1")
        _write_proc("gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        raise LandlockError(f"cannot map ids in the new user namespace: {exc.strerror}") from None
    return NEW_USER_NETNS


def _status_field(name: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        lines = status.read().splitlines()
    for line in lines:
        if line.startswith(name + ":"):
            return int(line.split()[1], 16)
    raise LandlockError(f"cannot read {name} from /proc/self/status")


def drop_capabilities() -> None:
    """Drop every capability, including the bounding set, so an exec as root regains none.

    Landlock does not stop a root process from loading a kernel module or using raw devices
    it already holds: without capabilities it cannot.
    """
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as cap_last:
        last = int(cap_last.read())
    for cap in range(last + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # no CAP_SETPCAP: fine unless we are root, checked below
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise LandlockError(f"cannot drop capabilities: {_errno_text()}")
    if _status_field("CapEff") or _status_field("CapPrm"):
        raise LandlockError("capabilities are still held after dropping them")
    if 0 in (os.getuid(), os.geteuid()) and _status_field("CapBnd"):
        raise LandlockError("cannot empty the capability bounding set of a root process")


def socket_filter(machine: str) -> list[tuple[int, int, int, int]]:
    """The seccomp program (code, jt, jf, k) that makes every way to a socket fail with EPERM.

    Calls of another ABI (i386 through int 0x80, x32) are refused whole: they would reach
    socketcall() or other numbers this program does not list.
    """
    if machine not in _SOCKET_CALLS:
        raise LandlockError(f"no socket filter is known for this machine ({machine})")
    arch, calls = _SOCKET_CALLS[machine]
    deny = 6 + len(calls)  # the index of the final RET ERRNO (after the RET ALLOW)
    prog = [
        (_BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_BPF_JEQ_K, 1, 0, arch),
        (_BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
        (_BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (_BPF_JGE_K, deny - 5, 0, _X32_SYSCALL_BIT),
    ]
    for number in calls:
        prog.append((_BPF_JEQ_K, deny - len(prog) - 1, 0, number))
    prog.append((_BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    prog.append((_BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM))
    assert len(prog) == deny + 1
    return prog


def deny_sockets() -> None:
    """Install the socket filter on this process (kept across exec and fork), then check it.

    The child needs no socket, and one is dangerous: the daemon's control socket is a pathname
    Unix socket, which neither Landlock's filesystem rules nor a network namespace cover, and
    the daemon's peer-uid check would pass. Needs no_new_privs (set here; harmless if set).
    """
    program = socket_filter(os.uname().machine)
    filters = (_SockFilter * len(program))(*(_SockFilter(*insn) for insn in program))
    fprog = _SockFprog(len(program), filters)
    _prctl(PR_SET_NO_NEW_PRIVS, 1, "set no_new_privs")
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise LandlockError(f"cannot install the seccomp filter against sockets: {_errno_text()}")
    # What held, not what was asked: socket(AF_UNIX, SOCK_STREAM, 0) must now fail with EPERM.
    fd = _syscall(_SOCKET_CALLS[os.uname().machine][1][0], 1, 1, 0)
    if fd >= 0 or ctypes.get_errno() != errno.EPERM:
        if fd >= 0:
            os.close(fd)
        raise LandlockError("a socket could still be made after the seccomp filter")


def die_with_parent(expected_parent: int | None) -> None:
    """SIGKILL this process (and what it execs) when its parent dies.

    The kernel keeps the setting across exec (unless a setuid binary changes the credentials).
    If the parent died before the setting took effect we were re-parented already: give up.
    """
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, "ask to die with the parent")
    if expected_parent is not None and os.getppid() != expected_parent:
        raise LandlockError("the parent process exited before the sandbox was set up")


class _Options:
    __slots__ = ("command", "only", "parent", "writable")

    def __init__(
        self, writable: list[str], parent: int | None, only: str, command: list[str]
    ) -> None:
        self.writable = writable
        self.parent = parent
        self.only = only  # "", or the one step to take: "die-with-parent", "deny-sockets"
        self.command = command


def _parse(argv: Sequence[str]) -> _Options:
    """``[--rw DIR]... [--parent PID] [--only-die-with-parent | --only-deny-sockets] -- CMD
    ARGS...`` (also ``--rw=DIR``, ``--parent=PID``); anything else is refused."""
    args = list(argv)
    if "--" not in args:
        raise LandlockError("usage: python -m sandbox.landlock --rw DIR ... -- CMD ARGS...")
    cut = args.index("--")
    options, command = args[:cut], args[cut + 1 :]
    writable: list[str] = []
    parent: int | None = None
    only = ""
    i = 0
    while i < len(options):
        name, equals, value = options[i].partition("=")
        i += 1
        if name in ("--only-die-with-parent", "--only-deny-sockets") and not equals:
            if only:
                raise LandlockError("give at most one --only-... option")
            only = name.removeprefix("--only-")
            continue
        if name not in ("--rw", "--parent"):
            raise LandlockError("unknown or malformed launcher options")
        if not equals:
            if i >= len(options):
                raise LandlockError("unknown or malformed launcher options")
            value = options[i]
            i += 1
        if name == "--rw":
            writable.append(value)
            continue
        try:
            parent = int(value)
        except ValueError:
            raise LandlockError("unknown or malformed launcher options") from None
    if not command:
        raise LandlockError("no command to run after '--'")
    if only and writable:
        raise LandlockError(f"--only-{only} confines no folder: it takes no --rw")
    return _Options(writable, parent, only, command)


def confine(writable: Sequence[str], parent: int | None) -> str:
    """Apply every step, in the only order that works; return what held, for ``detail``."""
    die_with_parent(parent)
    abi = abi_version()
    if abi < MIN_ABI:
        raise LandlockError(f"Landlock ABI {abi} cannot rename across directories; ALMA needs 2+")
    zone_fds = [open_zone(path) for path in writable]
    try:
        for fd in zone_fds:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                raise LandlockError("a writable path is not a directory")
        net = isolate_network()  # needs privileges we drop next
        _prctl(PR_SET_NO_NEW_PRIVS, 1, "set no_new_privs")
        drop_capabilities()
        restrict_self(zone_fds, abi)
        deny_sockets()
    finally:
        for fd in zone_fds:
            os.close(fd)
    tcp = f"{TCP_DENY} + " if handled_net(abi) else ""
    scope = f", {SCOPED}" if scoped(abi) else ""
    return (
        f"landlock ABI {abi}, {NETWORK_DENIED} ({tcp}{net}){scope}, {SOCKETS_DENIED}, "
        f"{CAPS_DROPPED}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Confine, then exec the command. ``--only-die-with-parent`` skips Landlock: that is the
    shim that gives firejail (no such option of its own) the die-with-parent guarantee.
    ``--only-deny-sockets`` installs only the socket filter: bubblewrap and firejail run it
    inside their sandbox, in front of the command, and it adds what held to ALMA_SANDBOX."""
    try:
        opts = _parse(sys.argv[1:] if argv is None else argv)
        if opts.only == "die-with-parent":
            die_with_parent(opts.parent)
        elif opts.only == "deny-sockets":
            deny_sockets()
            told = os.environ.get(ENV_REPORT, "")
            os.environ[ENV_REPORT] = f"{told}, {SOCKETS_DENIED}" if told else SOCKETS_DENIED
        else:
            os.environ[ENV_REPORT] = confine(opts.writable, opts.parent)
    except (LandlockError, OSError) as exc:
        print(f"alma sandbox (landlock): {exc}", file=sys.stderr)
        return LAUNCHER_FAILED
    command = opts.command
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(
            f"alma sandbox (landlock): cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr
        )
    return 127


if __name__ == "__main__":
    sys.exit(main())
