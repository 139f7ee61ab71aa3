"""Every answer a person reads is in their language and in sentences or labelled fields.

The answers below are the daemon's, as ``--json`` prints them; rendered under Spanish they must
hold no Python repr (``{``, ``'quoted'``), no op identity (``expect=``, ``ino``) and none of the
English words of the wire. And the words a person types (``útil``, ``rechazada``) mean the
wire's one value.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from control import cli, views
from control.commands import COMMANDS
from control.render import cell
from policies.i18n import language

ANALYSIS = {
    "proposed": [4, 5],
    "skipped": [
        {
            "kind": "organize",
            "target": "user/Descargas",
            "title": "Ordenar user/Descargas por tipo de archivo",
            "why": "deshiciste organize en user/Descargas, así que no lo vuelvo a proponer ahí",
            "by": [],
        }
    ],
    "pending": 3,
}
IDENTITY = {
    "dev": 65024, "ino": 2179513, "kind": "file", "size": 85, "mtime_ns": 1795784823400281697,
    "sha256": None, "boot": "4dc8a87f", "ctime_ns": 1795784823400281697,
}  # fmt: skip
SUGGESTION = {
    "id": 1, "kind": "organize", "status": "pending",
    "title": "Ordenar user/Descargas por tipo de archivo", "reason": "24 archivos sueltos de 5 tipos",
    "target": "user/Descargas", "files": 24, "needs_approval": True,
    "created_at": "2026-11-27T13:07:03+00:00", "updated_at": "2026-11-27T13:07:03+00:00",
    "evidence": ["imágenes/: 4 archivos (file00000.jpg, file00006.jpg)"],
    "action_id": None, "reject_reason": "No quiero subcarpetas en Descargas", "error": None,
    "plan": [
        {"op": "mkdir", "path": "user/Descargas/imágenes"},
        {"op": "move", "src": "user/Descargas/a.jpg", "dst": "user/Descargas/imágenes/a.jpg",
         "expect": IDENTITY},
        {"op": "trash", "path": "user/Descargas/a.tmp", "expect": IDENTITY},
        {"op": "keep", "path": "user/Fotos/a.jpg", "expect": IDENTITY},
        {"op": "restore", "trash": ".alma/trash/3/a.jpg", "path": "user/Fotos/a.jpg",
         "expect": IDENTITY},
        {"op": "memory_merge", "keep": "m1", "merge": ["m2", "m3"]},
    ],
}  # fmt: skip
FEEDBACK = {
    "suggestion_id": 1,
    "action_id": None,
    "kind": "organize",
    "feedback": "useful",
    "reason": None,
}
HISTORY = [
    {
        "id": 2, "suggestion_id": 1, "kind": "organize", "status": "done", "ops": 29,
        "auto": False, "started_at": "2026-11-27T13:07:05+00:00",
        "finished_at": "2026-11-27T13:07:05+00:00", "undone_by": None, "undoes": 1,
        "error": None, "sandbox": "landlock",
    },
    {
        "id": 1, "suggestion_id": 1, "kind": "organize", "status": "undone", "ops": 29,
        "auto": False, "started_at": "2026-11-27T13:07:04+00:00",
        "finished_at": "2026-11-27T13:07:04+00:00", "undone_by": 2, "undoes": None,
        "error": None, "sandbox": "landlock",
    },
]  # fmt: skip
REMINDERS = {
    "breaks": [
        {
            "suggestion_id": 6,
            "kind": "break",
            "at": "2026-11-27T20:00",
            "text": "Son las 20:00: lo acordado, toca parar y descansar.",
            "shown": False,
        }
    ],
    "pending_tasks": [
        {
            "suggestion_id": 7,
            "title": "Mandar el informe a Marta",
            "reason": "Dijiste «te mando el informe el lunes» y no consta que lo hicieras.",
        }
    ],
}
STATUS = {
    "running": True, "ready": True, "recovered_at_start": [], "memories": None,
    "memory": "ready", "autonomy": {"configured": "suggest", "effective": "suggest", "paused": False,
                 "auto_stopped_kinds": []},
}  # fmt: skip

#: Words of the wire (and of English labels) that a Spanish screen must not hold.
ENGLISH = re.compile(
    r"\b(kind|status|reason|target|needs|approval|updated|action id|reject|feedback|useful|"
    r"useless|breaks|pending|tasks|skipped|proposed|ready|done|undone|started|expect|dev|ino|"
    r"mtime|merge|keep|trash|into|from|none)\b",
    re.IGNORECASE,
)


def spanish(wire: str, result: object, args: dict[str, object] | None = None) -> str:
    with language("es"):
        text = views.render_result(wire, args or {}, result)
    assert "{" not in text and "}" not in text, text
    assert not re.search(r"'[^'\n]*'", text), text  # a Python repr quotes its strings
    assert "expect=" not in text and "ino" not in text.split(), text
    # A kind is a word people type (`autonomy allow organize`); a path is a name, not words.
    english = ENGLISH.findall(re.sub(r"\S*/\S*|organize", "", text))
    assert not english, (english, text)
    return text


def test_analyze_says_what_it_proposed_and_why_not_the_rest() -> None:
    text = spanish("analyze", ANALYSIS)
    assert "4, 5" in text
    assert "Ordenar user/Descargas por tipo de archivo" in text
    assert "deshiciste organize en user/Descargas" in text
    assert "3" in text
    assert "empezó" in spanish("analyze", {"started": True})
    assert spanish("analyze", {"proposed": [], "skipped": [], "pending": 0})


def test_a_suggestion_shows_what_its_ops_mean_never_their_identity() -> None:
    text = spanish("suggestions.show", SUGGESTION)
    assert "Sugerencia 1: Ordenar user/Descargas" in text
    assert "motivo del rechazo: No quiero subcarpetas en Descargas" in text
    assert "user/Descargas/a.jpg -> user/Descargas/imágenes/a.jpg" in text
    assert "65024" not in text and "2179513" not in text
    assert "pendiente" in text


def test_feedback_is_a_sentence() -> None:
    assert spanish("feedback", FEEDBACK) == "Anotado: la sugerencia 1 (organize) te fue útil."
    useless = {**FEEDBACK, "action_id": 3, "feedback": "useless", "reason": "ya lo hice yo"}
    text = spanish("feedback", useless)
    assert text.startswith("Anotado: la acción 3 (organize) no te fue útil.")
    assert "ya lo hice yo" in text


def test_an_undo_reads_as_an_undo_in_history() -> None:
    text = spanish("history", HISTORY)
    undo_row, undone_row = text.splitlines()[1:]
    assert "deshace la acción 1" in undo_row
    assert "deshecha" in undone_row


def test_reminders_are_sentences() -> None:
    text = spanish("reminders", REMINDERS)
    assert "Son las 20:00: lo acordado" in text
    assert "7. Mandar el informe a Marta" in text
    assert "pendientes" in text.casefold()
    empty = spanish("reminders", {"breaks": [], "pending_tasks": []})
    assert empty == "No hay descansos que recordar ni promesas pendientes."


def test_status_says_nothing_for_empty_lists_and_its_words_in_spanish() -> None:
    text = spanish("status", STATUS)
    assert "memoria: lista" in text
    assert "recuperado al arrancar: -" in text


def test_long_reasons_are_cut_at_a_word_and_never_inside_a_path() -> None:
    path = "user/proyectos/cliente-grande/entregas/2026-11-27/informe final.csv"
    text = f"Copias a mano {path} cada mañana desde hace cinco días"
    cut = cell(text, 60)
    assert cut.endswith("…") and len(cut) <= 60
    for word in cut.removesuffix("…").split():
        assert word in text.split()  # whole words only: a path is never cut in two
    one_path = "user/" + "carpeta-muy-larga/" * 6 + "informe.csv"
    assert cell(one_path, 40) == one_path  # a path alone is shown whole
    long_reason = {**SUGGESTION, "reason": text + " " + text}
    assert text + " " + text in spanish("suggestions.show", long_reason)


def read(argv: list[str]) -> cli.Line | None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        return cli.read_line(argv)


@pytest.mark.parametrize(
    ("typed", "wire"),
    [("útil", "util"), ("ÚTIL", "util"), ("util", "util"), ("Inútil", "inutil")],
)
def test_the_verdict_a_person_types_with_accents(typed: str, wire: str) -> None:
    assert COMMANDS["feedback"].by_name["verdict"].pick(typed) == wire
    for line in (cli.read_line(["feedback", "1", typed]), read(["feedback", "1", typed])):
        assert line is not None and line.args["verdict"] == wire


@pytest.mark.parametrize(
    ("typed", "wire"),
    [
        ("rechazada", "rejected"),
        ("Rechazada", "rejected"),
        ("rejected", "rejected"),
        ("pendiente", "pending"),
        ("aceptada", "accepted"),
        ("ejecutada", "executed"),
    ],
)
def test_the_status_a_person_reads_is_one_they_can_type(typed: str, wire: str) -> None:
    for lang in ("en", "es"):
        with language(lang):
            for argv in (
                ["suggestions", "list", "--status", typed],
                ["suggestions", "list", f"--status={typed}"],
            ):
                line = cli.read_line(argv)
                assert line.args["status"] == wire


def test_a_wrong_verdict_names_the_argument_as_typed() -> None:
    assert COMMANDS["feedback"].by_name["verdict"].pick("quizá") is None
    with language("es"), pytest.raises(cli.UsageError) as refused:
        cli.read_line(["feedback", "1", "quizá"])
    said = str(refused.value)
    assert "arg_verdict" not in said and "VERDICT" in said and "útil, inútil" in said


MEMORY = {
    "id": "5f0c2a", "content": "Decidí usar SQLite para la base de memorias", "tags": ["db"],
    "project": "alma", "theme": "trabajo", "importance": 4, "related_to": "", "memory_type": "architecture",
    "use_count": 2, "mentions": 1, "boosted": False, "created_at": "2026-11-22T10:00:00+00:00",
    "source": "cli", "layer": "L2", "kind": "add", "day": "2026-11-22", "event_date": "",
    "reply_to": "", "archived_at": "", "archive_reason": "", "merged_into": "", "archived": False,
}  # fmt: skip


def test_a_memory_and_the_stores_counts_are_labelled_in_spanish() -> None:
    text = spanish("memory.show", MEMORY)
    assert "contenido: Decidí usar SQLite" in text and "área de la vida: trabajo" in text
    stats = {
        "total": 3, "archived": 1, "by_tag": {"db": 2}, "by_project": {"alma": 3},
        "by_memory_type": {"architecture": 2, "principle": 1}, "by_layer": {"L2": 3},
        "embedder": "e5-small",
    }  # fmt: skip
    assert "por etiqueta: db 2" in spanish("memory.stats", stats)
    assert spanish("memory.examples", {"added": 12}) == "Guardados 12 recuerdos de ejemplo."
    assert spanish("trash.empty", {"removed": 0, "older_than_days": 30})
