"""alma-ctl's start on two source trees side by side, and ``python3 -c pass`` as the floor.

    git archive BASE control policies | tar -x -C /tmp/ctl-base
    .venv/bin/python bench/bench_ctl_start.py --base /tmp/ctl-base --runs 60 [-- ARGS...]

Each round runs ``alma-ctl ARGS`` (default ``status`` on a root with no daemon, so the answer is
the "not running" sentence and no socket work is timed) once with this tree on PYTHONPATH, once
with the base tree, and ``python3 -c pass``, in turn, so all three see the same machine. It
prints the median wall time and the median CPU time (user + system of the child, steadier than
wall time on a shared machine) of each, and each tree's ratio to the floor.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CTL = "import sys; from control import ctl; sys.exit(ctl.main(sys.argv[1:]))"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base", type=Path, required=True, help="the base tree (control, policies)"
    )
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("args", nargs="*", default=["status"])
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        common = {**os.environ, "XDG_RUNTIME_DIR": tmp}
        cases = {
            "this tree": (common | {"PYTHONPATH": str(HERE)}),
            "base tree": (common | {"PYTHONPATH": str(opts.base.resolve())}),
        }
        line = ["--root", os.path.join(tmp, "ALMA"), *opts.args]
        for env in cases.values():  # compile the bytecode outside the timed runs
            timed([sys.executable, "-c", CTL, *line], env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in [*cases, "floor"]}
        for _ in range(opts.runs):
            for name, env in cases.items():
                times[name].append(timed([sys.executable, "-c", CTL, *line], env))
            times["floor"].append(timed([sys.executable, "-c", "pass"], common))
    floor_wall = statistics.median(t[0] for t in times["floor"])
    floor_cpu = statistics.median(t[1] for t in times["floor"])
    print(f"alma-ctl {' '.join(opts.args)}, median of {opts.runs}, load {os.getloadavg()[0]:.1f}")
    for name, runs in times.items():
        wall = statistics.median(t[0] for t in runs)
        cpu = statistics.median(t[1] for t in runs)
        print(
            f"{name:>10}: wall {wall * 1000:6.1f} ms ({wall / floor_wall:.2f}x), "
            f"cpu {cpu * 1000:6.1f} ms ({cpu / floor_cpu:.2f}x)"
        )


if __name__ == "__main__":
    main()
