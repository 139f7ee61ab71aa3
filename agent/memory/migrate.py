"""Changes to stored memories when what becomes a memory changes; each can be undone exactly.

``questions``: ingestion keeps a paragraph that only asks as kind ``question`` (an episode, L0:
never above what the person stated, never in the chat's context). A store ingested without that rule
holds such paragraphs as memories like any other, and a question that starts like a statement ("¿soy
alérgico a algo?") may be typed a fact, so it would come before the fact it asks about. This
migration applies the rule to what is stored, once, at the store's open. What each memory was (kind,
type, layer, importance) is written to the state DB first, so a crash halfway is finished at the
next open and ``python -m agent.memory ROOT --undo-questions`` (daemon stopped) puts every
one back as it was; an undone migration is not applied again.
"""

from __future__ import annotations

import logging

from agent.memory.rules import derive, is_question
from policies.results import JSONObject
from state.memory import MemoryRecord, MemoryStateDB, MemoryStore

log = logging.getLogger(__name__)

QUESTIONS = "questions"
FIELDS = ("kind", "memory_type", "layer", "importance")


def _both(store: MemoryStore, ids: list[str]) -> list[tuple[MemoryRecord, bool]]:
    """The memories of ``ids`` still stored, active or archived, with where they are."""
    found = [(r, False) for r in store.get(ids)]
    have = {r.id for r, _archived in found}
    return found + [(r, True) for r in store.get([i for i in ids if i not in have], archived=True)]


def _write(store: MemoryStore, changed: list[tuple[MemoryRecord, bool]]) -> None:
    for archived in (False, True):
        store.update([r for r, a in changed if a == archived], archived=archived)


def mark_questions(store: MemoryStore, state: MemoryStateDB) -> int:
    """Make the person's stored questions questions; returns how many changed."""
    known = state.migration(QUESTIONS)
    if known is not None and known[0] != "applying":
        return 0
    if known is None:
        before: JSONObject = {}
        for archived in (False, True):
            for rec in store.scan({"kind": {"$in": ["turn", "note"]}}, archived=archived):
                if rec.memory_type != "principle" and is_question(rec.content):
                    before[rec.id] = {f: getattr(rec, f) for f in FIELDS}
        state.set_migration(QUESTIONS, "applying", before)
    else:
        before = known[1]
    changed = []
    for rec, archived in _both(store, list(before)):
        base = 2 if before[rec.id]["kind"] == "turn" else 3
        now = {
            "kind": "question",
            "memory_type": "episode",
            "layer": "L0",
            "importance": derive(rec.content, base=base).importance,
        }
        changed.append((rec.model_copy(update=now), archived))
    _write(store, changed)
    state.set_migration(QUESTIONS, "done", before)
    if changed:
        log.info("%d stored questions of the person marked as questions", len(changed))
    return len(changed)


def undo_questions(store: MemoryStore, state: MemoryStateDB) -> int:
    """Put back what :func:`mark_questions` changed; returns how many memories."""
    known = state.migration(QUESTIONS)
    if known is None or known[0] == "undone":
        return 0
    before = known[1]
    changed = [
        (rec.model_copy(update=before[rec.id]), archived)
        for rec, archived in _both(store, list(before))
    ]
    _write(store, changed)
    state.set_migration(QUESTIONS, "undone", before)
    return len(changed)
