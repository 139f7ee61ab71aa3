"""The daily extractive summary: L1's digest of a finished day, no model needed.

The day's most important paragraphs by the person (ties: earlier first), quoted as written,
with the day's most frequent tags; their questions are not what the day holds, so a day of
questions only has no summary. Extractive on purpose: nothing in it was invented.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from state.memory import MemoryRecord

SUMMARY_PARAGRAPHS = 3
SUMMARY_QUOTE_CHARS = 220
SUMMARY_TAGS = 6


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_QUOTE_CHARS else text[: SUMMARY_QUOTE_CHARS - 1] + "…"


def daily_summary(
    memory_id: str, day: str, source: str, created_at: str, day_records: Sequence[MemoryRecord]
) -> MemoryRecord | None:
    """``day_records``: the day's paragraphs as memories (rule metadata), in log order."""
    day_records = [r for r in day_records if r.kind != "question"]
    if not day_records:
        return None
    ranked = sorted(enumerate(day_records), key=lambda p: (-p[1].importance, p[0]))
    chosen = sorted(ranked[:SUMMARY_PARAGRAPHS], key=lambda p: p[0])
    tags = Counter(t for r in day_records for t in r.tags)
    projects = Counter(r.project for r in day_records if r.project)
    themes = Counter(r.theme for _, r in chosen if r.theme)
    body = " · ".join(_quote(r.content) for _, r in chosen)
    return MemoryRecord(
        id=memory_id,
        content=f"Resumen del {day}: {body}",
        tags=[t for t, _ in tags.most_common(SUMMARY_TAGS)],
        project=projects.most_common(1)[0][0] if projects else "",
        importance=max(r.importance for _, r in chosen),
        memory_type="summary",
        created_at=created_at,
        source=source,
        layer="L1",
        kind="summary",
        day=day,
        event_date=day,
        # The day's themes and subjects are those of the paragraphs it quotes.
        theme=themes.most_common(1)[0][0] if themes else "personal",
        related_to=", ".join(dict.fromkeys(r.related_to for _, r in chosen if r.related_to))[:80]
        or day,
    )
