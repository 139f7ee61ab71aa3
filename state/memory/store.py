"""The Chroma memory store: an active collection, searched, and an archive, never searched.

Embedded (``PersistentClient`` under ``.alma/memory/chroma``) by default, or a Chroma server
at a URL, through the same code. Archived memories live in their own collection rather than
behind a flag: a ``where`` that matches nearly everything makes Chroma's filtered search
several times slower (docs/benchmarks.md), and the cap needs the
active count, which a collection gives for free. Vectors are computed by ALMA (the duplicate
check needs them before a row exists) and handed to Chroma; the registered embedding function
is there so the collection reopens offline and any ``query_texts`` get the query prefix.

One module, longer than most, because :class:`MemoryStore` is the only code that speaks to
Chroma: every method keeps the two collections and the catalog row of a memory in step.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from policies.errors import ConfigError, UnavailableError
from policies.i18n import _
from policies.text import project_key, tag_key
from state.memory.embedder import AlmaEmbeddingFunction, Embedder, Vectors
from state.memory.exact import EXACT_MAX, ExactIndex
from state.memory.models import MemoryRecord, RankFacts
from state.memory.normalize import lexical_text
from state.memory.statedb import CatalogRow, MemoryStateDB

log = logging.getLogger(__name__)

ACTIVE = "alma_memories"
ARCHIVE = "alma_memory_archive"
_PAGE = 2000
#: Seconds the use counts' writer gathers increments before writing them: one Chroma
#: transaction for a run of searches or chat messages, instead of one each that the next
#: search would wait for (the writer holds ``lock`` while Chroma writes).
USES_GATHER = 2.0


def where_all(*conditions: dict[str, Any] | None) -> dict[str, Any] | None:
    """Chroma wants ``$and`` with two or more clauses, and a bare clause otherwise."""
    parts = [c for c in conditions if c]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}


def _client(path: Path, url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if url is None:
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=settings)
    parsed = urlparse(url if "://" in url else f"http://{url}")
    if not parsed.hostname:
        raise ConfigError(
            _("chroma_url {url!r} has no host; write it as http://HOST:PORT.", url=url)
        )
    ssl = parsed.scheme == "https"
    port = parsed.port or (443 if ssl else 8000)
    try:
        return chromadb.HttpClient(host=parsed.hostname, port=port, ssl=ssl, settings=settings)
    except Exception as exc:  # chromadb raises plain ValueError/ConnectError here
        raise UnavailableError(
            _(
                ("The Chroma server at {url} does not answer ({exc}); start it or fix chroma_url."),
                url=url,
                exc=exc,
            )
        ) from exc


class MemoryStore:
    def __init__(
        self, path: Path, embedder: Embedder, state: MemoryStateDB, *, url: str | None = None
    ) -> None:
        self.embedder = embedder
        self._state = state
        self.lock = threading.RLock()  # read-modify-write of counters must not interleave
        # use_count increments not yet written (see bump_use), and the thread that writes them.
        self._uses: dict[str, int] = {}
        self._uses_due = threading.Event()
        self._uses_stop = threading.Event()  # close(): write now, without gathering
        self._uses_writer: threading.Thread | None = None
        self._closed = False
        self._exact: ExactIndex | None = None  # built at the first search (state.memory.exact)
        # A Chroma server may have other writers: its index is the only one kept in step.
        self._exact_allowed = url is None
        self._client = _client(path, url)
        self._active = self._open(ACTIVE)
        self._archive = self._open(ARCHIVE)
        # Decided before finishing moves: those write the catalog and would clear the mark.
        stale = not state.catalog_clean()
        self._finish_moves()
        if stale or any(
            state.catalog_count(archived=a) != self.count(archived=a) for a in (False, True)
        ):
            self.rebuild_catalog()

    def _open(self, name: str) -> Any:
        emb = self.embedder
        col = self._client.get_or_create_collection(
            name,
            embedding_function=AlmaEmbeddingFunction(emb.name),
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"embedder": emb.name, "dim": emb.dim},
        )
        built_with = (col.metadata or {}).get("embedder", emb.name)
        if built_with != emb.name:
            raise ConfigError(
                _(
                    (
                        "The memory store was built with the embedder {built_with!r}, not {name!r}; "
                        "set embedder back to {built_with!r} or move {name2} aside to rebuild it."
                    ),
                    built_with=built_with,
                    name=emb.name,
                    name2=name,
                )
            )
        return col

    # -- reading -----------------------------------------------------------------------
    def _col(self, archived: bool) -> Any:
        return self._archive if archived else self._active

    def count(self, *, archived: bool = False) -> int:
        return int(self._col(archived).count())

    def get(self, ids: Sequence[str], *, archived: bool = False) -> list[MemoryRecord]:
        if not ids:
            return []
        self._write_uses(ids)
        return self.records(ids, archived=archived)

    def records(self, ids: Sequence[str], *, archived: bool = False) -> list[MemoryRecord]:
        """``get`` without writing the pending use counts first: for a search's results, whose
        counts it replaces with the ones it hands out (the write is a Chroma transaction)."""
        if not ids:
            return []
        res = self._col(archived).get(ids=list(ids), include=["documents", "metadatas"])
        by_id = {
            i: MemoryRecord.from_chroma(i, d, m)
            for i, d, m in zip(res["ids"], res["documents"], res["metadatas"], strict=True)
        }
        return [by_id[i] for i in ids if i in by_id]

    def vectors(
        self,
        ids: Sequence[str],
        *,
        archived: bool = False,
        where: dict[str, Any] | None = None,
    ) -> dict[str, Vectors]:
        """The vectors of the memories among ``ids`` (that match ``where``)."""
        if not ids:
            return {}
        res = self._col(archived).get(ids=list(ids), where=where, include=["embeddings"])
        return {
            i: np.asarray(e, dtype=np.float32)
            for i, e in zip(res["ids"], res["embeddings"], strict=True)
        }

    def find(self, memory_id: str) -> tuple[MemoryRecord, bool] | None:
        """The memory and whether it is archived, wherever it is."""
        for archived in (False, True):
            found = self.get([memory_id], archived=archived)
            if found:
                return found[0], archived
        return None

    def existing(self, ids: Sequence[str]) -> set[str]:
        out: set[str] = set()
        for archived in (False, True):
            if ids:
                out |= set(self._col(archived).get(ids=list(ids), include=[])["ids"])
        return out

    def scan(
        self, where: dict[str, Any] | None = None, *, archived: bool = False, documents: bool = True
    ) -> Iterator[MemoryRecord]:
        """Every matching memory, page by page (documents may be skipped to save time)."""
        col = self._col(archived)
        include = ["metadatas", "documents"] if documents else ["metadatas"]
        self._write_uses()
        offset = 0
        while True:
            res = col.get(where=where, limit=_PAGE, offset=offset, include=include)
            docs = res["documents"] if documents else ["·"] * len(res["ids"])
            for i, d, m in zip(res["ids"], docs, res["metadatas"], strict=True):
                yield MemoryRecord.from_chroma(i, d or "·", m)
            if len(res["ids"]) < _PAGE:
                return
            offset += _PAGE

    def layer(self, layer: str) -> list[MemoryRecord]:
        """Every active memory of ``layer`` (the principles, for each context). The ids come
        from the catalog: a ``where`` on Chroma's metadata reads every row's, and most stores
        hold no principle memory at all."""
        return self.get(self._state.catalog_layer(layer))

    def query(
        self, vectors: Vectors, n: int, where: dict[str, Any] | None = None
    ) -> list[list[tuple[MemoryRecord, float]]]:
        """Nearest active memories for each query vector, with cosine similarity."""
        # No count() first: Chroma answers an empty collection with empty lists, and a count
        # would be paid by every search.
        if n <= 0 or len(vectors) == 0:
            return [[] for _row in range(len(vectors))]
        res = self._active.query(
            query_embeddings=np.atleast_2d(vectors),
            n_results=n,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        return [
            [
                (MemoryRecord.from_chroma(i, d, m), 1.0 - float(dist))
                for i, d, m, dist in zip(ids, docs, metas, dists, strict=True)
            ]
            for ids, docs, metas, dists in zip(
                res["ids"], res["documents"], res["metadatas"], res["distances"], strict=True
            )
        ]

    def nearest(
        self, vector: Vectors, n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float, Vectors]]:
        """Ids, cosine and vectors of the active memories nearest to one vector. No documents
        nor metadata: Chroma reads those row by row, a cost above the search itself
        (``facts`` and ``records`` read what a search needs of them)."""
        if n <= 0:
            return []
        exact = self._exact_index() if where is None and self._exact_allowed else None
        if exact is not None:
            return exact.nearest(vector, n)
        res = self._active.query(
            query_embeddings=np.atleast_2d(vector),
            n_results=n,
            where=where,
            include=["distances", "embeddings"],
        )
        return [
            (i, 1.0 - float(d), np.asarray(v))
            for i, d, v in zip(
                res["ids"][0], res["distances"][0], res["embeddings"][0], strict=True
            )
        ]

    def _exact_index(self) -> ExactIndex | None:
        """The exact index of the active vectors (read from Chroma once, then kept in step by
        every write), or None above ``EXACT_MAX`` active memories."""
        exact = self._exact
        if exact is not None:
            return exact
        with self.lock:
            if self._exact is None:
                if self.count() > EXACT_MAX:
                    return None
                ids: list[str] = []
                vectors: list[Any] = []
                offset = 0
                while True:
                    page = self._active.get(include=["embeddings"], limit=_PAGE, offset=offset)
                    ids += page["ids"]
                    vectors += list(page["embeddings"])
                    if len(page["ids"]) < _PAGE:
                        break
                    offset += _PAGE
                dim = self.embedder.dim
                matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), dim)
                self._exact = ExactIndex(ids, matrix, dim)
            return self._exact

    def _exact_put(self, ids: Sequence[str], vectors: Any) -> None:
        """Keep the exact index in step with a write (under the lock); past ``EXACT_MAX`` it is
        dropped, and the next search goes to Chroma."""
        if self._exact is not None:
            exact = self._exact.put(ids, np.atleast_2d(vectors))
            self._exact = exact if len(exact) <= EXACT_MAX else None

    def facts(self, ids: Sequence[str]) -> dict[str, RankFacts]:
        """What the ranking reads of the active memories among ``ids``, from the catalog; a
        memory the catalog lacks (a write cut short before the next open's rebuild) is read
        from Chroma, which stays the truth. Each ``use_count`` is the one a search would hand
        out less one: the stored count and the pending increments, read together."""
        with self.lock:
            found = self._state.catalog_ranked(ids)
            missing = [i for i in ids if i not in found]
            for rec in self.records(missing):
                found[rec.id] = RankFacts.of(rec)
            pending = {i: self._uses[i] for i in found if i in self._uses}
        for i, n in pending.items():
            found[i] = dataclasses.replace(found[i], use_count=found[i].use_count + n)
        return found

    def bodies(self, ids: Sequence[str]) -> dict[str, str]:
        """What the lexicon holds of each active memory among ``ids``
        (``normalize.lexical_text``: its folded words and its metadata words)."""
        return self._state.lexical_bodies(ids)

    def lexical(self, terms: Sequence[str], limit: int) -> list[str]:
        """Ids of the active memories best matching ``terms`` (BM25 over the lexicon)."""
        return [i for i, _score in self._state.lexical(terms, limit)]

    def neighbours(self, vectors: Vectors, n: int) -> list[list[tuple[str, float]]]:
        """Ids and cosine similarity of the nearest active memories, for each query vector.

        Unfiltered and without documents or metadata: for scans of many vectors, where a
        ``where`` filter and building a record per hit cost several times the HNSW search."""
        if n <= 0 or len(vectors) == 0:
            return [[] for _row in range(len(vectors))]
        res = self._active.query(
            query_embeddings=np.atleast_2d(vectors), n_results=n, include=["distances"]
        )
        distances = res["distances"] or []
        return [
            [(i, 1.0 - float(d)) for i, d in zip(ids, dists, strict=True)]
            for ids, dists in zip(res["ids"], distances, strict=True)
        ]

    # -- writing -----------------------------------------------------------------------
    def add(self, records: Sequence[MemoryRecord], vectors: Vectors) -> None:
        if records:
            metas = [r.to_metadata() for r in records]
            with self._writing([r.id for r in records]):
                self._active.upsert(
                    ids=[r.id for r in records],
                    embeddings=np.atleast_2d(vectors),
                    documents=[r.content for r in records],
                    metadatas=metas,
                )
                self._exact_put([r.id for r in records], vectors)
                self._state.catalog_put(
                    [
                        catalog_row(r.id, m, r.content, archived=False)
                        for r, m in zip(records, metas, strict=True)
                    ]
                )

    def update(self, records: Sequence[MemoryRecord], *, archived: bool = False) -> None:
        """Replace the metadata of existing memories exactly (Chroma merges on update, so
        keys that disappeared, such as an emptied list, are removed explicitly)."""
        if not records:
            return
        with self.lock:
            self._update(records, archived)

    def _update(self, records: Sequence[MemoryRecord], archived: bool) -> None:
        col = self._col(archived)
        old = col.get(ids=[r.id for r in records], include=["metadatas", "documents"])
        old_keys = {i: set(m or {}) for i, m in zip(old["ids"], old["metadatas"], strict=True)}
        metas: list[dict[str, Any]] = []
        changed: list[CatalogRow] = []
        uses: dict[str, int] = {}  # rows that differ in use_count only: no lexicon rewrite
        old_rows = {
            i: catalog_row(i, m or {}, d or "", archived=archived)
            for i, m, d in zip(old["ids"], old["metadatas"], old["documents"], strict=True)
        }
        for rec in records:
            meta = rec.to_metadata()
            row = catalog_row(rec.id, meta, rec.content, archived=archived)
            old_row = old_rows.get(rec.id)
            if old_row is not None and old_row != row:
                if dataclasses.replace(old_row, use_count=row.use_count) == row:
                    uses[rec.id] = row.use_count
                else:
                    changed.append(row)
            for key in old_keys.get(rec.id, set()) - set(meta):
                meta[key] = None
            metas.append(meta)
        if not changed:  # a use_count or mention: nothing list, stats or the lexicon read
            col.update(ids=[r.id for r in records], metadatas=metas)
            self._state.catalog_uses(uses, archived=archived)
            return
        with self._writing([r.id for r in records]):
            col.update(ids=[r.id for r in records], metadatas=metas)
            self._state.catalog_put(changed)
            self._state.catalog_uses(uses, archived=archived)

    def rewrite(self, record: MemoryRecord, vector: Vectors, *, archived: bool = False) -> None:
        """Replace one memory's text, vector and metadata exactly, where it is (a person's
        edit, or its undo): what search, list and the lexicon read all follow. The pending use
        counts are written first, so none lands on top of the count given here."""
        with self.lock:
            self._write_uses()
            col = self._col(archived)
            old = col.get(ids=[record.id], include=["metadatas"])
            meta = record.to_metadata()
            if old["ids"]:
                for key in set(old["metadatas"][0] or {}) - set(meta):
                    meta[key] = None  # Chroma merges metadata on update
            vectors = np.atleast_2d(np.asarray(vector, dtype=np.float32))
            with self._writing([record.id]):
                col.update(
                    ids=[record.id],
                    embeddings=vectors,
                    documents=[record.content],
                    metadatas=[meta],
                )
                if not archived:
                    self._exact_put([record.id], vectors)
                self._state.catalog_put(
                    [catalog_row(record.id, meta, record.content, archived=archived)]
                )

    def bump_use(self, ids: Sequence[str]) -> dict[str, int]:
        """``use_count`` + 1 for each active memory in ``ids``; returns the new counts.

        The counts are read now and the increments written by a background thread: the write is a
        Chroma transaction with its fsyncs, many times the read, and every search and every chat
        message hands memories out; it gathers them for ``USES_GATHER`` seconds. Increments are
        added to what is stored when they are written, so a metadata rewrite in between
        (reinforcement, enrichment, all under ``lock``) loses none; ``get`` writes those of the
        memories it reads first and ``scan`` all of them, so what a person is shown is current.
        A crash loses at most the increments of the last moments (a ranking hint)."""
        if not ids:
            return {}
        with self.lock:
            res = self._active.get(ids=list(ids), include=["metadatas"])
            stored = {
                i: int((m or {}).get("use_count") or 0)
                for i, m in zip(res["ids"], res["metadatas"], strict=True)
            }
            return self._handed(stored)

    def hand_out(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The active memories among ``ids`` as ``records`` reads them, each handed out as
        ``bump_use`` does, its record holding the new count: one Chroma read for both, under
        ``lock`` so the stored counts and the pending ones are read together."""
        if not ids:
            return []
        with self.lock:
            found = self.records(list(dict.fromkeys(ids)))
            counts = self._handed({r.id: r.use_count for r in found})
            for rec in found:
                rec.use_count = counts[rec.id]
        return found

    def _handed(self, stored: dict[str, int]) -> dict[str, int]:
        """One use more for each memory of ``stored`` (its stored count), pending for the
        writer; the new counts. Under ``lock``."""
        counts: dict[str, int] = {}
        for i, n in stored.items():
            self._uses[i] = self._uses.get(i, 0) + 1
            counts[i] = n + self._uses[i]
        if counts and not self._closed:
            self._start_uses_writer()
            self._uses_due.set()
        return counts

    def close(self) -> None:
        """Write the pending use counts, stop their thread, and let Chroma go (its database
        and index files stay open otherwise, for as long as the process runs)."""
        with self.lock:
            self._closed = True
            self._write_uses()
        self._uses_stop.set()
        self._uses_due.set()
        if self._uses_writer is not None:
            self._uses_writer.join(30)
        self._client.close()

    def _start_uses_writer(self) -> None:
        if self._uses_writer is None:
            self._uses_writer = threading.Thread(
                target=self._uses_loop, name="memory-uses", daemon=True
            )
            self._uses_writer.start()

    def _uses_loop(self) -> None:
        while not self._closed:
            self._uses_due.wait()
            self._uses_stop.wait(USES_GATHER)
            self._uses_due.clear()
            try:
                self._write_uses()
            except Exception:  # kept for the next attempt; reads still work
                log.exception("could not write memory use counts")

    def _write_uses(self, only: Sequence[str] | None = None) -> None:
        """Add the pending increments (of the memories in ``only``, or all) to the stored
        counts (no-op when there are none).

        The lock is taken even when none are pending: the writer thread may have taken them
        and be storing them, and a read (``get``, ``scan``) must wait for that write rather
        than show the counts from before it."""
        with self.lock:
            if only is None:
                pending, self._uses = self._uses, {}
            else:
                pending = {i: self._uses.pop(i) for i in set(only) if i in self._uses}
            if not pending:
                return
            try:
                res = self._active.get(ids=list(pending), include=["metadatas"])
                stored = {
                    i: int((m or {}).get("use_count") or 0)
                    for i, m in zip(res["ids"], res["metadatas"], strict=True)
                }
                written = {i: n + pending[i] for i, n in stored.items()}
                if written:  # a memory archived meanwhile keeps its count
                    self._active.update(
                        ids=list(written), metadatas=[{"use_count": n} for n in written.values()]
                    )
            except BaseException:
                for i, n in pending.items():
                    self._uses[i] = self._uses.get(i, 0) + n
                raise
            # Outside the retry above: Chroma has them. Should this fail, the catalog's count
            # (a ranking hint) lags until this memory's next write, which sets it whole.
            self._state.catalog_uses(written)

    def move(self, records: Sequence[MemoryRecord], *, to_archive: bool) -> None:
        """Move memories (with the metadata given) between active and archive. Journaled."""
        direction = "archive" if to_archive else "restore"
        for rec in records:
            self._state.add_move(rec.id, direction, {"record": rec.model_dump()})
        self._do_moves(records, to_archive)

    def _do_moves(self, records: Sequence[MemoryRecord], to_archive: bool) -> None:
        src, dst = (self._active, self._archive) if to_archive else (self._archive, self._active)
        ids = [r.id for r in records]
        have = src.get(ids=ids, include=["embeddings"])
        vec = {i: e for i, e in zip(have["ids"], have["embeddings"], strict=True)}
        moving = [r for r in records if r.id in vec]
        if moving:
            metas = [r.to_metadata() for r in moving]
            with self._writing(ids):
                dst.upsert(
                    ids=[r.id for r in moving],
                    embeddings=np.asarray([vec[r.id] for r in moving], dtype=np.float32),
                    documents=[r.content for r in moving],
                    metadatas=metas,
                )
                src.delete(ids=[r.id for r in moving])
                if to_archive and self._exact is not None:
                    self._exact = self._exact.drop([r.id for r in moving])
                elif not to_archive:
                    self._exact_put(
                        [r.id for r in moving],
                        np.asarray([vec[r.id] for r in moving], dtype=np.float32),
                    )
                self._state.catalog_put(
                    [
                        catalog_row(r.id, m, r.content, archived=to_archive)
                        for r, m in zip(moving, metas, strict=True)
                    ],
                    remove=[(r.id, not to_archive) for r in moving],
                )
        stayed = [r for r in records if r.id not in vec]
        if stayed:  # an earlier, interrupted move got as far as the destination already
            there = set(dst.get(ids=[r.id for r in stayed], include=[])["ids"])
            self.update([r for r in stayed if r.id in there], archived=to_archive)
        for rec in records:
            self._state.clear_move(rec.id)

    # -- the catalog (what list and stats read) -------------------------------------------
    @contextmanager
    def _writing(self, ids: Sequence[str]) -> Iterator[None]:
        """A write to Chroma and its catalog rows: marked in flight first, so a crash between
        the two is noticed at the next open; a failed write re-reads its memories from Chroma."""
        with self.lock:
            self._state.catalog_begin()
            try:
                yield
            except BaseException:
                self._resync(ids)
                raise

    def _resync(self, ids: Sequence[str]) -> None:
        self._exact = None  # read again from Chroma at the next search
        try:
            rows: list[CatalogRow] = []
            for archived in (False, True):
                res = self._col(archived).get(ids=list(ids), include=["metadatas", "documents"])
                rows += [
                    catalog_row(i, m or {}, d or "", archived=archived)
                    for i, m, d in zip(res["ids"], res["metadatas"], res["documents"], strict=True)
                ]
            every = [(i, a) for i in ids for a in (False, True)]
            self._state.catalog_put(rows, remove=every)
        except Exception:  # the mark stays: the next open rebuilds the catalog
            log.exception("memory catalog left marked for a rebuild at the next start")

    def rebuild_catalog(self) -> None:
        """Read every memory from Chroma again (slow on a large store: every row's metadata)."""
        with self.lock:
            log.info("rebuilding the memory catalog from the store")
            self._state.catalog_begin()
            self._state.catalog_rebuild(
                catalog_row(r.id, r.to_metadata(), r.content, archived=archived)
                for archived in (False, True)
                for r in self.scan(archived=archived, documents=not archived)
            )

    def recent_ids(
        self,
        limit: int,
        *,
        archived: bool = False,
        tag: str | None = None,
        project: str | None = None,
        memory_type: str | None = None,
    ) -> list[str]:
        """Ids of the newest memories matching the filters (the catalog), newest first."""
        return self._state.catalog_recent(
            limit,
            archived=archived,
            tag_key=tag_key(tag) if tag else None,
            project_key=project_key(project) if project else None,
            memory_type=memory_type.strip().lower() if memory_type else None,
        )

    def created(self, start_ts: float, end_ts: float) -> dict[str, int]:
        """Active memories created in [start_ts, end_ts), by project (the catalog)."""
        return self._state.catalog_created(start_ts, end_ts)

    def counts(self) -> dict[str, dict[str, int]]:
        """Active memories by tag, project, memory type and layer (the catalog)."""
        return self._state.catalog_counts()

    def _finish_moves(self) -> None:
        for _memory_id, direction, payload in self._state.pending_moves():
            rec = MemoryRecord.model_validate(payload["record"])
            self._do_moves([rec], direction == "archive")


def catalog_row(
    memory_id: str, meta: dict[str, Any], document: str, *, archived: bool
) -> CatalogRow:
    """The catalog's fields from a memory's Chroma metadata and document (the lexicon's body:
    the text, its tags, project, theme and what it is related to)."""
    tags = [str(t) for t in meta.get("tags") or []]
    keys = [str(k) for k in meta.get("tag_keys") or []]
    if len(keys) != len(tags):
        keys = [tag_key(t) for t in tags]
    return CatalogRow(
        id=memory_id,
        archived=archived,
        created_ts=float(meta.get("created_ts") or 0.0),
        memory_type=str(meta.get("memory_type") or "episode"),
        layer=str(meta.get("layer") or "L1"),
        project=str(meta.get("project") or ""),
        project_key=str(meta.get("project_key") or ""),
        tags=tuple(zip(keys, tags, strict=True)),
        kind=str(meta.get("kind") or "add"),
        importance=int(meta.get("importance") or 3),
        use_count=int(meta.get("use_count") or 0),
        text=lexical_text(
            document,
            *tags,
            str(meta.get("project") or ""),
            str(meta.get("theme") or ""),
            str(meta.get("related_to") or ""),
        )
        if not archived
        else "",
    )
