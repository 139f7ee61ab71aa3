"""Tree.verify_watched: the folders an op acts in are still the ones walked, checked by stats
the first time and then by the kernel's word (inotify) that none of them moved since. Every
case that the stats catch must still be caught once the folders are watched: a folder moved
into system/, swapped for a symlink, an ancestor moved; and without inotify the stats do it
all, every time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actions import inotify, tree
from actions.tree import Tree, prefixes
from policies.errors import ConflictError, RefusedError

KEYS = prefixes([("user", "inbox", "fotos"), ("user", "inbox")])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "user" / "inbox" / "fotos").mkdir(parents=True)
    (tmp_path / "system").mkdir()
    return tmp_path


def _stats_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = tree.still_there

    def counting(checks: tuple[tuple[int, str, tuple[int, int]], ...]) -> bool:
        calls[0] += 1
        return real(checks)

    monkeypatch.setattr(tree, "still_there", counting)
    return calls


def test_once_watched_nothing_is_looked_up_again_until_something_moves(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _stats_counted(monkeypatch)
    with Tree(root) as t:
        token = t.verify_watched(KEYS, None)
        token = t.verify_watched(KEYS, token)  # the fds were walked by the first: now armed
        before = calls[0]
        for _ in range(100):
            assert t.verify_watched(KEYS, token) == token
        assert calls[0] == before


@pytest.mark.parametrize("moved", [("user", "inbox", "fotos"), ("user", "inbox"), ("user",)])
def test_a_watched_folder_moved_into_system_is_caught(root: Path, moved: tuple[str, ...]) -> None:
    with Tree(root) as t:
        token = t.verify_watched(KEYS, None)
        token = t.verify_watched(KEYS, token)
        path = root.joinpath(*moved)
        path.rename(root / "system" / path.name)
        path.mkdir(parents=True)
        with pytest.raises(ConflictError):
            t.verify_watched(KEYS, token)


def test_a_watched_folder_swapped_for_a_symlink_is_refused(root: Path) -> None:
    with Tree(root) as t:
        token = t.verify_watched(KEYS, None)
        token = t.verify_watched(KEYS, token)
        fotos = root / "user" / "inbox" / "fotos"
        fotos.rename(root / "user" / "inbox" / "fotos.orig")
        fotos.symlink_to(root / "system")
        with pytest.raises(RefusedError):
            t.verify_watched(KEYS, token)


def test_a_move_undone_before_the_next_op_is_still_looked_at(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder moved away and back: the stats then find it where it was, so the op may go
    on; what matters is that they were asked (the watch alone cannot know it came back)."""
    calls = _stats_counted(monkeypatch)
    with Tree(root) as t:
        token = t.verify_watched(KEYS, None)
        token = t.verify_watched(KEYS, token)
        before = calls[0]
        inbox = root / "user" / "inbox"
        inbox.rename(root / "user" / "tmp")
        (root / "user" / "tmp").rename(inbox)
        token = t.verify_watched(KEYS, token)
        assert calls[0] == before + 1
        assert t.verify_watched(KEYS, token) == token
        assert calls[0] == before + 1


def test_without_inotify_every_call_looks_the_folders_up(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable() -> int:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(inotify, "init", unavailable)
    calls = _stats_counted(monkeypatch)
    with Tree(root) as t:
        token = t.verify_watched(KEYS, None)  # walks them: nothing to look up yet
        for _ in range(5):
            token = t.verify_watched(KEYS, token)
        assert calls[0] == 5
        inbox = root / "user" / "inbox"
        inbox.rename(root / "system" / "inbox")
        inbox.mkdir()
        with pytest.raises(ConflictError):
            t.verify_watched(KEYS, token)


def test_a_watch_refused_by_the_kernel_falls_back_to_the_stats(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No watch left (fs.inotify.max_user_watches spent by the daemon's own watcher)."""

    def no_watch(fd: int, path: bytes, mask: int) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(inotify, "add_watch", no_watch)
    calls = _stats_counted(monkeypatch)
    with Tree(root) as t:
        token = t.verify_watched(KEYS, None)
        token = t.verify_watched(KEYS, token)
        token = t.verify_watched(KEYS, token)
        assert calls[0] == 2
        inbox = root / "user" / "inbox"
        inbox.rename(root / "system" / "inbox")
        inbox.mkdir()
        with pytest.raises(ConflictError):
            t.verify_watched(KEYS, token)


def test_a_token_from_another_generation_of_fds_is_not_trusted(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _stats_counted(monkeypatch)
    with Tree(root) as t:
        token = t.verify_watched(KEYS, None)
        token = t.verify_watched(KEYS, token)
        (root / "user" / "otra").mkdir()
        t.dir(("user", "otra"))  # a new fd: the generation moves on
        before = calls[0]
        token = t.verify_watched(KEYS, token)
        assert calls[0] == before + 1
        assert t.verify_watched(KEYS, token) == token
        assert calls[0] == before + 1


def test_the_watch_is_closed_with_the_tree(root: Path) -> None:
    t = Tree(root)
    token = t.verify_watched(KEYS, None)
    t.verify_watched(KEYS, token)
    before = len(os.listdir("/proc/self/fd"))
    t.close()
    assert len(os.listdir("/proc/self/fd")) == before - (1 + len(KEYS) + 1)  # root, KEYS, watch


def test_a_folder_given_a_forgotten_folders_inode_number_is_watched_itself(root: Path) -> None:
    """ext4 gives a freed inode number to the next folder made. A folder the plan removed (its
    fd closed: Tree.forget) must not leave its (dev, ino) counted as watched, or the next folder
    to get that number would be trusted with no watch on it, and its move into system/ missed."""
    with Tree(root) as t:
        gone = root / "user" / "vieja"
        gone.mkdir()
        gone_keys = prefixes([("user", "vieja")])
        t.verify_watched(gone_keys, t.verify_watched(gone_keys, None))
        number = gone.stat().st_ino
        gone.rmdir()
        t.forget("user/vieja")
        for i in range(20):
            fresh = root / "user" / f"nueva{i}"
            fresh.mkdir()
            if fresh.stat().st_ino == number:
                break
        else:
            pytest.skip("this filesystem gave no freed inode number again (tmpfs never does)")
        keys = prefixes([("user", fresh.name)])
        token = t.verify_watched(keys, t.verify_watched(keys, None))
        fresh.rename(root / "system" / fresh.name)
        fresh.mkdir()
        with pytest.raises(ConflictError):
            t.verify_watched(keys, token)
