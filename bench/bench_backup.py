"""`alma-ctl backup now` of a large root, side by side with `tar czf` of the same tree.

    .venv/bin/python bench/bench_backup.py                 # 10,000 files and 10,000 memories
    .venv/bin/python bench/bench_backup.py --files 1000 --memories 1000   # a smoke run

The root has FILES small files under user/ (text and binary: make_root) and MEMORIES memories in its
store (random normalized vectors, as bench/bench_memory.py fills big stores: the embedder
would take an hour). A real daemon (memory enabled) takes the first backup, then a second one
after 10 files changed; `tar czf` of the same folders (.alma/ as it is on disk) runs right
after each, on the same machine, so the ratio is what counts. Sizes: the repository after each
backup and the archive.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.memory.service import MemoryService
from bench.bench_memory import fill
from policies.layout import RootLayout
from state.memory import get_embedder
from tests.support.daemon import DaemonRoot

FOLDERS = ["logs", "user", "docs", "system", ".alma"]


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def make_files(root: Path, n: int, rng: random.Random) -> list[Path]:
    paths = []
    words = [
        "mudanza",
        "huerto",
        "factura",
        "tesis",
        "viaje",
        "reunión",
        "guitarra",
        "presupuesto",
        "café",
        "ñandú",
    ]
    for i in range(n):
        folder = root / "user" / f"carpeta{i // 250:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        size = rng.randint(1024, 65536)
        if i % 2:
            data = os.urandom(size)  # photos, archives: not compressible
            path = folder / f"archivo{i:05d}.bin"
        else:
            text = " ".join(rng.choice(words) for _ in range(size // 7))
            data = text.encode()[:size]
            path = folder / f"nota{i:05d}.txt"
        path.write_bytes(data)
        paths.append(path)
    return paths


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--memories", type=int, default=10_000)
    args = ap.parse_args()
    rng = random.Random(22)
    base = Path(tempfile.mkdtemp(prefix="almabk-", dir="/tmp"))
    d = DaemonRoot(base, memory=True).init()
    try:
        files = make_files(d.root, args.files, rng)
        svc = MemoryService(RootLayout(d.root), cap=max(50_000, args.memories * 2))
        fill(svc, args.memories, get_embedder("e5-small").dim, np.random.default_rng(0))
        svc.close()
        d.start()
        d.wait_for(lambda: d.ok("status")["memory"] == "ready", timeout=600, what="memory")
        secret, target = base / "pw", base / "disk"
        secret.write_text("bench password\n")
        secret.chmod(0o600)  # a password others may read is refused
        d.ok("backup", "init", str(target), "--password-file", str(secret))
        tar = ["tar", "czf", str(base / "root.tgz"), *FOLDERS]
        rows = []
        for label in ("first", "after 10 changed"):
            if label != "first":
                for path in rng.sample(files, 10):
                    path.write_bytes(os.urandom(path.stat().st_size))
            t0 = time.perf_counter()
            taken = d.ok("backup", "now")
            restic_s = time.perf_counter() - t0
            (base / "root.tgz").unlink(missing_ok=True)
            tar_s = timed(tar, cwd=d.root)
            rows.append((label, restic_s, du(target), tar_s, (base / "root.tgz").stat().st_size))
            print(f"  {label}: snapshot {taken['snapshot']}, {taken['files']} files", flush=True)
        d.stop()
        print(f"\nroot: {args.files} files, {args.memories} memories, {du(d.root) / 2**20:.0f} MiB")
        print(
            f"{'backup':<18} {'restic s':>9} {'repo MiB':>9} {'tar czf s':>10} {'tgz MiB':>8} {'ratio':>6}"
        )
        for label, rs, repo, ts, tgz in rows:
            print(
                f"{label:<18} {rs:>9.1f} {repo / 2**20:>9.0f} {ts:>10.1f} {tgz / 2**20:>8.0f}"
                f" {rs / ts:>6.2f}"
            )
    finally:
        d.close()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
