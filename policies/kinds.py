"""Every kind of suggestion and action ALMA knows, declared once: one :class:`Kind` a kind.

A kind's entry says what the rest of ALMA asks of it: its worth to the person (the noise
budget, agent.loop.budget), whether it protects the person's data (never held back), whether
it may run on its own (the policy's ``[auto].kinds`` accepts exactly those), whether the files
or the model explain it (agent.detectors.diagnose), whether it is a trend of the day (the daily
report), its action family (how an accepted plan executes and is undone: ``sandbox`` in the
confined child, ``memory`` in the daemon's memory store, ``backup`` through restic) and its
label, the words a person reads where a kind is shown (the wire keeps its name).

Adding a kind is its detector plus its entry in :data:`KINDS`; ``tests/unit/test_kinds.py``
fails when a kind a detector or an action can carry has no entry, or an entry contradicts
itself (:meth:`Kind.problem`). ``python -m policies.kinds`` prints the registry.

A plain class with slots, not a dataclass: alma-ctl imports this at every start (its views
show the labels), and neither dataclasses nor typing are imported at run time here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from policies.i18n import N_, _

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Literal

    Family = Literal["sandbox", "memory", "backup"]
    #: The registry's names for the type checker (tests/unit/test_kinds.py holds it equal to
    #: :data:`KINDS`): the kind of a typed record (policies.results).
    KindName = Literal[
        "backup",
        "repeated_failure",
        "pending_task",
        "low_mood",
        "routine",
        "long_hours",
        "autonomy_promotion",
        "duplicates",
        "organize",
        "temp_cleanup",
        "memory_merge",
        "memory_edit",
        "backup_forget",
        "backup_restore",
    ]

#: The action families: where an action of the kind runs and how it is undone. The journal's
#: ``sandbox`` column holds ``memory`` or ``backup`` for theirs, the confinement's name for
#: ``sandbox`` actions.
SANDBOX: Family = "sandbox"
MEMORY: Family = "memory"
BACKUP: Family = "backup"
FAMILIES = (SANDBOX, MEMORY, BACKUP)
#: The families whose actions run in the daemon, not in the confined child.
IN_DAEMON = (MEMORY, BACKUP)

#: A kind with no entry counts in the budget as files do.
FILES_WORTH = 1


#: The yes-or-no fields of an entry, in the order `python -m policies.kinds` prints them.
FLAGS = ("auto", "protects", "explained", "trends", "condition", "breaks", "record", "proposed")


class Kind:
    """One kind's entry. Immutable: set once, here, when the registry is built."""

    __slots__ = (
        "auto",
        "breaks",
        "condition",
        "explained",
        "family",
        "label",
        "name",
        "proposed",
        "protects",
        "record",
        "trends",
        "worth",
    )

    name: str
    #: The words a person reads for it (marked with N_, translated where shown).
    label: str
    #: Its place in what matters to a person, larger first (agent.loop.budget).
    worth: int
    #: How its actions execute and undo; None: a notice, whose accept only acknowledges it.
    family: Family | None
    #: The policy's ``[auto].kinds`` may name it: it may run on its own.
    auto: bool
    #: It protects the person's data: never held back by the budget, never counted in it.
    protects: bool
    #: A failure the files, or the model, explain with a fix (agent.detectors.diagnose).
    explained: bool
    #: A day's trend rather than its news (the daily report).
    trends: bool
    #: A condition that can end by itself: found again, it is restated; gone, it expires.
    condition: bool
    #: It offers a break: the analysis names its time, an accept by a person sets a reminder.
    breaks: bool
    #: Its actions record something done outside the root: in the history, nothing to undo.
    record: bool
    #: A detector proposes it (False: only an action carries it).
    proposed: bool

    def __init__(
        self,
        name: str,
        label: str,
        *,
        worth: int = FILES_WORTH,
        family: Family | None = None,
        auto: bool = False,
        protects: bool = False,
        explained: bool = False,
        trends: bool = False,
        condition: bool = False,
        breaks: bool = False,
        record: bool = False,
        proposed: bool = True,
    ) -> None:
        values = dict(locals())
        del values["self"]
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"Kind {self.name} is set once, in policies.kinds")

    def __repr__(self) -> str:
        fields = ("name", "label", "worth", "family", *FLAGS)
        return f"Kind({', '.join(f'{k}={getattr(self, k)!r}' for k in fields)})"

    def problem(self) -> str | None:
        """What contradicts itself in this entry (for developers: tests/unit/test_kinds.py)."""
        if not self.name.isidentifier() or self.name != self.name.lower():
            return f"{self.name!r}: a kind's name is lower_case words"
        if not self.label.strip():
            return f"{self.name}: no label a person can read"
        if self.family is not None and self.family not in FAMILIES:
            return f"{self.name}: unknown family {self.family!r}; one of {FAMILIES}"
        if self.worth < 0:
            return f"{self.name}: a negative worth"
        if self.auto and self.family is None:
            return f"{self.name}: runs on its own but has no action family to run in"
        if self.auto and not self.proposed:
            return f"{self.name}: runs on its own but no detector proposes it"
        if self.auto and self.protects:
            return f"{self.name}: protects the person's data, so a person sees it, never auto"
        if self.explained and self.family != SANDBOX:
            return f"{self.name}: explained with a fix, which runs in the sandbox family"
        if self.record and self.family is None:
            return f"{self.name}: records an action, but has no action family"
        if (self.trends or self.condition or self.breaks or self.protects) and not self.proposed:
            return f"{self.name}: a property of a suggestion, but no detector proposes it"
        return None


