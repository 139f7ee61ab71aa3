"""Parser of the chat log format (contract §6), hand-written notes included.

A file is read whole (one day is small) and cut into paragraphs: runs of non-blank lines.
``## HH:MM:SS · speaker`` opens a turn; ``<!-- model: ... -->`` is metadata and closes an
``alma`` turn (the chat writes it last), so paragraphs after it, or before the first turn,
are notes. Paragraphs that follow a ``usuario`` turn belong to it: either way they are the
person's words. Byte offsets are kept so ingestion can resume exactly where it stopped.

A paragraph is complete when something follows it (a blank line, a heading, another line
that starts a new block). The last paragraph of a file is complete only when ``final`` is
given (the day is over, or the file has been quiet long enough): until then it may still
be being written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TURN = re.compile(r"^##\s+(\d{1,2}:\d{2}(?::\d{2})?)\s*[·•|-]\s*([\w.-]+)\s*$")
_DAY = re.compile(r"^#\s+(\d{4}-\d{2}-\d{2})\s*$")
_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
_MODEL = re.compile(r"^\s*<!--\s*model:.*-->\s*$")

PERSON = "usuario"
ASSISTANT = "alma"


@dataclass
class Paragraph:
    kind: str  # "turn" | "note"
    speaker: str  # "usuario", "alma", or "" for a note
    time: str  # the turn's time; for a note, the time of the turn before it ("" if none)
    text: str
    start: int  # byte offset of the paragraph's first line
    end: int  # byte offset just after its last line
    line: int  # 1-based line number of the first line
    turn: int  # index of the turn it belongs to (-1 for notes)
    complete: bool = True
    meta: list[str] = field(default_factory=list)  # model comments seen in the turn

    @property
    def by_person(self) -> bool:
        return self.speaker != ASSISTANT


@dataclass
class _Block:
    lines: list[str] = field(default_factory=list)
    start: int = 0
    line: int = 0
    end: int = 0


def parse_log(data: bytes, *, final: bool = False) -> list[Paragraph]:
    """All paragraphs of a log file, in order (incomplete last one flagged)."""
    out: list[Paragraph] = []
    speaker, time_, turn, in_turn = "", "", -1, False
    block: _Block | None = None
    turn_meta: list[str] = []

    def flush(complete: bool) -> None:
        nonlocal block
        if block is None:
            return
        text = _COMMENT.sub("", "\n".join(block.lines)).strip()
        if text:
            kind = "turn" if in_turn else "note"
            out.append(
                Paragraph(
                    kind=kind,
                    speaker=speaker if in_turn else "",
                    time=time_,
                    text=text,
                    start=block.start,
                    end=block.end,
                    line=block.line,
                    turn=turn if in_turn else -1,
                    complete=complete,
                    meta=turn_meta if in_turn else [],
                )
            )
        block = None

    pos = 0
    lines = data.splitlines(keepends=True)
    for lineno, raw in enumerate(lines, start=1):
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        start, pos = pos, pos + len(raw)
        turn_match = _TURN.match(line)
        if turn_match or _DAY.match(line):
            flush(True)
            if turn_match:
                time_, speaker = turn_match.group(1), turn_match.group(2).lower()
                turn, in_turn, turn_meta = turn + 1, True, []
            else:
                in_turn = False
            continue
        if not line.strip():
            flush(True)
            continue
        if _MODEL.match(line):
            if block is not None:
                block.end = pos  # the comment belongs to the paragraph it closes
            turn_meta.append(line.strip())
            flush(True)
            if in_turn and speaker == ASSISTANT:
                in_turn = False  # what follows, until the next heading, is a note
            continue
        if block is None:
            block = _Block(start=start, line=lineno)
        block.lines.append(line)
        block.end = pos
    # The last block: complete only if the file is final and its last line is whole.
    flush(final and data.endswith(b"\n"))
    return out


def day_of(name: str) -> str:
    """``2026-11-22`` from ``2026-11-22.md``, or "" for another name."""
    match = re.match(r"^(\d{4}-\d{2}-\d{2})\.md$", name)
    return match.group(1) if match else ""
