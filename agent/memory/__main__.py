"""``python -m agent.memory ROOT --undo-questions``, with the daemon stopped: every stored
question put back as it was before questions were told apart (agent.memory.migrate)."""

from __future__ import annotations

import sys
from pathlib import Path

from agent.memory.service import MemoryService
from policies.i18n import _
from policies.layout import RootLayout


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[2] != "--undo-questions":
        sys.exit(_("Usage: python -m agent.memory ROOT --undo-questions"))
    svc = MemoryService(RootLayout(Path(sys.argv[1])))
    try:
        print(_("{n} memories put back as they were.", n=svc.undo_question_migration()))
    finally:
        svc.close()


if __name__ == "__main__":
    main()
