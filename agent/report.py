"""The daily report in logs/alma/: what was proposed, what is pending, what ran on its own."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from policies.layout import RootLayout


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
    layout.reports.mkdir(parents=True, exist_ok=True)
    path = layout.reports / f"{day}-analisis.md"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        if os.fstat(fd).st_size == 0:
            os.write(fd, f"# Informe diario de ALMA · {day}\n".encode())
        os.write(fd, ("\n".join(lines) + "\n").encode())
    finally:
        os.close(fd)
    return str(path)
