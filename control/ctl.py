"""alma-ctl: the person's command line to alma-agentd (contract §2).

Reads the line (control.cli), sends the command through the socket client, and shows the
answer with the renderer alma chat shares (control.views); ``init`` (control.rootinit) needs
no daemon. Imports only the standard library and the leaf modules of ``policies`` at start, the
rest lazily, so a short command starts fast (docs/benchmarks.md). Exit codes: 0 ok, 1 error,
2 usage, 3 daemon not reachable, 4 refused, 5 conflict, 6 no such id.
"""

from __future__ import annotations

import errno
import io
import json
import os
import sys
from typing import TYPE_CHECKING

from control.cli import WEB, Help, Line, UsageError, read_line
from control.commands import Command
from control.protocol import daemon_start_hint
from policies.errors import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    AlmaError,
    BadArgumentError,
    ConflictError,
    ErrorCode,
    exit_code_for,
)
from policies.i18n import N_, _, ngettext
from policies.modes import PRIVATE_DIR, PRIVATE_FILE
from policies.text import name_hex, printable, printable_name

if TYPE_CHECKING:
    from control.client import Client


class _Outcome:
    """What a command printed for --json and for people, and its exit code."""

    __slots__ = ("code", "human", "json")

    def __init__(self, json_value: object, human: str, code: int = EXIT_OK) -> None:
        self.json = json_value
        self.human = human
        self.code = code


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
    """``--json`` among the options of a line that could not be read (not after ``--``)."""
    return "--json" in (argv[: argv.index("--")] if "--" in argv else argv)


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


def _jsonl(rows: object) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _items(rows))


def _export(
    result: object, output: str | None, as_json: bool, folder: str | None = None
) -> _Outcome:
    """The training export: its rows into ``folder`` (``train.jsonl``, and ``valid.jsonl`` when
    the export is split), or to ``output`` (one file; a folder as ``folder`` is when the export
    is split), never over an existing file, or to stdout; and what was written, dropped and
    withheld, said."""
    if output is not None and folder is not None:
        raise BadArgumentError(
            _("Give `--output FILE` or `--dir DIR` to `alma-ctl memory export`, not both.")
        )
    doc = result if isinstance(result, dict) else {}
    summary = doc.get("summary") or {}
    withheld = _items(doc.get("withheld"))
    if doc.get("listing"):
        return _Outcome(doc, _withheld_listing(withheld))
    files = {"train.jsonl": _jsonl(doc.get("train")), "valid.jsonl": _jsonl(doc.get("valid"))}
    if not doc.get("split"):  # nothing kept for validation: one file of rows
        del files["valid.jsonl"]
    if folder is not None:
        output = folder
    if output is None:
        if not as_json:  # stdout is the rows; what was done goes to stderr
            sys.stderr.write(printable(_export_summary(summary, "-")) + "\n")
        return _Outcome(doc, "".join(files.values()).rstrip("\n"))
    from control.rootinit import write_new

    if folder is not None or doc.get("split"):
        from pathlib import Path

        where = Path(output)
        where.mkdir(mode=PRIVATE_DIR, exist_ok=True)  # training data is the person's, private
        taken = [str(where / n) for n in files if os.path.lexists(where / n)]
        if taken:
            raise AlmaError(_(_NEVER_OVERWRITES, path=taken[0]))
        targets = {str(where / name): text for name, text in files.items()}
    else:
        targets = {output: files["train.jsonl"]}
    for path, text in targets.items():
        if not write_new(path, text.encode("utf-8"), PRIVATE_FILE):
            raise AlmaError(_(_NEVER_OVERWRITES, path=path))
    return _Outcome({**doc, "output": output}, _export_summary(summary, output))


