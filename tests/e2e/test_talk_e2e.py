"""A Spanish person's week through the real daemon and the real alma-ctl, read as a person reads
it (no --json): sentences and labelled fields in Spanish, no Python reprs, no op identities, an
undo named as an undo, and the words the person reads accepted where they type them.
"""

from __future__ import annotations

import re

import pytest

from tests.support.daemon import DaemonRoot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

#: Words of the wire and of English labels that a Spanish screen must not hold.
ENGLISH = re.compile(
    r"\b(kind|status|reason|target|needs|approval|updated|feedback|useful|useless|breaks|"
    r"pending|tasks|skipped|proposed|ready|done|undone|started|expect|mtime|none)\b",
    re.IGNORECASE,
)


def human(alma: DaemonRoot, *args: str) -> str:
    out = alma.ctl(*args, json_out=False).ok().stdout
    assert "{" not in out and "}" not in out, out
    assert not re.search(r"'[^'\n]*'", out), out  # a Python repr quotes its strings
    assert "expect=" not in out and "arg_" not in out, out
    # A kind is a word people type (`autonomy allow organize`); a path is a name, not words.
    english = ENGLISH.findall(re.sub(r"\S*/\S*|organize", "", out))
    assert not english, (args, english, out)
    return out


def test_a_spanish_week_reads_in_spanish_sentences(alma: DaemonRoot) -> None:
    alma.extra_env["LANG"] = "es_ES.UTF-8"  # the daemon and every alma-ctl below
    alma.start()
    folder = "user/Descargas"
    alma.messy_folder(folder, 24)

    analyzed = human(alma, "analyze", "--wait")
    sid = alma.wait_suggestion(kind="organize", target=folder)["id"]
    assert f"Propuesta 1 sugerencia: {sid}." in analyzed or "te espera" in analyzed

    shown = human(alma, "suggestions", "show", str(sid))
    assert shown.startswith(f"Sugerencia {sid}: Ordenar {folder}")
    assert "estado: pendiente" in shown and "espera tu aprobación: sí" in shown
    assert f"{folder}/file00000.jpg -> {folder}/imágenes/file00000.jpg" in shown

    accepted = human(alma, "suggestions", "accept", str(sid))
    action = int(accepted.split()[1].rstrip(":"))
    noted = human(alma, "feedback", str(sid), "útil")
    assert noted == f"Anotado: la sugerencia {sid} (ordenar carpetas) te fue útil.\n"
    assert alma.ok("stats")["kinds"][0]["useful"] == 1  # the wire kept its one value

    before = human(alma, "history")
    assert "deshace" not in before
    undone = human(alma, "undo")
    assert f"deshace la acción {action}" in undone
    after = human(alma, "history").splitlines()
    undo_row = next(line for line in after if f"deshace la acción {action}" in line)
    assert undo_row.split()[0] != str(action)
    assert "deshecha" in next(line for line in after if line.split()[0] == str(action))

    assert human(alma, "reminders") == "No hay descansos que recordar ni promesas pendientes.\n"
    stats = human(alma, "stats")
    assert "ÚTILES" in stats and "Ya no se propone: ordenar carpetas en user/Descargas" in stats

    other = "user/escritorio"
    alma.messy_folder(other, 24)
    alma.analyze()
    rid = alma.wait_suggestion(kind="organize", target=other)["id"]
    reason = f"esa carpeta la ordeno yo, y {other}/proyectos/2026/entregas también"
    human(alma, "suggestions", "reject", str(rid), "--reason", reason)
    rejected = human(alma, "suggestions", "list", "--status", "rechazada")
    assert str(rid) in rejected and "rechazada" in rejected
    assert human(alma, "suggestions", "list", "--status", "Rejected") == rejected
    shown = human(alma, "suggestions", "show", str(rid))
    assert f"motivo del rechazo: {reason}" in shown  # whole, its path never cut

    status = human(alma, "status")
    assert "memoria: la memoria está desactivada" in status
    assert "recuperado al arrancar: -" in status

    bad = alma.ctl("feedback", str(sid), "quizá", json_out=False)
    assert bad.rc == 2 and "VERDICT" in bad.stderr and "arg_verdict" not in bad.stderr
