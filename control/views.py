"""How each command's answer reads to a person: one renderer for alma-ctl and alma chat
(:func:`render_result`), built on the shapes of :mod:`control.render`. The JSON keeps the wire
names; these views are only what a person reads.

Each view reads the typed result of its command (policies.results): a key renamed on the
daemon's side is a type error here, not a "?" on the person's screen. :func:`render_result` is
the JSON edge: a result not of its command's shape (a dict, a list) is shown as fields.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from control.render import cell, fields, table, word
from policies.i18n import N_, _, ngettext, pgettext
from policies.kinds import label as kind_label
from policies.states import COUNTED_OUTCOMES, shown_status
from policies.text import printable

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from policies.results import (
        Action,
        Analysis,
        AnalysisStarted,
        AutonomyStatus,
        BackupCheck,
        BackupForgot,
        BackupInit,
        BackupTaken,
        ChatStart,
        Context,
        DaysReport,
        ExamplesAdded,
        Feedback,
        Memory,
        MemoryEdited,
        ModelStatus,
        PlanSummary,
        PolicyState,
        ReloadResult,
        Reminders,
        Report,
        Snapshot,
        Stats,
        Status,
        Suggestion,
        SuggestionShown,
        TrashEntry,
        WatchStatus,
    )


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


def _suggestion(value: SuggestionShown) -> str:
    plan = value["plan"]
    evidence = value["evidence"]
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
    head["status"] = shown_status(value)
    title = _("Suggestion {id}: {title}", id=value["id"], title=value["title"])
    lines = [title, fields(head, "  ")]
    if evidence:
        lines.append(_("Evidence:"))
        lines += [f"  - {cell(item, None)}" for item in evidence]
    total = value.get("plan_total", len(plan))
    summary = value.get("plan_summary")
    if total > len(plan) and summary is not None:
        lines += _plan_summary(total, len(plan), summary)
    elif plan:
        lines.append(ngettext("Plan ({n} op):", "Plan ({n} ops):", len(plan)))
    else:
        lines.append(_("Plan: no file changes."))
    width = len(str(len(plan)))
    lines += [f"  {i:>{max(3, width)}}. {_op(op)}" for i, op in enumerate(plan, 1)]
    if total > len(plan):
        lines.append(
            _("`alma-ctl suggestions show {id} --all` prints all {n} ops.", id=value["id"], n=total)
        )
    for change in diffs:
        lines.append(_("Change to {path}:", path=change["path"]))
        lines += [f"    {line}" for line in change["diff"].splitlines()]
    return "\n".join(lines)


def _suggestions(value: list[Suggestion]) -> str:
    """The suggestions' table; an executed one whose action was undone reads as undone."""
    if not value:
        return _("No suggestions.")
    rows: list[object] = [{**row, "status": shown_status(row)} for row in value]
    return table(rows, ("id", "status", "kind", "files", "needs_approval", "title"))


def _plan_summary(total: int, shown: int, summary: PlanSummary) -> list[str]:
    """A long plan as a person reads it: ops by kind, where the files go, their types."""
    kinds = ", ".join(f"{n} {_(_OPS[k]) if k in _OPS else k}" for k, n in summary["ops"].items())
    lines = [ngettext("Plan ({n} op): {kinds}", "Plan ({n} ops): {kinds}", total, kinds=kinds)]
    if summary["folders"]:
        lines.append(_("  By folder:"))
        for row in summary["folders"]:
            op = row["op"]
            shown_op = _(_OPS[op]) if op in _OPS else op
            lines.append(f"    {shown_op:<8} {row['files']:>9}  {row['folder'] or '.'}")
        if more := summary["folders_more"]:
            lines.append("    " + ngettext("and {n} more folder", "and {n} more folders", more))
    if summary["extensions"]:
        lines.append(_("  By type:"))
        for ext_row in summary["extensions"]:
            ext = ext_row["extension"] or _("(no extension)")
            lines.append(f"    {ext:<8} {ext_row['files']:>9}")
        if more := summary["extensions_more"]:
            lines.append("    " + ngettext("and {n} more type", "and {n} more types", more))
    lines.append(ngettext("The first {n} op:", "The first {n} ops:", shown))
    return lines


