"""What reading the person's words by meaning costs the log detectors (``detect_logs``): the
routine's and the mood's words go through the packaged embedder (agent.detectors.meaning),
loaded in the daemon's process at the first analysis that reads a line by meaning.

    .venv/bin/python bench/bench_routine_words.py            # the fit week w1, 5 warm runs
    .venv/bin/python bench/bench_routine_words.py --runs 20

Each mode runs in a fresh Python process on the same root (the blind week
tests/data/heldout32/weeks/w1_fotografa_bodas.json, dated from today): ``cold`` is the first
``detect_logs`` (the model loaded, the examples and every line embedded), ``warm`` the median of
the next ``--runs`` (every line already embedded), ``words off`` the median with the words not
read (the detectors as they were without them), side by side so the ratio holds on a loaded
machine. Figures in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

CHILD = """
import json, sys, time
from agent.detectors import meaning
from agent.detectors.logs import detect_logs
from policies.config import Policy
root, runs, words = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "on"
if not words:
    meaning.vectors = lambda texts: None
times = []
for _ in range(runs + 1):
    t = time.perf_counter()
    detect_logs(__import__("pathlib").Path(root), Policy(), time.time())
    times.append(time.perf_counter() - t)
print(json.dumps(times))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.heldout_weeks import load

    root = Path(tempfile.mkdtemp(prefix="almabench-")) / "ALMA"
    (root / "user").mkdir(parents=True)
    load("w1_fotografa_bodas").build(root, date.today())
    out = {}
    for words in ("on", "off"):
        run = subprocess.run(
            [sys.executable, "-c", CHILD, str(root), str(args.runs), words],
            capture_output=True,
            text=True,
            check=True,
        )
        out[words] = json.loads(run.stdout)
    cold = out["on"][0]
    warm = statistics.median(out["on"][1:])
    off = statistics.median(out["off"][1:])
    print(f"cold (model loaded, lines embedded): {cold:.2f} s")
    print(f"warm, median of {args.runs}: {warm * 1000:.1f} ms")
    print(f"words off, median of {args.runs}: {off * 1000:.1f} ms")
    print(f"warm / words off: {warm / off:.2f}x")


if __name__ == "__main__":
    main()
