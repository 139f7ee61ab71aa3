"""The command lines of alma-ctl and alma chat: stdlib argparse, built from the command table.

The table (control.commands) says which commands, arguments, types, choices and flags exist;
:func:`parser` turns it into argparse parsers (one per command word, one per command), and
:func:`read_line` reads alma-ctl's line into a :class:`Line`, or raises :class:`Help` or
:class:`UsageError`. Nothing here names a command: an entry of the table is a command line.

argparse's own ways, with three settings a person relies on: an option is named in full (no
prefixes), a command's places and options mix in any order (``parse_known_intermixed_args``),
and a mistyped command or option gets a "did you mean". argparse's sentences are said through
the catalog, so its help and errors read in the person's language.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from argparse import SUPPRESS
from typing import TYPE_CHECKING, NoReturn

from control.commands import COMMANDS, Arg, Command
from policies.i18n import N_, _, ngettext

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# argparse words its help and errors with gettext's functions: the catalog is where ALMA's
# sentences live (policies/locale/es.po holds argparse's msgids).
argparse._ = _  # type: ignore[attr-defined]  # argparse's module-level gettext alias
argparse.ngettext = ngettext  # type: ignore[attr-defined]  # the same, for plural forms

#: argparse's own sentences a person reads, marked so that the catalog keeps their Spanish.
ARGPARSE_MESSAGES = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("ignored explicit argument %r"),
)

#: The exit codes, for the help of alma-ctl and alma chat.
EXIT_CODES_HELP = N_(
    "Exit codes: 0 ok, 1 error, 2 usage, 3 daemon not reachable, 4 refused by "
    "policy, 5 conflict, 6 no such id."
)

ROOT = Arg(
    "root", "str", metavar="DIR", help=N_("the ALMA root (default: $ALMA_ROOT, else ~/ALMA)")
)
_JSON = Arg("json", "bool", help=N_("print one JSON document on stdout"))
_WORD = "COMMAND"  # how the help and the errors name the word choosing a command
_CHOSEN = "alma command"  # the namespace's key for the command a line ends in (not a name)

#: ``init`` works on the root's files without the daemon, so it is not in the socket's table.
_INIT = Command(
    "init",
    N_("create the root's folders and default files (no daemon)"),
    (Arg("with_examples", "bool", help=N_("also store example memories")),),
)
#: ``web`` asks the panel, not the daemon's table, for its one-time address (control.web).
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


class UsageError(Exception):
    """A line that cannot be read: its one sentence, and the usage of what was being read."""

    def __init__(self, parser: argparse.ArgumentParser, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.prog = parser.prog
        self.usage = parser.format_usage()

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


# --------------------------------------------------------------------------- the parsers


class _HelpAction(argparse.Action):
    """``-h``/``--help`` raises :class:`Help` with the help of the parser reading it."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kw: object) -> None:
        raise Help(parser.format_help())


class _Parser(argparse.ArgumentParser):
    """argparse's parser, raising instead of exiting, with a guess for a mistyped word."""

    def __init__(
        self,
        prog: str,
        description: str,
        *,
        mixed: bool = True,
        fill: Callable[[_Parser], None] | None = None,
    ) -> None:
        super().__init__(
            prog=prog,
            description=description,
            epilog=_(EXIT_CODES_HELP),
            add_help=False,
            allow_abbrev=False,  # `--ta` is not `--tag`: a prefix would change meaning later
        )
        self._mixed = mixed  # a command's places and options mix (no sub-parsers here)
        self._mixing = False
        # A line reads one command: only the parsers on its way get their arguments.
        self._fill = fill

    def _ready(self) -> None:
        if self._fill is None:
            return
        fill, self._fill = self._fill, None
        self.add_argument(
            "-h", "--help", action=_HelpAction, help=_("show this help message and exit")
        )
        fill(self)

    def format_usage(self) -> str:
        self._ready()
        return super().format_usage()

    def format_help(self) -> str:
        self._ready()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)

    def parse_known_args(  # type: ignore[override]  # the same call, read intermixed
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._ready()
        # After `--` every word is a place: the intermixed reading would drop that `--`, and a
        # line with one has its options before it.
        if args is not None and "--" in args and not self._mixing and self._mixed:
            end = list(args).index("--") + 1
            args = [*args[:end], *(_DASHES if word == "--" else word for word in args[end:])]
            return super().parse_known_args(args, namespace)
        if not self._mixed or self._mixing:
            return super().parse_known_args(args, namespace)
        self._mixing = True
        saved = self.usage
        # The intermixed reading cuts "usage: " off by its English length: give it the usage.
        self.usage = self.format_usage().removeprefix(_("usage: ")).rstrip("\n")
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self.usage = saved
            self._mixing = False

    def _check_value(self, action: argparse.Action, value: object) -> None:
        # Only the command words are argparse choices (the table's choices are read by type).
        if action.choices is not None and value not in action.choices:
            words = [str(word) for word in action.choices]
            sentence = _("invalid choice: %(value)r (choose from %(choices)s)") % {
                "value": value,
                "choices": ", ".join(map(repr, words)),
            }
            raise argparse.ArgumentError(action, _guessed(sentence, str(value), words))

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> object:
        # `--reason=--` gives the value `--`: argparse 3.11 drops it as the end of options.
        if action.option_strings and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)

    def unknown(self, extras: list[str]) -> UsageError:
        """The sentence for what no argument of this parser takes, with a guess for an option."""
        sentence = _("unrecognized arguments: %s") % " ".join(extras)
        flags = [flag for action in self._actions for flag in action.option_strings]
        typed = [token.partition("=")[0] for token in extras if token.startswith("--")]
        return UsageError(self, _guessed(sentence, typed[0], flags) if typed else sentence)


