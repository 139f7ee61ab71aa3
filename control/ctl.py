"""alma-ctl: the person's command line to alma-agentd (contract §2).

Imports only the standard library and the leaf modules of ``policies``, and the socket client
lazily, so ``alma-ctl status`` starts in about twice the time of a bare ``python3 -c pass``.
The subcommands are built from the same command table the server validates against. Exit codes:
0 ok, 1 error, 2 usage, 3 daemon not reachable, 4 refused, 5 conflict, 6 no such id.

Two readers of the command line, one meaning: :func:`_quick_line` reads the plain, well-formed
lines people type most without importing :mod:`argparse` (building its 31 parsers, with
:mod:`shutil` and :mod:`gettext`, was a quarter of ``alma-ctl status``); anything it is not
sure of (help, a usage error, an abbreviated option, a value that starts with ``-``, ``init``)
goes to the argparse parser, which has the help texts and the error messages. A property test
checks that every line the quick reader accepts means exactly what argparse makes of it.
"""

from __future__ import annotations

import io
import json
import os
import sys

from control.commands import COMMANDS, Arg, Command
from policies.errors import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_UNREACHABLE,
    AlmaError,
    ErrorCode,
    exit_code_for,
)
from policies.i18n import N_, _, ngettext
from policies.modes import PRIVATE_FILE, SHARED_FILE
from policies.states import COUNTED_OUTCOMES
from policies.text import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from typing import NoReturn

_PREFIX = "arg_"  # argparse dests of command arguments, apart from --root/--json/--output


# --------------------------------------------------------------------------- the parser


def _add_globals(parser: argparse.ArgumentParser, *, top: bool) -> None:
    import argparse  # loaded by build_parser already

    # After the command they default to SUPPRESS, so they never undo a value given before it.
    default_root = None if top else argparse.SUPPRESS
    default_json = False if top else argparse.SUPPRESS
    parser.add_argument(
        "--root",
        metavar="DIR",
        default=default_root,
        help=_("the ALMA root (default: $ALMA_ROOT, else ~/ALMA)"),
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=default_json,
        help=_("print one JSON document on stdout"),
    )


def _add_arg(parser: argparse.ArgumentParser, spec: Arg) -> None:
    kwargs: dict[str, object] = {"help": _(spec.help) if spec.help else None}
    if spec.metavar:
        kwargs["metavar"] = spec.metavar
    if spec.choices:
        kwargs["choices"] = spec.choices
    if spec.type == "int":
        kwargs["type"] = int
    if spec.type == "bool":
        kwargs.update(action="store_true", default=None)
        kwargs.pop("metavar", None)
    elif spec.type == "list[str]" and spec.positional:
        kwargs["nargs"] = "*"
    elif spec.type == "list[str]":
        kwargs["action"] = "append"
    if spec.positional and spec.type == "list[str]":
        parser.add_argument(_PREFIX + spec.name, **kwargs)  # type: ignore[arg-type]  # argparse's kwargs are built from the command table at run time
        return
    if spec.positional:
        if not spec.required:
            kwargs.update(nargs="?", default=None)
        parser.add_argument(_PREFIX + spec.name, **kwargs)  # type: ignore[arg-type]  # argparse's kwargs are built from the command table at run time
        return
    flag = spec.flag or "--" + spec.name.replace("_", "-")
    if spec.required:
        kwargs["required"] = True
    if spec.default not in (None, False, True, (), ""):  # a flag can only say True
        if spec.help:
            kwargs["help"] = _("{help}; default {value}", help=_(spec.help), value=spec.default)
        else:
            kwargs["help"] = _("default {value}", value=spec.default)
    parser.add_argument(flag, dest=_PREFIX + spec.name, **kwargs)  # type: ignore[arg-type]  # argparse's kwargs are built from the command table at run time


#: argparse's own sentences that a person of alma-ctl can meet (CPython 3.11's wording), so that
#: the catalog holds them. argparse asks for them through ``argparse._``, set below.
_ARGPARSE_MESSAGES = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("ignored explicit argument %r"),
    N_("not allowed with argument %s"),
)


def _argparse_plural(singular: str, plural: str, n: int) -> str:
    return _(singular) if n == 1 else _(plural)  # argparse fills in its %s itself


