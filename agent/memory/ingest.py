"""Log ingestion: follow ``logs/*.md`` as they grow and turn the person's paragraphs into memories.

What becomes a memory: every paragraph the person wrote (their turns and the notes outside
turns) that states something. A paragraph that only asks (``agent.memory.rules.is_question``)
states nothing about the person: it stays in the day's log, the record of the conversation, and
never becomes a memory (so it is never merged, recalled or counted among the day's new ones);
"¿sabes que mi perro se llama Toby?" states the dog's name and is one. ``alma``'s turns are not memories of the person: they are kept as the ``reply_to``
of the person's next paragraph (so "Sí, eso es" keeps its sense) and used by the training
export. ``<!-- model: ... -->`` lines are metadata and never content.

Exactly once: the offset (bytes of complete paragraphs done) is committed after each batch is
in the store; a crash in between replays the batch, and the deterministic ids (hash of file,
byte offset and text) make the replay a no-op. A file whose first bytes changed was rewritten:
it is read again from the start, and unchanged paragraphs are again no-ops.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime

from actions.safe_read import FileRead
from actions.tree import Tree
from agent.memory.day_digest import daily_summary
from agent.memory.memorize import Memorizer
from agent.memory.rules import derive
from policies.layout import RootLayout
from state.chatlog import (
    ASSISTANT,
    LOGS,
    MAX_DAY_BYTES,
    Paragraph,
    day_of,
    log_names,
    parse,
    read_log,
)
from state.memory import MemoryRecord, MemoryStateDB, layer_for

log = logging.getLogger(__name__)

BATCH = 16  # paragraphs embedded together; bounds how long a search waits for the embedder
_HEAD_BYTES = 4096
REPLY_CHARS = 300


def paragraph_id(rel: str, para: Paragraph) -> str:
    raw = f"{rel}\0{para.start}\0{para.text}".encode()
    return hashlib.sha256(raw).hexdigest()[:32]


def _head(data: bytes, offset: int) -> str:
    return hashlib.sha256(data[: min(offset, _HEAD_BYTES)]).hexdigest()


class LogIngestor:
    def __init__(
        self,
        layout: RootLayout,
        memorizer: Memorizer,
        state: MemoryStateDB,
        *,
        clock: Callable[[], datetime],
        projects: Callable[[], Iterable[str]],
        settle_seconds: float = 120.0,
    ) -> None:
        self.layout = layout
        self._mem = memorizer
        self._state = state
        self._clock = clock
        self._projects = projects
        self.settle_seconds = settle_seconds
        self._lock = threading.Lock()  # one pass at a time: the watcher's or a rescan's
        self._warned: set[str] = set()  # files already said to be too large
        self._closed = False

    def rescan(self) -> int:
        """Ingest what is new in every chat log; returns the memories added or reinforced."""
        done = 0
        with Tree(self.layout.root) as tree:
            for name in log_names(tree):
                try:
                    done += self._ingest_locked(tree, name)
                except Exception:  # one file that cannot be read stops none of the others
                    log.exception("logs/%s not ingested; the next rescan tries it again", name)
        return done

    def ingest_file(self, name: str) -> int:
        """Ingest what is new in ``logs/NAME``."""
        with Tree(self.layout.root) as tree:
            return self._ingest_locked(tree, name)

    def close(self) -> None:
        """Wait for the file being ingested and ingest none after: the store closes next. A
        pass may run on a thread the service does not own (the daemon's scheduled rescan)."""
        with self._lock:
            self._closed = True

    def _ingest_locked(self, tree: Tree, name: str) -> int:
        with self._lock:
            if self._closed:
                return 0
            read = read_log(tree, name)
            if read is None:
                return 0
            if read.cut and name not in self._warned:
                self._warned.add(name)
                log.warning(
                    "logs/%s is larger than %d MB: only its beginning becomes memories",
                    name,
                    MAX_DAY_BYTES >> 20,
                )
            return self._ingest(f"{LOGS}/{name}", name, read)

    def _is_final(self, read: FileRead, day: date | None) -> bool:
        """The last paragraph may still be being written unless the day is over or the file
        has been quiet for ``settle_seconds`` (file time, not the domain clock)."""
        if read.cut:
            return False  # the last paragraph read is cut by the size bound, not finished
        if day is not None and day < self._clock().astimezone().date():
            return True
        return time.time() - read.mtime_ns / 1e9 >= self.settle_seconds

    def _ingest(self, rel: str, name: str, read: FileRead) -> int:
        data = read.data
        the_day = day_of(name)
        day = the_day.isoformat() if the_day else ""  # "" for a file that is not a day's log
        final = self._is_final(read, the_day)
        saved = self._state.get_offset(rel)
        offset = saved.offset if saved else 0
        if saved and (len(data) < offset or _head(data, offset) != saved.head):
            log.info("%s was rewritten; reading it again from the start", rel)
            offset = 0
        paragraphs = parse(data, final=final)
        records = self._records(rel, day, paragraphs)
        todo = [p for p in paragraphs if p.start >= offset and p.complete]
        done = 0
        for i in range(0, len(todo), BATCH):
            batch = todo[i : i + BATCH]
            wanted = [records[p.start] for p in batch if p.start in records]
            outcomes = self._mem.remember(wanted)
            done += sum(o.status != "existing" for o in outcomes)
            offset = batch[-1].end
            self._state.set_offset(rel, offset, _head(data, offset))
        if saved is None and not todo:
            self._state.set_offset(rel, 0, _head(data, 0))
        self._maybe_summarize(rel, day, final, offset, list(records.values()))
        return done

    def _records(self, rel: str, day: str, paragraphs: list[Paragraph]) -> dict[int, MemoryRecord]:
        """The person's paragraphs as memories with rule metadata, keyed by byte offset."""
        the_day = date.fromisoformat(day) if day else None
        projects = list(self._projects())
        out: dict[int, MemoryRecord] = {}
        last_reply, last_time = "", ""
        alma_turn: dict[int, list[str]] = {}
        for p in paragraphs:
            if p.speaker == ASSISTANT:
                alma_turn.setdefault(p.turn, []).append(p.text)
                last_reply = " ".join(alma_turn[p.turn])[:REPLY_CHARS]
                continue
            last_time = p.time or last_time
            rules = derive(
                p.text, projects=projects, day=the_day, base=2 if p.kind == "turn" else 3
            )
            if rules.question:  # what the person asks ALMA is not what they are
                last_reply = ""
                continue
            kind = "turn" if p.kind == "turn" else "note"
            out[p.start] = MemoryRecord(
                id=paragraph_id(rel, p),
                content=p.text,
                tags=rules.tags,
                project=rules.project,
                importance=rules.importance,
                memory_type=rules.memory_type,
                created_at=self._when(the_day, last_time),
                source=f"{rel}:{p.line}",
                layer=layer_for(rules.memory_type, kind),
                kind=kind,
                day=day,
                event_date=rules.event_date,
                reply_to=last_reply,
                theme=rules.theme,
                related_to=rules.related_to,
            )
            last_reply = ""
        return out

    def _when(self, the_day: date | None, hhmmss: str) -> str:
        if the_day is None:
            return self._clock().isoformat(timespec="seconds")
        parts = [int(x) for x in hhmmss.split(":")] if hhmmss else []
        h, m, s = [*parts, 0, 0, 0][:3]
        try:
            local = datetime(the_day.year, the_day.month, the_day.day, h, m, s)
        except ValueError:  # "## 25:99 · usuario": an impossible time counts as the day's start
            local = datetime(the_day.year, the_day.month, the_day.day)
        try:
            return local.astimezone().isoformat(timespec="seconds")  # log times are local
        except (ValueError, OverflowError):  # 0001-01-01.md east of UTC: year 0 in UTC
            return local.replace(tzinfo=UTC).isoformat(timespec="seconds")

    def _maybe_summarize(
        self, rel: str, day: str, final: bool, offset: int, records: list[MemoryRecord]
    ) -> None:
        if not day or not final or date.fromisoformat(day) >= self._clock().astimezone().date():
            return
        saved = self._state.get_offset(rel)
        if saved is None or saved.summarized == offset:
            return
        memory_id = hashlib.sha256(f"summary\0{rel}".encode()).hexdigest()[:32]
        summary = daily_summary(
            memory_id, day, rel, self._when(date.fromisoformat(day), "23:59:59"), records
        )
        if summary is not None:
            self._mem.put(summary)
        self._state.set_summarized(rel, offset)


class IngestWorker:
    """Ingests on a thread of its own: the files the daemon's watcher reports changed
    (:meth:`poke`), and every file each ``rescan_seconds`` (inotify drops events under bursts;
    see shared/stack.md)."""

    def __init__(self, ingestor: LogIngestor, *, rescan_seconds: float = 60.0) -> None:
        self._ingestor = ingestor
        self._rescan_seconds = rescan_seconds
        self._dirty: set[str] = set()
        self._cond = threading.Condition()
        self._busy = False
        self._stop = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._busy = True  # the first pass catches up with what happened while stopped
        self._thread = threading.Thread(target=self._run, name="alma-memory-ingest", daemon=True)
        self._thread.start()

    def poke(self, name: str) -> None:
        """``logs/NAME`` changed (from the daemon's one watcher, agent.watch)."""
        with self._cond:
            self._dirty.add(name)
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """True once nothing is queued or running (tests and shutdown use it)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._dirty and not self._busy, timeout)

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._thread = None

    def _run(self) -> None:
        names: set[str] | None = None  # the first pass reads every file: what came while stopped
        while True:
            try:
                self._pass(names)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
            with self._cond:
                if not self._dirty and not self._stop:
                    self._cond.wait(self._rescan_seconds)
                if self._stop:
                    return
                names = set(self._dirty) if self._dirty else None
                self._dirty.clear()
                self._busy = True

    def _pass(self, names: set[str] | None) -> None:
        try:
            if names is None:
                self._ingestor.rescan()
            else:
                for name in sorted(names):
                    self._ingestor.ingest_file(name)
        except Exception:
            log.exception("memory ingestion pass failed; the next event or rescan retries")
