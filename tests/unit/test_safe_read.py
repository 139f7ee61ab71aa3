"""The one safe reader of files below the root (actions.safe_read.read_file) and its users: the
detectors, memory ingestion, the training export and the daily report.

Read with ``Path.read_bytes``, ``logs/*.md`` would betray the person: a link to a secret file
would put the secret in memory and in the export, a FIFO would block ingestion forever, and a
sparse gigabyte would be read whole; the report would be written through a symlinked
``logs/alma/``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from actions.safe_read import read_file
from actions.tree import Tree
from agent.day.alma_logs import append_audit, audit_header, write_own
from agent.memory.export import export
from agent.memory.service import MemoryService
from policies.errors import RefusedError
from policies.layout import RootLayout
from state.chatlog import MAX_DAY_BYTES

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SECRET = "contraseña-del-banco-1234"
DAY = "# 2026-11-21\n\n## 10:00:00 · usuario\n{}\n\n## 10:00:05 · alma\nVale.\n<!-- model: m -->\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root whose logs/ holds a day, a link to a secret day, a FIFO and a sparse 1 GB day."""
    root = tmp_path / "ALMA"
    for sub in ("system", "logs", ".alma"):
        (root / sub).mkdir(parents=True)
    (root / "logs" / "2026-11-21.md").write_text(DAY.format("Hoy ordené el garaje."))
    secret = tmp_path / "secreto.md"
    secret.write_text(DAY.format(SECRET))
    (root / "logs" / "2026-11-20.md").symlink_to(secret)
    os.mkfifo(root / "logs" / "2026-11-19.md")
    with open(root / "logs" / "2026-11-18.md", "wb") as f:
        f.truncate(1 << 30)  # sparse: no disk, a gigabyte to whoever reads it whole
    return root


def test_read_file_refuses_links_fifos_and_folders_and_caps_the_size(root: Path) -> None:
    with Tree(root) as tree:
        assert read_file(tree, "logs/2026-11-20.md", limit=1 << 20) is None  # a link
        assert read_file(tree, "logs/2026-11-19.md", limit=1 << 20) is None  # a FIFO
        assert read_file(tree, "logs", limit=1 << 20) is None  # a folder
        assert read_file(tree, "logs/nada.md", limit=1 << 20) is None  # missing
        big = read_file(tree, "logs/2026-11-18.md", limit=4096)
        assert big is not None and len(big.data) == 4096 and big.size == 1 << 30 and big.cut
        tail = read_file(tree, "logs/2026-11-18.md", limit=10, tail=True)
        assert tail is not None and tail.offset == (1 << 30) - 10 and len(tail.data) == 10
        day = read_file(tree, "logs/2026-11-21.md", limit=1 << 20)
        assert day is not None and b"garaje" in day.data and not day.cut


def test_read_file_never_walks_through_a_linked_folder(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "fuera"
    elsewhere.mkdir()
    (elsewhere / "2026-11-22.md").write_text(SECRET)
    (root / "docs").symlink_to(elsewhere)
    with Tree(root) as tree:
        assert read_file(tree, "docs/2026-11-22.md", limit=1 << 20) is None


@pytest.fixture
def svc(root: Path, embedder_loaded: None) -> Iterator[MemoryService]:
    service = MemoryService(RootLayout(root), clock=lambda: NOW)
    yield service
    service.close()


def _in_thread(fn: object, timeout: float) -> object:
    """Run ``fn`` and give its result; fail (not hang) when it blocks (on a FIFO, say)."""
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)  # type: ignore[operator]
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "blocked (a FIFO in logs/ is opened for reading?)"
    return out[0]


def test_ingestion_reads_days_but_no_link_fifo_or_gigabyte(svc: MemoryService) -> None:
    added = _in_thread(svc.rescan_logs, timeout=120)
    assert added == 1
    contents = [m["content"] for m in svc.list(limit=100)]
    assert "Hoy ordené el garaje." in contents
    assert not any(SECRET in c or "\0" in c for c in contents), contents
    assert SECRET not in svc.context(SECRET)["text"]


def test_export_reads_days_but_no_link_or_fifo(root: Path) -> None:
    rows = _in_thread(lambda: export(root, "alpaca")["train"], timeout=60)
    assert rows == [{"instruction": "Hoy ordené el garaje.", "input": "", "output": "Vale."}]


def test_a_day_larger_than_the_bound_is_read_up_to_it(root: Path) -> None:
    # Paragraphs of a KiB: what matters is the bound's size, not how many paragraphs fill it.
    filler = "relleno " * 127 + "relleno\n\n"
    big = DAY.format("Empiezo.") + "\n" + filler * (MAX_DAY_BYTES // len(filler) + 1)
    assert len(big.encode()) > MAX_DAY_BYTES
    (root / "logs" / "2026-11-17.md").write_text(big)
    rows = export(root, "alpaca")["train"]
    assert {"instruction": "Empiezo.", "input": "", "output": "Vale."} in rows


def test_the_report_is_never_written_through_a_linked_folder(root: Path, tmp_path: Path) -> None:
    layout = RootLayout(root)
    elsewhere = tmp_path / "fuera"
    elsewhere.mkdir()
    (root / "logs" / "alma").symlink_to(elsewhere)
    with pytest.raises(RefusedError, match="link"):
        write_own(layout, "2026-11-22-analisis.md", "# Análisis\n", append=False)
    with pytest.raises(RefusedError, match="link"):
        append_audit(layout, "## acción 1\n")
    assert list(elsewhere.iterdir()) == []


def test_a_report_planted_as_a_link_is_replaced_not_followed(root: Path, tmp_path: Path) -> None:
    layout = RootLayout(root)
    secret = tmp_path / "secreto.txt"
    secret.write_text("no me toques\n")
    (root / "logs" / "alma").mkdir()
    (root / "logs" / "alma" / "2026-11-22-analisis.md").symlink_to(secret)
    (root / "logs" / "alma" / "acciones.md").symlink_to(secret)
    path = Path(write_own(layout, "2026-11-22-analisis.md", "# Análisis\n", append=False))
    assert not path.is_symlink() and path.read_text() == "# Análisis\n"
    with pytest.raises(RefusedError, match="link"):
        append_audit(layout, "## acción 1\n")
    assert secret.read_text() == "no me toques\n"


def test_the_report_creates_its_folder_the_analysis_is_replaced_the_audit_appended(
    root: Path,
) -> None:
    layout = RootLayout(root)
    path = Path(write_own(layout, "2026-11-22-analisis.md", "primera\n", append=False))
    write_own(layout, "2026-11-22-analisis.md", "segunda\n", append=False)
    assert path.parent == root / "logs" / "alma"
    assert path.read_text() == "segunda\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["2026-11-22-analisis.md"]
    append_audit(layout, "\n## acción 1\n")
    append_audit(layout, "\n## acción 2\n")
    audit = (path.parent / "acciones.md").read_text()
    assert audit.count(audit_header()) == 1  # the header is written once, first
    assert audit.startswith(audit_header())
    assert audit.index("## acción 1") < audit.index("## acción 2")
