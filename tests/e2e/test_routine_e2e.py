"""The routine through the real ``alma-agentd`` and ``alma-ctl`` gives a concrete plan: five
days of CSV files copied by hand into dated folders, said in the chat logs, become a script in
user/scripts/ that accepting writes and undo takes back, unless the person changed it."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tests.support.daemon import DaemonRoot, find

pytestmark = pytest.mark.e2e
SCRIPT = "user/scripts/copiar-entregas.sh"
SAYINGS = (
    "Otra mañana copiando a mano los CSV a entregas.",
    "Otra vez copiar ventas.csv a la carpeta de hoy, qué pereza.",
    "He copiado los CSV de datos a entregas, como cada día.",
    "Copié a mano los CSV a entregas, otra vez.",
    "Lunes: copiando los CSV a entregas antes de la reunión.",
)


def a_week_of_copies(alma: DaemonRoot) -> None:
    alma.set_settings("", "language", "es")
    alma.extra_env["LANG"] = "es_ES.UTF-8"  # a Spanish person: the daemon and alma-ctl
    alma.write("user/datos/ventas.csv", b"fecha;importe\n")
    alma.write("user/datos/clientes.csv", "id;nombre\n1;Begoña\n".encode())
    today = date.today()
    for back, saying in enumerate(SAYINGS):
        day = (today - timedelta(days=back + 1)).isoformat()
        alma.write(f"logs/{day}.md", f"# {day}\n\n## 09:05:00 · usuario\n{saying}\n".encode())
        for name in ("ventas.csv", "clientes.csv"):
            alma.write(f"user/entregas/{day}/{name}", f"{day};{name}\n".encode())


def the_routine(alma: DaemonRoot) -> dict[str, object]:
    alma.analyze()
    (s,) = find(alma.suggestions(), kind="routine", status="pending")
    return s


def test_the_routine_is_a_script_to_accept_and_undo_takes_it_to_the_trash(
    alma: DaemonRoot,
) -> None:
    a_week_of_copies(alma)
    alma.start()
    s = the_routine(alma)
    assert s["target"] == "user/entregas"
    shown = alma.ok("suggestions", "show", str(s["id"]))
    assert [op["op"] for op in shown["plan"]] == ["mkdir", "create"]
    assert shown["plan"][1]["path"] == SCRIPT
    assert f"Para ejecutarlo, desde la carpeta de ALMA: sh {SCRIPT}" in shown["evidence"]
    (change,) = shown["diffs"]
    assert change["path"] == SCRIPT and "+set -eu" in change["diff"]
    words = alma.ctl("suggestions", "show", str(s["id"]), json_out=False)
    assert words.rc == 0 and f"{SCRIPT} (un archivo nuevo; su contenido, abajo)" in words.stdout
    assert "copy_in user/datos/ventas.csv ventas.csv" in words.stdout

    action = alma.ok("suggestions", "accept", str(s["id"]))
    assert action["status"] == "done"
    script = alma.root / SCRIPT
    assert script.read_text(encoding="utf-8").startswith("#!/bin/sh\n")
    audit = (alma.root / "logs/alma/acciones.md").read_text(encoding="utf-8")
    assert f"- archivo creado: {SCRIPT}" in audit

    undo = alma.ok("undo")
    assert undo["undoes"] == action["id"] and undo["status"] == "done"
    assert not script.exists() and not (alma.root / "user/scripts").exists()
    (trashed,) = alma.ok("trash", "list")
    assert trashed["original"] == SCRIPT
    # A later analysis does not propose the same routine again under a new id.
    alma.analyze()
    assert find(alma.suggestions(), kind="routine", status="pending") == []
    alma.stop()


def test_undo_refuses_a_script_the_person_changed_and_leaves_it(alma: DaemonRoot) -> None:
    a_week_of_copies(alma)
    alma.start()
    s = the_routine(alma)
    alma.ok("suggestions", "accept", str(s["id"]))
    script = alma.root / SCRIPT
    mine = script.read_bytes() + "# revisado por mí: también los PDF\n".encode()
    script.write_bytes(mine)
    refused = alma.ctl("undo", json_out=False)
    assert refused.rc != 0
    assert SCRIPT in refused.stderr and "cambió" in refused.stderr, refused.stderr
    assert script.read_bytes() == mine
    assert alma.ok("trash", "list") == []
    alma.stop()