def _action(value: Action) -> str:
    undoes = value.get("undoes")
    if undoes is not None and value.get("to"):
        return _(
            "Action {id}: removed the folder {to}, which restore action {undone} had made.",
            id=value["id"],
            to=value.get("to"),
            undone=undoes,
        )
    text = ngettext(
        "Action {id}: {kind} {status}, {n} op",
        "Action {id}: {kind} {status}, {n} ops",
        value["ops"],
        id=value["id"],
        kind=word(value["kind"], "kind"),
        status=word(value["status"]),
    )
    if undoes is not None:
        text += _(", undoing action {id}", id=undoes)
    elif value["suggestion_id"] is not None:
        text += _(", from suggestion {id}", id=value["suggestion_id"])
    if value["auto"]:
        text += _(", done by ALMA on its own")
    if problem := value.get("audit_problem"):
        return text + ".\n" + _("WARNING: {text}", text=problem)
    return text + "."


def _memories(value: list[Memory]) -> str:
    if not value:
        return _("No memories found.")
    lines = []
    for item in value:
        score = item.get("score")
        lead = f"[{score:.2f}] " if score is not None else ""
        tags = " ".join(f"#{t}" for t in item["tags"])
        lines.append(f"{lead}{item['id']}  {cell(item['content'], 100)}  {tags}".rstrip())
    return "\n".join(lines)


def _memory(value: Memory) -> str:
    """One memory's fields that say something (its store's own bookkeeping left out)."""
    # How it was stored, nothing a person asked about; an edit's action is said under it.
    hidden = ("kind", "boosted", "action_id")
    return fields({k: v for k, v in value.items() if k not in hidden and v not in ("", [])})


def _context(value: Context) -> str:
    return value["text"] if isinstance(value.get("text"), str) else fields(value)


def _report(r: Report) -> str:
    """The report as written for a person (in the daemon's language, like logs/alma/); one
    line under it when it was written earlier, not now."""
    text = r["text"].rstrip("\n")
    if not r["written"]:
        text += "\n\n" + _(
            "(written on {when}; `alma-ctl report --refresh {day}` writes it again)",
            when=r.get("written_at", "?")[:16].replace("T", " "),  # local, to the minute
            day=r["date"],
        )
    return text


def _labelled(item: Mapping[str, object]) -> dict[str, object]:
    """``item`` with its kind in the words a person reads."""
    return {**item, "kind": word(item["kind"], "kind")}


def _typed(names: list[str]) -> str:
    """Kinds as a person reads them, each with the name they type (``autonomy allow KIND``)."""
    shown = []
    for name in names:
        text = kind_label(str(name))
        shown.append(text if text == name else f"{text} ({name})")
    return ", ".join(shown)


def _stats(value: Stats) -> str:
    """The track record: counts per kind and per folder, then what the rules decided."""
    kinds: list[object] = list(value["kinds"])
    folders: list[object] = list(value["folders"])
    out = [table(kinds, ("kind", *COUNTED_OUTCOMES)) if kinds else _("Nothing proposed yet.")]
    if folders:
        out += ["", table(folders, ("kind", "folder", *COUNTED_OUTCOMES))]
    for stop in value["stopped"]:
        out += ["", _("No longer proposed: {kind} in {folder}: {why}.", **_labelled(stop))]
    for reason in value.get("reasons", []):
        out += [
            "",
            _(
                "From your reason «{reason}» (memory {memory}): {took}. `{undo}` undoes it.",
                **reason,
            ),
        ]
    for auto in value["auto_stopped"]:
        out += [
            "",
            _(
                "No longer runs on its own: {kind}. `{lift}` lets it again.",
                kind=word(auto["kind"], "kind"),
                lift=auto["lift"],
            ),
        ]
    for item in value["promotable"]:
        out += [
            "",
            _(
                "Could run on its own: {kind}, accepted {accepted} times and never undone. "
                "Only you can allow it: in {file}, section {section}, write {line}",
                **_labelled(item),
            ),
        ]
    return "\n".join(out)


def _trash(value: list[TrashEntry]) -> str:
    return table(list(value)) if value else _("The trash is empty.")


def _status(value: Status) -> str:
    """The daemon's fields, then what it watches: a line, and the limit's warning in full."""
    shown_apart = ("watch", "audit_problem", "model", "autonomy", "policy")
    lines = [fields({k: v for k, v in value.items() if k not in shown_apart})]
    if (autonomy := value.get("autonomy")) is not None:
        lines += _autonomy_lines(autonomy)
    if (policy := value.get("policy")) is not None:
        lines += _policy_lines(policy)
    if (model := value.get("model")) is not None:
        lines.append(_model_line(model))
        if confined := model.get("confined"):
            lines.append(_("model process confined by: {how}", how=confined))
        if error := model.get("error"):
            lines.append(_("WARNING: {text}", text=error))
    if problem := value.get("audit_problem"):
        lines.append(_("WARNING: {text}", text=problem))
    if (watch := value.get("watch")) is not None:
        lines += _watch_lines(watch)
    return "\n".join(line for line in lines if line)