def _guessed(sentence: str, typed: str, words: list[str]) -> str:
    """``sentence``, and the word of ``words`` closest to what was typed, if one is close."""
    close = difflib.get_close_matches(typed, words, n=1)
    if not close:
        return sentence
    return _("{sentence}; did you mean {word}?", sentence=sentence, word=repr(close[0]))


def _row_help(spec: Arg) -> str:
    """An argument's help; for one without, what its value may be; and its default."""
    text = _(spec.help) if spec.help else ""
    if spec.choices:
        text = f"{text} ({spec.describe()})" if text else spec.describe()
    elif not text and spec.type in ("int", "float"):
        text = spec.describe()
    if spec.default not in (None, False, True, (), ""):  # a flag can only say True
        if text:
            text = _("{help}; default {value}", help=text, value=spec.default)
        else:
            text = _("default {value}", value=spec.default)
    return text.replace("%", "%%")  # argparse formats a help with %


#: Marks a ``--`` typed after the ``--`` that ends the options: a value, which argparse 3.11
#: would drop as one more end. NUL never comes from a command line.
_DASHES = "\x00--"


def _typed(raw: str) -> str:
    return "--" if raw == _DASHES else raw


def _value_type(spec: Arg) -> Callable[[str], object]:
    """How a typed word becomes the argument's value."""

    def value(raw: str) -> object:
        word = _typed(raw)
        if not spec.choices:
            try:
                if spec.type == "float":
                    return float(word.replace(",", "."))  # 0,1 as a Spanish keyboard writes it
                return int(word) if spec.type == "int" else word
            except ValueError:
                sentence = _("invalid %(type)s value: %(value)r")
                raise argparse.ArgumentTypeError(
                    sentence % {"type": spec.type, "value": word}
                ) from None
        picked = spec.pick(word)  # the wire's word, or the word the person reads for it
        if picked is None:
            raise argparse.ArgumentTypeError(spec.unknown(word))
        return picked

    return value


def _add(parser: argparse.ArgumentParser, spec: Arg) -> None:
    """``spec`` as an argparse argument; a value not given is left out of the namespace."""
    help_text = _row_help(spec)
    if spec.type == "bool":
        parser.add_argument(
            spec.spelling, dest=spec.name, action="store_true", default=SUPPRESS, help=help_text
        )
    elif spec.positional:
        nargs = "*" if spec.type == "list[str]" else (None if spec.required else "?")
        parser.add_argument(
            spec.name,
            metavar=spec.spelling,
            nargs=nargs,
            type=_value_type(spec),
            # argparse would type a str default: None, which no typed word gives, is dropped
            default=None if nargs == "?" else SUPPRESS,
            help=help_text,
        )
    else:
        parser.add_argument(
            spec.spelling,
            dest=spec.name,
            metavar=spec.metavar or spec.name.upper(),
            required=spec.required,
            action="append" if spec.type == "list[str]" else "store",
            type=_value_type(spec),
            default=SUPPRESS,
            help=help_text,
        )


