"""The web panel's pages on a full root: each page's server time, and the panel's memory.

    .venv/bin/python bench/bench_panel.py                 # 10,000 memories, 1,000 actions
    .venv/bin/python bench/bench_panel.py --quick         # a smoke run (well under a minute)

A fresh root is filled BEFORE the daemon starts, in child processes: ``--memories`` memories
straight into the store with random normalized vectors (bench_memory_e2e.fill: the embedder
would take far longer than the pages), and ``--actions`` done actions straight into the journal
(one mkdir op each: the history's rows are what the History page reads). Then ``alma-agentd``
starts with memory and the panel on (the daemon runs the panel process), ``alma-ctl web`` gives
the login URL, and each page is asked ``--rounds`` times over HTTP with the session cookie,
after a warm-up round. A page's server time is the panel's own ``Server-Timing`` header (from
the request's arrival to the answer's first byte), split into the panel's own part and the
daemon's commands it waited for (the same header); the wall time seen by the client is printed
beside it. Then the RSS (``VmRSS``) of the panel and of the daemon.
Every page's p95 is held to ``TARGET_MS``; the target and the figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import http.client
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memory_e2e import fill_root
from figures import pct

from tests.support.daemon import DaemonRoot
from tests.support.panel import with_panel

TARGET_MS = 50.0


def fill_actions(root: Path, n: int) -> None:
    """Child process: ``n`` done actions in the journal of ``root`` (the daemon is stopped)."""
    from policies.layout import RootLayout
    from state.journal import Journal

    journal = Journal(RootLayout(root).journal_file)
    for i in range(n):
        plan = [{"op": "mkdir", "path": f"user/bench{i:05d}"}]
        action = journal.create_action(kind="organize", plan=plan)
        journal.finish(action, "done")
    journal.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def panel_pid(daemon: int) -> int:
    for task in Path(f"/proc/{daemon}/task").iterdir():
        for child in (task / "children").read_text().split():
            if "panel" in Path(f"/proc/{child}/cmdline").read_text():
                return int(child)
    raise SystemExit("no panel process under the daemon")


class Browser:
    """An HTTP client with the panel's session cookie (one connection a request, as a page
    load's first request would be)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.port = int(parts.port or 80)
        status, headers, _body, _took = self.get(f"{parts.path}?{parts.query}", cookie="")
        assert status == 303, status
        self.cookie = headers["set-cookie"].split(";", 1)[0]

    def get(self, path: str, cookie: str | None = None) -> tuple[int, dict[str, str], str, float]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        began = time.perf_counter()
        headers = {"Host": f"127.0.0.1:{self.port}"}
        if cookie is None:
            headers["Cookie"] = self.cookie
        conn.request("GET", path, headers=headers)
        answer = conn.getresponse()
        body = answer.read().decode("utf-8", "replace")
        took = time.perf_counter() - began
        conn.close()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body, took


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--actions", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--fill-actions", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.fill_actions:
        fill_actions(Path(options.fill_actions), options.actions)
        return 0
    if options.quick:
        options.memories, options.actions, options.rounds = 500, 100, 10
    alma = DaemonRoot(memory=True).init()
    try:
        with_panel(alma)
        fill_s = fill_root(alma, options.memories)
        cmd = [sys.executable, __file__, "--fill-actions", str(alma.root)]
        subprocess.run([*cmd, "--actions", str(options.actions)], check=True, env=alma.env)
        proc = alma.start(timeout=600)
        some = alma.ok("memory", "list", "--limit", "1")
        memory_id = some[0]["id"]
        browser = Browser(alma.ok("web")["url"])
        pages = {
            "Today (/)": "/",
            "Suggestions": "/suggestions",
            "History": "/history",
            "Memory (list, principles)": "/memory",
            "Memory search": "/memory?q=respaldo+de+la+base+de+datos",
            "A memory": f"/memory/{memory_id}",
            "Chat": "/chat",
            "Backups, model, autonomy": "/system",
        }
        print(
            f"# panel pages: {options.memories} memories (filled in {fill_s:.0f} s), "
            f"{options.actions} actions, {options.rounds} rounds after a warm-up"
        )
        print(
            f"{'page':<28} {'server p50':>10} {'server p95':>10} {'panel p95':>10} "
            f"{'daemon p95':>10} {'wall p95':>9}  target"
        )
        worst = 0.0
        for name, path in pages.items():
            status, _h, _b, _t = browser.get(path)  # warm-up (the first report, the model)
            assert status == 200, (path, status)
            server: list[float] = []
            own: list[float] = []
            daemon: list[float] = []
            wall: list[float] = []
            for _ in range(options.rounds):
                status, headers, _body, took = browser.get(path)
                assert status == 200, (path, status)
                timing = re.fullmatch(
                    r"app;dur=([0-9.]+), daemon;dur=([0-9.]+)", headers["server-timing"]
                )
                assert timing is not None, headers["server-timing"]
                total, commands = float(timing.group(1)) / 1000, float(timing.group(2)) / 1000
                server.append(total)
                own.append(total - commands)
                daemon.append(commands)
                wall.append(took)
            p95 = pct(server, 0.95, scale=1000)
            worst = max(worst, p95)
            ok = "ok" if p95 <= TARGET_MS else "OVER"
            print(
                f"{name:<28} {pct(server, 0.5, scale=1000):>8.1f}ms {p95:>8.1f}ms "
                f"{pct(own, 0.95, scale=1000):>8.1f}ms {pct(daemon, 0.95, scale=1000):>8.1f}ms "
                f"{pct(wall, 0.95, scale=1000):>7.1f}ms  {ok}"
            )
        panel = panel_pid(proc.pid)
        print(f"RSS: panel {rss_mb(panel):.0f} MB, daemon {rss_mb(proc.pid):.0f} MB")
        print(f"worst page p95 {worst:.1f} ms (target <= {TARGET_MS:.0f} ms)")
        alma.stop()
    finally:
        alma.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
