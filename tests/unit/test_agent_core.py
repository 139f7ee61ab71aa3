"""agent.loop.lifecycle and agent.loop.autonomy in process: the suggestions' life without a daemon.

The real detectors, store, analysis, decisions and engine (its child run in this process, as
tests/support/engine.py does); only the clock is given.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from agent.detectors.files import detect_files
from agent.detectors.logs import detect_logs
from agent.loop.autonomy import Autonomy
from agent.loop.lifecycle import Agent
from agent.memory.loader import MemoryLoader
from agent.policy import PolicyHolder
from policies.defaults import DEFAULT_POLICY_TOML
from policies.errors import BadArgumentError, ConflictError, InvalidStateError, NotFoundError
from policies.i18n import language
from state.journal import Journal
from state.suggestions import SuggestionStore
from tests.support.engine import AlmaRoot, InProcessEngine
from tests.support.fake_model import FakeComplete


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[tuple[Agent, AlmaRoot]]:
    alma = AlmaRoot(tmp_path).build()
    policy = re.sub(r"settle_seconds = \d+", "settle_seconds = 0", DEFAULT_POLICY_TOML)
    # The engine's child runs in this process (tests/support/engine.py): no confinement.
    policy = policy.replace("allow_unconfined = false", "allow_unconfined = true")
    alma.layout.policy_file.write_text(policy, encoding="utf-8")
    holder = PolicyHolder(alma.layout)
    store = SuggestionStore(alma.layout.db_file)
    engine = InProcessEngine(alma.layout, Journal(alma.layout.journal_file), holder)
    autonomy = Autonomy(store, holder)

    def detect(now: float) -> list:  # type: ignore[type-arg]
        return detect_files(alma.root, holder(), now, hash_cache={})

    agent = Agent(alma.layout, holder, store, engine, autonomy, detect, memory=MemoryLoader())
    try:
        yield agent, alma
    finally:
        store.close()


def _messy(alma: AlmaRoot, folder: str, n: int = 20) -> list[Path]:
    exts = ("jpg", "pdf", "mp3", "csv", "zip", "txt")
    return [alma.write(f"{folder}/f{i:03d}.{exts[i % 6]}", b"x" * (i + 1)) for i in range(n)]


def _example_logs(alma: AlmaRoot) -> None:
    """The chat and script logs of tests/data/examples (2026-11-17 and -18) in the root."""
    from tests.unit.test_daily import EXAMPLES

    for log in EXAMPLES.iterdir():
        alma.write(f"logs/{log.name}", log.read_bytes())


def _pending(agent: Agent) -> list[dict[str, object]]:
    return agent.store.list(status="pending", all=False)


def test_a_finding_becomes_a_pending_suggestion_once(agent: tuple[Agent, AlmaRoot]) -> None:
    ag, alma = agent
    _messy(alma, "user/descargas")
    first = ag.analyze(trigger="person")
    assert len(first) == 1
    assert ag.analyze(trigger="person") == []  # the same finding is not proposed twice
    (row,) = _pending(ag)
    assert row["kind"] == "organize" and row["target"] == "user/descargas"


def test_a_suggestion_whose_files_changed_expires_and_cannot_be_accepted(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    ag, alma = agent
    files = _messy(alma, "user/descargas")
    (sid,) = ag.analyze(trigger="person")
    files[0].write_bytes(b"changed after the plan was made")
    time.sleep(0.01)
    ag.analyze(trigger="schedule")
    row = ag.store.get(sid)
    assert row["status"] == "expired", row
    assert "changed" in str(row["error"])
    # Contract §2: exit 5, conflict, "the files are not as the plan expects; nothing was
    # changed", as an accept that finds the change itself says, also once an analysis expired
    # it first (not 1, invalid state): a script's exit code must not hang on the timing of the
    # file watcher.
    with pytest.raises(ConflictError, match="expired because its files changed"):
        ag.accept(sid)


def test_accept_runs_the_plan_and_undo_takes_it_back(agent: tuple[Agent, AlmaRoot]) -> None:
    ag, alma = agent
    _messy(alma, "user/descargas")
    before = alma.user_tree()
    (sid,) = ag.analyze(trigger="person")
    action = ag.accept(sid)
    assert action["status"] == "done", action
    assert alma.user_tree() != before
    assert ag.store.get(sid)["status"] == "executed"
    ag.undo(action["id"])
    assert alma.user_tree() == before


def test_a_rejected_suggestion_stays_rejected_and_is_not_proposed_again(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    ag, alma = agent
    _messy(alma, "user/descargas")
    (sid,) = ag.analyze(trigger="person")
    ag.reject(sid, "prefiero mi desorden")
    assert ag.store.get(sid)["status"] == "rejected"
    assert ag.analyze(trigger="person") == []
    with pytest.raises(InvalidStateError):
        ag.accept(sid)


def _damage_plan(ag: Agent, sid: int) -> None:
    ag.store.conn.execute(
        "UPDATE suggestion_plans SET plan = ? WHERE suggestion_id = ?", ('[{"op":"mk', sid)
    )
    ag.store.conn.commit()


def test_accepting_a_suggestion_whose_stored_plan_is_damaged_fails_it_and_does_nothing(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    ag, alma = agent
    _messy(alma, "user/descargas")
    before = alma.user_tree()
    (sid,) = ag.analyze(trigger="person")
    _damage_plan(ag, sid)
    with pytest.raises(BadArgumentError) as err:
        ag.accept(sid)
    message = str(err.value)
    assert f"Suggestion {sid}" in message and "alma-ctl analyze" in message, message
    assert "char" not in message and "Expecting" not in message  # json's detail is for the log
    row = ag.store.row(sid)
    assert (row["status"], row["error"], row["action_id"]) == ("failed", message, None)
    assert ag.engine.journal.for_suggestion(sid) == [] and alma.user_tree() == before
    # What the sentence says to do works: a failed suggestion no longer blocks its finding.
    (fresh,) = ag.analyze(trigger="person")
    assert fresh != sid and ag.accept(fresh)["status"] == "done"


def test_showing_a_suggestion_whose_stored_plan_is_damaged_is_one_sentence(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    ag, alma = agent
    _messy(alma, "user/descargas")
    (sid,) = ag.analyze(trigger="person")
    _damage_plan(ag, sid)
    with pytest.raises(BadArgumentError) as err:
        ag.store.get(sid)  # `suggestions show ID`: it was json's JSONDecodeError, a traceback
    message = str(err.value)
    assert f"Suggestion {sid}" in message and "alma-ctl" in message, message
    assert "char" not in message
    assert ag.store.get(sid, with_plan=False)["status"] == "pending"  # the listing still works
    with language("es"), pytest.raises(BadArgumentError) as es:
        ag.store.get(sid)
    assert f"La sugerencia {sid}" in str(es.value), str(es.value)


def test_autonomy_pause_and_lowering_persist_in_the_store(agent: tuple[Agent, AlmaRoot]) -> None:
    ag, _alma = agent
    autonomy = ag.autonomy
    assert autonomy.off()["effective"] == "off"
    again = Autonomy(ag.store, ag.policy)  # as after a restart
    assert again.paused and again.effective() == "off"
    assert again.on()["effective"] == again.configured
    again.set_level("manual")
    assert Autonomy(ag.store, ag.policy).effective() == "manual"


def test_the_report_uses_the_models_summary_only_when_it_holds(
    agent: tuple[Agent, AlmaRoot], monkeypatch: pytest.MonkeyPatch
) -> None:
    from policies import i18n
    from tests.support.fake_model import FakeComplete
    from tests.unit.test_daily import FAITHFUL

    monkeypatch.setattr(i18n, "_process_language", "es")  # the report is in the daemon's language
    ag, alma = agent
    _example_logs(alma)
    (alma.root / "user" / "proyectoY").mkdir()
    ag.reports.complete, ag.reports.model_timeout_s = FakeComplete(FAITHFUL), 9.0
    report = ag.reports.show("2026-11-17")
    assert report["text"].startswith(f"# Análisis del día · 2026-11-17\n\n{FAITHFUL}\n")
    assert ag.reports.complete.calls[0]["timeout_s"] == 9.0
    # A lie: the extractive report goes in its place.
    ag.reports.complete = FakeComplete(FAITHFUL.replace("08:02", "06:15"))
    lied = ag.reports.show("2026-11-17", refresh=True)
    assert "06:15" not in lied["text"] and "Actividad de 08:02 a 22:47" in lied["text"]
    assert Path(lied["path"]).read_text(encoding="utf-8") == lied["text"]


def test_feedback_on_an_action_is_feedback_on_the_suggestion_it_came_from(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    # Contract §2: `feedback ID` tells whether "a suggestion or action" was useful: an action's
    # id is taken too, since `accept` prints the action's.
    ag, alma = agent
    _messy(alma, "user/descargas")
    (sid,) = ag.analyze(trigger="person")
    done = ag.accept(sid)
    aid = int(done["id"])
    got = ag.feedback(aid, "util", "me ahorró tiempo", action=True)
    assert (got["suggestion_id"], got["action_id"], got["feedback"]) == (sid, aid, "useful")

    def organize() -> tuple[int, int]:
        (kind,) = [k for k in ag.stats()["kinds"] if k["kind"] == "organize"]
        return kind["useful"], kind["useless"]

    assert organize() == (1, 0)
    ag.feedback(sid, "inutil", None)  # the same suggestion by its own id: the verdict is replaced
    assert organize() == (0, 1)
    undo = ag.undo(None)
    with pytest.raises(InvalidStateError, match=rf"undoes action {aid}\b.*--action {aid}"):
        ag.feedback(int(undo["id"]), "util", None, action=True)
    with pytest.raises(NotFoundError):
        ag.feedback(aid + 99, "util", None, action=True)
    assert organize() == (0, 1)


def test_a_days_report_is_written_once_then_shown_as_it_is(agent: tuple[Agent, AlmaRoot]) -> None:
    # Contract §2: `report [DATE]` is "written now if it does not exist yet": never again, which
    # would throw away a summary the model wrote earlier or a person's note.
    ag, alma = agent
    _example_logs(alma)
    first = ag.reports.show("2026-11-17")
    assert first["written"] is True and "08:02" in first["text"]
    path = Path(first["path"])
    noted = first["text"] + "\nNota mía: revisar el backup del disco ñandú.\n"
    path.write_text(noted, encoding="utf-8")
    again = ag.reports.show("2026-11-17")
    assert again["written"] is False and again["text"] == noted
    assert again["written_at"] and path.read_text(encoding="utf-8") == noted
    fresh = ag.reports.show("2026-11-17", refresh=True)  # alma-ctl report --refresh
    assert fresh["written"] is True and "ñandú" not in fresh["text"]
    assert path.read_text(encoding="utf-8") == fresh["text"] == first["text"]


@pytest.mark.parametrize("refresh", [False, True])
def test_a_report_of_a_day_out_of_reach_is_a_usage_error(
    agent: tuple[Agent, AlmaRoot], refresh: bool
) -> None:
    """The first and the last day of the calendar are usage errors, not INTERNAL (the day's
    span would overflow), and a day still to come is not written as an empty report."""
    ag, alma = agent
    tomorrow = (datetime.now() + timedelta(days=1)).date().isoformat()
    for day in (tomorrow, "9999-12-31"):
        with pytest.raises(BadArgumentError, match=rf"{day} has not come yet"):
            ag.reports.show(day, refresh=refresh)
    with pytest.raises(BadArgumentError, match=r"0001-01-01 is too long ago"):
        ag.reports.show("0001-01-01", refresh=refresh)
    assert not (alma.root / "logs" / "alma" / f"{tomorrow}-analisis.md").exists()


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_an_audit_log_that_cannot_be_written_is_told_not_silently_missing(
    agent: tuple[Agent, AlmaRoot], tmp_path: Path, planted: str
) -> None:
    """The action runs, and its missing entry in acciones.md is not only a daemon log line:
    the action's answer and the status say so, until the log can be written."""
    ag, alma = agent
    audit = alma.root / "logs" / "alma" / "acciones.md"
    audit.parent.mkdir(parents=True, exist_ok=True)
    if planted == "symlink":
        audit.symlink_to(tmp_path / "elsewhere.md")
    else:
        os.mkfifo(audit)
    _messy(alma, "user/descargas")
    (sid,) = ag.analyze(trigger="person")
    done = ag.accept(sid)
    assert done["status"] == "done"
    assert done["audit_problem"].startswith(f"Action {done['id']} is not in logs/alma/acciones.md")
    assert "alma-ctl history" in done["audit_problem"]
    assert ag.audit_problem is not None and "acciones.md" in ag.audit_problem
    assert not (tmp_path / "elsewhere.md").exists()
    audit.unlink()
    undone = ag.undo(None)
    assert "audit_problem" not in undone and ag.audit_problem is None
    assert str(undone["undoes"]) in audit.read_text(encoding="utf-8")


