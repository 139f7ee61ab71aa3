"""The explicit table of socket commands and their arguments. Standard library only.

This table is the whole attack surface of the socket (Supervisor had a CVE for dispatching
whatever name arrived): the server validates every request against it *before* dispatch, and
alma-ctl builds its argument parser from it, so the two cannot drift apart. A name that is not
here is never looked up anywhere else. It is longer than most modules because it is the whole
table: one place to read every command a socket can be asked.
"""

from __future__ import annotations

from typing import Literal

from policies import limits as L
from policies.errors import BadArgumentError, UnknownCommandError
from policies.i18n import LANGUAGES, N_, _, language
from policies.states import LEVELS, SUGGESTION_STATUSES, UNDONE

ArgType = Literal["int", "float", "str", "bool", "list[str]"]

#: Ids are SQLite integers on the daemon side; anything bigger is not an id.
MAX_ID = (1 << 63) - 1
#: The training export's formats (agent.memory.export writes each).
EXPORT_FORMATS = ("mlx", "chatml", "sharegpt", "alpaca")
#: The notes exports' formats (agent.memory.vault writes each): memories as a vault of notes.
NOTE_FORMATS = ("obsidian",)
#: The largest share of the examples a training export keeps for validation.
EXPORT_VALID_MAX = 0.5
#: ``report.days``: the days the panel's plots show by default, and at most.
REPORT_DAYS = 14
REPORT_DAYS_MAX = 90
VERDICTS = (N_("util"), N_("inutil"))  # a person reads (and may type) them with their accents


class Arg:
    """One argument of a command: its wire name and type, and how alma-ctl spells it."""

    __slots__ = (
        "choices",
        "default",
        "flag",
        "help",
        "max",
        "max_len",
        "metavar",
        "min",
        "name",
        "non_empty",
        "nullable",
        "positional",
        "required",
        "type",
    )

    def __init__(
        self,
        name: str,
        type: ArgType,
        *,
        required: bool = False,
        default: object = None,
        nullable: bool = False,
        choices: tuple[str, ...] = (),
        min: float | None = None,
        max: float | None = None,
        non_empty: bool = False,
        max_len: int | None = None,
        positional: bool = False,
        flag: str | None = None,
        metavar: str | None = None,
        help: str = "",
    ) -> None:
        self.name = name
        self.type: ArgType = type
        self.required = required
        self.default = default
        self.nullable = nullable  # null is accepted and means "not given"
        self.choices = choices
        self.min = min
        self.max = max
        self.non_empty = non_empty
        self.max_len = max_len
        # Command-line spelling only: a positional, or an option flag other than --name.
        self.positional = positional
        self.flag = flag
        self.metavar = metavar
        self.help = help

    def __repr__(self) -> str:
        return f"Arg({self.name!r}, {self.type!r})"

    @property
    def spelling(self) -> str:
        """How a person names this argument on alma-ctl's line (``--older-than``, ``ID``).

        Error sentences use it: the wire name (``older_than_days``) is nothing a person types.
        """
        if self.positional:
            return self.metavar or self.name.upper()
        return self.flag or "--" + self.name.replace("_", "-")

    def pick(self, typed: str) -> str | None:
        """The choice a person means by ``typed``, or None: the wire's value itself, or the word
        they read for it in any of ALMA's languages (``rechazada`` is ``rejected``), case and
        accents folded (``Útil`` is ``util``). The wire keeps its one value; readers of what a
        person types (alma-ctl's line) call this."""
        if typed in self.choices:
            return typed
        from policies.text import fold

        key = fold(typed.strip())
        for choice in self.choices:
            if key == fold(choice):
                return choice
        for lang in LANGUAGES:
            with language(lang):
                for choice in self.choices:
                    if key == fold(_(choice)):
                        return choice
        return None

    def unknown(self, typed: str) -> str:
        """The sentence for a word :meth:`pick` does not know, naming the choices in the words
        the person reads."""
        return _(
            "{typed} is not {choices}",
            typed=_quote(typed),
            choices=_("one of {choices}", choices=", ".join(_(c) for c in self.choices)),
        )

    def describe(self) -> str:
        """What a valid value looks like, for the error sentence."""
        if self.choices:
            text = _("one of {choices}", choices=", ".join(self.choices))
        elif self.type == "int":
            if self.min is not None and self.max is not None and self.max < MAX_ID:
                text = _("an integer from {min} to {max}", min=self.min, max=self.max)
            elif self.min == 1:
                text = _("a positive integer")
            elif self.min == 0:
                text = _("a non-negative integer")
            else:
                text = _("an integer")
        elif self.type == "float":
            text = _("a number from {min} to {max}", min=self.min, max=self.max)
        elif self.type == "bool":
            text = _("true or false")
        elif self.type == "list[str]":
            text = _("a list of texts")
        else:
            text = _("a non-empty text") if self.non_empty else _("a text")
        return _("{value} or nothing", value=text) if self.nullable else text


