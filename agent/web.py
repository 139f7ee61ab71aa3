"""The web panel's keeper: the daemon runs ``python -m panel`` as a child and restarts it.

The panel (panel/, docs/panel.md) is a client of the control socket in a process of its own: a
crash of it, or a port another program holds, never reaches the daemon, which only logs the
exit and starts it again after a pause that doubles up to a bound. The daemon's stop ends it
(SIGTERM, then SIGKILL after a bounded wait).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading

from policies.i18n import current_language

log = logging.getLogger("alma.web")

#: The first pause before a panel that exited is started again, and the longest one.
RESTART_FIRST_S = 1.0
RESTART_MAX_S = 300.0
#: How long a panel asked to stop may take before it is killed.
STOP_S = 5.0


class PanelKeeper:
    """Starts the panel for ``root`` on ``port`` and keeps it running until :meth:`close`."""

    def __init__(self, root: str, port: int) -> None:
        self.root = root
        self.port = port
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._keep, name="alma-web", daemon=True)

    def start(self) -> PanelKeeper:
        self._thread.start()
        return self

    def _spawn(self) -> subprocess.Popen[bytes]:
        # The daemon's language, decided from its settings, locale or the person's words: the
        # panel speaks it without reading anything of the root (.alma/language) itself.
        command = [sys.executable, "-m", "panel", "--root", self.root, "--port", str(self.port)]
        command += ["--language", current_language()]
        # Its own session: a Ctrl-C meant for a foreground daemon is the daemon's to handle.
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)

    def _keep(self) -> None:
        pause = RESTART_FIRST_S
        while not self._stop.is_set():
            with self._lock:
                if self._stop.is_set():
                    return
                try:
                    self._proc = self._spawn()
                except OSError as exc:
                    log.error("the web panel could not start: %s", exc)
                    self._proc = None
            proc = self._proc
            if proc is not None:
                log.info("web panel on http://127.0.0.1:%d (pid %d)", self.port, proc.pid)
                code = proc.wait()
                if self._stop.is_set():
                    return
                log.warning(
                    "the web panel exited with %s; starting it again in %.0f s", code, pause
                )
            if self._stop.wait(pause):
                return
            pause = min(pause * 2, RESTART_MAX_S)

    def close(self) -> None:
        with self._lock:
            self._stop.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._thread.join(STOP_S)
