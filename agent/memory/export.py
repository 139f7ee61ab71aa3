"""Training pairs from the chat logs, for fine-tuning a personal model (JSONL rows).

A pair is what the person said (their consecutive turns, joined) and ``alma``'s next turn.
Notes, model comments and turns without an answer are left out. ``chatml`` rows are
``{"messages": [{"role": "user", ...}, {"role": "assistant", ...}]}``; ``alpaca`` rows are
``{"instruction", "input", "output"}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actions.tree import Tree
from policies.errors import BadArgumentError
from policies.i18n import _
from state.chatlog import ASSISTANT, PERSON, log_names, parse, read_log

FORMATS = ("chatml", "alpaca")


def _turns(data: bytes) -> list[tuple[str, str]]:
    """(speaker, text) of each turn, in order."""
    turns: dict[int, tuple[str, list[str]]] = {}
    for p in parse(data, final=True):
        if p.kind == "turn":
            turns.setdefault(p.turn, (p.speaker, []))[1].append(p.text)
    return [(speaker, "\n\n".join(parts)) for _key, (speaker, parts) in sorted(turns.items())]


def pairs(root: Path) -> list[tuple[str, str]]:
    """(what the person said, alma's answer) from every ``logs/*.md``, read safely."""
    out: list[tuple[str, str]] = []
    with Tree(root) as tree:
        for name in log_names(tree):
            read = read_log(tree, name)
            if read is None:
                continue
            asked: list[str] = []
            for speaker, text in _turns(read.data):
                if speaker == PERSON:
                    asked.append(text)
                elif speaker == ASSISTANT and asked:
                    out.append(("\n\n".join(asked), text))
                    asked = []
                else:
                    asked = []
    return out


def export(root: Path, fmt: str) -> list[dict[str, Any]]:
    if fmt not in FORMATS:
        raise BadArgumentError(_("Unknown export format {fmt!r}; use chatml or alpaca.", fmt=fmt))
    rows: list[dict[str, Any]] = []
    for prompt, answer in pairs(root):
        if fmt == "chatml":
            rows.append(
                {
                    "messages": [
                        {"role": "user", "content": prompt},
                        {"role": "assistant", "content": answer},
                    ]
                }
            )
        else:
            rows.append({"instruction": prompt, "input": "", "output": answer})
    return rows
