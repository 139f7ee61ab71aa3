"""The memory service, loaded in the background (the embedding model is slow to load)."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from policies.errors import UnavailableError
from policies.i18n import _

if TYPE_CHECKING:
    # Only the type: the service imports Chroma and the embedder, which load in the background.
    from agent.memory.service import MemoryService

log = logging.getLogger("alma.memory")


class MemoryGate:
    """The memory service loads in the background (the embedding model is slow to load);
    memory commands wait for it a little, then say to try again."""

    def __init__(self) -> None:
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
