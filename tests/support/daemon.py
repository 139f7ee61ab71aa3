"""Drive the real ``alma-agentd`` and the real ``alma-ctl`` as subprocesses, on a temp root.

:class:`DaemonRoot` owns ``base/ALMA`` (the root) and ``base/run`` (a private 0700
``XDG_RUNTIME_DIR``, so the socket never meets another test's or the person's own). It creates
the root with ``alma-ctl init``, edits the policy, starts the daemon with notifications and
memory off, waits for ``alma-ctl status`` to answer, stops it with SIGTERM (and checks exit 0),
kills it with SIGKILL, and runs ``alma-ctl`` returning rc, stdout, stderr and the parsed JSON.

Waiting is always a bounded poll of an observable condition (:meth:`DaemonRoot.wait_for`),
never a fixed sleep standing in for one, and never a timed assertion: a timeout only bounds how
long a test may hang, with a message that says what never happened.

No pytest import here: ``bench/bench_daemon.py`` uses the same class.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

BIN = Path(sys.executable).parent
ALMA_AGENTD = str(BIN / "alma-agentd")
ALMA_CTL = str(BIN / "alma-ctl")
T = TypeVar("T")
TomlValue = str | int | bool | list[str]


class WaitTimeout(AssertionError):
    """A condition a test waited for never came true within its bound."""


def wait_for(
    probe: Callable[[], T | None],
    *,
    timeout: float,
    what: str,
    interval: float = 0.05,
    detail: Callable[[], str] | None = None,
) -> T:
    """Poll ``probe`` until it returns something other than None/False; return it.

    ``timeout`` bounds the wait only (a slow machine waits longer, it never fails a timing)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() >= deadline:
            extra = f"\n{detail()}" if detail is not None else ""
            raise WaitTimeout(f"timed out after {timeout:.0f} s waiting for {what}{extra}")
        time.sleep(interval)


def holds(probe: Callable[[], bool], *, seconds: float, what: str, interval: float = 0.25) -> None:
    """Check ``probe`` stays true for ``seconds`` (a negative: "nothing is proposed"). Only a
    window of observation can show that something does not happen; the window is chosen longer
    than what the positive case takes (debounce + analysis), and a slow machine only makes the
    check weaker, never fails it."""
    deadline = time.monotonic() + seconds
    while True:
        assert probe(), f"{what} stopped holding"
        if time.monotonic() >= deadline:
            return
        time.sleep(interval)


@dataclass(frozen=True)
class CtlResult:
    rc: int
    stdout: str
    stderr: str
    data: Any  # the parsed JSON document when --json was given and stdout held one, else None

    def ok(self) -> CtlResult:
        assert self.rc == 0, f"alma-ctl exited {self.rc}: {self.stderr.strip()} {self.stdout}"
        return self


def _toml(value: TomlValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)  # a JSON string or list of strings is valid TOML


def edit_toml(text: str, section: str, key: str, value: TomlValue) -> str:
    """Set ``key`` in ``[section]`` ("" for the top level) of a commented TOML file, keeping
    every other line; appends the key (and the table) when absent."""
    lines = text.splitlines()
    table = ""
    header_at: int | None = 0 if section == "" else None
    end_of_section: int | None = None
    for i, raw in enumerate(lines):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            if table == section and header_at is not None and end_of_section is None:
                end_of_section = i
            table = line.strip("[]").strip()
            if table == section:
                header_at = i
            continue
        if table == section and re.match(rf"^{re.escape(key)}\s*=", line):
            lines[i] = f"{key} = {_toml(value)}"
            return "\n".join(lines) + "\n"
    entry = f"{key} = {_toml(value)}"
    if header_at is None:
        lines += ["", f"[{section}]", entry]
    elif section == "":
        first_table = next(
            (i for i, raw in enumerate(lines) if raw.strip().startswith("[")), len(lines)
        )
        lines.insert(first_table, entry)
    else:
        lines.insert(end_of_section if end_of_section is not None else len(lines), entry)
    return "\n".join(lines) + "\n"


