"""A reason asking for a folder by date, through the real ``alma-agentd`` and ``alma-ctl``: after
a rejection whose reason asks, in Spanish words of its own, for the folder by month, the next
plan for that folder creates month folders while another folder keeps its folders by type;
forgetting the memory that holds the reason brings back by type."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from tests.support.daemon import DaemonRoot, find

pytestmark = pytest.mark.e2e

FOLDER = "user/Descargas"
OTHER = "user/Escritorio"
#: ALMA's own phrasing for this test, in none of the labelled sets.
REASON = "esto lo quiero repartido en carpetas según el mes en que llegó cada archivo"
MONTHS = ("2026-01", "2026-02", "2026-03")
_MONTH_DIR = re.compile(r"/\d{4}-\d{2}$")


def _mid_month(month: str) -> float:
    return datetime.strptime(f"{month}-15 12:00", "%Y-%m-%d %H:%M").timestamp()


def _messy(d: DaemonRoot, folder: str) -> None:
    """18 loose files of three types and three months."""
    for i in range(18):
        ext = ("pdf", "jpg", "txt")[i % 3]
        month = MONTHS[(i // 3) % 3]
        d.write(f"{folder}/f{i:02d}.{ext}", f"{folder} {i}\n".encode(), mtime=_mid_month(month))


def _mkdirs(d: DaemonRoot, folder: str) -> list[list[str]]:
    """The folders each pending organize suggestion for ``folder`` creates."""
    out = []
    for s in find(d.suggestions(), kind="organize", target=folder, status="pending"):
        shown = d.ok("suggestions", "show", str(s["id"]))
        out.append(sorted(op["path"] for op in shown["plan"] if op["op"] == "mkdir"))
    return out


def _by_type(mkdirs: list[str]) -> bool:
    return bool(mkdirs) and not any(_MONTH_DIR.search(path) for path in mkdirs)


@pytest.mark.slow
def test_a_reason_asking_for_dates_makes_the_next_plan_create_month_folders(
    alma_mem: DaemonRoot,
) -> None:
    alma = alma_mem
    alma.start()
    alma.wait_for(
        lambda: alma.ok("status")["memory"] == "ready", timeout=300, what="the memory to load"
    )
    _messy(alma, FOLDER)
    _messy(alma, OTHER)
    alma.analyze()
    s = alma.wait_suggestion(kind="organize", target=FOLDER)
    (before,) = _mkdirs(alma, FOLDER)
    assert _by_type(before), before

    alma.ok("suggestions", "reject", str(s["id"]), "--reason", REASON)
    alma.write(f"{FOLDER}/nuevo.pdf", b"un archivo nuevo\n", mtime=_mid_month(MONTHS[1]))
    alma.write(f"{OTHER}/nuevo.pdf", b"otro archivo nuevo\n", mtime=_mid_month(MONTHS[1]))
    alma.analyze()
    (after,) = _mkdirs(alma, FOLDER)
    assert after == [f"{FOLDER}/{month}" for month in MONTHS], REASON
    (other,) = _mkdirs(alma, OTHER)
    assert _by_type(other), other

    decisions = alma.ok("memory", "list", "--type", "decision")
    (decision,) = [m for m in decisions if REASON in m["content"]]
    (regrouped,) = find(alma.suggestions(), kind="organize", target=FOLDER, status="pending")
    shown = alma.ok("suggestions", "show", str(regrouped["id"]))
    assert any(decision["id"] in line and "month" in line for line in shown["evidence"]), shown
    (took,) = alma.ok("stats")["reasons"]
    assert took["intent"] == "group_by_date" and took["memory"] == decision["id"]
    assert took["undo"] == f"alma-ctl memory forget {decision['id']}"

    # What ALMA took is undone by forgetting the memory: the next plan groups by type again.
    alma.ok("memory", "forget", decision["id"])
    alma.write(f"{FOLDER}/otro.pdf", b"otro archivo nuevo\n", mtime=_mid_month(MONTHS[2]))
    alma.analyze()
    (again,) = _mkdirs(alma, FOLDER)
    assert _by_type(again), again
    assert alma.ok("stats")["reasons"] == []
    alma.stop()