def translate_argparse() -> None:
    """Let ALMA's catalog answer :mod:`argparse`'s own sentences (alma-ctl, alma chat).

    argparse asks gettext for them in every parser it builds (a quarter of a call with
    alma-ctl's 31 parsers, docs/benchmarks.md); the catalog answers in the person's language
    for the cost of a dict lookup.
    """
    import argparse

    argparse._ = _  # type: ignore[attr-defined]  # argparse's private gettext alias
    argparse.ngettext = _argparse_plural  # type: ignore[attr-defined]  # same, for plurals


#: The exit codes, for the help of alma-ctl and alma chat.
EXIT_CODES_HELP = N_(
    "Exit codes: 0 ok, 1 error, 2 usage, 3 daemon not reachable, 4 refused by "
    "policy, 5 conflict, 6 no such id."
)


class UsageExit(SystemExit):
    """argparse's usage error, with its sentence: with --json it is the error's message."""

    def __init__(self, code: object, sentence: str) -> None:
        super().__init__(code)
        self.sentence = sentence


def build_parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):  # subparsers are made of the same class
        def error(self, message: str) -> NoReturn:
            try:
                super().error(message)  # the usage and the sentence to stderr, as always
            except SystemExit as exc:
                raise UsageExit(exc.code, message) from None
            raise AssertionError("argparse's error() returned")  # pragma: no cover

    translate_argparse()
    parser: argparse.ArgumentParser = Parser(
        prog="alma-ctl",
        description=_("Control alma-agentd, ALMA's background service, for one ALMA root."),
        epilog=_(EXIT_CODES_HELP),
    )
    _add_globals(parser, top=True)
    top = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    init = top.add_parser("init", help=_("create the root's folders and default files (no daemon)"))
    init.add_argument("--with-examples", action="store_true", help=_("also store example memories"))
    _add_globals(init, top=False)
    init.set_defaults(wire=None)
    groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]] = {}
    for command in COMMANDS.values():
        if not command.cli:
            continue
        group, _dot, leaf = command.name.rpartition(".")
        if group:
            if group not in groups:
                holder = top.add_parser(group, help=_("{group} commands", group=group))
                _add_globals(holder, top=False)
                groups[group] = holder.add_subparsers(
                    dest=f"{group}_command", metavar="COMMAND", required=True
                )
            sub = groups[group].add_parser(leaf, help=_(command.help), description=_(command.help))
        else:
            sub = top.add_parser(leaf, help=_(command.help), description=_(command.help))
        for spec in command.args:
            _add_arg(sub, spec)
        if command.name == "memory.export":
            sub.add_argument(
                "--output", metavar="FILE", help=_("write JSONL to FILE (never overwritten)")
            )
        _add_globals(sub, top=False)
        sub.set_defaults(wire=command.name)
    return parser


class _Line:
    """What a command line asks for, whichever reader read it. ``command`` None is ``init``."""

    __slots__ = ("args", "as_json", "command", "output", "root", "with_examples")

    def __init__(
        self,
        command: Command | None,
        args: dict[str, object],
        *,
        root: str | None,
        as_json: bool,
        output: str | None = None,
        with_examples: bool = False,
    ) -> None:
        self.command = command
        self.args = args  # only what the person gave: the daemon fills in the table's defaults
        self.root = root
        self.as_json = as_json
        self.output = output
        self.with_examples = with_examples

    def _key(self) -> tuple[object, ...]:
        name = None if self.command is None else self.command.name
        return (name, self.args, self.root, self.as_json, self.output, self.with_examples)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Line) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable: compared, never hashed

    def __repr__(self) -> str:
        return f"_Line{self._key()!r}"


def _parsed_line(ns: argparse.Namespace) -> _Line:
    if ns.command == "init":
        return _Line(None, {}, root=ns.root, as_json=bool(ns.json), with_examples=ns.with_examples)
    command = COMMANDS[ns.wire]
    args: dict[str, object] = {}
    for spec in command.args:
        value = getattr(ns, _PREFIX + spec.name, None)
        if value is not None:
            args[spec.name] = value
    return _Line(
        command, args, root=ns.root, as_json=bool(ns.json), output=getattr(ns, "output", None)
    )


