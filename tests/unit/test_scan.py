"""actions.scan on real temp trees: what is listed, what is skipped and why."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from actions.scan import (
    FolderScan,
    TreeScan,
    find_named,
    peek_into,
    scan_folder,
    scan_tree,
    with_sha256,
)
from actions.tree import Tree
from policies.errors import RefusedError
from policies.i18n import language


@pytest.fixture(autouse=True)
def spanish() -> Iterator[None]:
    # The sentences of plans and scans are read here as a Spanish person's daemon writes them.
    with language("es"):
        yield


NOW = time.time()
OLD = NOW - 3600


def touch(path: Path, data: bytes = b"x", mtime: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


def bytes_file(folder: Path, name: bytes, data: bytes = b"x", mtime: float = OLD) -> None:
    full = os.path.join(os.fsencode(folder), name)
    fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, data)
    os.close(fd)
    os.utime(full, (mtime, mtime))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "user").mkdir()
    return tmp_path


def scan(
    root: Path,
    folder: str = "user",
    settle: float = 120,
    peek: Callable[[str], bool] | None = None,
) -> FolderScan:
    with Tree(root) as tree:
        return scan_folder(tree, folder, now=NOW, settle_seconds=settle, peek=peek)


def reasons(result: FolderScan) -> dict[str, str]:
    return {s.path: s.reason for s in result.skipped}


def test_lists_regular_files_with_identity(root: Path) -> None:
    touch(root / "user/b.txt", b"hello")
    touch(root / "user/a.jpg")
    (root / "user/sub").mkdir()
    result = scan(root)
    assert [f.path for f in result.files] == ["user/a.jpg", "user/b.txt"]
    b = result.files[1]
    st = os.lstat(root / "user/b.txt")
    assert (b.name, b.identity.ino, b.identity.size, b.identity.kind) == (
        "b.txt",
        st.st_ino,
        5,
        "file",
    )
    assert b.identity.mtime_ns == st.st_mtime_ns
    assert result.entries["sub"] == "dir"
    assert result.subfolders == ("sub",)
    assert result.skipped == ()


def test_hostile_names_are_skipped_with_a_reason(root: Path) -> None:
    touch(root / "user/line\nbreak.txt")
    touch(root / "user/bell\x07.txt")
    bytes_file(root / "user", b"bad-\xff\xfe.txt")
    long_ok = "ñ" * 127 + "a"  # 255 bytes in UTF-8: the longest name allowed
    assert len(long_ok.encode()) == 255
    touch(root / "user" / long_ok)
    result = scan(root)
    assert [f.name for f in result.files] == [long_ok]
    skipped = reasons(result)
    assert set(skipped) == {
        "user/line\\x0abreak.txt",
        "user/bell\\x07.txt",
        "user/bad-\\xff\\xfe.txt",
    }
    assert "carácter de control" in skipped["user/line\\x0abreak.txt"]
    assert "UTF-8" in skipped["user/bad-\\xff\\xfe.txt"]
    # skipped names still count as present, so no planner picks them as a destination
    assert len(result.entries) == 4
    assert all("\n" not in s.path for s in result.skipped)


def test_symlinks_hard_links_engine_temps_and_specials_are_skipped(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    touch(outside / "secret.txt")
    (root / "user/link.txt").symlink_to(outside / "secret.txt")
    (root / "user/linkdir").symlink_to(outside)
    (root / "user/dangling").symlink_to(root / "nowhere")
    touch(root / "user/one.txt")
    os.link(root / "user/one.txt", root / "user/two.txt")
    touch(root / "user/.alma-tmp-3-1")
    os.mkfifo(root / "user/fifo")
    touch(root / "user/plain.txt")
    result = scan(root)
    assert [f.name for f in result.files] == ["plain.txt"]
    skipped = reasons(result)
    for name in ("link.txt", "linkdir", "dangling"):
        assert "enlace simbólico" in skipped[f"user/{name}"]
    assert "enlaces duros" in skipped["user/one.txt"]
    assert "enlaces duros" in skipped["user/two.txt"]
    assert "en curso" in skipped["user/.alma-tmp-3-1"]
    assert "archivo normal" in skipped["user/fifo"]
    assert result.entries["linkdir"] == "symlink"


def test_files_newer_than_settle_are_left_out(root: Path) -> None:
    touch(root / "user/settled.txt", mtime=NOW - 121)
    touch(root / "user/fresh.txt", mtime=NOW - 5)
    touch(root / "user/future.txt", mtime=NOW + 86_400)
    result = scan(root, settle=120)
    assert [f.name for f in result.files] == ["settled.txt"]
    assert set(reasons(result)) == {"user/fresh.txt", "user/future.txt"}
    # with settle 0 only the future file is still "just changed"
    assert [f.name for f in scan(root, settle=0).files] == ["fresh.txt", "settled.txt"]


def test_a_folder_behind_a_symlink_is_refused(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    touch(outside / "x.txt")
    (root / "user/away").symlink_to(outside)
    with pytest.raises(RefusedError):
        scan(root, "user/away")
    with pytest.raises(FileNotFoundError):
        scan(root, "user/missing")


def test_peek_lists_only_the_chosen_subfolders(root: Path) -> None:
    touch(root / "user/images/old.jpg")
    touch(root / "user/misc/x.txt")
    result = scan(root, peek=lambda n: n == "images")
    assert dict(result.peeked) == {"images": frozenset({"old.jpg"})}


def test_peek_into_a_listed_folder_gives_what_scan_folder_gives(root: Path) -> None:
    touch(root / "user/images/old.jpg")
    touch(root / "user/misc/x.txt")
    touch(root / "user/a.jpg")
    (root / "user/link").symlink_to(root / "user/images")  # a link is never looked into

    def chosen(name: str) -> bool:
        return name in ("images", "link")

    with Tree(root) as tree:
        listed = scan_tree(tree, "user", now=NOW, settle_seconds=120).folders[0]
        assert listed.peeked == {}
        peeked = peek_into(tree, listed, chosen)
        assert peeked == scan_folder(tree, "user", now=NOW, settle_seconds=120, peek=chosen)
    assert dict(peeked.peeked) == {"images": frozenset({"old.jpg"})}


def tree_scan(
    root: Path,
    top: str = "user",
    exclude: tuple[str, ...] | list[str] = (),
    max_files: int = 20_000,
    max_depth: int = 8,
) -> TreeScan:
    with Tree(root) as tree:
        return scan_tree(
            tree,
            top,
            now=NOW,
            settle_seconds=120,
            exclude=exclude,
            max_files=max_files,
            max_depth=max_depth,
        )


def test_recursive_scan_skips_links_hidden_tool_and_excluded_folders(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    touch(outside / "o.txt")
    touch(root / "user/a.txt")
    touch(root / "user/p/b.txt")
    touch(root / "user/p/q/c.txt")
    touch(root / "user/.git/objects/x")
    touch(root / "user/node_modules/m.js")
    touch(root / "user/ro/d.txt")
    (root / "user/p/out").symlink_to(outside)
    result = tree_scan(root, exclude=["user/ro"])
    assert sorted(f.path for f in result.files) == ["user/a.txt", "user/p/b.txt", "user/p/q/c.txt"]
    assert [f.folder for f in result.folders] == ["user", "user/p", "user/p/q"]
    skipped = {s.path: s.reason for s in result.all_skipped()}
    assert "solo lectura" in skipped["user/ro"]
    assert "user/.git" in skipped and "user/node_modules" in skipped
    assert "enlace simbólico" in skipped["user/p/out"]
    assert not result.truncated


def test_recursive_scan_never_enters_alma_or_an_excluded_top(root: Path) -> None:
    touch(root / ".alma/trash/1/x.txt")
    assert tree_scan(root, ".alma").folders == ()
    assert tree_scan(root, "user", exclude=["user"]).folders == ()


def test_recursive_scan_bounds(root: Path) -> None:
    for i in range(10):
        touch(root / f"user/f{i}.txt")
        touch(root / f"user/d/f{i}.txt")
    touch(root / "user/d/e/g/deep.txt")
    bounded = tree_scan(root, max_files=15)
    assert len(bounded.files) == 15 and bounded.truncated
    shallow = tree_scan(root, max_depth=2)
    assert "user/d/e/g/deep.txt" not in [f.path for f in shallow.files]
    assert shallow.truncated


def test_with_sha256_hashes_through_fds_and_drops_changed_files(root: Path) -> None:
    touch(root / "user/a.txt", b"same")
    touch(root / "user/b.txt", b"changes")
    touch(root / "user/big.txt", b"z" * 100)
    files = list(scan(root).files)
    (root / "user/b.txt").write_bytes(b"changed!")  # after the scan
    with Tree(root) as tree:
        hashed, skipped = with_sha256(tree, files, max_bytes=50)
    assert [f.path for f in hashed] == ["user/a.txt"]
    assert hashed[0].identity.sha256 == hashlib.sha256(b"same").hexdigest()
    assert {s.path for s in skipped} == {"user/b.txt", "user/big.txt"}


def test_with_sha256_uses_the_callers_cache(root: Path) -> None:
    touch(root / "user/a.txt", b"same")
    files = list(scan(root).files)
    ident = files[0].identity
    cache = {(ident.dev, ident.ino, ident.size, ident.mtime_ns): "cached"}
    with Tree(root) as tree:
        hashed, _ = with_sha256(tree, files, cache=cache)
        assert hashed[0].identity.sha256 == "cached"  # not read again
        fresh: dict[tuple[int, int, int, int], str] = {}
        with_sha256(tree, files, cache=fresh)
    assert list(fresh.values()) == [hashlib.sha256(b"same").hexdigest()]


@pytest.mark.parametrize(
    "name",
    ["", ".", "..", "a/b", "a\x00b", "tab\there", "del\x7f", "x" * 256, "ñ" * 128, "\udcff.jpg"],
)
def test_check_name_refuses_what_it_must_whatever_the_path_taken(name: str) -> None:
    from actions.safefs import check_name

    with pytest.raises(RefusedError):
        check_name(name)


@pytest.mark.parametrize(
    "name", ["a.jpg", "x" * 255, "ñ" * 127, "año 2024 (copia).pdf", "~$a.docx"]
)
def test_check_name_accepts_plain_and_spanish_names(name: str) -> None:
    from actions.safefs import check_name

    check_name(name)


def test_find_named_finds_what_a_scan_lists_without_a_stat_per_entry(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Looking for a failing job's script by name (agent.detectors.diagnose) must not stat every
    # entry of the zone: on a large root that would be a visible part of a cold analysis.
    outside = tmp_path_factory.mktemp("outside")
    touch(outside / "backup.sh")
    touch(root / "user/p/q/backup.sh")  # deeper: the shallower one of the same name is found
    touch(root / "user/z/backup.sh")
    touch(root / "user/.git/run.py")  # hidden and tools' folders are not entered
    touch(root / "user/node_modules/run.py")
    (root / "user/link.py").symlink_to(outside / "backup.sh")  # a link is not a file
    (root / "user/p/out").symlink_to(outside)  # nor is a folder behind a link entered
    touch(root / "user/a/b/c/d/e/f/g/h/i/deep.sh")  # deeper than the bound
    os.mkfifo(root / "user/fifo.sh")
    names = ["backup.sh", "run.py", "link.py", "deep.sh", "fifo.sh", "nada.sh"]
    with Tree(root) as tree:
        found = find_named(tree, "user", names)
        listed = {f.path for f in scan_tree(tree, "user", now=NOW, settle_seconds=None).files}
    assert found == {"backup.sh": "user/z/backup.sh"}
    assert found["backup.sh"] in listed
    with Tree(root) as tree, pytest.raises(FileNotFoundError):
        find_named(tree, "nowhere", names)
