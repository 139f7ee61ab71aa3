"""A model server started by another user of this machine: tests.support.openai_stub run as
``nobody`` with setpriv (the test runs as root). What it heard is read back from its output."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NOBODY = 65534
_ROOT = Path(__file__).resolve().parents[2]
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from tests.support.openai_stub import main; main()"
)


def usable() -> str:
    """Why a server cannot be started as another user here, or "" when it can."""
    if os.getuid() != 0:
        return "only root can start a process as another user"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    return ""


class ForeignServer:
    def __init__(self, url: str, output: Path) -> None:
        self.url = url
        self.output = output

    def heard(self) -> list[dict[str, Any]]:
        lines = self.output.read_text(encoding="utf-8").splitlines()[1:]
        return [json.loads(line) for line in lines if line.strip()]


@contextlib.contextmanager
def foreign_server(answer: str, uid: int = NOBODY) -> Iterator[ForeignServer]:
    with tempfile.TemporaryDirectory(prefix="alma-foreign-") as tmp:
        output = Path(tmp, "heard")
        with output.open("wb") as out:
            proc = subprocess.Popen(
                [
                    "setpriv",
                    f"--reuid={uid}",
                    f"--regid={uid}",
                    "--clear-groups",
                    sys.executable,
                    "-I",
                    "-c",
                    _BOOT,
                    str(_ROOT),
                    answer,
                ],
                stdout=out,
                stdin=subprocess.DEVNULL,
                cwd="/",
            )
        try:
            deadline = time.monotonic() + 60
            while not (first := output.read_text(encoding="utf-8").partition("\n")[0]):
                assert proc.poll() is None, "the other user's server did not start"
                assert time.monotonic() < deadline, "the other user's server did not start"
                time.sleep(0.05)
            yield ForeignServer(first.strip(), output)
        finally:
            proc.kill()
            proc.wait()
