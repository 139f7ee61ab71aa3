"""``alma chat``'s drawing of an answer, on a terminal in memory (tests/support/vt.py): what the
person can scroll back to once the answer is over is every line of it, once, in order, with
what was on the screen before it untouched."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import Markdown

from control import chat_terminal
from control.chat_terminal import RichScreen, plain_console
from tests.support.vt import Terminal

WIDTH, HEIGHT = 40, 12
BEFORE = [f"línea previa {n}" for n in range(1, 6)]


def _console(term: Terminal) -> Console:
    return plain_console(
        file=term,
        width=term.width,
        height=term.height,
        force_terminal=True,
        force_interactive=True,
        color_system=None,
    )


def _screen(tmp_path: Path) -> tuple[RichScreen, Terminal]:
    term = Terminal(WIDTH, HEIGHT)
    screen = RichScreen(str(tmp_path), console=_console(term))
    for line in BEFORE:
        screen.show(line)
    return screen, term


def _expected(tmp_path: Path, answer: str) -> list[str]:
    """The lines a person should find: the same start, then the answer printed in one go."""
    term = Terminal(WIDTH, HEIGHT)
    console = _console(term)
    RichScreen(str(tmp_path), console=console)
    for line in BEFORE:
        console.print(line)
    console.print(Markdown(answer, hyperlinks=False))
    return _written(term)


def _written(term: Terminal) -> list[str]:
    return [line for line in term.lines() if line.strip()]


def _paragraphs(*names: str) -> str:
    """Paragraphs of several rows each at WIDTH columns, every word different."""
    return "\n\n".join(" ".join(f"{name}{k} palabra" for k in range(12)) for name in names)


def _pieces(text: str, size: int = 3) -> list[str]:
    return [text[at : at + size] for at in range(0, len(text), size)]


def test_a_long_answer_ends_up_once_below_what_was_there(tmp_path: Path) -> None:
    items = "\n".join(f"- Fruta número {n}: dulce." for n in range(1, 3 * HEIGHT))
    answer = _paragraphs("uno", "dos", "tres") + "\n\n" + items + "\n\nFin de la lista."
    screen, term = _screen(tmp_path)
    screen.answer(iter(_pieces(answer)))
    assert _written(term) == _expected(tmp_path, answer)


def test_a_print_never_meets_a_redraw_of_the_live_area(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread that redraws the live area on its own gets every chance to: the answer waits
    for its next redraw once the live area shows several rows, and the first block printed
    for good waits for one more in the middle of its drawing. What the terminal ends up with
    must not depend on it."""
    redrawn = threading.Condition()
    redrawers: list[threading.Thread] = []
    refresh = Live.refresh

    def counted_refresh(live: Live) -> None:
        refresh(live)
        if threading.current_thread() is not threading.main_thread():
            with redrawn:
                redrawers.append(threading.current_thread())
                redrawn.notify_all()

    def one_more_redraw(*, required: bool = False) -> None:
        with redrawn:
            seen = len(redrawers)
            if required or any(thread.is_alive() for thread in redrawers):
                assert redrawn.wait_for(lambda: len(redrawers) > seen, timeout=30), "no redraw"

    held: list[str] = []

    class HeldMarkdown(Markdown):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            if not held and self.markup.endswith("\n\n"):
                held.append(self.markup)
                one_more_redraw()
            yield from super().__rich_console__(console, options)

    monkeypatch.setattr(Live, "refresh", counted_refresh)
    monkeypatch.setattr(chat_terminal, "Markdown", HeldMarkdown)
    first = _paragraphs("uno")
    answer = _paragraphs("uno", "dos", "tres")

    def tokens() -> Iterator[str]:
        one_more_redraw(required=True)  # the spinner turns on a thread of its own
        yield from _pieces(first)
        one_more_redraw()
        yield from _pieces(answer[len(first) :])

    screen, term = _screen(tmp_path)
    screen.answer(tokens())
    assert held, "no block was printed for good"
    assert _written(term) == _expected(tmp_path, answer)


def test_an_answer_without_words_leaves_the_screen_as_it_was(tmp_path: Path) -> None:
    screen, term = _screen(tmp_path)
    shown = term.lines()
    screen.answer(iter(["", " ", "\n"]))
    assert term.lines() == shown


def test_the_spinner_says_what_the_daemon_does_while_no_word_has_come(tmp_path: Path) -> None:
    status = "buscando en tus recuerdos"
    received: list[str] = []
    written = threading.Condition()

    class Recording(Terminal):
        def write(self, data: str) -> int:
            with written:
                received.append(data)
                written.notify_all()
            return super().write(data)

    term = Recording(WIDTH, HEIGHT)
    screen = RichScreen(str(tmp_path), console=_console(term))

    def tokens() -> Iterator[str]:
        screen.thinking(status)
        with written:
            shown = written.wait_for(lambda: status + "…" in "".join(received), timeout=30)
        assert shown, "the spinner never showed the status"
        yield from _pieces("Hola.")

    screen.answer(tokens())
    assert _written(term)[-1] == "Hola."
    assert not any(status in line for line in term.lines())
