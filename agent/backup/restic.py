"""restic, driven as a subprocess: one call is one bounded run, its failure one sentence.

restic is its own process (Debian's ``restic``): it dies with the daemon (``setpriv
--pdeathsig``), is killed with its process group when its bound runs out, and the password
reaches it only as ``RESTIC_PASSWORD_FILE`` (never on its command line). A repository left
locked by a run that was killed is unlocked (``restic unlock`` removes only stale locks) and the
call is tried once more.
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

from policies.errors import (
    AlmaError,
    BadArgumentError,
    ConflictError,
    NotFoundError,
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

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESTIC_")}
        env["RESTIC_PASSWORD_FILE"] = str(self.password_file)
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
        if self.target.is_symlink():
            raise BadArgumentError(
                _(
                    "The backup target {target} is a symbolic link; name the real folder it "
                    "points to, so a backup never lands somewhere else.",
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
        self, args: Sequence[str], *, timeout: float, cwd: Path | None, wrap: Wrap | None = None
    ) -> str:
        argv = [_restic(), "--repo", str(self.target), "--no-cache", *args]
        if wrap is not None:
            argv = wrap(argv)
        setpriv = shutil.which("setpriv")
        if setpriv is not None:  # restic dies with the daemon, never left writing alone
            argv = [setpriv, "--pdeathsig", "KILL", *argv]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=self._env(),
            start_new_session=True,
        )
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
        if "already locked" in low or "unable to create lock" in low:
            return _Locked(said)
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
            return UnavailableError(
                _(
                    "The backup disk of {target} is full; free space on it, or forget old "
                    "snapshots (`alma-ctl backup forget`), and run the backup again. restic: "
                    "{said}",
                    target=self.target,
                    said=said,
                )
            )
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
        failed = [line for line in stderr.splitlines() if line.startswith("ignoring error for")]
        if command == "restore" and failed:  # "There were N errors" says nothing of which
            return AlmaError(
                _(
                    "restic could not write everything it restores ({said}); nothing was "
                    "restored. Check that you may write in that folder and that nothing else "
                    "writes there, and try again.",
                    said=failed[0].removeprefix("ignoring error for ")[:300],
                )
            )
        return AlmaError(_("restic failed during `{command}`: {said}", command=command, said=said))


class _Locked(AlmaError):
    """The repository is locked: after ``restic unlock``, the call is tried once more."""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error"))]
    line = (fatal or lines or ["(no message)"])[-1]
    return line.removeprefix("Fatal: ")[:300]
