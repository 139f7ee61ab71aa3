"""``alma chat`` on a terminal: prompt_toolkit reads, rich writes.

Input: Enter sends, Alt-Enter (Esc then Enter on any terminal) starts a new line, a pasted block
stays one message; the history of what the person typed is kept across sessions in the root's
``.alma/chat_history`` (mode 0600, like the memories it may repeat). Output: the answer is drawn
as markdown while it streams, under a "pensando…" spinner until the first token; each finished
block is printed for good, so a long answer ends up once in the terminal's scrollback. Everything
shown is plain text to rich (no markup, no emoji codes, no hyperlinks): the daemon's texts were
already made printable (controls shown as escapes), and must not gain new meaning here either.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import sys
import termios
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.text import Text

from control.chat_commands import KEYS_HELP
from policies.i18n import _
from policies.modes import PRIVATE_FILE

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prompt_toolkit.key_binding import KeyPressEvent

#: The history of what the person typed, per root, private like the memories it may repeat.
HISTORY_FILE = "chat_history"


def history_for(root: str) -> History:
    """The person's input history for ``root``: ``.alma/chat_history``, private, never a link.

    A root without ``.alma/`` (not initialised) or a history path that is not a plain file of
    ours gets a history that lasts this session only, rather than writing somewhere unexpected.
    """
    path = os.path.join(root, ".alma", HISTORY_FILE)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE)
    except OSError:
        return InMemoryHistory()
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return InMemoryHistory()
        if stat.S_IMODE(info.st_mode) != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)
    return FileHistory(path)


@contextlib.contextmanager
def _no_echo() -> Iterator[None]:
    """The terminal does not echo keys while an answer is drawn.

    The live area is redrawn by moving the cursor up over it; a ``^C`` (or anything typed) echoed
    at the end of its last, full-width line wraps to a new line, and the next redraw lands one
    line low, leaving a copy of the answer's first line behind. What is typed meanwhile is not
    lost: it waits for the next prompt, which shows it.
    """
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        yield  # not a terminal: nothing echoes
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ECHOCTL)
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def _keys() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("enter")
    def _send(event: KeyPressEvent) -> None:
        event.current_buffer.validate_and_handle()

    @keys.add("escape", "enter")
    def _new_line(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return keys


def plain_console(**options: Any) -> Console:
    """A console that shows text as it is: no markup, no emoji codes, no highlighting."""
    return Console(markup=False, emoji=False, highlight=False, **options)


class RichScreen:
    """The interactive front end of :class:`control.chat.Chat`."""

    def __init__(self, root: str, *, console: Console | None = None) -> None:
        self._console = console or plain_console()
        self._session: PromptSession[str] = PromptSession(
            history=history_for(root),
            multiline=True,
            key_bindings=_keys(),
            prompt_continuation="… ",
        )
        self._spinner: Spinner | None = None
        banner = _("ALMA chat. !ayuda lists the commands.") + " " + _(KEYS_HELP)
        self._console.print(Text(banner, style="dim"))

    def read(self) -> str | None:
        while True:
            try:
                return self._session.prompt("› ")
            except KeyboardInterrupt:  # Ctrl-C at the prompt clears the line, as in a shell
                continue
            except EOFError:
                return None

    def show(self, text: str) -> None:
        self._console.print(Text(text))

    def problem(self, text: str) -> None:
        self._console.print(Text(text, style="bold red"))

    def note(self, text: str) -> None:
        self._console.print(Text(text, style="dim italic"))

    def thinking(self, text: str) -> None:
        if self._spinner is not None:
            self._spinner.update(text=Text(text.rstrip("…. ") + "…", style="dim"))

    def answer(self, tokens: Iterator[str]) -> None:
        """Stream the answer: each finished block (up to a blank line outside a code block) is
        printed for good as it ends, and only the unfinished rest is redrawn live.

        A live area taller than the screen cannot be redrawn: the cursor cannot move up into
        the scrollback, so every redraw left a partial copy of the answer behind. The live
        rest is kept shorter than the screen (its finished lines printed too when one block
        grows that long; cropped meanwhile if a single line does), and drawn whole once at the
        end.

        Only this thread writes while the answer is drawn. Rich's live area redraws from a
        thread of its own, and a redraw that meets a print moves the cursor up by a height that
        is no longer the one on the screen, overwriting printed lines. That thread only turns
        the spinner, until the first words; from then on the live area is redrawn here, after
        each piece, and a print never meets a redraw."""
        pieces = iter(tokens)
        text = ""
        self._spinner = Spinner("dots", text=Text(_("thinking…"), style="dim"))
        try:
            with _no_echo():
                with Live(
                    self._spinner, console=self._console, refresh_per_second=10, transient=True
                ):
                    for piece in pieces:
                        text += piece
                        if text.strip():
                            break
                self._spinner = None
                if text.strip():
                    self._stream(text, pieces)
        finally:
            self._spinner = None

    def _stream(self, text: str, pieces: Iterator[str]) -> None:
        """Draw ``text`` and the ``pieces`` still to come, redrawing the live area by hand."""
        done = 0  # how much of ``text`` is printed for good
        with Live(
            Text(""), console=self._console, auto_refresh=False, vertical_overflow="crop"
        ) as live:
            for piece in itertools.chain([""], pieces):
                text += piece
                cut = _finished(text, done, self._console.width, self._console.height)
                if cut > done:
                    live.update(Text(""))
                    live.console.print(Markdown(text[done:cut], hyperlinks=False))
                    done = cut
                rest = text[done:]
                live.update(
                    Markdown(rest, hyperlinks=False) if rest.strip() else Text(""), refresh=True
                )


def _finished(text: str, start: int, width: int, height: int) -> int:
    """Where the finished part of ``text`` after ``start`` ends: after its last blank line
    outside a code block; or, when the rest would not fit in half the screen, after its last
    line outside a code block. ``start`` when nothing more is finished."""
    cut = _last_outside_code(text, "\n\n", start)
    if cut > start:
        return cut
    rest = text[start:]
    rows = sum(1 + len(line) // max(1, width) for line in rest.split("\n"))
    if rows > max(1, height // 2):
        return _last_outside_code(text, "\n", start)
    return start


def _last_outside_code(text: str, mark: str, start: int) -> int:
    at = text.rfind(mark, start)
    while at >= 0:
        if _fences(text[:at]) % 2 == 0:
            return at + len(mark)
        at = text.rfind(mark, start, at)
    return start


def _fences(text: str) -> int:
    """How many code fences (lines opening or closing a fenced block) ``text`` holds."""
    return sum(1 for line in text.split("\n") if line.lstrip().startswith(("```", "~~~")))
