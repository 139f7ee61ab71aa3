"""The optional model: it improves a memory's metadata in the background, never blocking.

Its output is untrusted text turned into a dict: it is validated (unknown keys refused),
clamped (importance into 1-5, at most 10 short tags, known types only), and when it fails
the memory simply keeps its rule-based metadata.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from state.memory.models import KNOWN_TYPES

log = logging.getLogger(__name__)

MAX_TAGS = 10
MAX_TEXT = 80


class Enricher(Protocol):
    """A model (or anything) that reads a memory's text and proposes metadata."""

    def __call__(self, text: str) -> Mapping[str, Any]: ...


class ModelMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)

    tags: list[str] = Field(default_factory=list)
    project: str = ""
    theme: str = ""
    related_to: str = ""
    importance: int | None = None
    memory_type: str | None = None

    @field_validator("importance", mode="before")
    @classmethod
    def _clamp_importance(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("importance must be a number")
        if isinstance(value, int | float):
            return max(1, min(5, round(value)))
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return max(1, min(5, int(value.strip())))
        return value  # anything else fails int validation

    @field_validator("tags")
    @classmethod
    def _clamp_tags(cls, value: list[str]) -> list[str]:
        return [t.strip()[:40] for t in value if t.strip()][:MAX_TAGS]

    @field_validator("project", "theme", "related_to")
    @classmethod
    def _clamp_text(cls, value: str) -> str:
        return value.strip()[:MAX_TEXT]

    @field_validator("memory_type")
    @classmethod
    def _known_type(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().lower()
        return value if value in KNOWN_TYPES else None  # an invented type: keep the rules'


def validate_output(raw: object) -> ModelMeta | None:
    if not isinstance(raw, Mapping):
        return None
    try:
        return ModelMeta.model_validate(dict(raw))
    except ValidationError as exc:
        log.info("model metadata rejected, keeping the rules: %s", exc.errors()[0]["msg"])
        return None


Job = tuple[str, str, frozenset[str]]  # memory id, text, fields the person set explicitly


class EnrichWorker:
    """One background thread; callers only enqueue. ``apply`` writes a validated result."""

    def __init__(
        self, model: Enricher, apply: Callable[[str, ModelMeta, frozenset[str]], None]
    ) -> None:
        self._model = model
        self._apply = apply
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="alma-memory-enrich", daemon=True)
        self._thread.start()

    def submit(self, memory_id: str, text: str, fixed: frozenset[str] = frozenset()) -> None:
        self._jobs.put((memory_id, text, fixed))

    def wait_idle(self) -> None:
        self._jobs.join()

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                memory_id, text, fixed = job
                try:
                    raw = self._model(text)
                except Exception:
                    log.warning(
                        "the model failed on memory %s; keeping the rules", memory_id, exc_info=True
                    )
                    continue
                meta = validate_output(raw)
                if meta is not None:
                    self._apply(memory_id, meta, fixed)
            except Exception:
                log.exception("applying model metadata to a memory failed")
            finally:
                self._jobs.task_done()
