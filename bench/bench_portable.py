"""ALMA on its disk (docs/portable.md): from the start script to ``status`` answering.

    .venv/bin/python bench/bench_portable.py BUNDLE [--python /usr/bin/python3] [--rounds 3]

BUNDLE is one ``./alma.sh portable BUNDLE ROOT`` prepared (its root beside it). Timed: the first
start on a new host (this host's environment removed from the disk first: the venv built from
the wheels), then ``--rounds`` later starts (stop, start). Side by side, alternating with the
later starts, the baseline: the development venv's ``alma-agentd`` on the same root, from its
start to ``alma-ctl status`` answering. Every run has an empty HOME of its own; it is checked
empty afterwards. Prints the bundle's size and the environment's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def _size(folder: Path) -> float:
    return sum(p.lstat().st_size for p in folder.rglob("*")) / 2**20


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    bundle = opts.bundle.resolve()
    start = str(bundle / "alma")
    home = Path(tempfile.mkdtemp(prefix="alma-bench-home-"))
    run = Path(tempfile.mkdtemp(prefix="alma-bench-run-"))
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "XDG_RUNTIME_DIR": str(run),
        "PYTHON": opts.python,
    }

    def timed(*argv: str) -> float:
        began = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        return time.perf_counter() - began

    key = subprocess.run(
        [opts.python, "-c", "import sys; print(sys.implementation.cache_tag)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run([start, "stop"], env=env, check=False, capture_output=True)
    for venv in (bundle / "venvs").glob(f"{key}-*"):
        shutil.rmtree(venv)
    first = timed(start, "start")
    subprocess.run([start, "stop"], env=env, check=True, capture_output=True)

    rel = (bundle / "root").read_text().strip() if (bundle / "root").exists() else "../ALMA"
    root_dir = str((bundle / rel).resolve())
    later: list[float] = []
    base: list[float] = []
    dev_env = env
    for _ in range(opts.rounds):
        later.append(timed(start, "start"))
        subprocess.run([start, "stop"], env=env, check=True, capture_output=True)
        began = time.perf_counter()
        daemon = subprocess.Popen(
            [str(BIN / "alma-agentd"), "--root", root_dir],
            env=dev_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ctl = [str(BIN / "alma-ctl"), "--root", root_dir, "status"]
        while subprocess.run(ctl, env=dev_env, capture_output=True, check=False).returncode:
            time.sleep(0.2)
        base.append(time.perf_counter() - began)
        daemon.terminate()
        daemon.wait(60)
    trace = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    wheels = _size(bundle / "wheels") + _size(bundle / "bin")
    venvs = [_size(v) for v in (bundle / "venvs").glob(f"{key}-*")]
    load = os.getloadavg()[0]
    print(f"first start on a new host: {first:.1f} s (the venv built from the wheels)")
    print(
        f"later start: median {statistics.median(later):.2f} s; the dev venv's alma-agentd: "
        f"median {statistics.median(base):.2f} s; ratio {statistics.median(later) / statistics.median(base):.2f}x"
    )
    print(f"bundle: {wheels:.0f} MB of wheels and restic; this host's venv: {venvs[0]:.0f} MB")
    print(f"load average at the end: {load:.1f}; left in HOME: {trace or 'nothing'}")
    shutil.rmtree(home)
    shutil.rmtree(run)
    return 0 if not trace else 1


if __name__ == "__main__":
    sys.exit(main())
