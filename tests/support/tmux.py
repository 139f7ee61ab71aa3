"""Drive a program in a real terminal: a tmux server of its own (``tmux -L``), keys in, screen out.

Every wait is a bounded poll of what the pane shows (:func:`tests.support.daemon.wait_for`),
never a sleep standing in for a condition: a loaded machine only waits longer.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from tests.support.daemon import ALMA_CTL, wait_for

TMUX = shutil.which("tmux")
#: ``alma chat`` of the venv under test, and the prompt it shows when it waits for a line.
ALMA = str(Path(ALMA_CTL).parent / "alma")
PROMPT = "› "


class Tmux:
    """One tmux server (its own socket name) with one session running one command."""

    def __init__(self, *, width: int = 160, height: int = 50) -> None:
        self.name = f"alma-test-{uuid.uuid4().hex[:12]}"
        self.width = width
        self.height = height
        self.started = False

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert TMUX is not None, "tmux is not installed"
        return subprocess.run(
            [TMUX, "-L", self.name, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=check,
        )

    def start(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """Run ``argv`` in a new detached session, with exactly ``env`` (plus a terminal type).

        The command runs under ``env -i`` so nothing of the test runner's environment leaks in;
        ``remain-on-exit`` keeps the pane (and its exit status) after the program ends.
        """
        assignments = [f"{k}={v}" for k, v in env.items()] + ["TERM=xterm-256color"]
        # The shell records the exit status itself: tmux can mark a pane dead (its terminal
        # closed) without ever recording the status. `trap : INT` keeps the shell through a
        # Ctrl-C; the program, forked from it, gets the default handling.
        self.status_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"{self.name}.status")
        script = 'trap : INT; "$@"; echo $? > ' + shlex.quote(self.status_file)
        command = shlex.join(["sh", "-c", script, "sh", "env", "-i", *assignments, *argv])
        self._tmux(
            "new-session", "-d", "-s", "chat", "-x", str(self.width), "-y", str(self.height),
            command,
        )  # fmt: skip
        self._tmux("set-option", "-t", "chat", "remain-on-exit", "on")
        self.started = True

    def type(self, text: str) -> None:
        """Type ``text`` literally (no key names), without Enter."""
        self._tmux("send-keys", "-t", "chat", "-l", text)

    def keys(self, *names: str) -> None:
        """Press keys by name: ``Enter``, ``C-c``, ``C-d``, ``Escape``."""
        self._tmux("send-keys", "-t", "chat", *names)

    def line(self, text: str) -> None:
        self.type(text)
        self.keys("Enter")

    def screen(self) -> str:
        """The whole pane with its scrollback, wrapped lines joined."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-5000", "-t", "chat").stdout

    def dead(self) -> bool:
        out = self._tmux("display-message", "-p", "-t", "chat", "#{pane_dead}", check=False)
        return out.stdout.strip() == "1"

    def exit_status(self) -> int:
        def written() -> str | None:
            try:
                with open(self.status_file, encoding="ascii") as f:
                    text = f.read().strip()
            except FileNotFoundError:
                return None
            return text or None

        return int(wait_for(written, timeout=30, what="the program's exit status"))

    def wait(self, probe: Callable[[str], object], *, what: str, timeout: float = 120.0) -> str:
        """Poll the screen until ``probe(screen)`` is true; return that screen."""

        def check() -> str | None:
            shown = self.screen()
            return shown if probe(shown) else None

        return wait_for(
            check, timeout=timeout, what=what, interval=0.05, detail=lambda: self.screen()[-3000:]
        )

    def close(self) -> None:
        if self.started:
            self._tmux("kill-server", check=False)
            self.started = False


@pytest.fixture
def term() -> Iterator[Tmux]:
    """A terminal of its own for one test (tests/e2e/conftest.py hands it out), its tmux
    server killed after the test."""
    t = Tmux()
    try:
        yield t
    finally:
        t.close()


def answered(term: Tmux, sent: str, *, timeout: float = 300.0) -> str:
    """Wait until the chat's answer to the line ``sent`` is over (the prompt is back);
    return it."""
    marker = PROMPT + sent

    def done(screen: str) -> bool:
        rest = after(screen, marker)
        return bool(rest) and ("\n" + PROMPT.rstrip()) in rest

    screen = term.wait(done, what=f"the answer to {sent!r} to end", timeout=timeout)
    rest = after(screen, marker)
    return rest[: rest.rfind("\n" + PROMPT.rstrip())]


def after(screen: str, marker: str) -> str:
    """What the screen shows after the last occurrence of ``marker`` ("" if it is not there)."""
    at = screen.rfind(marker)
    return "" if at < 0 else screen[at + len(marker) :]


def environment_for(env: Mapping[str, str]) -> dict[str, str]:
    """The variables a chat in tmux needs from a test's daemon environment."""
    keep = ("PATH", "HOME", "XDG_RUNTIME_DIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "TZ")
    out = {k: env[k] for k in keep if k in env}
    out.update(LANG="C.UTF-8", LC_ALL="C.UTF-8")
    out.setdefault("PATH", os.defpath)
    return out
