"""The frozen weeks' harness: every date moves by the same days in its own format, a script's
log is written where the person's logs are read, and the weeks parse."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from tests.support.heldout_weeks import FIT, REPORT, WRITTEN_TODAY, load, moved, script_log


def test_every_date_moves_in_its_own_format() -> None:
    text = (
        "# 2026-11-22\nuser/reports/2026-11-23/orders_20261123.csv 2026_11_24 2026-13-40 2026-031"
    )
    assert moved(text, timedelta(days=10)) == (
        "# 2026-12-02\nuser/reports/2026-12-03/orders_20261203.csv 2026_12_04 2026-13-40 2026-031"
    )


def test_script_logs_go_where_the_persons_logs_are_read() -> None:
    assert script_log("logs/alma/backup_nas.log") == "logs/backup_nas.log"
    assert script_log("logs/ci/tests.log") == "logs/ci/tests.log"


def test_six_weeks_split_in_two_sides(tmp_path: Path) -> None:
    assert len(set(FIT) | set(REPORT)) == 6 and not set(FIT) & set(REPORT)
    week = load(FIT[0])
    today = WRITTEN_TODAY + timedelta(days=3)
    week.build(tmp_path, today)
    assert (
        (tmp_path / f"logs/{today.isoformat()}.md")
        .read_text(encoding="utf-8")
        .startswith(f"# {today.isoformat()}")
    )
    assert (tmp_path / f"user/Entregas/{date(2026, 11, 26).isoformat()}").is_dir()
