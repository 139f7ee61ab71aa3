"""A routine from either kind of evidence, through the real ``alma-agentd`` and ``alma-ctl``: the
person's words alone (phrasings of the blind weeks in tests/data/heldout32/weeks, never a
command or the same verb twice) and the files alone (a dated file arriving in dated folders,
nothing said). Each becomes a script to review that accepting writes; a task that copies no
file (data typed into a sheet) becomes a checklist to review."""

from __future__ import annotations

import subprocess
from datetime import date, timedelta

import pytest

from tests.support.daemon import DaemonRoot, find

pytestmark = pytest.mark.e2e

#: w1_fotografa_bodas: four days, four ways of saying it in Spanish.
TOLD_ES = (
    "He vuelto a copiar a mano los exportados de hoy a la carpeta de entregas, la de los Ruiz, "
    "con su carpeta de la fecha.",
    "El previo de Marta y Dani ya está en entregas: lo he exportado y lo he puesto yo en su "
    "carpetita de hoy, como siempre.",
    "Otra vez arrastrando lo que saqué de Lightroom hasta Entregas, creando a mano la carpeta "
    "con la fecha de hoy. Qué rollo, de verdad.",
    "Ya he pasado lo de hoy a Entregas: su carpeta con la fecha y el zip dentro, igual que cada "
    "día que entrego algo.",
)
#: w3_backend_developer: four days in English.
TOLD_EN = (
    "Pulled today's orders export out of the admin panel and dropped it into reports/ by hand "
    "again, new dated folder and all. Finance wants it daily now.",
    "Same dance as Monday: downloaded the orders CSV, made today's folder under reports, copied "
    "it in. Five minutes, but annoying.",
    "finance pinged again, so today's orders file is now sitting in reports under today's "
    "date. manual, as usual.",
    "Friday's orders CSV grabbed and filed in its dated folder in reports. Same as every day "
    "this week.",
)
ORDINARY = "Buenos días, empiezo con el correo."


def day(back: int) -> str:
    return (date.today() - timedelta(days=back)).isoformat()


def chat(alma: DaemonRoot, back: int, *lines: str) -> None:
    turns = "".join(f"## 09:{10 + i:02d}:00 · usuario\n{line}\n\n" for i, line in enumerate(lines))
    alma.write(f"logs/{day(back)}.md", f"# {day(back)}\n\n{turns}".encode())


def routine(alma: DaemonRoot) -> dict[str, object] | None:
    alma.analyze()
    found = find(alma.suggestions(), kind="routine", status="pending")
    assert len(found) <= 1, found
    return found[0] if found else None