class Command:
    """A command name, its arguments, and how long a client waits for its answer (seconds).

    ``streamed``: answered with event lines before the final answer (docs/protocol.md).
    ``cli``: alma-ctl offers it (the chat's own commands are for ``alma chat`` only).
    ``answered_by``: the daemon's method that answers it, ``service.method``, which takes the
    command's arguments by their wire names; by default the name itself (``backup.now`` is
    the backup service's ``now``). None: the server answers it on its connection.
    """

    __slots__ = ("answered_by", "args", "by_name", "cli", "help", "name", "streamed", "timeout")

    def __init__(
        self,
        name: str,
        help: str,
        args: tuple[Arg, ...] = (),
        *,
        timeout: float = 30.0,
        streamed: bool = False,
        cli: bool = True,
        answered_by: str | None = "",
    ) -> None:
        self.name = name
        self.answered_by = name if answered_by == "" else answered_by
        self.help = help
        self.args = args
        self.timeout = timeout
        self.streamed = streamed
        self.cli = cli
        self.by_name = {arg.name: arg for arg in args}
        if len(self.by_name) != len(args):
            raise ValueError(f"duplicate argument in command {name}")

    def __repr__(self) -> str:
        return f"Command({self.name!r})"

    @property
    def spelling(self) -> str:
        """The command as a person types it after ``alma-ctl`` (``trash empty``)."""
        return self.name.replace(".", " ")


def _required(name: str, metavar: str, max_len: int) -> Arg:
    """A text a command cannot do without, typed in its place (a path, an id, a query)."""
    return Arg(
        name,
        "str",
        required=True,
        non_empty=True,
        max_len=max_len,
        positional=True,
        metavar=metavar,
    )


def _pick_one(name: str, choices: tuple[str, ...], metavar: str, help: str) -> Arg:
    """A word a person picks among ``choices``, typed in its place."""
    return Arg(
        name, "str", required=True, choices=choices, positional=True, metavar=metavar, help=help
    )


_ID = Arg("id", "int", required=True, min=1, max=MAX_ID, positional=True, metavar="ID")
_MEMORY_ID = _required("id", "ID", L.SHORT_TEXT)
_TYPE = Arg(
    "memory_type",
    "str",
    nullable=True,
    max_len=L.TYPE_CHARS,
    flag="--type",
    metavar="TYPE",
    help=N_("memory type (institutional, context, architecture, principle, fact, episode, ...)"),
)
_PROJECT = Arg("project", "str", nullable=True, max_len=L.PROJECT_CHARS, metavar="P")
_TAGS = Arg(
    "tags",
    "list[str]",
    default=(),
    max_len=L.TAG_CHARS,
    flag="--tag",
    metavar="T",
    help=N_("a tag (repeat for more)"),
)
_THEME = Arg(
    "theme",
    "str",
    nullable=True,
    non_empty=True,
    max_len=L.THEME_CHARS,
    metavar="THEME",
    help=N_("area of life: salud, familia, dinero, trabajo, tecnologia, hogar, ocio, personal"),
)
_RELATED = Arg(
    "related_to",
    "str",
    nullable=True,
    non_empty=True,
    max_len=L.RELATED_CHARS,
    metavar="WHAT",
    help=N_("what the memory is about (a person, a thing, a project)"),
)
_SLOW = 3600.0  # accept/undo/analyze may move thousands of files; the daemon bounds them itself
_MODEL = 300.0  # the first memory call may load the embedding model
#: Longer than restic's own bound (agent.backup.restic.LONG_S): the answer comes after it.
_BACKUP = 7 * 3600.0
_SESSION = Arg("session", "str", required=True, non_empty=True, max_len=L.SHORT_TEXT)

