"""Server mode: the same service against a real local Chroma server (`chroma run`)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory.service import MemoryService
from policies.layout import RootLayout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    # chromadb is a hard dependency: its console script sits beside this interpreter, whether or
    # not the venv is on PATH. Missing means a broken install, which must fail, not skip.
    beside = Path(sys.executable).parent / "chroma"
    exe = str(beside) if beside.is_file() else shutil.which("chroma")
    assert exe is not None, f"the chroma command of the chromadb package is missing ({beside})"
    port = _free_port()
    proc = subprocess.Popen(
        [
            exe,
            "run",
            "--path",
            str(tmp_path / "server"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "chroma run exited"
                assert time.monotonic() < deadline, "chroma run did not start listening"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_server_mode_round_trip(tmp_path: Path, chroma_server: str) -> None:
    layout = RootLayout(tmp_path / "root")
    svc = MemoryService(layout, chroma_url=chroma_server)
    try:
        mid = svc.add("Mi perro Max murió hace dos semanas.", tags=["Personal"])["id"]
        svc.add("El backup falla si el disco no está montado.", tags=["backup"])
        assert svc.search("¿qué le pasó a mi mascota?", limit=1)[0]["id"] == mid
        assert [m["id"] for m in svc.search("algo", tags=["personal"])] == [mid]
        svc.forget(mid)
        assert svc.show(mid)["archived"]
        svc.restore(mid)
    finally:
        svc.close()
    # Reopened (a new client, the embedding function rebuilt from the stored config).
    again = MemoryService(layout, chroma_url=chroma_server)
    try:
        assert again.show(mid)["use_count"] == 2 and not again.show(mid)["archived"]
        assert again.stats()["total"] == 2
        assert not (layout.memory_dir / "chroma").exists()  # nothing embedded was created
    finally:
        again.close()
