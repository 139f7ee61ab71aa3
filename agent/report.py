"""The daily report in logs/alma/: what was proposed, what is pending, what ran on its own."""

from __future__ import annotations

import os
import stat
from datetime import datetime
from typing import Any

from actions.tree import Tree
from policies.errors import RefusedError
from policies.layout import RootLayout

REPORTS = "logs/alma"  # the daemon's own reports; the detectors never read them


def write_daily_report(
    layout: RootLayout, pending: list[dict[str, Any]], history: list[dict[str, Any]], now: datetime
) -> str:
    """Append today's section to ``logs/alma/YYYY-MM-DD-analisis.md`` (never overwrites)."""
    day = now.strftime("%Y-%m-%d")
    lines = [f"\n## Análisis de las {now.strftime('%H:%M')}\n"]
    if pending:
        lines.append(f"Sugerencias pendientes: {len(pending)}\n")
        for s in pending:
            lines.append(f"- #{s['id']} ({s['kind']}) {s['title']}: {s['reason']}")
        lines.append("\nDecide con `alma-ctl suggestions show ID`, `accept ID` o `reject ID`.")
    else:
        lines.append("No hay sugerencias pendientes.")
    auto = [a for a in history if a.get("auto") and a["started_at"].startswith(day)]
    if auto:
        lines.append("\nHecho por ALMA por su cuenta hoy (se puede deshacer):")
        lines += [f"- acción {a['id']} ({a['kind']}), `alma-ctl undo {a['id']}`" for a in auto]
    # Through folder fds, never a link: a symlinked logs/alma/ must not carry the report away.
    name = f"{day}-analisis.md"
    with Tree(layout.root) as tree:
        folder = tree.ensure_dir(tuple(REPORTS.split("/")), 0o755)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags | os.O_NONBLOCK, 0o644, dir_fd=folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RefusedError(f"{REPORTS}/{name} is not a regular file; move it away.")
        if os.fstat(fd).st_size == 0:
            os.write(fd, f"# Informe diario de ALMA · {day}\n".encode())
        os.write(fd, ("\n".join(lines) + "\n").encode())
    finally:
        os.close(fd)
    return str(layout.reports / name)
