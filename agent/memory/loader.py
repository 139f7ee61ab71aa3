"""The memory service, loaded in the background (the embedding model is slow to load)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from policies.errors import UnavailableError
from policies.i18n import _
from policies.results import Context

if TYPE_CHECKING:
    # Only the type: the service imports Chroma and the embedder, which load in the background.
    from agent.memory.service import MemoryService

log = logging.getLogger("alma.memory")


class MemoryLoader:
    """The memory service loads in the background (the embedding model is slow to load);
    memory commands wait for it a little, then say to try again. What the daemon asks of the
    memory whether it is there or not (the chat's context, the logs to ingest) asks here."""

    def __init__(self, principles_file: Path | None = None) -> None:
        self.principles_file = principles_file
        self._ready = threading.Event()
        self._service: MemoryService | None = None
        self.error: str | None = None

    def set(self, service: MemoryService) -> None:
        self._service = service
        self._ready.set()

    def fail(self, error: str) -> None:
        self.error = error
        self._ready.set()

    def get(self, wait: float = 120.0) -> MemoryService:
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
    def service(self) -> MemoryService:
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

    def chat_context(self, message: str, budget_tokens: int) -> Context:
        """What the chat is given for ``message``: the principles and the memories that answer
        it; the principles alone while the store loads or when it is off."""
        service = self._service
        if service is not None:
            return service.context(message, budget=budget_tokens)
        from agent.memory.context import read_principles  # numpy: loaded with the store

        principles = read_principles(self.principles_file) if self.principles_file else []
        text = "\n".join(item.line() for item in principles)
        return {
            "text": text,
            "principles_text": text,
            "items": [item.public() for item in principles],
        }

    def logs_changed(self, names: Iterable[str]) -> None:
        """Files of logs/ changed: ingestion follows the chat logs among them, once loaded."""
        service = self._service
        if service is not None:
            for name in names:
                if name.endswith(".md"):
                    service.log_changed(name)

    def rescan_logs(self) -> None:
        """The schedule's rescan: what ingestion missed (a lost event), once loaded."""
        if self._service is not None:
            self._service.rescan_logs()

    def close(self) -> None:
        if self._service is not None:
            self._service.close()