def _watch_lines(watch: WatchStatus) -> list[str]:
    """What the daemon watches: a line, and the limit's warning in full."""
    if not watch["ready"]:
        lines = [_("watching: setting up the folder watches")]
    else:
        lines = [
            ngettext(
                "watching: {n} folder, {watches} inotify watches (limit {limit})",
                "watching: {n} folders, {watches} inotify watches (limit {limit})",
                watch["folders"] or 0,
                watches=watch["watches"],
                limit=cell(watch["limit"]),
            )
        ]
    if watch["warning"]:
        lines.append(_("WARNING: {text}", text=watch["warning"]))
    return lines


def _autonomy_lines(value: AutonomyStatus) -> list[str]:
    """Autonomy in sentences: the level and why it is that one; what is done on its own and
    what stopped, only when there is any."""
    configured, effective = value["configured"], value["effective"]
    if value["paused"]:
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
    if kinds := value.get("auto_kinds"):
        lines.append(_("Done on its own when allowed: {kinds}.", kinds=_typed(kinds)))
    if stopped := value.get("auto_stopped_kinds"):
        lines.append(
            _(
                "No longer done on its own after an undo: {kinds}; "
                "`alma-ctl autonomy allow KIND` allows one again.",
                kinds=_typed(stopped),
            )
        )
    return lines


def _autonomy(value: AutonomyStatus) -> str:
    return "\n".join(_autonomy_lines(value))


def _policy_lines(value: PolicyState) -> list[str]:
    """The policy in force, when it was loaded, and the file's error when it is not valid."""
    when = cell(value["loaded_at"])
    if value["ok"]:
        return [_("Policy: {file}, valid, loaded {when}.", file=value["file"], when=when)]
    return [
        _("Policy: {file}, NOT valid as it is now.", file=value["file"]),
        _("WARNING: {text}", text=value["error"]),
    ]


def _reload(value: ReloadResult) -> str:
    """What ``reload`` read: the policy, then alma.toml (its error, or what waits for a
    restart)."""
    policy = value["policy"]
    if policy["ok"]:
        lines = [_("Policy reloaded from {file}.", file=policy["file"])]
    else:
        lines = [_("The policy was not reloaded: {error}", error=policy["error"])]
    if value["settings_error"]:
        lines.append(
            _(
                "system/alma.toml is not valid, and the daemon keeps the settings it started "
                "with: {error}",
                error=value["settings_error"],
            )
        )
    if restart := value["restart_needed"]:
        lines.append(
            _(
                "Changed, and applied only after a restart (`systemctl --user restart alma`): "
                "{keys}.",
                keys=cell(restart, None),
            )
        )
    return "\n".join(lines)


def _model_line(model: ModelStatus) -> str:
    name = os.path.basename(model["path"] or "") or _("no model set")
    return _("model: {name} ({state})", name=name, state=cell(word(model.get("state"))))


def _model(value: ModelStatus) -> str:
    """``model status``: its fields, and why it cannot answer in full (never cut)."""
    hidden = ("error", "unusable", "embedded")
    lines = [fields({k: v for k, v in value.items() if k not in hidden})]
    if error := value.get("error"):
        lines.append(_("WARNING: {text}", text=error))
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


def _backup_taken(value: BackupTaken) -> str:
    """``backup now``: the snapshot and its action, in one sentence."""
    return _(
        "Backup {snapshot} taken: {files} files, {bytes} bytes (action {id}).",
        snapshot=value["snapshot"],
        files=value["files"],
        bytes=value["bytes"],
        id=value["id"],
    )


def _backup_forgot(value: BackupForgot) -> str:
    return ngettext(
        "Forgot {n} snapshot the retention does not keep (action {id}).",
        "Forgot {n} snapshots the retention does not keep (action {id}).",
        len(value["removed"]),
        id=value["id"],
    )