_TABLE: tuple[Command, ...] = (
    Command(
        "status",
        N_("daemon, root, socket, autonomy, sandbox and counts"),
        timeout=10.0,
        answered_by="daemon.status",
    ),
    Command(
        "reload",
        N_("read the policy (system/autonomy.conf) again; say what of alma.toml needs a restart"),
        answered_by="reload.requested",
    ),
    Command(
        "analyze",
        N_("run the monitor now"),
        (Arg("wait", "bool", default=False, help=N_("return after its suggestions are stored")),),
        timeout=_SLOW,
        answered_by="loop.analyze_requested",
    ),
    Command(
        "suggestions.list",
        N_("list suggestions (pending ones by default)"),
        (
            Arg(
                "status",
                "str",
                nullable=True,
                choices=(*SUGGESTION_STATUSES, UNDONE),
                metavar="S",
                help=N_("one status, as the list shows it (pending, rejected, undone...)"),
            ),
            Arg("all", "bool", default=False, help=N_("every status")),
        ),
    ),
    Command(
        "suggestions.show",
        N_("a suggestion, its evidence and its plan"),
        (
            _ID,
            Arg(
                "all",
                "bool",
                default=True,
                help=N_(
                    "every op of the plan (without it alma-ctl shows a summary and the first ops)"
                ),
            ),
        ),
        answered_by="loop.show",
    ),
    Command(
        "suggestions.accept",
        N_("execute a suggestion now"),
        (_ID,),
        timeout=_SLOW,
        answered_by="loop.accept",
    ),
    Command(
        "suggestions.reject",
        N_("reject a suggestion"),
        (_ID, Arg("reason", "str", nullable=True, max_len=L.REASON_CHARS, metavar="TEXT")),
        answered_by="loop.reject",
    ),
    Command("autonomy.off", N_("pause autonomy until `autonomy on`, across restarts")),
    Command("autonomy.on", N_("resume autonomy"), answered_by="loop.autonomy_on"),
    Command("autonomy.status", N_("configured and effective level, paused or not")),
    Command(
        "autonomy.level",
        N_("lower the level at run time (raising it is done by editing autonomy.conf)"),
        (_pick_one("level", LEVELS, "LEVEL", N_("off, manual, suggest or auto")),),
        answered_by="loop.autonomy_level",
    ),
    Command(
        "autonomy.allow",
        N_(
            "let level auto run KIND on its own again after undos stopped it; with --folder, "
            "propose KIND there again after rejections stopped it"
        ),
        (
            Arg(
                "kind", "str", required=True, non_empty=True, max_len=L.SHORT_TEXT, positional=True
            ),
            Arg("folder", "str", nullable=True, non_empty=True, max_len=L.PATH_CHARS, metavar="F"),
        ),
        answered_by="loop.allow",
    ),
    Command(
        "feedback",
        N_("tell ALMA whether a suggestion or action was useful"),
        (
            _ID,
            _pick_one("verdict", VERDICTS, "VERDICT", N_("util or inutil (útil, inútil)")),
            Arg("reason", "str", nullable=True, max_len=L.REASON_CHARS, metavar="TEXT"),
            Arg(
                "action",
                "bool",
                default=False,
                help=N_("ID is an action's, as `alma-ctl history` shows it"),
            ),
        ),
        answered_by="loop.feedback",
    ),
    Command(
        "stats",
        N_(
            "per kind and folder: proposed, accepted, rejected, undone, useful; what ALMA "
            "stopped proposing and why; what it could be trusted with next"
        ),
        answered_by="loop.stats",
    ),
    Command(
        "reminders",
        N_("the break reminders and pending promises the chat shows when a session starts"),
        answered_by="reminders.listing",
    ),
    Command(
        "report",
        N_(
            "the day's analysis (logs/alma/DATE-analisis.md), written now if it does not exist "
            "yet; today by default"
        ),
        (
            Arg("date", "str", nullable=True, max_len=10, positional=True, metavar="DATE"),
            Arg(
                "refresh",
                "bool",
                default=False,
                help=N_("write it again from the day's logs, replacing the one written before"),
            ),
        ),
        timeout=_MODEL,
        answered_by="reports.show",
    ),
    Command(
        "report.days",
        N_(
            "the last days as series: working hours, messages per hour, mood, and the "
            "suggestions of each kind with what became of them"
        ),
        (
            Arg(
                "days",
                "int",
                default=REPORT_DAYS,
                min=1,
                max=REPORT_DAYS_MAX,
                metavar="N",
                help=N_("how many days, today included"),
            ),
        ),
        answered_by="reports.days",
    ),
    Command(
        "undo",
        N_("revert the newest action not yet undone, or the one named"),
        (Arg("id", "int", nullable=True, min=1, max=MAX_ID, positional=True, metavar="ACTION_ID"),),
        timeout=_SLOW,
        answered_by="loop.undo",
    ),
    Command(
        "history",
        N_("executed actions, newest first"),
        (Arg("limit", "int", default=20, min=1, max=L.LIST_MAX, metavar="N"),),
        answered_by="journal.history",
    ),
    Command(
        "memory.add",
        N_("store a memory"),
        (
            _required("content", "TEXT", L.CONTENT_CHARS),
            _TAGS,
            Arg("project", "str", default="", max_len=L.PROJECT_CHARS, metavar="P"),
            Arg("importance", "int", nullable=True, min=1, max=5, metavar="1-5"),
            _TYPE,
            _THEME,
            _RELATED,
        ),
        timeout=_MODEL,
    ),
    Command(
        "memory.search",
        N_("semantic search with filters"),
        (
            _required("query", "QUERY", L.QUERY_CHARS),
            Arg("limit", "int", default=5, min=1, max=L.SEARCH_MAX, metavar="N"),
            _TAGS,
            _PROJECT,
            _TYPE,
            Arg("min_importance", "int", nullable=True, min=1, max=5, metavar="1-5"),
            _THEME,
            _RELATED,
        ),
        timeout=_MODEL,
    ),
    Command(
        "memory.list",
        N_("stored memories, newest first"),
        (
            Arg("limit", "int", default=20, min=1, max=L.LIST_MAX, metavar="N"),
            Arg("tag", "str", nullable=True, max_len=L.TAG_CHARS, metavar="T"),
            _PROJECT,
            _TYPE,
            Arg(
                "archived", "bool", default=False, help=N_("the forgotten (archived) ones instead")
            ),
        ),
        timeout=_MODEL,
    ),
    Command("memory.show", N_("one memory"), (_MEMORY_ID,), timeout=_MODEL),
    Command(
        "memory.edit",
        N_("change a memory's text, tags, importance or type (`alma-ctl undo` takes it back)"),
        (
            _MEMORY_ID,
            Arg(
                "text",
                "str",
                nullable=True,
                non_empty=True,
                max_len=L.CONTENT_CHARS,
                metavar="TEXT",
                help=N_("the memory's new text"),
            ),
            Arg(
                "tags",
                "list[str]",
                nullable=True,
                max_len=L.TAG_CHARS,
                metavar="a,b",
                help=N_("its tags instead of the ones it has, separated by commas (empty: none)"),
            ),
            Arg("importance", "int", nullable=True, min=1, max=5, metavar="1-5"),
            _TYPE,
        ),
        timeout=_MODEL,
        answered_by="loop.edit_memory",
    ),
    Command("memory.forget", N_("archive a memory (restorable)"), (_MEMORY_ID,), timeout=_MODEL),
    Command("memory.restore", N_("bring back a forgotten memory"), (_MEMORY_ID,), timeout=_MODEL),
    Command(
        "memory.export",
        N_("the chat logs as training examples (JSONL), or the memories as Obsidian notes"),
        (
            Arg(
                "format",
                "str",
                default="chatml",
                choices=(*EXPORT_FORMATS, *NOTE_FORMATS),
                metavar="FORMAT",
                help=N_(
                    "mlx (MLX-LM's train/valid folder), chatml, sharegpt or alpaca: the chat "
                    "logs as training examples; obsidian: the memories as a vault of notes in DIR"
                ),
            ),
            Arg(
                "vault",
                "str",
                nullable=True,
                non_empty=True,
                max_len=L.PATH_CHARS,
                positional=True,
                metavar="DIR",
                help=N_("with --format obsidian: a new (or empty) folder for the vault"),
            ),
            Arg(
                "valid",
                "float",
                nullable=True,
                min=0.0,
                max=EXPORT_VALID_MAX,
                metavar="SHARE",
                help=N_(
                    "the share kept for validation, such as 0.1 (split by content, the same "
                    "every time; mlx's default 0.1, the others' 0)"
                ),
            ),
            Arg(
                "system",
                "bool",
                default=False,
                help=N_("the persona (system/persona.md) as the system turn"),
            ),
            Arg(
                "include_secrets",
                "bool",
                default=False,
                help=N_("also the examples withheld as private or holding a secret"),
            ),
            Arg(
                "include",
                "list[str]",
                default=(),
                max_len=L.TAG_CHARS,
                metavar="ID",
                help=N_("a withheld example to include, by the id --list-withheld shows"),
            ),
            Arg(
                "list_withheld",
                "bool",
                default=False,
                help=N_(
                    "list what was withheld (its day, why, a masked preview) and write nothing"
                ),
            ),
        ),
        timeout=_MODEL,
        answered_by="exporter.export",
    ),
    Command(
        "memory.examples",
        N_("store the example memories"),
        timeout=_MODEL,
        answered_by="memory.load_examples",
    ),
    Command("memory.stats", N_("counts by layer, type and project"), timeout=_MODEL),
    Command(
        "context",
        N_("the context the chat would be given for PROMPT"),
        (
            _required("prompt", "PROMPT", L.CONTENT_CHARS),
            Arg(
                "budget",
                "int",
                default=L.CONTEXT_BUDGET_DEFAULT,
                min=L.CONTEXT_BUDGET_MIN,
                max=L.CONTEXT_BUDGET_MAX,
                metavar="TOKENS",
            ),
        ),
        timeout=_MODEL,
        answered_by="memory.context",
    ),
    Command("trash.list", N_("what is in ALMA's trash"), answered_by="engine.trash_list"),
    Command(
        "model.status",
        N_("which model answers: path, backend, loaded, context size, threads, last tokens/s"),
    ),
    Command(
        "model.use",
        N_(
            "answer with another GGUF model file, after checking it loads (the old one stays if "
            "not); with --lora, a LoRA adapter in GGUF applied to it, checked to fit first"
        ),
        (
            _required("path", "PATH", L.PATH_CHARS),
            Arg(
                "lora",
                "str",
                nullable=True,
                non_empty=True,
                max_len=L.PATH_CHARS,
                metavar="ADAPTER",
                help=N_("a LoRA adapter in GGUF for this model (without it: the model alone)"),
            ),
        ),
        timeout=_MODEL,
    ),
    Command(
        "chat.start",
        N_("open a chat session: its id, pending suggestions, the model"),
        cli=False,
    ),
    Command(
        "chat.send",
        N_("one message of a chat session; the answer streams as token events"),
        (
            _SESSION,
            Arg("message", "str", required=True, non_empty=True, max_len=L.MESSAGE_CHARS),
        ),
        timeout=_MODEL,
        streamed=True,
        cli=False,
    ),
    Command(
        "chat.cancel", "stop the answer streaming on this connection", cli=False, answered_by=None
    ),
    Command(
        "backup.init",
        N_(
            "create an encrypted backup repository in TARGET (a folder, e.g. on the portable "
            "disk) and remember it as ALMA's backup target; the password is never stored in "
            "the root in clear"
        ),
        (
            _required("target", "TARGET", L.PATH_CHARS),
            Arg(
                "password_file",
                "str",
                nullable=True,
                non_empty=True,
                max_len=L.PATH_CHARS,
                metavar="F",
                help=N_("the file that holds the password (without it, it is asked here)"),
            ),
        ),
        timeout=_MODEL,
    ),
    Command(
        "backup.now",
        N_("back up the root now (its files and .alma/ taken consistently)"),
        timeout=_BACKUP,
    ),
    Command(
        "backup.list",
        N_("this root's snapshots in the backup repository"),
        (
            Arg(
                "all",
                "bool",
                default=False,
                help=N_("every root's snapshots in the repository, with the folder each is of"),
            ),
        ),
        timeout=_SLOW,
    ),
    Command("backup.check", N_("verify the backup repository"), timeout=_BACKUP),
    Command(
        "backup.forget",
        N_("forget the snapshots the retention of autonomy.conf does not keep"),
        timeout=_BACKUP,
    ),
    Command(
        "backup.restore",
        N_(
            "restore a snapshot, or some paths of it, into DIR: never into the live root, "
            "never over an existing file"
        ),
        (
            _required("snapshot", "SNAPSHOT", L.SHORT_TEXT),
            Arg(
                "paths",
                "list[str]",
                default=(),
                non_empty=True,
                max_len=L.PATH_CHARS,
                positional=True,
                metavar="PATH",
            ),
            Arg(
                "to",
                "str",
                required=True,
                non_empty=True,
                max_len=L.PATH_CHARS,
                metavar="DIR",
                help=N_("a new (or empty) folder outside the root"),
            ),
            Arg(
                "paths_hex",
                "list[str]",
                default=(),
                non_empty=True,
                max_len=2 * L.PATH_CHARS,
                metavar="HEX",
                help=N_(
                    "a PATH given as the hex digits of its bytes (alma-ctl sends a PATH that "
                    "is not UTF-8 this way)"
                ),
            ),
            Arg(
                "any_root",
                "bool",
                default=False,
                help=N_(
                    "SNAPSHOT may be another root's (`backup list --all` shows them): how a "
                    "root lost with its computer comes back"
                ),
            ),
        ),
        timeout=_BACKUP,
    ),
    Command(
        "trash.empty",
        N_("remove for good what has been in the trash at least DAYS days"),
        (
            Arg(
                "older_than_days",
                "int",
                required=True,
                min=0,
                max=100_000,
                flag="--older-than",
                metavar="DAYS",
            ),
        ),
        timeout=_SLOW,
        answered_by="engine.trash_empty",
    ),
    Command(
        "trash.restore",
        N_(
            "put one trashed file (or all of one trash entry) back where it was, never over an "
            "existing file; undo takes it back"
        ),
        (
            Arg(
                "id",
                "int",
                required=True,
                min=1,
                max=MAX_ID,
                positional=True,
                metavar="ID",
                help=N_("the action whose trash it is, as `alma-ctl trash list` shows it"),
            ),
            Arg(
                "path",
                "str",
                nullable=True,
                non_empty=True,
                max_len=L.PATH_CHARS,
                positional=True,
                metavar="PATH",
                help=N_("where the file was, as `alma-ctl trash list` shows it; all when omitted"),
            ),
        ),
        timeout=_SLOW,
        answered_by="loop.trash_restore",
    ),
)


