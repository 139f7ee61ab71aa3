"""The ``routine`` detector: a copy done by hand on three days or more, told in the chat logs
(in any words) or seen in the dated folders, or both, becomes a script to review; a calm week
gives nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path

import pytest

from actions.ops import Create, Mkdir
from actions.planners import PlanResult
from agent.detectors.logs import detect_logs
from agent.detectors.routine import person_lines
from policies import i18n
from policies.config import Policy
from policies.i18n import language
from state.chatlog import parse
from tests.support.engine import AlmaRoot

NOW = time.time()
TODAY = date.fromtimestamp(NOW)


@pytest.fixture(autouse=True)
def _today() -> None:
    """The day as each test runs, not as the module was collected: a script ALMA writes copies
    into the folder of the day it runs, so a run that crosses midnight must ask it for that day."""
    global NOW, TODAY
    NOW = time.time()
    TODAY = date.fromtimestamp(NOW)


SAYINGS = (
    "Otra mañana copiando a mano los CSV a entregas.",
    "Otra vez copiar ventas.csv a la carpeta de hoy, qué pereza.",
    "He copiado los CSV de datos a entregas, como cada día.",
    "Copié a mano el CSV a entregas otra vez.",
    "Again I copied the CSV into entregas by hand.",
)


def chat(day: date, *lines: str) -> bytes:
    turns = "".join(f"## 09:{10 + i:02d}:00 · usuario\n{line}\n\n" for i, line in enumerate(lines))
    return f"# {day.isoformat()}\n\n{turns}".encode()


def week(tmp_path: Path, *, copied_days: int, said_days: int) -> AlmaRoot:
    files: dict[str, bytes] = {
        "user/datos/ventas.csv": b"fecha;importe\n",
        "user/datos/clientes.csv": b"id;nombre\n",
    }
    for back in range(5):
        day = TODAY - timedelta(days=back)
        talk = [SAYINGS[back]] if back < said_days else ["Hoy reunión con el equipo, todo bien."]
        files[f"logs/{day.isoformat()}.md"] = chat(day, *talk)
        if back < copied_days:
            for name in ("ventas.csv", "clientes.csv"):
                files[f"user/entregas/{day.isoformat()}/{name}"] = f"{day};{name}\n".encode()
    return AlmaRoot(tmp_path).build(files)


@pytest.fixture(autouse=True)
def spanish_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    """The script is named and written in the daemon's language, whoever asks."""
    monkeypatch.setattr(i18n, "_process_language", "es")


def routines(alma: AlmaRoot) -> list[PlanResult]:
    with language("es"):
        found = detect_logs(alma.root, Policy(), NOW)
    return [r for r in found if r.kind == "routine"]


def test_five_days_of_copies_by_hand_give_a_script_to_review(tmp_path: Path) -> None:
    alma = week(tmp_path, copied_days=5, said_days=5)
    (found,) = routines(alma)
    assert [op.op for op in found.plan] == ["mkdir", "create"]
    mkdir, create = found.plan
    assert mkdir == Mkdir("user/scripts") and isinstance(create, Create)
    script = create.path
    assert script == "user/scripts/copiar-entregas.sh"
    assert found.target == "user/entregas" and found.files == 1
    evidence = "\n".join(found.evidence)
    assert "sh user/scripts/copiar-entregas.sh" in evidence
    assert "copiando a mano los CSV a entregas" in evidence
    assert "ventas.csv, desde user/datos/ventas.csv" in evidence
    assert "ALMA nunca lo ejecuta" in evidence
    assert "a mano" in found.title and "user/entregas" in found.title


