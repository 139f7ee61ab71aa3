"""The daily analysis: the day's facts, extractive, from the example logs (contract §6)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from agent.day.alma_logs import audit_entry
from agent.day.day_analysis import day_facts, render, summarize, summary_problem
from policies import i18n
from tests.support.fake_model import FakeComplete

#: A copy of ../shared/examples/logs, so the suite runs on a fresh machine.
EXAMPLES = Path(__file__).parents[1] / "data" / "examples" / "logs"


@pytest.fixture
def spanish_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon's own language (its setting or locale) is Spanish: the report's."""
    monkeypatch.setattr(i18n, "_process_language", "es")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "logs")
    (tmp_path / "user" / "proyectoY").mkdir(parents=True)
    return tmp_path


def test_reading_a_day_leaves_no_file_open(root: Path) -> None:
    # The daemon reads a day at every report and every analysis, for as long as it runs.
    (root / "user" / "proyectoY" / "datos").mkdir()
    day_facts(root, date(2026, 11, 17))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        day_facts(root, date(2026, 11, 17))
    assert len(os.listdir("/proc/self/fd")) == before


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


@pytest.mark.usefixtures("spanish_daemon")
def test_a_late_night_is_said_and_a_day_without_logs_says_so(root: Path) -> None:
    facts = day_facts(root, date(2026, 11, 18))
    assert facts.last == "23:58" and facts.failures == []
    assert facts.promises == []  # "Recuérdame que nunca ..." is a principle, not a task
    empty = day_facts(root, date(2026, 11, 1))
    assert empty.person_turns == 0
    assert "No hay conversaciones" in render(empty, suggestions=[], actions=[], memories=None)


@pytest.mark.usefixtures("spanish_daemon")
def test_what_alma_did_that_day_is_listed(root: Path) -> None:
    facts = day_facts(root, date(2026, 11, 17))
    text = render(
        facts,
        suggestions=[
            {"id": 3, "kind": "organize", "title": "Ordenar user/x", "status": "executed"},
            {"id": 4, "kind": "organize", "title": "Ordenar user/y", "status": "rejected"},
        ],
        actions=[
            {"id": 7, "kind": "organize", "auto": False, "undoes": None, "status": "undone"},
            {"id": 8, "kind": "organize", "auto": False, "undoes": 7, "status": "done"},
            {
                "id": 9,
                "kind": "duplicates",
                "auto": False,
                "undoes": None,
                "status": "done",
                "undoable": True,
            },
            {
                "id": 10,
                "kind": "backup",
                "auto": True,
                "undoes": None,
                "status": "done",
                "undoable": False,
            },
        ],
        memories={"added": 5, "total": 120},
    )
    assert "#3" in text and "#4" in text and "rechazada" in text
    assert "acción 8 deshizo la 7" in text
    (seven,) = [line for line in text.splitlines() if "acción 7 " in line]
    assert "deshecha" in seven and "alma-ctl undo" not in seven  # an undo is never offered twice
    (nine,) = [line for line in text.splitlines() if "acción 9 " in line]
    assert "`alma-ctl undo 9`" in nine
    (ten,) = [line for line in text.splitlines() if "acción 10 " in line]
    assert ten == "- acción 10 (backup, por su cuenta)", ten  # a record: no undo offered
    assert "5 recuerdos nuevos (120 en total)" in text


# -- the summary written by the model, checked against the facts ----------------------------------


FAITHFUL = (
    "Trabajaste en proyectoY de 08:02 a 22:47, con 4 mensajes tuyos. El backup falló: "
    "backup.sh salió con estado 23, dos líneas de fallo en logs/backup.log. "
    "Prometiste ordenar mañana la carpeta de proyectoY."
)


def _report(facts: Any, summary: str | None) -> str:
    return render(facts, suggestions=[], actions=[], memories=None, summary=summary)


@pytest.mark.usefixtures("spanish_daemon")
def test_a_faithful_summary_by_the_model_heads_the_report(root: Path) -> None:
    facts = day_facts(root, date(2026, 11, 17))
    model = FakeComplete(FAITHFUL)
    summary = summarize(facts, model, timeout_s=7.0)
    assert summary == FAITHFUL
    (call,) = model.calls
    assert call["timeout_s"] == 7.0
    assert "proyectoY" in call["messages"][-1]["content"]  # the facts are what it is given
    text = _report(facts, summary)
    assert text.index(FAITHFUL) < text.index("## El día")
    assert "comprobado con los hechos" in text
    assert "Mañana ordeno" in text  # the extractive facts stay below it


