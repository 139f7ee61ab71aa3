"""`alma-ctl report days` through the real daemon: today's chat in the series, a table a
person reads, and the bounds refused in one sentence."""

from __future__ import annotations

from datetime import date

import pytest

from tests.support.daemon import DaemonRoot

pytestmark = pytest.mark.e2e


def test_report_days_reads_todays_chat(alma: DaemonRoot) -> None:
    today = date.today().isoformat()
    (alma.root / "logs" / f"{today}.md").write_text(
        f"# {today}\n\n## 09:00:00 · usuario\nEstoy agotado hoy.\n\n"
        "## 09:00:05 · alma\nDescansa un poco.\n\n## 11:30:00 · usuario\nYa está.\n",
        encoding="utf-8",
    )
    alma.start()
    got = alma.ok("report", "days", "--days", "3")
    assert [d["date"] for d in got["days"]][-1] == today and len(got["days"]) == 3
    day = got["days"][-1]
    assert (
        day["hours"] == 2.5 and day["messages_by_hour"][9] == 1 and day["messages_by_hour"][11] == 1
    )
    assert day["mood"] == 0.5 and got["days"][0]["mood"] is None
    text = alma.ctl("report", "days", "--days", "3", json_out=False)
    assert text.rc == 0 and today in text.stdout and len(text.stdout.strip().splitlines()) == 4
    bad = alma.ctl("report", "days", "--days", "91", json_out=False)
    assert bad.rc == 2 and "from 1 to 90" in bad.stderr
    assert alma.ctl("report", today, json_out=False).rc == 0  # `report DATE` as before