def _vault(result: object, folder: str) -> _Outcome:
    """An Obsidian vault: the daemon's notes written into ``folder``, a new or empty folder,
    all at once: into a private folder beside it first (each note a new file, never over
    anything: control.rootinit.write_new), then renamed to ``folder``, which a rename only
    does where nothing is or over an empty folder. Nothing is written over, nothing half."""
    doc = result if isinstance(result, dict) else {}
    withheld = _items(doc.get("withheld"))
    if doc.get("listing"):
        return _Outcome(doc, _withheld_listing(withheld, memories=True))
    import shutil
    import tempfile

    from control.rootinit import write_new

    where = os.path.normpath(folder)
    parent, name = os.path.split(where)
    taken = _(
        "{path} already exists and is not an empty folder; a vault is never written over "
        "anything: name a new folder.",
        path=where,
    )
    if os.path.islink(where) or (
        os.path.lexists(where) and (not os.path.isdir(where) or os.listdir(where))
    ):
        raise ConflictError(taken)
    if not os.path.isdir(parent):
        raise BadArgumentError(
            _("The folder {parent} does not exist; create it first.", parent=parent)
        )
    stage = tempfile.mkdtemp(prefix=f".{name}.alma-export-", dir=parent)  # 0700: private
    try:
        notes = [n for n in _items(doc.get("notes")) if isinstance(n, dict)]
        for note in notes:
            file_name = str(note.get("name", ""))
            if not file_name or file_name != os.path.basename(file_name) or file_name[0] == ".":
                raise AlmaError(
                    _(
                        "The daemon sent a note name that is not safe: {name}.",
                        name=printable_name(file_name),
                    )
                )
            text = str(note.get("text", "")).encode("utf-8")
            if not write_new(os.path.join(stage, file_name), text, PRIVATE_FILE):
                raise AlmaError(_(_NEVER_OVERWRITES, path=os.path.join(where, file_name)))
        try:
            os.rename(stage, where)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise ConflictError(taken) from None
            raise
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    assert isinstance(summary, dict)
    written = ngettext(
        "Wrote {n} note into {path}.", "Wrote {n} notes into {path}.", len(notes), path=where
    )
    lines = [written]
    dropped = summary.get("dropped") if isinstance(summary.get("dropped"), dict) else {}
    assert isinstance(dropped, dict)
    if dropped:
        parts = [_export_reason(str(k), v if isinstance(v, int) else 0) for k, v in dropped.items()]
        lines.append(_("Left out: {parts}.", parts=", ".join(parts)))
        lines.append(
            _("`--list-withheld` lists what was withheld; `--include ID` includes one of them.")
        )
    shown = {**doc, "notes": [n.get("name") for n in notes], "output": where}
    return _Outcome(shown, "\n".join(lines))


_NEVER_OVERWRITES = N_("{path} already exists; alma-ctl never overwrites, choose another file.")


def _export_summary(summary: dict[str, object], path: str) -> str:
    def number(key: str) -> int:
        value = summary.get(key)
        return value if isinstance(value, int) else 0

    lines = [
        ngettext(
            "Wrote {n} example to {path} ({train} to train, {valid} to validate).",
            "Wrote {n} examples to {path} ({train} to train, {valid} to validate).",
            number("examples"),
            path=path,
            train=number("train"),
            valid=number("valid"),
        )
    ]
    if summary.get("tokens_estimated"):
        lines.append(_("About {n} tokens (estimated: no model is loaded).", n=number("tokens")))
    else:
        lines.append(_("{n} tokens by the model's tokenizer.", n=number("tokens")))
    dropped = summary.get("dropped")
    reasons = dropped if isinstance(dropped, dict) else {}
    if reasons:
        parts = [_export_reason(str(k), v if isinstance(v, int) else 0) for k, v in reasons.items()]
        lines.append(_("Left out: {parts}.", parts=", ".join(parts)))
    if reasons.get("secret") or reasons.get("private"):
        lines.append(
            _("`--list-withheld` lists what was withheld; `--include ID` includes one of them.")
        )
    return "\n".join(lines)


def _export_reason(why: str, n: int) -> str:
    if why == "duplicate":
        return _("{n} exact duplicates", n=n)
    if why == "empty":
        return _("{n} with a near-empty turn", n=n)
    if why == "secret":
        return _("{n} holding a secret", n=n)
    return _("{n} marked private", n=n)


