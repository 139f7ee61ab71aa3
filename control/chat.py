"""``alma chat``: a conversation with the local model through alma-agentd (contract §7).

The daemon owns the model, the memories and the suggestions; this is only the person's end.
A line the person types that starts with ``!`` is a command (:mod:`control.chat_commands`), sent
through the same :class:`control.client.Client` and the same command table as alma-ctl and shown
with the renderer alma-ctl uses (:func:`control.views.render_result`, the greeting too); any
other line is a message, streamed back as the model writes it.
Nothing that comes back (the model's words, memories, file names) is ever parsed for commands,
and all of it goes through :func:`policies.text.printable` before it is printed: a
terminal control shows as its escape (``\\x1b``), never acts.

Two front ends share :class:`Chat`: :class:`PlainScreen` when stdin or stdout is not a terminal
(one message a line, plain text, scriptable) and, on a terminal, :class:`RichScreen` with
prompt_toolkit for input (multiline, history across sessions) and rich for the streamed markdown.
Both are imported only here: alma-ctl never pays for them.
"""

from __future__ import annotations

import contextlib
import io
import signal
import sys
import threading
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

from control import chat_commands
from control.chat_commands import Local, Run, Send, Usage
from control.cli import Help, UsageError, chat_parser, read_options
from control.client import Client, DaemonUnreachable
from control.commands import COMMANDS, Arg
from control.protocol import daemon_start_hint
from control.views import render_result
from policies.errors import EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, AlmaError, exit_code_for
from policies.i18n import N_, _
from policies.text import printable

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

    from control.client import Stream

# --------------------------------------------------------------------------- the screens


class Screen(Protocol):
    """What :class:`Chat` needs from a front end. Texts given to it are already safe."""

    def read(self) -> str | None:
        """The next thing the person typed; None when they leave (end of input, Ctrl-D)."""

    def show(self, text: str) -> None:
        """A block of text: a command's result, the help, the pending suggestions."""

    def problem(self, text: str) -> None:
        """One sentence about something that went wrong."""

    def answer(self, tokens: Iterator[str]) -> None:
        """Show an answer as its pieces arrive (the iterator ends when the answer does)."""

    def thinking(self, text: str) -> None:
        """A status while no token has arrived yet (``pensando``)."""

    def note(self, text: str) -> None:
        """A short remark after an answer (stopped, which model, how fast)."""


class PlainScreen:
    """Lines in, plain text out: for pipes, files and scripts. Notes go to stderr."""

    def __init__(self, stdin: io.TextIOBase, stdout: io.TextIOBase, stderr: io.TextIOBase) -> None:
        self._in = stdin
        self._out = stdout
        self._err = stderr

    def read(self) -> str | None:
        line = self._in.readline()
        if not line:
            return None
        return line.rstrip("\n").rstrip("\r")

    def show(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def problem(self, text: str) -> None:
        self._out.flush()
        self._err.write(text + "\n")
        self._err.flush()

    def answer(self, tokens: Iterator[str]) -> None:
        wrote = False
        ended_with_newline = False
        for piece in tokens:
            if piece:
                self._out.write(piece)
                self._out.flush()
                wrote = True
                ended_with_newline = piece.endswith("\n")
        if wrote and not ended_with_newline:
            self._out.write("\n")
        self._out.flush()

    def thinking(self, text: str) -> None:
        pass  # a script wants the answer, not a spinner

    def note(self, text: str) -> None:
        self.problem(text)


# --------------------------------------------------------------------------- the chat


class _Interrupts:
    """While an answer streams, Ctrl-C asks the daemon to stop it (then, a second time, hangs up).

    A handler rather than KeyboardInterrupt: an exception raised at an arbitrary point of the
    read loop could drop bytes already received and leave the answer's framing broken.
    """

    def __init__(self, stream: Stream) -> None:
        self._stream = stream
        self.count = 0
        self._previous: object = None
        self._installed = False

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count == 1:
            self._stream.cancel()
        else:
            self._stream.close()

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():  # signals reach only it
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]  # whatever signal.signal gave back