def test_a_routine_told_in_spanish_words_alone(alma: DaemonRoot) -> None:
    alma.set_settings("", "language", "es")
    alma.extra_env["LANG"] = "es_ES.UTF-8"
    # The dated folders hold another file each day: the files alone are no routine.
    for back, name in enumerate(("ruiz_web.zip", "previo.zip", "galeria.zip", "preboda.zip"), 1):
        alma.write(f"user/Entregas/{day(back)}/{name}", name.encode())
    for back in range(1, 5):
        chat(alma, back, ORDINARY)
    alma.start()
    assert routine(alma) is None
    for back, line in enumerate(TOLD_ES, 1):
        chat(alma, back, ORDINARY, line)
    s = routine(alma)
    assert s is not None and s["target"] == "user/Entregas"
    shown = alma.ok("suggestions", "show", str(s["id"]))
    evidence = "\n".join(shown["evidence"])
    assert all(line[:50] in evidence for line in TOLD_ES), evidence
    assert ORDINARY not in evidence
    assert "sh user/scripts/copiar-entregas.sh ARCHIVO..." in evidence
    assert [op["op"] for op in shown["plan"]] == ["mkdir", "create"]
    action = alma.ok("suggestions", "accept", str(s["id"]))
    assert action["status"] == "done"
    # The person runs it with today's export: today's dated folder, the file in it.
    alma.write("user/Lightroom/export/boda_aranjuez.zip", b"zip\n")
    run = subprocess.run(
        ["sh", "user/scripts/copiar-entregas.sh", "user/Lightroom/export/boda_aranjuez.zip"],
        cwd=alma.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert (alma.root / f"user/Entregas/{day(0)}/boda_aranjuez.zip").read_bytes() == b"zip\n"
    alma.stop()


def test_a_routine_told_in_english_words_alone(alma: DaemonRoot) -> None:
    alma.set_settings("", "language", "en")
    alma.extra_env["LANG"] = "en_US.UTF-8"
    alma.write("user/reports/README.txt", b"finance reports\n")  # no dated folder, no CSV
    for back, line in enumerate(TOLD_EN, 1):
        chat(alma, back, "Morning, standup at ten.", line)
    alma.start()
    s = routine(alma)
    assert s is not None and s["target"] == "user/reports"
    shown = alma.ok("suggestions", "show", str(s["id"]))
    assert "On 4 days your notes say you did it by hand" in shown["reason"]
    assert shown["plan"][-1]["path"] == "user/scripts/copy-reports.sh"
    alma.stop()


def test_a_routine_from_the_files_alone(alma: DaemonRoot) -> None:
    alma.set_settings("", "language", "en")
    alma.extra_env["LANG"] = "en_US.UTF-8"
    for back in range(0, 5):
        alma.write(f"user/Downloads/orders_{day(back)}.csv", f"{day(back)};7\n".encode())
        if back:
            alma.write(f"user/reports/{day(back)}/orders_{day(back)}.csv", b"copied\n")
        chat(alma, back, "Morning, standup at ten.", "Reviewed two pull requests.")
    alma.start()
    s = routine(alma)
    assert s is not None and s["target"] == "user/reports"
    shown = alma.ok("suggestions", "show", str(s["id"]))
    assert "got the same file in a dated folder on 4 days" in shown["reason"]
    assert not any("standup" in e for e in shown["evidence"])
    alma.ok("suggestions", "accept", str(s["id"]))
    run = subprocess.run(
        ["sh", "user/scripts/copy-reports.sh"], cwd=alma.root, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    today = alma.root / f"user/reports/{day(0)}/orders_{day(0)}.csv"
    assert today.read_bytes() == f"{day(0)};7\n".encode()
    alma.stop()


#: A manual task that copies no file: data typed into a sheet, told three ways (our own words).
TYPED_ES = (
    "Otra vez pasando a mano los encargos de la tienda online a la hoja de pedidos.",
    "Me he tirado la mañana metiendo encargos en el Excel, uno detrás de otro, como a diario.",
    "Ya están copiados a mano los encargos de hoy en la hoja, igual que siempre.",
)


def test_a_task_typed_into_a_sheet_is_a_checklist_to_accept_and_undo(alma: DaemonRoot) -> None:
    alma.set_settings("", "language", "es")
    alma.extra_env["LANG"] = "es_ES.UTF-8"
    alma.write("user/Oficina/pedidos_2026.xlsx", b"PK sheet\n")
    for back, line in enumerate(TYPED_ES, 1):
        chat(alma, back, ORDINARY, line)
    alma.start()
    s = routine(alma)
    assert s is not None and s["target"] == "user/Oficina"
    shown = alma.ok("suggestions", "show", str(s["id"]))
    checklist = "user/scripts/rutina-pedidos-2026.md"
    assert [op["op"] for op in shown["plan"]] == ["mkdir", "create"]
    assert shown["plan"][-1]["path"] == checklist
    evidence = "\n".join(shown["evidence"])
    assert all(line[:50] in evidence for line in TYPED_ES) and ORDINARY not in evidence
    action = alma.ok("suggestions", "accept", str(s["id"]))
    assert action["status"] == "done"
    text = (alma.root / checklist).read_text(encoding="utf-8")
    assert "Adónde va: user/Oficina/pedidos_2026.xlsx" in text
    assert all(line in text for line in TYPED_ES)
    undo = alma.ok("undo")
    assert undo["undoes"] == action["id"] and undo["status"] == "done"
    assert not (alma.root / checklist).exists()
    alma.stop()
