"""The command lines of alma-ctl and alma chat: one reader, worded from the command table.

The table (control.commands) says which commands, arguments, types, choices and flags exist;
:func:`read_line` turns alma-ctl's line into a :class:`Line`, or raises :class:`Help` or
:class:`UsageError`, whose texts it words from the same table. :func:`read_options` reads a program
without commands (alma chat) the same way. argparse is not imported: with its sub-parsers (and
the gettext and shutil it loads) it would be a large part of a short command's start
(docs/benchmarks.md).

What a person may rely on is argparse's way: ``--flag=value`` and ``--flag value``; ``--``
ends the options; a negative number, ``-`` and a word with a space are values, not options;
``--root``/``--json`` before the command or after it; the last of a repeated option wins, a
list option gathers; its usage line and error sentences (the catalog holds them). Options are
named in full: a prefix of one is not read as the option.
"""

from __future__ import annotations

import sys

from control.commands import COMMANDS, Arg, Command
from policies.i18n import N_, _

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: The exit codes, for the help of alma-ctl and alma chat.
EXIT_CODES_HELP = N_(
    "Exit codes: 0 ok, 1 error, 2 usage, 3 daemon not reachable, 4 refused by "
    "policy, 5 conflict, 6 no such id."
)

ROOT = Arg(
    "root", "str", metavar="DIR", help=N_("the ALMA root (default: $ALMA_ROOT, else ~/ALMA)")
)
_JSON = Arg("json", "bool", help=N_("print one JSON document on stdout"))
_HELP_FLAGS = ("-h", "--help")
_WORD = Arg("command", "str", positional=True, metavar="COMMAND")  # the word choosing a command

#: ``init`` works on the root's files without the daemon, so it is not in the socket's table.
_INIT = Command(
    "init",
    N_("create the root's folders and default files (no daemon)"),
    (Arg("with_examples", "bool", help=N_("also store example memories")),),
)
#: ``web`` asks the panel (control.web) for its login address: the panel, not the daemon,
#: answers it, so it is not in the socket's table either.
WEB = Command(
    "web",
    N_("the local web panel: its address with a one-time login token"),
    (Arg("open", "bool", help=N_("open it in the browser")),),
)
#: Options alma-ctl reads for itself, never sent to the daemon.
_LOCAL: dict[str, tuple[Arg, ...]] = {
    "memory.export": (
        Arg("output", "str", metavar="FILE", help=N_("write JSONL to FILE (never overwritten)")),
        Arg(
            "dir",
            "str",
            metavar="DIR",
            help=N_("write train.jsonl and valid.jsonl into DIR (never over a file there)"),
        ),
    ),
}


class Form:
    """What a line may hold at one point: a program's, a group's or one command's words.

    ``words`` (a program with commands, a group): the next word chooses the form that reads the
    rest. ``listing``: the commands its help shows, with their help. ``hidden``: places read but
    not shown in the help.
    """

    __slots__ = (
        "command",
        "description",
        "fields",
        "hidden",
        "listing",
        "options",
        "places",
        "prog",
        "words",
    )

    def __init__(
        self,
        prog: str,
        description: str,
        options: tuple[Arg, ...],
        places: tuple[Arg, ...] = (),
        *,
        words: dict[str, Callable[[], Form]] | None = None,
        listing: tuple[tuple[str, str], ...] = (),
        command: Command | None = None,
        hidden: tuple[str, ...] = (),
        fields: dict[str, object] | None = None,
    ) -> None:
        self.prog = prog
        self.description = description  # a msgid, with its fields
        self.fields = fields or {}
        self.options = options
        self.places = places
        self.words = words
        self.listing = listing
        self.command = command
        self.hidden = hidden

    def flags(self) -> dict[str, Arg]:
        return {spec.spelling: spec for spec in self.options}