@pytest.mark.parametrize(
    "lie",
    [
        FAITHFUL.replace("08:02", "07:30"),  # an hour that is not the day's
        FAITHFUL.replace("con 4 mensajes", "con 9 mensajes"),  # a count no fact has
        FAITHFUL.replace("dos líneas", "seis líneas"),  # a count in words
        FAITHFUL + " También avanzaste en proyectoZ.",  # a project the day does not have
        FAITHFUL + " Revisaste tesis.",  # a folder of user/ that was not among the day's
        FAITHFUL + " Moviste cosas en user/fotos.",  # a path of no project of the day
        FAITHFUL + " Y deploy.sh falló.",  # a script no failure mentions
        FAITHFUL.replace("con 4 mensajes", "con 1.500 mensajes"),  # a thousands separator
        FAITHFUL.replace("con 4 mensajes", "con 4 mensajes, 2,5 por hora"),  # a decimal
        FAITHFUL.replace("con 4 mensajes", "con 4 mensajes en 30min"),  # glued to a unit
        FAITHFUL.replace("con 4 mensajes", "con 4 mensajes en 9h"),  # glued to a unit
        FAITHFUL.replace("con 4 mensajes", "con treinta mensajes"),  # tens in words
        FAITHFUL.replace("con 4 mensajes", "con treinta y cuatro mensajes"),  # tens and units
        FAITHFUL.replace("con 4 mensajes", "con veinticuatro mensajes"),
        FAITHFUL.replace("con 4 mensajes", "con cien mensajes"),  # hundreds in words
        FAITHFUL.replace("con 4 mensajes", "con doscientos cuatro mensajes"),
        FAITHFUL.replace("con 4 mensajes", "con mil mensajes"),
        FAITHFUL.replace("con 4 mensajes", "con CUARENTA mensajes"),
        # The embedded model is mostly English: told to answer in Spanish, it may not.
        "You worked on proyectoY from 08:02 to 22:47 with seven messages of yours.",
        "You worked on proyectoY with 4 messages; backup.sh failed thrice in nineteen minutes.",
        "You worked on proyectoY with 4 messages; backup.sh failed twenty-five times.",
        "You worked on proyectoY with a hundred messages.",
        "You worked on proyectoY with 4 messages and one thousand edits.",
        "",  # nothing at all
        "x" * 5000,  # far more than a few sentences
    ],
)
def test_a_summary_that_states_what_the_facts_do_not_is_not_used(root: Path, lie: str) -> None:
    (root / "user" / "tesis").mkdir()
    facts = day_facts(root, date(2026, 11, 17))
    assert summary_problem(lie, facts) is not None
    assert summarize(facts, FakeComplete(lie), timeout_s=1.0) is None
    assert _report(facts, None) == render(facts, suggestions=[], actions=[], memories=None)


@pytest.mark.parametrize(
    "true",
    [
        FAITHFUL,
        FAITHFUL.replace("con 4 mensajes", "con cuatro mensajes"),
        FAITHFUL.replace("estado 23", "estado veintitrés"),  # 23 is the exit status of the fact
        FAITHFUL.replace("estado 23", "estado veintitres"),  # written without its accent
        FAITHFUL.replace("de 08:02 a 22:47", "el 17/11/2026 de 08:02 a 22:47"),  # the day
        FAITHFUL.replace("con 4 mensajes", "con 4 mensajes, el 4.º día"),  # glued, but a fact
        "You worked on proyectoY from 08:02 to 22:47 with four messages of yours.",
        "You worked on proyectoY with 4 messages; backup.sh exited with status twenty-three.",
    ],
)
def test_a_summary_whose_every_number_is_a_fact_is_used(root: Path, true: str) -> None:
    facts = day_facts(root, date(2026, 11, 17))
    assert summary_problem(true, facts) is None, summary_problem(true, facts)


def test_without_a_model_the_report_is_extractive(root: Path) -> None:
    facts = day_facts(root, date(2026, 11, 17))
    assert summarize(facts, None, timeout_s=1.0) is None
    busy = FakeComplete(None)  # complete() gives None: no model, or busy past the timeout
    assert summarize(facts, busy, timeout_s=1.0) is None and len(busy.calls) == 1
    quiet = FakeComplete(FAITHFUL)
    assert summarize(day_facts(root, date(2026, 11, 1)), quiet, timeout_s=1.0) is None
    assert quiet.calls == []  # a day with nothing to tell is not sent to the model