def _words(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[_Parser]:
    words: argparse._SubParsersAction[_Parser] = parser.add_subparsers(
        parser_class=_Parser, metavar=_WORD, dest=SUPPRESS, required=True
    )
    return words


def _globals(parser: argparse.ArgumentParser) -> None:
    # --root and --json are read wherever they come: before, between or after the words.
    _add(parser, ROOT)
    _add(parser, _JSON)


class _Chosen:
    """The command a line ends in, and the parser that read it (its sentences name it)."""

    __slots__ = ("command", "parser")

    def __init__(self, command: Command, parser: _Parser) -> None:
        self.command = command
        self.parser = parser


def _leaf(words: argparse._SubParsersAction[_Parser], leaf: str, command: Command) -> None:
    def fill(parser: _Parser) -> None:
        for spec in (*command.args, *_LOCAL.get(command.name, ())):
            _add(parser, spec)
        _globals(parser)
        parser.set_defaults(**{_CHOSEN: _Chosen(command, parser)})

    words.add_parser(
        leaf,
        help=_(command.help).replace("%", "%%"),
        prog=f"alma-ctl {command.spelling}",
        description=_(command.help),
        fill=fill,
    )


def _group(words: argparse._SubParsersAction[_Parser], group: str, leaves: list[Command]) -> None:
    def fill(parser: _Parser) -> None:
        _globals(parser)
        group_words = _words(parser)
        for command in leaves:
            _leaf(group_words, command.name.rpartition(".")[2], command)

    words.add_parser(
        group,
        help=", ".join(command.name.rpartition(".")[2] for command in leaves),
        prog=f"alma-ctl {group}",
        description=_("{group} commands", group=group),
        mixed=False,
        fill=fill,
    )


def _fill_top(top: _Parser) -> None:
    _globals(top)
    words = _words(top)
    _leaf(words, "init", _INIT)
    if WEB.name not in COMMANDS:
        _leaf(words, WEB.name, WEB)
    groups: dict[str, list[Command]] = {}
    for command in COMMANDS.values():  # in the table's order, a group where its first leaf is
        if not command.cli:
            continue
        group = command.name.rpartition(".")[0]
        if not group:
            _leaf(words, command.name, command)
        elif group in COMMANDS:  # `report days` beside `report DATE`: its words as one
            _leaf(words, command.spelling, command)
        elif group not in groups:
            groups[group] = [
                entry
                for name, entry in COMMANDS.items()
                if entry.cli and name.startswith(group + ".")
            ]
            _group(words, group, groups[group])


def _one_word(argv: list[str]) -> list[str]:
    """The line with a command that is also a group's name (``report``) and one of the group's
    words (``days``) read as that leaf's one word, options between them or not: any other word
    after it is the command's own (``report 2026-11-17``)."""
    taking = {"--root"}
    i = _next_word(argv, 0, taking)
    command = COMMANDS.get(argv[i]) if i < len(argv) else None
    if command is None:
        return argv
    taking |= {arg.spelling for arg in command.args if arg.type != "bool" and not arg.positional}
    j = _next_word(argv, i + 1, taking)
    leaf = COMMANDS.get(f"{argv[i]}.{argv[j]}") if j < len(argv) else None
    if leaf is None or not leaf.cli:
        return argv
    return [*argv[:i], leaf.spelling, *argv[i + 1 : j], *argv[j + 1 :]]


def _next_word(argv: list[str], i: int, taking: set[str]) -> int:
    """The index of the first word at or after ``i`` that is no option nor an option's value."""
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        i += 2 if argv[i] in taking else 1
    return i


def parser() -> _Parser:
    """alma-ctl's parser: a sub-parser per command word, each command's from its table entry."""
    return _Parser(
        "alma-ctl",
        _("Control alma-agentd, ALMA's background service, for one ALMA root."),
        mixed=False,
        fill=_fill_top,
    )


def _parse(parser: _Parser, argv: list[str]) -> tuple[dict[str, object], list[str]]:
    """The values given, by name, and the words nothing took (a ``--`` ending none is read)."""
    namespace, extras = parser.parse_known_args(argv)
    if "--" in extras:
        extras.remove("--")
    values = {k: v for k, v in vars(namespace).items() if v is not None}
    return values, [_typed(word) for word in extras]


def read_line(argv: list[str]) -> Line:
    """What alma-ctl's ``argv`` asks for; raises :class:`Help` or :class:`UsageError`."""
    top = parser()
    values, extras = _parse(top, _one_word(argv))
    chosen = values.pop(_CHOSEN)
    assert isinstance(chosen, _Chosen)
    if extras:  # the sentence names the command the line ended in, and its usage
        raise chosen.parser.unknown(extras)
    root = _text(values.pop("root", None))
    as_json = bool(values.pop("json", False))
    if chosen.command is _INIT:
        return Line(None, {}, root=root, as_json=as_json, with_examples="with_examples" in values)
    output, folder = _text(values.pop("output", None)), _text(values.pop("dir", None))
    return Line(chosen.command, values, root=root, as_json=as_json, output=output, folder=folder)


def _text(value: object) -> str | None:
    assert value is None or isinstance(value, str)
    return value


def chat_parser(once: Arg, description: str) -> _Parser:
    """``alma chat``'s parser: ``--root``, ``once``, and ``chat`` anywhere among them."""

    def fill(chat: _Parser) -> None:
        _add(chat, ROOT)
        _add(chat, once)
        word = Arg("command", "str", choices=("chat",), positional=True)
        chat.add_argument(
            "command", metavar="COMMAND", nargs="?", type=_value_type(word), help=SUPPRESS
        )

    return _Parser("alma chat", _(description), fill=fill)


def read_options(chat: _Parser, argv: list[str]) -> dict[str, object]:
    """The values ``chat``'s line gives, by name; only those given."""
    values, extras = _parse(chat, argv)
    if extras:
        raise chat.unknown(extras)
    return values
