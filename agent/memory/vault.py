"""Memories out to notes: an Obsidian vault, one Markdown note per active memory.

Each note is named from its memory's first words (accents kept; no path separator, no leading
dot, none of the characters a file system or an Obsidian link refuses; at most
:data:`NAME_BYTES` bytes), or from its id when no word is left; names are unique in the vault
whatever the case, as on a disk that ignores it. The note is YAML front matter (id, type,
importance, project, tags, created and updated dates, each value a JSON string, which YAML
reads as written), the memory's text, and links ``[[...]]`` to the memories related to it:
those about the same thing (``related_to``), then those of the same project, a few each,
newest first.

What leaves the root is what the training export lets leave (agent.memory.export): a memory
tagged private or holding what ``policies.secrets`` calls a secret is withheld, counted, listed
masked, and included only when asked; no note links to one that is withheld. The notes are
handed to alma-ctl, which writes the vault (docs/memory.md).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from agent.memory.export import PRIVATE_TAGS
from control.commands import NOTE_FORMATS
from policies import secrets
from policies.errors import BadArgumentError
from policies.i18n import _
from policies.text import hashtags, project_key, tag_key
from state.memory import MemoryRecord

FORMAT = NOTE_FORMATS[0]
#: A note's name at most, in UTF-8 bytes, before its " (2)" and ".md": far below any file
#: system's 255, and short enough to read in a file list.
NAME_BYTES = 96
#: Links to related memories of each relation a note holds at most.
LINKS_EACH = 8
#: Characters no note name holds: separators and controls, what Windows and exFAT refuse, and
#: what breaks an Obsidian link (``#``, ``^``, ``|``, ``[``, ``]``).
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|#^\[\]]')
#: Names Windows keeps for devices, whatever the extension (a vault on a shared disk).
_RESERVED = re.compile(r"(con|prn|aux|nul|com[1-9]|lpt[1-9])", re.IGNORECASE)


def note_name(text: str, memory_id: str) -> str:
    """A safe note name (without ``.md``) from a memory's first line, or its id."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    name = " ".join(_UNSAFE.sub(" ", unicodedata.normalize("NFC", first)).split())
    name = name.lstrip(". ").rstrip(". ")
    if len(name.encode("utf-8")) > NAME_BYTES:
        cut = name.encode("utf-8")[:NAME_BYTES].decode("utf-8", "ignore")
        word = cut.rsplit(" ", 1)[0] if " " in cut else cut
        name = (word or cut).rstrip(". ")
    if not name or _RESERVED.fullmatch(name):
        name = _UNSAFE.sub("", memory_id).lstrip(".")[:NAME_BYTES] or "memory"
    return name


def _unique(names: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each memory's note name, unique whatever the case: ``name (2)`` and so on."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for memory_id, name in names:
        candidate, n = name, 1
        while candidate.casefold() in taken:
            n += 1
            candidate = f"{name} ({n})"
        taken.add(candidate.casefold())
        out[memory_id] = candidate
    return out


def _withheld_why(rec: MemoryRecord) -> tuple[str, list[str]]:
    found = secrets.kinds(rec.content)
    tags = {tag_key(t) for t in rec.tags} | {tag_key(t) for t in hashtags(rec.content)}
    if tags & PRIVATE_TAGS:
        return "private", found
    return ("secret" if found else ""), found


def _yaml(value: object) -> str:
    """A scalar as YAML reads it back exactly: a JSON string or number."""
    return json.dumps(value, ensure_ascii=False)


def _day(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).astimezone().date().isoformat()
    except ValueError:  # a stamp written by hand or by an older ALMA: its day as written
        return stamp[:10]


def _note(rec: MemoryRecord, links: list[str]) -> str:
    lines = [
        "---",
        f"id: {_yaml(rec.id)}",
        f"type: {_yaml(rec.memory_type)}",
        f"importance: {rec.importance}",
        f"project: {_yaml(rec.project)}",
    ]
    # Obsidian reads a tag without spaces; the memory's own spelling otherwise.
    tags = ["-".join(t.split()) for t in rec.tags]
    lines += ["tags: []"] if not tags else ["tags:", *(f"  - {_yaml(t)}" for t in tags)]
    lines += [
        f"created: {_yaml(_day(rec.created_at))}",
        f"updated: {_yaml(_day(rec.updated_at or rec.created_at))}",
        "---",
        "",
        rec.content.rstrip("\n"),
        "",
    ]
    if links:
        lines += [f"## {_('Related')}", "", *(f"- [[{name}]]" for name in links), ""]
    return "\n".join(lines)


def check_request(fmt: str, folder: str | None) -> None:
    """A vault needs its folder (DIR), and a training export has none."""
    if fmt != FORMAT or folder is None:
        raise BadArgumentError(
            _(
                "Only a vault of notes is written into a folder given as DIR, and it needs "
                "one: `alma-ctl memory export --format obsidian DIR`."
            )
        )


def vault(
    records: Iterable[MemoryRecord],
    *,
    include_secrets: bool = False,
    include: Iterable[str] = (),
) -> dict[str, Any]:
    """The vault as the wire carries it: ``notes`` (``name``, ``id``, ``text``), a ``summary``
    and the ``withheld`` memories (id, why, the kinds of secret, a masked preview)."""
    wanted = set(include)
    kept: list[MemoryRecord] = []
    withheld: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}
    for rec in sorted(records, key=lambda r: (r.created_at, r.id)):
        why, found = _withheld_why(rec)
        if why and not (include_secrets or rec.id in wanted):
            dropped[why] = dropped.get(why, 0) + 1
            withheld.append(
                {
                    "id": rec.id,
                    "day": _day(rec.created_at),
                    "why": why,
                    "kinds": list(dict.fromkeys(found)),
                    "preview": secrets.masked(rec.content),
                }
            )
            continue
        kept.append(rec)
    names = _unique((r.id, note_name(r.content, r.id)) for r in kept)
    groups: dict[tuple[str, str], list[MemoryRecord]] = {}
    for rec in reversed(kept):  # newest first in every group
        for relation, key in (
            ("related", project_key(rec.related_to)),
            ("project", project_key(rec.project)),
        ):
            if key:
                groups.setdefault((relation, key), []).append(rec)
    notes: list[dict[str, str]] = []
    link_count = 0
    for rec in kept:
        links: dict[str, None] = {}
        for relation, key in (
            ("related", project_key(rec.related_to)),
            ("project", project_key(rec.project)),
        ):
            others = [o for o in groups.get((relation, key), []) if o.id != rec.id] if key else []
            links.update(dict.fromkeys(names[o.id] for o in others[:LINKS_EACH]))
        link_count += len(links)
        notes.append({"name": names[rec.id] + ".md", "id": rec.id, "text": _note(rec, [*links])})
    return {
        "format": FORMAT,
        "notes": notes,
        "summary": {
            "notes": len(notes),
            "links": link_count,
            "dropped": dict(sorted(dropped.items())),
        },
        "withheld": withheld,
    }