def _argparse_line(argv: list[str]) -> _Line:
    """Read ``argv`` with argparse; a usage error or ``--help`` raises :class:`SystemExit`."""
    return _parsed_line(build_parser().parse_args(argv))


#: The first words of the two-word commands (``memory``, ``suggestions``, ...).
_GROUPS = frozenset(
    name.partition(".")[0] for name, command in COMMANDS.items() if "." in name and command.cli
)


_NOT_SURE = None  # what _quick_line returns when argparse must read the line


def _quick_value(spec: Arg, raw: str) -> object:
    """``raw`` as argparse would store it for ``spec``; None when argparse would refuse it."""
    value: object = raw
    if spec.type == "int":
        try:
            value = int(raw)  # the very conversion argparse applies (type=int)
        except ValueError:
            return _NOT_SURE
    if spec.choices and value not in spec.choices:
        return _NOT_SURE
    return value


def _quick_line(argv: list[str]) -> _Line | None:
    """Read a plain command line without argparse, or return None (then argparse reads it).

    Accepted: ``--root DIR``, ``--root=DIR`` and ``--json`` anywhere; the command words; the
    command's options by their exact flags (``--flag VALUE``, ``--flag=VALUE``, booleans bare),
    their values converted and checked against the choices as argparse does; its positionals in
    one run, in order. Anything else (``-h``, an unknown or abbreviated option, a value that
    starts with ``-``, a missing required argument, a bad number, positionals split by options,
    ``init``) returns None, so argparse gives the help or the usage error.
    """
    root: str | None = None
    as_json = False
    output: str | None = None
    group = ""
    command: Command | None = None
    flags: dict[str, Arg] = {}
    values: dict[str, object] = {}
    positionals: list[str] = []
    positionals_closed = False  # an option came after the positionals: argparse's greedy
    index = 0  # matching of optional positionals would read a second run differently
    while index < len(argv):
        token = argv[index]
        index += 1
        if not token.startswith("-"):
            if command is not None:
                if positionals_closed:
                    return _NOT_SURE
                positionals.append(token)
                continue
            name = f"{group}.{token}" if group else token
            if name in COMMANDS and COMMANDS[name].cli:
                command = COMMANDS[name]
                flags = {
                    spec.flag or "--" + spec.name.replace("_", "-"): spec
                    for spec in command.args
                    if not spec.positional
                }
            elif not group and token in _GROUPS:
                group = token
            else:
                return _NOT_SURE  # init, a typo, an unknown command: argparse says what is valid
            continue
        if positionals:
            positionals_closed = True
        flag, equals, inline = token.partition("=")
        if token == "--json":
            as_json = True
            continue
        is_output = command is not None and command.name == "memory.export" and flag == "--output"
        spec = flags.get(flag)
        if flag != "--root" and not is_output and spec is None:
            return _NOT_SURE
        if spec is not None and spec.type == "bool":
            if equals:
                return _NOT_SURE
            values[spec.name] = True
            continue
        if equals:
            if not inline:
                return _NOT_SURE
            raw = inline
        else:
            if index >= len(argv) or argv[index].startswith("-"):
                return _NOT_SURE
            raw = argv[index]
            index += 1
        if flag == "--root":
            root = raw
        elif is_output:
            output = raw
        elif spec is not None:
            value = _quick_value(spec, raw)
            if value is _NOT_SURE:
                return _NOT_SURE
            if spec.type == "list[str]":
                listed = values.setdefault(spec.name, [])
                assert isinstance(listed, list)
                listed.append(value)
            else:
                values[spec.name] = value
    if command is None:
        return _NOT_SURE
    places = [spec for spec in command.args if spec.positional]
    if any(spec.type == "list[str]" for spec in places):
        return _NOT_SURE  # a run of any length: argparse's nargs="*" reads it
    if len(positionals) > len(places):
        return _NOT_SURE
    for spec, raw in zip(places, positionals, strict=False):
        value = _quick_value(spec, raw)
        if value is _NOT_SURE:
            return _NOT_SURE
        values[spec.name] = value
    missing = [spec for spec in command.args if spec.required and spec.name not in values]
    if missing:
        return _NOT_SURE
    args = {spec.name: values[spec.name] for spec in command.args if spec.name in values}
    return _Line(command, args, root=root, as_json=as_json, output=output)


# --------------------------------------------------------------------------- output


