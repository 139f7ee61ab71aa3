"""alma-ctl's command line, read from the command table (control.commands) it is built on.

Two readers, one meaning: :func:`_quick_line` reads the plain, well-formed lines people type
most without importing :mod:`argparse` (building its sub-parsers, with :mod:`shutil` and
:mod:`gettext`, is a large part of a short command's start, docs/benchmarks.md); anything it is
not sure of (help, a usage error, an abbreviated option, a value that starts with ``-``,
``init``) goes to the argparse parser, which has the help texts and the error messages.
:func:`read_line` is the one entry. A property test (tests/unit/test_ctl_quick.py) checks that
every line the quick reader accepts means exactly what argparse makes of it.
"""

from __future__ import annotations

from control.commands import COMMANDS, Arg, Command
from policies.i18n import N_, _

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn

_PREFIX = "arg_"  # argparse dests of command arguments, apart from --root/--json/--output


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
        kwargs["type"] = lambda raw, spec=spec: _chosen(spec, raw)  # the words people read too
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


def _chosen(spec: Arg, raw: str) -> str:
    import argparse

    value = spec.pick(raw)
    if value is None:
        raise argparse.ArgumentTypeError(spec.unknown(raw))
    return value


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

    argparse asks gettext for them in every parser it builds, which is slow to load
    (docs/benchmarks.md); the catalog answers in the person's language for the cost of a dict
    lookup.
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


class Line:
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
        return isinstance(other, Line) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable: compared, never hashed

    def __repr__(self) -> str:
        return f"Line{self._key()!r}"


def _parsed_line(ns: argparse.Namespace) -> Line:
    if ns.command == "init":
        return Line(None, {}, root=ns.root, as_json=bool(ns.json), with_examples=ns.with_examples)
    command = COMMANDS[ns.wire]
    args: dict[str, object] = {}
    for spec in command.args:
        value = getattr(ns, _PREFIX + spec.name, None)
        if value is not None:
            args[spec.name] = value
    return Line(
        command, args, root=ns.root, as_json=bool(ns.json), output=getattr(ns, "output", None)
    )


def _argparse_line(argv: list[str]) -> Line:
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
    if spec.choices:
        value = spec.pick(raw)  # the word a person reads too; None (_NOT_SURE) when none
    return value


def _quick_line(argv: list[str]) -> Line | None:
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
    return Line(command, args, root=root, as_json=as_json, output=output)


def read_line(argv: list[str]) -> Line:
    """What ``argv`` asks for. ``--help`` and a usage error raise :class:`SystemExit` (a usage
    error as :class:`UsageExit`, with its sentence), after argparse printed them."""
    line = _quick_line(argv)
    return _argparse_line(argv) if line is None else line