def _backup_restored(value: Action) -> str:
    """``backup restore``: the folder it made, and how to take it back."""
    return _(
        "Restored into the new folder {to} (action {id}; `alma-ctl undo {id}` removes that "
        "folder again while nothing in it has changed).",
        to=value.get("to"),
        id=value["id"],
    )


def _backup_init(value: BackupInit) -> str:
    made = _("created") if value["created"] else _("opened")
    return _(
        "Backup repository {target} {made}. The password is in {file}: keep a copy of it "
        "away from this computer, without it no backup can be read.",
        target=value["target"],
        made=made,
        file=value["password_file"],
    )


def _backup_check(value: BackupCheck) -> str:
    return _("The backup repository {target} is sound.", target=value["target"])


def _snapshots(value: list[Snapshot]) -> str:
    """The snapshots as a person reads them: the local time to the minute, the size in KB,
    MB or GB (the JSON keeps restic's time and the bytes)."""
    if not value:
        return _("No snapshots yet.")
    columns: tuple[str, ...] = ("id", "time", "files", "size")
    every = any("root" in row for row in value)  # --all
    if every:
        columns += ("mine", "host", "folder")
    rows: list[object] = [
        {
            **row,
            "time": _local_minute(row["time"]),
            "size": _size(row["bytes"]),
            **({"folder": row.get("root")} if every else {}),
        }
        for row in value
    ]
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


def _chat_start(value: ChatStart) -> str:
    """The chat's greeting: which model answers, then the pending suggestions."""
    lines = [_chat_model(value["model"])]
    if value["pending"]:
        lines.append(_chat_pending(value["pending"]))
    return "\n".join(lines)


def _chat_model(model: ModelStatus) -> str:
    if not model["path"]:
        return _(
            "No model is set: pick a GGUF model file with `alma-ctl model use PATH`. "
            "The ! commands work without one."
        )
    name = os.path.basename(model["path"])
    backend = model["backend"] or "?"
    line = _("Model: {name} ({backend}). !ayuda lists the commands.", name=name, backend=backend)
    if model.get("state") == "unusable" and (error := model.get("error")):
        line += "\n" + error
    return line


def _chat_pending(pending: list[Suggestion]) -> str:
    lines = [_("Pending suggestions:")]
    for item in pending:
        files = item["files"]
        extra = ngettext(", {n} file", ", {n} files", files) if files else ""
        lines.append(f"  {item['id']}. {item['title']} ({word(item['kind'], 'kind')}{extra})")
    lines.append(_("!ver N shows one with its plan; !aceptar N runs it; !rechazar N rejects it."))
    return "\n".join(lines)


def _analysis(value: Analysis | AnalysisStarted) -> str:
    """What an analysis proposed, what it did not and why, and what waits for the person."""
    if "proposed" not in value:
        return _("The analysis started; `alma-ctl suggestions list` shows what it proposes.")
    proposed = [str(sid) for sid in value["proposed"]]
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
    if value["skipped"]:
        lines.append(_("Not proposed:"))
        lines += [f"  - {item['title']}: {item['why']}" for item in value["skipped"]]
    pending = value["pending"]
    lines.append(
        ngettext("{n} suggestion waits for you.", "{n} suggestions wait for you.", pending)
        if pending
        else _("Nothing waits for you.")
    )
    return "\n".join(lines)


def _feedback(value: Feedback) -> str:
    """The verdict as it was noted, in one sentence (and the person's reason)."""
    useful = value["feedback"] == "useful"
    kind = word(value["kind"], "kind")
    if value["action_id"] is not None:
        aid = value["action_id"]
        text = (
            _("Noted: action {id} ({kind}) was useful to you.", id=aid, kind=kind)
            if useful
            else _("Noted: action {id} ({kind}) was not useful to you.", id=aid, kind=kind)
        )
    else:
        sid = value["suggestion_id"]
        text = (
            _("Noted: suggestion {id} ({kind}) was useful to you.", id=sid, kind=kind)
            if useful
            else _("Noted: suggestion {id} ({kind}) was not useful to you.", id=sid, kind=kind)
        )
    if value["reason"]:
        text += " " + _("Your reason: {reason}", reason=value["reason"])
    return text