def _withheld_listing(withheld: list[object], *, memories: bool = False) -> str:
    if not withheld:
        return _("Nothing was withheld.")
    if memories:
        head = ngettext(
            "{n} memory withheld (nothing written):",
            "{n} memories withheld (nothing written):",
            len(withheld),
        )
    else:
        head = ngettext(
            "{n} example withheld (nothing written):",
            "{n} examples withheld (nothing written):",
            len(withheld),
        )
    lines = [head]
    for item in withheld:
        row = item if isinstance(item, dict) else {}
        why = ", ".join(str(k) for k in _items(row.get("kinds"))) or str(row.get("why", ""))
        lines.append(f"  {row.get('id')}  {row.get('day')}  [{why}]  {row.get('preview')}")
    lines.append(_("Include one with `--include ID`, or all with `--include-secrets`."))
    return "\n".join(lines)


def _run(line: Line) -> _Outcome:
    from policies.i18n import follow_root_language
    from policies.layout import language_file, root_name

    root = root_name(line.root)
    follow_root_language(language_file(root))
    if line.command is None:
        from pathlib import Path

        from control.rootinit import init_root

        return _Outcome(*init_root(Path(root), line.with_examples))
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
        if args.get("lora"):
            args["lora"] = _full(str(args["lora"]))
    if command.name == "backup.init":
        secret = args.get("password_file")
        secret = _full(str(secret)) if secret else _ask_password(root)
        args = {**args, "target": _full(str(args["target"])), "password_file": secret}
    if command.name == "backup.restore":
        args = _names_as_hex({**args, "to": _full(str(args["to"]))})
    if command.name == "memory.export" and args.get("vault") is not None:
        if line.output is not None or line.folder is not None:
            raise BadArgumentError(
                _("A vault is written into DIR; `--output` and `--dir` are for training data.")
            )
        args = {**args, "vault": _full(str(args["vault"]))}
    if command is WEB:
        return _web(client, root, bool(args.get("open")))
    _refuse_not_utf8(command, args)
    try:
        result = client.call(command.name, **args)
    except DaemonUnreachable:
        if command.name == "status":
            return _status_unreachable(root, socket)
        raise
    if command.name == "memory.export" and args.get("vault") is not None:
        return _vault(result, str(args["vault"]))
    if command.name == "memory.export":
        return _export(result, line.output, line.as_json, line.folder)
    from control.views import render_result

    return _Outcome(result, render_result(command.name, args, result))


def _web(client: Client, root: str, open_it: bool) -> _Outcome:
    """The panel's login address: the daemon must answer first (exit 3 as any command when it
    does not), then the panel, which the daemon runs, mints a one-time token."""
    from control.web import login_url

    client.call("status")
    url = login_url(root)
    if open_it:
        import webbrowser

        webbrowser.open(url)
    return _Outcome({"url": url}, url)


def _names_as_hex(args: dict[str, object]) -> dict[str, object]:
    """A restore's PATHs that are not UTF-8 (a name a Latin-1 system wrote) go as the hex of
    their bytes, the one way a name that is not text travels in JSON."""
    paths = [str(p) for p in _items(args.get("paths"))]
    text = [p for p in paths if _is_utf8(p)]
    if len(text) == len(paths):
        return args
    given = [str(h) for h in _items(args.get("paths_hex"))]
    odd = [name_hex(p) for p in paths if not _is_utf8(p)]
    return {**args, "paths": text, "paths_hex": given + odd}


def _items(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _refuse_not_utf8(command: Command, args: dict[str, object]) -> None:
    """An argument that is not UTF-8 text (its bytes came from the command line as they are)
    is one sentence naming it, never a traceback: the socket carries text only."""
    for name, value in args.items():
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if isinstance(item, str) and not _is_utf8(item):
                spec = command.by_name.get(name)
                raise BadArgumentError(
                    _(
                        "{arg} {value} is not UTF-8 text; rename it, or name a folder above it.",
                        arg=spec.spelling if spec is not None else name,
                        value=printable_name(item),
                    )
                )


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
    from control.rootinit import write_new
    from policies.modes import ensure_private_dir

    os.makedirs(config, exist_ok=True)
    ensure_private_dir(folder)
    if not write_new(path, first.encode("utf-8") + b"\n", PRIVATE_FILE):
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
    try:
        line = read_line(argv)
    except Help as asked:
        asked.show()
        return EXIT_OK
    except UsageError as exc:
        exc.show()
        if _wants_json(argv):
            _print_error_json(ErrorCode.BAD_ARGUMENT, exc.sentence)
        return EXIT_USAGE
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