def _utf8(stream: object) -> None:
    # Spanish text must print on any locale; a stray surrogate must not crash the print.
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")


def _print_json(value: object) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def _print_error_json(code: int, message: str) -> None:
    """With --json, a failure too is one document on stdout (contract §2)."""
    _print_json({"ok": False, "error": {"code": int(code), "message": message}})


def _wants_json(argv: list[str]) -> bool:
    """``--json`` among the options of a line argparse could not read (not after ``--``)."""
    return "--json" in (argv[: argv.index("--")] if "--" in argv else argv)


#: How a field of an answer is named for a person (the JSON keeps the wire names). A key
#: missing here is shown with its underscores as spaces: add its label when you add a field.
_LABELS: dict[str, str] = {
    "id": N_("ID"),
    "status": N_("STATUS"),
    "kind": N_("KIND"),
    "files": N_("FILES"),
    "needs_approval": N_("NEEDS_APPROVAL"),
    "title": N_("TITLE"),
    "suggestion_id": N_("SUGGESTION_ID"),
    "ops": N_("OPS"),
    "auto": N_("AUTO"),
    "finished_at": N_("FINISHED_AT"),
    "undone_by": N_("UNDONE_BY"),
    "action": N_("ACTION"),
    "original": N_("ORIGINAL"),
    "trash": N_("TRASH"),
    "trashed_at": N_("TRASHED_AT"),
    "folder": N_("FOLDER"),
    "proposed": N_("PROPOSED"),
    "accepted": N_("ACCEPTED"),
    "rejected": N_("REJECTED"),
    "undone": N_("UNDONE"),
    "useful": N_("USEFUL"),
    "useless": N_("USELESS"),
    "time": N_("TIME"),
    "bytes": N_("BYTES"),
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
    "unusable": N_("given up because"),
    "embedded": N_("the small built-in model"),
    "ready": N_("ready"),
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
    )
)


def _label(key: str, table: dict[str, str] = _FIELD_LABELS) -> str:
    label = table.get(key)
    return _(label) if label is not None else key.replace("_", " ")


def _word(value: object) -> object:
    return _(value) if isinstance(value, str) and value in _WORDS else value


def _cell(value: object, width: int = 60) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, list):
        value = ", ".join(_cell(item, width) for item in value)
    text = " ".join(str(value).split())  # one line per row, whatever the text holds
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(rows: list[object], columns: tuple[str, ...] = ()) -> str:
    dicts = [row for row in rows if isinstance(row, dict)]
    if len(dicts) != len(rows):
        return "\n".join(_cell(row, 200) for row in rows)
    if not columns:
        seen: dict[str, None] = {}
        for row in dicts:
            seen.update(dict.fromkeys(key for key in row if not isinstance(row[key], dict | list)))
        columns = tuple(seen)
    heads = [_label(col, _LABELS).upper() for col in columns]
    cells = [[_cell(_word(row.get(col))) for col in columns] for row in dicts]
    widths = [max([len(head)] + [len(line[i]) for line in cells]) for i, head in enumerate(heads)]
    out = ["  ".join(head.ljust(w) for head, w in zip(heads, widths, strict=True))]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(line.rstrip() for line in out)


def _fields(value: object, indent: str = "") -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _table(value) if value else _("(none)")
    if not isinstance(value, dict):
        return "" if value is None else json.dumps(value, ensure_ascii=False)
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            inner = ", ".join(f"{_label(k)} {_cell(_word(v))}" for k, v in item.items())
            lines.append(f"{indent}{_label(key)}: {inner}")
        else:
            lines.append(f"{indent}{_label(key)}: {_cell(_word(item), 200)}")
    return "\n".join(lines)


def _op(op: object) -> str:
    if not isinstance(op, dict):
        return _cell(op, 200)
    name = _OPS.get(str(op.get("op", "?")))
    shown = _(name) if name is not None else str(op.get("op", "?"))
    if "src" in op and "dst" in op:
        where = f"{op['src']} -> {op['dst']}"
    else:
        where = str(op.get("path", ""))
    if op.get("op") == "edit":  # its bytes are shown as a diff below the plan
        return f"{shown:<8} {where}"
    if op.get("op") == "create":
        return f"{shown:<8} " + _("{path} (a new file; its content is shown below)", path=where)
    extra = [f"{k}={_cell(v)}" for k, v in op.items() if k not in ("op", "src", "dst", "path")]
    return f"{shown:<8} {where}" + (f"  ({', '.join(extra)})" if extra else "")


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
}


