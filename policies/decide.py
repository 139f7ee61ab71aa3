"""The one pure decision: may this plan run now, must a person approve it, or is it refused?

Inputs are facts computed elsewhere (the plan's kind, its write targets, its file count) and the
run-time context (who asked, pause, effective level). No I/O. The physical checks (symlinks,
identities) happen again in actions.safefs when the plan executes; this is the policy gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from policies.config import Level, Policy
from policies.i18n import _
from policies.states import level_rank
from policies.zones import ZoneCheck


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str


@dataclass(frozen=True)
class PlanFacts:
    kind: str
    #: Every path the plan writes (creates, moves from or to, trashes), relative to the root.
    paths: Sequence[str]
    #: Files touched, counted recursively (a moved folder counts every file inside it).
    files: int


@dataclass(frozen=True)
class RunContext:
    #: A person explicitly accepted this plan (``alma-ctl suggestions accept``, undo, ...).
    approved_by_person: bool
    paused: bool = False
    #: The level in force: the configured one, or lower if lowered at run time.
    effective_level: Level = "suggest"
    #: Kinds the person stopped from running on their own (by undoing one of them).
    auto_disabled_kinds: frozenset[str] = field(default_factory=frozenset)


def path_zone_problem(policy: Policy, relpath: str) -> str | None:
    """Why ``relpath`` may not be written under ``policy``, or None when it may (lexical check)."""
    return ZoneCheck(policy.zones.writable, policy.zones.read_only).problem(relpath)


def decide(policy: Policy, facts: PlanFacts, ctx: RunContext) -> Decision:
    zones = ZoneCheck(policy.zones.writable, policy.zones.read_only)
    for path in facts.paths:
        problem = zones.problem(path)
        if problem:
            return Decision(
                Verdict.REFUSE, _("{problem}; only writable zones may change.", problem=problem)
            )
    limit = policy.thresholds.max_files
    if facts.files > limit:
        return Decision(
            Verdict.REFUSE,
            _(
                "the plan touches {files} files, more than max_files = {limit} in "
                "system/autonomy.conf; split the work or raise max_files there.",
                files=facts.files,
                limit=limit,
            ),
        )
    if ctx.approved_by_person:
        return Decision(Verdict.ALLOW, _("approved by a person"))
    approval = policy.thresholds.approval_files
    if facts.files > approval:
        return Decision(
            Verdict.ASK,
            _(
                "it touches {files} files, more than approval_files = {limit}: "
                "a person must accept it.",
                files=facts.files,
                limit=approval,
            ),
        )
    if ctx.paused:
        return Decision(Verdict.ASK, _("autonomy is paused (alma-ctl autonomy on resumes it)."))
    if level_rank(ctx.effective_level) < level_rank("auto"):
        return Decision(
            Verdict.ASK,
            _("the autonomy level is {level}: a person decides.", level=ctx.effective_level),
        )
    if facts.kind not in policy.auto.kinds:
        return Decision(
            Verdict.ASK,
            _("{kind} is not among the kinds [auto].kinds may run.", kind=facts.kind),
        )
    if facts.kind in ctx.auto_disabled_kinds:
        return Decision(
            Verdict.ASK,
            _(
                "{kind} stopped running on its own after a person undid one "
                "(alma-ctl autonomy allow {kind} turns it back on).",
                kind=facts.kind,
            ),
        )
    return Decision(
        Verdict.ALLOW,
        _("level auto allows {kind} under {limit} files", kind=facts.kind, limit=approval),
    )
