"""The memory service, loaded in the background (the embedding model takes a few seconds)."""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from policies import limits as L
from policies.errors import UnavailableError
from policies.i18n import _

log = logging.getLogger("alma.memory")


class _Quiet(Protocol):
    @property
    def lock(self) -> AbstractContextManager[Any]:
        """Held: no write of the store is under way (a backup copies its files meanwhile)."""
        ...


class Memory(Protocol):
    """What the daemon asks of its memory (agent.memory.service.MemoryService): typed here so
    the socket handlers, the loop and the merge actions are checked without importing the
    store (Chroma and the embedder load in the background)."""

    @property
    def store(self) -> _Quiet: ...

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
    ) -> dict[str, Any]: ...

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
    ) -> builtins.list[dict[str, Any]]: ...

    def list(
        self,
        *,
        limit: int = 20,
        tag: str | None = None,
        project: str | None = None,
        memory_type: str | None = None,
        archived: bool = False,
    ) -> builtins.list[dict[str, Any]]: ...

    def show(self, memory_id: str) -> dict[str, Any]: ...
    def forget(self, memory_id: str) -> dict[str, Any]: ...
    def restore(self, memory_id: str) -> dict[str, Any]: ...

    def context(
        self, prompt: str, *, budget_tokens: int = L.CONTEXT_BUDGET_DEFAULT
    ) -> dict[str, Any]: ...

    def export(self, fmt: str) -> builtins.list[dict[str, Any]]: ...
    def load_examples(self) -> dict[str, int]: ...
    def stats(self) -> dict[str, Any]: ...
    def count(self) -> int: ...
    def created(self, start_ts: float, end_ts: float) -> dict[str, int]: ...
    def merge_candidates(
        self, *, wait: bool = True
    ) -> builtins.list[builtins.list[str]] | None: ...
    def start_merge_scan(self) -> None: ...
    def merge(self, keep_id: str, other_ids: builtins.list[str]) -> dict[str, Any]: ...
    def merge_record(self, keep_id: str, other_ids: builtins.list[str]) -> dict[str, Any]: ...
    def unmerge(self, record: dict[str, Any]) -> None: ...
    def log_changed(self, name: str) -> None: ...
    def rescan_logs(self) -> int: ...
    def close(self) -> None: ...


class MemoryGate:
    """The memory service loads in the background (the embedding model takes a few seconds);
    memory commands wait for it a little, then say to try again."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._service: Memory | None = None
        self.error: str | None = None

    def set(self, service: Memory) -> None:
        self._service = service
        self._ready.set()

    def fail(self, error: str) -> None:
        self.error = error
        self._ready.set()

    def get(self, wait: float = 120.0) -> Memory:
        if not self._ready.wait(wait):
            raise UnavailableError(
                _("The memory store is still loading; try again in a few seconds.")
            )
        if self._service is None:
            raise UnavailableError(
                _("The memory store is not available: {error}", error=self.error)
            )
        return self._service

    @property
    def service(self) -> Memory:
        """The service once :attr:`loaded` (check that first: this never waits)."""
        return self.get(wait=0.0)

    @property
    def loaded(self) -> bool:
        return self._service is not None

    def status(self) -> tuple[str, int | None]:
        """What `status` shows: "ready" with the count of active memories (None if the store
        cannot count now), else "loading" or why it failed. The service is read once: it is
        set by the loading thread, and two reads could say "not loaded" then "ready"."""
        service = self._service
        if service is None:
            return self.error or "loading", None
        try:
            return "ready", int(service.count())
        except Exception:  # status must answer even when the store is unwell; the log says why
            log.warning("the memory store could not count its memories", exc_info=True)
            return "ready", None
