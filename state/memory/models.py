"""The memory schema (contract §3 "Memory") and its mapping to Chroma metadata.

Chroma metadata holds scalars and non-empty lists only, so empty lists are left out and come
back as ``[]``; the accent-free keys (``tag_keys``, ``project_key``) exist only for filtering.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from policies.results import Layer, Memory
from policies.text import clean_tag, fold, project_key, tag_key

LAYERS: tuple[Layer, ...] = ("L-inf", "L1", "L0")

#: The known memory types (contract §3); memory_type is free text beyond these.
KNOWN_TYPES = frozenset(
    [
        "institutional",
        "context",
        "alma",
        "bird",
        "architecture",
        "structure",
        "function",
        "principle",
        "fact",
        "episode",
        "summary",
    ]
)
#: Types the cap never archives.
NEVER_EVICTED = frozenset({"principle", "fact"})
#: How many reinforcing paragraph ids a memory remembers, so a replay after a crash is not
#: counted twice (a replay only ever concerns the last batch, far fewer than this).
MENTION_IDS_KEPT = 32


class MemoryRecord(BaseModel):
    """One memory as stored. ``content`` is the Chroma document; the rest is metadata."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(min_length=1, max_length=128)
    content: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    project: str = ""
    theme: str = ""
    importance: int = Field(default=3, ge=1, le=5)
    related_to: str = ""
    memory_type: str = "episode"
    use_count: int = Field(default=0, ge=0)
    mentions: int = Field(default=1, ge=1)
    boosted: bool = False
    created_at: str
    source: str = ""
    layer: Layer = "L1"
    kind: str = "add"
    day: str = ""
    event_date: str = ""  # the day the text is about ("mañana" in a log of the 17th: the 18th)
    updated_at: str = ""  # when a person last edited it (memory.edit); "" if never
    enriched: bool = False
    mention_ids: list[str] = Field(default_factory=list)
    reply_to: str = ""
    archived_at: str = ""
    archive_reason: str = ""
    merged_into: str = ""

    @field_validator("tags")
    @classmethod
    def _clean_tags(cls, value: list[str]) -> list[str]:
        seen: dict[str, str] = {}
        for raw in value:
            tag = clean_tag(raw)
            if tag and tag_key(tag) not in seen:
                seen[tag_key(tag)] = tag
        return list(seen.values())

    @field_validator("memory_type")
    @classmethod
    def _clean_type(cls, value: str) -> str:
        return value.strip().lower() or "episode"

    @property
    def created_ts(self) -> float:
        return datetime.fromisoformat(self.created_at).timestamp()

    def to_metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = self.model_dump(exclude={"id", "content"})
        meta["tag_keys"] = [tag_key(t) for t in self.tags]
        meta["project_key"] = project_key(self.project)
        # Filter keys: "Salud" and "salud", "Max" and "max" are one theme, one subject.
        meta["theme_key"] = project_key(self.theme)
        meta["related_key"] = project_key(self.related_to)
        meta["created_ts"] = self.created_ts
        # Chroma refuses empty lists; they come back as [] in from_chroma.
        return {k: v for k, v in meta.items() if v != []}

    @classmethod
    def from_chroma(cls, memory_id: str, document: str, metadata: dict[str, Any]) -> MemoryRecord:
        fields = {k: v for k, v in metadata.items() if k in _FIELDS}
        return cls(id=memory_id, content=document, **fields)

    def public(self, *, score: float | None = None, archived: bool = False) -> Memory:
        """The contract's JSON shape, plus a few extra fields (allowed by contract §3)."""
        out: Memory = {
            "id": self.id,
            "content": self.content,
            "tags": list(self.tags),
            "project": self.project,
            "theme": self.theme,
            "importance": self.importance,
            "related_to": self.related_to,
            "memory_type": self.memory_type,
            "use_count": self.use_count,
            "mentions": self.mentions,
            "boosted": self.boosted,
            "created_at": self.created_at,
            "source": self.source,
            "layer": self.layer,
            "kind": self.kind,
            "day": self.day,
            "event_date": self.event_date,
            "reply_to": self.reply_to,
            "archived_at": self.archived_at,
            "archive_reason": self.archive_reason,
            "merged_into": self.merged_into,
            "updated_at": self.updated_at,
            "archived": archived,
        }
        if score is not None:
            out["score"] = round(score, 4)
        return out


@dataclass(frozen=True)
class RankFacts:
    """What a search's ranking reads of a candidate besides its vector. A search reads them
    from the catalog (``MemoryStateDB.catalog_ranked``): from Chroma's metadata they cost more
    than the vector search itself, and most candidates are ranked, never shown."""

    id: str
    layer: str
    kind: str
    importance: int
    created_ts: float | None  # None: a created_at that does not parse
    use_count: int
    #: Its tag keys and folded project: what a question may name.
    names: frozenset[str]

    @classmethod
    def of(cls, rec: MemoryRecord) -> RankFacts:
        try:
            created: float | None = rec.created_ts
        except ValueError:  # an undated created_at (edited by hand): the default age
            created = None
        names = {tag_key(t) for t in rec.tags} | ({fold(rec.project)} if rec.project else set())
        return cls(
            rec.id, rec.layer, rec.kind, rec.importance, created, rec.use_count, frozenset(names)
        )


#: Read once: pydantic's ``model_fields`` is a property that builds its answer on each access,
#: and every search reads ~80 records of ~25 keys each.
_FIELDS = frozenset(MemoryRecord.model_fields)


def layer_for(memory_type: str, kind: str) -> Layer:
    """L-inf: principles. L1: distilled (what the person added, facts, daily summaries).
    L0: raw log paragraphs."""
    if memory_type == "principle":
        return "L-inf"
    if memory_type in {"fact", "summary"} or kind in {"add", "example", "summary"}:
        return "L1"
    return "L0"