class UsageError(Exception):
    """A line that cannot be read: its one sentence, and the usage of what was being read."""

    def __init__(self, form: Form, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.prog = form.prog
        self.usage = usage_line(form)

    def show(self) -> None:
        message = _("%(prog)s: error: %(message)s\n") % {
            "prog": self.prog,
            "message": self.sentence,
        }
        sys.stderr.write(self.usage + message)


class Help(Exception):
    """``-h``/``--help``: the help of what was being read when it came."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def show(self) -> None:
        sys.stdout.write(self.text)


class Line:
    """What alma-ctl's line asks for. ``command`` None is ``init``."""

    __slots__ = ("args", "as_json", "command", "folder", "output", "root", "with_examples")

    def __init__(
        self,
        command: Command | None,
        args: dict[str, object],
        *,
        root: str | None,
        as_json: bool,
        output: str | None = None,
        folder: str | None = None,
        with_examples: bool = False,
    ) -> None:
        self.command = command
        self.args = args  # only what the person gave: the daemon fills in the table's defaults
        self.root = root
        self.as_json = as_json
        self.output = output
        self.folder = folder  # --dir: the export's folder (train.jsonl, valid.jsonl)
        self.with_examples = with_examples

    def _key(self) -> tuple[object, ...]:
        name = None if self.command is None else self.command.name
        return (
            name,
            self.args,
            self.root,
            self.as_json,
            self.output,
            self.folder,
            self.with_examples,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Line) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable: compared, never hashed

    def __repr__(self) -> str:
        return f"Line{self._key()!r}"


# --------------------------------------------------------------------------- alma-ctl's forms


def _command_form(command: Command) -> Form:
    own = tuple(spec for spec in command.args if not spec.positional)
    places = tuple(spec for spec in command.args if spec.positional)
    return Form(
        f"alma-ctl {command.spelling}",
        command.help,
        (*own, *_LOCAL.get(command.name, ()), ROOT, _JSON),
        places,
        command=command,
    )


def _group_form(group: str, leaves: dict[str, Command]) -> Form:
    return Form(
        f"alma-ctl {group}",
        N_("{group} commands"),
        (ROOT, _JSON),
        fields={"group": group},
        words={leaf: _chooser(command) for leaf, command in leaves.items()},
        listing=tuple((leaf, command.help) for leaf, command in leaves.items()),
    )


def _chooser(command: Command) -> Callable[[], Form]:
    return lambda: _command_form(command)


def _group_chooser(group: str, leaves: dict[str, Command]) -> Callable[[], Form]:
    return lambda: _group_form(group, leaves)


def _either_chooser(command: Command, leaves: dict[str, Command]) -> Callable[[], Form]:
    def form() -> Form:
        either = _command_form(command)
        either.words = {leaf: _chooser(sub) for leaf, sub in leaves.items()}
        either.listing = tuple((leaf, sub.help) for leaf, sub in leaves.items())
        return either

    return form


def _top_form() -> Form:
    words: dict[str, Callable[[], Form]] = {"init": _chooser(_INIT), "web": _chooser(WEB)}
    groups: dict[str, dict[str, Command]] = {}
    alone: dict[str, Command] = {}  # commands of one word, which may also be a group's
    for command in COMMANDS.values():
        if not command.cli:
            continue
        group, _dot, leaf = command.name.rpartition(".")
        if not group:
            alone[leaf] = command
            words[leaf] = _chooser(command)
            continue
        if group not in groups:
            groups[group] = {}
            words[group] = _group_chooser(group, groups[group])
        groups[group][leaf] = command
    for name, leaves in groups.items():
        if name in alone:  # `report DATE` and `report days`: a leaf's word, else the command's
            words[name] = _either_chooser(alone[name], leaves)
    listing = (_INIT, *(command for command in COMMANDS.values() if command.cli), WEB)
    return Form(
        "alma-ctl",
        N_("Control alma-agentd, ALMA's background service, for one ALMA root."),
        (ROOT, _JSON),
        words=words,
        listing=tuple((command.spelling, command.help) for command in listing),
    )


def read_line(argv: list[str]) -> Line:
    """What alma-ctl's ``argv`` asks for; raises :class:`Help` or :class:`UsageError`."""
    form, values = _read(_top_form(), argv)
    root = values.pop("root", None)
    as_json = bool(values.pop("json", False))
    assert root is None or isinstance(root, str)
    if form.command is _INIT:
        return Line(None, {}, root=root, as_json=as_json, with_examples="with_examples" in values)
    command = form.command
    assert command is not None
    output, folder = values.pop("output", None), values.pop("dir", None)
    assert output is None or isinstance(output, str)
    assert folder is None or isinstance(folder, str)
    return Line(command, values, root=root, as_json=as_json, output=output, folder=folder)


def read_options(form: Form, argv: list[str]) -> dict[str, object]:
    """The values of a program without commands (alma chat), by name; only those given."""
    return _read(form, argv)[1]


# --------------------------------------------------------------------------- the reader


def _negative_number(token: str) -> bool:
    """``-5``, ``-.5``, ``-1.5`` (decimal digits of any script, as argparse's ``\\d``)."""
    whole, dot, fraction = token[1:].partition(".")
    if dot:
        return fraction.isdecimal() and (not whole or whole.isdecimal())
    return whole.isdecimal()


def _is_option(token: str, flags: dict[str, Arg]) -> bool:
    """argparse's rule: ``-``, a negative number and a word with a space are values."""
    if not token.startswith("-") or token == "-":
        return False
    if token in flags or token in _HELP_FLAGS or token.partition("=")[0] in flags:
        return True
    return not (_negative_number(token) or " " in token)


def _argument(spec: Arg, message: str) -> str:
    return _("argument %(argument_name)s: %(message)s") % {
        "argument_name": spec.spelling,
        "message": message,
    }


def _invalid_choice(value: str, choices: tuple[str, ...] | list[str]) -> str:
    return _("invalid choice: %(value)r (choose from %(choices)s)") % {
        "value": value,
        "choices": ", ".join(repr(choice) for choice in choices),
    }


def _value(form: Form, spec: Arg, raw: str) -> object:
    value: object = raw
    if spec.type == "int":
        try:
            value = int(raw)
        except ValueError:
            sentence = _("invalid %(type)s value: %(value)r") % {"type": "int", "value": raw}
            raise UsageError(form, _argument(spec, sentence)) from None
    if spec.type == "float":
        try:
            value = float(raw.replace(",", "."))  # 0,1 as a Spanish keyboard writes it
        except ValueError:
            sentence = _("invalid %(type)s value: %(value)r") % {"type": "float", "value": raw}
            raise UsageError(form, _argument(spec, sentence)) from None
    if spec.choices:
        value = spec.pick(raw)  # the wire's word, or the word the person reads for it
        if value is None:
            raise UsageError(form, _argument(spec, spec.unknown(raw)))
    return value


def _read(form: Form, argv: list[str]) -> tuple[Form, dict[str, object]]:
    """The form the line ends in and the values it gave, by argument name."""
    flags = form.flags()
    values: dict[str, object] = {}
    words: list[str] = []
    unknown: list[str] = []
    ended = False  # after `--`, every token is a word
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if not ended and token == "--":
            ended = True
            continue
        if ended or not _is_option(token, flags):
            # A command that is also a group reads a word that names none of its leaves (or
            # any word after its first) as its own.
            own = form.command is not None and (bool(words) or token not in (form.words or {}))
            if form.words is None or own:
                words.append(token)
                continue
            choose = form.words.get(token)
            if choose is None:
                sentence = _argument(_WORD, _invalid_choice(token, list(form.words)))
                raise UsageError(form, sentence)
            form = choose()
            flags = form.flags()
            continue
        if token in _HELP_FLAGS:
            raise Help(help_text(form))
        flag, equals, inline = token.partition("=")
        spec = flags.get(flag)
        if spec is None:
            unknown.append(token)
            continue
        if spec.type == "bool":
            if equals:
                raise UsageError(form, _argument(spec, _("ignored explicit argument %r") % inline))
            values[spec.name] = True
            continue
        if equals:
            raw = inline
        elif index < len(argv) and not _is_option(argv[index], flags):
            raw = argv[index]
            index += 1
        else:
            raise UsageError(form, _argument(spec, _("expected one argument")))
        value = _value(form, spec, raw)
        if spec.type == "list[str]":
            listed = values.setdefault(spec.name, [])
            assert isinstance(listed, list)
            listed.append(value)
        else:
            values[spec.name] = value
    if form.words is not None and form.command is None:
        raise UsageError(form, _("the following arguments are required: %s") % _WORD.spelling)
    for spec in form.places:
        if not words:
            break
        if spec.type == "list[str]":
            values[spec.name] = [_value(form, spec, raw) for raw in words]
            words = []
        else:
            values[spec.name] = _value(form, spec, words.pop(0))
    missing = [
        spec.spelling
        for spec in (*form.places, *form.options)
        if spec.required and spec.name not in values
    ]
    if missing:
        raise UsageError(form, _("the following arguments are required: %s") % ", ".join(missing))
    if unknown or words:
        raise UsageError(form, _("unrecognized arguments: %s") % " ".join([*unknown, *words]))
    return form, values


# --------------------------------------------------------------------------- usage and help


def _option_text(spec: Arg) -> str:
    if spec.type == "bool":
        return spec.spelling
    return f"{spec.spelling} {spec.metavar or spec.name.upper()}"


def usage_line(form: Form) -> str:
    """argparse's usage line: the program, its options, then its places."""
    parts = [form.prog, "[-h]"]
    for spec in form.options:
        text = _option_text(spec)
        parts.append(text if spec.required else f"[{text}]")
    for spec in form.places:
        if spec.name in form.hidden:
            continue
        if spec.type == "list[str]":
            parts.append(f"[{spec.spelling} ...]")
        else:
            parts.append(spec.spelling if spec.required else f"[{spec.spelling}]")
    if form.words is not None:
        parts.append(f"{_WORD.spelling} ...")
    return _("usage: ") + " ".join(parts) + "\n"


def _row_help(spec: Arg) -> str:
    """An argument's help; for one without, what its value may be; and its default."""
    text = _(spec.help) if spec.help else ""
    if spec.choices:
        text = f"{text} ({spec.describe()})" if text else spec.describe()
    elif not text and spec.type in ("int", "float"):
        text = spec.describe()
    if spec.default in (None, False, True, (), ""):  # a flag can only say True
        return text
    if text:
        return _("{help}; default {value}", help=text, value=spec.default)
    return _("default {value}", value=spec.default)


def _width() -> int:
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size(1).columns
    except (ValueError, OSError):
        columns = 80
    return max(columns - 2, 40)


def _rows(rows: list[tuple[str, str]], width: int) -> list[str]:
    import textwrap

    column = min(max(len(left) for left, _text in rows) + 4, 26)
    lines: list[str] = []
    for left, text in rows:
        head = "  " + left
        body = textwrap.wrap(text, max(width - column, 20)) if text else []
        if len(head) + 2 > column and body:
            lines.append(head)
            head = ""
        first = body.pop(0) if body else ""
        lines.append((head.ljust(column) + first).rstrip())
        lines += [" " * column + more for more in body]
    return lines


def help_text(form: Form) -> str:
    """The help of ``form``: usage, what it does, its commands or arguments, the exit codes."""
    import textwrap

    width = _width()
    lines = [usage_line(form).rstrip("\n"), ""]
    if form.description:
        lines += [*textwrap.wrap(_(form.description, **form.fields), width), ""]
    places: list[tuple[str, str]] = []
    if form.listing:
        places.append((_WORD.spelling, ""))
        places += [("  " + word, _(text)) for word, text in form.listing]
    places += [
        (spec.spelling, _row_help(spec)) for spec in form.places if spec.name not in form.hidden
    ]
    if places:
        lines += [_("positional arguments") + ":", *_rows(places, width), ""]
    options = [(", ".join(_HELP_FLAGS), _("show this help message and exit"))]
    options += [(_option_text(spec), _row_help(spec)) for spec in form.options]
    lines += [_("options") + ":", *_rows(options, width), ""]
    lines += textwrap.wrap(_(EXIT_CODES_HELP), width)
    return "\n".join(lines) + "\n"