class Chat:
    """One chat session with the daemon, whatever the screen."""

    def __init__(self, client: Client, screen: Screen) -> None:
        self._client = client
        self._screen = screen
        self.session: str | None = None
        self.last_message: str | None = None
        self.exit_code = EXIT_OK  # of the last line that failed, for scripts

    # -- start ---------------------------------------------------------------------------
    def start(self, *, greet: bool = True) -> None:
        """Open the session (``chat.start``); show the model and the pending suggestions.

        Raises :class:`DaemonUnreachable` when nobody answers, like every call.
        """
        started = self._client.call("chat.start")
        if not isinstance(started, dict) or not isinstance(started.get("session"), str):
            raise AlmaError(_("alma-agentd sent an unexpected answer to chat.start; update it."))
        self.session = started["session"]
        if not greet:
            return
        self._screen.show(render_result("chat.start", {}, started))

    # -- one line ------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Do what ``line`` (typed by the person) asks; False when they want to leave."""
        decision = chat_commands.parse_line(line)
        if decision is None:
            return True
        try:
            if isinstance(decision, Usage):
                self._failed(decision.sentence, EXIT_USAGE)
            elif isinstance(decision, Local):
                return self._local(decision.name)
            elif isinstance(decision, Run):
                self._run(decision.cmd, dict(decision.args))
            elif isinstance(decision, Send):
                self._send(decision.text)
        except DaemonUnreachable:
            raise
        except AlmaError as exc:
            self._failed(printable(exc.message), exit_code_for(exc.code))
        return True

    def _failed(self, sentence: str, code: int) -> None:
        self.exit_code = code
        self._screen.problem(sentence)

    def _local(self, name: str) -> bool:
        if name == "quit":
            return False
        if name == "help":
            self._screen.show(chat_commands.help_text())
        elif name == "memory_today":
            self._memory_today()
        elif name == "context_last":
            if self.last_message is None:
                self._failed(_(NO_MESSAGE_YET), EXIT_USAGE)
            else:
                self._run("context", {"prompt": self.last_message})
        return True

    def _run(self, cmd: str, args: dict[str, object]) -> None:
        result = self._call(cmd, args)
        self._screen.show(render_result(cmd, args, result))

    def _call(self, cmd: str, args: dict[str, object]) -> object:
        return self._client_for(cmd).call(cmd, **args)

    def _client_for(self, cmd: str) -> Client:
        """A client that waits as long as alma-ctl does for ``cmd`` (accept may move many files)."""
        timeout = COMMANDS[cmd].timeout
        client = self._client
        if timeout == client.timeout:
            return client
        return Client(client.socket_path, timeout, start_hint=client.start_hint)

    def _memory_today(self) -> None:
        self._screen.show(memories_today(self._call("memory.list", {"limit": 1000})))

    # -- a message -----------------------------------------------------------------------
    def _send(self, text: str) -> None:
        if self.session is None:
            raise AlmaError(_("The chat session has not started."))
        self.last_message = text
        stream = self._client_for("chat.send").stream(
            "chat.send", session=self.session, message=text
        )
        with stream, _Interrupts(stream) as interrupts:
            try:
                self._screen.answer(self._tokens(stream))
            except DaemonUnreachable:
                if interrupts.count < 2:
                    raise  # the daemon went away; a second Ctrl-C hangs up on purpose
        if interrupts.count and stream.result is None:
            self._screen.note(_("Answer stopped."))
            return
        self._after(stream.result)

    def _tokens(self, stream: Stream) -> Iterator[str]:
        thinking = True
        for event in stream:
            kind = event.get("type")
            text = event.get("text")
            if not isinstance(text, str):
                continue
            if kind == "token":
                thinking = False
                yield printable(text)  # per character: a sequence split across tokens too
            elif kind == "known":  # what ALMA knows, quoted by the daemon before the answer
                yield printable(text) + "\n\n"
            elif kind == "status" and thinking:
                self._screen.thinking(printable(text))

    def _after(self, result: object) -> None:
        for note in answer_notes(result):
            self._screen.note(note)


#: ``!contexto`` alone before any message (alma chat and the web panel's chat).
NO_MESSAGE_YET = N_("No message yet: write one first, or give the text (!contexto TEXT).")


