"""The memory gate: what `status` reports while the store loads in the background."""

from __future__ import annotations

from typing import Any

from agent.memory.gate import MemoryGate


class Counted:
    def count(self) -> int:
        return 0


class LoadsWhileStatusReads(MemoryGate):
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
    gate = MemoryGate()
    assert gate.status() == ("loading", None)
    gate.set(Counted())  # type: ignore[arg-type]  # only count() is asked
    assert gate.status() == ("ready", 0)
    failed = MemoryGate()
    failed.fail("memory is disabled")
    assert failed.status() == ("memory is disabled", None)


def test_a_store_that_cannot_count_still_answers_ready_without_a_count() -> None:
    class Unwell:
        def count(self) -> int:
            raise RuntimeError("chroma is unwell")

    gate = MemoryGate()
    gate.set(Unwell())  # type: ignore[arg-type]  # only count() is asked
    assert gate.status() == ("ready", None)
