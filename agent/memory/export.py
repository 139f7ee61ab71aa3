"""Training examples from the chat logs, for fine-tuning a personal model (JSONL rows).

An example is what the person said (their consecutive turns, joined) and ``alma``'s next
turn. Notes, model comments and turns without an answer are left out. The formats, one row
each:

- ``mlx`` (MLX-LM's chat data, written as ``train.jsonl`` and ``valid.jsonl``) and ``chatml``:
  ``{"messages": [{"role": "system"|"user"|"assistant", "content": ...}, ...]}``;
- ``sharegpt`` (what Unsloth and axolotl read): ``{"conversations": [{"from":
  "system"|"human"|"gpt", "value": ...}, ...]}``;
- ``alpaca``: ``{"instruction", "input", "output"}`` (and ``system`` when asked).

What leaves the root is cleaned: exact duplicates and near-empty turns are dropped, and an
example is withheld when it is marked private (the hashtag ``#privado``/``#private``, which
is also the tag of a memory made from it) or holds what ``policies.secrets`` calls a secret;
each is counted, and the withheld ones can be listed (masked) and included by id. The split
into train and valid is by a hash of the example's content, so the same input always splits
the same way.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from actions.tree import Tree
from control.commands import EXPORT_FORMATS as FORMATS
from control.commands import NOTE_FORMATS
from policies import secrets
from policies.errors import BadArgumentError
from policies.i18n import _
from policies.results import ExportSummary, JSONObject, MemoryExport, Withheld
from policies.text import hashtags
from state.chatlog import ASSISTANT, PERSON, log_names, parse, read_log

#: Formats whose files are always a train and a valid file (MLX-LM's ``--data DIR`` needs both).
SPLIT_FORMATS = ("mlx",)
#: The valid share when a split format is asked without ``valid`` (its bounds: the table's).
DEFAULT_VALID = 0.1
#: A turn with fewer letters or digits than this ("ok", "?", "…") teaches nothing.
MIN_CHARS = 3
#: Tags that mark a turn (and the memory made from it) as private.
PRIVATE_TAGS = frozenset({"privado", "privada", "private"})
#: Characters a token, when no model's tokenizer is at hand (said as an estimate).
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Pair:
    """One example: the day of its log, what the person said, alma's answer."""

    day: str
    prompt: str
    answer: str

    @property
    def id(self) -> str:
        """A short hash of the content: the same example has the same id in every export."""
        text = f"{self.prompt}\x00{self.answer}".encode()
        return hashlib.sha256(text).hexdigest()[:12]


def _turns(data: bytes) -> list[tuple[str, str]]:
    """(speaker, text) of each turn, in order."""
    turns: dict[int, tuple[str, list[str]]] = {}
    for p in parse(data, final=True):
        if p.kind == "turn":
            turns.setdefault(p.turn, (p.speaker, []))[1].append(p.text)
    return [(speaker, "\n\n".join(parts)) for _key, (speaker, parts) in sorted(turns.items())]


def pairs(root: Path) -> list[Pair]:
    """Every (what the person said, alma's answer) from ``logs/*.md``, read safely, in order."""
    out: list[Pair] = []
    with Tree(root) as tree:
        for name in log_names(tree):
            read = read_log(tree, name)
            if read is None:
                continue
            day = name.removesuffix(".md")
            asked: list[str] = []
            for speaker, text in _turns(read.data):
                if speaker == PERSON:
                    asked.append(text)
                elif speaker == ASSISTANT and asked:
                    out.append(Pair(day, "\n\n".join(asked), text))
                    asked = []
                else:
                    asked = []
    return out


def _near_empty(text: str) -> bool:
    return sum(c.isalnum() for c in text) < MIN_CHARS


def _private(pair: Pair) -> bool:
    return any(t.lower() in PRIVATE_TAGS for t in hashtags(f"{pair.prompt}\n{pair.answer}"))


def _in_valid(pair: Pair, share: float) -> bool:
    return int(pair.id, 16) < share * float(16 ** len(pair.id))


def _row(fmt: str, pair: Pair, system: str) -> dict[str, object]:
    if fmt == "alpaca":
        row: dict[str, object] = {"instruction": pair.prompt, "input": "", "output": pair.answer}
        return {**row, "system": system} if system else row
    turns = [("system", system)] if system else []
    turns += [("user", pair.prompt), ("assistant", pair.answer)]
    if fmt == "sharegpt":
        names = {"system": "system", "user": "human", "assistant": "gpt"}
        return {"conversations": [{"from": names[r], "value": t} for r, t in turns]}
    return {"messages": [{"role": r, "content": t} for r, t in turns]}


