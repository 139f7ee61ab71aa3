"""What the pages show of the daemon's answers: rows with their words for a person (a kind's
label, a status as alma-ctl shows it), everything still plain text for the templates to escape."""

from __future__ import annotations

from typing import Any

from control.render import word
from policies.i18n import _
from policies.states import shown_status


def dicts(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def suggestion_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **row,
        "kind_label": word(row.get("kind", ""), "kind"),
        "status_label": word(shown_status(row)),
        "evidence": [str(e) for e in row.get("evidence") or []],
    }


def diffs(value: object) -> list[dict[str, str]]:
    if isinstance(value, dict):
        return [{"path": str(k), "diff": str(v)} for k, v in value.items()]
    return [
        {"path": str(item.get("path", "")), "diff": str(item.get("diff", ""))}
        for item in dicts(value)
    ]


def action_row(row: dict[str, Any]) -> dict[str, Any]:
    kind = (
        _("undoes action {id}", id=row["undoes"])
        if row.get("undoes") is not None
        else word(row.get("kind", ""), "kind")
    )
    return {**row, "kind_label": kind, "status_label": word(row.get("status", ""))}


def memory_row(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "tags": [str(t) for t in row.get("tags") or []]}
