"""The chat log format (contract §6): the one place that reads and writes ``logs/YYYY-MM-DD.md``.

A file is cut into paragraphs: runs of non-blank lines. ``## HH:MM:SS · speaker`` opens a turn;
a line that is only ``<!-- model: ... -->`` is the turn's metadata and closes an ``alma`` turn
(the chat writes it last), so paragraphs after it, or before the first turn, are notes the
person wrote by hand. Paragraphs that follow a ``usuario`` turn belong to it: either way they
are the person's words. The ``# YYYY-MM-DD`` heading ends a turn (the file name gives the day).
Other HTML comments are invisible, even across blank lines.

Byte offsets are kept so ingestion can resume exactly where it stopped, and line numbers so
evidence can point at the line. A paragraph is complete when something follows it (a blank
line, a heading, a comment); the last one of a file only when ``final`` is given (the day is
over, or the file has been quiet long enough): until then it may still be being written.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime

from actions.safe_read import FileRead, read_file
from actions.tree import Tree
from policies.errors import RefusedError

PERSON = "usuario"
ASSISTANT = "alma"
SPEAKERS = (PERSON, ASSISTANT)
LOGS = "logs"  # root-relative folder of the day's files
REPORTS = "logs/alma"  # ALMA's own reports (agent.day.alma_logs); never read as the person's logs
#: A day's chat is small; a bigger file is read up to this (the rest is not a chat).
MAX_DAY_BYTES = 2 << 20

_TURN = re.compile(r"^##\s+(\d{1,2}:\d{2}(?::\d{2})?)\s*[·•|-]\s*([\w.-]+)\s*$")
_DAY = re.compile(r"^#\s+(\d{4}-\d{2}-\d{2})\s*$")
_MODEL = re.compile(r"^\s*<!--\s*model:.*-->\s*$")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")


@dataclass
class Paragraph:
    kind: str  # "turn" | "note"
    speaker: str  # "usuario", "alma", or "" for a note
    time: str  # the turn's "HH:MM[:SS]"; for a note, the time of the turn before it ("" if none)
    text: str  # comments removed; its lines are the file's lines from ``line`` on
    start: int  # byte offset of the paragraph's first line
    end: int  # byte offset just after its last line
    line: int  # 1-based line number of ``text``'s first line
    turn: int  # index of the turn it belongs to (-1 for notes)
    complete: bool = True
    meta: list[str] = field(default_factory=list)  # model comments seen in the turn

    @property
    def by_person(self) -> bool:
        return self.speaker != ASSISTANT

    @property
    def seconds(self) -> int | None:
        """The turn's time since midnight; None for a note or an impossible time."""
        if self.kind != "turn":
            return None
        h, m, *s = (int(x) for x in self.time.split(":"))
        sec = s[0] if s else 0
        return h * 3600 + m * 60 + sec if h < 24 and m < 60 and sec < 60 else None

    @property
    def clock(self) -> str:
        """``HH:MM`` of the turn, "" for a note."""
        seconds = self.seconds
        if seconds is None:
            return ""
        h, rest = divmod(seconds, 3600)
        return f"{h:02d}:{rest // 60:02d}"


@dataclass
class _Block:
    lines: list[str] = field(default_factory=list)
    start: int = 0
    line: int = 0
    end: int = 0


