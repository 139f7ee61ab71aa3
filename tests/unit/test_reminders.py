"""Reminders: the accepted break, at its time, once; pending promises for the chat."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from actions.planners import PlanResult
from agent.day.reminders import Reminders, break_time, plan_words
from policies.i18n import language
from state.suggestions import SuggestionStore


def test_the_break_is_at_eight_or_soon_after_it() -> None:
    assert break_time(datetime(2026, 11, 23, 15, 30)) == datetime(2026, 11, 23, 20, 0)
    assert break_time(datetime(2026, 11, 23, 21, 0)) == datetime(2026, 11, 23, 21, 15)
    with language("es"):
        assert "a las 20:00" in plan_words(datetime(2026, 11, 23, 15, 30))
    with language("en"):
        assert "at 20:00" in plan_words(datetime(2026, 11, 23, 15, 30))


def test_a_break_is_written_in_the_language_it_is_set_in(tmp_path: Path) -> None:
    with language("es"):
        spanish = Reminders(SuggestionStore(tmp_path / "alma.db")).add_break(
            4, datetime(2026, 11, 23)
        )
    assert spanish["text"] == "Son las 20:00: lo acordado, toca parar y descansar."


def test_a_break_is_due_once_and_listed_for_the_chat(tmp_path: Path) -> None:
    store = SuggestionStore(tmp_path / "alma.db")
    reminders = Reminders(store)
    reminders.add_break(3, datetime(2026, 11, 23, 15, 30))
    assert reminders.due(datetime(2026, 11, 23, 19, 59)) == []
    (due,) = reminders.due(datetime(2026, 11, 23, 20, 0))
    assert due["suggestion_id"] == 3 and "20:00" in due["text"]
    assert reminders.due(datetime(2026, 11, 23, 20, 5)) == []  # shown once
    store.add(
        PlanResult(
            kind="pending_task",
            title="Pendiente: ordenar proyectoY",
            reason="Lo anotaste el 2026-11-17",
            target="logs/2026-11-17.md",
            files=0,
            evidence=[],
            plan=[],
            fingerprint="p" * 16,
        ),
        needs_approval=True,
    )
    listing = Reminders(store).listing(datetime(2026, 11, 23, 21, 0))
    assert [b["suggestion_id"] for b in listing["breaks"]] == [3]
    assert listing["pending_tasks"][0]["title"] == "Pendiente: ordenar proyectoY"
    assert Reminders(store).listing(datetime(2026, 11, 24, 9, 0))["breaks"] == []