def _build(table: tuple[Command, ...]) -> dict[str, Command]:
    commands: dict[str, Command] = {}
    for command in table:
        if command.name in commands:  # a registry that silently shadows is a registry that lies
            raise ValueError(f"duplicate command {command.name}")
        commands[command.name] = command
    return commands


COMMANDS: dict[str, Command] = _build(_TABLE)


def validate(cmd: str, args: dict[str, object]) -> dict[str, object]:
    """Checked arguments of ``cmd`` with defaults filled in, or a one-sentence error.

    Raises :class:`UnknownCommandError` or :class:`BadArgumentError`; never anything else,
    whatever ``args`` holds (the server calls it on untrusted input).
    """
    command = COMMANDS.get(cmd)
    if command is None:
        raise UnknownCommandError(
            _(
                "Unknown command {command}; run `alma-ctl --help` to see the commands.",
                command=_quote(cmd),
            )
        )
    for key in args:
        if key not in command.by_name:
            # An unknown key has no alma-ctl spelling: only a program sends one.
            raise BadArgumentError(
                _(
                    "`alma-ctl {command}` has no argument {name}.",
                    command=command.spelling,
                    name=_quote(key),
                )
            )
    checked: dict[str, object] = {}
    for spec in command.args:
        if spec.name not in args:
            if spec.required:
                raise BadArgumentError(
                    _(
                        "`alma-ctl {command}` needs {argument}.",
                        command=command.spelling,
                        argument=spec.spelling,
                    )
                )
            default = spec.default
            checked[spec.name] = list(default) if isinstance(default, tuple) else default
            continue
        checked[spec.name] = _check(command, spec, args[spec.name])
    return checked


