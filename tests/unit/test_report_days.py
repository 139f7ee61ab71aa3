"""report.days: the last days as series, each figure read from the owner the daily report and
the detectors read (the day's turns, the low_mood score, the store's statuses)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from actions.planners import PlanResult
from agent.day.days import OUTCOMES, day_series, report_days
from agent.detectors.low_mood import day_score
from control.commands import validate
from control.views import render_result
from policies.errors import BadArgumentError
from policies.i18n import language
from state.chatlog import parse
from state.suggestions import SuggestionStore

EXAMPLE = Path(__file__).parents[1] / "data" / "examples" / "logs" / "2026-11-17.md"


@pytest.fixture
def store(tmp_path: Path) -> SuggestionStore:
    return SuggestionStore(tmp_path / "alma.db")


def _root(tmp_path: Path, day: date) -> Path:
    (tmp_path / "logs").mkdir(exist_ok=True)
    text = EXAMPLE.read_text(encoding="utf-8").replace("2026-11-17", day.isoformat())
    (tmp_path / "logs" / f"{day.isoformat()}.md").write_text(text, encoding="utf-8")
    return tmp_path


def _propose(store: SuggestionStore, kind: str, n: int) -> int:
    finding = PlanResult(
        kind=kind,
        target="user",
        title=f"{kind} {n}",
        reason="",
        evidence=[],
        plan=[],
        files=1,
        fingerprint=f"fp-{kind}-{n}",
    )
    return store.propose(finding, needs_approval=True)


def test_a_day_of_chat_gives_its_hours_messages_by_hour_and_the_detectors_mood(
    tmp_path: Path, store: SuggestionStore
) -> None:
    yesterday = date.today() - timedelta(days=1)
    root = _root(tmp_path, yesterday)
    days = day_series(root, store, 3)
    assert [d["date"] for d in days] == [
        (date.today() - timedelta(days=n)).isoformat() for n in (2, 1, 0)
    ]
    day = days[1]
    assert day["hours"] == round((22 * 3600 + 47 * 60 + 55 - (8 * 3600 + 2 * 60 + 11)) / 3600, 2)
    hours = day["messages_by_hour"]
    assert len(hours) == 24 and (hours[8], hours[13], hours[22]) == (2, 1, 1) and sum(hours) == 4
    score = day_score(parse(EXAMPLE.read_text(encoding="utf-8")))
    assert score is not None and day["mood"] == round(score[0], 3) and day["mood"] > 0
    for empty in (days[0], days[2]):  # no chat: no hours, no messages, no mood (a gap)
        assert (empty["hours"], sum(empty["messages_by_hour"]), empty["mood"]) == (0.0, 0, None)


def test_suggestions_are_counted_by_kind_and_by_what_became_of_them(
    tmp_path: Path, store: SuggestionStore
) -> None:
    pending = _propose(store, "organize", 1)
    rejected = _propose(store, "organize", 2)
    undone = _propose(store, "organize", 3)
    done = _propose(store, "duplicates", 4)
    expired = _propose(store, "duplicates", 5)
    store.reject(rejected, "no")
    for sid, action in ((undone, 7), (done, 8)):
        store.update(sid, status="executed", action_id=action)
    store.record_outcome("undone", "organize", "user", suggestion_id=undone, action_id=7)
    store.update(expired, status="expired")
    assert pending
    today = report_days(tmp_path, store, 1)
    assert today["outcomes"] == list(OUTCOMES)
    (day,) = today["days"]
    zero = dict.fromkeys(OUTCOMES, 0)
    assert day["suggestions"] == {
        "organize": zero | {"pending": 1, "rejected": 1, "undone": 1},
        "duplicates": zero | {"accepted": 1, "expired": 1},
    }


def test_the_days_are_bounded_and_ninety_are_read(tmp_path: Path, store: SuggestionStore) -> None:
    for bad in (0, 91, True):
        with pytest.raises(BadArgumentError):
            validate("report.days", {"days": bad})
    assert validate("report.days", {})["days"] == 14
    days = day_series(tmp_path, store, 90)
    assert len(days) == 90 and days[-1]["date"] == date.today().isoformat()
    assert days[0]["date"] == (date.today() - timedelta(days=89)).isoformat()


def test_suggestions_list_filters_the_undone_ones(store: SuggestionStore) -> None:
    undone = _propose(store, "organize", 1)
    kept = _propose(store, "organize", 2)
    for sid, action in ((undone, 7), (kept, 8)):
        store.update(sid, status="executed", action_id=action)
    store.record_outcome("undone", "organize", "user", suggestion_id=undone, action_id=7)
    checked = validate("suggestions.list", {"status": "undone"})
    listed = store.list(status=str(checked["status"]))
    assert [s["id"] for s in listed] == [undone]
    assert [s["id"] for s in store.list(status="executed")] == [undone, kept]


def test_alma_ctl_prints_one_line_a_day(tmp_path: Path, store: SuggestionStore) -> None:
    _propose(store, "organize", 1)
    days = report_days(_root(tmp_path, date.today()), store, 2)
    with language("es"):
        text = render_result("report.days", {"days": 2}, days)
    head, older, today = text.splitlines()
    assert head.split()[:4] == ["FECHA", "HORAS", "MENSAJES", "ÁNIMO"]
    assert older.split()[1:3] == ["0.0", "0"] and "-" in older.split()
    assert today.split()[0] == date.today().isoformat() and today.split()[2] == "4"
    assert today.split()[-1] == "1"  # the pending suggestion
