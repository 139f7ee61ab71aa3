"""Weeks lived with ALMA through a real daemon and alma-ctl: on a bad week it brings up what
happened, on a calm week it stays quiet (tests/support/weeks.py: three of each, Spanish and
English, dated from the day the test runs)."""

from __future__ import annotations

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


@dataclass
class Lived:
    week: Week
    suggestions: list[dict[str, Any]]

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
        return Lived(week, alma.suggestions())
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
        lines.append(f"{one.week.name}: missed {missed or 'nothing'}; proposed {kinds}")
    share = found / labelled
    print(f"\nbad weeks: {found} of {labelled} labelled findings proposed ({share:.2f})")
    print("\n".join(lines))
    assert share >= MIN_FOUND, "\n".join(lines)


def test_a_calm_week_stays_quiet(lived: list[Lived]) -> None:
    lines = [
        f"{x.week.name}: {len(x.suggestions)} suggestions "
        f"{[(s['kind'], s['target'], s['title']) for s in x.suggestions]}"
        for x in lived
        if not x.week.bad
    ]
    print("\ncalm weeks:\n" + "\n".join(lines))
    assert all(len(x.suggestions) <= MAX_CALM for x in lived if not x.week.bad), "\n".join(lines)
