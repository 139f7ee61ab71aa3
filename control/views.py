"""How each command's answer reads to a person: one renderer for alma-ctl and alma chat
(:func:`render_result`), built on the shapes of :mod:`control.render`. The JSON keeps the wire
names; these views are only what a person reads.
"""

from __future__ import annotations

import os

from control.render import cell, fields, table, word
from policies.i18n import N_, _, ngettext, pgettext
from policies.kinds import label as kind_label
from policies.states import COUNTED_OUTCOMES, shown_status
from policies.text import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def _op(op: object) -> str:
    """One op as a person reads it: what it does and where. Its ``expect`` (the file's identity
    when planned) is the engine's check, nothing a person reads."""
    if not isinstance(op, dict):
        return cell(op, None)
    name = _OPS.get(str(op.get("op", "?")))
    shown = _(name) if name is not None else str(op.get("op", "?"))
    if "src" in op and "dst" in op:
        where = f"{op['src']} -> {op['dst']}"
    elif op.get("op") == "restore":
        where = _("{path} (from {trash})", path=op.get("path"), trash=op.get("trash"))
    elif op.get("op") == "memory_merge":
        where = _(
            "memories {merge} into {keep}", merge=cell(op.get("merge"), None), keep=op.get("keep")
        )
    elif op.get("op") == "memory_edit":
        where = _("memory {id}: {fields}", id=op.get("id"), fields=cell(op.get("fields"), None))
    else:
        where = str(op.get("path", ""))
    if op.get("op") == "create":
        return f"{shown:<8} " + _("{path} (a new file; its content is shown below)", path=where)
    return f"{shown:<8} {where}"  # an edit's bytes are shown as a diff below the plan


def op_line(op: object) -> str:
    """One op of a plan as alma-ctl shows it, for the web panel's plan, op by op."""
    return printable(_op(op))


#: The ops of a plan as a person reads them (the plan's JSON keeps the op names).
_OPS = {
    "mkdir": N_("mkdir"),
    "move": N_("move"),
    "trash": N_("trash"),
    "restore": N_("restore"),
    "rmdir": N_("rmdir"),
    "keep": N_("keep"),
    "edit": N_("edit"),
    "create": N_("create"),
    "memory_merge": N_("merge"),
    "memory_edit": N_("edit"),
}


def _suggestion(value: object) -> str:
    if not isinstance(value, dict):
        return fields(value)
    plan = value.get("plan") or []
    evidence = value.get("evidence") or []
    diffs = value.get("diffs") or []
    # (``undone`` is read in the status)
    shown_apart = (
        "id",
        "plan",
        "evidence",
        "title",
        "plan_total",
        "plan_summary",
        "diffs",
        "undone",
    )
    head = {k: v for k, v in value.items() if k not in shown_apart and v is not None}
    if "status" in head:
        head["status"] = shown_status(value)
    title = _("Suggestion {id}: {title}", id=value.get("id"), title=value.get("title", ""))
    lines = [title, fields(head, "  ")]
    if evidence:
        lines.append(_("Evidence:"))
        lines += [f"  - {cell(item, None)}" for item in evidence]
    total = value.get("plan_total")
    summary = value.get("plan_summary")
    if isinstance(total, int) and total > len(plan) and isinstance(summary, dict):
        lines += _plan_summary(value.get("id"), total, len(plan), summary)
    elif plan:
        lines.append(ngettext("Plan ({n} op):", "Plan ({n} ops):", len(plan)))
    else:
        lines.append(_("Plan: no file changes."))
    width = len(str(len(plan)))
    lines += [f"  {i:>{max(3, width)}}. {_op(op)}" for i, op in enumerate(plan, 1)]
    if isinstance(total, int) and total > len(plan):
        lines.append(
            _(
                "`alma-ctl suggestions show {id} --all` prints all {n} ops.",
                id=value.get("id"),
                n=total,
            )
        )
    for change in diffs:
        if isinstance(change, dict):
            lines.append(_("Change to {path}:", path=change.get("path")))
            lines += [f"    {line}" for line in str(change.get("diff", "")).splitlines()]
    return "\n".join(lines)


