"""The detectors on real temp roots: which findings come out, and which places are never read."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from actions.ops import Move, Trash
from actions.planners import PlanResult
from agent.detectors import detect_files, detect_logs
from agent.detectors.failures import is_failure, signature
from agent.detectors.pending import is_promise
from policies.config import Policy, policy_from_dict
from policies.i18n import language
from policies.text import loose_fold


@pytest.fixture(autouse=True)
def spanish() -> Iterator[None]:
    # The findings' sentences are read here as a Spanish person's daemon writes them.
    with language("es"):
        yield


NOW = time.time()
OLD = NOW - 30 * 86_400
#: A copy of ../shared/examples/logs kept in the repository, so this runs on any machine.
EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples" / "logs"


def touch(path: Path, data: bytes = b"x", mtime: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


def policy(**monitor: Any) -> Policy:
    return policy_from_dict({"monitor": {"messy_folder_files": 5, **monitor}})


def by_kind(results: list[PlanResult]) -> dict[str, list[PlanResult]]:
    out: dict[str, list[PlanResult]] = {}
    for r in results:
        out.setdefault(r.kind, []).append(r)
    return out


def messy(folder: Path, n: int = 6, mtime: float = OLD) -> None:
    exts = ["jpg", "pdf", "mp3", "zip", "xlsx", "txt"]
    for i in range(n):
        touch(folder / f"f{i}.{exts[i % len(exts)]}", f"content {folder} {i}".encode(), mtime)


# -- files ---------------------------------------------------------------------------------------


def test_file_findings_of_each_kind(tmp_path: Path) -> None:
    messy(tmp_path / "user/projectY")
    touch(tmp_path / "user/ok/a.jpg")
    touch(tmp_path / "user/fotos/playa.jpg", b"P" * 64, OLD - 10)
    touch(tmp_path / "user/descargas/playa.jpg", b"P" * 64)
    touch(tmp_path / "user/old.tmp")
    found = by_kind(detect_files(tmp_path, policy(), NOW))
    assert sorted(found) == ["duplicates", "organize", "temp_cleanup"]
    (org,) = found["organize"]
    assert org.target == "user/projectY" and org.files == 6
    (dup,) = found["duplicates"]
    assert dup.target == "user"
    assert [op.path for op in dup.plan if isinstance(op, Trash)] == ["user/descargas/playa.jpg"]
    (tmp,) = found["temp_cleanup"]
    assert [op.path for op in tmp.plan if isinstance(op, Trash)] == ["user/old.tmp"]


def test_file_findings_are_recognized_again_and_change_with_their_files(tmp_path: Path) -> None:
    messy(tmp_path / "user/projectY")
    first = {r.kind: r.fingerprint for r in detect_files(tmp_path, policy(), NOW)}
    again = {r.kind: r.fingerprint for r in detect_files(tmp_path, policy(), NOW)}
    assert first == again
    touch(tmp_path / "user/projectY/f0.jpg", b"edited")
    changed = {r.kind: r.fingerprint for r in detect_files(tmp_path, policy(), NOW)}
    assert changed["organize"] != first["organize"]


def test_read_only_zones_system_alma_and_links_are_never_planned(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    messy(outside)
    for folder in ("system/x", "docs/x", ".alma/x", "logs/x", "user/archivo"):
        messy(tmp_path / folder)
        touch(tmp_path / folder / "viejo.tmp")
    (tmp_path / "user/fuera").symlink_to(outside)
    pol = policy_from_dict(
        {
            "zones": {
                "writable": ["user"],
                "read_only": ["system", "logs", "docs", "user/archivo"],
            },
            "monitor": {"messy_folder_files": 5},
        }
    )
    assert detect_files(tmp_path, pol, NOW) == []


def test_a_writable_zone_that_is_a_link_is_skipped(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    messy(outside)
    (tmp_path / "user").symlink_to(outside)
    assert detect_files(tmp_path, policy(), NOW) == []
    (tmp_path / "user").unlink()
    assert detect_files(tmp_path, policy(), NOW) == []  # a missing zone: nothing to do


def test_hostile_names_and_hard_links_stay_where_they_are(tmp_path: Path) -> None:
    folder = tmp_path / "user/projectY"
    messy(folder)
    touch(folder / "dos\nlíneas.jpg")
    raw = os.path.join(os.fsencode(folder), b"mal-\xff.pdf")
    with open(raw, "wb") as f:
        f.write(b"x")
    os.utime(raw, (OLD, OLD))
    touch(folder / "orig.pdf")
    os.link(folder / "orig.pdf", folder / "enlace.pdf")
    (org,) = detect_files(tmp_path, policy(), NOW)
    moved = {op.src for op in org.plan if isinstance(op, Move)}
    assert moved == {
        f"user/projectY/f{i}.{e}" for i, e in enumerate(["jpg", "pdf", "mp3", "zip", "xlsx", "txt"])
    }
    shown = "\n".join(org.evidence)
    assert "dos\\x0alíneas.jpg: se queda" in shown
    assert "mal-\\xff.pdf: se queda" in shown
    assert "enlace.pdf: se queda" in shown


def test_unsettled_files_do_not_make_a_folder_messy(tmp_path: Path) -> None:
    messy(tmp_path / "user/projectY", mtime=NOW - 5)
    assert detect_files(tmp_path, policy(), NOW) == []
    found = detect_files(tmp_path, policy(settle_seconds=0), NOW + 1)
    assert [r.kind for r in found] == ["organize"]


def test_every_planned_path_is_inside_the_writable_zone(tmp_path: Path) -> None:
    messy(tmp_path / "user/a")
    messy(tmp_path / "user/a/b", 10)
    touch(tmp_path / "user/a/viejo.tmp")
    touch(tmp_path / "user/a/c.pdf", b"same")
    touch(tmp_path / "user/a/b/c.pdf", b"same")
    results = detect_files(tmp_path, policy(), NOW)
    assert {r.kind for r in results} == {"organize", "duplicates", "temp_cleanup"}
    for r in results:
        for op in r.plan:
            for path in op.write_paths():
                assert path.startswith("user/")
            if isinstance(op, Move | Trash):
                assert op.expect is not None


def test_organize_is_capped_at_max_files(tmp_path: Path) -> None:
    messy(tmp_path / "user/big", 30)
    pol = policy_from_dict(
        {
            "thresholds": {"approval_files": 5, "max_files": 10},
            "monitor": {"messy_folder_files": 5},
        }
    )
    (org,) = detect_files(tmp_path, pol, NOW)
    assert org.files == 10
    assert any(e.startswith("Solo 10 de 30 archivos") for e in org.evidence)


def test_a_zone_is_scanned_as_far_as_max_files_reaches(tmp_path: Path) -> None:
    # A person who raises max_files asks for actions that large: the zone's scan (20,000 files
    # by default, FileLimits) must list that many, or the folder is proposed partially forever.
    from agent.detectors import FileLimits

    messy(tmp_path / "user/big", 30)
    pol = policy_from_dict(
        {"thresholds": {"approval_files": 5, "max_files": 40}, "monitor": {"messy_folder_files": 5}}
    )
    (org,) = detect_files(tmp_path, pol, NOW, limits=FileLimits(max_files=12))
    assert org.files == 30
    assert not any("Partial scan" in e or "Escaneo parcial" in e for e in org.evidence)
    small = policy_from_dict({"monitor": {"messy_folder_files": 5}})  # max_files 2,000 > 12
    (org,) = detect_files(tmp_path, small, NOW, limits=FileLimits(max_files=12))
    assert org.files == 30


# -- logs: helpers -------------------------------------------------------------------------------


def chat(root: Path, day: datetime, turns: list[tuple[str, str, str]], extra: str = "") -> None:
    lines = [f"# {day:%Y-%m-%d}", ""]
    for clock, speaker, text in turns:
        lines += [f"## {clock} · {speaker}", text]
        if speaker == "alma":
            lines.append("<!-- model: test · tokens: 3 · ms: 1 -->")
        lines.append("")
    path = root / "logs" / f"{day:%Y-%m-%d}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + extra, encoding="utf-8")


TODAY = datetime(2026, 11, 22, 10, 0)
T = TODAY.timestamp()


def days_ago(n: int) -> datetime:
    return TODAY - timedelta(days=n)


# -- repeated_failure ----------------------------------------------------------------------------


def test_signature_ignores_timestamps_and_numbers() -> None:
    a = signature("2026-11-15 02:00:01 ERROR job 4411 failed after 3.2s (pid 99, id deadbeef01)")
    b = signature(
        "2026-11-16T03:10:09+01:00 ERROR job 17 failed after 12.9s (pid 7, id 00aa11bb22)"
    )
    assert a == b == "ERROR job # failed after #.#s (pid #, id #)"


@pytest.mark.parametrize(
    ("line", "failure"),
    [
        ("ERROR something broke", True),
        ("tests FAILED", True),
        ("sync.sh exited with status 23", True),
        ("Command returned non-zero exit status 2.", True),
        ("exit code: 127", True),
        ("job exited with status 0", False),
        ("an error in lower case is prose", False),
        ("ERROR_COUNT=0", False),
        ("INFO done", False),
    ],
)
def test_failure_lines(line: str, failure: bool) -> None:
    assert is_failure(line) is failure


def write_log(root: Path, name: str, lines: list[str]) -> None:
    path = root / "logs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_repeated_failure_needs_several_days(tmp_path: Path) -> None:
    runs = []
    for n in (3, 2, 1):
        d = days_ago(n)
        runs += [f"{d:%Y-%m-%d} 02:00:0{n} INFO sync.sh start"]
        runs += [f"{d:%Y-%m-%d} 02:00:0{n} ERROR sync.sh exited with status {20 + n}"]
    write_log(tmp_path, "tools/sync.log", runs)
    burst = [f"{days_ago(1):%Y-%m-%d} 0{i}:00:00 ERROR flaky {i}" for i in range(6)]
    write_log(tmp_path, "flaky.log", burst)
    found = by_kind(detect_logs(tmp_path, Policy(), T))
    (r,) = found["repeated_failure"]
    assert r.target == "logs/tools/sync.log"
    assert r.title == "«sync.sh» falla una y otra vez"
    assert r.plan == [] and r.files == 0
    assert "3 fallos en 3 días distintos" in r.reason


def test_a_burst_of_failures_on_one_day_is_a_finding_with_its_own_threshold(
    tmp_path: Path,
) -> None:
    from agent.detectors.failures import BURST_OCCURRENCES

    day = days_ago(1)
    few = [f"{day:%Y-%m-%d} 0{i % 10}:00:00 ERROR flaky {i}" for i in range(BURST_OCCURRENCES - 1)]
    write_log(tmp_path, "flaky.log", few)
    assert "repeated_failure" not in by_kind(detect_logs(tmp_path, Policy(), T))
    burst = [f"{day:%Y-%m-%d} 0{i % 10}:00:00 ERROR flaky {i}" for i in range(BURST_OCCURRENCES)]
    write_log(tmp_path, "flaky.log", burst)
    (r,) = by_kind(detect_logs(tmp_path, Policy(), T))["repeated_failure"]
    assert r.target == "logs/flaky.log"
    assert r.reason == f"{BURST_OCCURRENCES} fallos el {day:%Y-%m-%d} en logs/flaky.log: una ráfaga"


def test_repeated_failure_reads_tracebacks_and_ignores_old_ones(tmp_path: Path) -> None:
    lines: list[str] = []
    for n in (40, 30, 4, 2, 1):  # two are outside the window
        lines += [
            f"{days_ago(n):%Y-%m-%d} 09:00:00 INFO importer run",
            "Traceback (most recent call last):",
            '  File "/home/p/importer.py", line 12, in <module>',
            "    main()",
            f"KeyError: 'row {n}'",
        ]
    write_log(tmp_path, "importer.log", lines)
    (r,) = detect_logs(tmp_path, Policy(), T)
    assert r.kind == "repeated_failure"
    assert "3 fallos en 3 días" in r.reason
    assert "KeyError" in r.evidence[0]
    again = detect_logs(tmp_path, Policy(), T + 86_400)
    assert again[0].fingerprint == r.fingerprint  # the same problem, recognized again


def test_the_daemons_own_reports_are_not_read(tmp_path: Path) -> None:
    lines = [f"{days_ago(n):%Y-%m-%d} 01:00:00 ERROR boom" for n in (1, 2, 3, 4)]
    write_log(tmp_path, "alma/daemon.log", lines)
    assert detect_logs(tmp_path, Policy(), T) == []


# -- long_hours ----------------------------------------------------------------------------------


def test_long_hours_on_several_days(tmp_path: Path) -> None:
    chat(tmp_path, days_ago(1), [("07:00:00", "usuario", "hola"), ("21:30:00", "usuario", "sigo")])
    chat(
        tmp_path,
        days_ago(2),
        [("00:40:00", "usuario", "no puedo dormir"), ("09:00:00", "alma", "ok")],
    )
    chat(tmp_path, days_ago(3), [("06:50:00", "usuario", "hola"), ("21:10:00", "usuario", "fin")])
    chat(tmp_path, days_ago(4), [("09:00:00", "usuario", "hola"), ("12:00:00", "usuario", "adiós")])
    found = by_kind(detect_logs(tmp_path, Policy(), T))
    (r,) = found["long_hours"]
    assert r.target == "logs" and r.plan == []
    assert len(r.evidence) == 3
    assert "14 h 20 min" in r.evidence[0]
    assert "medianoche" in r.evidence[1]
    assert "14 h 30 min" in r.evidence[2]


def test_two_nights_past_midnight_are_long_hours(tmp_path: Path) -> None:
    for back in (1, 3):
        chat(tmp_path, days_ago(back), [("01:10:00", "usuario", "otra noche arreglando esto")])
    (r,) = by_kind(detect_logs(tmp_path, Policy(), T))["long_hours"]
    assert len(r.evidence) == 2


@pytest.mark.parametrize(
    "spans",
    [
        # full days from breakfast to dinner, every weekday: an ordinary working week
        [("07:45:00", "20:40:00")] * 5,
        # two long days are a busy week, not a pattern
        [("07:00:00", "22:00:00"), ("07:30:00", "22:10:00"), ("09:00:00", "18:00:00")],
    ],
)
def test_ordinary_full_days_are_not_long_hours(
    tmp_path: Path, spans: list[tuple[str, str]]
) -> None:
    for back, (first, last) in enumerate(spans, start=1):
        chat(tmp_path, days_ago(back), [(first, "usuario", "hola"), (last, "usuario", "fin")])
    assert "long_hours" not in by_kind(detect_logs(tmp_path, Policy(), T))


def test_one_long_day_is_not_a_pattern(tmp_path: Path) -> None:
    chat(tmp_path, days_ago(1), [("07:00:00", "usuario", "hola"), ("23:00:00", "usuario", "fin")])
    chat(tmp_path, days_ago(20), [("07:00:00", "usuario", "hola"), ("23:00:00", "usuario", "fin")])
    assert "long_hours" not in by_kind(detect_logs(tmp_path, Policy(), T))


# -- pending_task --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "promise"),
    [
        ("Mañana llamo al banco por la hipoteca.", True),
        ("MANANA llamo al banco.", True),
        ("Tengo que renovar el pasaporte", True),
        ("Tendré que revisar el presupuesto.", True),
        ("Recuérdame enviar la factura a Marta.", True),
        ("recuerdame enviar la factura", True),
        ("Revisar el contrato #pendiente", True),
        ("Esta mañana fui al gimnasio.", False),
        ("¿Tengo que hacer algo más?", False),
        ("Recuérdame que nunca opere con más del 2% de riesgo.", False),
        ("Siempre reviso el riesgo antes. #principio", False),
        ("Hoy estuve programando.", False),
        # a sentence about tomorrow is not a promise; a commitment with an object is
        ("Mañana empieza una semana dura.", False),
        ("Mañana es viernes y hay cena de empresa.", False),
        ("Mañana es lunes y hay reunión.", False),
        ("Tengo que decir que el curso me gustó.", False),
        ("Te mando el informe el lunes.", True),
        ("I'll send the slides to Anna tomorrow.", True),
    ],
)
def test_promises(sentence: str, promise: bool) -> None:
    assert is_promise(sentence) is promise


def test_fold_removes_accents() -> None:
    assert loose_fold("Mañana RECUÉRDAME") == "manana recuerdame"


def test_pending_task_until_said_done(tmp_path: Path) -> None:
    chat(
        tmp_path,
        days_ago(3),
        [
            ("10:00:00", "usuario", "Mañana llamo al banco por la hipoteca. #pendiente"),
            ("10:00:05", "alma", "Mañana te lo recuerdo. Tengo que decir algo."),
            ("11:00:00", "usuario", "Tengo que renovar el pasaporte antes de diciembre."),
        ],
    )
    chat(
        tmp_path,
        days_ago(2),
        [("09:00:00", "usuario", "El banco no contesta, la hipoteca sigue igual.")],
    )
    chat(tmp_path, days_ago(1), [("09:00:00", "usuario", "Ya renové el pasaporte, hecho.")])
    chat(tmp_path, TODAY, [("09:00:00", "usuario", "Tengo que comprar pan.")])  # not due yet
    found = by_kind(detect_logs(tmp_path, Policy(), T))
    (r,) = found["pending_task"]
    assert r.target == f"logs/{days_ago(3):%Y-%m-%d}.md"
    assert r.title == "Pendiente: Mañana llamo al banco por la hipoteca"
    assert r.plan == []
    assert r.evidence[0].startswith(f"logs/{days_ago(3):%Y-%m-%d}.md:4 (10:00): Mañana llamo")
    assert "sigue igual" in r.evidence[1]


def test_a_promise_is_closed_in_the_persons_words_and_tomorrow_is_not_a_promise(
    tmp_path: Path,
) -> None:
    chat(
        tmp_path,
        days_ago(4),
        [
            ("21:00:00", "usuario", "Mañana empieza una semana dura."),
            ("21:01:00", "usuario", "Tengo que llamar al fontanero mañana."),
            ("21:02:00", "usuario", "Te mando el informe el lunes, Marta."),
            ("21:03:00", "usuario", "Mañana es viernes y hay cena de empresa."),
            ("21:04:00", "usuario", "Tengo que devolver los libros a la biblioteca."),
        ],
    )
    chat(
        tmp_path,
        days_ago(2),
        [
            ("10:00:00", "usuario", "Sábado: llamé al fontanero, viene el martes. Hecho."),
            ("10:01:00", "usuario", "Ya le mandé el informe a Marta."),
            ("10:02:00", "usuario", "La biblioteca cierra en agosto, no llegué a devolverlos."),
        ],
    )
    (r,) = by_kind(detect_logs(tmp_path, Policy(), T))["pending_task"]
    assert r.title == "Pendiente: Tengo que devolver los libros a la biblioteca"
    assert "La biblioteca cierra en agosto" in r.evidence[1]


def test_pending_task_in_a_hand_written_note(tmp_path: Path) -> None:
    chat(
        tmp_path,
        days_ago(2),
        [("10:00:00", "alma", "Buenos días.")],
        extra="\nTengo que llamar a Lucía por su cumpleaños.\n",
    )
    (r,) = detect_logs(tmp_path, Policy(), T)
    assert r.kind == "pending_task"
    assert "Lucía" in r.title


# -- the shared examples -------------------------------------------------------------------------


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="the shared example logs are not present")
def test_the_example_logs_give_sensible_findings(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "logs")
    os.chmod(tmp_path / "logs", 0o755)
    days = sorted(p.stem for p in EXAMPLES.glob("*.md"))
    now = (datetime.fromisoformat(days[-1]) + timedelta(days=2, hours=12)).timestamp()
    results = detect_logs(tmp_path, Policy(), now)
    assert results, "the examples show at least one finding"
    for r in results:
        assert r.kind in {"repeated_failure", "long_hours", "pending_task"}
        assert r.plan == [] and r.files == 0
        assert r.title and r.reason and r.evidence
        assert len(r.fingerprint) == 64
    assert detect_logs(tmp_path, Policy(), now) == results
    # logs are only read
    assert detect_files(tmp_path, Policy(), now) == []


# -- the plans run through the real engine -------------------------------------------------------


@pytest.mark.parametrize("backend", ["inprocess", "landlock"])
def test_detected_plans_execute_and_undo_byte_for_byte(tmp_path: Path, backend: str) -> None:
    from policies.decide import RunContext
    from tests.support.engine import AlmaRoot, make_engine
    from tests.support.trees import snapshot

    alma = AlmaRoot(tmp_path).build()
    root = alma.root
    messy(root / "user/projectY", 12)
    touch(root / "user/projectY/images/f0.jpg", b"an older f0 already filed")
    touch(root / "user/fotos/playa.jpg", b"P" * 64, OLD - 10)
    touch(root / "user/descargas/playa (1).jpg", b"P" * 64)
    touch(root / "user/descargas/.~lock.informe.odt#")
    before = snapshot(root)
    pol = policy_from_dict(
        {"monitor": {"messy_folder_files": 5}, "sandbox": {"allow_unconfined": True}}
    )
    results = detect_files(root, pol, NOW)
    assert sorted(r.kind for r in results) == ["duplicates", "organize", "temp_cleanup"]
    engine = make_engine(alma, backend, pol)
    try:
        done = [
            engine.execute(r.plan, kind=r.kind, ctx=RunContext(approved_by_person=True))
            for r in results
        ]
        after = snapshot(root)
        assert "user/projectY/images/f6.jpg" in after and "user/projectY/f6.jpg" not in after
        assert "user/projectY/f0.jpg" in after  # its destination was taken: it stayed
        assert "user/descargas/playa (1).jpg" not in after
        assert "user/fotos/playa.jpg" in after
        assert detect_files(root, pol, NOW) == []  # nothing left to propose
        for action in reversed(done):
            engine.undo(action["id"])
        assert snapshot(root) == before
    finally:
        engine.journal.close()


# -- times that are no date ----------------------------------------------------------------------

#: Year 36812: tmpfs, btrfs and XFS keep such a time (`touch -d @1099511627776`); ext4 caps it.
NO_DATE_FUTURE = float(1 << 40)
NO_DATE_PAST = -float(1 << 40)  # year -32873


@pytest.fixture
def any_time_root() -> Iterator[Path]:
    """A root on a file system that keeps any mtime (tmpfs), or a skip where there is none."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no tmpfs at /dev/shm to keep a file time past year 9999")
    root = Path(tempfile.mkdtemp(prefix="alma-test-", dir=shm))
    try:
        probe = touch(root / "probe", mtime=NO_DATE_FUTURE)
        if probe.stat().st_mtime != NO_DATE_FUTURE:
            pytest.skip("/dev/shm caps file times")
        probe.unlink()
        yield root
    finally:
        shutil.rmtree(root)