def _suggestion(value: object) -> str:
    if not isinstance(value, dict):
        return _fields(value)
    plan = value.get("plan") or []
    evidence = value.get("evidence") or []
    diffs = value.get("diffs") or []
    shown_apart = ("plan", "evidence", "title", "plan_total", "plan_summary", "diffs")
    head = {k: v for k, v in value.items() if k not in shown_apart}
    title = _("Suggestion {id}: {title}", id=value.get("id"), title=value.get("title", ""))
    lines = [title, _fields(head, "  ")]
    if evidence:
        lines.append(_("Evidence:"))
        lines += [f"  - {_cell(item, 200)}" for item in evidence]
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
        return _fields(value)
    values = {
        "id": value.get("id"),
        "kind": value.get("kind", "?"),
        "status": _word(value.get("status", "?")),
    }
    text = ngettext(
        "Action {id}: {kind} {status}, {n} op",
        "Action {id}: {kind} {status}, {n} ops",
        int(value.get("ops") or 0),
        **values,
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
        return _("No memories found.") if isinstance(value, list) else _fields(value)
    lines = []
    for item in value:
        if not isinstance(item, dict):
            lines.append(_cell(item, 200))
            continue
        score = item.get("score")
        lead = f"[{score:.2f}] " if isinstance(score, int | float) else ""
        tags = " ".join(f"#{t}" for t in item.get("tags") or [])
        lines.append(f"{lead}{item.get('id')}  {_cell(item.get('content'), 100)}  {tags}".rstrip())
    return "\n".join(lines)


def _context(value: object) -> str:
    if isinstance(value, dict):
        for key in ("context", "text"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return _fields(value)


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


def _stats(value: object) -> str:
    """The track record: counts per kind and per folder, then what the rules decided."""
    if not isinstance(value, dict):
        return _fields(value)
    kinds, folders = value.get("kinds") or [], value.get("folders") or []
    out = [_table(kinds, ("kind", *COUNTED_OUTCOMES)) if kinds else _("Nothing proposed yet.")]
    if folders:
        out += ["", _table(folders, ("kind", "folder", *COUNTED_OUTCOMES))]
    for item in value.get("stopped") or []:
        out += [
            "",
            _(
                "No longer proposed: {kind} in {folder}. `{lift}` proposes it there again.",
                kind=item["kind"],
                folder=item["folder"],
                lift=item["lift"],
            ),
        ]
    for item in value.get("auto_stopped") or []:
        out += [
            "",
            _(
                "No longer runs on its own: {kind}. `{lift}` lets it again.",
                kind=item["kind"],
                lift=item["lift"],
            ),
        ]
    for item in value.get("promotable") or []:
        out += [
            "",
            _(
                "Could run on its own: {kind}, accepted {accepted} times and never undone. "
                "Only you can allow it: in {file}, section {section}, write {line}",
                **item,
            ),
        ]
    return "\n".join(out)


def _list_or(empty: str, columns: tuple[str, ...] = ()) -> Callable[[object], str]:
    def render(value: object) -> str:
        if isinstance(value, list):
            return _table(value, columns) if value else _(empty)
        return _fields(value)

    return render


def _status(value: object) -> str:
    """The daemon's fields, then what it watches: a line, and the limit's warning in full."""
    if not isinstance(value, dict):
        return _fields(value)
    shown_apart = ("watch", "audit_problem", "model")
    lines = [_fields({k: v for k, v in value.items() if k not in shown_apart})]
    model = value.get("model")
    if isinstance(model, dict):
        lines.append(_model_line(model))
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
                    limit=_cell(watch.get("limit")),
                )
            )
        if watch.get("warning"):
            lines.append(_("WARNING: {text}", text=watch["warning"]))
    return "\n".join(line for line in lines if line)


def _model_line(model: dict[str, object]) -> str:
    name = os.path.basename(str(model.get("path") or "")) or _("no model set")
    return _("model: {name} ({state})", name=name, state=_cell(_word(model.get("state"))))


