"""The shapes a person reads an answer in: labelled fields, tables, cells. Every text from the
daemon passes :func:`policies.text.printable` before it reaches a terminal. Standard library
only: alma-ctl and alma chat import it.
"""

from __future__ import annotations

import json

from policies import kinds
from policies.i18n import N_, _

#: How a column of a table is headed for a person, in words (the JSON keeps the wire names).
#: A key missing here is shown with its underscores as spaces: add its label when you add a
#: field.
_LABELS: dict[str, str] = {
    "id": N_("ID"),
    "status": N_("STATUS"),
    "kind": N_("KIND"),
    "files": N_("FILES"),
    "needs_approval": N_("NEEDS APPROVAL"),
    "title": N_("TITLE"),
    "suggestion_id": N_("SUGGESTION"),
    "ops": N_("OPS"),
    "auto": N_("AUTO"),
    "finished_at": N_("FINISHED"),
    "undone_by": N_("UNDONE BY"),
    "action": N_("ACTION"),
    "original": N_("ORIGINAL"),
    "trash": N_("TRASH"),
    "trashed_at": N_("TRASHED"),
    "folder": N_("FOLDER"),
    "proposed": N_("PROPOSED"),
    "accepted": N_("ACCEPTED"),
    "rejected": N_("REJECTED"),
    "undone": N_("UNDONE"),
    "useful": N_("USEFUL"),
    "useless": N_("USELESS"),
    "time": N_("TIME"),
    "bytes": N_("BYTES"),
    "size": N_("SIZE"),
    "mine": N_("THIS ROOT'S"),
    "host": N_("COMPUTER"),
}
#: Field names of single answers (``status``, ``autonomy status``, ``memory stats``...).
_FIELD_LABELS: dict[str, str] = {
    "running": N_("running"),
    "pid": N_("pid"),
    "version": N_("version"),
    "root": N_("root"),
    "socket": N_("socket"),
    "autonomy": N_("autonomy"),
    "configured": N_("configured"),
    "effective": N_("effective"),
    "paused": N_("paused"),
    "lowered_to": N_("lowered to"),
    "auto_kinds": N_("done on its own"),
    "auto_stopped_kinds": N_("stopped after an undo"),
    "sandbox": N_("sandbox"),
    "sandbox_detail": N_("sandbox detail"),
    "pending_suggestions": N_("pending suggestions"),
    "last_analysis": N_("last analysis"),
    "memories": N_("memories"),
    "memory": N_("memory"),
    "policy": N_("policy"),
    "file": N_("file"),
    "ok": N_("valid"),
    "loaded_at": N_("loaded at"),
    "error": N_("error"),
    "recovered_at_start": N_("recovered at start"),
    "uptime_seconds": N_("seconds running"),
    "removed": N_("removed"),
    "older_than_days": N_("older than (days)"),
    "proposed": N_("proposed"),
    "pending": N_("pending now"),
    "started": N_("started"),
    "total": N_("total"),
    "archived": N_("archived"),
    "embedder": N_("embedder"),
    "content": N_("content"),
    "tags": N_("tags"),
    "project": N_("project"),
    "importance": N_("importance"),
    "memory_type": N_("type"),
    "created_at": N_("created"),
    "source": N_("source"),
    "layer": N_("layer"),
    "model": N_("model"),
    "path": N_("path"),
    "backend": N_("backend"),
    "loaded": N_("loaded"),
    "n_ctx": N_("context tokens"),
    "threads": N_("threads"),
    "tokens_per_second": N_("tokens per second"),
    "busy": N_("busy"),
    "state": N_("state"),
    "crashes": N_("failures in a row"),
    "last_failure": N_("last failure"),
    "confined": N_("confined by"),
    "unusable": N_("given up because"),
    "embedded": N_("the small built-in model"),
    "lora": N_("LoRA adapter"),
    "lora_in_use": N_("adapter in use"),
    "ready": N_("ready"),
    # The fields of a suggestion (``suggestions show``) and of an answer to ``feedback``.
    "kind": N_("kind"),
    "status": N_("status"),
    "reason": N_("reason"),
    "target": N_("where"),
    "files": N_("files"),
    "needs_approval": N_("waits for your approval"),
    "updated_at": N_("updated"),
    "action_id": N_("action"),
    "suggestion_id": N_("suggestion"),
    "reject_reason": N_("why you rejected it"),
    # A memory's (``memory show``) and the store's counts (``memory stats``).
    "theme": N_("area of life"),
    "related_to": N_("about"),
    "use_count": N_("times used"),
    "mentions": N_("mentions"),
    "day": N_("day"),
    "event_date": N_("the day it is about"),
    "reply_to": N_("answers"),
    "archived_at": N_("archived on"),
    "archive_reason": N_("why archived"),
    "merged_into": N_("merged into"),
    "by_tag": N_("by tag"),
    "by_project": N_("by project"),
    "by_memory_type": N_("by type"),
    "by_layer": N_("by layer"),
    "watch": N_("watching"),  # shown on its own line by _status
    "audit_problem": N_("audit log"),  # shown on its own line by _status
}
#: Status words of suggestions and actions (contract §3), as a person reads them.
_WORDS = frozenset(
    (
        N_("pending"),
        N_("accepted"),
        N_("rejected"),
        N_("executed"),
        N_("failed"),
        N_("expired"),
        N_("running"),
        N_("done"),
        N_("rolled_back"),
        N_("undone"),
        # The model's states (agent.voice.model.ModelRuntime.status).
        N_("not loaded"),
        N_("restarting"),
        N_("unusable"),
        # The memory store's (agent.memory.loader.MemoryLoader.status).
        N_("loading"),
        N_("ready"),
    )
)


