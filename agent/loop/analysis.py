"""The analysis: what the detectors find becomes suggestions, or is left out with a reason.

Plain functions over findings, in order: *observe* (every detector, the memory store's
merges, the track record's promotions; pending suggestions whose files changed expire),
*explain* (what the files, or the model, say about a failing script; the break a long_hours
suggestion offers), *recall* (what memory forbids or remembers), *gate* (the policy: refused,
asks a person, or runs on its own), the *budget* (at most ``[monitor] new_per_day`` new
suggestions a day wait for the person, the most worth first: agent.loop.budget) and *admit*
(stored as a suggestion, found again by fingerprint rather than stored twice). A finding is one value all the way:
:class:`actions.planners.PlanResult`, its plan a list of ops, copied only where recall or
diagnosis changes it; the suggestions store encodes that plan once.

Each step is a method of :class:`Analyst`, whose collaborators are given to it explicitly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from actions.ops import Op, files_touched, write_paths
from actions.planners import PlanResult
from actions.tree import Tree
from agent.day.reminders import plan_words
from agent.detectors import diagnose
from agent.detectors.files import plan_organize_folder
from agent.loop.autonomy import Autonomy
from agent.loop.budget import protects, within, worth
from agent.loop.track import TrackRecord
from agent.memory import merge_actions
from agent.memory.loader import MemoryLoader
from agent.memory.recall import ByMonth, MemoryNote, apply_recall, recall_notes
from agent.policy import PolicyHolder
from agent.voice.model import Complete
from policies import kinds
from policies.decide import PlanFacts, Verdict, decide
from policies.errors import AlmaError, RefusedError, UnavailableError
from policies.i18n import _, ngettext
from policies.layout import RootLayout
from policies.results import Skipped
from policies.zones import ZoneCheck
from state.db import utc_stamp
from state.suggestions import SuggestionStore

log = logging.getLogger("alma.agent")

#: The folders of user/ a reason may name by name alone (a person sees a few dozen), and how
#: deep they are looked for ("user/Documentos/facturas/2023").
MAX_NAMED_FOLDERS = 500
NAMED_DEPTH = 3

Detect = Callable[[float], Sequence[PlanResult]]
Notify = Callable[[str, str], None]


def no_notify(title: str, body: str) -> None:
    return None


@dataclass
class Analysis:
    """One analysis's outcome: the suggestions admitted (id, runs on its own) and the rest."""

    admitted: list[tuple[int, bool]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: Findings left for an analysis that may wait for the model (see Analyst.run).
    deferred: int = 0


class ModelDeferred(Exception):
    """The model was asked by an analysis that must not wait for it."""


def _model_deferred(*_args: object, **_kwargs: object) -> str:
    raise ModelDeferred


def track_record(store: SuggestionStore, policy: PolicyHolder) -> TrackRecord:
    """The track record as the outcomes stored now make it."""
    return TrackRecord(store.outcomes(), auto_kinds=policy().auto.kinds)


def _skip(finding: PlanResult, why: str, by: list[str] | None = None) -> Skipped:
    return {
        "kind": finding.kind,
        "target": finding.target,
        "title": finding.title,
        "why": why,
        "by": by or [],
    }


def named_folders(layout: RootLayout) -> list[str]:
    """The folders of ``user/`` down to ``NAMED_DEPTH`` levels, root-relative, breadth first,
    at most ``MAX_NAMED_FOLDERS``: those a person's reason may name by name alone ("la carpeta
    Clases", "en facturas", "the 2023 photos"); a deeper one is named by its path."""
    try:
        with Tree(layout.root) as tree:
            found = tree.folders((layout.user.name,), NAMED_DEPTH, MAX_NAMED_FOLDERS)
    except (OSError, RefusedError):  # no root: the reason is read without its names
        return []
    return ["/".join(parts) for parts in found]


class Analyst:
    """Runs the analysis over the detectors' findings and admits what it proposes."""

    def __init__(
        self,
        layout: RootLayout,
        policy: PolicyHolder,
        store: SuggestionStore,
        autonomy: Autonomy,
        detect: Detect,
        *,
        memory: MemoryLoader | None = None,
        complete: Complete | None = None,
        clock: Callable[[], float] = time.time,
        notify: Notify = no_notify,
    ) -> None:
        self.layout = layout
        self.policy = policy
        self.store = store
        self.autonomy = autonomy
        self.detect = detect
        self.memory = memory
        self.complete = complete  # the model, when one is loaded: a config fix
        self.clock = clock
        self.notify = notify

    def run(self, now: float, *, model: bool = True) -> Analysis:
        """observe -> explain -> recall -> gate -> budget -> admit, once over every finding.

        ``model`` False: a finding whose explanation would ask the model is left for the next
        analysis (counted in ``deferred``), not proposed without its fix: loading the model
        and its answer take a minute on a busy machine, and the analysis after start must
        not wait for them (``status`` is not ready until it has run)."""
        track = track_record(self.store, self.policy)
        out = Analysis()
        findings = self.observe(now, track, out.skipped)
        notes = self.notes() if findings else []
        by_month = self.by_month(now)
        gated: list[tuple[PlanResult, bool]] = []  # (finding, runs on its own)
        for finding in findings:
            try:
                finding = self.explain(finding, self.complete if model else _model_deferred)
            except ModelDeferred:
                out.deferred += 1
                out.skipped.append(
                    _skip(finding, _("waits for the model, which explains it in the next analysis"))
                )
                continue
            except (OSError, AlmaError) as exc:  # proposed as detected, without the explanation
                log.error("could not look into %s: %s", finding.target, exc)
            shaped = apply_recall(finding, notes, by_month=by_month)
            if shaped.finding is None:
                out.skipped.append(_skip(finding, shaped.why, shaped.by))
                continue
            verdict, reason = self.gate(shaped.finding)
            if verdict is Verdict.REFUSE:
                out.skipped.append(_skip(shaped.finding, reason))
                continue
            gated.append((shaped.finding, verdict is Verdict.ALLOW))
        # What runs on its own asks nothing of the person: only the rest count in the budget.
        asks = [f for f, auto in gated if not auto]
        proposed, waiting = within(
            asks,
            self.room(now),
            lambda f: worth(f.kind, f.files, track.welcome(f.kind)),
            exempt=lambda f: protects(f.kind),
        )
        for finding in waiting:
            out.skipped.append(_skip(finding, self.waiting_why()))
        chosen = {id(f) for f in proposed}
        for finding, auto in gated:
            if auto or id(finding) in chosen:
                out.admitted.append((self.admit(finding, needs_approval=not auto), auto))
        return out

    def room(self, now: float) -> int | None:
        """How many new suggestions may still wait for the person today (None: no budget)."""
        budget = self.policy().monitor.new_per_day
        if budget == 0:
            return None
        start = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
        today = self.store.created_between(utc_stamp(start.timestamp()), utc_stamp(now + 1))
        counted = [s for s in today if s["needs_approval"] and not protects(s["kind"])]
        return max(0, budget - len(counted))

    def waiting_why(self) -> str:
        budget = self.policy().monitor.new_per_day
        return ngettext(
            "waiting: today's new suggestion is already proposed ([monitor] new_per_day = {n}); "
            "a later analysis proposes it if it still holds",
            "waiting: today's {n} new suggestions are already proposed ([monitor] new_per_day); "
            "a later analysis proposes it if it still holds",
            budget,
        )

    # -- the steps ------------------------------------------------------------------------------
    def observe(self, now: float, track: TrackRecord, skipped: list[Skipped]) -> list[PlanResult]:
        """The findings worth proposing: not pending or decided already, not stopped by the
        track record (those go to ``skipped``), not a detector's bug (logged)."""
        found = list(self.detect(now))
        seen_memory = False  # the memory store not looked at: its pending merges stay
        if self.memory is not None and self.memory.loaded:
            # Not waiting for, nor doing, a full scan of the store (it runs on its own thread
            # after an analysis); its merges come with a later one.
            merges = merge_actions.merge_findings(self.memory.service, wait=False)
            seen_memory = merges is not None
            found += merges or ()
        found += track.promotion_findings()
        self.expire({f.fingerprint for f in found}, seen_memory=seen_memory)
        out: list[PlanResult] = []
        for finding in found:
            problem = finding.problem()
            if problem is not None:
                log.error("a detector gave a bad finding, left out: %s", problem)
                continue
            blocking = self.store.find_blocking(finding.fingerprint)
            if blocking is not None:  # pending, or decided: not news
                if kinds.of(finding.kind).condition and blocking > 0:
                    # The same condition in its latest words (a failing backup's last error).
                    self.store.restate(blocking, finding)
                continue
            why = track.stopped(finding.kind, finding.target, files=finding.files)
            if why is not None:
                skipped.append(_skip(finding, why))
                continue
            out.append(finding)
        return out

    def expire(self, current: set[str], *, seen_memory: bool) -> None:
        """A pending plan whose files changed under it no longer describes them, and a notice
        of a condition that ended (a backup succeeded since) no longer holds: expire it."""
        for row in self.store.with_status("pending"):
            if kinds.of(row["kind"]).family == kinds.MEMORY and not seen_memory:
                continue  # the store was not looked at this time
            ended = kinds.of(row["kind"]).condition
            if (row["has_plan"] or ended) and row["fingerprint"] not in current:
                if ended:
                    why = _("what it said no longer holds")
                else:
                    why = _(
                        "its files changed after it was proposed; a new analysis proposes "
                        "a fresh plan if it still applies"
                    )
                self.store.update(row["id"], status="expired", error=why)

    def explain(self, finding: PlanResult, complete: Complete | None = None) -> PlanResult:
        """The words of a plan the files or the clock give: a failing script's configuration
        (its fix, perhaps the model's), the time of the break a long_hours suggestion offers.
        Only these kinds (``breaks``, ``explained`` in policies.kinds) take this step; every
        other finding comes out as it went in."""
        kind = kinds.of(finding.kind)
        if kind.breaks:
            when = datetime.fromtimestamp(self.clock())
            return replace(finding, evidence=[*finding.evidence, plan_words(when)])
        if not kind.explained:
            return finding
        policy = self.policy()
        zones = ZoneCheck(policy.zones.writable, policy.zones.read_only)
        return diagnose.explain_failure(
            self.layout.root,
            finding,
            writable=lambda path: zones.problem(path) is None,
            complete=complete or self.complete,
        )

    def notes(self, *, wait: bool = False) -> list[MemoryNote]:
        """The principles and decisions recall reads (none without a memory store); ``wait``:
        a store still loading is waited for, within the gate's bound."""
        if self.memory is not None and wait:
            try:
                self.memory.get()
            except UnavailableError:
                if self.memory.error is None:
                    raise  # still loading: the person is told to try again
        if self.memory is None or not self.memory.loaded:
            return []
        try:
            service = self.memory.service
            return recall_notes(service, service.reason_reader(), named_folders(self.layout))
        except Exception:  # proposing goes on without what memory would have added
            log.exception("recall failed; proposing without memory this time")
            return []

    def gate(self, finding: PlanResult) -> tuple[Verdict, str]:
        """The policy's verdict with nobody's approval: ALLOW (runs on its own), ASK, REFUSE."""
        plan = finding.plan
        facts = PlanFacts(kind=finding.kind, paths=write_paths(plan), files=files_touched(plan))
        decision = decide(self.policy(), facts, self.autonomy.run_context(approved_by_person=False))
        if finding.by_model and decision.verdict is Verdict.ALLOW:
            # Contract §5: the model's text never becomes an action without a person's word.
            return Verdict.ASK, _("the model wrote this plan: a person decides.")
        return decision.verdict, decision.reason

    def admit(self, finding: PlanResult, *, needs_approval: bool) -> int:
        """Store the suggestion (its plan encoded here, once); a person who must decide is
        told."""
        sid = self.store.propose(finding, needs_approval=needs_approval)
        log.info("suggestion %s proposed: %s", sid, finding.title)
        if needs_approval:
            self.notify(
                _("ALMA: suggestion {id}", id=sid),
                _("{title}. alma-ctl suggestions show {id}", title=finding.title, id=sid),
            )
        return sid

    def by_month(self, now: float) -> ByMonth:
        """A folder's organize plan by month, for a reason that asks for it by date."""
        policy = self.policy()
        return lambda folder: plan_organize_folder(
            self.layout.root, folder, policy, "month", now=now
        )

    def plan_again(self, fingerprint: str) -> list[Op] | None:
        """The plan the analysis would propose now for the finding of ``fingerprint`` (a config
        fix is read from the files again, what memory asks applied again: a folder a reason
        asked for by date stays by month), or None when that finding is gone or memory no
        longer lets it be proposed."""
        now = self.clock()
        for finding in self.detect(now):
            if finding.fingerprint == fingerprint:
                notes = self.notes(wait=True)
                shaped = apply_recall(self.explain(finding), notes, by_month=self.by_month(now))
                return None if shaped.finding is None else shaped.finding.plan
        return None
