"""MemoryService: what the daemon and the socket handlers call. JSON-able results only.

Errors are policies.errors classes with one sentence that says what to do. Heavy parts (the
embedder, Chroma) are created here once; tests pass a fake clock and a fake model only.
"""

from __future__ import annotations

import builtins
import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from agent.memory import edit as edit_mod
from agent.memory import merge as merge_mod
from agent.memory import migrate
from agent.memory import rules as rules_mod
from agent.memory import vault as vault_mod
from agent.memory.context import build_context
from agent.memory.enrich import Enricher, EnrichWorker, ModelMeta
from agent.memory.examples import example_id, load_examples_file
from agent.memory.ingest import IngestWorker, LogIngestor
from agent.memory.memorize import Memorizer
from agent.memory.reasons import ReasonReader, packaged_model
from agent.memory.rules import THEMES, derive
from agent.memory.search import search as hybrid_search
from control.commands import validate
from policies import limits as L
from policies.errors import BadArgumentError, InvalidStateError, NotFoundError
from policies.i18n import _
from policies.layout import RootLayout
from policies.modes import PRIVATE_DIR
from policies.results import Context, ExamplesAdded, JSONObject, Memory, MemoryStats
from policies.text import fold, project_key, tag_key
from state.memory import MemoryRecord, MemoryStateDB, MemoryStore, get_embedder, layer_for
from state.memory.store import where_all

log = logging.getLogger(__name__)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _checked(cmd: str, **args: Any) -> JSONObject:
    """``args`` as the socket's command table accepts them (control.commands: the one schema),
    for the daemon's own callers too, with the whitespace around each text dropped."""
    return {name: _trimmed(value) for name, value in validate(cmd, args).items()}


def _trimmed(value: object) -> object:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return [item.strip() if isinstance(item, str) else item for item in value]
    return value


