"""The frozen weeks of tests/data/heldout32/weeks (written blind; README.md there), built into
an ALMA root dated from the day the test runs, and their labelled findings read as ALMA names
them.

The weeks are written as if today were :data:`WRITTEN_TODAY`; every date in their texts, paths
and script lines moves by the same number of days (``2026-11-23``, ``20261123`` and
``2026_11_23`` alike). A file's ``age_hours`` is its age at the end of the day it is listed on,
never later than the moment the root is built.

Which weeks were fitted on and which only reported on is :data:`FIT` / :data:`REPORT`
(docs/agent.md says the same): the routine detector's thresholds were chosen on the fit side
and on synthetic weeks of ours, the report side run once at the end.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

WEEKS_DIR = Path(__file__).resolve().parents[1] / "data" / "heldout32" / "weeks"
#: The sets written blind after the first, each by another hand (tests/data/<set>/WEEKS.md), in
#: the order they came: each was run once on the detectors frozen before it was merged, and is
#: a development set since unless it is the newest.
BLIND_SETS = {
    "second": "heldout32c",
    "third": "heldout32d",
    "fourth": "heldout32e",
    "fifth": "heldout32f",
}


def blind_weeks(ordinal: str) -> tuple[Path, tuple[str, ...]]:
    """The folder of a blind set (by its :data:`BLIND_SETS` ordinal) and its weeks' names."""
    folder = WEEKS_DIR.parents[1] / BLIND_SETS[ordinal] / "weeks"
    return folder, tuple(sorted(path.stem for path in folder.glob("w*.json")))


WRITTEN_TODAY = date(2026, 11, 28)
#: One bad week and one calm week, both Spanish, fitted on.
FIT = ("w1_fotografa_bodas", "w5_papeleria_calm")
#: The other four, run once after the detector was fitted.
REPORT = (
    "w2_profesor_secundaria",
    "w3_backend_developer",
    "w4_enfermera_calm",
    "w6_phd_student_calm",
)
#: The weeks' kind names -> ALMA's.
KINDS = {"failures": "repeated_failure", "pending": "pending_task"}

_DATE = re.compile(r"(?<!\d)(\d{4})([-_]?)(\d{2})\2(\d{2})(?!\d)")


@dataclass(frozen=True)
class Finding:
    kind: str  # ALMA's kind
    target: str | None
    why: str


@dataclass(frozen=True)
class HeldoutWeek:
    name: str
    language: str
    calm: bool
    findings: tuple[Finding, ...]
    data: dict[str, Any]

    def build(self, root: Path, today: date) -> None:
        shift = today - WRITTEN_TODAY
        now = time.time()
        for day in sorted(self.data["days"], key=lambda d: int(d["offset"])):
            offset = int(day["offset"])
            the_day = today + timedelta(days=offset)
            end = datetime(the_day.year, the_day.month, the_day.day, 23, 59).timestamp()
            log = moved(day["log"], shift)
            _write(root / "logs" / f"{the_day.isoformat()}.md", log.encode(), min(end, now))
            for f in day.get("files", []):
                when = min(end - float(f.get("age_hours", 0)) * 3600, now - 60)
                data = (
                    moved(f["text"], shift).encode()
                    if "text" in f
                    else _filler(f["path"], int(f.get("size") or 0))
                )
                _write(root / moved(f["path"], shift), data, when)
            for s in day.get("script_logs", []):
                path = root / script_log(s["path"])
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a", encoding="utf-8") as out:
                    out.write(moved(s["text"], shift).rstrip("\n") + "\n")
                stamp = min(end, now - 60)
                os.utime(path, (stamp, stamp))

    def matches(self, finding: Finding, suggestion: dict[str, Any], paths: set[str]) -> bool:
        """Whether an ALMA suggestion (and the paths its plan names) is this labelled finding:
        its kind, and its target, or a path of its plan that is the target or inside it."""
        if suggestion["kind"] != finding.kind:
            return False
        target = finding.target
        if target is None:
            return True
        if finding.kind == "repeated_failure":
            stem = target.rpartition(".")[0] or target
            return str(suggestion["target"]).rpartition("/")[2].startswith(stem)
        # A folder's finding whose plan works inside that folder is it, whatever folder ALMA
        # names as its target (temp_cleanup names the zone it cleaned).
        inside = any(p == target or p.startswith(target + "/") for p in paths)
        return target == suggestion["target"] or inside


def script_log(path: str) -> str:
    """Where a week's script log is written: the weeks put them in ``logs/alma/``, which the
    contract keeps for ALMA's own reports (never read as the person's logs), so they go to
    ``logs/`` under the same name, as a person's scripts write theirs."""
    folder, _sep, name = path.rpartition("/")
    return f"logs/{name}" if folder == "logs/alma" else path


def moved(text: str, shift: timedelta) -> str:
    """``text`` with every date in it moved by ``shift``, each in its own format."""

    def one(m: re.Match[str]) -> str:
        try:
            day = date(int(m[1]), int(m[3]), int(m[4]))
        except ValueError:
            return m[0]
        sep = m[2]
        return (day + shift).strftime(f"%Y{sep}%m{sep}%d")

    return _DATE.sub(one, text)


def _filler(path: str, size: int) -> bytes:
    # Binary-like files: their content does not matter, only that two paths never share it
    # by accident (duplicates are always labelled text files); kept small.
    seed = path.encode()
    return (seed + b"\0") * max(1, min(size, 4096) // (len(seed) + 1))


def _write(path: Path, data: bytes, when: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (when, when))


def load(name: str, folder: Path = WEEKS_DIR) -> HeldoutWeek:
    data = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    findings = tuple(
        Finding(KINDS.get(f["kind"], f["kind"]), f["target"], f["why"]) for f in data["findings"]
    )
    return HeldoutWeek(name, data["lang"], bool(data["calm"]), findings, data)


def person_lines(name: str) -> list[tuple[int, str]]:
    """The person's lines of a week, by day offset (for fitting the routine detector)."""
    out: list[tuple[int, str]] = []
    for day in load(name).data["days"]:
        who = ""
        for line in day["log"].splitlines():
            if line.startswith("## "):
                who = line.rpartition("·")[2].strip()
            elif line.strip() and not line.startswith(("#", "<!--")) and who == "usuario":
                out.append((int(day["offset"]), line.strip()))
    return out
