"""A terminal in memory, for tests that check what a person would see and scroll back to.

It obeys the few controls rich's console writes (carriage return, line feed as a terminal with
``onlcr`` does, cursor up, erase in line, styles and cursor visibility ignored) with a real
terminal's rules: a full line wraps at the next character, the cursor cannot move up out of
the screen, and a line feed on the last row scrolls the top row into the scrollback for good.
Any other control is an error, so a test never passes on a sequence this terminal ignored.
"""

from __future__ import annotations

import re
import threading

_CSI = re.compile(r"\x1b\[(\??)([0-9;]*)([A-Za-z])")


class Terminal:
    """A file-like terminal of ``width`` columns and ``height`` rows, with unlimited scrollback."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self._lines: list[list[str]] = [[] for _ in range(height)]
        self._row = 0  # on the screen: the last ``height`` lines
        self._col = 0  # ``width`` means: the next character wraps first
        self._lock = threading.Lock()

    # -- the file side: what rich's Console calls --------------------------------------------
    def write(self, data: str) -> int:
        with self._lock:
            at = 0
            while at < len(data):
                char = data[at]
                if char == "\x1b":
                    match = _CSI.match(data, at)
                    if match is None:
                        raise ValueError(
                            f"a control this terminal does not know: {data[at : at + 12]!r}"
                        )
                    self._control(*match.groups())
                    at = match.end()
                    continue
                if char == "\n":
                    self._line_feed()
                elif char == "\r":
                    self._col = 0
                elif char < " " or "\x7f" <= char < "\xa0":
                    raise ValueError(f"a control character this terminal does not know: {char!r}")
                else:
                    self._put(char)
                at += 1
        return len(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    # -- what a person sees ------------------------------------------------------------------
    def lines(self) -> list[str]:
        """The scrollback, then the screen: every row as it reads, trailing spaces left out."""
        with self._lock:
            return ["".join(line).rstrip() for line in self._lines]

    # -- the rules ---------------------------------------------------------------------------
    def _top(self) -> int:
        return len(self._lines) - self.height

    def _line_feed(self) -> None:
        self._col = 0  # the tty's onlcr: a line feed starts the next line
        if self._row == self.height - 1:
            self._lines.append([])
        else:
            self._row += 1

    def _put(self, char: str) -> None:
        if self._col == self.width:
            self._line_feed()
        line = self._lines[self._top() + self._row]
        line.extend(" " * (self._col + 1 - len(line)))
        line[self._col] = char
        self._col += 1

    def _control(self, private: str, params: str, final: str) -> None:
        numbers = [int(p) for p in params.split(";") if p] or [0]
        if private == "?" and final in "hl" and numbers == [25]:
            return  # the cursor shown or hidden
        if private:
            raise ValueError(f"a control this terminal does not know: ?{params}{final}")
        if final == "m":
            return  # a style
        if final == "A":
            self._row = max(0, self._row - max(1, numbers[0]))
            self._col = min(self._col, self.width - 1)
        elif final == "K":
            line = self._lines[self._top() + self._row]
            if numbers[0] == 2:
                line.clear()
            elif numbers[0] == 0:
                del line[self._col :]
            else:
                raise ValueError(f"a control this terminal does not know: {params}K")
        else:
            raise ValueError(f"a control this terminal does not know: {params}{final}")
