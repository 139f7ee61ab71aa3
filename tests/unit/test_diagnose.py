"""A repeated failure explained from the files: the script, its configuration, a wrong path."""

from __future__ import annotations

import hashlib
from pathlib import Path

from actions.ops import Edit
from actions.planners import PlanResult
from agent.detectors.diagnose import explain_failure
from policies.i18n import language
from tests.support.fake_model import FakeComplete


def _finding(example: str, log: str = "logs/backup.log") -> PlanResult:
    return PlanResult(
        kind="repeated_failure",
        target=log,
        title="«backup.sh» falla una y otra vez",
        reason="3 fallos en 3 días distintos",
        evidence=[f"3 veces en 3 días, la última en {log}:8: {example}"],
        plan=[],
        files=0,
        fingerprint="f" * 16,
    )


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "ALMA"
    (root / "user" / "scripts").mkdir(parents=True)
    (root / "user" / "scripts" / "backup.sh").write_text("#!/bin/sh\n. ./backup.conf\n")
    (root / "mnt" / "ALMA_RESISTE").mkdir(parents=True)  # the disk's real name
    return root


def test_a_path_the_error_and_the_config_name_that_does_not_exist_with_a_close_one(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path)
    wrong = root / "mnt" / "ALMA_RESIST"
    conf = root / "user" / "scripts" / "backup.conf"
    conf.write_text(f'# destino\nSRC="$HOME"\nDEST="{wrong}"\n', encoding="utf-8")
    example = f'ERROR rsync: change_dir "{wrong}" failed: No such file or directory (2)'
    with language("es"):  # the finding's words are read in Spanish, whatever the locale
        out = explain_failure(root, _finding(example))
    assert out.plan == []  # nothing writable: explained, the change is the person's to make
    text = "\n".join(out.evidence)
    assert "user/scripts/backup.sh" in text
    assert f'user/scripts/backup.conf:3: DEST="{wrong}"' in text
    assert f"{wrong} no existe" in text and f"{root}/mnt/ALMA_RESISTE" in text
    assert f"{root}/mnt/ALMA_RESISTE" in out.reason


def test_nothing_found_leaves_the_finding_as_it_was(tmp_path: Path) -> None:
    root = _root(tmp_path)
    finding = _finding("ERROR backup.sh exited with status 23")
    assert explain_failure(root, finding) == finding
    other = _finding('ERROR rsync: change_dir "/no/such/place/at/all" failed')
    assert explain_failure(root, other) == other  # no config names it, no close name


def _user_only(relpath: str) -> bool:
    return relpath.startswith("user/")


def test_the_one_wrong_value_becomes_an_edit_of_that_line_only_keeping_bytes_and_endings(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path)
    wrong = f"{root}/mnt/ALMA_RESIST"
    conf = root / "user" / "scripts" / "backup.conf"
    # Latin-1 bytes, CRLF endings, and a longer path that starts with the wrong one.
    original = f'# copia r\xe1pida\r\nDEST="{wrong}"\r\nOTRO="{wrong}2"\r\nFIN=1'.encode("latin-1")
    conf.write_bytes(original)
    example = f'ERROR rsync: change_dir "{wrong}" failed: No such file or directory (2)'
    out = explain_failure(root, _finding(example), writable=_user_only)
    (op,) = out.plan
    assert isinstance(op, Edit) and op.path == "user/scripts/backup.conf"
    assert op.content == original.replace(
        f'DEST="{wrong}"'.encode(), f'DEST="{root}/mnt/ALMA_RESISTE"'.encode()
    )
    assert op.expect.sha256 == hashlib.sha256(original).hexdigest()
    assert op.expect.ino == conf.stat().st_ino
    assert out.files == 1
    assert any("user/scripts/backup.conf" in e and "ALMA_RESISTE" in e for e in out.evidence)


def test_anything_less_certain_stays_a_note(tmp_path: Path) -> None:
    root = _root(tmp_path)
    wrong = f"{root}/mnt/ALMA_RESIST"
    conf = root / "user" / "scripts" / "backup.conf"
    example = f'ERROR rsync: change_dir "{wrong}" failed: No such file or directory (2)'
    # Two lines name it: which one is meant is the person's call.
    conf.write_text(f'DEST="{wrong}"\nCOPIA="{wrong}"\n')
    assert explain_failure(root, _finding(example), writable=_user_only).plan == []
    # Two close names (ALMA_RESISTE and ALMA_RESISTO): no guess.
    conf.write_text(f'DEST="{wrong}"\n')
    (root / "mnt" / "ALMA_RESISTO").mkdir()
    out = explain_failure(root, _finding(example), writable=_user_only)
    assert out.plan == []


