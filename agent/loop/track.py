"""Autonomy earned by track record: the rules over what happened to ALMA's suggestions.

Outcomes (``state.suggestions`` records them) are counted per kind and per folder, the folder
being the suggestion's target. The rules:

- a kind rejected :data:`REJECTS_TO_STOP` times for a folder is no longer proposed there, until
  the person lifts it (``alma-ctl autonomy allow KIND --folder F``);
- an undo means "not this, not now": the kind is not proposed again for that folder until the
  folder changes a great deal (a plan of at least :data:`HOLD_GROWTH` times the files of the
  one undone) or the person lifts it the same way;
- at level auto, a kind whose actions ALMA ran on its own were undone :data:`UNDOS_TO_STOP`
  times stops running on its own, until the person lifts it (``alma-ctl autonomy allow KIND``);
- a kind a person accepted :data:`PROMOTE_AFTER` times and never undid becomes a suggestion to
  let it run on its own, with the exact line for ``system/autonomy.conf``: only the person's
  edit of that file raises autonomy.

A lift counts from then on: earlier rejections or undos no longer count towards a stop.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from actions.planners.base import PlanResult, fingerprint
from policies.i18n import _
from policies.kinds import AUTO_KINDS
from policies.results import (
    AutoStopped,
    FolderCounts,
    KindCounts,
    Promotable,
    Stopped,
    TrackSummary,
)

REJECTS_TO_STOP = 3
UNDOS_TO_STOP = 2
PROMOTE_AFTER = 5
HOLD_GROWTH = 2
PROMOTION_KIND = "autonomy_promotion"
POLICY_FILE = "system/autonomy.conf"
ANY_FOLDER = "*"


class TrackRecord:
    """The rules applied to every recorded outcome (read once per analysis or ``stats``)."""

    def __init__(self, outcomes: Iterable[sqlite3.Row], *, auto_kinds: Sequence[str]) -> None:
        self.auto_kinds = tuple(auto_kinds)
        self.total: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self.rejects: Counter[tuple[str, str]] = Counter()  # since the last lift there
        self.auto_undos: Counter[str] = Counter()  # since the last lift of the kind
        self.accepted_by_person: Counter[str] = Counter()
        self.undone_kinds: set[str] = set()
        #: (kind, folder) undone since the last lift there -> files of the plan undone
        self.held: dict[tuple[str, str], int | None] = {}
        feedback: dict[int, tuple[tuple[str, str], str]] = {}
        for row in outcomes:
            event, kind, folder = str(row["event"]), str(row["kind"]), str(row["folder"])
            if event == "lifted":
                if folder == ANY_FOLDER:
                    self.auto_undos[kind] = 0
                else:
                    self.rejects[(kind, folder)] = 0
                    self.held.pop((kind, folder), None)
                continue
            if event in ("useful", "useless") and row["suggestion_id"] is not None:
                feedback[int(row["suggestion_id"])] = ((kind, folder), event)
                continue
            self.total[(kind, folder)][event] += 1
            if event == "rejected":
                self.rejects[(kind, folder)] += 1
            elif event == "undone":
                self.undone_kinds.add(kind)
                self.held[(kind, folder)] = row["files"]
                if row["auto"]:
                    self.auto_undos[kind] += 1
            elif event == "accepted" and not row["auto"]:
                self.accepted_by_person[kind] += 1
        for key, event in feedback.values():
            self.total[key][event] += 1

    def stopped(self, kind: str, folder: str, *, files: int | None = None) -> str | None:
        """Why ``kind`` is no longer proposed for ``folder`` (now with a plan of ``files``
        files; None: whatever its size), with how to lift it; or None."""
        n = self.rejects.get((kind, folder), 0)
        if n >= REJECTS_TO_STOP:
            return _(
                "you rejected {kind} in {folder} {n} times, so I no longer propose it there; "
                "`alma-ctl autonomy allow {kind} --folder {folder}` allows it again",
                n=n,
                kind=kind,
                folder=folder,
            )
        if (kind, folder) not in self.held:
            return None
        undone = self.held[(kind, folder)]
        if files is not None and undone is not None and files >= HOLD_GROWTH * max(undone, 1):
            return None
        return _(
            "you undid {kind} in {folder}, so I do not propose it there again until the folder "
            "changes a great deal; `alma-ctl autonomy allow {kind} --folder {folder}` allows "
            "it again",
            kind=kind,
            folder=folder,
        )

    def auto_stopped(self, kind: str) -> bool:
        return self.auto_undos.get(kind, 0) >= UNDOS_TO_STOP

    def promotable(self) -> list[Promotable]:
        """Kinds a person accepted often and never undid, not yet allowed at auto."""
        out: list[Promotable] = []
        for kind, n in sorted(self.accepted_by_person.items()):
            if n < PROMOTE_AFTER or kind in self.undone_kinds or kind in self.auto_kinds:
                continue
            if kind not in AUTO_KINDS:  # the policy refuses it in [auto].kinds: never ask
                continue
            kinds = json.dumps([*self.auto_kinds, kind], ensure_ascii=False)
            out.append(
                {
                    "kind": kind,
                    "accepted": n,
                    "file": POLICY_FILE,
                    "section": "[auto]",
                    "line": f"kinds = {kinds}",
                }
            )
        return out

    def promotion_findings(self) -> list[PlanResult]:
        """Each promotable kind as a suggestion (empty plan: accepting it acknowledges it)."""
        results = []
        for promo in self.promotable():
            kind = promo["kind"]
            results.append(
                PlanResult(
                    kind=PROMOTION_KIND,
                    target=POLICY_FILE,
                    title=_("You could let ALMA do “{kind}” on its own", kind=kind),
                    reason=_(
                        "you accepted {n} {kind} suggestions and undid none; only you can "
                        "raise the autonomy, by editing the file",
                        n=promo["accepted"],
                        kind=kind,
                    ),
                    evidence=[
                        _(
                            "In {path}, section [auto], write: {line}",
                            path=POLICY_FILE,
                            line=promo["line"],
                        ),
                        _('and, if it is not already, level = "auto"'),
                    ],
                    plan=[],
                    files=0,
                    fingerprint=fingerprint(PROMOTION_KIND, POLICY_FILE, [kind]),
                )
            )
        return results

    def welcome(self, kind: str) -> float:
        """The share of ``kind``'s decided suggestions the person took well (accepted or found
        useful), 0.5 while none is decided: the noise budget's tie-breaker (agent.loop.budget)."""
        counts: Counter[str] = Counter()
        for (k, _folder), c in self.total.items():
            if k == kind:
                counts.update(c)
        good = counts["accepted"] + counts["useful"]
        bad = counts["rejected"] + counts["useless"]
        return (good + 1) / (good + bad + 2)

    def summary(self) -> TrackSummary:
        """What ``alma-ctl stats`` shows."""
        kinds: dict[str, Counter[str]] = defaultdict(Counter)
        folders: list[FolderCounts] = []
        for (kind, folder), counts in sorted(self.total.items()):
            kinds[kind].update(counts)
            folders.append({**_counts(kind, counts), "folder": folder})
        stopped: list[Stopped] = []
        for kind, folder in sorted({*self.rejects, *self.held}):
            why = self.stopped(kind, folder)
            if why is not None:
                lift = f"alma-ctl autonomy allow {kind} --folder {folder}"
                stopped.append({"kind": kind, "folder": folder, "why": why, "lift": lift})
        auto_stopped: list[AutoStopped] = [
            {
                "kind": kind,
                "why": f"deshiciste {n} veces lo que ALMA hizo por su cuenta",
                "lift": f"alma-ctl autonomy allow {kind}",
            }
            for kind, n in sorted(self.auto_undos.items())
            if n >= UNDOS_TO_STOP
        ]
        return {
            "kinds": [_counts(k, c) for k, c in sorted(kinds.items())],
            "folders": folders,
            "stopped": stopped,
            "auto_stopped": auto_stopped,
            "promotable": self.promotable(),
        }


def _counts(kind: str, counts: Counter[str]) -> KindCounts:
    """``kind``'s counts of each of policies.states.COUNTED_OUTCOMES."""
    return {
        "kind": kind,
        "proposed": counts["proposed"],
        "accepted": counts["accepted"],
        "rejected": counts["rejected"],
        "undone": counts["undone"],
        "useful": counts["useful"],
        "useless": counts["useless"],
    }
