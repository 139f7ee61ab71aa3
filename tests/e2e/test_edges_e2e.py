"""Edges against the real daemon: what ALMA reads in ``logs/`` and how it answers.

Each test drives ``alma-agentd`` and ``alma-ctl`` as subprocesses (tests/support/daemon.py).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.support.daemon import ALMA_AGENTD, ALMA_CTL, DaemonRoot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SECRET = "contraseña-del-banco-1234"
DAY = "# {day}\n\n## 10:00:00 · usuario\n{text}\n\n## 10:00:05 · alma\nVale.\n<!-- model: m -->\n"


def _high_water_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmHWM in /proc/PID/status")


def test_links_fifos_and_huge_files_in_logs_are_never_read(alma_mem: DaemonRoot) -> None:
    """The link's secret never becomes a memory, nor is it in ``context`` or the export; a
    FIFO blocks neither ingestion nor SIGTERM; a sparse gigabyte day is never read whole."""
    d = alma_mem
    logs = d.root / "logs"
    secret = d.base / "secreto.md"
    secret.write_text(DAY.format(day="2026-11-20", text=SECRET))
    (logs / "2026-11-20.md").symlink_to(secret)
    os.mkfifo(logs / "2026-11-19.md")
    with open(logs / "2026-11-18.md", "wb") as f:
        f.truncate(1 << 30)
    (logs / "2026-11-21.md").write_text(DAY.format(day="2026-11-21", text="Hoy ordené el garaje."))
    d.start()

    def ingested() -> bool:
        mems = d.ok("memory", "list", "--limit", "1000")
        return any(m["content"] == "Hoy ordené el garaje." for m in mems)

    d.wait_for(ingested, timeout=180, what="the real day to be ingested past the FIFO")
    # A later day is still followed: ingestion is not stuck on the FIFO.
    (logs / "2026-11-22.md").write_text(DAY.format(day="2026-11-22", text="Riego el huerto."))
    d.wait_for(
        lambda: any(
            m["content"] == "Riego el huerto." for m in d.ok("memory", "list", "--limit", "1000")
        ),
        timeout=180,
        what="a day written after the FIFO to be ingested",
    )
    everything = str(d.ok("memory", "list", "--limit", "1000"))
    everything += str(d.ok("memory", "search", SECRET))
    everything += str(d.ok("context", SECRET))
    everything += str(d.ok("memory", "export", "--format", "alpaca"))
    assert SECRET not in everything
    assert "Vale." in everything  # the export did read the real days
    assert _high_water_mb(d.pid) < 4096, "the sparse gigabyte was read into memory"
    d.stop(timeout=30)  # a FIFO in logs/ must not hold SIGTERM up


NESTED = "a = " + "[" * 50_000 + "]" * 50_000 + "\n"


def test_sighup_with_a_deeply_nested_policy_keeps_the_daemon_and_the_last_good_policy(
    alma: DaemonRoot,
) -> None:
    """The RecursionError of tomllib never escapes the reload: the daemon keeps running."""
    alma.start()
    good = alma.policy_file.read_text(encoding="utf-8")
    alma.policy_file.write_text(NESTED, encoding="utf-8")
    alma.hup()
    policy = alma.wait_for(
        lambda: (p := alma.ok("status")["policy"])["ok"] is False and p,
        timeout=30,
        what="status to report the nested policy",
    )
    assert "nested too deeply" in policy["error"] and "last good policy" in policy["error"]
    assert alma.ok("autonomy", "status")["configured"] == "suggest"
    alma.policy_file.write_text(good, encoding="utf-8")
    alma.hup()
    alma.wait_for(
        lambda: alma.ok("status")["policy"]["ok"] is True,
        timeout=30,
        what="the fixed policy to load",
    )
    alma.stop()


def test_a_broken_alma_toml_stops_the_start_with_one_sentence(alma: DaemonRoot) -> None:
    settings = alma.root / "system" / "alma.toml"
    settings.write_text("[memory\nenabled = true\n", encoding="utf-8")
    proc = alma.spawn()
    assert proc.wait(timeout=60) != 0
    message = alma.log()
    assert str(settings) in message and "not valid TOML" in message, message
    assert "Traceback" not in message
    assert len(message.strip().splitlines()) == 1, message


def test_a_root_named_through_a_symlink_is_the_same_root(alma: DaemonRoot) -> None:
    """alma-ctl --root LINK and a daemon started on LINK find each other: neither end hashes
    the socket name from the root as typed (one would say "not running", the other "already
    running")."""
    link = alma.base / "enlace"
    link.symlink_to(alma.root)
    alma.start()
    argv = [ALMA_CTL, "--root", str(link), "--json", "status"]
    done = subprocess.run(argv, capture_output=True, text=True, env=alma.env, timeout=60)
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["pid"] == alma.pid and status["root"] == str(alma.root), status
    second = subprocess.run(
        [ALMA_AGENTD, "--root", str(link)], capture_output=True, text=True, env=alma.env, timeout=60
    )
    assert second.returncode != 0 and "already" in second.stderr, second.stderr
    alma.stop()


def test_the_daemon_makes_a_loose_alma_folder_private(alma: DaemonRoot) -> None:
    """A pre-existing ``.alma/`` of mode 0755 is made 0700 by a running daemon."""
    data = alma.root / ".alma"
    os.chmod(data, 0o755)
    alma.start()
    assert stat.S_IMODE(os.lstat(data).st_mode) == 0o700
    alma.stop()