def test_a_log_changed_past_year_9999_stops_no_analysis(any_time_root: Path) -> None:
    # datetime.fromtimestamp raises ValueError on it; uncaught, every analysis of the root
    # would fail: no suggestion at all, ever, until the file was found and touched.
    write_log(any_time_root, "run.log", ["ERROR boom"] * 3)
    os.utime(any_time_root / "logs/run.log", (NO_DATE_FUTURE, NO_DATE_FUTURE))
    write_log(
        any_time_root, "tools/sync.log", [f"{days_ago(n):%Y-%m-%d} ERROR x" for n in (1, 2, 3)]
    )
    found = by_kind(detect_logs(any_time_root, Policy(), T))
    assert [r.target for r in found["repeated_failure"]] == ["logs/tools/sync.log"]


def test_a_file_changed_before_year_1_stays_where_it_is_when_organizing_by_month(
    any_time_root: Path,
) -> None:
    folder = any_time_root / "user/fotos"
    messy(folder, n=8)
    for name in ("f2.mp3", "f3.zip", "f4.xlsx"):  # two months, so organizing adds no mere level
        os.utime(folder / name, (OLD - 60 * 86_400, OLD - 60 * 86_400))
    os.utime(folder / "f0.jpg", (NO_DATE_PAST, NO_DATE_PAST))
    results = by_kind(detect_files(any_time_root, policy(organize_by="month"), NOW))
    (result,) = results["organize"]
    moved = {op.src for op in result.plan if isinstance(op, Move)}
    assert "user/fotos/f0.jpg" not in moved and "user/fotos/f1.pdf" in moved
    assert any("user/fotos/f0.jpg" in line for line in result.evidence)