def parse(data: bytes | str, *, final: bool = True) -> list[Paragraph]:
    """All paragraphs of a day's log, in order (an incomplete last one is flagged)."""
    raw_data = data.encode() if isinstance(data, str) else data
    out: list[Paragraph] = []
    speaker, time_, turn, in_turn = "", "", -1, False
    block: _Block | None = None
    turn_meta: list[str] = []
    in_comment = False  # inside a comment that spans lines: nothing there is text

    def flush(complete: bool) -> None:
        nonlocal block
        if block is None:
            return
        # a comment becomes the newlines it held, so the text's lines stay the file's lines
        joined = _COMMENT.sub(lambda m: "\n" * m[0].count("\n"), "\n".join(block.lines))
        if "<!--" in joined:  # never closed: the rest of the paragraph is a comment too
            cut = joined.index("<!--")
            joined = joined[:cut] + "\n" * joined.count("\n", cut)
        text = joined.strip()
        if text:
            skipped = joined[: len(joined) - len(joined.lstrip())].count("\n")
            out.append(
                Paragraph(
                    kind="turn" if in_turn else "note",
                    speaker=speaker if in_turn else "",
                    time=time_,
                    text=text,
                    start=block.start,
                    end=block.end,
                    line=block.line + skipped,
                    turn=turn if in_turn else -1,
                    complete=complete,
                    meta=turn_meta if in_turn else [],
                )
            )
        block = None

    pos = 0
    for lineno, raw in enumerate(raw_data.splitlines(keepends=True), start=1):
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        start, pos = pos, pos + len(raw)
        if in_comment:
            if block is not None:
                block.lines.append(line)
                block.end = pos
            in_comment = "-->" not in line
            continue
        turn_match = _TURN.match(line)
        if turn_match or _DAY.match(line):
            flush(True)
            if turn_match:
                time_, speaker = turn_match[1], turn_match[2].lower()
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
        in_comment = line.rfind("<!--") > line.rfind("-->")
    # The last block: complete only if the file is final and its last line is whole.
    flush(final and raw_data.endswith(b"\n"))
    return out


def day_of(name: str) -> date | None:
    """The day of a chat log's file name (``2026-11-22.md``); None for another name."""
    match = _NAME.match(name)
    if not match:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None  # 2026-13-45.md: not a day


def log_names(tree: Tree) -> list[str]:
    """The ``.md`` files of ``logs/``, sorted; none when there is no ``logs/`` or it is a link
    (ALMA never reads through one)."""
    try:
        return sorted(n for n in os.listdir(tree.dir((LOGS,))) if n.endswith(".md"))
    except (FileNotFoundError, NotADirectoryError, RefusedError):
        return []


def read_log(tree: Tree, name: str) -> FileRead | None:
    """``logs/NAME``, read the one safe way (:func:`actions.safe_read.read_file`) up to
    :data:`MAX_DAY_BYTES`; None for a link, a FIFO, a folder or a missing file."""
    if "/" in name or not name.endswith(".md"):
        return None
    return read_file(tree, f"{LOGS}/{name}", limit=MAX_DAY_BYTES)


def file_name(day: date) -> str:
    return f"{day.isoformat()}.md"


def format_day(day: date) -> str:
    """The heading a new day's file starts with."""
    return f"# {day.isoformat()}\n"


def format_turn(
    when: datetime,
    speaker: str,
    text: str,
    *,
    model: str | None = None,
    tokens: int | None = None,
    ms: int | None = None,
    stopped: str | None = None,
) -> str:
    """One turn as appended to the day's file: a blank line, the heading, the text, and when
    ``model`` is given the metadata comment, which closes an ``alma`` turn for the reader.
    ``stopped`` says why an answer ended early (``cancelled``, ``max_tokens``, ``timeout``)."""
    if speaker not in SPEAKERS:
        raise ValueError(f"speaker must be one of {SPEAKERS}, not {speaker!r}")
    # a line of the text must not open a turn, a day or a comment when the file is read back
    body = "\n".join(
        ("\\" + line if _TURN.match(line) or _DAY.match(line) else line).replace("<!--", "&lt;!--")
        for line in text.strip().splitlines()
    )
    out = f"\n## {when.strftime('%H:%M:%S')} · {speaker}\n{body}\n"
    if model is not None:
        fields = [" ".join(model.replace("--", "-").split())]
        fields += [f"tokens: {tokens}"] if tokens is not None else []
        fields += [f"ms: {ms}"] if ms is not None else []
        fields += (
            [f"stopped: {stopped}"] if stopped in ("cancelled", "max_tokens", "timeout") else []
        )
        out += f"<!-- model: {' · '.join(fields)} -->\n"
    return out


def persons_words(tree: Tree, *, days: int = 14) -> list[str]:
    """The person's own turns in the last ``days`` chat logs (``logs/YYYY-MM-DD.md``, newest
    first), for telling which language they write in; a log that cannot be read is passed over."""
    texts: list[str] = []
    dated = [name for name in log_names(tree) if day_of(name) is not None]
    for name in reversed(dated[-days:]):
        read = read_log(tree, name)
        if read is None:
            continue
        texts += [p.text for p in parse(read.data) if p.kind == "turn" and p.by_person]
    return texts
