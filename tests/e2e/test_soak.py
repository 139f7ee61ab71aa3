"""Two minutes of bench/soak.py: a real daemon lived with under a lighter load.

The same script as the long soak (docs/benchmarks.md, "Soak"), run as a person would run it:
file changes, chats with the embedded model, memories, backups and accept/undo cycles
together, every accept and undo checked byte-exact and the journal read from a second
connection after each step. At least one backup comes before two of the cycles, so an action
journaled after a backup must stay visible and undoable.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not shutil.which("restic"), reason="no restic"),
]

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"
LIGHT = (
    "--minutes", "2",
    "--files", "2000", "--folder-files", "200",
    "--changes", "5",
    "--chat-first", "5", "--chat-every", "40", "--max-tokens", "32",
    "--memory-first", "2", "--memory-every", "20",
    "--cycle-first", "10", "--cycle-every", "30",
    "--backup-first", "20", "--backup-every", "60",
)  # fmt: skip


@pytest.mark.timeout(1500)
def test_two_minutes_of_a_busy_person_fail_nothing(tmp_path: Path) -> None:
    counts_file = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, str(SOAK), *LIGHT, "--json", str(counts_file)],
        capture_output=True,
        text=True,
        timeout=1400,
        check=False,
    )
    print(done.stdout)  # the figures, with -s
    assert done.returncode == 0, f"the soak failed:\n{done.stdout}\n{done.stderr[-4000:]}"
    counts = json.loads(counts_file.read_text(encoding="utf-8"))
    assert counts["failures"] == [], counts
    assert counts["backup"]["ok"] >= 1, done.stdout
    assert counts["undo"]["ok"] >= 2 and counts["accept"]["ok"] >= 2, done.stdout
    assert counts["chat"]["ok"] >= 1 and counts["memory"]["ok"] >= 1, done.stdout
    assert counts["journal"]["ok"] >= 5, done.stdout  # after each step, and every minute