def _model(value: object) -> str:
    """``model status``: its fields, and why it cannot answer in full (never cut)."""
    if not isinstance(value, dict):
        return _fields(value)
    hidden = ("error", "unusable", "embedded")
    lines = [_fields({k: v for k, v in value.items() if k not in hidden})]
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
        return _fields(value)
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
            "Restored into a new folder (action {id}; `alma-ctl undo {id}` removes it again "
            "while nothing in it has changed).",
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


_RENDER: dict[str, Callable[[object], str]] = {
    "status": _status,
    "model.status": _model,
    "model.use": _model,
    "suggestions.list": _list_or(
        N_("No suggestions."), ("id", "status", "kind", "files", "needs_approval", "title")
    ),
    "suggestions.show": _suggestion,
    "suggestions.accept": _action,
    "undo": _action,
    "trash.restore": _action,
    "history": _list_or(
        N_("No actions yet."),
        ("id", "suggestion_id", "kind", "status", "ops", "auto", "finished_at", "undone_by"),
    ),
    "memory.search": _memories,
    "memory.list": _memories,
    "context": _context,
    "trash.list": _list_or(N_("The trash is empty.")),
    "stats": _stats,
    "report": _report,
    "backup.list": _list_or(N_("No snapshots yet."), ("id", "time", "files", "bytes")),
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
    if wire == "memory.restore":
        return _("Restored memory {id}.", id=args["id"])
    if wire == "suggestions.reject":
        return _("Rejected suggestion {id}.", id=args["id"])
    return _fields(result) or _("Done.")


# --------------------------------------------------------------------------- commands


class _Outcome:
    """What a command printed for --json and for people, and its exit code."""

    __slots__ = ("code", "human", "json")

    def __init__(self, json_value: object, human: str, code: int = EXIT_OK) -> None:
        self.json = json_value
        self.human = human
        self.code = code


def _write_new(path: str | os.PathLike[str], data: bytes, mode: int = SHARED_FILE) -> bool:
    """Write a file that must not exist yet; False (and nothing written) if it does."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return True


def _init(root: Path, with_examples: bool) -> _Outcome:
    from policies.defaults import DEFAULT_PERSONA_MD, DEFAULT_POLICY_TOML, DEFAULT_PRINCIPLES_MD
    from policies.layout import ROOT_FOLDERS, RootLayout
    from policies.modes import SHARED_DIR, ensure_private_dir

    if root.exists() and not root.is_dir():
        raise AlmaError(_("{path} exists and is not a folder; choose another --root.", path=root))
    layout = RootLayout(root)
    created: list[str] = []
    kept: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    for folder in ROOT_FOLDERS:
        path = root / folder
        if path == layout.data:  # private data: created or narrowed to 0700, never left loose
            existed = path.is_dir()
            try:
                ensure_private_dir(path)
            except PermissionError as exc:
                raise AlmaError(str(exc)) from None
            (kept if existed else created).append(folder + "/")
            continue
        try:
            path.mkdir(mode=SHARED_DIR)
            created.append(folder + "/")
        except FileExistsError:
            if not path.is_dir():
                raise AlmaError(
                    _("{path} exists and is not a folder; move it away.", path=path)
                ) from None
            kept.append(folder + "/")
    for path, text in (
        (layout.policy_file, DEFAULT_POLICY_TOML),
        (layout.principles_file, DEFAULT_PRINCIPLES_MD),
        (layout.persona_file, DEFAULT_PERSONA_MD),
    ):
        rel = path.relative_to(root).as_posix()
        (created if _write_new(path, text.encode("utf-8")) else kept).append(rel)
    result: dict[str, object] = {"root": str(root), "created": created, "kept": kept}
    made = ", ".join(created) or _("nothing")
    if kept:
        human = _(
            "ALMA root {root}: created {created}; kept existing {kept}.",
            root=root,
            created=made,
            kept=", ".join(kept),
        )
    else:
        human = _("ALMA root {root}: created {created}.", root=root, created=made)
    if with_examples:
        result["examples"], note = _examples(root)
        human += "\n" + note
    human += "\n" + _("Start the daemon with `{command}`.", command=daemon_start_hint(root))
    return _Outcome(result, human)


def _examples(root: Path) -> tuple[object, str]:
    from control.client import Client, DaemonUnreachable
    from control.protocol import socket_path_for

    client = Client(
        socket_path_for(root),
        COMMANDS["memory.examples"].timeout,
        start_hint=daemon_start_hint(root),
    )
    try:
        result = client.call("memory.examples")
        return result, _("Example memories stored by the daemon.")
    except DaemonUnreachable:
        pass
    import subprocess

    cmd = [sys.executable, "-m", "agent.memory.examples", "--root", str(root)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or [_("no message")]
        raise AlmaError(
            _(
                "Storing the example memories failed ({reason}); run `{command}` to see why.",
                reason=last[0].strip(),
                command=" ".join(cmd),
            )
        )
    # It must say what it stored: a silent exit 0 is not a success.
    try:
        added = json.loads(done.stdout.strip().splitlines()[-1])["added"]
    except (IndexError, ValueError, KeyError, TypeError):
        raise AlmaError(
            _(
                "Storing the example memories did not report a result; run `{command}` to see why.",
                command=" ".join(cmd),
            )
        ) from None
    stored = ngettext("{n} example memory stored.", "{n} example memories stored.", added)
    return {"via": "subprocess", "added": added}, stored


def daemon_start_hint(root: str | os.PathLike[str]) -> str:
    from shlex import quote

    return f"alma-agentd --root {quote(str(root))}"


def _status_unreachable(root: str, socket: str) -> _Outcome:
    from policies.layout import is_initialized

    doc: dict[str, object] = {"running": False, "root": str(root), "socket": str(socket)}
    if not is_initialized(root):
        from shlex import quote

        doc["initialized"] = False
        human = _(
            "{root} is not an ALMA root yet; create it with `{init}`, "
            "then start the daemon with `{command}`.",
            root=root,
            init=f"alma-ctl --root {quote(root)} init",
            command=daemon_start_hint(root),
        )
        return _Outcome(doc, human, EXIT_UNREACHABLE)
    human = _(
        "alma-agentd is not running for {root} (no answer on {socket}); start it with `{command}`.",
        root=root,
        socket=socket,
        command=daemon_start_hint(root),
    )
    return _Outcome(doc, human, EXIT_UNREACHABLE)


def _export(result: object, output: str | None) -> _Outcome:
    records = result if isinstance(result, list) else None
    if records is not None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    else:
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    if output is None:
        return _Outcome(result, text.rstrip("\n"))
    if not _write_new(output, text.encode("utf-8"), PRIVATE_FILE):  # memories are private
        raise AlmaError(
            _("{path} already exists; alma-ctl never overwrites, choose another file.", path=output)
        )
    count = len(records) if records is not None else None
    if count is None:
        wrote = _("Wrote the examples to {path}.", path=output)
    else:
        wrote = ngettext(
            "Wrote {n} example to {path}.", "Wrote {n} examples to {path}.", count, path=output
        )
    return _Outcome({"output": output, "records": count}, wrote)


def _run(line: _Line) -> _Outcome:
    from policies.i18n import follow_root_language
    from policies.layout import language_file, root_name

    root = root_name(line.root)
    follow_root_language(language_file(root))
    if line.command is None:
        from pathlib import Path

        return _init(Path(root), line.with_examples)
    from control.client import Client, DaemonUnreachable
    from control.protocol import socket_name_for

    command = line.command
    socket = socket_name_for(root)
    client = Client(socket, command.timeout, start_hint=daemon_start_hint(root))
    args = line.args
    if command.name == "suggestions.show" and not line.as_json and "all" not in args:
        args = {**args, "all": False}  # a person reads a long plan as its summary (--all: all)
    if command.name == "model.use":
        args = {**args, "path": _model_path(str(args["path"]))}
    if command.name == "backup.init":
        secret = args.get("password_file")
        secret = _full(str(secret)) if secret else _ask_password(root)
        args = {**args, "target": _full(str(args["target"])), "password_file": secret}
    if command.name == "backup.restore":
        args = {**args, "to": _full(str(args["to"]))}
    try:
        result = client.call(command.name, **args)
    except DaemonUnreachable:
        if command.name == "status":
            return _status_unreachable(root, socket)
        raise
    if command.name == "memory.export":
        return _export(result, line.output)
    return _Outcome(result, render_result(command.name, args, result))


def _full(path: str) -> str:
    """A path as the person typed it, from where they typed it (the daemon's folder is not)."""
    return os.path.abspath(os.path.expanduser(path))


def _ask_password(root: str) -> str:
    """Ask the backup password on the terminal (twice) and keep it in a 0600 file of the
    person's, outside the root ($XDG_CONFIG_HOME/alma): the daemon needs it for the daily
    backup, and the root, which is what gets backed up, must never hold it."""
    import getpass
    import hashlib

    if not sys.stdin.isatty():
        raise AlmaError(
            _("No terminal to ask the backup password on; give it with --password-file F.")
        )
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    folder = os.path.join(config, "alma")
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    path = os.path.join(folder, f"backup-{digest}.password")
    if os.path.lexists(path):
        raise AlmaError(
            _(
                "{path} already holds a backup password for this root; pass it with "
                "--password-file {path}, or move it away to choose a new one.",
                path=path,
            )
        )
    first = getpass.getpass(_("Backup password (keep a copy away from this computer): "))
    if not first:
        raise AlmaError(_("An empty password protects nothing; nothing was created."))
    if getpass.getpass(_("The same password again: ")) != first:
        raise AlmaError(_("The two passwords differ; nothing was created."))
    from policies.modes import ensure_private_dir

    os.makedirs(config, exist_ok=True)
    ensure_private_dir(folder)
    if not _write_new(path, first.encode("utf-8") + b"\n", PRIVATE_FILE):
        raise AlmaError(_("{path} appeared meanwhile; run the command again.", path=path))
    return path


def _model_path(path: str) -> str:
    """A model file named as the person typed it, from where they typed it: the daemon's own
    working folder (systemd's is /) means nothing to them. ``embedded`` and a server's URL go
    as they are (agent.voice.model reads them)."""
    word = path.strip()
    # Nothing given stays nothing, for the command table to refuse: "" would be the cwd.
    if not word or word == "embedded" or word.startswith(("http://", "https://")):
        return path
    return os.path.abspath(os.path.expanduser(path))


def main(argv: list[str] | None = None) -> int:
    _utf8(sys.stdout)
    _utf8(sys.stderr)
    argv = sys.argv[1:] if argv is None else argv
    line = _quick_line(argv)
    if line is None:
        try:
            line = _argparse_line(argv)
        except SystemExit as exc:  # argparse: usage errors exit 2, --help exits 0
            code = exc.code if isinstance(exc.code, int) else 2
            if code and isinstance(exc, UsageExit) and _wants_json(argv):
                _print_error_json(ErrorCode.BAD_ARGUMENT, exc.sentence)
            return code
    as_json = line.as_json
    try:
        outcome = _run(line)
    except AlmaError as exc:
        from control.client import DaemonUnreachable

        code = EXIT_UNREACHABLE if isinstance(exc, DaemonUnreachable) else exit_code_for(exc.code)
        if as_json:
            _print_error_json(exc.code, exc.message)
        sys.stderr.write(printable(exc.message) + "\n")
        return code
    except KeyboardInterrupt:
        sys.stderr.write(_("Interrupted.") + "\n")
        return 130
    except OSError as exc:  # local files (init, --output): say which and why, no traceback
        sentence = f"{exc.filename or 'alma-ctl'}: {exc.strerror or exc}."
        if as_json:
            _print_error_json(ErrorCode.INTERNAL, sentence)
        sys.stderr.write(printable(sentence) + "\n")
        return EXIT_ERROR
    except Exception as exc:  # a bug in alma-ctl: one sentence for people, the trace on request
        if os.environ.get("ALMA_DEBUG"):
            raise
        sentence = _(
            "alma-ctl failed unexpectedly ({error}); "
            "run again with ALMA_DEBUG=1 for details and report it.",
            error=f"{type(exc).__name__}: {exc}",
        )
        if as_json:
            _print_error_json(ErrorCode.INTERNAL, sentence)
        sys.stderr.write(printable(sentence) + "\n")
        return EXIT_ERROR
    if as_json:
        _print_json(outcome.json)
    elif outcome.human:
        sys.stdout.write(printable(outcome.human) + "\n")
    sys.stdout.flush()
    return outcome.code


if __name__ == "__main__":
    sys.exit(main())
