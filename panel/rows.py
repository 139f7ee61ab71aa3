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


def report_blocks(text: str) -> list[dict[str, Any]]:
    """The day's report (Markdown as logs/alma/ keeps it) as blocks a page shows: headings,
    lists of items and paragraphs, each still plain text (the template escapes it); anything
    else of Markdown is shown as written."""
    blocks: list[dict[str, Any]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        hashes = len(stripped) - len(stripped.lstrip("#"))
        if 0 < hashes <= 6 and stripped[hashes : hashes + 1] == " ":
            blocks.append(
                {"kind": "heading", "level": min(hashes + 2, 6), "text": stripped[hashes + 1 :]}
            )
        elif stripped.startswith(("- ", "* ")):
            if not blocks or blocks[-1]["kind"] != "list":
                blocks.append({"kind": "list", "items": []})
            blocks[-1]["items"].append(stripped[2:])
        else:
            blocks.append({"kind": "text", "text": stripped})
    return blocks
