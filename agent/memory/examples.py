"""The example memories ``alma-ctl init --with-examples`` loads, so a new root shows something.

Their ids are derived from their text, so loading twice adds nothing the second time, and an
example the person forgot (archived) is not brought back.
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


def main(argv: list[str] | None = None) -> int:
    """``python -m agent.memory.examples --root DIR``: what ``alma-ctl init --with-examples`` runs
    when no daemon is up. Prints one JSON line ``{"added": N}``."""
    import argparse
    import sys

    from agent.memory.service import MemoryService
    from policies.errors import AlmaError
    from policies.layout import RootLayout, resolve_root

    parser = argparse.ArgumentParser(prog="python -m agent.memory.examples")
    parser.add_argument("--root", required=True)
    args = parser.parse_args(argv)
    layout = RootLayout(resolve_root(args.root))
    try:
        service = MemoryService(layout)
        try:
            result = service.load_examples()
        finally:
            service.close()
    except AlmaError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
