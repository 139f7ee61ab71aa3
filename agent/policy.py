"""The policy in force (``system/autonomy.conf``), read at start and again on a reload.

Every wing that reads the policy (the loop, the backups, the daemon's wiring) holds this one
object; it sits below the wings so that none of them imports another to reach it.
"""

from __future__ import annotations

import threading

from actions.safe_read import read_config
from policies.config import Policy, load_policy
from policies.errors import ConfigError
from policies.i18n import _
from policies.layout import RootLayout
from policies.results import PolicyState
from state.db import utcnow


class PolicyHolder:
    """The policy in force. A failed reload keeps the last good one and remembers why."""

    def __init__(self, layout: RootLayout) -> None:
        self.path = layout.policy_file
        self.policy: Policy = load_policy(self.path, read_config(self.path))
        self.error: str | None = None
        self.loaded_at = utcnow()
        self._lock = threading.Lock()

    def __call__(self) -> Policy:
        return self.policy

    def state(self) -> PolicyState:
        """The policy in force: its file, when it was loaded, and the error of the file as it
        is now if it is not valid (the last good policy then stays in force)."""
        return {
            "file": str(self.path),
            "ok": self.error is None,
            "loaded_at": self.loaded_at,
            "error": self.error,
        }

    def reload(self) -> bool:
        with self._lock:
            try:
                self.policy = load_policy(self.path, read_config(self.path))
            except ConfigError as exc:
                self.error = _(
                    "{error} The last good policy (loaded {when}) stays in force.",
                    error=exc,
                    when=self.loaded_at,
                )
                return False
            self.error = None
            self.loaded_at = utcnow()
            return True
