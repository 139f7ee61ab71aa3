"""The folders a person's reason may name by name: the root's, a few levels down."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent.loop.analysis as analysis
from agent.loop.analysis import named_folders
from policies.layout import RootLayout


def test_the_folders_a_reason_may_name_go_three_levels_down_breadth_first(
    tmp_path: Path,
) -> None:
    layout = RootLayout(tmp_path)
    for rel in ("Documentos/facturas/2023/enero", "Fotos/2024", "Descargas", ".oculta/x"):
        (layout.user / rel).mkdir(parents=True)
    (layout.user / "Descargas" / "no-es-carpeta.txt").write_text("x")
    assert named_folders(layout) == [
        "user/Descargas",
        "user/Documentos",
        "user/Fotos",
        "user/Documentos/facturas",
        "user/Fotos/2024",
        "user/Documentos/facturas/2023",
    ]


def test_a_root_with_many_folders_hands_at_most_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = RootLayout(tmp_path)
    for i in range(5):
        (layout.user / f"p{i}" / "sub").mkdir(parents=True)
    monkeypatch.setattr(analysis, "MAX_NAMED_FOLDERS", 7)
    got = named_folders(layout)
    assert len(got) == 7 and got[:5] == [f"user/p{i}" for i in range(5)]


def test_no_user_folder_is_no_names(tmp_path: Path) -> None:
    assert named_folders(RootLayout(tmp_path / "nada")) == []
