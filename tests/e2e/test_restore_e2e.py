"""Restores and snapshots attacked with the real restic under the real daemon: links planted
where a restore stages, two roots on one repository, names that look like patterns, a name
that is not UTF-8, a snapshot named like an option; and what a person reads of them."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from tests.e2e.test_backup_e2e import EXIT_USAGE, restore, set_up_repo, tree
from tests.support.daemon import DaemonRoot

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not shutil.which("restic"), reason="no restic")]

EXIT_NOT_FOUND = 6


def test_links_planted_where_a_restore_stages_never_lead_it_into_the_live_root(
    alma: DaemonRoot,
) -> None:
    nota = alma.write("user/nota.txt", b"hola\n")
    alma.start()
    set_up_repo(alma)
    alma.ok("backup", "now")
    nota.write_bytes(b"LIVE-NEWER\n")
    rs = alma.base / "rs"
    rs.mkdir()
    # ln -s ROOT rs/.stagetest.alma-restore-{15..30}, and the ids below 15 too: whatever
    # id this fresh journal gives the restore, a link waits under the name it would stage in.
    planted = [rs / f".stagetest.alma-restore-{n}" for n in range(1, 31)]
    for link in planted:
        link.symlink_to(alma.root)
    to = rs / "stagetest"
    done = restore(alma, "latest", to, "user/nota.txt").ok().data
    assert done["status"] == "done", done
    assert nota.read_bytes() == b"LIVE-NEWER\n"  # the live file untouched
    assert to.is_dir() and not to.is_symlink()
    assert (to / "user/nota.txt").read_bytes() == b"hola\n"
    assert sorted(tree(to, "user")) == ["user/nota.txt"]
    assert all(link.is_symlink() and link.resolve() == alma.root for link in planted)
    assert sorted(p.name for p in rs.iterdir()) == sorted([to.name, *(p.name for p in planted)])

    # A folder the person names through a link of theirs (a disk mounted elsewhere, say) is
    # theirs to name: the restore lands in the folder the link leads to.
    (alma.base / "via").symlink_to(rs)
    restore(alma, "latest", alma.base / "via" / "tercera", "user/nota.txt").ok()
    assert (rs / "tercera/user/nota.txt").read_bytes() == b"hola\n"

    # What a person reads: the folder named in the restore's sentence and in its undo's.
    again = rs / "otra"
    said = alma.ctl(
        "backup", "restore", "latest", "user/nota.txt", "--to", str(again), json_out=False
    )
    assert said.rc == 0 and f"new folder {again} " in said.stdout, said
    undone = alma.ctl("undo", json_out=False)
    assert undone.rc == 0 and f"removed the folder {again}," in undone.stdout, undone
    assert not again.exists() and to.is_dir()
    alma.stop()


def test_a_link_planted_inside_the_stage_while_restic_runs_leads_nowhere(
    alma: DaemonRoot,
) -> None:
    # The attacker watches the folder, and the moment a stage appears plants user -> ROOT/user
    # in it, before restic makes that folder: restic, confined to the stage, cannot write
    # through it, and the restore fails with a sentence instead.
    nota = alma.write("user/nota.txt", b"hola\n")
    alma.start()
    set_up_repo(alma)
    alma.ok("backup", "now")
    nota.write_bytes(b"LIVE-NEWER\n")
    rs = alma.base / "rs"
    rs.mkdir()
    planted: list[Path] = []
    stop = threading.Event()

    def attack() -> None:
        while not stop.is_set() and not planted:
            for entry in os.scandir(rs):
                if ".alma-restore-" in entry.name:
                    with contextlib.suppress(OSError):
                        (Path(entry.path) / "user").symlink_to(alma.root / "user")
                        planted.append(Path(entry.path))

    attacker = threading.Thread(target=attack, daemon=True)
    attacker.start()
    try:
        done = restore(alma, "latest", rs / "stagetest", "user/nota.txt")
    finally:
        stop.set()
        attacker.join(timeout=10)
    assert nota.read_bytes() == b"LIVE-NEWER\n"  # the live file untouched
    if planted:
        assert done.rc != 0 and "could not write" in done.stderr, done
        assert "nothing was restored" in done.stderr and "permission denied" in done.stderr
        assert "Traceback" not in done.stderr
        assert not (rs / "stagetest").exists() and not planted[0].exists()
        assert alma.ok("history")[0]["status"] == "rolled_back"
    else:  # restic made user/ first: the restore is as asked
        assert (rs / "stagetest/user/nota.txt").read_bytes() == b"hola\n", done
    alma.stop()


def test_forget_in_one_root_never_touches_the_history_of_another_on_the_same_repository(
    alma: DaemonRoot,
) -> None:
    alma.write("user/nota.txt", b"de la raiz original\n")
    alma.start()
    target = set_up_repo(alma)
    mine = [alma.ok("backup", "now")["snapshot"] for _ in range(3)]
    alma.stop()

    # A whole restore elsewhere is a second root that keeps the repository setting.
    copy = DaemonRoot(Path(tempfile.mkdtemp(prefix="almacopy-", dir="/tmp")))
    try:
        alma.start()
        restore(alma, mine[-1], copy.root).ok()
        alma.stop()
        copy.start()
        theirs = copy.ok("backup", "now")["snapshot"]
        forgot = copy.ok("backup", "forget")
        assert forgot["removed"] == [], forgot  # its one snapshot is kept, the others not its
        # The copy sees the history it came from, and its own.
        assert [s["id"] for s in copy.ok("backup", "list")] == [*mine, theirs]
        copy.stop()

        alma.start()
        assert [s["id"] for s in alma.ok("backup", "list")] == mine  # all three, not the copy's
        other = restore(alma, theirs, alma.base / "ajeno", "user/nota.txt")
        assert other.rc == EXIT_NOT_FOUND and "no such snapshot of this root" in other.stderr
        assert not (alma.base / "ajeno").exists()
        # Its own retention keeps the newest of the day, and never the copy's snapshot away.
        assert sorted(alma.ok("backup", "forget")["removed"]) == sorted(mine[:2])
        assert [s["id"] for s in alma.ok("backup", "list")] == [mine[-1]]
        alma.stop()
        copy.start()
        assert [s["id"] for s in copy.ok("backup", "list")] == [mine[-1], theirs]
        copy.stop()

        # A second root of its own, set up on the same repository: nothing of the first.
        other_root = DaemonRoot(Path(tempfile.mkdtemp(prefix="almaotra-", dir="/tmp"))).init()
        try:
            other_root.start()
            secret = alma.base / "pw"
            opened = other_root.ok("backup", "init", str(target), "--password-file", str(secret))
            assert opened["created"] is False
            assert other_root.ok("backup", "list") == []
            own = other_root.ok("backup", "now")["snapshot"]
            assert other_root.ok("backup", "forget")["removed"] == []
            assert [s["id"] for s in other_root.ok("backup", "list")] == [own]
            # The other roots' snapshots are there for a root lost with its computer: listed
            # with --all, restored with --any-root, never by accident.
            every = other_root.ok("backup", "list", "--all")
            assert [(s["id"], s["mine"]) for s in every] == [
                (mine[-1], False),
                (theirs, False),
                (own, True),
            ], every
            assert every[0]["root"] == str(alma.root) and every[1]["root"] == str(copy.root)
            lost = other_root.base / "perdida"
            refused = restore(other_root, mine[-1], lost, "user/nota.txt")
            assert refused.rc == EXIT_NOT_FOUND and "--any-root" in refused.stderr, refused
            other_root.ok(
                "backup", "restore", mine[-1], "user/nota.txt", "--to", str(lost), "--any-root"
            )
            assert (lost / "user/nota.txt").read_bytes() == b"de la raiz original\n"
            other_root.stop()
        finally:
            other_root.close()
        alma.start()
        assert [s["id"] for s in alma.ok("backup", "list")] == [mine[-1]]
        alma.stop()
    finally:
        copy.close()


#: Names a pattern would read otherwise, and the file a pattern would take with them.
ODD_NAMES = ("a[1].txt", "*", "x?y", "b\\c", "[", "a]b", "**")


def test_a_restore_path_is_a_name_whatever_characters_it_holds(alma: DaemonRoot) -> None:
    for i, name in enumerate(ODD_NAMES):
        alma.write(f"user/{name}", f"file {i}\n".encode())
    for name in ("a1.txt", "xzy", "b", "otro.txt"):
        alma.write(f"user/{name}", b"a file a pattern would also take\n")
    not_utf8 = "user/caf\udce9.txt"  # b"caf\xe9": a name a Latin-1 system wrote
    (alma.root / not_utf8).write_bytes(b"latin-1\n")
    alma.start()
    set_up_repo(alma)
    alma.ok("backup", "now")
    for i, name in enumerate(ODD_NAMES):
        to = alma.base / f"r{i}"
        done = restore(alma, "latest", to, f"user/{name}").ok().data
        assert done["status"] == "done", (name, done)
        assert sorted(tree(to, "user")) == [f"user/{name}"], name
        assert (to / "user" / name).read_bytes() == f"file {i}\n".encode()
    missing = restore(alma, "latest", alma.base / "nada", "user/a?.txt")
    assert missing.rc == EXIT_NOT_FOUND and "has none of user/a?.txt" in missing.stderr, missing

    # A PATH that is not UTF-8 travels as its bytes and comes back byte-exact.
    to = alma.base / "latin"
    done = restore(alma, "latest", to, not_utf8).ok().data
    assert done["status"] == "done", done
    assert os.listdir(os.fsencode(to / "user")) == [b"caf\xe9.txt"]
    assert (to / not_utf8).read_bytes() == b"latin-1\n"
    # A DIR that is not UTF-8 cannot travel as text: one sentence, no traceback.
    odd_to = alma.base / "caf\udce9"
    said = restore(alma, "latest", odd_to, "user/[")
    assert said.rc == EXIT_USAGE and "--to" in said.stderr and "not UTF-8" in said.stderr, said
    assert "Traceback" not in said.stderr and not odd_to.exists()

    # A snapshot named like an option never reaches restic as one.
    for bad in ("--help", "-h", "latest;x"):
        refused = alma.ctl("backup", "restore", "--to", str(alma.base / "h"), "--", bad, "user/[")
        assert refused.rc == EXIT_USAGE and "is not a snapshot" in refused.stderr, refused
    assert not (alma.base / "h").exists()
    alma.stop()


def test_backup_list_reads_in_local_time_and_sizes_in_the_persons_language(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    alma.write("user/grande.bin", os.urandom(1_500_000))
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.setenv("TZ", "America/Bogota")  # -05:00 all year: restic writes the offset
    alma.start()
    set_up_repo(alma)
    taken = alma.ok("backup", "now")
    [listed] = alma.ok("backup", "list")  # the JSON keeps restic's time and the bytes
    assert listed["bytes"] == taken["bytes"] and "T" in listed["time"], listed
    local = listed["time"][:16].replace("T", " ")
    mb = f"{taken['bytes'] / 1e6:.1f}"  # the file and the root's own
    shown = alma.ctl("backup", "list", json_out=False).ok().stdout
    head, row = shown.splitlines()[:2]
    assert head.split() == ["ID", "TIME", "FILES", "SIZE"], shown
    assert f"  {local}  " in row and row.endswith(f" {mb} MB"), shown
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    spanish = alma.ctl("backup", "list", json_out=False).ok().stdout
    head, row = spanish.splitlines()[:2]
    assert head.split() == ["ID", "HORA", "ARCHIVOS", "TAMAÑO"], spanish
    assert f"  {local}  " in row and row.endswith(f" {mb.replace('.', ',')} MB"), spanish
    alma.stop()
