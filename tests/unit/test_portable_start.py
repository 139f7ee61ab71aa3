"""The portable start script's one sentence when the PC lacks something (docs/portable.md):
a CPU that is not x86-64, no Python the bundle serves. Run on a bundle with no venv and no
wheels: both are said before anything is built."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

START = Path(__file__).resolve().parents[2] / "portable" / "alma-start"


def _shim(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    disk = tmp_path / "disk" / "alma-portable"
    (disk / "wheels").mkdir(parents=True)
    (disk / "wheels" / "pythons").write_text("3.11 3.12 3.13\n")
    shutil.copy(START, disk / "alma")
    return disk


def _start(bundle: Path, shims: Path, lang: str) -> subprocess.CompletedProcess[str]:
    # Only the shims and the tools the script needs before its checks.
    path = f"{shims}:/usr/bin:/bin"
    env = {"HOME": str(bundle.parent), "PATH": path, "LANG": lang}
    return subprocess.run(
        ["bash", str(bundle / "alma"), "start"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_a_cpu_that_is_not_x86_64_is_said_in_one_sentence(bundle: Path, tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    _shim(shims, "uname", "echo aarch64")
    done = _start(bundle, shims, "es_ES.UTF-8")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "ALMA: este disco trae ALMA para PC x86-64 y este equipo es aarch64: "
        "arráncalo en un PC x86-64."
    )
    assert not (bundle / "venvs").exists()


def test_a_python_the_bundle_does_not_serve_is_said_with_what_the_pc_has(
    bundle: Path, tmp_path: Path
) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    # Every Python name the script tries answers 3.10, wherever else the PATH has one.
    for name in ("python3", "python3.13", "python3.12", "python3.11"):
        _shim(shims, name, "echo 3.10")
    done = _start(bundle, shims, "C.UTF-8")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "ALMA: ALMA needs Python 3.11, 3.12, 3.13 and this computer has 3.10: install one "
        "(Debian's, Tails' or Parrot's python3 will do)."
    )
    assert not (bundle / "venvs").exists()


def test_an_unprepared_folder_says_how_to_prepare_it(bundle: Path, tmp_path: Path) -> None:
    os.remove(bundle / "wheels" / "pythons")
    done = _start(bundle, tmp_path, "C.UTF-8")
    assert done.returncode == 1
    assert "is not a prepared ALMA disk: prepare it with ./alma.sh portable" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: a read-only bind mount of the disk")
def test_a_disk_it_cannot_write_on_is_said_before_anything_is_tried(bundle: Path) -> None:
    # Read-only for root too: the mount, not the file modes, says no.
    readonly = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec bash "$1/alma"'
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", readonly, "sh", str(bundle)],
        env={"HOME": str(bundle.parent), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip() == (
        f"ALMA: cannot write in {bundle}: mount the disk writable and as yours, then start again."
    )
