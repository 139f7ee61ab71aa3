"""The daily analysis: the day's facts, extractive, from the example logs (contract §6)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from agent.daily import day_facts, render

#: A copy of ../shared/examples/logs, so the suite runs on a fresh machine.
EXAMPLES = Path(__file__).parents[1] / "data" / "examples" / "logs"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "logs")
    (tmp_path / "user" / "proyectoY").mkdir(parents=True)
    return tmp_path


def test_the_day_from_the_example_logs_has_projects_hours_failures_and_promises(
    root: Path,
) -> None:
    facts = day_facts(root, date(2026, 11, 17))
    assert facts.first == "08:02" and facts.last == "22:47"
    assert facts.person_turns == 4
    assert "proyectoY" in facts.projects
    assert {"backup", "pendiente", "fatiga"} <= set(facts.topics)
    rsync, status = facts.failures  # one failed run wrote two failure lines
    assert (rsync["log"], rsync["count"], rsync["line"]) == ("logs/backup.log", 1, 8)
    assert "/mnt/ALMA_RESIST" in rsync["example"]
    assert "backup.sh exited with status 23" in status["example"]
    (promise,) = facts.promises
    assert "Mañana ordeno la carpeta de proyectoY" in promise["text"]
    assert promise["where"] == "logs/2026-11-17.md:14"

    text = render(facts, suggestions=[], actions=[], memories=None)
    for needle in ("08:02", "22:47", "proyectoY", "#backup", "/mnt/ALMA_RESIST", "Mañana ordeno"):
        assert needle in text, needle


def test_a_late_night_is_said_and_a_day_without_logs_says_so(root: Path) -> None:
    facts = day_facts(root, date(2026, 11, 18))
    assert facts.last == "23:58" and facts.failures == []
    assert facts.promises == []  # "Recuérdame que nunca ..." is a principle, not a task
    empty = day_facts(root, date(2026, 11, 1))
    assert empty.person_turns == 0
    assert "No hay conversaciones" in render(empty, suggestions=[], actions=[], memories=None)


def test_what_alma_did_that_day_is_listed(root: Path) -> None:
    facts = day_facts(root, date(2026, 11, 17))
    text = render(
        facts,
        suggestions=[
            {"id": 3, "kind": "organize", "title": "Ordenar user/x", "status": "executed"},
            {"id": 4, "kind": "organize", "title": "Ordenar user/y", "status": "rejected"},
        ],
        actions=[
            {"id": 7, "kind": "organize", "auto": False, "undoes": None, "suggestion_id": 3},
            {"id": 8, "kind": "organize", "auto": False, "undoes": 7, "suggestion_id": 3},
        ],
        memories={"added": 5, "total": 120},
    )
    assert "#3" in text and "#4" in text and "rechazada" in text
    assert "acción 7" in text and "acción 8 deshizo la 7" in text
    assert "5 recuerdos nuevos (120 en total)" in text