_MODEL_DIFF = """--- a/user/scripts/backup.conf
+++ b/user/scripts/backup.conf
@@ -1,2 +1,2 @@
 # opciones
-OPTS="--fast"
+OPTS="--archive"
"""


def test_with_a_model_its_diff_becomes_the_plan_only_when_it_applies_exactly(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path)
    conf = root / "user" / "scripts" / "backup.conf"
    conf.write_bytes(b'# opciones\r\nOPTS="--fast"\r\n')
    finding = _finding("ERROR backup.sh: rsync: unknown option --fast")
    model = FakeComplete(_MODEL_DIFF)
    out = explain_failure(root, finding, writable=_user_only, complete=model)
    (op,) = out.plan
    assert isinstance(op, Edit) and op.content == b'# opciones\r\nOPTS="--archive"\r\n'
    assert 'OPTS="--fast"' in model.asked[0] and "unknown option" in model.asked[0]
    assert out.files == 1
    # A diff that does not apply, an answer that is no diff, no answer, or a config the policy
    # does not let ALMA write: the finding stays as the rules left it.
    for answer in (_MODEL_DIFF.replace("--fast", "--slow"), "NONE", None):
        assert explain_failure(
            root, finding, writable=_user_only, complete=FakeComplete(answer)
        ) == (finding)
    assert explain_failure(root, finding, complete=FakeComplete(_MODEL_DIFF)) == finding


def test_the_fix_comes_from_the_tools_own_line_beside_the_failure(tmp_path: Path) -> None:
    # the ERROR line names no path; tar's line beside it names the missing archive,
    # whose folder the configuration names, and the disk was renamed (ALMA_BACKUPS).
    from datetime import datetime

    from agent.detectors import detect_logs
    from policies.config import Policy

    root = _root(tmp_path)
    (root / "mnt" / "ALMA_BACKUPS").mkdir()
    wrong = f"{root}/mnt/ALMA_BACKUP"
    conf = root / "user" / "scripts" / "backup.conf"
    conf.write_text(f'SRC="$HOME"\nDEST="{wrong}"\n', encoding="utf-8")
    (root / "logs").mkdir()
    runs = []
    for day in (18, 19, 20):
        runs += [
            f"2026-11-{day} 02:00:01 INFO backup.sh: starting",
            f"tar (child): {wrong}/alma-2026-11-{day}.tar.gz: Cannot open: No such file or"
            " directory",
            "tar (child): Error is not recoverable: exiting now",
            f"2026-11-{day} 02:00:02 ERROR backup.sh exited with status 2",
        ]
    (root / "logs" / "backup.log").write_text("\n".join(runs) + "\n", encoding="utf-8")
    (root / "logs" / "2026-11-19.md").write_text(
        "# 2026-11-19\n\n## 09:10:00 · usuario\nLa copia ha vuelto a fallar esta noche. "
        "Creo que cambié el nombre del punto de montaje.\n\n"
        "## 09:12:00 · usuario\nHoy toca reunión con el equipo.\n",
        encoding="utf-8",
    )
    now = datetime(2026, 11, 21, 10).timestamp()
    with language("es"):
        (found,) = [r for r in detect_logs(root, Policy(), now) if r.kind == "repeated_failure"]
        out = explain_failure(root, found, writable=_user_only)
    (op,) = out.plan
    assert isinstance(op, Edit) and op.path == "user/scripts/backup.conf"
    assert op.content == f'SRC="$HOME"\nDEST="{root}/mnt/ALMA_BACKUPS"\n'.encode()
    text = "\n".join(out.evidence)
    assert f"Al lado, en logs/backup.log:10: tar (child): {wrong}/alma-2026-11-20" in text
    assert (
        "Escribiste en logs/2026-11-19.md:4 (09:10): "
        "Creo que cambié el nombre del punto de montaje." in text
    )
    assert "reunión" not in text  # only what is about the failure
    assert f"{root}/mnt/ALMA_BACKUPS" in out.reason