class DaemonRoot:
    """A temp ALMA root, its private runtime dir, and at most one running daemon on it."""

    def __init__(self, base: Path | None = None, *, memory: bool = False) -> None:
        # Short paths: the socket lives under base/run and must stay under 108 bytes.
        self.base = base or Path(tempfile.mkdtemp(prefix="almae2e-", dir="/tmp"))
        self.root = self.base / "ALMA"
        self.runtime = self.base / "run"
        self.runtime.mkdir(mode=0o700, exist_ok=True)
        os.chmod(self.runtime, 0o700)
        self.memory = memory
        #: Variables the daemon gets on top of the test's own (a test model's, say).
        self.extra_env: dict[str, str] = {}
        #: The folder the daemon is started from (the test's own when None).
        self.cwd: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._log: Path | None = None

    # -- environment ---------------------------------------------------------------------
    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALMA_")}
        env.update(
            XDG_RUNTIME_DIR=str(self.runtime),
            ALMA_NOTIFY="0",
            ALMA_MEMORY__ENABLED="true" if self.memory else "false",
            # The web panel listens on a TCP port: only the panel's tests turn it on (extra_env).
            ALMA_WEB__ENABLED="false",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(self.extra_env)
        return env

    @property
    def socket(self) -> Path:
        """The daemon's socket, as alma-ctl finds it under this root's XDG_RUNTIME_DIR."""
        digest = hashlib.sha256(os.path.abspath(self.root).encode()).hexdigest()[:16]
        return self.runtime / "alma" / f"{digest}.sock"

    @property
    def policy_file(self) -> Path:
        return self.root / "system" / "autonomy.conf"

    @property
    def journal_db(self) -> Path:
        return self.root / ".alma" / "journal" / "journal.db"

    # -- alma-ctl ------------------------------------------------------------------------
    def ctl(self, *args: str, json_out: bool = True, timeout: float = 120.0) -> CtlResult:
        """``alma-ctl --root ROOT [--json] ARGS...``; never raises on a non-zero exit."""
        argv = [ALMA_CTL, "--root", str(self.root), *(["--json"] if json_out else []), *args]
        done = subprocess.run(
            argv, capture_output=True, text=True, env=self.env, timeout=timeout, check=False
        )
        data: Any = None
        if json_out and done.stdout.strip():
            try:
                data = json.loads(done.stdout)
            except json.JSONDecodeError as exc:
                raise AssertionError(
                    f"alma-ctl {' '.join(args)} --json printed something that is not one JSON "
                    f"document ({exc}):\n{done.stdout}"
                ) from None
        return CtlResult(done.returncode, done.stdout, done.stderr, data)

    def ok(self, *args: str) -> Any:
        """Run ``alma-ctl --json ARGS``, insist on exit 0, return the parsed JSON."""
        return self.ctl(*args).ok().data

    def init(self) -> DaemonRoot:
        self.ok("init")
        return self

    # -- the policy ----------------------------------------------------------------------
    def set_policy(self, section: str, key: str, value: TomlValue) -> None:
        text = self.policy_file.read_text(encoding="utf-8")
        self.policy_file.write_text(edit_toml(text, section, key, value), encoding="utf-8")

    def set_settings(self, section: str, key: str, value: TomlValue) -> None:
        """Edit ``system/alma.toml`` (the daemon's settings), creating it if missing."""
        path = self.root / "system" / "alma.toml"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(edit_toml(text, section, key, value), encoding="utf-8")

    def policy(self, **values: TomlValue) -> None:
        """``policy(level="auto", monitor__settle_seconds=0)``: section__key = value."""
        for name, value in values.items():
            section, _, key = name.rpartition("__")
            self.set_policy(section, key, value)

    # -- the daemon ----------------------------------------------------------------------
    def spawn(self) -> subprocess.Popen[bytes]:
        """Start ``alma-agentd`` without waiting for it (stderr goes to a log file per start)."""
        self.starts += 1
        self._log = self.base / f"agentd.{self.starts}.log"
        with self._log.open("wb") as log:
            return subprocess.Popen(
                [ALMA_AGENTD, "--root", str(self.root)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=self.env,
                cwd=self.cwd,
            )

    def start(self, *, timeout: float = 60.0) -> subprocess.Popen[bytes]:
        assert self.proc is None or self.proc.poll() is not None, "a daemon is already running"
        self.proc = self.spawn()
        proc = self.proc

        def answered() -> dict[str, Any] | None:
            if proc.poll() is not None:
                raise AssertionError(
                    f"alma-agentd exited {proc.returncode} while starting:\n{self.log()}"
                )
            res = self.ctl("status", timeout=30)
            if res.rc == 0 and isinstance(res.data, dict) and res.data.get("pid") == proc.pid:
                assert res.data["socket"] == str(self.socket), res.data
                return res.data
            return None

        wait_for(answered, timeout=timeout, what="alma-ctl status to answer", detail=self.log)
        return proc

    @property
    def pid(self) -> int:
        assert self.proc is not None and self.proc.poll() is None, "the daemon is not running"
        return self.proc.pid

    def stop(self, *, timeout: float = 60.0) -> int:
        """SIGTERM; the contract says the daemon exits 0. Returns that exit code."""
        assert self.proc is not None, "no daemon was started"
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError(
                f"alma-agentd ignored SIGTERM for {timeout} s:\n{self.log()}"
            ) from None
        assert rc == 0, f"alma-agentd exited {rc} after SIGTERM (expected 0):\n{self.log()}"
        return rc

    def kill(self) -> None:
        """SIGKILL: no clean-up runs; the next start must recover."""
        assert self.proc is not None, "no daemon was started"
        proc, self.proc = self.proc, None
        proc.kill()
        proc.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def hup(self) -> None:
        os.kill(self.pid, signal.SIGHUP)

    def log(self) -> str:
        """The current (or last) daemon's stderr."""
        if self._log is None or not self._log.exists():
            return "(no daemon log)"
        return self._log.read_text(encoding="utf-8", errors="replace")[-8000:]

    def close(self) -> None:
        """Kill whatever is left (a failed test) and remove the temp folders."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        shutil.rmtree(self.base, ignore_errors=True)

    # -- files ---------------------------------------------------------------------------
    def write(self, rel: str, data: bytes, *, mtime: float | None = None) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        return path

    def messy_folder(self, rel: str, n: int = 40, *, exts: Sequence[str] = ()) -> list[Path]:
        """``n`` loose files of a few types in ``rel`` (a folder the organize detector flags)."""
        exts = exts or ("jpg", "pdf", "mp3", "csv", "zip", "txt")
        folder = self.root / rel
        folder.mkdir(parents=True, exist_ok=True)
        out = []
        for i in range(n):
            path = folder / f"file{i:05d}.{exts[i % len(exts)]}"
            path.write_bytes(f"{rel} {i}\n".encode() * (1 + i % 7))
            out.append(path)
        return out

    # -- polling helpers -----------------------------------------------------------------
    def wait_for(self, probe: Callable[[], T | None], *, timeout: float, what: str) -> T:
        return wait_for(probe, timeout=timeout, what=what, interval=0.1, detail=self.log)

    def suggestions(self, *extra: str) -> list[dict[str, Any]]:
        data = self.ok("suggestions", "list", *extra)
        assert isinstance(data, list), data
        return data

    def wait_suggestion(
        self,
        *,
        kind: str | None = None,
        target: str | None = None,
        status: str = "pending",
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Poll ``suggestions list --all`` until one of ``kind``/``target``/``status`` shows."""

        def probe() -> dict[str, Any] | None:
            for s in self.suggestions("--all"):
                if (
                    s["status"] == status
                    and (kind is None or s["kind"] == kind)
                    and (target is None or s["target"] == target)
                ):
                    return s
            return None

        what = f"a {status} {kind or 'any'} suggestion for {target or 'any target'}"
        return self.wait_for(probe, timeout=timeout, what=what)

    def wait_action(
        self, pred: Callable[[dict[str, Any]], bool], *, timeout: float = 30.0, what: str
    ) -> dict[str, Any]:
        def probe() -> dict[str, Any] | None:
            return next((a for a in self.ok("history") if pred(a)), None)

        return self.wait_for(probe, timeout=timeout, what=what)

    def analyze(self) -> dict[str, Any]:
        data = self.ok("analyze", "--wait")
        assert isinstance(data, dict), data
        return data


def find(items: Iterable[dict[str, Any]], **match: Any) -> list[dict[str, Any]]:
    return [i for i in items if all(i.get(k) == v for k, v in match.items())]