#: The registry: every kind, once. The order is the one `python -m policies.kinds` prints.
_ENTRIES = (
    Kind(
        "backup", N_("backup"), worth=6, family=BACKUP, protects=True, condition=True, record=True
    ),
    Kind(
        "repeated_failure",
        N_("failing script"),
        worth=5,
        family=SANDBOX,
        auto=True,
        explained=True,
        trends=True,
    ),
    Kind("pending_task", N_("pending promise"), worth=4),
    Kind("low_mood", N_("low mood"), worth=4, trends=True),
    Kind("routine", N_("routine done by hand"), worth=3, family=SANDBOX, auto=True, trends=True),
    Kind("long_hours", N_("long days"), worth=3, breaks=True),
    Kind("autonomy_promotion", N_("more autonomy"), worth=2, condition=True),
    Kind("duplicates", N_("duplicate files"), worth=2, family=SANDBOX, auto=True),
    Kind("organize", N_("folder tidying"), worth=1, family=SANDBOX, auto=True),
    Kind("temp_cleanup", N_("temporary files cleanup"), worth=1, family=SANDBOX, auto=True),
    Kind("memory_merge", N_("memory merge"), worth=0, family=MEMORY, auto=True),
    Kind("memory_edit", N_("memory edit"), worth=0, family=MEMORY, proposed=False),
    Kind("backup_forget", N_("old backups forgotten"), family=BACKUP, record=True, proposed=False),
    Kind("backup_restore", N_("backup restore"), family=BACKUP, proposed=False),
)
KINDS: Mapping[str, Kind] = {k.name: k for k in _ENTRIES}

#: The kinds ``[auto].kinds`` may name (policies.config), in the registry's order.
AUTO_KINDS = tuple(k.name for k in _ENTRIES if k.auto)
#: Actions that record something done outside the root (a backup taken, old snapshots
#: forgotten): in `history` and acciones.md like any action, with nothing to undo.
RECORD_KINDS = frozenset(k.name for k in _ENTRIES if k.record)


def of(name: str) -> Kind:
    """Kind ``name``'s entry; a name no entry declares (a row from an older ALMA) reads as a
    notice that counts as files do, with no family and no flag."""
    known = KINDS.get(name)
    return known if known is not None else Kind(name, name)


def label(name: str) -> str:
    """The words a person reads for kind ``name`` (the name itself when it is not a kind)."""
    known = KINDS.get(name)
    return _(known.label) if known is not None else name


def main() -> None:
    """Print the registry: one kind a line, its fields as columns."""
    heads = ("kind", "label", "worth", "family", *FLAGS)
    rows = [
        [k.name, k.label, str(k.worth), k.family or "-"]
        + ["yes" if getattr(k, f) else "-" for f in FLAGS]
        for k in _ENTRIES
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    for line in (list(heads), *rows):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