class MemoryService:
    def __init__(
        self,
        layout: RootLayout,
        *,
        chroma_url: str | None = None,
        embedder: str = "e5-small",
        cap: int = 50_000,
        model: Enricher | None = None,
        clock: Callable[[], datetime] = _utc_now,
        settle_seconds: float = 120.0,
        rescan_seconds: float = 60.0,
    ) -> None:
        self.layout = layout
        self._clock = clock
        self._projects: set[str] = set()
        layout.memory_dir.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        self._state = MemoryStateDB(layout.memory_state_file)
        self.store = MemoryStore(
            layout.chroma_dir, get_embedder(embedder), self._state, url=chroma_url
        )
        migrate.mark_questions(self.store, self._state)
        self._enrich = EnrichWorker(model, self._apply_model) if model is not None else None
        self._mem = Memorizer(self.store, cap=cap, on_added=self._enqueue)
        self._candidates = merge_mod.Candidates()
        self._ingestor = LogIngestor(
            layout,
            self._mem,
            self._state,
            clock=clock,
            projects=self._project_names,
            settle_seconds=settle_seconds,
        )
        self._worker = IngestWorker(self._ingestor, rescan_seconds=rescan_seconds)
        self._reasons: ReasonReader | None = None

    def reason_reader(self) -> ReasonReader | None:
        """Reads rejection reasons with this store's embedder, in this process (a query
        vector each, as a search is); None when the shipped model was fitted on another
        embedder's vectors: reasons are then only shown."""
        if self._reasons is None:
            embedder = self.store.embedder
            if packaged_model().embedder != embedder.name:
                return None
            self._reasons = ReasonReader(embedder.query)
        return self._reasons

    # -- memories ------------------------------------------------------------------------
    def add(
        self,
        content: str,
        *,
        tags: Sequence[str] = (),
        project: str = "",
        importance: int | None = None,
        memory_type: str | None = None,
        source: str = "alma-ctl",
        theme: str | None = None,
        related_to: str | None = None,
    ) -> Memory:
        req = _checked(
            "memory.add",
            content=content,
            tags=list(tags),
            project=project,
            importance=importance,
            memory_type=memory_type,
            theme=theme,
            related_to=related_to,
        )
        now = self._clock()
        rules = derive(req["content"], projects=self._project_names(), day=now.date(), base=3)
        keys = {tag_key(t) for t in req["tags"]}
        kind_type = (req["memory_type"] or rules.memory_type).lower()
        rec = MemoryRecord(
            id=uuid.uuid4().hex,
            content=req["content"],
            tags=req["tags"] + [t for t in rules.tags if tag_key(t) not in keys],
            project=req["project"] or rules.project,
            importance=req["importance"] or rules.importance,
            memory_type=kind_type,
            created_at=now.isoformat(timespec="seconds"),
            source=source,
            layer=layer_for(kind_type, "add"),
            kind="add",
            day=now.date().isoformat(),
            event_date=rules.event_date,
            theme=req["theme"] or rules.theme,
            related_to=req["related_to"] or rules.related_to,
        )
        if req["project"]:
            self._projects.add(req["project"])
        fixed = frozenset(
            name
            for name, given in (
                ("importance", req["importance"]),
                ("memory_type", req["memory_type"]),
                ("project", req["project"]),
                ("theme", req["theme"]),
                ("related_to", req["related_to"]),
            )
            if given
        )
        outcome = self._mem.remember([rec])[0]
        if outcome.status == "added" and self._enrich is not None:
            self._enrich.submit(rec.id, rec.content, fixed)
        out = outcome.record.public()
        out["status"] = outcome.status
        return out

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        tags: Sequence[str] = (),
        project: str | None = None,
        memory_type: str | None = None,
        min_importance: int | None = None,
        theme: str | None = None,
        related_to: str | None = None,
        count_use: bool = True,
    ) -> list[Memory]:
        """``count_use=False`` reads without handing out: no ``use_count`` rises, nothing is
        written, so an evaluation or a preview neither changes the store nor its next answer."""
        req = _checked(
            "memory.search",
            query=query,
            limit=limit,
            tags=list(tags),
            project=project,
            memory_type=memory_type,
            min_importance=min_importance,
            theme=theme,
            related_to=related_to,
        )
        where = where_all(
            *({"tag_keys": {"$contains": tag_key(t)}} for t in req["tags"]),
            {"project_key": project_key(req["project"])} if req["project"] else None,
            {"memory_type": req["memory_type"].lower()} if req["memory_type"] else None,
            {"importance": {"$gte": req["min_importance"]}} if req["min_importance"] else None,
            {"theme_key": project_key(req["theme"])} if req["theme"] else None,
            {"related_key": project_key(req["related_to"])} if req["related_to"] else None,
        )
        # Handed out as their records are read: one Chroma read gives both.
        hits = hybrid_search(
            self.store, req["query"], req["limit"], where, now=self._clock(), hand_out=count_use
        )
        found = []
        for h in hits:
            out = h.record.public(score=h.chance)
            out["why"] = h.why()
            found.append(out)
        return found

    def list(
        self,
        *,
        limit: int = 20,
        tag: str | None = None,
        project: str | None = None,
        memory_type: str | None = None,
        archived: bool = False,
    ) -> builtins.list[Memory]:
        req = _checked(
            "memory.list",
            limit=limit,
            tag=tag,
            project=project,
            memory_type=memory_type,
            archived=archived,
        )
        # From the catalog: sorting Chroma's metadata would read all of it, slow on a large store.
        ids = self.store.recent_ids(
            req["limit"],
            archived=req["archived"],
            tag=req["tag"],
            project=req["project"],
            memory_type=req["memory_type"],
        )
        full = self.store.get(ids, archived=req["archived"])
        return [r.public(archived=req["archived"]) for r in full]

    def show(self, id: str) -> Memory:
        rec, archived = self._find(id)
        return rec.public(archived=archived)

    def edited(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        tags: Sequence[str] | None = None,
        importance: int | None = None,
        memory_type: str | None = None,
    ) -> tuple[MemoryRecord, MemoryRecord]:
        """A memory as it is and as a person's edit would leave it, nothing written (the
        journaled edit is agent.memory.merge_actions.edit). Each item of ``tags`` may hold
        several tags separated by commas; an empty list clears them."""
        req = _checked(
            "memory.edit",
            id=memory_id,
            text=text,
            tags=None if tags is None else list(tags),
            importance=importance,
            memory_type=memory_type,
        )
        changes = {k: v for k, v in req.items() if k != "id" and v is not None}
        if not changes:
            raise BadArgumentError(
                _(
                    "Say what to change in memory {id}: --text, --tags, --importance or --type.",
                    id=req["id"],
                )
            )
        rec, archived = self._find(req["id"])
        if archived:
            raise InvalidStateError(
                _(
                    "Memory {id} is forgotten; `alma-ctl memory restore {id}` brings it back, "
                    "then it can be edited.",
                    id=req["id"],
                )
            )
        return rec, edit_mod.changed(self.store, rec, changes, self._clock())

    def rewrite(self, raw: dict[str, Any]) -> None:
        """Write a memory back exactly as ``raw`` (agent.memory.edit.rewrite)."""
        edit_mod.rewrite(self.store, raw)

    def check_edited(self, raw: dict[str, Any]) -> None:
        """ConflictError when the memory was edited after ``raw`` (an undo's check)."""
        edit_mod.check_unchanged(self.store, raw)

    def forget(self, id: str) -> Memory:
        """Archive (restorable with ``restore``); forgetting twice is not an error."""
        memory_id = id
        with self.store.lock:
            rec, archived = self._find(memory_id)
            if not archived:
                self._mem.archive([rec], reason="forgotten")
                rec, archived = self._find(memory_id)
        return rec.public(archived=archived)

    def restore(self, id: str) -> Memory:
        memory_id = id
        with self.store.lock:
            rec, archived = self._find(memory_id)
            if archived:
                back = rec.model_copy(
                    update={"archived_at": "", "archive_reason": "", "merged_into": ""}
                )
                self.store.move([back], to_archive=False)
                self._mem.enforce_cap(protect={memory_id})
                rec, archived = self._find(memory_id)
        return rec.public(archived=archived)

    # -- context, export, examples, stats ----------------------------------------------------
    def context(
        self,
        prompt: str,
        *,
        budget: int = L.CONTEXT_BUDGET_DEFAULT,
        count_use: bool = True,
    ) -> Context:
        """The context the chat is given for ``prompt``, within ``budget`` tokens;
        ``count_use``: as in :meth:`search`."""
        req = _checked("context", prompt=prompt, budget=budget)
        ctx, over = build_context(
            self.store,
            self.layout.principles_file,
            req["prompt"],
            req["budget"],
            now=self._clock(),
        )
        if count_use:
            self._hand_out([i.id for i in ctx.items if i.id])
        text = ctx.text()
        return {
            "text": text,
            # The chat gives the principles with the persona and the memories with the message.
            "principles_text": ctx.text(("L-inf",)),
            "memories_text": ctx.text(("L1", "L0")),
            "items": [i.public() for i in ctx.items],
            "tokens": sum(i.tokens for i in ctx.items),
            "budget_tokens": req["budget"],
            "over_budget": over,
            "l0_searched": ctx.l0_searched,
            "answered": ctx.answered,
        }

    def vault(
        self,
        fmt: str,
        folder: str | None,
        *,
        include_secrets: bool = False,
        include: Sequence[str] = (),
        list_withheld: bool = False,
    ) -> dict[str, Any]:
        """The active memories as an Obsidian vault's notes (agent.memory.vault), for
        alma-ctl to write into ``folder``; with ``list_withheld`` the withheld ones only."""
        vault_mod.check_request(fmt, folder)
        notes = vault_mod.vault(self.store.scan(), include_secrets=include_secrets, include=include)
        if list_withheld:
            notes.update(notes=[], listing=True)
        return notes

    def load_examples(self) -> ExamplesAdded:
        now = self._clock().isoformat(timespec="seconds")
        records = [
            MemoryRecord(
                id=example_id(ex.content),
                content=ex.content,
                tags=ex.tags,
                project=ex.project,
                importance=ex.importance,
                memory_type=ex.memory_type,
                created_at=now,
                source="examples",
                layer=layer_for(ex.memory_type, "example"),
                kind="example",
                theme=rules_mod.theme(fold(ex.content), ex.tags),
                related_to=rules_mod.related_to(ex.content, ex.project, ex.tags),
            )
            for ex in load_examples_file()
        ]
        outcomes = self._mem.remember(records)
        return {"added": sum(o.status == "added" for o in outcomes)}

    def load_requested_examples(self) -> int | None:
        """Store the example memories if ``alma-ctl init --with-examples`` asked for them while
        no daemon ran; how many were added, or None when nobody asked. The request goes once
        they are stored, so a failure here is tried again at the next start."""
        request = self.layout.examples_request_file
        if not request.is_file():
            return None
        added = self.load_examples()["added"]
        request.unlink(missing_ok=True)
        return added

    def stats(self) -> MemoryStats:
        counts = self.store.counts()  # the catalog: no pass over every memory's metadata
        return {
            "total": self.store.count(),
            "archived": self.store.count(archived=True),
            "by_tag": counts["by_tag"],
            "by_project": counts["by_project"],
            "by_memory_type": counts["by_memory_type"],
            "by_layer": counts["by_layer"],
            "embedder": self.store.embedder.name,
        }

    def count(self) -> int:
        """Active memories (one cheap call: what `status` needs)."""
        return self.store.count()

    def created(self, start_ts: float, end_ts: float) -> dict[str, int]:
        """Active memories created in [start_ts, end_ts), counted by project ('' for none),
        from the catalog: however many came after (a past day's report)."""
        return self.store.created(start_ts, end_ts)

    # -- merging -------------------------------------------------------------------------
    def merge_candidates(self, *, wait: bool = True) -> builtins.list[builtins.list[str]] | None:
        """Clusters of near-identical memories; None with ``wait=False`` while a full scan
        runs on its own thread (merge.Candidates)."""
        return self._candidates(self.store, wait=wait)

    def start_merge_scan(self) -> None:
        """Start the full scan for merge candidates on its own thread when one is due."""
        self._candidates.start(self.store)

    def merge(self, keep_id: str, other_ids: builtins.list[str]) -> JSONObject:
        return merge_mod.merge(self._mem, keep_id, list(other_ids))

    def merge_record(self, keep_id: str, other_ids: builtins.list[str]) -> JSONObject:
        return merge_mod.record_for(self.store, keep_id, list(other_ids))

    def unmerge(self, record: JSONObject) -> None:
        merge_mod.unmerge(self.store, record)

    # -- ingestion and lifetime --------------------------------------------------------------
    def undo_question_migration(self) -> int:
        """Put the person's stored questions back as they were before they were told apart
        (``agent.memory.migrate``); returns how many memories."""
        return migrate.undo_questions(self.store, self._state)

    def start_ingestion(self) -> None:
        self._worker.start()

    def log_changed(self, name: str) -> None:
        """``logs/NAME`` changed: ingest what is new in it soon, on the ingestion thread."""
        self._worker.poke(name)

    def rescan_logs(self) -> int:
        return self._ingestor.rescan()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait for queued ingestion and model work (tests, orderly shutdown)."""
        ok = self._worker.wait_idle(timeout)
        if self._enrich is not None:
            self._enrich.wait_idle()
        return ok

    def close(self) -> None:
        self._candidates.close()  # before the store closes under its scan
        self._worker.stop()
        self._ingestor.close()  # a rescan on another thread finishes its file first
        if self._enrich is not None:
            self._enrich.close()
        self.store.close()
        self._state.close()

    # -- internals -----------------------------------------------------------------------
    def _find(self, memory_id: str) -> tuple[MemoryRecord, bool]:
        found = self.store.find(memory_id) if memory_id else None
        if found is None:
            raise NotFoundError(
                _(
                    "No memory has id {memory_id!r}; run `alma-ctl memory list` to see the ids.",
                    memory_id=memory_id,
                )
            )
        return found

    def _hand_out(self, ids: builtins.list[str]) -> dict[str, int]:
        """use_count +1 for each memory handed to a caller; the new counts by id."""
        return self.store.bump_use(ids)

    def _project_names(self) -> builtins.list[str]:
        names = set(self._projects)
        if self.layout.user.is_dir():
            names |= {
                p.name
                for p in self.layout.user.iterdir()
                if p.is_dir() and not p.name.startswith(".")
            }
        return sorted(names)

    def _enqueue(self, rec: MemoryRecord) -> None:
        if self._enrich is not None and rec.kind in {"turn", "note"}:
            self._enrich.submit(rec.id, rec.content, frozenset())

    def _apply_model(self, memory_id: str, meta: ModelMeta, fixed: frozenset[str]) -> None:
        with self.store.lock:
            found = self.store.get([memory_id])
            if not found or found[0].updated_at:
                return  # archived, merged or edited by the person meanwhile: theirs stands
            rec = found[0].model_copy(deep=True)
            keys = {tag_key(t) for t in rec.tags}
            rec.tags = rec.tags + [t for t in meta.tags if tag_key(t) not in keys]
            # A principle is in every prompt, never cut nor evicted: only the person's words
            # make one (the rules read them), so the model neither makes nor unmakes one.
            principle = rec.memory_type == "principle"
            if meta.importance is not None and "importance" not in fixed and not principle:
                rec.importance = meta.importance
            if (
                meta.memory_type
                and "memory_type" not in fixed
                and not principle
                and meta.memory_type != "principle"
            ):
                rec.memory_type = meta.memory_type
                rec.layer = layer_for(rec.memory_type, rec.kind)
            if meta.project and "project" not in fixed and not rec.project:
                rec.project = meta.project
            # The model may name the theme better than the keyword table, but only one of the
            # known themes; what the person set stays.
            if meta.theme and "theme" not in fixed and fold(meta.theme) in THEMES:
                rec.theme = fold(meta.theme)
            if meta.related_to and "related_to" not in fixed:
                rec.related_to = meta.related_to
            rec.enriched = True
            self.store.update([rec])