def test_the_report_and_the_audit_log_follow_the_daemons_language_not_the_requests(
    root: Path,
) -> None:
    facts = day_facts(root, date(2026, 11, 1))
    action = {"id": 7, "kind": "organize", "auto": False, "undoes": None}
    ops = [{"op": "move", "src": "user/a.pdf", "dst": "user/documentos/a.pdf"}]
    with i18n.language("es"):  # a Spanish client asked; the daemon's own language is English
        text = render(facts, suggestions=[], actions=[], memories={"added": 1, "total": 1})
        entry = audit_entry(action, None, ops, datetime(2026, 11, 1, 9, 30))
    assert "No conversation was logged that day." in text
    assert "- Memory: 1 new memory (1 in all)" in text
    assert "## 2026-11-01 09:30 · action 7 (organize)" in entry
    assert "- moved user/a.pdf → user/documentos/a.pdf" in entry
    assert "Why: no suggestion. Decided by: the person." in entry


def test_the_audit_entry_of_a_large_action_reads_only_the_ops_it_shows() -> None:
    # The audit entry of a large undo must not decode its whole plan to write 200 lines: the
    # entry takes ops as they come and counts the rest from the action's row.
    read = [0]

    def plan() -> Iterator[dict[str, str]]:
        yield {"op": "keep", "path": "user/a.txt"}  # a dedupe's kept file: not a change
        for i in range(999):
            read[0] += 1
            yield {"op": "move", "src": f"user/f{i}.jpg", "dst": f"user/imágenes/f{i}.jpg"}

    action = {"id": 7, "kind": "organize", "auto": False, "undoes": None, "ops": 1000}
    with i18n.language("en"):
        entry = audit_entry(action, None, plan(), datetime(2026, 11, 1, 9, 30))
    lines = entry.splitlines()
    assert sum(1 for line in lines if line.startswith("- moved ")) == 200
    assert "- moved user/f199.jpg → user/imágenes/f199.jpg" in lines
    assert "- … and 799 more ops (`alma-ctl history`)" in lines
    assert read[0] == 201  # one past the lines shown, to know there are more


def test_a_log_changed_past_year_9999_does_not_stop_the_report(root: Path) -> None:
    # date.fromtimestamp raises ValueError on it; uncaught, `alma-ctl report` would answer an
    # internal error, and so would the daily analysis, every day. Year 36812 needs a file system
    # that keeps such a time (tmpfs, btrfs, XFS; ext4 caps it), so the root is copied to one.
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no tmpfs at /dev/shm to keep a file time past year 9999")
    base = Path(tempfile.mkdtemp(prefix="alma-test-", dir=shm))
    try:
        shutil.copytree(root, base / "root", symlinks=True)
        log = base / "root/logs/run.log"
        log.write_text("ERROR boom\n2026-11-22 10:00:00 ERROR sync failed\n", encoding="utf-8")
        os.utime(log, (float(1 << 40), float(1 << 40)))
        if log.stat().st_mtime != float(1 << 40):
            pytest.skip("/dev/shm caps file times")
        facts = day_facts(base / "root", date(2026, 11, 22))
        assert [f["example"] for f in facts.failures if f["log"] == "logs/run.log"] == [
            "2026-11-22 10:00:00 ERROR sync failed"
        ]
    finally:
        shutil.rmtree(base)


@pytest.mark.usefixtures("spanish_daemon")
def test_the_report_says_what_returns_across_the_last_days(tmp_path: Path) -> None:
    from tests.support.weeks import WEEKS

    (marta,) = [w for w in WEEKS if w.name == "marta-es"]
    today = date.today()
    marta.build(tmp_path, today)
    facts = day_facts(tmp_path, today)
    text = render(facts, suggestions=[], actions=[], memories=None)
    section = text.split("## En los últimos días", 1)[1].split("\n## ", 1)[0]
    assert "«backup» falla" in section  # the failure night after night
    assert "cansad" in section.lower()  # the mood going down
    assert "a mano" in section  # the routine
    calm = tmp_path / "calm"
    (lucia,) = [w for w in WEEKS if w.name == "lucia-es"]
    lucia.build(calm, today)
    quiet = render(day_facts(calm, today), suggestions=[], actions=[], memories=None)
    assert "Nada que vuelva día tras día." in quiet


def test_the_day_reads_the_persons_folders_not_hidden_ones_nor_links(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("fuera")
    (elsewhere / "ajeno").mkdir()
    (root / "user" / ".git" / "objects").mkdir(parents=True)
    (root / "user" / "enlace").symlink_to(elsewhere)
    facts = day_facts(root, date(2026, 11, 17))
    assert facts.folders == ["proyectoY"]