def label(key: str, table: dict[str, str] = _FIELD_LABELS) -> str:
    label = table.get(key)
    return _(label) if label is not None else key.replace("_", " ")


def word(value: object, key: str = "") -> object:
    """``value`` in the words a person reads: a status word translated, and under the key
    ``kind`` a kind's label (policies.kinds)."""
    if key == "kind" and isinstance(value, str):
        return kinds.label(value)
    return _(value) if isinstance(value, str) and value in _WORDS else value


def cell(value: object, width: int | None = 60) -> str:
    """``value`` on one line for a person: no repr of a list or a dict, and a text longer than
    ``width`` cut after a whole word (a path is never cut in two; one alone is shown whole)."""
    if value is None or value == []:
        return "-"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, list):
        value = ", ".join(cell(item, None) for item in value)
    elif isinstance(value, dict):
        value = ", ".join(f"{label(k)} {cell(word(v, k), None)}" for k, v in value.items())
    text = " ".join(str(value).split())  # one line per row, whatever the text holds
    if width is None or len(text) <= width:
        return text
    end = text.rfind(" ", 0, width - 1)
    if end <= 0:
        end = text.find(" ")
        return text if end < 0 else text[:end] + " …"
    return text[:end].rstrip(",;:") + " …"


def table(rows: list[object], columns: tuple[str, ...] = ()) -> str:
    dicts = [row for row in rows if isinstance(row, dict)]
    if len(dicts) != len(rows):
        return "\n".join(cell(row, 200) for row in rows)
    if not columns:
        seen: dict[str, None] = {}
        for row in dicts:
            seen.update(dict.fromkeys(key for key in row if not isinstance(row[key], dict | list)))
        columns = tuple(seen)
    heads = [label(col, _LABELS).upper() for col in columns]
    cells = [[cell(word(row.get(col), col)) for col in columns] for row in dicts]
    widths = [max([len(head)] + [len(line[i]) for line in cells]) for i, head in enumerate(heads)]
    out = ["  ".join(head.ljust(w) for head, w in zip(heads, widths, strict=True))]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(line.rstrip() for line in out)


def fields(value: object, indent: str = "") -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return table(value) if value else _("(none)")
    if not isinstance(value, dict):
        return "" if value is None else json.dumps(value, ensure_ascii=False)
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.append(f"{indent}{label(key)}: {cell(item, None)}")
        else:  # whole: the terminal wraps a long reason, never cuts its paths
            lines.append(f"{indent}{label(key)}: {cell(word(item, key), None)}")
    return "\n".join(lines)
