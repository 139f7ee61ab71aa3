"""The agent's loop, recall and track record through the real ``alma-agentd`` and ``alma-ctl``
Every check is what a person or a script sees: ``--json``
documents, exit codes and the files on disk."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.loop.track import PROMOTE_AFTER
from tests.support.daemon import DaemonRoot, find

pytestmark = pytest.mark.e2e
DAY = 86_400.0


def pending_for(d: DaemonRoot, target: str, kind: str = "organize") -> list[dict[str, Any]]:
    return find(d.suggestions(), target=target, kind=kind, status="pending")


def test_three_rejections_in_a_folder_stop_the_kind_there_until_the_person_lifts_it(
    alma: DaemonRoot,
) -> None:
    alma.start()
    alma.messy_folder("user/fotos", 16, exts=("jpg", "png", "pdf"))
    for i in range(3):
        s = alma.wait_suggestion(kind="organize", target="user/fotos")
        alma.ok("suggestions", "reject", str(s["id"]), "--reason", f"todavía no ({i})")
        alma.write(f"user/fotos/nueva{i}.jpg", f"nueva {i}\n".encode())  # a new finding

    done = alma.analyze()
    assert pending_for(alma, "user/fotos") == []
    (skip,) = find(done["skipped"], kind="organize", target="user/fotos")
    assert "3" in skip["why"]
    stats = alma.ok("stats")
    (stopped,) = stats["stopped"]
    assert stopped["kind"] == "organize" and stopped["folder"] == "user/fotos"
    assert stopped["lift"] == "alma-ctl autonomy allow organize --folder user/fotos"
    (folder,) = find(stats["folders"], kind="organize", folder="user/fotos")
    assert (folder["proposed"], folder["rejected"], folder["accepted"]) == (3, 3, 0)
    # Another folder is still proposed.
    alma.messy_folder("user/otra", 16)
    alma.wait_suggestion(kind="organize", target="user/otra")
    assert pending_for(alma, "user/fotos") == []

    # Lifting it is the person's: then it is proposed there again.
    unknown = alma.ctl("autonomy", "allow", "organize", "--folder", "user/otra")
    assert unknown.rc == 2 and "nothing to allow" in unknown.stderr
    alma.ok("autonomy", "allow", "organize", "--folder", "user/fotos")
    assert alma.ok("stats")["stopped"] == []
    alma.analyze()
    (fresh,) = pending_for(alma, "user/fotos")
    assert fresh["files"] == 19
    alma.stop()


def test_an_undo_is_not_this_not_now_until_the_folder_changes_a_great_deal(
    alma: DaemonRoot,
) -> None:
    alma.start()
    alma.messy_folder("user/Descargas", 16, exts=("jpg", "pdf", "mp3"))
    s = alma.wait_suggestion(kind="organize", target="user/Descargas")
    alma.ok("suggestions", "accept", str(s["id"]))
    alma.ok("undo")
    alma.write("user/Descargas/nueva.jpg", b"nueva\n")  # one new download: not news
    done = alma.analyze()
    assert pending_for(alma, "user/Descargas") == []
    (skip,) = find(done["skipped"], kind="organize", target="user/Descargas")
    assert "undid" in skip["why"]
    (held,) = alma.ok("stats")["stopped"]
    assert held["lift"] == "alma-ctl autonomy allow organize --folder user/Descargas"
    # The folder changes a great deal (twice the files): proposed again, fresh.
    for i in range(17):
        alma.write(f"user/Descargas/lote{i}.pdf", f"lote {i}\n".encode())
    alma.analyze()
    (fresh,) = pending_for(alma, "user/Descargas")
    assert fresh["files"] == 34
    alma.stop()


def test_accepted_n_times_without_undo_becomes_a_suggestion_with_the_exact_policy_line(
    alma: DaemonRoot,
) -> None:
    alma.start()
    conf_before = alma.policy_file.read_bytes()
    for i in range(PROMOTE_AFTER):
        alma.messy_folder(f"user/p{i}", 16)
    for i in range(PROMOTE_AFTER):
        s = alma.wait_suggestion(kind="organize", target=f"user/p{i}")
        alma.ok("suggestions", "accept", str(s["id"]))
    alma.analyze()
    (promo,) = find(alma.suggestions(), kind="autonomy_promotion")
    shown = alma.ok("suggestions", "show", str(promo["id"]))
    line = 'kinds = ["temp_cleanup", "organize"]'
    assert shown["plan"] == [] and shown["target"] == "system/autonomy.conf"
    assert any(line in e for e in shown["evidence"]), shown["evidence"]
    (trusted,) = alma.ok("stats")["promotable"]
    assert trusted == {
        "kind": "organize",
        "accepted": PROMOTE_AFTER,
        "file": "system/autonomy.conf",
        "section": "[auto]",
        "line": line,
    }
    # Only the person's edit raises autonomy: nothing changed it.
    assert alma.policy_file.read_bytes() == conf_before
    assert alma.ok("autonomy", "status")["configured"] == "suggest"

    # Feedback on a suggestion is counted per kind; a second verdict replaces the first.
    alma.ok("feedback", "1", "util", "--reason", "me ahorró tiempo")
    (kind,) = find(alma.ok("stats")["kinds"], kind="organize")
    assert (kind["accepted"], kind["useful"], kind["useless"]) == (PROMOTE_AFTER, 1, 0)
    alma.ok("feedback", "1", "inutil")
    (kind,) = find(alma.ok("stats")["kinds"], kind="organize")
    assert (kind["useful"], kind["useless"]) == (0, 1)
    missing = alma.ctl("feedback", "999", "util")
    assert missing.rc == 6
    bad = alma.ctl("feedback", "1", "quizá")
    assert bad.rc == 2
    # By the action's id, as `accept` and `history` show it: a verdict on its suggestion.
    second = find(alma.ok("history"), suggestion_id=2)[0]
    got = alma.ok("feedback", "--action", str(second["id"]), "util")
    assert got["suggestion_id"] == 2 and got["action_id"] == second["id"]
    (kind,) = find(alma.ok("stats")["kinds"], kind="organize")
    assert (kind["useful"], kind["useless"]) == (1, 1)
    assert alma.ctl("feedback", "--action", "999", "util").rc == 6

    # An undo of that kind: not trusted any more, the promotion leaves stats, and the
    # suggestion that offered it is withdrawn at the next analysis, saying why.
    alma.ok("undo")
    assert alma.ok("stats")["promotable"] == []
    alma.analyze()
    assert find(alma.suggestions(), kind="autonomy_promotion") == []
    (gone,) = find(alma.suggestions("--all"), kind="autonomy_promotion")
    assert gone["status"] == "expired", gone
    alma.stop()


def _memory_ready(d: DaemonRoot) -> None:
    d.wait_for(
        lambda: d.ok("status")["memory"] == "ready", timeout=300, what="the memory store to load"
    )


@pytest.mark.slow
def test_a_principle_in_memory_suppresses_or_reshapes_and_a_rejection_reason_is_remembered(
    alma_mem: DaemonRoot,
) -> None:
    alma = alma_mem
    alma.start()
    _memory_ready(alma)
    principle = alma.ok("memory", "add", "Nunca toques user/proyectos/tesis", "--type", "principle")
    alma.messy_folder("user/proyectos/tesis", 16)
    old = time.time() - 30 * DAY
    alma.write("user/otros/a.txt", b"la misma copia\n", mtime=old)  # the oldest: kept
    alma.write("user/proyectos/tesis/cap1.txt", b"la misma copia\n")
    alma.write("user/fotos/a.txt", b"la misma copia\n")

    done = alma.analyze()
    assert pending_for(alma, "user/proyectos/tesis") == []
    (skip,) = find(done["skipped"], kind="organize", target="user/proyectos/tesis")
    assert skip["by"] == [principle["id"]]
    (dupes,) = find(alma.suggestions(), kind="duplicates")
    shown = alma.ok("suggestions", "show", str(dupes["id"]))
    trashed = [op["path"] for op in shown["plan"] if op["op"] == "trash"]
    assert trashed == ["user/fotos/a.txt"]
    assert any(principle["id"] in e for e in shown["evidence"]), shown["evidence"]

    # A rejection reason that claims the folder: the next organize there is not proposed, and
    # the decision memory that did it is named.
    alma.messy_folder("user/fotos", 16)
    s = alma.wait_suggestion(kind="organize", target="user/fotos")
    alma.ok("suggestions", "reject", str(s["id"]), "--reason", "esa carpeta la ordeno yo")
    decisions = alma.ok("memory", "list", "--type", "decision")
    (decision,) = [m for m in decisions if "esa carpeta la ordeno yo" in m["content"]]
    alma.write("user/fotos/otra.jpg", b"otra foto\n")  # what it is about changed
    done = alma.analyze()
    assert pending_for(alma, "user/fotos") == []
    (skip,) = find(done["skipped"], kind="organize", target="user/fotos")
    assert skip["by"] == [decision["id"]] and "esa carpeta la ordeno yo" in skip["why"]
    alma.stop()


@pytest.mark.slow
def test_a_reason_is_read_for_what_it_asks_and_forgetting_it_undoes_that(
    alma_mem: DaemonRoot,
) -> None:
    alma = alma_mem
    alma.start()
    _memory_ready(alma)
    # "No subfolders": the next organize of that folder is not made (it would be subfolders).
    alma.messy_folder("user/Descargas", 16)
    s = alma.wait_suggestion(kind="organize", target="user/Descargas")
    alma.ok("suggestions", "reject", str(s["id"]), "--reason", "No quiero subcarpetas en Descargas")
    alma.write("user/Descargas/nueva.pdf", b"nueva\n")
    done = alma.analyze()
    assert pending_for(alma, "user/Descargas") == []
    (skip,) = find(done["skipped"], kind="organize", target="user/Descargas")
    assert "No quiero subcarpetas" in skip["why"] and skip["by"]

    # "Never delete anything of user/Fotos", said rejecting duplicates: the album is kept for
    # duplicates and for temp_cleanup alike.
    old = time.time() - 30 * DAY
    alma.write("user/Fotos/viaje/IMG_1.jpg", b"foto del viaje\n", mtime=old)
    alma.write("user/Movil/IMG_1.jpg", b"foto del viaje\n", mtime=old)
    alma.write("user/Fotos/viaje/IMG_1 (1).jpg", b"foto del viaje\n", mtime=old)
    dupes = alma.wait_suggestion(kind="duplicates")
    alma.ok(
        "suggestions", "reject", str(dupes["id"]), "--reason", "Nunca borres nada de user/Fotos"
    )
    (said,) = [
        m for m in alma.ok("memory", "list", "--type", "decision") if "user/Fotos" in m["content"]
    ]
    alma.write("user/Fotos/viaje/.DS_Store", b"x", mtime=old)
    alma.write("user/Movil/IMG_1 (2).jpg", b"foto del viaje\n", mtime=old)
    alma.analyze()
    for s in alma.suggestions():
        shown = alma.ok("suggestions", "show", str(s["id"]))
        touched = [op.get("path", op.get("src", "")) for op in shown["plan"] if op["op"] != "keep"]
        assert not any(p.startswith("user/Fotos/") for p in touched), shown
    (again,) = find(alma.suggestions(), kind="duplicates")
    assert any(
        said["id"] in e for e in alma.ok("suggestions", "show", str(again["id"]))["evidence"]
    )

    # What ALMA took from the reasons is in stats, each with the memory that holds it.
    reasons = {r["memory"]: r for r in alma.ok("stats")["reasons"]}
    assert reasons[said["id"]]["undo"] == f"alma-ctl memory forget {said['id']}"
    assert "user/Fotos" in reasons[said["id"]]["took"]
    # Forgetting what ALMA took from the reason undoes it.
    alma.ok("memory", "forget", said["id"])
    alma.ok("suggestions", "reject", str(again["id"]))
    alma.write("user/Fotos/viaje/IMG_2.jpg", b"otra\n", mtime=old)
    alma.write("user/Movil/IMG_2.jpg", b"otra\n", mtime=old)
    alma.analyze()
    (fresh,) = find(alma.suggestions(), kind="duplicates")
    plan = alma.ok("suggestions", "show", str(fresh["id"]))["plan"]
    assert any(op["op"] == "trash" and op["path"].startswith("user/Fotos/") for op in plan), plan
    alma.stop()


# --------------------------------------------------------------------------- report and audit

EXAMPLES = Path(__file__).parents[1] / "data" / "examples" / "logs"


def test_the_report_of_an_example_day_has_its_projects_hours_failures_and_promises(
    alma: DaemonRoot,
) -> None:
    for f in EXAMPLES.iterdir():
        alma.write(f"logs/{f.name}", f.read_bytes())
    alma.start()  # no model, memory off: the report is extractive
    report = alma.ok("report", "2026-11-17")
    text = report["text"]
    for needle in (
        "proyectoY",  # project
        "08:02",  # hours
        "22:47",
        '"/mnt/ALMA_RESIST" failed',  # failure
        "backup.sh exited with status 23",
        "Mañana ordeno la carpeta de proyectoY",  # promise
        "#backup",  # topic
    ):
        assert needle in text, (needle, text)
    written = alma.root / "logs/alma/2026-11-17-analisis.md"
    assert report["path"] == str(written) and written.read_text(encoding="utf-8") == text
    assert report["written"] is True
    written.write_text(text + "\nNota: llamar a Íñigo.\n", encoding="utf-8")
    human = alma.ctl("report", "2026-11-17", json_out=False).ok().stdout
    assert "Mañana ordeno la carpeta de proyectoY" in human
    assert "Nota: llamar a Íñigo." in human  # contract §2: written only if it does not exist
    assert "`alma-ctl report --refresh 2026-11-17` writes it again" in human
    again = alma.ok("report", "--refresh", "2026-11-17")
    assert again["written"] is True and again["text"] == text
    assert written.read_text(encoding="utf-8") == text
    bad = alma.ctl("report", "ayer")
    assert bad.rc == 2 and "YYYY-MM-DD" in bad.stderr
    alma.stop()


def test_the_audit_log_lists_an_accepted_organize_and_its_undo(alma: DaemonRoot) -> None:
    alma.set_settings("", "language", "es")  # the log is in the daemon's language
    alma.start()
    files = alma.messy_folder("user/inbox", 16)
    s = alma.wait_suggestion(kind="organize", target="user/inbox")
    action = alma.ok("suggestions", "accept", str(s["id"]))
    undo = alma.ok("undo")
    audit = (alma.root / "logs/alma/acciones.md").read_text(encoding="utf-8")
    assert audit.startswith("# Acciones de ALMA")
    done, undone = audit.split(f"· acción {undo['id']} ·")
    assert f"acción {action['id']} (organize)" in done
    # The log keeps the daemon's language, whatever the language alma-ctl reads the title in.
    title = "Ordenar user/inbox por tipo de archivo"
    assert f"la sugerencia {s['id']}: «{title}»" in done and "Decidió: la persona" in done
    for f in files:
        assert f"- movido user/inbox/{f.name} → user/inbox/" in done
    assert f"Deshacer: `alma-ctl undo {action['id']}`" in done
    assert f"deshace la acción {action['id']}" in undone
    for f in files:
        assert f"→ user/inbox/{f.name}\n" in undone
    alma.stop()


def test_a_failing_script_whose_config_names_a_wrong_path_gets_the_fix_in_its_words(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "es_ES.UTF-8")  # the daemon writes the finding in Spanish
    wrong, right = alma.root / "mnt" / "ALMA_RESIST", alma.root / "mnt" / "ALMA_RESISTE"
    right.mkdir(parents=True)
    alma.write("user/scripts/backup.sh", b'#!/bin/sh\n. ./backup.conf\nrsync -a ~ "$DEST"\n')
    alma.write("user/scripts/backup.conf", f'# destino\nDEST="{wrong}"\n'.encode())
    days = [time.strftime("%Y-%m-%d", time.localtime(time.time() - n * DAY)) for n in (3, 2, 1)]
    lines = [
        f'{d} 02:00:01 ERROR rsync: change_dir "{wrong}" failed: No such file or directory (2)'
        for d in days
    ]
    alma.write("logs/backup.log", ("\n".join(lines) + "\n").encode())
    alma.start()
    s = alma.wait_suggestion(kind="repeated_failure", target="logs/backup.log")
    assert f"user/scripts/backup.conf:2 lo nombra; existe {right}" in s["reason"]
    assert "El script: user/scripts/backup.sh" in s["evidence"]
    assert any(e.startswith("user/scripts/backup.conf:2: DEST=") for e in s["evidence"])
    alma.stop()


def _failing_backup(alma: DaemonRoot) -> tuple[bytes, bytes, Path]:
    """A script failing three days running on a path its config names; one close name exists.
    Returns the config's bytes, the bytes the fix should give, and the config's path."""
    wrong, right = alma.root / "mnt" / "ALMA_RESIST", alma.root / "mnt" / "ALMA_RESISTE"
    right.mkdir(parents=True)
    alma.write("user/scripts/backup.sh", b'#!/bin/sh\n. ./backup.conf\nrsync -a ~ "$DEST"\n')
    # Spanish in latin-1 and CRLF endings, kept byte for byte except the one value.
    original = f'# destino de la copia (a\xf1o)\r\nDEST="{wrong}"\r\nLOG="{wrong}.log"\r\n'
    fixed = f'# destino de la copia (a\xf1o)\r\nDEST="{right}"\r\nLOG="{wrong}.log"\r\n'
    conf = alma.write("user/scripts/backup.conf", original.encode("latin-1"))
    conf.chmod(0o640)
    days = [time.strftime("%Y-%m-%d", time.localtime(time.time() - n * DAY)) for n in (3, 2, 1)]
    lines = [
        f'{d} 02:00:01 ERROR rsync: change_dir "{wrong}" failed: No such file or directory (2)'
        for d in days
    ]
    alma.write("logs/backup.log", ("\n".join(lines) + "\n").encode())
    return original.encode("latin-1"), fixed.encode("latin-1"), conf


def test_the_wrong_path_in_the_config_is_fixed_by_an_edit_and_undo_gives_the_bytes_back(
    alma: DaemonRoot,
) -> None:
    original, fixed, conf = _failing_backup(alma)
    alma.set_settings("", "language", "es")  # acciones.md is in the daemon's language
    alma.start()
    s = alma.wait_suggestion(kind="repeated_failure", target="logs/backup.log")
    shown = alma.ok("suggestions", "show", str(s["id"]))
    (op,) = shown["plan"]
    assert op["op"] == "edit" and op["path"] == "user/scripts/backup.conf"
    assert s["files"] == 1
    (change,) = shown["diffs"]
    assert change["path"] == "user/scripts/backup.conf"
    assert f'-DEST="{alma.root}/mnt/ALMA_RESIST"' in change["diff"]
    assert f'+DEST="{alma.root}/mnt/ALMA_RESISTE"' in change["diff"]
    assert "LOG=" not in s["reason"]  # the note names the line the edit changes, no other
    words = alma.ctl("suggestions", "show", str(s["id"]), json_out=False)
    assert words.rc == 0 and "user/scripts/backup.conf" in words.stdout
    assert f'+DEST="{alma.root}/mnt/ALMA_RESISTE"' in words.stdout

    action = alma.ok("suggestions", "accept", str(s["id"]))
    assert action["status"] == "done"
    assert conf.read_bytes() == fixed  # exactly the one line changed
    assert conf.stat().st_mode & 0o777 == 0o640
    trash = alma.ok("trash", "list")
    assert [t["original"] for t in trash] == ["user/scripts/backup.conf"]
    audit = (alma.root / "logs/alma/acciones.md").read_text(encoding="utf-8")
    assert "- editado: user/scripts/backup.conf" in audit

    undo = alma.ok("undo")
    assert undo["undoes"] == action["id"]
    assert conf.read_bytes() == original  # byte for byte
    assert conf.stat().st_mode & 0o777 == 0o640
    assert not list(conf.parent.glob(".alma-tmp-*"))
    alma.stop()


def test_a_config_the_person_changed_is_never_overwritten_and_nothing_is_lost(
    alma: DaemonRoot,
) -> None:
    original, _fixed, conf = _failing_backup(alma)
    alma.start()
    s = alma.wait_suggestion(kind="repeated_failure", target="logs/backup.log")
    # The person fixes it by hand after the suggestion was made: accepting refuses.
    mine = original.replace(b"ALMA_RESIST", b"ALMA_OTRO")
    conf.write_bytes(mine)
    refused = alma.ctl("suggestions", "accept", str(s["id"]))
    assert refused.rc == 5, refused
    assert "user/scripts/backup.conf" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert conf.read_bytes() == mine

    assert alma.ok("suggestions", "show", str(s["id"]))["status"] == "expired"
    alma.stop()


def test_undo_refuses_a_config_the_person_changed_after_the_fix_and_both_versions_stay(
    alma: DaemonRoot,
) -> None:
    original, fixed, conf = _failing_backup(alma)
    alma.start()
    s = alma.wait_suggestion(kind="repeated_failure", target="logs/backup.log")
    action = alma.ok("suggestions", "accept", str(s["id"]))
    assert conf.read_bytes() == fixed
    later = fixed + b"# y una nota m\xeda\r\n"
    conf.write_bytes(later)
    no = alma.ctl("undo", str(action["id"]))
    assert no.rc == 5, no
    assert "user/scripts/backup.conf" in no.stderr
    # Both versions are reachable: the person's in place, the original in ALMA's trash.
    assert conf.read_bytes() == later
    (kept,) = [t for t in alma.ok("trash", "list") if t["action"] == action["id"]]
    assert (alma.root / kept["trash"]).read_bytes() == original
    alma.stop()


def test_long_days_offer_a_break_that_accepting_sets_and_the_chat_can_list(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "es_ES.UTF-8")  # the plan and the reminder in Spanish
    for n in (3, 2, 1):
        d = time.strftime("%Y-%m-%d", time.localtime(time.time() - n * DAY))
        alma.write(
            f"logs/{d}.md",
            f"# {d}\n\n## 07:30:00 · usuario\nEmpiezo.\n\n## 23:10:00 · usuario\nSigo.\n".encode(),
        )
    alma.start()
    s = alma.wait_suggestion(kind="long_hours", target="logs")
    assert any(e.startswith("Plan: si aceptas, a las ") for e in s["evidence"]), s["evidence"]
    assert alma.ok("reminders")["breaks"] == []
    alma.ok("suggestions", "accept", str(s["id"]))
    (pause,) = alma.ok("reminders")["breaks"]
    assert pause["suggestion_id"] == s["id"] and pause["kind"] == "break"
    at = datetime.fromisoformat(pause["at"])
    assert at > datetime.now() - timedelta(minutes=1) and f"{at:%H:%M}" in pause["text"]
    alma.stop()