def _suggestions(value: object) -> str:
    """The suggestions' table; an executed one whose action was undone reads as undone."""
    if not isinstance(value, list):
        return fields(value)
    if not value:
        return _("No suggestions.")
    rows = [{**row, "status": shown_status(row)} if isinstance(row, dict) else row for row in value]
    return table(rows, ("id", "status", "kind", "files", "needs_approval", "title"))


def _plan_summary(sid: object, total: int, shown: int, summary: dict[str, object]) -> list[str]:
    """A long plan as a person reads it: ops by kind, where the files go, their types."""
    ops = summary.get("ops")
    kinds = ", ".join(
        f"{n} {_(_OPS[k]) if k in _OPS else k}"
        for k, n in (ops.items() if isinstance(ops, dict) else ())
    )
    lines = [ngettext("Plan ({n} op): {kinds}", "Plan ({n} ops): {kinds}", total, kinds=kinds)]
    folders = summary.get("folders")
    if isinstance(folders, list) and folders:
        lines.append(_("  By folder:"))
        for row in folders:
            if isinstance(row, dict):
                op = str(row.get("op", "?"))
                shown_op = _(_OPS[op]) if op in _OPS else op
                lines.append(
                    f"    {shown_op:<8} {row.get('files', 0):>9}  {row.get('folder') or '.'}"
                )
        more = summary.get("folders_more")
        if isinstance(more, int) and more:
            lines.append("    " + ngettext("and {n} more folder", "and {n} more folders", more))
    extensions = summary.get("extensions")
    if isinstance(extensions, list) and extensions:
        lines.append(_("  By type:"))
        for row in extensions:
            if isinstance(row, dict):
                ext = row.get("extension") or _("(no extension)")
                lines.append(f"    {ext:<8} {row.get('files', 0):>9}")
        more = summary.get("extensions_more")
        if isinstance(more, int) and more:
            lines.append("    " + ngettext("and {n} more type", "and {n} more types", more))
    lines.append(ngettext("The first {n} op:", "The first {n} ops:", shown))
    return lines


def _action(value: object) -> str:
    if not isinstance(value, dict):
        return fields(value)
    values = {
        "id": value.get("id"),
        "kind": word(value.get("kind", "?"), "kind"),
        "status": word(value.get("status", "?")),
    }
    text = ngettext(
        "Action {id}: {kind} {status}, {n} op",
        "Action {id}: {kind} {status}, {n} ops",
        int(value.get("ops") or 0),
        **values,
    )
    if value.get("undoes") is not None and value.get("to"):
        return _(
            "Action {id}: removed the folder {to}, which restore action {undone} had made.",
            id=value.get("id"),
            to=value["to"],
            undone=value["undoes"],
        )
    if value.get("undoes") is not None:
        text += _(", undoing action {id}", id=value["undoes"])
    elif value.get("suggestion_id") is not None:
        text += _(", from suggestion {id}", id=value["suggestion_id"])
    if value.get("auto"):
        text += _(", done by ALMA on its own")
    if value.get("audit_problem"):
        return text + ".\n" + _("WARNING: {text}", text=value["audit_problem"])
    return text + "."


def _memories(value: object) -> str:
    if not isinstance(value, list) or not value:
        return _("No memories found.") if isinstance(value, list) else fields(value)
    lines = []
    for item in value:
        if not isinstance(item, dict):
            lines.append(cell(item, 200))
            continue
        score = item.get("score")
        lead = f"[{score:.2f}] " if isinstance(score, int | float) else ""
        tags = " ".join(f"#{t}" for t in item.get("tags") or [])
        lines.append(f"{lead}{item.get('id')}  {cell(item.get('content'), 100)}  {tags}".rstrip())
    return "\n".join(lines)


def _memory(value: object) -> str:
    """One memory's fields that say something (its store's own bookkeeping left out)."""
    if not isinstance(value, dict):
        return fields(value)
    hidden = ("kind", "boosted")  # how it was stored; nothing a person asked about
    return fields({k: v for k, v in value.items() if k not in hidden and v not in ("", [])})


