"""bench_agent's root exercises every file planner: a bench whose root gives no organize
finding measures the wrong thing."""

from __future__ import annotations

import importlib.util
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

from agent.detectors.files import detect_files
from agent.detectors.logs import detect_logs
from policies.config import policy_from_dict

BENCH = Path(__file__).parents[2] / "bench" / "bench_agent.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_agent", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_root_gives_organize_duplicates_temp_and_log_findings(tmp_path: Path) -> None:
    bench = _bench()
    root = bench.make_root(tmp_path, 2_000, 5)
    policy = policy_from_dict({})  # the default thresholds, as the bench uses
    now = time.time()
    found = detect_files(root, policy, now, hash_cache={}) + detect_logs(root, policy, now)
    kinds = Counter(f.kind for f in found)
    messy = bench.PROJECTS // bench.MESSY_EVERY
    assert kinds["organize"] == messy
    assert {f.target for f in found if f.kind == "organize"} == {
        f"user/p{p:03d}" for p in range(0, bench.PROJECTS, bench.MESSY_EVERY)
    }
    assert kinds["duplicates"] == kinds["temp_cleanup"] == kinds["repeated_failure"] == 1
    assert kinds["pending_task"] >= 1  # the promises of past days (not of today, maybe)
