"""Weeks nobody tuned to, lived through a real daemon and alma-ctl: six weeks of six people
written blind (tests/data/heldout32/weeks, frozen), dated from the day the test runs, with the
policy's default noise budget over several days. The routine detector was fitted on the fit
side (tests.support.heldout_weeks.FIT) and synthetic weeks; the report side is what the bounds
are asserted on.

The sets written blind after it, each by another hand (tests.support.heldout_weeks.BLIND_SETS,
tests/data/heldout32c..f/weeks), were each run once on the detectors frozen before it was
merged: the second to fourth are development sets since, the fifth the newest report.

On a bad week ALMA must propose the labelled findings within the week and invent none; on a
calm week it brings one suggestion at most."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest

from tests.support.daemon import DaemonRoot
from tests.support.heldout_weeks import (
    FIT,
    REPORT,
    Finding,
    HeldoutWeek,
    blind_weeks,
    load,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

#: Of the labelled findings, the share that must be proposed within the week.
MIN_FOUND = 0.90
#: Suggestions a calm week may bring at most.
MAX_CALM = 1
#: Suggestions that are none of the labelled findings, on a bad week.
MAX_INVENTED = 0
#: Days lived: the analysis of the first day, then one a day as the noise budget renews.
DAYS = 4
#: Weeks lived at once, each by its own daemon.
SIDE_BY_SIDE = 3


@dataclass
class Lived:
    week: HeldoutWeek
    #: each suggestion with the paths its plan names
    suggestions: list[tuple[dict[str, Any], set[str]]]

    def found(self) -> list[Finding]:
        return [f for f in self.week.findings if self._match(f)]

    def _match(self, f: Finding) -> bool:
        return any(self.week.matches(f, s, paths) for s, paths in self.suggestions)

    def invented(self) -> list[dict[str, Any]]:
        """Suggestions that are no labelled finding, and those beyond the labelled number of
        a kind that names no target (a second promise when one was left open)."""
        out = []
        taken: Counter[str] = Counter()
        allowed = Counter(f.kind for f in self.week.findings if f.target is None)
        for s, paths in self.suggestions:
            if not any(self.week.matches(f, s, paths) for f in self.week.findings):
                out.append(s)
            elif s["kind"] in allowed:
                taken[s["kind"]] += 1
                if taken[s["kind"]] > allowed[s["kind"]]:
                    out.append(s)
        return out


def live(week: HeldoutWeek) -> Lived:
    alma = DaemonRoot().init()
    try:
        alma.policy(level="manual")  # nothing is proposed before the analysis asked for
        alma.extra_env["LANG"] = "es_ES.UTF-8" if week.language == "es" else "en_US.UTF-8"
        week.build(alma.root, date.today())
        alma.start()
        for day in range(DAYS):
            if day:
                # The next day: what the noise budget kept waiting comes then.
                with sqlite3.connect(alma.root / ".alma" / "alma.db") as db:
                    db.execute("UPDATE suggestions SET created_at = '2000-01-01T00:00:00+00:00'")
            alma.analyze()
        shown = []
        for s in alma.suggestions():
            plan = alma.ok("suggestions", "show", str(s["id"]))["plan"]
            paths = {str(v) for op in plan for k, v in op.items() if k in ("path", "src", "dst")}
            shown.append((s, paths))
        return Lived(week, shown)
    finally:
        alma.close()


def live_all(weeks: Sequence[HeldoutWeek]) -> list[Lived]:
    """Each week lived by a daemon of its own, a few side by side: a daemon spends much of a
    week waiting on its own start and analyses."""
    with ThreadPoolExecutor(max_workers=SIDE_BY_SIDE) as pool:
        return list(pool.map(live, weeks))


def figures(lived: list[Lived], side: str) -> tuple[float, list[str]]:
    labelled = sum(len(x.week.findings) for x in lived if not x.week.calm)
    found = sum(len(x.found()) for x in lived if not x.week.calm)
    lines = [f"{side}: {found} of {labelled} labelled findings proposed"]
    for x in lived:
        kinds = sorted(f"{s['kind']}:{s['target']}" for s, _p in x.suggestions)
        missed = [f"{f.kind}:{f.target}" for f in x.week.findings if f not in x.found()]
        plans = {id(s): sorted(paths)[:3] for s, paths in x.suggestions}
        invented = [f"{s['kind']}:{s['target']} {plans[id(s)]}" for s in x.invented()]
        lines.append(
            f"  {x.week.name}{' (calm)' if x.week.calm else ''}: {len(x.suggestions)} "
            f"suggestions; missed {missed or 'nothing'}; invented {invented or 'nothing'}; "
            f"proposed {kinds}"
        )
    return (found / labelled if labelled else 1.0), lines


@pytest.fixture(scope="module")
def report_side() -> Iterator[list[Lived]]:
    yield live_all([load(name) for name in REPORT])


@pytest.fixture(scope="module")
def fit_side() -> Iterator[list[Lived]]:
    yield live_all([load(name) for name in FIT])


def check(lived: list[Lived], side: str) -> None:
    share, lines = figures(lived, side)
    print("\n" + "\n".join(lines) + f"\n  share found {share:.2f}")
    assert share >= MIN_FOUND, "\n".join(lines)
    assert all(len(x.suggestions) <= MAX_CALM for x in lived if x.week.calm), "\n".join(lines)
    assert all(len(x.invented()) <= MAX_INVENTED for x in lived if not x.week.calm), "\n".join(
        lines
    )


def test_the_heldout_weeks_bring_up_what_happened_and_calm_weeks_stay_quiet(
    report_side: list[Lived],
) -> None:
    check(report_side, "held-out weeks " + ", ".join(REPORT))


def test_the_weeks_fitted_on_bring_up_what_happened(fit_side: list[Lived]) -> None:
    check(fit_side, "fit weeks " + ", ".join(FIT))


#: The development figures of the blind sets whose bounds do not hold yet (docs/agent.md).
_THIRD = (
    "a development set: 11 of 12 (0.92), calm weeks 0, 0, 0, but 3 invented pending promises"
    " (w1: a promise for a weekday not yet come, one kept in words sharing one keyword far from"
    " it; w3: a cake promised and replaced by biscuits); missed: w2's organize of 13 loose"
    " files, under the policy's messy_folder_files of 15 (docs/agent.md); the bounds stand and"
    " this mark goes the day they hold"
)
_FOURTH = (
    "a development set (run once on the detectors frozen at d415c0f: 10 of 12, 1 invented, calm"
    " weeks 2, 1, 0): 12 of 12, but one invented pending promise on w1 (a way of working told in"
    " the present) and calm weeks 2, 0, 0 (w4: a turn at a family meal, a question to someone"
    " who called first) (docs/agent.md); the bounds stand and this mark goes the day they hold"
)


@pytest.mark.parametrize(
    "ordinal",
    [
        "second",
        pytest.param("third", marks=pytest.mark.xfail(strict=True, reason=_THIRD)),
        pytest.param("fourth", marks=pytest.mark.xfail(strict=True, reason=_FOURTH)),
        "fifth",
    ],
)
def test_each_blind_set_of_weeks_brings_up_what_happened_and_calm_weeks_stay_quiet(
    ordinal: str,
) -> None:
    folder, names = blind_weeks(ordinal)
    assert len(names) == 6, f"the {ordinal} blind weeks are missing from {folder}"
    lived = live_all([load(name, folder) for name in names])
    check(lived, f"{ordinal} blind weeks " + ", ".join(names))