def _days(value: DaysReport) -> str:
    """``report.days``: one line a day, oldest first; the suggestions of the day counted by
    what became of them (every kind together)."""
    outcomes = ("accepted", "rejected", "undone", "pending")
    heads = {
        "date": _("date"),
        "hours": _("hours"),
        "messages": _("messages"),
        "mood": _("mood"),
        **{outcome: _(outcome) for outcome in outcomes},
    }
    rows: list[object] = []
    for day in value["days"]:
        row: dict[str, object] = {
            heads["date"]: day["date"],
            heads["hours"]: day["hours"],
            heads["messages"]: sum(day["messages_by_hour"]),
            heads["mood"]: day["mood"],
        }
        for outcome in outcomes:
            row[heads[outcome]] = sum(c.get(outcome, 0) for c in day["suggestions"].values())
        rows.append(row)
    return table(rows, tuple(heads.values()))


def _history(value: list[Action]) -> str:
    """The actions, an undo named as the undo of the action it reverts."""
    if not value:
        return _("No actions yet.")
    rows: list[object] = [
        {**row, "kind": _("undoes action {id}", id=undoes)}
        if (undoes := row.get("undoes")) is not None
        else row
        for row in value
    ]
    columns = ("id", "suggestion_id", "kind", "status", "ops", "auto", "finished_at", "undone_by")
    return table(rows, columns)


def _reminders(value: Reminders) -> str:
    """The breaks the person agreed to and the promises still pending, in sentences."""
    breaks, tasks = value["breaks"], value["pending_tasks"]
    if not breaks and not tasks:
        return _("No breaks to remind you of and no pending promises.")
    lines = []
    if breaks:
        lines.append(_("Breaks you agreed to:"))
        lines += [
            f"  {item['at'].replace('T', ' ')}  {cell(item['text'], None)}" for item in breaks
        ]
    if tasks:
        lines.append(_("Pending promises:"))
        for task in tasks:
            lines.append(f"  {task['suggestion_id']}. {cell(task['title'], None)}")
            if task["reason"]:
                lines.append(f"     {cell(task['reason'], None)}")
    return "\n".join(lines)


def _stored(value: Memory) -> str:
    return _("Stored memory {id}.", id=value["id"])


def _memory_edited(value: MemoryEdited) -> str:
    return (
        _memory(value)
        + "\n"
        + _(
            "Edited memory {id}; `alma-ctl undo {action}` takes the edit back.",
            id=value["id"],
            action=value["action_id"],
        )
    )


def _examples(value: ExamplesAdded) -> str:
    return ngettext("Stored {n} example memory.", "Stored {n} example memories.", value["added"])


#: Each command's view of its typed result; the results that are one JSON object.
_ONE: dict[str, Callable[[Any], str]] = {
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
    "suggestions.show": _suggestion,
    "suggestions.accept": _action,
    "undo": _action,
    "trash.restore": _action,
    "analyze": _analysis,
    "feedback": _feedback,
    "reminders": _reminders,
    "memory.add": _stored,
    "memory.examples": _examples,
    "memory.show": _memory,
    "context": _context,
    "stats": _stats,
    "report": _report,
    "report.days": _days,
    "memory.edit": _memory_edited,
    "backup.now": _backup_taken,
    "backup.restore": _backup_restored,
    "backup.forget": _backup_forgot,
    "backup.init": _backup_init,
    "backup.check": _backup_check,
}
#: The results that are a JSON list.
_MANY: dict[str, Callable[[Any], str]] = {
    "suggestions.list": _suggestions,
    "history": _history,
    "memory.search": _memories,
    "memory.list": _memories,
    "trash.list": _trash,
    "backup.list": _snapshots,
}


def render_result(wire: str, args: dict[str, object], result: object) -> str:
    """How alma-ctl and alma chat show the result of ``wire`` to a person (one renderer),
    made :func:`printable`."""
    return printable(_render(wire, args, result))


def _render(wire: str, args: dict[str, object], result: object) -> str:
    # The JSON edge: a result is read as its command's typed record; one that is not of that
    # shape (a key the record requires missing, a value of another type) reads as its fields.
    one, many = _ONE.get(wire), _MANY.get(wire)
    try:
        if one is not None and isinstance(result, dict):
            return one(result)
        if many is not None and isinstance(result, list):
            return many(result)
    except (KeyError, TypeError, AttributeError):
        return fields(result)
    if wire == "memory.forget":
        return _(
            "Forgot memory {id}; `alma-ctl memory restore {id}` brings it back.", id=args["id"]
        )
    if wire == "memory.restore":
        return _("Restored memory {id}.", id=args["id"])
    if wire == "suggestions.reject":
        return _("Rejected suggestion {id}.", id=args["id"])
    return fields(result) or _("Done.")
