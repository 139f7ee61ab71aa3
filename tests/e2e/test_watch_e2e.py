"""A large root against the real daemon: `status` says when it is ready and what it watches, the
kernel's inotify limit reached is a clear line with the sysctl (and the daemon keeps working),
and `suggestions show` of a long plan is a summary unless `--all` is asked."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.daemon import ALMA_AGENTD, DaemonRoot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def folders_below(top: Path) -> int:
    return 1 + sum(1 for p in top.rglob("*") if p.is_dir() and not p.is_symlink())


def make_folders(top: Path, n: int) -> None:
    for i in range(n):
        (top / f"g{i % 4}" / f"d{i:03d}").mkdir(parents=True, exist_ok=True)
        (top / f"g{i % 4}" / f"d{i:03d}" / "a.txt").write_text(str(i))


def test_status_says_ready_once_every_folder_is_watched(alma: DaemonRoot) -> None:
    d = alma
    make_folders(d.root / "user" / "archivo", 120)
    d.start()
    st = d.wait_for(lambda: (s := d.ok("status"))["ready"] and s, timeout=120, what="status ready")
    watch = st["watch"]
    expected = folders_below(d.root / "user") + folders_below(d.root / "logs")
    assert watch["folders"] == expected and watch["watches"] == expected
    assert watch["unwatched"] == 0 and watch["warning"] is None
    assert isinstance(watch["limit"], int) and watch["limit"] > 0
    human = d.ctl("status", json_out=False)
    assert human.rc == 0
    assert f"watching: {expected} folders, {expected} inotify watches" in human.stdout
    assert "WARNING" not in human.stdout
    d.stop()


class NamespacedRoot(DaemonRoot):
    """The daemon in a user namespace of its own whose inotify limit is ``limit`` watches
    (``user.max_inotify_watches``): the kernel's real ENOSPC, the system's limit untouched."""

    limit = 30

    def spawn(self) -> subprocess.Popen[bytes]:
        self.starts += 1
        self._log = self.base / f"agentd.{self.starts}.log"
        script = f'echo {self.limit} > /proc/sys/user/max_inotify_watches && exec "$0" "$@"'
        unshare = ["unshare", "--user", "--map-root-user", "sh", "-c", script]
        with self._log.open("wb") as log:
            return subprocess.Popen(
                [*unshare, ALMA_AGENTD, "--root", str(self.root)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=self.env,
            )


def test_the_inotify_limit_reached_is_one_clear_line_and_the_rescan_still_sees_everything() -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = subprocess.run(
        [
            "unshare",
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 5 > /proc/sys/user/max_inotify_watches",
        ],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"no user namespace with its own inotify limit: {probe.stderr!r}")
    d = NamespacedRoot().init()
    try:
        d.policy(monitor__settle_seconds=0)
        make_folders(d.root / "user" / "archivo", 60)
        # A messy folder the watches do not reach (the walk meets g0..g3 first).
        messy = "user/zz/ultima"
        d.messy_folder(messy, 30)
        d.start()
        st = d.wait_for(
            lambda: (s := d.ok("status"))["ready"] and s, timeout=120, what="status ready"
        )
        watch = st["watch"]
        assert watch["limit"] == 30 and watch["watches"] == 30
        total = folders_below(d.root / "user") + folders_below(d.root / "logs")
        assert watch["folders"] == total and watch["unwatched"] == total - 30
        human = d.ctl("status", json_out=False)
        assert human.rc == 0
        warning = [line for line in human.stdout.splitlines() if line.startswith("WARNING: ")]
        assert len(warning) == 1, human.stdout
        assert f"{total - 30} folders of {total} are not watched" in warning[0]
        assert "run as root `sysctl fs.inotify.max_user_watches=" in warning[0]
        # The daemon keeps working: the analysis (the rescan's) sees the unwatched folder.
        d.analyze()
        assert d.wait_suggestion(kind="organize", target=messy)
        d.stop()
    finally:
        d.close()


def test_show_of_a_long_real_plan(alma: DaemonRoot) -> None:
    d = alma
    d.messy_folder("user/descargas", 120)
    d.start()
    d.analyze()
    s = d.wait_suggestion(kind="organize", target="user/descargas")
    sid = str(s["id"])
    whole = d.ok("suggestions", "show", sid)
    total = len(whole["plan"])
    assert total > 120 and whole["plan_total"] == total  # 120 moves and the new folders
    assert sum(r["files"] for r in whole["plan_summary"]["extensions"]) == 120
    out = d.ctl("suggestions", "show", sid, json_out=False).ok().stdout.splitlines()
    numbered = [line for line in out if re.match(r" +\d+\. ", line)]
    assert len(numbered) == 20 and numbered[-1].lstrip().startswith("20. ")
    assert any(line.startswith(f"Plan ({total} ops):") for line in out)
    assert "  By type:" in out and "    .jpg            20" in out
    assert out[-1] == f"`alma-ctl suggestions show {sid} --all` prints all {total} ops."
    every = d.ctl("suggestions", "show", sid, "--all", json_out=False).ok().stdout.splitlines()
    assert len([line for line in every if " -> " in line]) == 120
    with_es = d.env | {"LANG": "es_ES.UTF-8"}
    es = subprocess.run(
        [
            str(Path(ALMA_AGENTD).with_name("alma-ctl")),
            "--root",
            str(d.root),
            "suggestions",
            "show",
            sid,
        ],
        capture_output=True,
        text=True,
        env=with_es,
        check=True,
    ).stdout.splitlines()
    assert "  Por tipo:" in es and "Las primeras 20 ops:" in es
    d.stop()
