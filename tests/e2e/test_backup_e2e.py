"""Backups with the real restic under the real daemon.

Each test drives ``alma-ctl backup`` on a temp root whose repository lives beside it (the
"portable disk" is a folder of the test's base, outside the root), with its password in a
file of the test's, never in the root.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import ALMA_CTL, DaemonRoot, find, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not shutil.which("restic"), reason="no restic")]

EXIT_USAGE, EXIT_CONFLICT = 2, 5
NOT_UTF8 = "user/caf\udce9-latin1.txt"  # a name written by a Latin-1 system: b"caf\xe9"


def set_up_repo(d: DaemonRoot, password: bytes = b"correct horse battery\n") -> Path:
    """``backup init`` of a repository on "the disk" (base/disk), password in base/pw."""
    secret = d.base / "pw"
    secret.write_bytes(password)
    secret.chmod(0o600)
    target = d.base / "disk" / "alma-backup"
    target.parent.mkdir(exist_ok=True)
    done = d.ok("backup", "init", str(target), "--password-file", str(secret))
    assert done["created"] is True and done["target"] == str(target), done
    return target


def tree(root: Path, *folders: str) -> dict[str, str]:
    """Every file under ``folders`` of ``root``: its root-relative name and its sha256."""
    out: dict[str, str] = {}
    for folder in folders:
        for dirpath, _dirs, files in os.walk(root / folder):
            for name in files:
                path = Path(dirpath) / name
                out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def restic_pids(target: Path) -> list[int]:
    """The restic processes working on ``target`` (any user's, read from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"restic") and os.fsencode(target) in argv:
            pids.append(int(entry.name))
    return pids


def restore(d: DaemonRoot, snapshot: str, to: Path, *paths: str) -> Any:
    return d.ctl("backup", "restore", snapshot, *paths, "--to", str(to))


def test_a_damaged_file_comes_back_byte_exact_and_a_restore_never_overwrites(
    alma: DaemonRoot,
) -> None:
    plan = alma.write("user/notas/plan.txt", "Plan de la mudanza: cajas, ñandú, café.\n".encode())
    alma.write("user/fotos/playa.jpg", os.urandom(300_000))
    odd = alma.root / os.fsencode(NOT_UTF8).decode("utf-8", "surrogateescape")
    odd.write_bytes(b"bytes of a name that is not UTF-8\n")
    original = plan.read_bytes()
    alma.start()
    target = set_up_repo(alma)
    taken = alma.ok("backup", "now")
    assert taken["kind"] == "backup" and taken["status"] == "done", taken
    assert taken["files"] >= 3 and taken["bytes"] >= 300_000, taken
    listed = alma.ok("backup", "list")
    assert [s["id"] for s in listed] == [taken["snapshot"]], listed
    assert set(listed[0]) == {"id", "time", "files", "bytes"}
    assert listed[0]["files"] == taken["files"] and listed[0]["bytes"] == taken["bytes"]

    plan.write_bytes(b"\x00" * 17)  # damaged
    out = alma.base / "rescate"
    back = restore(alma, taken["snapshot"], out, "user/notas/plan.txt").ok().data
    assert back["kind"] == "backup_restore" and back["status"] == "done", back
    assert (out / "user/notas/plan.txt").read_bytes() == original
    assert sorted(tree(out, "user")) == ["user/notas/plan.txt"]  # that file, nothing else
    assert plan.read_bytes() == b"\x00" * 17  # the live root is never written

    # The name that is not UTF-8 comes back with its very bytes.
    whole = alma.base / "entero"
    restore(alma, taken["snapshot"], whole).ok()
    assert (whole / os.fsencode(NOT_UTF8).decode("utf-8", "surrogateescape")).read_bytes() == (
        b"bytes of a name that is not UTF-8\n"
    )

    # Never over an existing file, never into the live root: one sentence, nothing written.
    again = restore(alma, taken["snapshot"], out, "user/notas/plan.txt")
    assert again.rc == EXIT_CONFLICT and "never writes over" in again.stderr, again
    inside = restore(alma, taken["snapshot"], alma.root / "user" / "r", "user/notas/plan.txt")
    assert inside.rc == EXIT_USAGE and "live ALMA root" in inside.stderr, inside
    assert not (alma.root / "user" / "r").exists()

    # Journaled: history and acciones.md; the restore is undone (its folder removed) while
    # nothing in it changed, and a backup is not undone (a bare undo skips it).
    kinds = [a["kind"] for a in alma.ok("history")]
    assert kinds[:3] == ["backup_restore", "backup_restore", "backup"], kinds
    audit = (alma.root / "logs/alma/acciones.md").read_text(encoding="utf-8")
    assert f"backup {taken['snapshot']}" in audit and "restored into" in audit, audit
    assert alma.ok("undo")["undoes"] == alma.ok("history")[1]["id"]  # the newest restore
    assert not whole.exists()
    (out / "user/notas/mine.txt").write_text("written after the restore\n")
    changed = alma.ctl("undo")
    assert changed.rc == EXIT_CONFLICT and "nothing was removed" in changed.stderr, changed
    assert (out / "user/notas/plan.txt").read_bytes() == original
    nothing = alma.ctl("undo", str(taken["id"]))
    assert nothing.rc != 0 and "nothing to undo" in nothing.stderr, nothing

    # The retention (7 daily, 4 weekly, 12 monthly) keeps one snapshot of a day: the newest.
    newer = alma.ok("backup", "now")["snapshot"]
    forgot = alma.ok("backup", "forget")
    assert forgot["kind"] == "backup_forget" and forgot["removed"] == [taken["snapshot"]]
    assert [s["id"] for s in alma.ok("backup", "list")] == [newer]
    assert alma.ok("backup", "check")["ok"] is True
    audit = (alma.root / "logs/alma/acciones.md").read_text(encoding="utf-8")
    assert f"forgotten in {target} by the retention: {taken['snapshot']}" in audit
    alma.stop()


def _signature(d: DaemonRoot) -> dict[str, Any]:
    """What a person sees of a root: memory search, history, suggestions."""
    hits = d.ok("memory", "search", "mudanza a Valencia")
    history = [a for a in d.ok("history") if not a["kind"].startswith("backup")]
    return {
        "search": [(h["id"], h["content"]) for h in hits],
        "history": history,
        "suggestions": d.suggestions("--all"),
        "memories": d.ok("memory", "stats")["total"],
    }


def _memory_ready(d: DaemonRoot) -> None:
    d.wait_for(lambda: d.ok("status")["memory"] == "ready", timeout=180, what="memory ready")


def test_a_full_restore_is_a_root_on_which_the_daemon_answers_as_on_the_original(
    alma_mem: DaemonRoot,
) -> None:
    alma = alma_mem
    alma.messy_folder("user/descargas", 30)
    alma.start()
    _memory_ready(alma)
    for text in (
        "La mudanza a Valencia es el 3 de marzo; las llaves las tiene Marta.",
        "El médico de cabecera cambió la consulta al jueves.",
        "Para la mudanza hay que pedir cajas en la tienda del barrio.",
    ):
        alma.ok("memory", "add", text)
    organize = alma.wait_suggestion(kind="organize", target="user/descargas")
    alma.ok("suggestions", "accept", str(organize["id"]))
    alma.analyze()
    before = _signature(alma)
    assert before["search"] and before["history"], before
    set_up_repo(alma)
    files_before = tree(alma.root, "user", "logs", "system")  # acciones.md gets the backup after
    snapshot = alma.ok("backup", "now")["snapshot"]
    alma.stop()

    copy = DaemonRoot(Path(tempfile.mkdtemp(prefix="almarest-", dir="/tmp")), memory=True)
    try:
        alma.start()
        restore(alma, snapshot, copy.root).ok()
        alma.stop()
        assert tree(copy.root, "user", "logs", "system") == files_before
        assert not (copy.root / ".alma/trash").exists() or not any(
            (copy.root / ".alma/trash").iterdir()
        )
        copy.start()
        _memory_ready(copy)
        after = _signature(copy)
        assert after == before
        # As on another computer: the same repository and password open it from the copy,
        # whose own journal never saw the snapshot (its size comes from restic then).
        target, secret = alma.base / "disk" / "alma-backup", alma.base / "pw"
        opened = copy.ok("backup", "init", str(target), "--password-file", str(secret))
        assert opened["created"] is False
        [listed] = copy.ok("backup", "list")
        assert listed["id"] == snapshot and listed["files"] > 30 and listed["bytes"] > 0
        copy.stop()
    finally:
        copy.close()


def test_a_backup_taken_while_memories_are_added_and_an_action_runs_restores_whole(
    alma_mem: DaemonRoot,
) -> None:
    alma = alma_mem
    moved = alma.messy_folder("user/papeles", 600)
    alma.policy(thresholds__approval_files=1000)
    alma.start()
    _memory_ready(alma)
    set_up_repo(alma)
    organize = alma.wait_suggestion(kind="organize", target="user/papeles")
    before = {p.name for p in moved}

    stop = threading.Event()
    added: list[str] = []

    def add_memories() -> None:
        i = 0
        while not stop.is_set():
            res = alma.ctl("memory", "add", f"Recuerdo número {i} sobre la huerta y los tomates.")
            if res.rc == 0:
                added.append(res.data["id"])
            i += 1

    adder = threading.Thread(target=add_memories)
    adder.start()
    wait_for(lambda: len(added) >= 2, timeout=120, what="memories being added")
    accept = subprocess.Popen(
        [
            ALMA_CTL,
            "--root",
            str(alma.root),
            "--json",
            "suggestions",
            "accept",
            str(organize["id"]),
        ],
        env=alma.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        snapshot = alma.ok("backup", "now")["snapshot"]
    finally:
        stop.set()
        adder.join()
        accept.wait(timeout=600)
    assert accept.returncode == 0 and added
    alma.stop()

    out = alma.base / "restaurado"
    alma.start()
    restore(alma, snapshot, out).ok()
    alma.stop()
    data = out / ".alma"
    for db in data.rglob("*"):
        if db.is_file() and db.read_bytes()[:16] == b"SQLite format 3\x00":
            with sqlite3.connect(db) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",), db
    with sqlite3.connect(data / "journal/journal.db") as conn:
        statuses = [r[0] for r in conn.execute("SELECT status FROM actions")]
    assert "running" not in statuses, statuses  # no action was halfway when it was taken
    # The organize action is wholly in the snapshot or not at all.
    loose = {p.name for p in (out / "user/papeles").iterdir() if p.is_file()}
    assert loose in (before, set()), len(loose)
    assert ("done" in statuses) == (loose == set())

    (alma.base / "copia").mkdir()
    copy = DaemonRoot(alma.base / "copia", memory=True)
    shutil.move(str(out), copy.root)
    try:
        copy.start()
        _memory_ready(copy)
        assert copy.ok("memory", "search", "huerta y tomates")
        assert all(a["status"] != "running" for a in copy.ok("history"))
        copy.stop()
    finally:
        copy.close()


def test_sigkill_of_restic_and_of_the_daemon_mid_backup_then_a_backup_and_check_pass(
    alma: DaemonRoot,
) -> None:
    for i in range(40):  # large enough that restic is seen working
        alma.write(f"user/video/clip{i:03d}.bin", os.urandom(2_000_000))
    alma.start()
    target = set_up_repo(alma)

    def backup_in_background() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [ALMA_CTL, "--root", str(alma.root), "backup", "now"],
            env=alma.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def packs() -> int:
        return sum(1 for p in (target / "data").rglob("*") if p.is_file())

    def writing(since: int) -> list[int] | None:
        """restic's pids once it holds its lock and wrote data past ``since`` packs."""
        pids = restic_pids(target)
        locked = any((target / "locks").iterdir())
        return pids if pids and locked and packs() > since else None

    packs_before = packs()
    running = backup_in_background()
    pids = wait_for(lambda: writing(packs_before), timeout=60, what="restic writing", interval=0.01)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    _out, err = running.communicate(timeout=120)
    assert running.returncode == 1 and "restic" in err, err
    failed = alma.ok("history")[0]
    assert failed["kind"] == "backup" and failed["status"] == "failed", failed

    packs_killed = packs()
    running = backup_in_background()
    wait_for(lambda: writing(packs_killed), timeout=60, what="restic writing again", interval=0.01)
    alma.kill()
    running.communicate(timeout=120)
    wait_for(lambda: not restic_pids(target), timeout=30, what="restic to die with the daemon")
    assert list((target / "locks").iterdir())  # the killed runs left their locks behind
    assert packs() > packs_killed > packs_before  # both were killed halfway through

    alma.start()
    taken = alma.ok("backup", "now")
    assert taken["status"] == "done", taken
    assert alma.ok("backup", "check")["ok"] is True
    assert [s["id"] for s in alma.ok("backup", "list")] == [taken["snapshot"]]
    assert not (alma.root / ".alma/backup/stage").exists()
    alma.stop()


def test_wrong_password_a_link_an_absent_disk_each_one_sentence_and_a_suggestion(
    alma: DaemonRoot,
) -> None:
    alma.start()
    target = set_up_repo(alma)

    wrong = alma.base / "otro-pw"
    wrong.write_text("not the password\n")
    wrong.chmod(0o600)
    res = alma.ctl("backup", "init", str(target), "--password-file", str(wrong))
    assert res.rc == EXIT_USAGE and "does not open" in res.stderr, res

    link = alma.base / "enlace"
    link.symlink_to(target.parent)
    res = alma.ctl("backup", "init", str(link), "--password-file", str(wrong))
    assert res.rc == EXIT_USAGE and "symbolic link" in res.stderr, res

    inside = alma.ctl(
        "backup", "init", str(alma.root / "user" / "b"), "--password-file", str(wrong)
    )
    assert inside.rc == EXIT_USAGE and "inside the ALMA root" in inside.stderr, inside

    alma.ok("backup", "now")
    unplugged = target.parent.with_name("disk-unplugged")
    target.parent.rename(unplugged)
    res = alma.ctl("backup", "now")
    assert res.rc == 1 and "is not there (is the disk plugged in?)" in res.stderr, res
    alma.analyze()
    failing = alma.wait_suggestion(kind="backup")
    assert "is not there" in failing["reason"] and "alma-ctl backup now" in failing["reason"]
    # Plugged in again, a good backup: the suggestion goes away by itself.
    unplugged.rename(target.parent)
    alma.ok("backup", "now")
    alma.analyze()
    assert find(alma.suggestions("--all"), id=failing["id"])[0]["status"] == "expired"
    alma.stop()


def _mount_small_disk(where: Path, size: str = "4m") -> bool:
    """A small tmpfs (4 MiB) at ``where`` (root only); False when this machine does not allow
    it."""
    where.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def test_a_full_backup_disk_is_one_sentence_and_the_snapshots_before_stay(
    alma: DaemonRoot,
) -> None:
    disk = alma.base / "small-disk"
    if not _mount_small_disk(disk):
        pytest.skip("a small filesystem can only be mounted as root")
    try:
        alma.write("user/notas/a.txt", b"una nota\n")
        alma.start()
        secret = alma.base / "pw"
        secret.write_text("clave\n")
        secret.chmod(0o600)
        alma.ok("backup", "init", str(disk / "repo"), "--password-file", str(secret))
        first = alma.ok("backup", "now")["snapshot"]
        alma.write("user/video/grande.bin", os.urandom(12_000_000))
        full = alma.ctl("backup", "now")
        assert full.rc == 1 and "is full" in full.stderr and "backup forget" in full.stderr, full
        assert full.stderr.count("\n") == 1, full.stderr  # one sentence
        assert [s["id"] for s in alma.ok("backup", "list")] == [first]
        assert (alma.root / "user/video/grande.bin").stat().st_size == 12_000_000
        alma.stop()
    finally:
        if alma.proc is not None:
            alma.kill()
        subprocess.run(["umount", str(disk)], check=False)


def _data_bytes(target: Path) -> int:
    """The bytes of the repository's packs."""
    return sum(p.stat().st_size for p in (target / "data").rglob("*") if p.is_file())


def test_a_full_disk_is_recovered_with_alma_s_advice(alma: DaemonRoot) -> None:
    disk = alma.base / "disk20"
    if not _mount_small_disk(disk, size="20m"):
        pytest.skip("a small filesystem can only be mounted as root")
    try:
        alma.write("user/notas/a.txt", b"una nota\n")
        alma.start()
        secret = alma.base / "pw"
        secret.write_text("clave\n")
        secret.chmod(0o600)
        target = disk / "repo"
        alma.ok("backup", "init", str(target), "--password-file", str(secret))
        first = alma.ok("backup", "now")["snapshot"]
        alma.write("user/video/grande.bin", os.urandom(30_000_000))
        full = alma.ctl("backup", "now")
        assert full.rc == 1 and "`alma-ctl backup forget` frees" in full.stderr, full
        # What the failed run wrote and no snapshot uses is gone at once.
        assert _data_bytes(target) < 1_000_000, _data_bytes(target)

        # Packs left by a run ALMA did not see end: restic itself, stopped after it wrote packs and
        # before it wrote its snapshot. That state is made exactly (a whole run, then its snapshot
        # file removed), since how restic stops on a full disk depends on the machine: it can
        # leave no whole pack, or wait on retries for minutes.
        outside = alma.base / "fuera"
        outside.mkdir()
        (outside / "grande.bin").write_bytes(os.urandom(8_000_000))
        before = set((target / "snapshots").iterdir())
        env = {**os.environ, "RESTIC_PASSWORD_FILE": str(secret)}
        run = [str(shutil.which("restic")), "-r", str(target), "--no-cache", "backup", "fuera"]
        assert subprocess.run(run, cwd=alma.base, env=env, capture_output=True).returncode == 0
        (stray,) = set((target / "snapshots").iterdir()) - before
        stray.unlink()
        assert _data_bytes(target) >= 8_000_000, _data_bytes(target)
        forgot = alma.ok("backup", "forget")
        assert forgot["removed"] == [] and _data_bytes(target) < 1_000_000, forgot

        # With the space back, a backup that fits is taken.
        (alma.root / "user/video/grande.bin").unlink()
        alma.write("user/video/medio.bin", os.urandom(6_000_000))
        taken = alma.ok("backup", "now")
        assert taken["status"] == "done", taken
        assert [s["id"] for s in alma.ok("backup", "list")] == [first, taken["snapshot"]]
        alma.stop()
    finally:
        if alma.proc is not None:
            alma.kill()
        subprocess.run(["umount", str(disk)], check=False)


def test_a_read_only_target_is_said_at_once_and_still_lists_checks_and_restores(
    alma: DaemonRoot,
) -> None:
    alma.write("user/notas/a.txt", b"una nota\n")
    alma.start()
    target = set_up_repo(alma)
    snapshot = alma.ok("backup", "now")["snapshot"]
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    mounted = [
        subprocess.run(argv, capture_output=True, check=False).returncode == 0
        for argv in (
            ["mount", "--bind", str(target), str(target)],
            ["mount", "-o", "remount,ro,bind", str(target)],
        )
    ]
    try:
        if not all(mounted):
            pytest.skip("mounts are not allowed here")
        for command in (["now"], ["forget"]):
            started = time.monotonic()
            res = alma.ctl("backup", *command)
            assert res.rc != 0 and "mounted read-only" in res.stderr, res
            assert "another restic run" not in res.stderr
            assert time.monotonic() - started < 15, command  # restic's lock retries: ~45 s
        assert [s["id"] for s in alma.ok("backup", "list")] == [snapshot]
        assert alma.ok("backup", "check")["ok"] is True
        restore(alma, snapshot, alma.base / "rescate", "user/notas/a.txt").ok()
        assert (alma.base / "rescate/user/notas/a.txt").read_bytes() == b"una nota\n"
        alma.stop()
    finally:
        if alma.proc is not None:
            alma.kill()
        subprocess.run(["umount", str(target)], check=False)


def test_a_password_file_swapped_for_a_fifo_a_huge_file_or_one_open_to_all_is_said_at_once(
    alma: DaemonRoot,
) -> None:
    alma.start()
    set_up_repo(alma)
    alma.ok("backup", "now")
    secret = alma.base / "pw"
    secret.unlink()
    os.mkfifo(secret, 0o600)
    for _ in range(6):  # more calls than the daemon has request slots
        for command in (["now"], ["list"]):
            res = alma.ctl("backup", *command, timeout=30)
            assert res.rc != 0 and "not a regular file" in res.stderr, res
    assert alma.ok("status")
    secret.unlink()
    with open(secret, "wb") as handle:
        handle.truncate(200 << 20)
    secret.chmod(0o600)
    res = alma.ctl("backup", "list", timeout=30)
    assert res.rc != 0 and "which no password is" in res.stderr, res
    secret.unlink()
    secret.write_bytes(b"correct horse battery\n")
    secret.chmod(0o644)
    res = alma.ctl("backup", "now", timeout=30)
    assert res.rc != 0 and f"chmod 600 {secret}" in res.stderr, res
    secret.chmod(0o600)
    assert alma.ok("backup", "now")["status"] == "done"
    started = time.monotonic()
    alma.stop()
    assert time.monotonic() - started < 10