def memories_today(listed: object) -> str:
    """``!memoria hoy``: the memories of ``listed`` (memory.list's answer) stored today, as
    alma chat and the web panel's chat show them."""
    today = date.today()
    mine = [m for m in listed if _local_day(m) == today] if isinstance(listed, list) else []
    if not mine:
        return _("No memories stored today.")
    return render_result("memory.list", {}, mine)


def _local_day(memory: object) -> date | None:
    if not isinstance(memory, dict) or not isinstance(memory.get("created_at"), str):
        return None
    try:
        when = datetime.fromisoformat(memory["created_at"])
    except ValueError:
        return None
    return (when.astimezone() if when.tzinfo else when).date()


# --------------------------------------------------------------------------- main


def _arguments(argv: list[str]) -> tuple[str | None, str | None]:
    """``--root`` and ``--once`` of ``alma chat``; raises :class:`Help` or :class:`UsageError`."""
    once = Arg(
        "once", "str", metavar=_("MESSAGE"), help=N_("answer one message (or !command) and exit")
    )
    # `chat`, the one command of `alma`, anywhere among the options (contract §2: options
    # before the command, and after it too); a word that is an option's value stays its value.
    description = N_(
        "Talk with ALMA's local model through alma-agentd. Lines that start with ! "
        "are commands (!ayuda lists them)."
    )
    values = read_options(chat_parser(once, description), argv)
    root, message = values.get("root"), values.get("once")
    assert (root is None or isinstance(root, str)) and (message is None or isinstance(message, str))
    return root, message


def answer_notes(result: object) -> list[str]:
    """What is said under an answer (it was stopped, cut, something was left out): alma chat
    and the web panel's chat say the same."""
    if not isinstance(result, dict):
        return []
    notes: list[str] = []
    stopped = result.get("stopped")
    if stopped == "cancelled":
        notes.append(_("Answer stopped."))
    elif stopped == "max_tokens":
        notes.append(_("The answer reached its length limit."))
    elif stopped == "timeout":
        notes.append(_("The answer reached its time limit."))
    elif stopped == "loop":
        notes.append(_("The answer started repeating itself, so ALMA cut it there."))
    dropped = result.get("dropped_note")
    if isinstance(dropped, str) and dropped:  # written by the daemon, in the message's language
        notes.append(printable(dropped))
    if result.get("invented_citations"):
        notes.append(_("ALMA left out a citation of a source that does not exist in its memory."))
    if result.get("message_cut"):
        notes.append(
            _(
                "Your message was longer than the model can read at once: its middle was "
                "left out, its start and end were read."
            )
        )
    if not result.get("text") and stopped == "done":
        notes.append(_("The model gave an empty answer."))
    return notes


def _utf8(stream: object) -> None:
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    from control.protocol import socket_name_for
    from policies.i18n import follow_root_language
    from policies.layout import language_file, root_name

    _utf8(sys.stdout)
    _utf8(sys.stderr)
    try:
        cli_root, once = _arguments(sys.argv[1:] if argv is None else argv)
    except Help as asked:
        asked.show()
        return EXIT_OK
    except UsageError as exc:
        exc.show()
        return EXIT_USAGE
    root = root_name(cli_root)
    follow_root_language(language_file(root))
    client = Client(socket_name_for(root), 30.0, start_hint=daemon_start_hint(root))
    interactive = once is None and sys.stdin.isatty() and sys.stdout.isatty()
    screen: Screen
    if interactive:
        from control.chat_terminal import RichScreen

        screen = RichScreen(root)
    else:
        if isinstance(sys.stdin, io.TextIOWrapper):
            sys.stdin.reconfigure(encoding="utf-8", errors="replace")
        screen = PlainScreen(sys.stdin, sys.stdout, sys.stderr)  # type: ignore[arg-type]  # the std streams are text streams
    chat = Chat(client, screen)
    try:
        chat.start(greet=once is None)
        if once is not None:
            chat.handle(once)
            return chat.exit_code
        while True:
            line = screen.read()
            if line is None or not chat.handle(line):
                return chat.exit_code
    except DaemonUnreachable as exc:
        screen.problem(exc.message)
        return EXIT_UNREACHABLE
    except AlmaError as exc:
        screen.problem(printable(exc.message))
        return exit_code_for(exc.code)
    except KeyboardInterrupt:
        return 130
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