def _tidy_and_messy(root: Path, tidy: int, per_folder: int) -> None:
    """``tidy`` folders of ``per_folder`` photos each (nothing to organize), and one messy
    folder, less crowded, listed after them all."""
    for t in range(tidy):
        folder = root / "user" / f"fotos{t:02d}"
        folder.mkdir(parents=True)
        for i in range(per_folder):
            (folder / f"img{i:04d}.jpg").write_bytes(b"")
    messy(root / "user/zz-descargas", 8)
    ts = (OLD, OLD)
    for path in (root / "user").rglob("*"):
        os.utime(path, ts)


@pytest.mark.parametrize("max_files", [20_000, 60])
def test_tidy_folders_however_many_never_hide_a_messy_one(tmp_path: Path, max_files: int) -> None:
    # More tidy folders than max_organize, each more crowded than the messy one; with a small
    # bound on files the zone's scan stops before the messy folder too.
    from agent.detectors import FileLimits

    _tidy_and_messy(tmp_path, tidy=6, per_folder=20)
    limits = FileLimits(max_organize=3, max_files=max_files)
    found = by_kind(detect_files(tmp_path, policy(), NOW, limits=limits))
    assert [r.target for r in found["organize"]] == ["user/zz-descargas"]
    assert found["organize"][0].files == 8


@pytest.mark.slow
def test_fifty_tidy_folders_of_a_thousand_files_and_one_messy_one(tmp_path: Path) -> None:
    _tidy_and_messy(tmp_path, tidy=50, per_folder=1000)
    found = by_kind(detect_files(tmp_path, policy(), NOW))
    assert [r.target for r in found["organize"]] == ["user/zz-descargas"]
