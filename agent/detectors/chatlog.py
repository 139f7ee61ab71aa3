"""A small reader of the chat log format (contract §6), enough for the detectors.

``## HH:MM:SS · speaker`` opens a turn; an HTML comment (``<!-- model: ... -->``) is metadata
and, in an ``alma`` turn, closes it: what follows it, like text before the first turn, is a note
the person wrote by hand. Paragraphs after a ``usuario`` turn belong to it: either way they
are the person's words. The ``# YYYY-MM-DD`` heading is ignored (the file name gives the day).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PERSON = "usuario"
ASSISTANT = "alma"
_TURN = re.compile(r"^##\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*[·•|-]\s*([\w.-]+)\s*$")
_DAY = re.compile(r"^#\s+\d{4}-\d{2}-\d{2}\s*$")
_COMMENT = re.compile(r"<!--.*?-->")


@dataclass(frozen=True)
class Entry:
    """A turn's or a note's text, line by line joined with newlines."""

    speaker: str  # "usuario", "alma", or "" for a note
    seconds: int | None  # the turn's time since midnight; None for a note
    text: str
    line: int  # 1-based line of the text's first line (the text keeps the file's lines)

    @property
    def by_person(self) -> bool:
        return self.speaker != ASSISTANT

    @property
    def clock(self) -> str:
        if self.seconds is None:
            return ""
        h, rest = divmod(self.seconds, 3600)
        return f"{h:02d}:{rest // 60:02d}"


def parse_chat(text: str) -> list[Entry]:
    entries: list[Entry] = []
    speaker, seconds = "", None
    lines: list[str] = []
    start = 0
    in_comment = False

    def flush() -> None:
        nonlocal lines
        body = "\n".join(lines).strip()
        if body:
            entries.append(Entry(speaker, seconds, body, start))
        lines = []

    for number, raw in enumerate(text.splitlines(), start=1):
        turn = _TURN.match(raw)
        if turn:
            flush()
            h, m, s = int(turn[1]), int(turn[2]), int(turn[3] or 0)
            valid = h < 24 and m < 60 and s < 60
            speaker, seconds = turn[4].lower(), (h * 3600 + m * 60 + s) if valid else None
            start = number + 1
            continue
        if _DAY.match(raw):
            continue
        line = _COMMENT.sub("", raw)
        if in_comment:
            if "-->" not in raw:
                continue
            in_comment, line = False, raw.split("-->", 1)[1]
        if "<!--" in line:
            in_comment, line = True, line.split("<!--", 1)[0]
        if line != raw and speaker == ASSISTANT and not line.strip():
            flush()  # the model's metadata ends the assistant's turn: what follows is a note
            speaker, seconds = "", None
            start = number + 1
            continue
        if not lines:
            if not line.strip():
                continue  # so that ``line`` + offset in ``text`` is the line in the file
            start = number
        lines.append(line)
    flush()
    return entries
