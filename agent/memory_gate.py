"""The memory service, loaded in the background (the embedding model takes a few seconds)."""

from __future__ import annotations

import threading
from typing import Any

from policies.errors import UnavailableError


class MemoryGate:
    """The memory service loads in the background (the embedding model takes a few seconds);
    memory commands wait for it a little, then say to try again."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self.service: Any = None
        self.error: str | None = None

    def set(self, service: Any) -> None:
        self.service = service
        self._ready.set()

    def fail(self, error: str) -> None:
        self.error = error
        self._ready.set()

    def get(self, wait: float = 120.0) -> Any:
        if not self._ready.wait(wait):
            raise UnavailableError("The memory store is still loading; try again in a few seconds.")
        if self.service is None:
            raise UnavailableError(f"The memory store is not available: {self.error}")
        return self.service

    @property
    def loaded(self) -> bool:
        return self.service is not None
