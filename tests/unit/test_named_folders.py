"""The folders a person's reason may name by name, and the day's projects: the root's, a few
levels down, read by one owner (``Tree.folders``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import agent.loop.analysis as analysis
from actions.tree import Tree
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


def test_a_linked_user_folder_or_a_linked_or_unreadable_one_below_gives_no_names_from_it(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "fuera"
    (outside / "secreto").mkdir(parents=True)
    layout = RootLayout(tmp_path / "raiz")
    (layout.user / "Clases" / "cerrada" / "dentro").mkdir(parents=True)
    (layout.user / "enlace").symlink_to(outside)
    (layout.user / "Clases" / "cerrada").chmod(0)
    try:
        got = named_folders(layout)
    finally:
        (layout.user / "Clases" / "cerrada").chmod(0o755)
    if os.geteuid() != 0:  # root reads a folder whatever its mode
        assert got == ["user/Clases", "user/Clases/cerrada"]
    assert "user/enlace" not in got and not any("secreto" in g for g in got)

    linked = RootLayout(tmp_path / "otra")
    linked.root.mkdir()
    linked.user.symlink_to(layout.user)
    assert named_folders(linked) == []


def test_the_folders_are_listed_breadth_first_within_the_bound_and_no_descriptor_is_kept(
    tmp_path: Path,
) -> None:
    for rel in ("b/x/y/z", "a/w", ".git/objects", "c"):
        (tmp_path / "user" / rel).mkdir(parents=True)
    with Tree(tmp_path) as tree:
        before = len(os.listdir("/proc/self/fd"))
        assert tree.folders(("user",), 3, 100) == [
            ("user", "a"),
            ("user", "b"),
            ("user", "c"),
            ("user", "a", "w"),
            ("user", "b", "x"),
            ("user", "b", "x", "y"),
        ]
        assert tree.folders(("user",), 3, 4) == [
            ("user", "a"),
            ("user", "b"),
            ("user", "c"),
            ("user", "a", "w"),
        ]
        assert tree.folders(("nada",), 2, 10) == []
        assert len(os.listdir("/proc/self/fd")) == before
