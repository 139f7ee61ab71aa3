"""Backups: the [backup] policy, restic's failures as sentences, the consistent copy of
.alma/, the `backup` suggestion's rule (the end-to-end promises: tests/e2e/test_backup_e2e.py)."""

from __future__ import annotations

import getpass
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from actions.safe_read import read_config
from agent.backup import restore as backup_restore
from agent.backup.restic import DiskFullError, Restic, snapshot_id
from agent.backup.service import (
    LAST_SETTING,
    REPO_SETTING,
    ROOT_SETTING,
    BackupService,
    stage_data,
)
from control.cli import read_line
from control.ctl import _ask_password
from policies.config import load_policy, policy_from_dict
from policies.defaults import DEFAULT_POLICY_TOML
from policies.errors import (
    AlmaError,
    BadArgumentError,
    ConfigError,
    ConflictError,
    RefusedError,
    UnavailableError,
)
from policies.layout import RootLayout
from policies.limits import ERROR_CHARS
from state.journal import Journal

DAY = 86400.0


def test_the_default_backup_section_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "autonomy.conf"
    path.write_text(DEFAULT_POLICY_TOML, encoding="utf-8")
    backup = load_policy(path, read_config(path)).backup
    assert backup.target == "" and backup.schedule == "daily"
    assert backup.include == ["logs", "user", "docs", "system", ".alma"]
    assert (backup.keep_daily, backup.keep_weekly, backup.keep_monthly) == (7, 4, 12)
    assert backup.warn_after_days == 7


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"target": "disco/alma"}, "full path"),
        ({"target": "/media/" + "a" * 256}, "longer than 255 bytes"),
        ({"include": []}, "at least one folder"),
        ({"include": ["user", "user/"]}, "named twice"),
        ({"include": ["../fuera"]}, "without '.' or '..'"),
        ({"include": [".alma/trash", ".alma/journal", "user"]}, "backed up whole"),
        ({"include": ["user", ".alma/journal/"]}, "backed up whole"),
        ({"include": ["."]}, "without '.' or '..'"),
        ({"include": ["/"]}, "relative to the ALMA root"),
        ({"include": ["/home/ana"]}, "relative to the ALMA root"),
        ({"keep_daily": 0, "keep_weekly": 0, "keep_monthly": 0}, "keep at least one"),
        ({"schedule": "hourly"}, "backup.schedule"),
        ({"warn_after_days": 0}, "backup.warn_after_days"),
        ({"retention": 3}, "unknown key"),
    ],
)
def test_a_wrong_backup_key_is_one_sentence(section: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        policy_from_dict({"backup": section})
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_include_inside_alma_is_refused_with_its_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "autonomy.conf"
    default = 'include = ["logs", "user", "docs", "system", ".alma"]'
    assert default in DEFAULT_POLICY_TOML
    text = DEFAULT_POLICY_TOML.replace(
        default, 'include = [".alma/trash", ".alma/journal", "user"]'
    )
    path.write_text(text, encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("include ="))
    with pytest.raises(ConfigError) as caught:
        load_policy(path, read_config(path))
    said = str(caught.value)
    assert f"{path}, line {line}, key backup.include" in said, said
    assert "'.alma/trash' is inside .alma" in said and "\n" not in said, said


def test_a_restore_path_is_a_name_escaped_for_restics_patterns() -> None:
    pattern = backup_restore.include_pattern
    assert pattern(["user", "a[1].txt"]) == "/user/a\\[1].txt"
    assert pattern(["user", "*"]) == "/user/\\*"
    assert pattern(["user", "x?y", "b\\c"]) == "/user/x\\?y/b\\\\c"
    assert pattern(["user", "$HOME", "!x", "a b", "ñandú"]) == "/user/$HOME/!x/a b/ñandú"


def test_a_stage_is_published_only_over_nothing_or_an_empty_folder(tmp_path: Path) -> None:
    parent = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name, existed in (("nuevo", False), ("vacio", True), ("lleno", True)):
            (tmp_path / f".{name}.stage" / "user").mkdir(parents=True)
            if existed:
                (tmp_path / name).mkdir()
        (tmp_path / "lleno" / "mine.txt").write_text("of the person")
        backup_restore._publish(parent, ".nuevo.stage", tmp_path / "nuevo", False)
        backup_restore._publish(parent, ".vacio.stage", tmp_path / "vacio", True)
        assert (tmp_path / "nuevo/user").is_dir() and (tmp_path / "vacio/user").is_dir()
        with pytest.raises(ConflictError, match="filled meanwhile"):
            backup_restore._publish(parent, ".lleno.stage", tmp_path / "lleno", True)
        assert sorted(p.name for p in (tmp_path / "lleno").iterdir()) == ["mine.txt"]
        (tmp_path / "hecho").mkdir()  # made by someone else after the check
        (tmp_path / ".hecho.stage").mkdir()
        with pytest.raises(ConflictError, match="filled meanwhile"):
            backup_restore._publish(parent, ".hecho.stage", tmp_path / "hecho", False)
        (tmp_path / "enlace").symlink_to(tmp_path / "nuevo")  # a link: never replaced
        (tmp_path / ".enlace.stage").mkdir()
        with pytest.raises(ConflictError, match="filled meanwhile"):
            backup_restore._publish(parent, ".enlace.stage", tmp_path / "enlace", True)
        assert (tmp_path / "enlace").is_symlink()
    finally:
        os.close(parent)


@pytest.mark.parametrize("snapshot", ["--help", "-h", "latest;rm", "1a2b 3c", "", "LATEST", "zz"])
def test_a_snapshot_is_an_id_or_latest_and_nothing_else(snapshot: str) -> None:
    with pytest.raises(BadArgumentError, match="is not a snapshot"):
        snapshot_id(snapshot)


def test_a_snapshot_id_is_read_as_restic_writes_it() -> None:
    assert snapshot_id("latest") == "latest"
    assert snapshot_id("1A2B3C4D") == "1a2b3c4d"


def fake_restic(tmp_path: Path, script: str) -> Path:
    """A ``restic`` on PATH that runs ``script`` (sh) and logs its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "restic"
    exe.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n{script}\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def private(path: Path, data: bytes = b"clave\n") -> Path:
    """A password file only its owner may read, as ALMA requires."""
    path.write_bytes(data)
    path.chmod(0o600)
    return path


@pytest.mark.parametrize(
    ("stderr", "error", "says"),
    [
        ("Fatal: wrong password or no key found", BadArgumentError, "does not open"),
        (
            "Fatal: unable to save snapshot: write /d/data/ab: no space left on device",
            UnavailableError,
            "is full",
        ),
        ("Fatal: create repository at /d failed: config file already exists", ConflictError, ""),
        (
            "unable to create lock in backend: open /d/locks/ab-tmp-1: read-only file system",
            UnavailableError,
            "mounted read-only",
        ),
        (
            "Fatal: unable to create lock in backend: open /d/locks/ab: permission denied",
            RefusedError,
            "permission denied",
        ),
        (
            "unable to create lock in backend: write /d/locks/ab: no space left on device",
            DiskFullError,
            "`alma-ctl backup forget` frees",
        ),
    ],
)
def test_restic_failures_are_one_sentence_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: str, error: type, says: str
) -> None:
    monkeypatch.setenv(
        "PATH", f"{fake_restic(tmp_path, f'echo {stderr!r} >&2; exit 1')}:/usr/bin:/bin"
    )
    with pytest.raises(error) as caught:
        Restic(tmp_path, private(tmp_path / "pw")).run(["snapshots"])
    assert says in str(caught.value) and "\n" not in str(caught.value)
    assert len((tmp_path / "calls").read_text().splitlines()) == 1  # no unlock, no retry


def test_a_lock_left_by_a_killed_run_is_removed_and_the_call_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        f'if [ "$4" = unlock ]; then touch {tmp_path}/unlocked; exit 0; fi\n'
        f"if [ -e {tmp_path}/unlocked ]; then echo ok; exit 0; fi\n"
        "echo 'unable to create lock in backend: repository is already locked by PID 9' >&2\n"
        "exit 1"
    )
    monkeypatch.setenv("PATH", f"{fake_restic(tmp_path, script)}:/usr/bin:/bin")
    assert Restic(tmp_path, private(tmp_path / "pw")).run(["snapshots"]).strip() == "ok"
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[3] for c in calls] == ["snapshots", "unlock", "snapshots"]
    # The password travels in a file named by the environment, never on the command line.
    assert not any("pw" in c.split() for c in calls)


def test_a_lock_that_stays_is_a_conflict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = "echo 'repository is already locked exclusively by PID 9' >&2; exit 1"
    monkeypatch.setenv("PATH", f"{fake_restic(tmp_path, script)}:/usr/bin:/bin")
    with pytest.raises(ConflictError, match="in use by another restic run"):
        Restic(tmp_path, private(tmp_path / "pw")).run(["backup"])


def test_the_password_reaches_restic_through_a_pipe_never_its_file_or_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = 'echo "$RESTIC_PASSWORD_FILE" >&2; cat "$RESTIC_PASSWORD_FILE"'
    monkeypatch.setenv("PATH", f"{fake_restic(tmp_path, script)}:/usr/bin:/bin")
    secret = private(tmp_path / "pw", "contraseña\n".encode())
    assert Restic(tmp_path, secret).run(["snapshots"]) == "contraseña\n"
    assert str(secret) not in (tmp_path / "calls").read_text()


def _fifo(path: Path) -> None:
    os.mkfifo(path, 0o600)


def _huge(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.truncate(200 << 20)  # sparse: no disk, 200 MB to whoever reads it whole
    path.chmod(0o600)


def _readable(path: Path) -> None:
    path.write_text("clave\n")
    path.chmod(0o644)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_fifo, "not a regular file"),
        (_huge, "larger than 4096 bytes, which no password is"),
        (_readable, "other users may read it (mode 644); make it private with `chmod 600"),
    ],
)
def test_a_password_file_that_is_a_fifo_huge_or_readable_by_others_is_refused_before_restic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Any, says: str
) -> None:
    monkeypatch.setenv("PATH", f"{fake_restic(tmp_path, 'cat $RESTIC_PASSWORD_FILE')}:/bin")
    secret = tmp_path / "pw"
    make(secret)
    for command in (["snapshots"], ["backup"]):
        with pytest.raises(ConfigError) as caught:
            Restic(tmp_path, secret).run(command)
        assert says in str(caught.value) and "\n" not in str(caught.value)
        assert str(secret) in str(caught.value)
    assert not (tmp_path / "calls").exists()  # restic never started
    # `backup init` reads it the same way: refused at once, a FIFO never waited on.
    service, _store = _service(tmp_path / "ALMA", [0.0])
    with pytest.raises(ConfigError, match=re.escape(says)):
        service.init(str(tmp_path / "disk"), str(secret))


def _mount_read_only(source: Path, where: Path) -> bool:
    """``where``: ``source`` bound read-only (root only); False when mounts are not allowed."""
    where.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    for argv in (
        ["mount", "--bind", str(source), str(where)],
        ["mount", "-o", "remount,ro,bind", str(where)],
    ):
        if subprocess.run(argv, capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", str(where)], capture_output=True, check=False)
            return False
    return True


def test_a_read_only_target_refuses_writes_before_restic_and_reads_without_a_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "disk").mkdir()
    target = tmp_path / "ro"
    if not _mount_read_only(tmp_path / "disk", target):
        pytest.skip("a read-only bind mount needs root")
    try:
        monkeypatch.setenv("PATH", f"{fake_restic(tmp_path, 'echo listed')}:/usr/bin:/bin")
        repo = Restic(target, private(tmp_path / "pw"))
        for command in ("backup", "forget", "prune", "unlock"):
            with pytest.raises(UnavailableError, match="mounted read-only"):
                repo.run([command])
        assert not (tmp_path / "calls").exists()
        assert repo.run(["snapshots"]).strip() == "listed"
        [call] = (tmp_path / "calls").read_text().splitlines()
        assert call.split()[3:] == ["--no-lock", "snapshots"]
    finally:
        subprocess.run(["umount", str(target)], check=False)


def test_a_target_whose_name_is_too_long_is_one_sentence_before_restic_runs(
    tmp_path: Path,
) -> None:
    with pytest.raises(
        BadArgumentError, match=re.escape("cannot be used (File name too long)")
    ) as caught:
        Restic(Path("/" + "a" * 300), private(tmp_path / "pw")).run(["snapshots"])
    assert str(caught.value).count("a" * 300) == 1


def test_a_target_that_is_a_link_is_refused_before_restic_runs(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(BadArgumentError, match="symbolic link"):
        Restic(tmp_path / "link", tmp_path / "pw").run(["snapshots"])


def test_the_stage_is_a_consistent_copy_without_trash_locks_or_wal(tmp_path: Path) -> None:
    data = tmp_path / ".alma"
    (data / "trash/1/0").mkdir(parents=True)
    (data / "trash/1/0/old.txt").write_text("trashed")
    (data / "journal").mkdir()
    (data / "journal/executor.lock").write_text("")
    (data / "memory/chroma/seg").mkdir(parents=True)
    (data / "memory/chroma/seg/data_level0.bin").write_bytes(b"\x01" * 100)
    db = data / "journal/journal.db"
    live = sqlite3.connect(db)
    live.execute("PRAGMA journal_mode=WAL")
    live.execute("CREATE TABLE t(x)")
    live.execute("INSERT INTO t VALUES (1)")
    live.commit()
    live.execute("BEGIN")
    live.execute("INSERT INTO t VALUES (2)")  # not committed: never in the copy
    stage = tmp_path / "stage"
    copied = stage_data(data, stage)
    live.rollback()
    live.close()
    names = sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())
    assert names == ["journal/journal.db", "memory/chroma/seg/data_level0.bin"]
    assert copied == 2
    with sqlite3.connect(stage / "journal/journal.db") as conn:
        assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]


class _Store:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def setting(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set_setting(self, key: str, value: Any) -> None:
        self.values[key] = value


def _service(tmp_path: Path, now: list[float]) -> tuple[BackupService, _Store]:
    store = _Store()
    policy = policy_from_dict({"backup": {"warn_after_days": 3}})
    service = BackupService(
        RootLayout(tmp_path),
        lambda: policy,  # type: ignore[arg-type]  # the holder's call is all it uses
        store,  # type: ignore[arg-type]  # a fake of the settings and setting() it reads
        None,  # type: ignore[arg-type]  # no engine: these rules never run an action
        None,  # type: ignore[arg-type]  # no memory store: nor copy one
        lambda action: None,
        clock=lambda: now[0],
    )
    return service, store


def test_a_root_keeps_its_identity_and_a_copy_of_it_makes_its_own(tmp_path: Path) -> None:
    (tmp_path / "ALMA").mkdir()
    service, store = _service(tmp_path / "ALMA", [0.0])
    first = service.identity()
    assert service.identity() == first and first["lineage"] == []  # kept across calls
    # Its state copied into another folder (a restore elsewhere): an identity of its own, the
    # original's kept as its past.
    copy = tmp_path / "COPIA"
    copy.mkdir()
    service.layout = RootLayout(copy)
    second = service.identity()
    assert second["id"] != first["id"] and second["lineage"] == [first["id"]]
    assert second["path"] == str(copy) and store.values[ROOT_SETTING] == second
    # The same folder name, another folder (removed and made again elsewhere): a copy too.
    (tmp_path / "otra").mkdir()  # made while the first is there: another inode
    copy.rmdir()
    (tmp_path / "otra").rename(copy)
    third = service.identity()
    assert third["lineage"] == [second["id"], first["id"]]


def test_a_snapshot_from_before_identities_is_this_roots_when_its_journal_took_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ALMA").mkdir()
    service, _store = _service(tmp_path / "ALMA", [0.0])
    own = service._own_tag()

    def snap(letter: str, *tags: str) -> dict[str, Any]:
        return {"id": letter * 64, "short_id": letter * 8, "time": letter, "tags": list(tags)}

    snaps = [
        snap("a", "alma"),  # taken by this root before roots had identities
        snap("b", "alma"),  # taken then by another root
        snap("c", "alma", own),
        snap("d", "alma", "alma-root=0123"),
    ]

    class Repo:
        def json(self, args: list[str]) -> list[dict[str, Any]]:
            assert args == ["snapshots", "--tag", "alma"]
            return snaps

    monkeypatch.setattr(service, "_recorded", lambda: {"aaaaaaaa": (1, 1)})
    repo: Any = Repo()
    assert [s["short_id"] for s in service._snapshots(repo)] == ["aaaaaaaa", "cccccccc"]
    assert len(service._snapshots(repo, every=True)) == 4


def test_the_backup_suggestion_comes_after_n_days_without_a_good_backup(tmp_path: Path) -> None:
    now = [1_000 * DAY]
    service, store = _service(tmp_path, now)
    assert service.findings(now[0]) == []  # no repository: nothing to remind
    store.set_setting(
        REPO_SETTING, {"target": "/media/d/b", "password_file": "/p", "since": now[0]}
    )
    assert service.findings(now[0] + 2 * DAY) == []
    [stale] = service.findings(now[0] + 3 * DAY)
    assert stale.kind == "backup" and stale.plan == []
    assert "alma-ctl backup now" in stale.reason and "/media/d/b" in stale.reason
    store.set_setting(LAST_SETTING, {"ok_at": now[0] + 3 * DAY, "error": None})
    assert service.findings(now[0] + 4 * DAY) == []
    store.set_setting(
        LAST_SETTING, {"ok_at": now[0] + 3 * DAY, "failed_at": now[0] + 4 * DAY, "error": "X."}
    )
    [failing] = service.findings(now[0] + 4 * DAY)
    assert failing.reason.startswith("X.") and "alma-ctl backup now" in failing.reason
    assert failing.fingerprint != stale.fingerprint


def test_backups_failing_again_and_again_are_one_finding_in_the_last_error_s_words(
    tmp_path: Path,
) -> None:
    now = [1_000 * DAY]
    service, store = _service(tmp_path, now)
    store.set_setting(REPO_SETTING, {"target": "/media/d/b", "password_file": "/p", "since": 0})
    store.set_setting(LAST_SETTING, {"ok_at": now[0], "error": None})
    prints = set()
    for n in range(5):  # each failure in other words (restic names the pack it could not write)
        now[0] += DAY
        store.set_setting(
            LAST_SETTING, {**store.setting(LAST_SETTING), "failed_at": now[0], "error": f"E{n}."}
        )
        [failing] = service.findings(now[0])
        assert failing.reason.startswith(f"E{n}.")
        prints.add(failing.fingerprint)
    assert len(prints) == 1
    # A good backup ends it; the next failure is a new problem.
    store.set_setting(LAST_SETTING, {"ok_at": now[0], "error": None})
    assert service.findings(now[0]) == []
    store.set_setting(LAST_SETTING, {"ok_at": now[0], "failed_at": now[0], "error": "E0."})
    [again] = service.findings(now[0])
    assert again.fingerprint not in prints


def test_a_huge_target_is_one_short_sentence_and_no_error_is_stored_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "autonomy.conf"
    text = '[backup]\ntarget = "/' + "a" * 900_000 + '"\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_policy(path, read_config(path))
    said = str(caught.value)
    assert f"{path}, line 2, key backup.target" in said and "900001 characters" in said
    assert len(said) < 400 and "\n" not in said
    journal = Journal(tmp_path / "journal.db")
    action = journal.create_action(kind="backup", plan=[{"op": "backup"}], sandbox="backup")
    journal.finish(action, "failed", error="x" * 900_000, code=1)
    stored = journal.action_row(action)["error"]
    assert len(stored) == ERROR_CHARS and stored.endswith("…")
    journal.close()


def test_the_schedule_skips_an_absent_target_without_recording_a_failure(tmp_path: Path) -> None:
    now = [1_000 * DAY]
    service, store = _service(tmp_path, now)
    store.set_setting(
        REPO_SETTING, {"target": str(tmp_path / "unplugged"), "password_file": "/p", "since": 0}
    )
    assert service.tick() is False
    assert store.setting(LAST_SETTING) is None


def test_alma_ctl_reads_backup_restore_with_paths_and_to() -> None:
    line = read_line(["backup", "restore", "abc123", "user/a.txt", "logs", "--to", "/tmp/r"])
    assert line.command is not None and line.command.name == "backup.restore"
    assert line.args == {"snapshot": "abc123", "paths": ["user/a.txt", "logs"], "to": "/tmp/r"}


def test_a_password_asked_on_the_terminal_goes_to_a_private_file_outside_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = iter(["contraseña secreta", "contraseña secreta", "una", "otra"])
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": next(answers))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = Path(_ask_password(str(tmp_path / "ALMA")))
    assert path.parent == tmp_path / "config/alma"
    assert path.read_text(encoding="utf-8") == "contraseña secreta\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with pytest.raises(AlmaError, match="already holds a backup password"):
        _ask_password(str(tmp_path / "ALMA"))  # never overwritten
    with pytest.raises(AlmaError, match="differ"):
        _ask_password(str(tmp_path / "OTRA"))
    assert not list(path.parent.glob("*OTRA*")) and len(list(path.parent.iterdir())) == 1


def test_a_restore_interrupted_by_a_stop_is_taken_back_or_finished_at_start(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "journal.db")
    plan = [{"op": "restore_snapshot", "snapshot": "ab", "paths": [], "existed": False}]
    # Stopped while restic wrote the stage: the stage goes, nothing reached DIR.
    early = journal.create_action(
        kind="backup_restore",
        plan=[{**plan[0], "to": str(tmp_path / "a"), "stage": ".a.alma-restore-3f9a"}],
        sandbox="backup",
    )
    stage = tmp_path / ".a.alma-restore-3f9a"
    (stage / "user").mkdir(parents=True)
    (stage / "user/x.txt").write_text("x")
    # Stopped after the rename, before the journal said done: it is done.
    late = journal.create_action(
        kind="backup_restore",
        plan=[{**plan[0], "to": str(tmp_path / "b"), "stage": ".b.alma-restore-77c0"}],
        sandbox="backup",
    )
    journal.write_intents(late, [(0, None, None, {"files": []})])
    (tmp_path / "b").mkdir()
    assert journal.running() == []  # never the file executor's to recover
    assert sorted(backup_restore.recover(journal)) == sorted([early, late])
    assert not stage.exists() and not (tmp_path / "a").exists()
    assert journal.action(early)["status"] == "rolled_back"
    assert journal.action(late)["status"] == "done" and (tmp_path / "b").is_dir()
    journal.close()


def test_the_schedule_backs_up_once_a_day_and_waits_after_a_failure(tmp_path: Path) -> None:
    now = [1_000 * DAY]
    service, store = _service(tmp_path, now)
    (tmp_path / "disk").mkdir()
    store.set_setting(
        REPO_SETTING, {"target": str(tmp_path / "disk"), "password_file": "/p", "since": 0}
    )
    calls: list[str] = []

    def backup(*, auto: bool = False) -> dict[str, Any]:
        assert auto
        calls.append("now")
        if store.setting("fail"):
            store.set_setting(LAST_SETTING, {"failed_at": now[0], "error": "restic: X."})
            raise AlmaError("restic: X.")
        store.set_setting(LAST_SETTING, {"ok_at": now[0], "error": None})
        return {}

    def forget(*, auto: bool = False) -> dict[str, Any]:
        calls.append("forget")
        return {}

    # restic itself is the e2e tests'; here only when the schedule calls it.
    service.now = backup  # type: ignore[method-assign]  # the schedule's calls, recorded
    service.forget = forget  # type: ignore[method-assign]  # the schedule's calls, recorded
    assert service.tick() is False and calls == ["now", "forget"]
    now[0] += 19 * 3600
    assert service.tick() is False and calls == ["now", "forget"]  # not due yet
    now[0] += 2 * 3600
    store.set_setting("fail", True)
    assert service.tick() is True and calls[-1] == "now"  # due, and it failed
    now[0] += 3600
    assert service.tick() is False and len(calls) == 3  # no retry loop
    now[0] += 6 * 3600
    store.set_setting("fail", False)
    assert service.tick() is False and calls[-2:] == ["now", "forget"]


def test_no_backup_on_its_own_while_autonomy_is_off(tmp_path: Path) -> None:
    now = [1_000 * DAY]
    service, store = _service(tmp_path, now)
    (tmp_path / "disk").mkdir()
    store.set_setting(
        REPO_SETTING, {"target": str(tmp_path / "disk"), "password_file": "/p", "since": 0}
    )
    level = ["off"]

    class _Autonomy:
        def effective(self) -> str:
            return level[0]

    service.autonomy = _Autonomy()  # type: ignore[assignment]  # the one call it makes
    calls: list[str] = []
    # What tick would start, recorded instead of run: the test asks only whether it starts them.
    service.now = lambda *, auto=False: calls.append("now") or {}  # type: ignore[method-assign]
    service.forget = lambda *, auto=False: calls.append("forget") or {}  # type: ignore[method-assign]
    assert service.tick() is False and calls == []  # due, but paused
    level[0] = "suggest"
    assert service.tick() is False and calls == ["now", "forget"]