def test_a_report_that_cannot_be_shown_says_how_to_write_it_again(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    ag, alma = agent
    path = alma.root / "logs" / "alma" / "2026-11-17-analisis.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"# An\xe1lisis en latin-1\n")
    with pytest.raises(InvalidStateError, match=r"alma-ctl report --refresh 2026-11-17"):
        ag.reports.show("2026-11-17")
    assert path.read_bytes() == b"# An\xe1lisis en latin-1\n"  # nothing was changed
    assert ag.reports.show("2026-11-17", refresh=True)["written"] is True


def test_a_past_days_report_counts_its_memories_however_many_came_after(
    agent: tuple[Agent, AlmaRoot], embedder_loaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The report counts a day's memories among all of them, not the newest 1,000: with 1,000
    # more since, a past day's report would state "0 new memories" and lose their projects.
    import numpy as np

    from agent.memory.service import MemoryService
    from policies import i18n
    from state.memory import MemoryRecord

    monkeypatch.setattr(i18n, "_process_language", "en")
    ag, alma = agent
    service = MemoryService(alma.layout)
    try:

        def record(i: int, day: datetime, project: str = "") -> MemoryRecord:
            return MemoryRecord(
                id=f"m{i:05d}",
                content=f"Recuerdo número {i}, con ñ y acentos: canción.",
                project=project,
                created_at=day.astimezone().isoformat(),
                kind="turn",
            )

        day = datetime(2026, 11, 17, 21, 30)
        later = [record(i, datetime(2026, 11, 18, 9, 0)) for i in range(1001)]
        mine = [record(5000, day, "huerto"), record(5001, day.replace(hour=23), "tesis")]
        mine.append(record(5002, datetime(2026, 11, 16, 23, 59)))  # the day before: not counted
        vectors = np.random.default_rng(0).standard_normal((len(later) + 3, 384))
        vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        service.store.add([*mine, *later], vectors)
        ag.memory.set(service)
        text = ag.reports.show("2026-11-17")["text"]
        assert "- Memory: 2 new memories (1004 in all)" in text, text
        assert "huerto" in text and "tesis" in text
    finally:
        service.close()


def test_a_past_days_report_lists_its_actions_however_many_came_after(
    agent: tuple[Agent, AlmaRoot], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The report reads the day's actions among all of the journal's, not the newest 1,000.
    from policies import i18n
    from state import journal as journal_mod
    from state.db import utcnow

    monkeypatch.setattr(i18n, "_process_language", "en")
    ag, alma = agent
    _messy(alma, "user/descargas")
    (sid,) = ag.analyze(trigger="person")
    done = ag.accept(sid)
    today = datetime.fromisoformat(utcnow()).astimezone().date()
    tomorrow = (datetime.now().astimezone() + timedelta(days=1)).isoformat(timespec="seconds")
    monkeypatch.setattr(journal_mod, "utcnow", lambda: tomorrow)
    conn = ag.engine.journal.conn
    conn.execute("PRAGMA synchronous=OFF")  # the filler's durability is not what is shown here
    for _ in range(1001):
        ag.engine.journal.create_action(kind="organize", plan=[])
    conn.execute("PRAGMA synchronous=FULL")
    text = ag.reports.show(today.isoformat())["text"]
    assert f"- action {done['id']} (organize, accepted by you)" in text, text
    assert f"- Suggestion #{sid} (organize, accepted and done)" in text, text


def test_the_report_offers_an_undo_only_where_undo_can_change_something(
    agent: tuple[Agent, AlmaRoot], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A backup taken is a record: the report names it without promising an undo that
    # `alma-ctl undo` would refuse; the accepted organize keeps its undo.
    from policies import i18n
    from state.db import utcnow

    monkeypatch.setattr(i18n, "_process_language", "en")
    ag, alma = agent
    _messy(alma, "user/descargas")
    (sid,) = ag.analyze(trigger="person")
    done = ag.accept(sid)
    journal = ag.engine.journal
    taken = journal.create_action(
        kind="backup", plan=[{"op": "backup", "target": "/d", "snapshot": "ab"}], sandbox="backup"
    )
    journal.finish(taken, "done")
    with pytest.raises(InvalidStateError, match="nothing to undo"):
        ag.undo(taken)
    today = datetime.fromisoformat(utcnow()).astimezone().date()
    text = ag.reports.show(today.isoformat(), refresh=True)["text"]
    assert f"- action {taken} (backup, accepted by you)\n" in text + "\n", text
    assert f"`alma-ctl undo {taken}`" not in text, text
    assert f"`alma-ctl undo {done['id']}` undoes it" in text, text


def test_the_schedule_writes_again_only_a_report_made_before_its_day_ended(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    import os

    ag, alma = agent
    _example_logs(alma)
    evening = datetime(2026, 11, 17, 18, 0).timestamp()
    ag.reports.clock = lambda: evening
    partial = ag.reports.show(None)  # the person asked at 18:00: the day so far
    path = Path(partial["path"])
    os.utime(path, (evening, evening))
    path.write_text(partial["text"] + "\nvisto a las 18:00\n", encoding="utf-8")
    os.utime(path, (evening, evening))
    ag.reports.clock = lambda: datetime(2026, 11, 18, 3, 0).timestamp()
    whole = ag.reports.scheduled()
    assert whole["date"] == "2026-11-17" and whole["written"] is True
    assert "visto a las 18:00" not in path.read_text(encoding="utf-8")
    path.write_text(whole["text"] + "\nnota de la mañana\n", encoding="utf-8")  # after the day
    kept = ag.reports.scheduled()
    assert kept["written"] is False and kept["text"].endswith("nota de la mañana\n")


def test_a_report_of_a_day_still_running_is_never_served_stale(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    import os

    ag, alma = agent
    morning = datetime(2026, 11, 17, 7, 55).timestamp()
    ag.reports.clock = lambda: morning
    early = ag.reports.show(None)  # 07:55: nothing said yet
    assert early["written"] is True and "08:02" not in early["text"]
    path = Path(early["path"])
    os.utime(path, (morning, morning))
    assert ag.reports.show(None)["written"] is False  # nothing new since: shown as it is
    _example_logs(alma)  # the day goes on: the person talks from 08:02
    later = datetime(2026, 11, 17, 23, 0).timestamp()
    for log in (alma.root / "logs").glob("2026-11-17*"):
        os.utime(log, (later, later))
    ag.reports.clock = lambda: later
    fresh = ag.reports.show(None)
    assert fresh["written"] is True and "08:02" in fresh["text"]
    # Written after its day ended, a report is whole: kept as it is, a person's note with it.
    path.write_text(fresh["text"] + "\nnota\n", encoding="utf-8")
    ag.reports.clock = lambda: datetime(2026, 11, 19, 9, 0).timestamp()
    kept = ag.reports.show("2026-11-17")
    assert kept["written"] is False and kept["text"].endswith("nota\n")


def test_an_undo_after_the_report_is_in_the_report(agent: tuple[Agent, AlmaRoot]) -> None:
    ag, alma = agent
    for i in range(16):
        alma.write(f"user/fotos/f{i:02d}.{('jpg', 'pdf')[i % 2]}", f"{i}\n".encode())
    ag.analyze(trigger="person")
    (s,) = _pending(ag)
    done = ag.accept(int(s["id"]))
    shown = ag.reports.show(None)["text"]
    assert f"`alma-ctl undo {done['id']}`" in shown
    ag.undo(None)
    again = ag.reports.show(None)
    assert again["written"] is True, "an undo since: the report is written again"
    assert f"`alma-ctl undo {done['id']}`" not in again["text"]


class ScanningMemory:
    """The memory service's part the analysis reads: its merge scan is running (None) or done."""

    def __init__(self) -> None:
        self.clusters: list[list[str]] | None = [["a", "b"]]

        self.scans_started = 0

    def merge_candidates(self, *, wait: bool = True) -> list[list[str]] | None:
        assert not wait, "an analysis never waits for the store's scan"
        return self.clusters

    def start_merge_scan(self) -> None:
        self.scans_started += 1

    def show(self, memory_id: str) -> dict[str, object]:
        return {
            "id": memory_id,
            "content": "riego el huerto los lunes",
            "importance": 3,
            "use_count": 0,
            "created_at": "2026-11-01T00:00:00+00:00",
        }

    def list(self, **_kw: object) -> list[dict[str, object]]:
        return []


def test_a_pending_merge_stays_while_the_stores_scan_runs_and_expires_when_it_is_gone(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    # The analysis never waits for the merge scan (seconds on a large store); while it runs,
    # the store is "not looked at", never "nothing to merge".
    ag, _alma = agent
    memory = ScanningMemory()
    ag.memory.set(memory)  # type: ignore[arg-type]  # a fake with only what the loop calls, not the whole service
    (sid,) = ag.analyze(trigger="person")
    assert ag.store.row(sid)["kind"] == "memory_merge"
    assert memory.scans_started == 1  # after the analysis, on its own thread
    memory.clusters = None  # a restart: the first scan is running
    assert ag.analyze(trigger="schedule") == []
    assert ag.store.row(sid)["status"] == "pending"
    memory.clusters = []  # the scan is done and the two were merged or forgotten meanwhile
    ag.analyze(trigger="schedule")
    assert ag.store.row(sid)["status"] == "expired"


def test_an_analysis_waiting_while_the_daemon_stops_runs_nothing(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    """A stop waits for the op in flight under the agent's lock, then closes the journal and
    the stores; an analysis that reaches that lock meanwhile (the debounced one after a file
    event, the schedule's, `analyze` without --wait: threads a stop does not wait for) must
    not run after it, proposing and, at autonomy auto, running plans on what is being closed."""
    import threading

    ag, alma = agent
    _messy(alma, "user/descargas")
    done: list[list[int]] = []
    with ag._lock:  # the stop holds it while the op in flight finishes
        late = threading.Thread(target=lambda: done.append(ag.analyze(trigger="event")))
        late.start()  # it runs once the lock is free: after close, whenever it got there
        ag.close()
    late.join(120)
    assert done == [[]], done
    assert _pending(ag) == []


_MODEL_DIFF = """--- a/user/scripts/backup.conf
+++ b/user/scripts/backup.conf
@@ -1,2 +1,2 @@
 # opciones
-OPTS="--fast"
+OPTS="--archive"
"""


def test_a_plan_the_model_wrote_waits_for_a_person_even_at_auto(tmp_path: Path) -> None:
    # Contract §5: text from the model never becomes a command; only a person accepts. At
    # level auto, with repeated_failure among [auto].kinds, the model's diff of a config file
    # (asked with the failing log lines, which anyone's program may write) must not run alone.
    alma = AlmaRoot(tmp_path).build()
    policy = re.sub(r"settle_seconds = \d+", "settle_seconds = 0", DEFAULT_POLICY_TOML)
    policy = policy.replace("allow_unconfined = false", "allow_unconfined = true")
    policy = policy.replace('level = "suggest"', 'level = "auto"')
    policy = policy.replace('kinds = ["temp_cleanup"]', 'kinds = ["repeated_failure"]')
    alma.layout.policy_file.write_text(policy, encoding="utf-8")
    alma.write("user/scripts/backup.sh", b"#!/bin/sh\n. ./backup.conf\n")
    conf = alma.write("user/scripts/backup.conf", b'# opciones\nOPTS="--fast"\n')
    today = datetime.now().date()
    lines = [
        f"{today - timedelta(days=n)} 02:00:00 ERROR backup.sh: rsync: unknown option --fast"
        for n in (3, 2, 1)
    ]
    alma.write("logs/backup.log", ("\n".join(lines) + "\n").encode())
    holder = PolicyHolder(alma.layout)
    assert holder().level == "auto" and holder().auto.kinds == ["repeated_failure"]
    store = SuggestionStore(alma.layout.db_file)
    engine = InProcessEngine(alma.layout, Journal(alma.layout.journal_file), holder)
    model = FakeComplete(_MODEL_DIFF)
    ag = Agent(
        alma.layout,
        holder,
        store,
        engine,
        Autonomy(store, holder),
        lambda now: detect_logs(alma.root, holder(), now),
        complete=model,
    )
    try:
        (sid,) = ag.analyze(trigger="schedule")
        assert model.calls, "the model was not asked: the test proves nothing"
        row = store.get(sid)
        assert row["kind"] == "repeated_failure" and row["files"] == 1
        assert row["status"] == "pending" and row["needs_approval"]
        assert conf.read_bytes() == b'# opciones\nOPTS="--fast"\n'
        assert engine.journal.history(10) == []
        done = ag.accept(sid)  # the person's word runs it
        assert done["status"] == "done" and b"--archive" in conf.read_bytes()
    finally:
        store.close()


def test_the_scheduled_report_is_of_the_day_that_ended(
    agent: tuple[Agent, AlmaRoot], monkeypatch: pytest.MonkeyPatch
) -> None:
    # At 03:00 (the schedule's default) the day that ended is the one to analyse: today's
    # report would cover the three hours since midnight, "no conversation was logged that
    # day", every day, and no scheduled report a whole day.
    from policies import i18n

    monkeypatch.setattr(i18n, "_process_language", "en")
    ag, alma = agent
    _example_logs(alma)
    ag.reports.clock = lambda: datetime(2026, 11, 18, 3, 0).timestamp()
    report = ag.reports.scheduled()
    assert report["date"] == "2026-11-17" and "08:02" in report["text"]
    assert Path(report["path"]).name == "2026-11-17-analisis.md"
    # A schedule set for the night.
    ag.reports.clock = lambda: datetime(2026, 11, 17, 23, 30).timestamp()
    assert ag.reports.scheduled()["date"] == "2026-11-17"


@pytest.mark.parametrize(("lang", "title"), [("es", "ALMA: un descanso"), ("en", "ALMA: a break")])
def test_a_due_break_is_notified_with_a_title_in_the_persons_language(
    agent: tuple[Agent, AlmaRoot], lang: str, title: str
) -> None:
    from datetime import datetime, timedelta

    from policies.i18n import language

    core, _alma = agent
    shown: list[tuple[str, str]] = []
    core.notify = lambda head, body: shown.append((head, body))
    core.reminders.add_break(1, datetime.now() - timedelta(days=1))
    with language(lang):
        assert len(core.remind_due()) == 1
    assert [head for head, _body in shown] == [title]


def test_a_suggestion_accepted_when_alma_stopped_fails_with_a_sentence_in_the_persons_language(
    agent: tuple[Agent, AlmaRoot],
) -> None:
    from policies.i18n import language

    core, alma = agent
    _messy(alma, "user/descargas")
    (sid,) = core.analyze(trigger="person")
    core.store.update(sid, status="accepted")  # as a stop mid-accept leaves it, no action yet
    with language("es"):
        core.reconcile()
    row = core.store.get(sid)
    assert row is not None and row["status"] == "failed"
    assert row["error"] == (
        "ALMA se detuvo mientras la ejecutaba; se deshizo y nada cambió. "
        "Acéptala de nuevo para reintentarlo."
    )
