"""The action families, in one registry: where an action of each family runs, and how it is
undone. ``sandbox``: the confined child (sandbox.engine.Engine); ``memory``: the daemon's memory
store (agent.memory.merge_actions.MemoryFamily); ``backup``: restic's restores
(agent.backup.restore.BackupFamily, handed in by the composition root: the backup wing sits
above the loop).

A plan runs in its ops' family (actions.ops.plan_family); an action is undone by its journal
row's (state.journal.family_of). Every family of policies.kinds has its member, or the registry
cannot be built.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from actions.ops import StoredPlan, plan_family
from policies.decide import RunContext
from policies.errors import UnavailableError
from policies.i18n import _
from policies.kinds import FAMILIES
from state.journal import Action, family_of

if TYPE_CHECKING:
    from policies.kinds import Family


class ActionFamily(Protocol):
    """What a family does with an admitted suggestion's plan, and with an undo."""

    def execute(
        self, plan: StoredPlan, *, kind: str, ctx: RunContext, suggestion_id: int | None
    ) -> Action:
        """Run ``plan`` through the policy gate, journaled; return the action."""
        ...

    def undo(self, target: int) -> Action:
        """Undo action ``target`` (already found undoable), as a journaled action."""
        ...


class Absent:
    """A family this daemon was built without (a test's, say): it says so."""

    def __init__(self, family: Family) -> None:
        self.family = family

    def _refuse(self) -> UnavailableError:
        return UnavailableError(
            _("Actions of the {family} family are not part of this daemon.", family=self.family)
        )

    def execute(
        self, plan: StoredPlan, *, kind: str, ctx: RunContext, suggestion_id: int | None
    ) -> Action:
        raise self._refuse()

    def undo(self, target: int) -> Action:
        raise self._refuse()


class Families:
    """Every action family's member, by its name (policies.kinds.FAMILIES)."""

    def __init__(self, members: Mapping[Family, ActionFamily]) -> None:
        missing = [name for name in FAMILIES if name not in members]
        if missing:
            raise ValueError(f"no member for the action families {missing}")
        self.members = dict(members)

    def execute(
        self, plan: StoredPlan, *, kind: str, ctx: RunContext, suggestion_id: int | None
    ) -> Action:
        family = self.members[plan_family(plan.ops)]
        return family.execute(plan, kind=kind, ctx=ctx, suggestion_id=suggestion_id)

    def undo(self, target: sqlite3.Row) -> Action:
        return self.members[family_of(target)].undo(int(target["id"]))