def _text(row: dict[str, object]) -> str:
    turns = row.get("messages", row.get("conversations"))
    if isinstance(turns, list):  # chatml's and mlx's content, sharegpt's value
        return "\n".join(str(t.get("content", t.get("value"))) for t in turns)
    return "\n".join(str(v) for v in row.values())


def export(
    root: Path,
    fmt: str,
    *,
    valid: float | None = None,
    system: str = "",
    include_secrets: bool = False,
    include: tuple[str, ...] | list[str] = (),
    count: Callable[[str], int | None] | None = None,
) -> MemoryExport:
    """The export as the wire carries it: ``train`` and ``valid`` rows (``split`` says whether
    they go to two files), a ``summary`` (examples, tokens, what was dropped and why) and the
    ``withheld`` examples, each with its id, day, why and a masked preview.

    ``system`` is the persona's text, the system turn of every example when given. ``count``
    is the loaded model's tokenizer (None when no model is loaded: the tokens are estimated,
    and the summary says so)."""
    if fmt not in FORMATS:
        raise BadArgumentError(
            _(
                "Unknown export format {fmt!r}; use one of {formats}.",
                fmt=fmt,
                formats=", ".join(FORMATS),
            )
        )
    if valid is None:
        valid = DEFAULT_VALID if fmt in SPLIT_FORMATS else 0.0
    wanted = set(include)
    dropped: Counter[str] = Counter()
    seen: set[str] = set()
    kept: list[Pair] = []
    withheld: list[Withheld] = []
    for pair in pairs(root):
        if _near_empty(pair.prompt) or _near_empty(pair.answer):
            dropped["empty"] += 1
            continue
        if pair.id in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(pair.id)
        found = secrets.kinds(pair.prompt) + secrets.kinds(pair.answer)
        why = "private" if _private(pair) else ("secret" if found else "")
        if why and not (include_secrets or pair.id in wanted):
            dropped[why] += 1
            withheld.append(
                {
                    "id": pair.id,
                    "day": pair.day,
                    "why": why,
                    "kinds": list(dict.fromkeys(found)),
                    "preview": secrets.masked(pair.prompt),
                }
            )
            continue
        kept.append(pair)
    split = fmt in SPLIT_FORMATS or valid > 0
    train: list[dict[str, object]] = []
    held_out: list[dict[str, object]] = []
    if split and valid > 0:
        in_valid = [_in_valid(p, valid) for p in kept]
        if len(kept) >= 2 and not any(in_valid):  # a trainer refuses an empty valid file
            first = min(range(len(kept)), key=lambda i: int(kept[i].id, 16))
            in_valid[first] = True
    else:
        in_valid = [False] * len(kept)
    for pair, to_valid in zip(kept, in_valid, strict=True):
        (held_out if to_valid else train).append(_row(fmt, pair, system))
    text = "\n".join(_text(r) for r in (*train, *held_out))
    tokens = count(text) if count is not None and text else None
    summary: ExportSummary = {
        "examples": len(kept),
        "train": len(train),
        "valid": len(held_out),
        "tokens": tokens if tokens is not None else -(-len(text) // CHARS_PER_TOKEN),
        "tokens_estimated": tokens is None,
        "dropped": dict(sorted(dropped.items())),
        "system": bool(system),
    }
    return {
        "format": fmt,
        "split": split,
        "train": train,
        "valid": held_out,
        "summary": summary,
        "withheld": withheld,
    }


class ChatExport:
    """``memory export``: the chat logs as training data, or the memories as notes. The logs,
    not the memory store: a training export works while the store loads or is off. ``persona`` gives the system turn when one
    is asked for; ``count`` is the loaded model's tokenizer, when one is loaded."""

    def __init__(
        self,
        root: Path,
        persona: Callable[[], str],
        count: Callable[[str], int | None],
        notes: Callable[..., JSONObject],
    ) -> None:
        self.root = root
        self.persona = persona
        self.count = count
        self.notes = notes  # the memory store's vault (MemoryService.vault), reached when asked

    def export(
        self,
        format: str,
        vault: str | None,
        valid: float | None,
        system: bool,
        include_secrets: bool,
        include: list[str],
        list_withheld: bool,
    ) -> MemoryExport | JSONObject:
        if format in NOTE_FORMATS or vault is not None:  # the memories as notes, not the logs
            return self.notes(
                format,
                vault,
                include_secrets=include_secrets,
                include=include,
                list_withheld=list_withheld,
            )
        result = export(
            self.root,
            format,
            valid=valid,
            system=self.persona() if system else "",
            include_secrets=include_secrets,
            include=include,
            count=None if list_withheld else self.count,
        )
        if list_withheld:  # the listing only: nothing to write
            result["train"], result["valid"], result["listing"] = [], [], True
        return result
