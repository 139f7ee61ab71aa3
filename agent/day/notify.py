"""Desktop notifications through notify-send, where a notification service exists."""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading

log = logging.getLogger("alma.notify")


def make_notifier(enabled: bool) -> Notifier:
    return Notifier(shutil.which("notify-send") if enabled else None)


class Notifier:
    def __init__(self, command: str | None) -> None:
        self.command = command

    def __call__(self, title: str, body: str) -> None:
        if self.command is None:
            return
        threading.Thread(target=self._send, args=(title, body), daemon=True).start()

    def _send(self, title: str, body: str) -> None:
        try:
            subprocess.run(
                [self.command or "notify-send", "--app-name=ALMA", title, body],
                timeout=5,
                check=False,
                capture_output=True,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.info("notification not shown: %s", exc)
