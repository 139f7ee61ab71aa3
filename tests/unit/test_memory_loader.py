"""The memory loader: what `status` reports while the store loads in the background."""

from __future__ import annotations

from typing import Any

from agent.memory.loader import MemoryLoader


class Counted:
    def count(self) -> int:
        return 0


class LoadsWhileStatusReads(MemoryLoader):
    """The store finishes loading between the first read of the service and any later one:
    the window a `status` request can fall into while the daemon starts."""

    def __init__(self) -> None:
        self.reads = 0
        super().__init__()

    @property  # type: ignore[override]  # the loading thread's assignment, as a clock
    def _service(self) -> Any:
        self.reads += 1
        return None if self.reads == 1 else Counted()

    @_service.setter
    def _service(self, value: Any) -> None:
        pass


def test_status_reads_the_service_once_so_ready_always_comes_with_a_count() -> None:
    # CI saw `memory: "ready"` with `memories: null`: one read said "not loaded" (no count),
    # the next "loaded" (ready).
    state, count = LoadsWhileStatusReads().status()
    assert (state, count) in (("loading", None), ("ready", 0))


def test_status_while_loading_ready_and_failed() -> None:
    gate = MemoryLoader()
    assert gate.status() == ("loading", None)
    gate.set(Counted())  # type: ignore[arg-type]  # only count() is asked
    assert gate.status() == ("ready", 0)
    failed = MemoryLoader()
    failed.fail("memory is disabled")
    assert failed.status() == ("memory is disabled", None)


def test_a_store_that_cannot_count_still_answers_ready_without_a_count() -> None:
    class Unwell:
        def count(self) -> int:
            raise RuntimeError("chroma is unwell")

    gate = MemoryLoader()
    gate.set(Unwell())  # type: ignore[arg-type]  # only count() is asked
    assert gate.status() == ("ready", None)


class _Ingesting:
    def __init__(self) -> None:
        self.changed: list[str] = []
        self.asked: list[tuple[str, int]] = []

    def log_changed(self, name: str) -> None:
        self.changed.append(name)

    def context(self, message: str, *, budget: int) -> dict[str, Any]:
        self.asked.append((message, budget))
        return {"text": "", "items": [], "memories_text": ""}


def test_the_chat_gets_the_principles_alone_until_the_store_is_there(tmp_path: Any) -> None:
    principles = tmp_path / "principles.md"
    principles.write_text("- Propón, nunca impongas.\n", encoding="utf-8")
    gate = MemoryLoader(principles)
    waiting = gate.chat_context("¿qué decidí?", 500)
    assert "Propón, nunca impongas." in waiting["principles_text"]
    assert "memories_text" not in waiting  # nothing was searched: the chat does not say so
    service = _Ingesting()
    gate.set(service)  # type: ignore[arg-type]  # the two calls the gate makes
    assert "memories_text" in gate.chat_context("¿qué decidí?", 500)
    assert service.asked == [("¿qué decidí?", 500)]


def test_ingestion_follows_the_chat_logs_once_the_store_is_there() -> None:
    gate = MemoryLoader()
    gate.logs_changed(["2026-11-22.md"])  # loading: the start's rescan reads it later
    service = _Ingesting()
    gate.set(service)  # type: ignore[arg-type]  # a stand-in for the service, as above
    gate.logs_changed(["2026-11-22.md", "backup.log", "notas.txt"])
    assert service.changed == ["2026-11-22.md"]
