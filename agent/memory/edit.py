"""A person's edit of a memory (``memory.edit``): what it changes, and writing a memory back.

:func:`changed` is the memory an edit would leave (nothing written; bad input is one sentence);
:func:`rewrite` writes a memory's whole state back, text and vector included (an edit, its
undo, a recovery), and :func:`check_unchanged` refuses an undo over a later change. The
journaled edit and its undo are agent.memory.merge_actions'.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from agent.memory.memorize import embedding_text
from policies.errors import BadArgumentError, ConflictError
from policies.i18n import _
from state.memory import KNOWN_TYPES, MemoryRecord, MemoryStore, layer_for


def edited_fields(rec: MemoryRecord) -> tuple[object, ...]:
    """What a person's edit may change in a memory."""
    return rec.content, tuple(rec.tags), rec.importance, rec.memory_type, rec.layer


def changed(
    store: MemoryStore, rec: MemoryRecord, changes: Mapping[str, Any], now: datetime
) -> MemoryRecord:
    """``rec`` as the edit ``changes`` (``text``, ``tags``, ``importance``, ``memory_type``,
    checked by the command table) leaves it. Each item of ``tags`` may hold several tags
    separated by commas; an empty list clears them. A type is one of the known types or one
    the store holds."""
    update: dict[str, Any] = {}
    if "text" in changes:
        update["content"] = changes["text"]
    if "tags" in changes:
        update["tags"] = [t for item in changes["tags"] for t in item.split(",") if t.strip()]
    if "importance" in changes:
        update["importance"] = changes["importance"]
    if "memory_type" in changes:
        kind_type = str(changes["memory_type"]).lower()
        known = KNOWN_TYPES | set(store.counts().get("by_memory_type", {}))
        if kind_type not in known:
            raise BadArgumentError(
                _(
                    "{type} is not a memory type ALMA knows; use one of {types}.",
                    type=repr(changes["memory_type"]),
                    types=", ".join(sorted(known)),
                )
            )
        update["memory_type"] = kind_type
        update["layer"] = layer_for(kind_type, rec.kind)
    after = MemoryRecord.model_validate(rec.model_copy(update=update).model_dump())  # tags clean
    if edited_fields(rec) == edited_fields(after):
        raise BadArgumentError(_("Memory {id} already says that; nothing was changed.", id=rec.id))
    return after.model_copy(update={"updated_at": now.isoformat(timespec="seconds")})


def rewrite(store: MemoryStore, raw: dict[str, Any]) -> None:
    """Write a memory back exactly as ``raw`` (a ``MemoryRecord`` dump), wherever it is now."""
    rec = MemoryRecord.model_validate(raw)
    vector = store.embedder.passages([embedding_text(rec.content)])
    with store.lock:
        store.rewrite(rec, vector, archived=_still(store, rec.id)[1])


def check_unchanged(store: MemoryStore, raw: dict[str, Any]) -> None:
    """ConflictError unless what a person edits in the memory is still as in ``raw``: an
    undo never writes over a later change."""
    expected = MemoryRecord.model_validate(raw)
    if edited_fields(_still(store, expected.id)[0]) != edited_fields(expected):
        raise ConflictError(
            _(
                "Memory {id} changed after this edit; undo the later change first "
                "(`alma-ctl history` lists them).",
                id=expected.id,
            )
        )


def _still(store: MemoryStore, memory_id: str) -> tuple[MemoryRecord, bool]:
    found = store.find(memory_id)
    if found is None:
        raise ConflictError(_("Memory {id} no longer exists; nothing was changed.", id=memory_id))
    return found