def _wrong(command: Command, spec: Arg, detail: str = "") -> BadArgumentError:
    if command.cli:
        argument, where = spec.spelling, f"`alma-ctl {command.spelling}`"
    else:  # only a program sends it: named as the wire names it
        argument, where = spec.name, command.name
    return BadArgumentError(
        _(
            "{argument} of {command} must be {value}{detail}.",
            argument=argument,
            command=where,
            value=spec.describe(),
            detail=detail,
        )
    )


def _check(cmd: Command, spec: Arg, value: object) -> object:
    if value is None:
        if spec.nullable:
            return None
        raise _wrong(cmd, spec)
    if spec.type == "bool":
        if not isinstance(value, bool):
            raise _wrong(cmd, spec)
        return value
    if spec.type == "int":
        # bool is an int in Python; true is never a number here.
        if isinstance(value, bool) or not isinstance(value, int):
            raise _wrong(cmd, spec)
        too_small = spec.min is not None and value < spec.min
        too_big = spec.max is not None and value > spec.max
        if too_small or too_big:
            raise _wrong(cmd, spec)
        return value
    if spec.type == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _wrong(cmd, spec)
        number = float(value)
        if not (spec.min or 0.0) <= number <= (spec.max if spec.max is not None else number):
            raise _wrong(cmd, spec)  # NaN fails both comparisons
        return number
    if spec.type == "str":
        return _check_text(cmd, spec, value)
    if not isinstance(value, list) or len(value) > L.MAX_TAGS:
        raise _wrong(cmd, spec, _(" (at most {count})", count=L.MAX_TAGS))
    return [_check_text(cmd, spec, item) for item in value]


def _check_text(cmd: Command, spec: Arg, value: object) -> str:
    if not isinstance(value, str):
        raise _wrong(cmd, spec)
    if spec.choices and value not in spec.choices:
        raise _wrong(cmd, spec)
    if spec.non_empty and not value.strip():
        raise _wrong(cmd, spec)
    if spec.max_len is not None and len(value) > spec.max_len:
        raise _wrong(cmd, spec, _(" of at most {count} characters", count=spec.max_len))
    if "\x00" in value:  # never a valid name, and a classic way to cut a path short
        raise _wrong(cmd, spec, _(" without NUL characters"))
    return value


def _quote(name: str) -> str:
    # Echo untrusted names short and quoted, so an error never carries a megabyte or a newline.
    clipped = name if len(name) <= 40 else name[:39] + "…"
    return repr(clipped)
