"""The commands a person types in ``alma chat`` (contract §7): a line in, a decision out.

Pure and standard library only. Each command names the socket command alma-ctl sends for the
same thing, so the chat never grows a second implementation of anything: it calls the daemon
through :class:`control.client.Client`, as alma-ctl does. The chat hands this module only the
lines the person typed; the model's output, memories, logs and file names never reach it, so
nothing they say can run a command.
"""

from __future__ import annotations

import contextlib
from datetime import date, timedelta
from typing import TYPE_CHECKING, NamedTuple

from control.commands import COMMANDS, MAX_ID
from policies import limits as L
from policies.i18n import N_, _
from policies.text import loose_fold

if TYPE_CHECKING:
    from collections.abc import Callable


class Send(NamedTuple):
    """A message for the model."""

    text: str


class Run(NamedTuple):
    """A socket command, with its arguments as the command table names them."""

    cmd: str
    args: dict[str, object]


class Local(NamedTuple):
    """Something the chat answers itself: help, quit, today's memories, the last context."""

    name: str


class Usage(NamedTuple):
    """A line the person must fix: one sentence, nothing was run."""

    sentence: str


Decision = Send | Run | Local | Usage


class ChatCommand(NamedTuple):
    """One in-chat command: its words (Spanish first, then English), how to use it, what it does."""

    names: tuple[str, ...]
    usage: str  # what follows the word, e.g. "N [reason]" (marked N_, shown translated)
    help: str  # marked N_, shown translated
    wire: str | None  # the socket command it sends (for the table check), None if local
    build: Callable[[str, str], Decision]  # (word as typed, rest of the line) -> decision


def _needs(word: str, usage: str, what: str) -> Usage:
    """The usage of ``!word``; ``usage`` and ``what`` are N_-marked texts."""
    return Usage(_("Usage: !{word} {usage} ({what}).", word=word, usage=_(usage), what=_(what)))


def _number(text: str) -> int | None:
    text = text.removeprefix("#")
    if not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if 1 <= value <= MAX_ID else None


def _text_command(wire: str, arg: str, usage: str, what: str) -> Callable[[str, str], Decision]:
    def build(word: str, rest: str) -> Decision:
        if not rest.strip():
            return _needs(word, usage, what)
        return Run(wire, {arg: rest.strip()})

    return build


def _id_command(
    wire: str, what: str, *, optional: bool = False, extra: dict[str, object] | None = None
) -> Callable[[str, str], Decision]:
    usage = "[N]" if optional else "N"

    def build(word: str, rest: str) -> Decision:
        if not rest.strip() and optional:
            return Run(wire, {})
        number = _number(rest.strip())
        if number is None:
            return _needs(word, usage, what)
        return Run(wire, {"id": number, **(extra or {})})

    return build


def _reject(word: str, rest: str) -> Decision:
    head, _sep, reason = rest.strip().partition(" ")
    number = _number(head)
    if number is None:
        return _needs(
            word, N_("N [reason]"), N_("the number of the suggestion, then why if you like")
        )
    args: dict[str, object] = {"id": number}
    if reason.strip():
        args["reason"] = reason.strip()
    return Run("suggestions.reject", args)


def _suggestions(word: str, rest: str) -> Decision:
    option = _fold(rest)
    if not option:
        return Run("suggestions.list", {})
    if option in ("todas", "all"):
        return Run("suggestions.list", {"all": True})
    return _needs(word, N_("[all]"), N_("pending suggestions (or all of them)"))


def _history(word: str, rest: str) -> Decision:
    if not rest.strip():
        return Run("history", {})
    number = _number(rest.strip())
    if number is None or number > 1000:
        return _needs(word, "[N]", N_("the newest N actions, at most 1000"))
    return Run("history", {"limit": number})


_AUTONOMY = {
    "": "autonomy.status",
    "estado": "autonomy.status",
    "status": "autonomy.status",
    "off": "autonomy.off",
    "on": "autonomy.on",
}


def _autonomy(word: str, rest: str) -> Decision:
    wire = _AUTONOMY.get(_fold(rest))
    if wire is None:
        return _needs(word, N_("off|on|status"), N_("pause, resume or show ALMA's autonomy"))
    return Run(wire, {})


def _memory(word: str, rest: str) -> Decision:
    if _fold(rest) in ("hoy", "today"):
        return Local("memory_today")
    return _needs(word, "hoy" if word == "memoria" else "today", N_("the memories stored today"))


def _context(word: str, rest: str) -> Decision:
    if not rest.strip():
        return Local("context_last")
    return Run("context", {"prompt": rest.strip()})


def _summary(word: str, rest: str) -> Decision:
    when = _fold(rest)
    if when in ("", "hoy", "today"):
        return Run("report", {})
    day: date | None = None
    if when in ("ayer", "yesterday"):
        day = date.today() - timedelta(days=1)
    elif len(when) == 10:
        with contextlib.suppress(ValueError):
            day = date.fromisoformat(when)
    if day is None:
        return _needs(
            word, N_("[YYYY-MM-DD|yesterday]"), N_("the day's analysis (today by default)")
        )
    report = COMMANDS.get("report")
    name = report.args[0].name if report is not None and report.args else "date"
    return Run("report", {name: day.isoformat()})  # the report's one argument, as named


def _backup(word: str, rest: str) -> Decision:
    option = _fold(rest)
    if option in ("", "lista", "list"):
        return Run("backup.list", {})
    if option in ("ahora", "now"):
        return Run("backup.now", {})
    return _needs(word, N_("[now|list]"), N_("back up the root now, or list the snapshots"))


def _no_args(result: Decision) -> Callable[[str, str], Decision]:
    def build(word: str, rest: str) -> Decision:
        if rest.strip():
            return Usage(_("!{word} takes nothing after it.", word=word))
        return result

    return build