def _context(value: object) -> str:
    if isinstance(value, dict):
        for key in ("context", "text"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return fields(value)


def _report(r: object) -> str:
    """The report as written for a person (in the daemon's language, like logs/alma/); one
    line under it when it was written earlier, not now."""
    if not isinstance(r, dict):
        return str(r)
    text = str(r.get("text", "")).rstrip("\n")
    if r.get("written") is False:
        text += "\n\n" + _(
            "(written on {when}; `alma-ctl report --refresh {day}` writes it again)",
            when=str(r.get("written_at", "?"))[:16].replace("T", " "),  # local, to the minute
            day=str(r.get("date", "")),
        )
    return text


def _labelled(item: dict[str, object]) -> dict[str, object]:
    """``item`` with its kind in the words a person reads."""
    return {**item, "kind": word(item.get("kind"), "kind")}


def _typed(names: object) -> str:
    """Kinds as a person reads them, each with the name they type (``autonomy allow KIND``)."""
    if not isinstance(names, list):
        return cell(names, None)
    shown = []
    for name in names:
        text = kind_label(str(name))
        shown.append(text if text == name else f"{text} ({name})")
    return ", ".join(shown)


def _stats(value: object) -> str:
    """The track record: counts per kind and per folder, then what the rules decided."""
    if not isinstance(value, dict):
        return fields(value)
    kinds, folders = value.get("kinds") or [], value.get("folders") or []
    out = [table(kinds, ("kind", *COUNTED_OUTCOMES)) if kinds else _("Nothing proposed yet.")]
    if folders:
        out += ["", table(folders, ("kind", "folder", *COUNTED_OUTCOMES))]
    for item in value.get("stopped") or []:
        out += ["", _("No longer proposed: {kind} in {folder}: {why}.", **_labelled(item))]
    for item in value.get("reasons") or []:
        out += [
            "",
            _(
                "From your reason «{reason}» (memory {memory}): {took}. `{undo}` undoes it.",
                **item,
            ),
        ]
    for item in value.get("auto_stopped") or []:
        out += [
            "",
            _(
                "No longer runs on its own: {kind}. `{lift}` lets it again.",
                kind=word(item["kind"], "kind"),
                lift=item["lift"],
            ),
        ]
    for item in value.get("promotable") or []:
        out += [
            "",
            _(
                "Could run on its own: {kind}, accepted {accepted} times and never undone. "
                "Only you can allow it: in {file}, section {section}, write {line}",
                **_labelled(item),
            ),
        ]
    return "\n".join(out)


def _list_or(empty: str, columns: tuple[str, ...] = ()) -> Callable[[object], str]:
    def render(value: object) -> str:
        if isinstance(value, list):
            return table(value, columns) if value else _(empty)
        return fields(value)

    return render


def _status(value: object) -> str:
    """The daemon's fields, then what it watches: a line, and the limit's warning in full."""
    if not isinstance(value, dict):
        return fields(value)
    shown_apart = ("watch", "audit_problem", "model", "autonomy", "policy")
    lines = [fields({k: v for k, v in value.items() if k not in shown_apart})]
    if isinstance(value.get("autonomy"), dict):
        lines += _autonomy_lines(value["autonomy"])
    if isinstance(value.get("policy"), dict):
        lines += _policy_lines(value["policy"])
    model = value.get("model")
    if isinstance(model, dict):
        lines.append(_model_line(model))
        if model.get("confined"):
            lines.append(_("model process confined by: {how}", how=model["confined"]))
        if model.get("error"):
            lines.append(_("WARNING: {text}", text=model["error"]))
    if value.get("audit_problem"):
        lines.append(_("WARNING: {text}", text=value["audit_problem"]))
    watch = value.get("watch")
    if isinstance(watch, dict):
        if not watch.get("ready"):
            lines.append(_("watching: setting up the folder watches"))
        else:
            lines.append(
                ngettext(
                    "watching: {n} folder, {watches} inotify watches (limit {limit})",
                    "watching: {n} folders, {watches} inotify watches (limit {limit})",
                    int(watch.get("folders") or 0),
                    watches=watch.get("watches"),
                    limit=cell(watch.get("limit")),
                )
            )
        if watch.get("warning"):
            lines.append(_("WARNING: {text}", text=watch["warning"]))
    return "\n".join(line for line in lines if line)


def _autonomy_lines(value: dict[str, object]) -> list[str]:
    """Autonomy in sentences: the level and why it is that one; what is done on its own and
    what stopped, only when there is any."""
    configured, effective = value.get("configured"), value.get("effective")
    if value.get("paused"):
        lines = [
            _(
                "Autonomy: paused until `alma-ctl autonomy on` (the policy's level is {level}).",
                level=configured,
            )
        ]
    elif value.get("lowered_to") and effective != configured:
        lines = [
            _(
                "Autonomy: {level}, lowered from the policy's {configured}; "
                "`alma-ctl autonomy level {configured}` ends the lowering.",
                level=effective,
                configured=configured,
            )
        ]
    else:
        lines = [_("Autonomy: {level}, as the policy says.", level=effective)]
    kinds = value.get("auto_kinds")
    if kinds:
        lines.append(_("Done on its own when allowed: {kinds}.", kinds=_typed(kinds)))
    stopped = value.get("auto_stopped_kinds")
    if stopped:
        lines.append(
            _(
                "No longer done on its own after an undo: {kinds}; "
                "`alma-ctl autonomy allow KIND` allows one again.",
                kinds=_typed(stopped),
            )
        )
    return lines


def _autonomy(value: object) -> str:
    return "\n".join(_autonomy_lines(value)) if isinstance(value, dict) else fields(value)


def _policy_lines(value: dict[str, object]) -> list[str]:
    """The policy in force, when it was loaded, and the file's error when it is not valid."""
    when = cell(value.get("loaded_at"))
    if value.get("ok"):
        return [_("Policy: {file}, valid, loaded {when}.", file=value.get("file"), when=when)]
    return [
        _("Policy: {file}, NOT valid as it is now.", file=value.get("file")),
        _("WARNING: {text}", text=value.get("error")),
    ]


def _reload(value: object) -> str:
    """What ``reload`` read: the policy, then alma.toml (its error, or what waits for a
    restart)."""
    if not isinstance(value, dict):
        return fields(value)
    policy = value.get("policy")
    lines = []
    if isinstance(policy, dict):
        if policy.get("ok"):
            lines.append(_("Policy reloaded from {file}.", file=policy.get("file")))
        else:
            lines.append(_("The policy was not reloaded: {error}", error=policy.get("error")))
    if value.get("settings_error"):
        lines.append(
            _(
                "system/alma.toml is not valid, and the daemon keeps the settings it started "
                "with: {error}",
                error=value["settings_error"],
            )
        )
    restart = value.get("restart_needed")
    if restart:
        lines.append(
            _(
                "Changed, and applied only after a restart (`systemctl --user restart alma`): "
                "{keys}.",
                keys=cell(restart, None),
            )
        )
    return "\n".join(lines)


def _model_line(model: dict[str, object]) -> str:
    name = os.path.basename(str(model.get("path") or "")) or _("no model set")
    return _("model: {name} ({state})", name=name, state=cell(word(model.get("state"))))


def _model(value: object) -> str:
    """``model status``: its fields, and why it cannot answer in full (never cut)."""
    if not isinstance(value, dict):
        return fields(value)
    hidden = ("error", "unusable", "embedded")
    lines = [fields({k: v for k, v in value.items() if k not in hidden})]
    if value.get("error"):
        lines.append(_("WARNING: {text}", text=value["error"]))
    if value.get("embedded"):
        lines += [
            "",
            _(
                "This is the embedded model, SmolLM2-135M: a small one for trying ALMA, which "
                "often misreads what it is given (ALMA shows what it knows above its answers "
                "either way). For real answers use your own GGUF, an Instruct model of 7B or so "
                "(`alma-ctl model use ~/modelos/mistral-7b-instruct.Q4_K_M.gguf`), or a local "
                "OpenAI-compatible server such as llama-server or Ollama (`alma-ctl model use "
                "http://127.0.0.1:8080`)."
            ),
        ]
    return "\n".join(lines)


def _backup_line(value: object) -> str:
    """What a backup command did, in one or two sentences."""
    if not isinstance(value, dict):
        return fields(value)
    if value.get("kind") == "backup":
        return _(
            "Backup {snapshot} taken: {files} files, {bytes} bytes (action {id}).",
            snapshot=value.get("snapshot"),
            files=value.get("files"),
            bytes=value.get("bytes"),
            id=value.get("id"),
        )
    if value.get("kind") == "backup_forget":
        removed = value.get("removed") or []
        return ngettext(
            "Forgot {n} snapshot the retention does not keep (action {id}).",
            "Forgot {n} snapshots the retention does not keep (action {id}).",
            len(removed) if isinstance(removed, list) else 0,
            id=value.get("id"),
        )
    if value.get("kind") == "backup_restore":
        return _(
            "Restored into the new folder {to} (action {id}; `alma-ctl undo {id}` removes that "
            "folder again while nothing in it has changed).",
            to=value.get("to"),
            id=value.get("id"),
        )
    if "created" in value:
        made = _("created") if value["created"] else _("opened")
        return _(
            "Backup repository {target} {made}. The password is in {file}: keep a copy of it "
            "away from this computer, without it no backup can be read.",
            target=value.get("target"),
            made=made,
            file=value.get("password_file"),
        )
    return _("The backup repository {target} is sound.", target=value.get("target"))


def _snapshots(value: object) -> str:
    """The snapshots as a person reads them: the local time to the minute, the size in KB,
    MB or GB (the JSON keeps restic's time and the bytes)."""
    if not isinstance(value, list):
        return fields(value)
    if not value:
        return _("No snapshots yet.")
    rows = [
        {**row, "time": _local_minute(row.get("time")), "size": _size(row.get("bytes"))}
        if isinstance(row, dict)
        else row
        for row in value
    ]
    columns: tuple[str, ...] = ("id", "time", "files", "size")
    if any(isinstance(row, dict) and "root" in row for row in value):  # --all
        rows = [{**row, "folder": row.get("root")} for row in rows if isinstance(row, dict)]
        columns += ("mine", "host", "folder")
    return table(rows, columns)


def _local_minute(stamp: object) -> object:
    """restic's time (RFC 3339, nanoseconds) as this computer's local time, to the minute."""
    from datetime import datetime

    try:
        when = datetime.fromisoformat(str(stamp))
    except ValueError:
        return stamp
    return (when.astimezone() if when.tzinfo else when).strftime("%Y-%m-%d %H:%M")


def _size(count: object) -> object:
    """A number of bytes as a person reads it: ``980 bytes``, ``1,5 MB`` in Spanish."""
    if not isinstance(count, int) or isinstance(count, bool):
        return count
    if count < 1000:
        return ngettext("{n} byte", "{n} bytes", count)
    amount = float(count)
    for unit in ("KB", "MB", "GB", "TB"):
        amount /= 1000
        if amount < 1000 or unit == "TB":
            break
    shown = f"{amount:.1f}" if amount < 10 else f"{amount:.0f}"
    return f"{shown.replace('.', pgettext('decimal separator', '.'))} {unit}"


def _chat_start(value: object) -> str:
    """The chat's greeting: which model answers, then the pending suggestions."""
    started = value if isinstance(value, dict) else {}
    lines = [_chat_model(started.get("model"))]
    pending = started.get("pending")
    if isinstance(pending, list) and pending:
        lines.append(_chat_pending(pending))
    return "\n".join(lines)


def _chat_model(model: object) -> str:
    if not isinstance(model, dict) or not model.get("path"):
        return _(
            "No model is set: pick a GGUF model file with `alma-ctl model use PATH`. "
            "The ! commands work without one."
        )
    name = os.path.basename(str(model["path"]))
    backend = model.get("backend") or "?"
    line = _("Model: {name} ({backend}). !ayuda lists the commands.", name=name, backend=backend)
    if model.get("state") == "unusable" and model.get("error"):
        line += "\n" + str(model["error"])
    return line


def _chat_pending(pending: list[object]) -> str:
    lines = [_("Pending suggestions:")]
    for item in pending:
        if not isinstance(item, dict):
            continue
        files = item.get("files")
        extra = (
            ngettext(", {n} file", ", {n} files", files) if isinstance(files, int) and files else ""
        )
        lines.append(
            f"  {item.get('id')}. {item.get('title', '')} ({word(item.get('kind', '?'), 'kind')}{extra})"
        )
    lines.append(_("!ver N shows one with its plan; !aceptar N runs it; !rechazar N rejects it."))
    return "\n".join(lines)


def _analysis(value: object) -> str:
    """What an analysis proposed, what it did not and why, and what waits for the person."""
    if not isinstance(value, dict) or "proposed" not in value:
        if isinstance(value, dict) and value.get("started"):
            return _("The analysis started; `alma-ctl suggestions list` shows what it proposes.")
        return fields(value)
    proposed = [str(sid) for sid in value.get("proposed") or []]
    if proposed:
        lines = [
            ngettext(
                "Proposed {n} suggestion: {ids}.",
                "Proposed {n} suggestions: {ids}.",
                len(proposed),
                ids=", ".join(proposed),
            )
        ]
    else:
        lines = [_("Nothing new to propose.")]
    skipped = [item for item in value.get("skipped") or [] if isinstance(item, dict)]
    if skipped:
        lines.append(_("Not proposed:"))
        lines += [f"  - {item.get('title', '?')}: {item.get('why', '')}" for item in skipped]
    pending = value.get("pending")
    if isinstance(pending, int):
        lines.append(
            ngettext("{n} suggestion waits for you.", "{n} suggestions wait for you.", pending)
            if pending
            else _("Nothing waits for you.")
        )
    return "\n".join(lines)


def _feedback(value: object) -> str:
    """The verdict as it was noted, in one sentence (and the person's reason)."""
    if not isinstance(value, dict) or "feedback" not in value:
        return fields(value)
    useful = value.get("feedback") == "useful"
    kind = word(value.get("kind", "?"), "kind")
    if value.get("action_id") is not None:
        text = (
            _("Noted: action {id} ({kind}) was useful to you.", id=value["action_id"], kind=kind)
            if useful
            else _(
                "Noted: action {id} ({kind}) was not useful to you.",
                id=value["action_id"],
                kind=kind,
            )
        )
    else:
        sid = value.get("suggestion_id")
        text = (
            _("Noted: suggestion {id} ({kind}) was useful to you.", id=sid, kind=kind)
            if useful
            else _("Noted: suggestion {id} ({kind}) was not useful to you.", id=sid, kind=kind)
        )
    if value.get("reason"):
        text += " " + _("Your reason: {reason}", reason=value["reason"])
    return text


def _days(value: object) -> str:
    """``report.days``: one line a day, oldest first; the suggestions of the day counted by
    what became of them (every kind together)."""
    if not isinstance(value, dict) or not isinstance(value.get("days"), list):
        return fields(value)
    heads = {
        "date": _("date"),
        "hours": _("hours"),
        "messages": _("messages"),
        "mood": _("mood"),
        **{outcome: _(outcome) for outcome in ("accepted", "rejected", "undone", "pending")},
    }
    rows: list[object] = []
    for day in value["days"]:
        if not isinstance(day, dict):
            continue
        kinds = day.get("suggestions") or {}
        row = {
            heads["date"]: day.get("date"),
            heads["hours"]: day.get("hours"),
            heads["messages"]: sum(day.get("messages_by_hour") or ()),
            heads["mood"]: day.get("mood"),
        }
        for outcome in ("accepted", "rejected", "undone", "pending"):
            row[heads[outcome]] = sum(int(c.get(outcome) or 0) for c in kinds.values())
        rows.append(row)
    return table(rows, tuple(heads.values()))


def _history(value: object) -> str:
    """The actions, an undo named as the undo of the action it reverts."""
    if not isinstance(value, list):
        return fields(value)
    if not value:
        return _("No actions yet.")
    rows = [
        {**row, "kind": _("undoes action {id}", id=row["undoes"])}
        if isinstance(row, dict) and row.get("undoes") is not None
        else row
        for row in value
    ]
    columns = ("id", "suggestion_id", "kind", "status", "ops", "auto", "finished_at", "undone_by")
    return table(rows, columns)


def _reminders(value: object) -> str:
    """The breaks the person agreed to and the promises still pending, in sentences."""
    if not isinstance(value, dict):
        return fields(value)
    breaks = [item for item in value.get("breaks") or [] if isinstance(item, dict)]
    tasks = [item for item in value.get("pending_tasks") or [] if isinstance(item, dict)]
    if not breaks and not tasks:
        return _("No breaks to remind you of and no pending promises.")
    lines = []
    if breaks:
        lines.append(_("Breaks you agreed to:"))
        lines += [
            f"  {str(item.get('at', '?')).replace('T', ' ')}  {cell(item.get('text'), None)}"
            for item in breaks
        ]
    if tasks:
        lines.append(_("Pending promises:"))
        for item in tasks:
            lines.append(f"  {item.get('suggestion_id')}. {cell(item.get('title'), None)}")
            if item.get("reason"):
                lines.append(f"     {cell(item['reason'], None)}")
    return "\n".join(lines)


_RENDER: dict[str, Callable[[object], str]] = {
    "chat.start": _chat_start,
    "status": _status,
    "reload": _reload,
    "autonomy.off": _autonomy,
    "autonomy.on": _autonomy,
    "autonomy.status": _autonomy,
    "autonomy.level": _autonomy,
    "autonomy.allow": _autonomy,
    "model.status": _model,
    "model.use": _model,
    "suggestions.list": _suggestions,
    "suggestions.show": _suggestion,
    "suggestions.accept": _action,
    "undo": _action,
    "trash.restore": _action,
    "history": _history,
    "analyze": _analysis,
    "feedback": _feedback,
    "reminders": _reminders,
    "memory.search": _memories,
    "memory.list": _memories,
    "memory.show": _memory,
    "context": _context,
    "trash.list": _list_or(N_("The trash is empty.")),
    "stats": _stats,
    "report": _report,
    "report.days": _days,
    "backup.list": _snapshots,
    "backup.now": _backup_line,
    "backup.restore": _backup_line,
    "backup.forget": _backup_line,
    "backup.init": _backup_line,
    "backup.check": _backup_line,
}


def render_result(wire: str, args: dict[str, object], result: object) -> str:
    """How alma-ctl and alma chat show the result of ``wire`` to a person (one renderer),
    made :func:`printable`."""
    return printable(_render(wire, args, result))


def _render(wire: str, args: dict[str, object], result: object) -> str:
    render = _RENDER.get(wire)
    if render is not None:
        return render(result)
    if wire == "memory.add" and isinstance(result, dict):
        return _("Stored memory {id}.", id=result.get("id"))
    if wire == "memory.forget":
        return _(
            "Forgot memory {id}; `alma-ctl memory restore {id}` brings it back.", id=args["id"]
        )
    if wire == "memory.edit" and isinstance(result, dict):
        memory = _memory({k: v for k, v in result.items() if k != "action_id"})
        return (
            memory
            + "\n"
            + _(
                "Edited memory {id}; `alma-ctl undo {action}` takes the edit back.",
                id=result.get("id"),
                action=result.get("action_id"),
            )
        )
    if wire == "memory.examples" and isinstance(result, dict):
        return ngettext(
            "Stored {n} example memory.",
            "Stored {n} example memories.",
            int(result.get("added") or 0),
        )
    if wire == "memory.restore":
        return _("Restored memory {id}.", id=args["id"])
    if wire == "suggestions.reject":
        return _("Rejected suggestion {id}.", id=args["id"])
    return fields(result) or _("Done.")
