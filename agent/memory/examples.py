"""The example memories ``alma-ctl init --with-examples`` asks for, so a new root shows something.

The running daemon stores them at once (``memory.examples``); without one, init leaves a request
in the root that the daemon honours when its memory store loads (``MemoryService.
load_requested_examples``). Their ids are derived from their text, so loading twice adds nothing
the second time, and an example the person forgot (archived) is not brought back.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

#: Next to the package, not imported: agent/data is a data folder, not a package.
EXAMPLES_FILE = Path(__file__).resolve().parent.parent / "data" / "examples.json"


class ExampleMemory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    project: str = ""
    importance: int = Field(default=3, ge=1, le=5)
    memory_type: str = "context"


def example_id(content: str) -> str:
    return "ex" + hashlib.sha256(content.encode()).hexdigest()[:30]


def load_examples_file() -> list[ExampleMemory]:
    raw = EXAMPLES_FILE.read_text(encoding="utf-8")
    return [ExampleMemory.model_validate(item) for item in json.loads(raw)]
