"""restic, driven as a subprocess: one call is one bounded run, its failure one sentence.

restic is its own process (Debian's ``restic``): it dies with the daemon (``setpriv
--pdeathsig``), is killed with its process group when its bound runs out, and the password
reaches it only through a pipe named by ``RESTIC_PASSWORD_FILE`` (never on its command line):
ALMA reads the person's password file itself, through the one safe reader, so a FIFO, a huge
file or one others may read is refused before restic starts. A repository left locked by a run
that was killed is unlocked (``restic unlock`` removes only stale locks) and the call is tried
once more. A target restic could not write (a read-only disk) is found before restic runs,
since restic retries writing its lock for most of a minute: a command that only reads runs
without a lock, one that writes is refused at once.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from actions.safe_read import read_secret
from policies.errors import (
    AlmaError,
    BadArgumentError,
    ConflictError,
    NotFoundError,
    RefusedError,
    UnavailableError,
)
from policies.i18n import _
from policies.text import printable

log = logging.getLogger("alma.backup")

#: What makes restic's command line the one to run (a confinement's launcher in front).
Wrap = Callable[[list[str]], list[str]]
#: Bounds of one restic run (seconds): a listing, and a backup, check, forget or restore.
QUICK_S = 300.0
LONG_S = 6 * 3600.0
#: restic's commands that only read the repository: on a target ALMA may not write they run
#: without restic's lock (nothing can change the repository through it meanwhile).
_READS = frozenset({"snapshots", "stats", "ls", "restore", "cat", "check", "find", "diff"})


#: A snapshot as a person names it: restic's id (or the start of it), or ``latest``.
_SNAPSHOT_ID = re.compile(r"[0-9a-f]{1,64}")


def snapshot_id(value: str) -> str:
    """``value`` checked as a snapshot's name, the one check before anything reaches restic
    (which would read ``--help`` as an option): lower-case hex digits or ``latest``."""
    if value == "latest" or _SNAPSHOT_ID.fullmatch(value.lower()):
        return value.lower()
    raise BadArgumentError(
        _(
            "{snapshot} is not a snapshot: give an id that `alma-ctl backup list` shows (like "
            "1a2b3c4d) or latest.",
            snapshot=printable(repr(value)),
        )
    )


def _restic() -> str:
    found = shutil.which("restic")
    if found is None:
        raise UnavailableError(
            _(
                "restic is not installed; install it (`sudo apt-get install restic`, or run "
                "./alma.sh again) and try again."
            )
        )
    return found


class Restic:
    """One repository (``target``) opened with the password in ``password_file``."""

    def __init__(self, target: Path, password_file: Path) -> None:
        self.target = target
        self.password_file = password_file

    def _env(self, password_fd: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESTIC_")}
        env["RESTIC_PASSWORD_FILE"] = f"/dev/fd/{password_fd}"
        env["RESTIC_PROGRESS_FPS"] = "0.2"  # few progress lines: they are read and dropped
        return env

    def run(
        self,
        args: Sequence[str],
        *,
        timeout: float = QUICK_S,
        cwd: Path | None = None,
        unlock: bool = True,
        wrap: Wrap | None = None,
    ) -> str:
        """restic's stdout, or an :class:`AlmaError` that says in one sentence what to do.
        ``wrap`` turns restic's command line into the one to run (a confinement's)."""
        self.check_target()
        unwritable = self._unwritable()
        if unwritable is not None:
            if args[0] not in _READS:
                raise unwritable
            return self._run(args, timeout=timeout, cwd=cwd, lock=False, wrap=wrap)
        try:
            return self._run(args, timeout=timeout, cwd=cwd, wrap=wrap)
        except _Locked:
            if not unlock:
                raise self._locked_error() from None
            log.warning("the backup repository %s was locked; removing stale locks", self.target)
            try:
                self._run(["unlock"], timeout=QUICK_S, cwd=None)
                return self._run(args, timeout=timeout, cwd=cwd, wrap=wrap)
            except _Locked:
                raise self._locked_error() from None

    def json(self, args: Sequence[str], *, timeout: float = QUICK_S) -> Any:
        end = list(args).index("--") if "--" in args else len(args)  # options before `--`
        out = self.run([*args[:end], "--json", *args[end:]], timeout=timeout)
        try:
            return json.loads(out)
        except ValueError:
            raise AlmaError(
                _("restic printed something that is not JSON for `restic {args}`.", args=args[0])
            ) from None

    def check_target(self) -> None:
        try:
            link = self.target.is_symlink()
        except OSError as exc:  # a name too long for the file system, say
            raise BadArgumentError(
                _(
                    "The backup target {target} cannot be used ({error}); name a folder on "
                    "the backup disk.",
                    target=self.target,
                    error=exc.strerror or exc,
                )
            ) from None
        if link:
            raise BadArgumentError(
                _(
                    "The backup target {target} is a symbolic link; name the real folder it "
                    "points to, so a backup never lands somewhere else.",
                    target=self.target,
                )
            )

    def _unwritable(self) -> AlmaError | None:
        """Why ALMA may not write to the target (a disk mounted read-only, permissions that
        keep the daemon's user out), or None (a target not there too: restic says so)."""
        try:
            if os.statvfs(self.target).f_flag & os.ST_RDONLY:
                return self._read_only_error()
        except OSError:
            return None
        return None if os.access(self.target, os.W_OK) else self._denied_error()

    def _read_only_error(self) -> AlmaError:
        return UnavailableError(
            _(
                "The backup target {target} is on a disk mounted read-only; mount it so it "
                "can be written (or name another target) and try again.",
                target=self.target,
            )
        )

    def _denied_error(self) -> AlmaError:
        return RefusedError(
            _(
                "ALMA may not use the backup target {target} (permission denied); give your "
                "user read and write access to it (`ls -ld {target}` shows its owner) and try "
                "again.",
                target=self.target,
            )
        )

    def _locked_error(self) -> AlmaError:
        return ConflictError(
            _(
                "The backup repository {target} is in use by another restic run; wait for it "
                "to finish and try again.",
                target=self.target,
            )
        )

    def _run(
        self,
        args: Sequence[str],
        *,
        timeout: float,
        cwd: Path | None,
        lock: bool = True,
        wrap: Wrap | None = None,
    ) -> str:
        argv = [_restic(), "--repo", str(self.target), "--no-cache"]
        argv += [*([] if lock else ["--no-lock"]), *args]
        if wrap is not None:
            argv = wrap(argv)
        setpriv = shutil.which("setpriv")
        if setpriv is not None:  # restic dies with the daemon, never left writing alone
            argv = [setpriv, "--pdeathsig", "KILL", *argv]
        secret = read_secret(self.password_file)
        password_fd, writer = os.pipe()
        try:
            os.write(writer, secret)  # within a pipe's buffer (limits.SECRET_BYTES)
        finally:
            os.close(writer)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=self._env(password_fd),
                pass_fds=(password_fd,),
                start_new_session=True,
            )
        finally:
            os.close(password_fd)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise AlmaError(
                _(
                    "restic did not finish `{command}` within {minutes} minutes and was "
                    "stopped; the next run removes the lock it left.",
                    command=args[0],
                    minutes=int(timeout // 60),
                )
            ) from None
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        text = err.decode("utf-8", "replace")
        if proc.returncode == 0 or (proc.returncode == 3 and args[0] == "backup"):
            # 3: a snapshot was made, some files could not be read (said in the log).
            if proc.returncode == 3:
                log.warning("restic backup could not read some files: %s", text.strip()[-2000:])
            return out.decode("utf-8", "replace")
        if proc.returncode < 0 or proc.returncode == 130:
            raise AlmaError(
                _("restic was stopped by a signal during `{command}`.", command=args[0])
            )
        raise self.translate(text, str(args[0]))

    def translate(self, stderr: str, command: str) -> AlmaError:
        """restic's failure as one sentence that says what to do (its own words kept at the end)."""
        low = stderr.lower()
        said = _last_line(stderr)
        # What a restore could not write is about the folder it restores into, never the
        # target, whatever kept it from writing ("There were N errors" says nothing of which).
        failed = [line for line in stderr.splitlines() if line.startswith("ignoring error for")]
        if command == "restore" and failed:
            return AlmaError(
                _(
                    "restic could not write everything it restores ({said}); nothing was "
                    "restored. Check that you may write in that folder and that nothing else "
                    "writes there, and try again.",
                    said=failed[0].removeprefix("ignoring error for ")[:300],
                )
            )
        # Then the causes: restic says "unable to create lock" when its lock file could not
        # be written, whatever kept it from writing.
        if "read-only file system" in low:
            return self._read_only_error()
        if "permission denied" in low:
            return self._denied_error()
        if "wrong password" in low or "no key found" in low:
            return BadArgumentError(
                _(
                    "The password does not open the backup repository {target}; give the "
                    "password file it was created with (`alma-ctl backup init {target} "
                    "--password-file F`).",
                    target=self.target,
                )
            )
        if "no space left on device" in low or "disk quota exceeded" in low:
            return DiskFullError(
                _(
                    "The backup disk of {target} is full; `alma-ctl backup forget` frees the "
                    "space of old snapshots and of failed backups, or free space on it "
                    "otherwise, then run the backup again. restic: {said}",
                    target=self.target,
                    said=said,
                )
            )
        if "already locked" in low or "unable to create lock" in low:
            return _Locked(said)
        if "config file already exists" in low:
            return ConflictError(_("{target} already holds a repository.", target=self.target))
        if "is there a repository at the following location" in low or (
            "unable to open config file" in low
        ):
            if not self.target.exists():
                return UnavailableError(
                    _(
                        "The backup target {target} is not there (is the disk plugged in?); "
                        "connect it and try again.",
                        target=self.target,
                    )
                )
            return NotFoundError(
                _(
                    "{target} is not a backup repository; create one with `alma-ctl backup "
                    "init {target}`.",
                    target=self.target,
                )
            )
        if "no matching id found" in low or "no snapshot found" in low:
            return NotFoundError(
                _(
                    "There is no such snapshot in {target}; `alma-ctl backup list` shows them.",
                    target=self.target,
                )
            )
        return AlmaError(_("restic failed during `{command}`: {said}", command=command, said=said))


class DiskFullError(UnavailableError):
    """The backup disk is full: what the run wrote before it failed is still there."""


class _Locked(AlmaError):
    """The repository is locked: after ``restic unlock``, the call is tried once more."""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error"))]
    line = (fatal or lines or ["(no message)"])[-1]
    return line.removeprefix("Fatal: ")[:300]