def test_the_script_is_safe_sh_that_copies_today_and_never_overwrites(tmp_path: Path) -> None:
    alma = week(tmp_path, copied_days=5, said_days=5)
    (found,) = routines(alma)
    op = found.plan[1]
    assert isinstance(op, Create)
    text = op.content.decode()
    assert text.startswith("#!/bin/sh\n") and "\nset -eu\n" in text
    assert "cp -p -- " in text and "[ -e " in text
    assert "copy_in user/datos/ventas.csv ventas.csv" in text
    assert "ALMA nunca lo ejecuta" in text
    # Run it as the person would: today's folder is made, the files copied, a second run
    # leaves them as they are.
    target = alma.path(op.path)
    target.parent.mkdir(parents=True)
    target.write_bytes(op.content)
    shutil.rmtree(alma.path(f"user/entregas/{TODAY.isoformat()}"))
    run = subprocess.run(
        ["sh", op.path], cwd=alma.root, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    today = alma.path(f"user/entregas/{TODAY.isoformat()}")
    assert (today / "ventas.csv").read_bytes() == b"fecha;importe\n"
    (today / "ventas.csv").write_bytes(b"mine\n")
    again = subprocess.run(["sh", op.path], cwd=alma.root, capture_output=True, text=True)
    assert again.returncode == 0 and "Ya está ahí" in again.stdout
    assert (today / "ventas.csv").read_bytes() == b"mine\n"


def test_the_same_routine_gets_the_same_fingerprint_as_the_days_go_on(tmp_path: Path) -> None:
    alma = week(tmp_path, copied_days=4, said_days=4)
    (first,) = routines(alma)
    alma.write(f"user/entregas/{TODAY.isoformat()}/ventas.csv", b"otra\n")
    (second,) = routines(alma)
    assert first.fingerprint == second.fingerprint


def test_a_scripts_folder_made_meanwhile_gives_a_new_plan_without_its_mkdir(
    tmp_path: Path,
) -> None:
    alma = week(tmp_path, copied_days=5, said_days=5)
    (first,) = routines(alma)
    alma.path("user/scripts").mkdir()
    (second,) = routines(alma)
    assert [op.op for op in second.plan] == ["create"]
    assert first.fingerprint != second.fingerprint


def test_a_script_already_there_is_not_proposed_again(tmp_path: Path) -> None:
    alma = week(tmp_path, copied_days=5, said_days=5)
    alma.write("user/scripts/copiar-entregas.sh", b"#!/bin/sh\n")
    assert routines(alma) == []


@pytest.mark.parametrize(
    ("copied", "said"), [(0, 0), (2, 2), (1, 2), (2, 0)], ids=["calm", "both-twice", "1-2", "2-0"]
)
def test_a_calm_week_gives_no_routine(tmp_path: Path, copied: int, said: int) -> None:
    assert routines(week(tmp_path, copied_days=copied, said_days=said)) == []


@pytest.mark.parametrize(("copied", "said"), [(2, 5), (1, 5), (1, 3)])
def test_the_words_alone_are_enough(tmp_path: Path, copied: int, said: int) -> None:
    (found,) = routines(week(tmp_path, copied_days=copied, said_days=said))
    assert found.target == "user/entregas"
    assert "tus notas dicen que lo hiciste a mano" in found.reason
    evidence = "\n".join(found.evidence)
    assert "sh user/scripts/copiar-entregas.sh ARCHIVO..." in evidence


@pytest.mark.parametrize(("copied", "said"), [(5, 2), (5, 1), (3, 0)])
def test_the_files_alone_are_enough(tmp_path: Path, copied: int, said: int) -> None:
    (found,) = routines(week(tmp_path, copied_days=copied, said_days=said))
    assert found.target == "user/entregas"
    assert "recibió el mismo archivo en una carpeta con fecha" in found.reason
    assert "ventas.csv, desde user/datos/ventas.csv" in "\n".join(found.evidence)


def test_a_folder_the_files_come_from_is_not_where_they_go(tmp_path: Path) -> None:
    # No folder of entregas: the words name user/datos only as where the CSV come from, so
    # nothing is copied there; the task told on five days is written down for the person.
    (found,) = routines(week(tmp_path, copied_days=0, said_days=5))
    assert not any(path.startswith("user/datos/") for op in found.plan for path in op.write_paths())
    op = found.plan[-1]
    assert isinstance(op, Create) and op.path == "user/scripts/rutina-datos.md"
    assert "Adónde va:\n" in op.content.decode()


def _told_week(tmp_path: Path, said: Sequence[str], files: dict[str, bytes]) -> AlmaRoot:
    for back, line in enumerate(said):
        day = TODAY - timedelta(days=back + 1)
        files[f"logs/{day.isoformat()}.md"] = chat(day, "Buenos días.", line, "Cierro por hoy.")
    return AlmaRoot(tmp_path).build(files)


def test_data_typed_into_a_sheet_on_three_days_is_a_checklist_to_review(tmp_path: Path) -> None:
    said = (
        "Otra vez pasando a mano los encargos de la tienda online a la hoja de pedidos.",
        "Me he tirado la mañana metiendo encargos en el Excel, uno detrás de otro, como a diario.",
        "Ya están copiados a mano los encargos de hoy en la hoja, igual que siempre.",
    )
    files = {
        "user/Oficina/pedidos_2026.xlsx": b"PK sheet",
        "user/Oficina/clientes.ods": b"PK sheet",
        "user/Descargas/encargo_1187.pdf": b"%PDF",
    }
    (found,) = routines(_told_week(tmp_path, said, files))
    assert found.target == "user/Oficina"
    assert "user/Oficina/pedidos_2026.xlsx" in found.title
    mkdir, op = found.plan
    assert isinstance(mkdir, Mkdir) and mkdir.path == "user/scripts"
    assert isinstance(op, Create) and op.path == "user/scripts/rutina-pedidos-2026.md"
    text = op.content.decode()
    assert all(line in text for line in said)
    assert "Adónde va: user/Oficina/pedidos_2026.xlsx" in text
    assert "ALMA nunca ejecuta nada" in text
    assert "Buenos días" not in text and "Cierro" not in text


def test_an_upload_to_a_website_told_on_three_days_is_a_checklist_too(tmp_path: Path) -> None:
    said = (
        "Exported the class marks again and uploaded them to the school portal by hand.",
        "Another evening uploading the marks to the portal myself, one class at a time.",
        "Marks exported and pushed to the school website manually, like every other day.",
    )
    (found,) = routines(_told_week(tmp_path, said, {"user/Clases/notas.ods": b"PK"}))
    assert found.target == "user"
    op = found.plan[-1]
    assert isinstance(op, Create) and op.path == "user/scripts/rutina-tarea.md"
    assert all(line in op.content.decode() for line in said)


def test_the_checklist_is_written_only_where_the_policy_allows(tmp_path: Path) -> None:
    said = (
        "Otra vez pasando a mano los encargos de la tienda online a la hoja de pedidos.",
        "Me he tirado la mañana metiendo encargos en el Excel, uno detrás de otro, como a diario.",
        "Ya están copiados a mano los encargos de hoy en la hoja, igual que siempre.",
    )
    alma = _told_week(tmp_path, said, {"user/Oficina/pedidos_2026.xlsx": b"PK"})
    policy = Policy.model_validate(
        {"zones": {"read_only": ["system", "logs", "docs", "user/scripts"]}}
    )
    with language("es"):
        found = detect_logs(alma.root, policy, NOW)
    assert [r for r in found if r.kind == "routine"] == []


@pytest.mark.parametrize(
    "said",
    [
        (  # one manual copy, the other days ordinary
            "Hoy he copiado a mano todas las fotos del viaje al disco de Copias.",
            "Reunión con la gestora y luego a revisar presupuestos.",
            "Tarde tranquila, he cerrado dos encargos.",
        ),
        (  # three different things done by hand once each
            "Hoy he pasado a mano los contactos del móvil viejo al nuevo.",
            "He metido en una hoja los gastos de la boda, por fin terminado.",
            "Esta tarde he renombrado a mano los vídeos del verano.",
        ),
        (  # someone else's chore
            "Mi compañero se ha vuelto a pasar la mañana pasando albaranes al Excel a mano.",
            "Mi socia sube otra vez a mano las facturas a la web del banco, cada día igual.",
            "My assistant copied the day's orders into the sheet by hand again.",
        ),
    ],
    ids=["one-off", "different-one-offs", "someone-elses"],
)
def test_a_task_done_once_or_by_someone_else_is_no_routine(
    tmp_path: Path, said: Sequence[str]
) -> None:
    files = {"user/Oficina/pedidos_2026.xlsx": b"PK", "user/Copias/leeme.txt": b"x"}
    assert routines(_told_week(tmp_path, said, files)) == []


def test_logs_that_speak_of_other_copies_are_not_its_evidence(tmp_path: Path) -> None:
    alma = week(tmp_path, copied_days=5, said_days=0)
    for back in range(5):
        day = TODAY - timedelta(days=back)
        alma.write(
            f"logs/{day.isoformat()}.md",
            chat(day, "Hice la copia de seguridad del portátil.", "Copié las fotos al disco."),
        )
    (found,) = routines(alma)
    assert not any("portátil" in e or "fotos" in e for e in found.evidence)
    assert "recibió el mismo archivo" in found.reason


def test_only_the_persons_lines_count_and_accents_fold() -> None:
    text = (
        "# 2026-11-23\n\n## 09:00:00 · usuario\nCOPIÉ a mano el informe\n\n"
        "## 09:00:05 · alma\nPuedo copiar el informe por ti.\n\n"
    )
    (line,) = person_lines([(date(2026, 11, 23), "logs/2026-11-23.md", parse(text))])
    assert line.where == "logs/2026-11-23.md:4" and "copie" in line.words


def test_the_script_names_todays_folder_as_the_person_does(tmp_path: Path) -> None:
    alma = week(tmp_path, copied_days=0, said_days=5)
    alma.write("user/informes/informe.pdf", b"%PDF-1.4\n")
    for back in range(3):
        day = TODAY - timedelta(days=back)
        alma.write(f"user/entregas/semana {day.strftime('%Y%m%d')} (v1)/informe.pdf", b"%PDF\n")
        alma.write(
            f"logs/{day.isoformat()}.md", chat(day, "Otra vez copiar el informe a mano, uf.")
        )
    (found,) = routines(alma)
    op = found.plan[1]
    assert isinstance(op, Create)
    text = op.content.decode()
    assert "dest='user/entregas/semana '\"$(date +%Y%m%d)\"' (v1)'" in text
    target = alma.path(op.path)
    target.parent.mkdir(parents=True)
    target.write_bytes(op.content)
    shutil.rmtree(alma.path(f"user/entregas/semana {TODAY.strftime('%Y%m%d')} (v1)"))
    run = subprocess.run(["sh", op.path], cwd=alma.root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    made = alma.path(f"user/entregas/semana {TODAY.strftime('%Y%m%d')} (v1)/informe.pdf")
    assert made.read_bytes() == b"%PDF-1.4\n"


def test_the_same_content_under_other_names_is_the_same_copy(tmp_path: Path) -> None:
    alma = week(tmp_path, copied_days=0, said_days=0)
    plantilla = "Plantilla de la entrega: ñandú\n".encode()
    alma.write("user/plantillas/plantilla.odt", plantilla)
    for back in range(4):
        day = TODAY - timedelta(days=back)
        alma.write(f"user/entregas/{day.isoformat()}/copia de plantilla {back}.odt", plantilla)
        alma.write(f"logs/{day.isoformat()}.md", chat(day, "Copiando la plantilla a mano."))
    (found,) = routines(alma)
    op = found.plan[1]
    assert isinstance(op, Create)
    assert "copy_in user/plantillas/plantilla.odt plantilla.odt" in op.content.decode()
    # Other bytes on each day are not one file copied.
    for back in range(4):
        day = TODAY - timedelta(days=back)
        alma.write(f"user/entregas/{day.isoformat()}/copia de plantilla {back}.odt", b"x%d" % back)
    assert routines(alma) == []


def test_an_english_week_gets_an_english_script(tmp_path: Path) -> None:
    files = {"user/reports/weekly.pdf": b"%PDF-1.4\n"}
    for back, line in enumerate(
        (
            "Copying the weekly report into deliveries by hand, again.",
            "Copied weekly.pdf to today's deliveries folder.",
            "Again I copy the report by hand to deliveries.",
        )
    ):
        day = TODAY - timedelta(days=back)
        files[f"logs/{day.isoformat()}.md"] = chat(day, line)
        files[f"user/deliveries/{day.isoformat()}/weekly.pdf"] = b"%PDF-1.4\n"
    alma = AlmaRoot(tmp_path).build(files)
    i18n.set_language("en")
    try:
        with language("en"):
            (found,) = [r for r in detect_logs(alma.root, Policy(), NOW) if r.kind == "routine"]
    finally:
        i18n.set_language(None)
    assert found.title == "You copy weekly.pdf into a dated folder of user/deliveries by hand"
    create = found.plan[-1]
    assert isinstance(create, Create) and create.path == "user/scripts/copy-deliveries.sh"
    assert "To run it, from the ALMA folder: sh user/scripts/copy-deliveries.sh" in found.evidence


def test_a_file_named_with_its_days_date_is_a_routine_from_the_files_alone(
    tmp_path: Path,
) -> None:
    files: dict[str, bytes] = {}
    for back in range(4):
        d = (TODAY - timedelta(days=back)).isoformat()
        files[f"user/exports/pedidos_{d}.csv"] = f"{d};1\n".encode()
        if back:  # today's is not copied yet
            files[f"user/reports/{d}/pedidos_{d}.csv"] = f"{d};1\n".encode()
    alma = AlmaRoot(tmp_path).build(files)
    (found,) = routines(alma)
    assert found.target == "user/reports"
    assert "pedidos_YYYY-MM-DD.csv, desde user/exports, llega a 3 carpetas" in "\n".join(
        found.evidence
    )
    op = found.plan[-1]
    assert isinstance(op, Create)
    target = alma.path(op.path)
    target.parent.mkdir(parents=True)
    target.write_bytes(op.content)
    run = subprocess.run(["sh", op.path], cwd=alma.root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    today = TODAY.isoformat()
    copied = alma.path(f"user/reports/{today}/pedidos_{today}.csv")
    assert copied.read_bytes() == f"{today};1\n".encode()


def test_a_task_told_in_other_words_on_three_days_is_a_routine(tmp_path: Path) -> None:
    told = (
        "Arrastré a Pedidos lo que salió del escáner, y la carpeta del día la hice yo.",
        "Hoy también he metido yo misma los albaranes en pedidos, cada uno en su fecha.",
        "Moved today's scans into Pedidos by hand again, one more dated folder.",
    )
    files: dict[str, bytes] = {}
    for back, line in enumerate(told):
        day = TODAY - timedelta(days=back + 1)
        files[f"logs/{day.isoformat()}.md"] = chat(day, "Buenos días.", line)
        files[f"user/Pedidos/{day.isoformat()}/albaran_{back}.pdf"] = f"%PDF {back}".encode()
    alma = AlmaRoot(tmp_path).build(files)
    (found,) = routines(alma)
    assert found.target == "user/Pedidos"
    evidence = "\n".join(found.evidence)
    assert all(line[:40] in evidence for line in told)
    assert "Buenos días" not in evidence
    op = found.plan[-1]
    assert isinstance(op, Create) and op.path == "user/scripts/copiar-pedidos.sh"
    # Nothing the files show to copy: the script copies what it is given into today's folder.
    target = alma.path(op.path)
    target.parent.mkdir(parents=True)
    target.write_bytes(op.content)
    alma.write("user/escaner/hoja.pdf", b"%PDF hoy\n")
    run = subprocess.run(
        ["sh", op.path, "user/escaner/hoja.pdf"],
        cwd=alma.root,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    made = alma.path(f"user/Pedidos/{TODAY.isoformat()}/hoja.pdf")
    assert made.read_bytes() == b"%PDF hoy\n"


def test_an_ordinary_week_that_names_its_folders_is_no_routine(tmp_path: Path) -> None:
    ordinary = (
        "He guardado la factura de la luz en Facturas.",
        "Hoy reviso las facturas del mes y llamo al gestor.",
        "Facturas al día, qué alivio.",
        "I saved the invoice in Facturas, all good.",
    )
    files: dict[str, bytes] = {}
    for back, line in enumerate(ordinary):
        day = TODAY - timedelta(days=back + 1)
        files[f"logs/{day.isoformat()}.md"] = chat(day, line)
        files[f"user/Facturas/{day.isoformat()}/factura_{back}.pdf"] = f"%PDF {back}".encode()
    assert routines(AlmaRoot(tmp_path).build(files)) == []


def test_the_words_of_fewer_days_than_a_routine_needs_are_not_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.detectors import meaning

    def refuse(texts: object) -> None:
        raise AssertionError("embedded")

    monkeypatch.setattr(meaning, "vectors", refuse)
    alma = week(tmp_path, copied_days=5, said_days=2)
    kept = {f"{(TODAY - timedelta(days=back)).isoformat()}.md" for back in (0, 1)}
    for log in alma.path("logs").glob("*.md"):  # the person wrote on two days only
        if log.name not in kept:
            log.unlink()
    (found,) = routines(alma)  # the files alone, the two days' words never read
    assert "recibió el mismo archivo" in found.reason


def test_without_the_embedder_the_files_still_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.detectors import told
    from state.memory import sentences

    def broken(texts: object, embedder: str = "") -> None:
        raise RuntimeError("no model")

    monkeypatch.setattr(sentences, "sentence_vectors", broken)
    monkeypatch.setattr(told.READER, "_model", None)
    monkeypatch.setattr("agent.detectors.meaning._FAILED", [])
    assert routines(week(tmp_path, copied_days=2, said_days=5)) == []  # words unread
    (found,) = routines(week(tmp_path / "b", copied_days=5, said_days=5))
    assert "recibió el mismo archivo" in found.reason


def test_a_dated_file_with_no_original_is_copied_from_the_command_line(tmp_path: Path) -> None:
    files: dict[str, bytes] = {}
    for back in range(1, 4):
        d = (TODAY - timedelta(days=back)).isoformat()
        files[f"user/reports/{d}/orders_{d}.csv"] = f"{d};1\n".encode()
    (found,) = routines(AlmaRoot(tmp_path).build(files))
    evidence = "\n".join(found.evidence)
    assert "orders_YYYY-MM-DD.csv llega a 3 carpetas con fecha de user/reports" in evidence
    assert "sh user/scripts/copiar-reports.sh ARCHIVO..." in evidence


@pytest.mark.parametrize(
    ("said", "files", "target", "checklist"),
    [
        (  # the same report sent by hand, its folder named in the singular
            (
                "He vuelto a mandar a mano el informe de ventas a los tres jefes.",
                "Otra vez adjuntando el informe del día en el correo a dirección, uno por uno.",
                "Hoy también he enviado yo el informe a cada jefe por separado, como siempre.",
            ),
            {"user/Informes/ventas_semana.xlsx": b"PK"},
            "user/Informes",
            "user/scripts/rutina-informes.md",
        ),
        (  # scans renamed one by one in their folder
            (
                "Otra tarde renombrando a mano los escaneos de hoy, uno por uno.",
                "He vuelto a cambiar a mano el nombre de cada escaneo con la fecha y el cliente.",
                "Renamed the day's escaneos by hand again, date first, like every afternoon.",
            ),
            {"user/Escaneos/scan0001.pdf": b"%PDF"},
            "user/Escaneos",
            "user/scripts/rutina-escaneos.md",
        ),
    ],
    ids=["report-sent", "scans-renamed"],
)
def test_a_task_about_a_folder_that_copies_nothing_is_a_checklist_for_that_folder(
    tmp_path: Path, said: Sequence[str], files: dict[str, bytes], target: str, checklist: str
) -> None:
    (found,) = routines(_told_week(tmp_path, said, dict(files)))
    assert found.target == target
    op = found.plan[-1]
    assert isinstance(op, Create) and op.path == checklist  # no copy script into the folder
    assert f"Adónde va: {target}" in op.content.decode()


def test_a_sheet_named_with_a_code_is_found_by_its_words(tmp_path: Path) -> None:
    # "lecturas_4C.xlsx": the class code is no word a person says of the sheet
    said = (
        "He vuelto a pasar a mano al Excel de lecturas las fichas en papel de los niños.",
        "Otra vez tecleando las fichas de los niños, nombre a nombre, como cada día.",
        "Fichas de los niños pasadas a mano otra vez, una por una.",
    )
    files = {
        "user/Escuela/lecturas_4C.xlsx": b"PK sheet",
        "user/Escuela/Actas/acta_octubre.txt": b"acta",
    }
    (found,) = routines(_told_week(tmp_path, said, files))
    assert found.target == "user/Escuela"
    assert "user/Escuela/lecturas_4C.xlsx" in found.title


def _arriving(tmp_path: Path, names: dict[str, int]) -> AlmaRoot:
    """Files by path, each arriving the day its value says (days back from today)."""
    alma = AlmaRoot(tmp_path).build({})
    for rel, back in names.items():
        path = alma.write(rel, f"{rel}\n".encode())
        when = NOW - back * 86400
        os.utime(path, (when, when))
    return alma


def _export_days(template: str, days: int = 4) -> dict[str, int]:
    return {template.format((TODAY - timedelta(days=b)).isoformat()): b for b in range(days)}


def test_a_dated_export_arriving_each_day_in_one_folder_is_a_checklist_to_review(
    tmp_path: Path,
) -> None:
    alma = _arriving(tmp_path, _export_days("user/cole/listas/asistencia_{}.csv"))
    (found,) = routines(alma)
    assert found.target == "user/cole/listas"
    assert "asistencia_YYYY-MM-DD.csv llega a user/cole/listas en 4 días" in "\n".join(
        found.evidence
    )
    op = found.plan[-1]
    assert isinstance(op, Create) and op.path == "user/scripts/rutina-listas.md"
    assert "Lo que muestran los archivos" in op.content.decode()


@pytest.mark.parametrize(
    "template",
    [
        "user/Fotos/IMG_{}_120344.jpg",  # a camera's
        "user/Descargas/extracto_{}.pdf",  # a browser's
        "user/scripts/logs/copia_{}.log",  # a program's log
        "user/notas/grabacion_{}.m4a",  # a recorder's
    ],
)
def test_what_a_device_or_a_program_writes_each_day_is_no_routine(
    tmp_path: Path, template: str
) -> None:
    assert routines(_arriving(tmp_path, _export_days(template))) == []


def test_dated_files_on_two_days_or_made_all_at_once_are_no_routine(tmp_path: Path) -> None:
    assert routines(_arriving(tmp_path, _export_days("user/a/parte_{}.csv", days=2))) == []
    at_once = {rel: 0 for rel in _export_days("user/b/parte_{}.csv", days=5)}
    at_once.pop(f"user/b/parte_{TODAY.isoformat()}.csv")  # old dates, all copied in today
    assert routines(_arriving(tmp_path / "b", at_once)) == []
