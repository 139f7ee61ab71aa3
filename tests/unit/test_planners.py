"""The plan builders on real temp trees: ops, evidence, the rules that leave files alone."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from actions.ops import Keep, Mkdir, Move, Trash, files_touched, plan_from_list, plan_to_list
from actions.planners import (
    PlanResult,
    destination_filter,
    folders_for,
    is_temp_name,
    plan_dedupe,
    plan_organize,
    plan_temp_cleanup,
    size_candidates,
)
from actions.planners.categories import category_of
from actions.planners.dedupe import stray_signs
from actions.planners.organize import OrganizeBy
from actions.scan import FolderScan, ScannedFile, scan_folder, scan_tree, with_sha256
from actions.tree import Tree
from policies.i18n import language


@pytest.fixture(autouse=True)
def spanish() -> Iterator[None]:
    # The sentences of plans and scans are read here as a Spanish person's daemon writes them.
    with language("es"):
        yield


NOW = time.time()
OLD = NOW - 3600
DAY = 86_400.0


def touch(path: Path, data: bytes = b"x", mtime: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


def folder_scan(root: Path, folder: str, by: OrganizeBy = "type") -> FolderScan:
    with Tree(root) as tree:
        return scan_folder(tree, folder, now=NOW, settle_seconds=120, peek=destination_filter(by))


def organize(root: Path, folder: str = "user/projectY", by: OrganizeBy = "type") -> PlanResult:
    result = plan_organize(folder_scan(root, folder, by), by=by)
    assert result is not None
    return result


def hashed_files(root: Path, top: str = "user") -> list[ScannedFile]:
    with Tree(root) as tree:
        files = scan_tree(tree, top, now=NOW, settle_seconds=120).files
        hashed, _ = with_sha256(tree, size_candidates(files))
    return hashed


def moves(result: PlanResult) -> dict[str, str]:
    return {op.src: op.dst for op in result.plan if isinstance(op, Move)}


# -- organize ------------------------------------------------------------------------------------


def test_category_map_is_case_insensitive() -> None:
    assert category_of("FOTO.JPG") == "images"
    assert category_of("x.tar.gz") == "archives"
    assert category_of("informe.PDF") == "documents"
    assert category_of("README") == "other"
    assert category_of(".bashrc") == "other"


def test_organize_by_type_like_the_contract(tmp_path: Path) -> None:
    p = tmp_path / "user/projectY"
    for name in ("a.jpg", "b.PNG", "c.pdf", "d.xlsx", "e.mp3", "f.zip", "g.weird"):
        touch(p / name)
    result = organize(tmp_path)
    assert result.kind == "organize" and result.target == "user/projectY"
    assert result.title == "Ordenar user/projectY por tipo de archivo"
    assert result.reason == "7 archivos sueltos de 6 tipos"
    assert result.files == 7 == files_touched(result.plan)
    mkdirs = [op.path for op in result.plan if isinstance(op, Mkdir)]
    assert mkdirs == [
        f"user/projectY/{c}"
        for c in ("archives", "audio", "documents", "images", "other", "spreadsheets")
    ]
    # every Mkdir comes before the moves, and every move names what it expects
    kinds = [op.op for op in result.plan]
    assert kinds == sorted(kinds, key=lambda k: k != "mkdir")
    assert moves(result)["user/projectY/b.PNG"] == "user/projectY/images/b.PNG"
    for op in result.plan:
        if isinstance(op, Move):
            assert op.expect is not None and op.expect.ino == os.lstat(tmp_path / op.src).st_ino
    # the plan survives the strict parser the executor uses
    assert plan_from_list(plan_to_list(result.plan)) == result.plan


def test_organize_names_folders_in_the_language_it_is_given(tmp_path: Path) -> None:
    p = tmp_path / "user/proyecto"
    for name in ("a.jpg", "b.pdf", "c.mp4", "d.ods", "e.mp3", "ñandú.xlsx"):
        touch(p / name)
    folders = folders_for("es")
    with Tree(tmp_path) as tree:
        scan = scan_folder(
            tree,
            "user/proyecto",
            now=NOW,
            settle_seconds=120,
            peek=destination_filter("type", folders),
        )
    result = plan_organize(scan, folders=folders)
    assert result is not None
    assert sorted(op.path for op in result.plan if isinstance(op, Mkdir)) == [
        "user/proyecto/audio",
        "user/proyecto/documentos",
        "user/proyecto/hojas de cálculo",
        "user/proyecto/imágenes",
        "user/proyecto/vídeos",
    ]
    assert moves(result)["user/proyecto/ñandú.xlsx"] == "user/proyecto/hojas de cálculo/ñandú.xlsx"
    assert "imágenes/: 1 archivo (a.jpg)" in result.evidence
    assert plan_from_list(plan_to_list(result.plan)) == result.plan
    # English names stay English: what the planner is given is what it creates.
    english = plan_organize(folder_scan(tmp_path, "user/proyecto"))
    assert english is not None
    assert "user/proyecto/images" in [op.path for op in english.plan if isinstance(op, Mkdir)]


def test_organize_reuses_a_folder_named_in_another_language(tmp_path: Path) -> None:
    p = tmp_path / "user/proyecto"
    touch(p / "Images/old.jpg")  # organized before the person's language was Spanish
    touch(p / "a.jpg")
    touch(p / "b.pdf")
    touch(p / "c.pdf")
    (p / "documents").write_bytes(b"a file with an English folder's name is in nobody's way")
    folders = folders_for("es")
    with Tree(tmp_path) as tree:
        scan = scan_folder(
            tree,
            "user/proyecto",
            now=NOW,
            settle_seconds=120,
            peek=destination_filter("type", folders),
        )
    result = plan_organize(scan, folders=folders)
    assert result is not None
    assert [op.path for op in result.plan if isinstance(op, Mkdir)] == ["user/proyecto/documentos"]
    assert moves(result)["user/proyecto/a.jpg"] == "user/proyecto/Images/a.jpg"
    assert moves(result)["user/proyecto/b.pdf"] == "user/proyecto/documentos/b.pdf"


def test_organize_reuses_existing_folders_and_never_picks_an_existing_destination(
    tmp_path: Path,
) -> None:
    p = tmp_path / "user/projectY"
    touch(p / "Images/a.jpg", b"already here")  # an existing folder, other case
    touch(p / "a.JPG")  # same name up to case: would collide on a case-insensitive disk
    touch(p / "b.jpg")
    touch(p / "c.pdf")
    touch(p / "d.pdf")
    (p / "documents").symlink_to("/etc")  # a name taken by something that is not a folder
    touch(p / "e.txt")
    touch(p / "f.mp3")
    result = organize(tmp_path)
    assert [op.path for op in result.plan if isinstance(op, Mkdir)] == ["user/projectY/audio"]
    assert moves(result) == {
        "user/projectY/b.jpg": "user/projectY/Images/b.jpg",
        "user/projectY/f.mp3": "user/projectY/audio/f.mp3",
    }
    joined = "\n".join(result.evidence)
    assert "«documents» ya existe y no es una carpeta" in joined
    assert "user/projectY/a.JPG: ya existe" in joined
    for dst in moves(result).values():
        assert not os.path.lexists(tmp_path / dst)


def test_organize_leaves_hidden_temp_and_unsettled_files_and_subfolders(tmp_path: Path) -> None:
    p = tmp_path / "user/projectY"
    touch(p / ".hidden.jpg")
    touch(p / "x.tmp")
    touch(p / "~$informe.docx")
    touch(p / "new.jpg", mtime=NOW)
    touch(p / "sub/inner.jpg")
    touch(p / "a.jpg")
    touch(p / "b.pdf")
    result = organize(tmp_path)
    assert set(moves(result)) == {"user/projectY/a.jpg", "user/projectY/b.pdf"}


def test_organize_gives_no_plan_for_one_new_group_or_a_project(tmp_path: Path) -> None:
    p = tmp_path / "user/fotos"
    for i in range(20):
        touch(p / f"{i}.jpg")
    assert plan_organize(folder_scan(tmp_path, "user/fotos")) is None
    q = tmp_path / "user/code"
    for name in ("a.py", "b.md", "c.json", "pyproject.toml"):
        touch(q / name)
    assert plan_organize(folder_scan(tmp_path, "user/code")) is None


def test_organize_into_an_unpeeked_folder_leaves_the_group(tmp_path: Path) -> None:
    p = tmp_path / "user/projectY"
    touch(p / "images/x.jpg")
    touch(p / "a.jpg")
    touch(p / "b.pdf")
    touch(p / "c.mp3")
    with Tree(tmp_path) as tree:
        scan = scan_folder(tree, "user/projectY", now=NOW, settle_seconds=120)  # no peek
    result = plan_organize(scan)
    assert result is not None
    assert "user/projectY/a.jpg" not in moves(result)
    assert any("no se pudo revisar" in e for e in result.evidence)


def test_organize_by_month(tmp_path: Path) -> None:
    p = tmp_path / "user/descargas"
    stamps = {
        "a.jpg": datetime(2026, 10, 15, 12).timestamp(),
        "b.pdf": datetime(2026, 11, 15, 12).timestamp(),
        "c.pdf": datetime(2026, 11, 16, 12).timestamp(),
    }
    for name, ts in stamps.items():
        touch(p / name, mtime=ts)
    touch(p / "2026-10/a.jpg")  # occupied destination in an existing month folder
    result = organize(tmp_path, "user/descargas", by="month")
    assert result.title == "Ordenar user/descargas por mes"
    assert moves(result) == {
        "user/descargas/b.pdf": "user/descargas/2026-11/b.pdf",
        "user/descargas/c.pdf": "user/descargas/2026-11/c.pdf",
    }


def test_organize_handles_long_names(tmp_path: Path) -> None:
    p = tmp_path / "user/projectY"
    long_name = "n" * 251 + ".jpg"  # 255 bytes
    touch(p / long_name)
    touch(p / "b.pdf")
    result = organize(tmp_path)
    assert moves(result)[f"user/projectY/{long_name}"] == f"user/projectY/images/{long_name}"


def test_organize_fingerprint_is_stable_and_follows_the_files(tmp_path: Path) -> None:
    p = tmp_path / "user/projectY"
    touch(p / "a.jpg", mtime=datetime(2026, 10, 15, 12).timestamp())
    touch(p / "b.pdf", mtime=datetime(2026, 11, 15, 12).timestamp())
    first = organize(tmp_path).fingerprint
    assert organize(tmp_path).fingerprint == first
    touch(p / "b.pdf", b"other content")
    assert organize(tmp_path).fingerprint != first
    assert organize(tmp_path, by="month").fingerprint != organize(tmp_path).fingerprint


# -- duplicates ----------------------------------------------------------------------------------


def test_dedupe_keeps_the_oldest_and_trashes_the_others(tmp_path: Path) -> None:
    u = tmp_path / "user"
    touch(u / "fotos/playa.jpg", b"P" * 100, mtime=OLD - 100)
    touch(u / "descargas/playa (1).jpg", b"P" * 100)
    touch(u / "descargas/playa (2).jpg", b"P" * 100)
    touch(u / "descargas/otra.jpg", b"Q" * 100)  # same size, other bytes
    touch(u / "a/informe.pdf", b"R" * 10)
    touch(u / "b/informe.pdf", b"R" * 10)  # same mtime: the shorter, then first path wins
    result = plan_dedupe("user", hashed_files(tmp_path))
    assert result is not None
    assert result.kind == "duplicates" and result.target == "user"
    trashed = [op.path for op in result.plan if isinstance(op, Trash)]
    assert trashed == [
        "user/b/informe.pdf",
        "user/descargas/playa (1).jpg",
        "user/descargas/playa (2).jpg",
    ]
    assert result.files == 3
    assert result.reason == "3 copias idénticas de 2 archivos"
    for op in result.plan:
        assert isinstance(op, Trash | Keep) and op.expect is not None and op.expect.sha256
    # Each group's kept copy is a precondition checked before its copies go to the trash.
    kept = [op.path for op in result.plan if isinstance(op, Keep)]
    assert kept == ["user/a/informe.pdf", "user/fotos/playa.jpg"]
    kept_sha = {
        op.expect.sha256: i
        for i, op in enumerate(result.plan)
        if isinstance(op, Keep) and op.expect is not None
    }
    for i, op in enumerate(result.plan):
        if isinstance(op, Trash) and op.expect is not None:
            assert kept_sha[op.expect.sha256] < i
    assert any(e.startswith("Se conserva user/fotos/playa.jpg") for e in result.evidence)


def test_dedupe_with_tied_times_keeps_the_album_copy(tmp_path: Path) -> None:
    # Copied with their times kept (cp -p, a phone sync): age and path length would keep the
    # download and the phone's dump, and trash the album's photo.
    u = tmp_path / "user"
    album = "user/Fotos/2026-11-Granada/IMG_20261114_101500.jpg"
    touch(tmp_path / album, b"G" * 200)
    touch(u / "Descargas/IMG_20261114_101500.jpg", b"G" * 200)
    touch(u / "DCIM/Camera/IMG_20261114_101500.jpg", b"G" * 200)
    touch(u / "Fotos/2026-11-Granada/IMG_20261114_101500 (1).jpg", b"G" * 200)
    touch(u / "proyecto/informe.pdf", b"I" * 50)
    touch(u / "proyecto/informe - copia.pdf", b"I" * 50, mtime=OLD - 60)  # older, but a copy
    result = plan_dedupe("user", hashed_files(tmp_path))
    assert result is not None
    kept = [op.path for op in result.plan if isinstance(op, Keep)]
    assert kept == [album, "user/proyecto/informe.pdf"]
    assert result.files == 4
    assert any(
        e.startswith(f"Se conserva {album} (está en una carpeta tuya, las otras en descargas")
        for e in result.evidence
    )
    assert any(
        e.startswith("Se conserva user/proyecto/informe.pdf (tiene el nombre original")
        for e in result.evidence
    )


@pytest.mark.parametrize(
    ("path", "signs"),
    [
        ("user/Fotos/2026-11-Granada/IMG_1.jpg", (False, False)),
        ("user/Descargas/IMG_1.jpg", (True, False)),
        ("user/downloads/a.pdf", (True, False)),
        ("user/DCIM/100ANDRO/IMG_1.jpg", (True, False)),
        ("user/Cámara/IMG_1.jpg", (True, False)),
        ("user/WhatsApp Images/IMG-1.jpg", (True, False)),
        ("user/Fotos/foto (1).jpg", (False, True)),
        ("user/Fotos/foto copia.jpg", (False, True)),
        ("user/docs/informe - copia.pdf", (False, True)),
        ("user/docs/Copy of informe.pdf", (False, True)),
        ("user/docs/informe-copy 2.pdf", (False, True)),
        ("user/Descargas/foto (2).jpg", (True, True)),
        ("user/docs/copias de seguridad.pdf", (False, False)),
        ("user/2026/informe.pdf", (False, False)),
        ("user/docs/(1) intro.pdf", (False, False)),
    ],
)
def test_what_makes_a_copy_the_one_to_let_go(path: str, signs: tuple[bool, bool]) -> None:
    assert stray_signs(path) == signs


def test_dedupe_ignores_hard_links_empty_code_and_data_files(tmp_path: Path) -> None:
    u = tmp_path / "user"
    touch(u / "a.jpg", b"same")
    os.link(u / "a.jpg", u / "b.jpg")  # one inode, two names: not duplicates
    touch(u / "p1/__init__.py", b"print(1)")
    touch(u / "p2/__init__.py", b"print(1)")
    touch(u / "p1/config.json", b"{}")
    touch(u / "p2/config.json", b"{}")
    touch(u / "e1.pdf", b"")
    touch(u / "e2.pdf", b"")
    assert plan_dedupe("user", hashed_files(tmp_path)) is None


def test_dedupe_treats_two_names_of_one_inode_as_one_file() -> None:
    from actions.ops import Identity

    ident = Identity(dev=1, ino=7, kind="file", size=3, mtime_ns=1, sha256="ab")
    files = [
        ScannedFile(path="user/a.jpg", name="a.jpg", identity=ident),
        ScannedFile(path="user/b.jpg", name="b.jpg", identity=ident),
    ]
    assert plan_dedupe("user", files) is None


def test_size_candidates_count_one_name_per_inode_within_a_size() -> None:
    from actions.ops import Identity

    def f(name: str, ino: int, size: int, mtime: int) -> ScannedFile:
        ident = Identity(dev=1, ino=ino, kind="file", size=size, mtime_ns=mtime)
        return ScannedFile(path=f"user/{name}", name=name, identity=ident)

    files = [
        f("b.jpg", 7, 3, 2),  # two names of inode 7: the older name (a.jpg) stands for it
        f("a.jpg", 7, 3, 1),
        f("c.jpg", 8, 3, 5),  # the same size, another inode: a candidate
        f("d.jpg", 9, 4, 1),  # two names of inode 9 and nothing else of its size: no candidate
        f("e.jpg", 9, 4, 1),
        f("f.jpg", 10, 5, 1),  # alone in its size
        f("g.py", 11, 5, 1),  # same size, but code is never a candidate
    ]
    assert [c.path for c in size_candidates(files)] == ["user/a.jpg", "user/c.jpg"]


def test_dedupe_respects_max_ops_by_whole_groups(tmp_path: Path) -> None:
    u = tmp_path / "user"
    for i in range(3):
        for j in range(3):
            touch(u / f"g{i}/c{j}.jpg", bytes([65 + i]) * 10)
    result = plan_dedupe("user", hashed_files(tmp_path), max_ops=5)
    assert result is not None and result.files == 4
    assert "2 de 3 grupos" in result.evidence[0]


# -- temp cleanup --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "temp"),
    [
        ("x.tmp", True),
        ("X.TMP", True),
        ("notas.txt~", True),
        (".~lock.informe.odt#", True),
        ("~$informe.docx", True),
        (".DS_Store", True),
        ("Thumbs.db", True),
        (".notas.txt.swp", True),
        ("copia.bak", False),
        ("._foto.jpg", False),
        ("desktop.ini", False),
        ("~", False),
        (".tmp", False),
        ("tmp", False),
        ("informe.docx", False),
    ],
)
def test_temp_names(name: str, temp: bool) -> None:
    assert is_temp_name(name) is temp


def test_temp_cleanup_trashes_only_old_temp_files(tmp_path: Path) -> None:
    u = tmp_path / "user"
    touch(u / "old.tmp", mtime=NOW - 10 * DAY)
    touch(u / "sub/.DS_Store", mtime=NOW - 30 * DAY)
    touch(u / "recent.tmp", mtime=NOW - 2 * DAY)
    touch(u / "copia.bak", mtime=NOW - 30 * DAY)
    touch(u / "keep.pdf", mtime=NOW - 30 * DAY)
    with Tree(tmp_path) as tree:
        files = scan_tree(tree, "user", now=NOW, settle_seconds=120).files
    result = plan_temp_cleanup("user", files, now=NOW, age_days=7)
    assert result is not None
    assert [op.path for op in result.plan if isinstance(op, Trash)] == [
        "user/old.tmp",
        "user/sub/.DS_Store",
    ]
    assert result.title == "Limpiar archivos temporales en user"
    assert result.reason == "2 archivos temporales con más de 7 días"
    assert plan_temp_cleanup("user", files, now=NOW, age_days=60) is None
    capped = plan_temp_cleanup("user", files, now=NOW, age_days=0, max_ops=1)
    assert capped is not None and capped.files == 1