CHAT_COMMANDS: tuple[ChatCommand, ...] = (
    ChatCommand(("ayuda", "help"), "", N_("this list"), None, _no_args(Local("help"))),
    ChatCommand(
        ("buscar", "search"),
        N_("TEXT"),
        N_("search the memories"),
        "memory.search",
        _text_command("memory.search", "query", N_("TEXT"), N_("what to look for in the memories")),
    ),
    ChatCommand(
        ("recordar", "remember"),
        N_("TEXT"),
        N_("store a memory (#tags become its tags)"),
        "memory.add",
        _text_command("memory.add", "content", N_("TEXT"), N_("what ALMA should remember")),
    ),
    ChatCommand(
        ("olvidar", "forget"),
        "ID",
        N_("forget a memory (restorable)"),
        "memory.forget",
        _text_command("memory.forget", "id", "ID", N_("the id that !buscar shows")),
    ),
    ChatCommand(("memoria", "memory"), "hoy", N_("the memories stored today"), "memory.list", _memory),
    ChatCommand(
        ("contexto", "context"),
        N_("[TEXT]"),
        N_("what the model is given for TEXT, or for your last message"),
        "context",
        _context,
    ),
    ChatCommand(
        ("sugerencias", "suggestions"),
        N_("[all]"),
        N_("pending suggestions (or all of them)"),
        "suggestions.list",
        _suggestions,
    ),
    ChatCommand(
        ("ver", "show"),
        "N",
        N_("one suggestion, its evidence and its plan"),
        "suggestions.show",
        # A long plan as its summary and first ops, as alma-ctl shows it.
        _id_command("suggestions.show", N_("the number of the suggestion"), extra={"all": False}),
    ),
    ChatCommand(
        ("aceptar", "accept"),
        "N",
        N_("run suggestion N now"),
        "suggestions.accept",
        _id_command("suggestions.accept", N_("the number of the suggestion")),
    ),
    ChatCommand(
        ("rechazar", "reject"),
        N_("N [reason]"),
        N_("reject suggestion N"),
        "suggestions.reject",
        _reject,
    ),
    ChatCommand(
        ("deshacer", "undo"),
        "[N]",
        N_("revert the last action, or action N"),
        "undo",
        _id_command("undo", N_("the number of the action, or nothing for the last one"), optional=True),
    ),
    ChatCommand(("historial", "history"), "[N]", N_("the actions done"), "history", _history),
    ChatCommand(
        ("autonomia", "autonomy"),
        N_("off|on|status"),
        N_("pause, resume or show ALMA's autonomy"),
        "autonomy.status",
        _autonomy,
    ),
    ChatCommand(
        ("resumir", "summary"),
        N_("[YYYY-MM-DD|yesterday]"),
        N_("the day's analysis (today by default)"),
        "report",
        _summary,
    ),
    ChatCommand(("modelo", "model"), "", N_("which model answers"), "model.status", _no_args(Run("model.status", {}))),
    ChatCommand(
        ("respaldo", "backup"),
        N_("[now|list]"),
        N_("back up the root now, or list the snapshots"),
        "backup.list",
        _backup,
    ),
    ChatCommand(("salir", "quit", "exit"), "", N_("leave (or Ctrl-D)"), None, _no_args(Local("quit"))),
)  # fmt: skip

#: The keys of the chat, for the help and the banner.
KEYS_HELP = N_(
    "Enter sends; Alt-Enter (or Esc then Enter) starts a new line; Ctrl-C stops an answer "
    "being written; Ctrl-D or !salir leaves."
)

_BY_WORD: dict[str, ChatCommand] = {name: spec for spec in CHAT_COMMANDS for name in spec.names}


def _fold(text: str) -> str:
    """A command word as typed: ``!Autonomía`` is ``!autonomia``."""
    return loose_fold(text.strip())


def parse_line(line: str) -> Decision | None:
    """What the person's ``line`` asks for; None for a blank line.

    A line whose first non-blank character is ``!`` is a command; anything else is a message
    for the model, sent as typed.
    """
    if not line.strip():
        return None
    stripped = line.lstrip()
    if not stripped.startswith("!"):
        if len(line) > L.MESSAGE_CHARS:
            return Usage(
                _(
                    "A chat message can be at most {limit} characters and this one has "
                    "{count}; send it in parts.",
                    limit=L.MESSAGE_CHARS,
                    count=len(line),
                )
            )
        return Send(line)
    head, _sep, rest = stripped[1:].partition(" ")
    if "\n" in head:  # "!aceptar 1\nmore": the word ends at the line's end too
        head, _sep, more = head.partition("\n")
        rest = "\n" + more + (" " + rest if rest else "")
    spec = _BY_WORD.get(_fold(head))
    if spec is None:
        return Usage(_("“!{word}” is not a command; !ayuda lists the commands.", word=head[:20]))
    word = _fold(head)
    decision = spec.build(word, rest)
    if isinstance(decision, Run) and decision.cmd not in COMMANDS:
        return Usage(
            _(
                "!{word} is not available: this ALMA has no {command} command yet.",
                word=word,
                command=decision.cmd,
            )
        )
    return decision


def help_text() -> str:
    """The list of commands, one a line, with the English alias in brackets."""
    lines = []
    for spec in CHAT_COMMANDS:
        usage = f" {_(spec.usage)}" if spec.usage else ""
        aliases = ", ".join(f"!{name}" for name in spec.names[1:])
        if spec.names[0] == "memoria":
            aliases = "!memory today"
        lines.append(f"!{spec.names[0]}{usage} ({aliases}): {_(spec.help)}")
    lines.append(_(KEYS_HELP))
    return "\n".join(lines)
