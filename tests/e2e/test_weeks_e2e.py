"""Weeks lived with ALMA through a real daemon and alma-ctl: on a bad week it brings up what
happened, on a calm week it stays quiet (tests/support/weeks.py: three of each, Spanish and
English, dated from the day the test runs)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest

from tests.support.daemon import DaemonRoot
from tests.support.weeks import WEEKS, Week

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

#: Of the findings labelled on the bad weeks, the share that must be proposed.
MIN_FOUND = 0.90
#: Suggestions a calm week may bring at most.
MAX_CALM = 1


#: The policy's default noise budget: new suggestions a day.
BUDGET = 5


@dataclass
class Lived:
    week: Week
    suggestions: list[dict[str, Any]]
    first_day: list[dict[str, Any]]

    def found(self, kind: str, target: str | None) -> bool:
        return any(
            s["kind"] == kind and (target is None or s["target"] == target)
            for s in self.suggestions
        )


def live(week: Week) -> Lived:
    alma = DaemonRoot().init()
    try:
        alma.policy(level="manual")  # nothing is proposed before the analysis asked for
        alma.extra_env["LANG"] = "es_ES.UTF-8" if week.language == "es" else "en_US.UTF-8"
        week.build(alma.root, date.today())
        alma.start()
        alma.analyze()
        first = alma.suggestions()
        # The next day: what the noise budget kept waiting comes then.
        with sqlite3.connect(alma.root / ".alma" / "alma.db") as db:
            db.execute("UPDATE suggestions SET created_at = '2000-01-01T00:00:00+00:00'")
        alma.analyze()
        return Lived(week, alma.suggestions(), first)
    finally:
        alma.close()


@pytest.fixture(scope="module")
def lived() -> Iterator[list[Lived]]:
    yield [live(week) for week in WEEKS]


def test_a_bad_week_brings_up_what_happened(lived: list[Lived]) -> None:
    labelled = found = 0
    lines = []
    for one in (x for x in lived if x.week.bad):
        missed = [k for k, t in one.week.expected if not one.found(k, t)]
        labelled += len(one.week.expected)
        found += len(one.week.expected) - len(missed)
        kinds = sorted(s["kind"] for s in one.suggestions)
        day1 = sorted(s["kind"] for s in one.first_day)
        lines.append(
            f"{one.week.name}: missed {missed or 'nothing'}; proposed {kinds}; first day {day1}"
        )
    share = found / labelled
    print(f"\nbad weeks: {found} of {labelled} labelled findings proposed ({share:.2f})")
    print("\n".join(lines))
    assert share >= MIN_FOUND, "\n".join(lines)


def test_a_bad_week_comes_a_few_a_day_what_matters_most_first(lived: list[Lived]) -> None:
    for one in (x for x in lived if x.week.bad):
        kinds = [s["kind"] for s in one.first_day]
        assert len(kinds) <= BUDGET, (one.week.name, kinds)
        for kind in ("repeated_failure", "pending_task", "low_mood"):
            assert kind in kinds, (one.week.name, kinds)  # before the files


def test_a_calm_week_stays_quiet(lived: list[Lived]) -> None:
    lines = [
        f"{x.week.name}: {len(x.suggestions)} suggestions "
        f"{[(s['kind'], s['target'], s['title']) for s in x.suggestions]}"
        for x in lived
        if not x.week.bad
    ]
    print("\ncalm weeks:\n" + "\n".join(lines))
    assert all(len(x.suggestions) <= MAX_CALM for x in lived if not x.week.bad), "\n".join(lines)
