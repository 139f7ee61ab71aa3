"""A unified diff from the model, held to what ALMA can stand behind: it applies cleanly.

Strict by design: no fuzz, no offsets guessed, no file created or removed, only the files the
caller offers (a failing script's configuration beside it, in a writable zone), UTF-8 text,
bounded sizes. Anything else is None, and the caller keeps its deterministic result. Each line
replaced keeps the file's own line ending (a model writes ``\\n``; a Windows file keeps ``\\r\\n``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from policies.limits import EDIT_BYTES

#: The longest diff read from a model (a configuration fix is a few lines).
DIFF_CHARS = 16_000
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_FENCE = re.compile(r"^```[\w-]*\s*$")


def _path(header: str, prefix: str) -> str | None:
    name = header[len(prefix) :].split("\t", 1)[0].strip()
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name or None


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _eol(line: str, default: str) -> str:
    for end in ("\r\n", "\n", "\r"):
        if line.endswith(end):
            return end
    return default


def apply_unified_diff(diff: str, files: Mapping[str, bytes]) -> dict[str, bytes] | None:
    """The new bytes of every file ``diff`` changes, or None unless it applies exactly to
    ``files`` (root-relative path -> current bytes)."""
    if len(diff) > DIFF_CHARS:
        return None
    rows = [r for r in diff.splitlines() if not _FENCE.match(r)]
    out: dict[str, bytes] = {}
    i = 0
    while i < len(rows):
        if not rows[i].startswith("--- "):
            if rows[i].startswith(("+++ ", "@@")) or (out and rows[i].strip()):
                return None  # a hunk or text outside a file's section
            i += 1  # words before the first file (the model's preamble) are ignored
            continue
        if i + 1 >= len(rows) or not rows[i + 1].startswith("+++ "):
            return None
        old, new = _path(rows[i], "--- "), _path(rows[i + 1], "+++ ")
        if old is None or old != new or old not in files or old in out:
            return None  # another file, a rename, a creation or a deletion (/dev/null)
        try:
            text = files[old].decode("utf-8")
        except UnicodeDecodeError:
            return None
        i, result = _apply_file(rows, i + 2, _lines(text))
        if result is None:
            return None
        data = result.encode("utf-8")
        if len(data) > EDIT_BYTES or data == files[old]:
            return None
        out[old] = data
    return out or None


def _apply_file(rows: list[str], i: int, lines: list[str]) -> tuple[int, str | None]:
    default = _eol(lines[0], "\n") if lines else "\n"
    result: list[str] = []
    pos = 0  # next line of the original not yet copied
    hunks = 0
    while i < len(rows) and rows[i].startswith("@@"):
        m = _HUNK.match(rows[i])
        if m is None:
            return i, None
        start, count = int(m[1]), int(m[2] if m[2] is not None else 1)
        new_count = int(m[4] if m[4] is not None else 1)
        begin = start - 1 if count else start
        if begin < pos or begin > len(lines):
            return i, None  # overlapping or out of order
        result += lines[pos:begin]
        pos = begin
        i += 1
        seen_old = seen_new = 0
        while i < len(rows) and (seen_old < count or seen_new < new_count):
            row = rows[i]
            tag, body = row[:1], row[1:]
            if row.startswith("\\"):  # "\ No newline at end of file"
                i += 1
                continue
            if tag in (" ", "-"):
                if pos >= len(lines) or lines[pos].rstrip("\r\n") != body:
                    return i, None  # does not apply cleanly
                if tag == " ":
                    result.append(lines[pos])
                seen_old += 1
                pos += 1
                if tag == " ":
                    seen_new += 1
            elif tag == "+":
                if result and not result[-1].endswith(("\n", "\r")):
                    return i, None  # after a last line without its ending: not ours to guess
                ending = _eol(lines[pos - 1], default) if pos else default
                result.append(body + ending)
                seen_new += 1
            elif row == "" and seen_old < count:  # a blank context line whose space was lost
                if pos >= len(lines) or lines[pos].strip("\r\n") != "":
                    return i, None
                result.append(lines[pos])
                seen_old += 1
                seen_new += 1
                pos += 1
            else:
                return i, None
            i += 1
        if (seen_old, seen_new) != (count, new_count):
            return i, None
        hunks += 1
    if not hunks:
        return i, None
    result += lines[pos:]
    return i, "".join(result)
