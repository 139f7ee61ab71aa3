"""Autonomy at run time: the configured level, a pause, a lowered level, kinds stopped from auto.

The pause and the lowered level persist across restarts (in ``.alma/alma.db``). Raising autonomy
is done only by a person editing ``system/autonomy.conf``: never through the socket.
"""

from __future__ import annotations

from agent.policy import PolicyHolder
from policies.config import Level
from policies.decide import RunContext
from policies.errors import BadArgumentError, RefusedError
from policies.i18n import _
from policies.results import AutonomyStatus
from policies.states import LEVELS, level_rank
from state.suggestions import SuggestionStore


class Autonomy:
    def __init__(self, store: SuggestionStore, policy: PolicyHolder) -> None:
        self.store = store
        self.policy = policy

    @property
    def configured(self) -> Level:
        return self.policy().level

    @property
    def paused(self) -> bool:
        return bool(self.store.setting("paused", False))

    @property
    def lowered(self) -> Level | None:
        value = self.store.setting("level_override")
        return value if value in LEVELS else None

    @property
    def disabled_kinds(self) -> frozenset[str]:
        return frozenset(self.store.setting("auto_disabled", []))

    def effective(self) -> Level:
        if self.paused:
            return "off"
        level = self.configured
        low = self.lowered
        if low is not None and level_rank(low) < level_rank(level):
            return low
        return level

    def off(self) -> AutonomyStatus:
        self.store.set_setting("paused", True)
        return self.status()

    def on(self) -> AutonomyStatus:
        """Resume: the pause ends, and so does a run-time ``level off`` (both are "off" to a
        person). A run-time lowering to another level stays until ``autonomy level``."""
        self.store.set_setting("paused", None)
        if self.lowered == "off":
            self.store.set_setting("level_override", None)
        return self.status()

    def set_level(self, level: str) -> AutonomyStatus:
        if level not in LEVELS:
            raise BadArgumentError(_("LEVEL must be one of {levels}.", levels=", ".join(LEVELS)))
        if level_rank(level) > level_rank(self.configured):
            raise RefusedError(
                _(
                    "Autonomy can only be lowered at run time (configured: {level}); "
                    "to raise it, a person edits level in {path}.",
                    level=self.configured,
                    path=self.policy.path,
                )
            )
        self.store.set_setting("level_override", None if level == self.configured else level)
        return self.status()

    def disable_kind(self, kind: str) -> None:
        kinds = set(self.disabled_kinds) | {kind}
        self.store.set_setting("auto_disabled", sorted(kinds))

    def allow_kind(self, kind: str) -> AutonomyStatus:
        kinds = set(self.disabled_kinds)
        if kind not in kinds:
            raise BadArgumentError(_("{kind} is not stopped; nothing to allow.", kind=kind))
        self.store.set_setting("auto_disabled", sorted(kinds - {kind}) or None)
        return self.status()

    def run_context(self, *, approved_by_person: bool) -> RunContext:
        return RunContext(
            approved_by_person=approved_by_person,
            paused=self.paused,
            effective_level=self.effective(),
            auto_disabled_kinds=self.disabled_kinds,
        )

    def status(self) -> AutonomyStatus:
        return {
            "configured": self.configured,
            "effective": self.effective(),
            "paused": self.paused,
            "lowered_to": self.lowered,
            "auto_kinds": list(self.policy().auto.kinds),
            "auto_stopped_kinds": sorted(self.disabled_kinds),
        }
