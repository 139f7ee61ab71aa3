"""One language per screen, against the real daemon and the real alma-ctl.

The person's locale decides: under ``LANG=es_ES.UTF-8`` help, errors, ``status``, suggestion
titles and the folders organize creates are Spanish; under ``en_US.UTF-8`` or ``C`` English.
The Spanish folder names (``imágenes/``, ``vídeos/``...) go through accept and undo.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.daemon import DaemonRoot
from tests.support.trees import snapshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

EXTS = ("jpg", "pdf", "mp4", "mp3", "ods", "txt")


def _organize(alma: DaemonRoot, folder: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    files = alma.messy_folder(folder, 24, exts=EXTS)
    assert len(files) == 24
    listed = alma.wait_suggestion(kind="organize", target=folder, timeout=60)
    shown = alma.ok("suggestions", "show", str(listed["id"]))
    return listed, shown["plan"]


def test_a_spanish_person_reads_spanish_and_gets_spanish_folders(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "es_ES.UTF-8")  # the daemon and every alma-ctl below
    alma.start()

    help_text = alma.ctl("--help", json_out=False).ok().stdout
    assert "Códigos de salida" in help_text and "opciones:" in help_text
    assert "Exit codes" not in help_text

    bad = alma.ctl("trash", "empty", "--older-than", "-1", json_out=False)
    assert bad.rc == 2
    assert bad.stderr == (
        "--older-than de `alma-ctl trash empty` debe ser un número entero de 0 a 100000.\n"
    )
    assert "older_than_days" not in bad.stderr
    missing = alma.ctl("suggestions", "show", "999", json_out=False)  # the daemon's own sentence
    assert missing.rc == 6
    assert missing.stderr.startswith("No existe la sugerencia 999; ")

    status = alma.ctl("status", json_out=False).ok().stdout
    assert "en marcha: sí" in status and f"raíz: {alma.root}" in status
    assert "running" not in status and "pending_suggestions" not in status

    folder = "user/fotos del año"
    listed, plan = _organize(alma, folder)
    before = snapshot(alma.root / "user", skip=())
    assert listed["title"] == f"Ordenar {folder} por tipo de archivo"
    created = sorted(op["path"] for op in plan if op["op"] == "mkdir")
    assert created == [
        f"{folder}/{name}"
        for name in ("audio", "documentos", "hojas de cálculo", "imágenes", "vídeos")
    ]
    human = alma.ctl("suggestions", "show", str(listed["id"]), json_out=False).ok().stdout
    assert human.startswith(f"Sugerencia {listed['id']}: Ordenar {folder}")
    assert f"Plan ({len(plan)} ops):" in human and "Pruebas:" in human

    action = alma.ok("suggestions", "accept", str(listed["id"]))
    assert action["status"] == "done"
    assert (alma.root / folder / "imágenes" / "file00000.jpg").is_file()
    assert (alma.root / folder / "vídeos" / "file00002.mp4").is_file()
    assert (alma.root / folder / "hojas de cálculo" / "file00004.ods").is_file()
    assert not (alma.root / folder / "images").exists()

    undone = alma.ok("undo")
    assert undone["status"] == "done"
    assert snapshot(alma.root / "user", skip=()) == before  # byte for byte, folders gone
    again = alma.ctl("undo", str(action["id"]), json_out=False)  # the engine's own sentence
    assert again.rc != 0 and again.stderr.startswith(f"La acción {action['id']} está deshecha")


@pytest.mark.parametrize("locale", ["en_US.UTF-8", "C"])
def test_english_and_the_c_locale_read_english(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch, locale: str
) -> None:
    monkeypatch.setenv("LANG", locale)
    alma.start()
    help_text = alma.ctl("--help", json_out=False).ok().stdout
    assert "Exit codes" in help_text and "Códigos" not in help_text
    bad = alma.ctl("trash", "empty", "--older-than", "-1", json_out=False)
    assert bad.rc == 2
    assert (
        bad.stderr
        == "--older-than of `alma-ctl trash empty` must be an integer from 0 to 100000.\n"
    )
    missing = alma.ctl("suggestions", "show", "999", json_out=False)
    assert missing.rc == 6 and missing.stderr.startswith("There is no suggestion 999; ")
    status = alma.ctl("status", json_out=False).ok().stdout
    assert "running: yes" in status and f"root: {alma.root}" in status
    assert "pending suggestions: " in status and "pending_suggestions" not in status
    folder = "user/photos"
    listed, plan = _organize(alma, folder)
    assert listed["title"] == f"Organize {folder} by file type"
    created = sorted(op["path"] for op in plan if op["op"] == "mkdir")
    assert created == [
        f"{folder}/{name}" for name in ("audio", "documents", "images", "spreadsheets", "video")
    ]


def test_every_status_field_has_a_name_for_people(alma: DaemonRoot) -> None:
    from control.render import _FIELD_LABELS

    alma.start()
    status = alma.ok("status")
    unnamed = sorted(key for key in status if key not in _FIELD_LABELS)
    assert unnamed == [], f"add these to control.render._FIELD_LABELS (and es.po): {unnamed}"
    for nested in ("autonomy", "policy", "model"):
        inner = status[nested]
        assert isinstance(inner, dict)
        assert sorted(k for k in inner if k not in _FIELD_LABELS) == [], nested


def test_the_language_setting_names_the_folders_whatever_the_daemons_locale(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C")
    (alma.root / "system" / "alma.toml").write_text('language = "es"\n', encoding="utf-8")
    alma.start()
    folder = "user/descargas"
    listed, plan = _organize(alma, folder)
    # What the daemon writes on its own follows the setting...
    assert listed["title"] == f"Ordenar {folder} por tipo de archivo"
    assert f"{folder}/imágenes" in [op["path"] for op in plan if op["op"] == "mkdir"]
    # ...and alma-ctl, whose locale (C) names no language, speaks the daemon's.
    status = alma.ctl("status", json_out=False).ok().stdout
    assert "en marcha: sí" in status
    monkeypatch.setenv("LANG", "en_US.UTF-8")  # a locale that names one decides for its screen
    assert "running: yes" in alma.ctl("status", json_out=False).ok().stdout


SPANISH_DAY = """# {day}

## 09:12:00 · usuario
Hoy tengo que terminar el informe de ventas y mandarlo a Lucía antes de las cinco.

## 09:12:04 · alma
De acuerdo.

## 18:40:00 · usuario
Estoy cansado, pero el informe ya está hecho. Mañana reviso el backup que falla.
"""


def test_a_c_locale_speaks_the_language_of_the_persons_own_logs(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")  # what containers and many machines have
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    for day in ("2026-11-23", "2026-11-24"):
        (alma.root / "logs" / f"{day}.md").write_text(SPANISH_DAY.format(day=day), "utf-8")
    alma.start()
    status = alma.ctl("status", json_out=False).ok().stdout
    assert "en marcha: sí" in status and "running" not in status
    missing = alma.ctl("suggestions", "show", "999", json_out=False)
    assert missing.rc == 6 and missing.stderr.startswith("No existe la sugerencia 999; ")
    folder = "user/descargas"
    listed, plan = _organize(alma, folder)
    assert listed["title"] == f"Ordenar {folder} por tipo de archivo"
    assert f"{folder}/imágenes" in [op["path"] for op in plan if op["op"] == "mkdir"]


#: Words of ALMA's English sentences that no Spanish line of ALMA holds. A kind's name
#: (``organize``) is not among them: it is a name the person types (`autonomy allow organize`).
_ENGLISH = frozenset(
    {
        "the", "and", "of", "to", "is", "it", "with", "for", "yes", "running", "ready",
        "network", "denied", "capabilities", "dropped", "scoped", "suggestion",
        "suggestions", "pending", "files", "file", "folder", "by", "type", "evidence",
        "memories", "watching", "last", "analysis", "not", "loaded", "lowered", "stopped",
        "after", "undo", "did", "start", "valid", "fix", "there", "line", "column",
    }
)  # fmt: skip


def _english_lines(text: str) -> list[str]:
    """The lines holding English words, leaving out the commands a line quotes (`alma-ctl …`)."""
    return [
        line
        for line in text.splitlines()
        if {w.strip(".,;:()[]«»“”'!?").lower() for w in re.sub(r"`[^`]*`", "", line).split()}
        & _ENGLISH
    ]


def test_a_c_locale_decides_once_from_the_persons_first_words_and_keeps_it(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    alma.start()  # nothing the person wrote yet: English, and nothing decided for good
    folder = "user/descargas"
    listed, _plan = _organize(alma, folder)
    assert listed["title"] == f"Organize {folder} by file type"
    assert not (alma.root / ".alma" / "language").exists()

    # The person's first words: Spanish from then on, the title proposed before included.
    (alma.root / "logs" / "2026-11-27.md").write_text(SPANISH_DAY.format(day="2026-11-27"), "utf-8")
    alma.wait_for(
        lambda: "en marcha: sí" in alma.ctl("status", json_out=False).ok().stdout or None,
        timeout=60,
        what="the daemon speaking Spanish after the person's first Spanish words",
    )
    assert alma.ok("suggestions", "show", str(listed["id"]))["title"] == (
        f"Ordenar {folder} por tipo de archivo"
    )

    alma.restart()
    assert (alma.root / ".alma" / "language").read_text("ascii") == "es\n"
    screens = [
        alma.ctl("status", json_out=False).ok().stdout,
        alma.ctl("suggestions", "list", json_out=False).ok().stdout,
        alma.ctl("suggestions", "show", str(listed["id"]), json_out=False).ok().stdout,
        alma.ctl("history", json_out=False).ok().stdout,
        alma.ctl("suggestions", "show", "999", json_out=False).stderr,
    ]
    assert "en marcha: sí" in screens[0]
    assert f"Ordenar {folder} por tipo de archivo" in screens[1]
    for screen in screens:
        assert _english_lines(screen) == [], screen


def test_a_broken_policy_is_refused_in_the_language_the_root_speaks(
    alma: DaemonRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    (alma.root / "logs" / "2026-11-27.md").write_text(SPANISH_DAY.format(day="2026-11-27"), "utf-8")
    alma.start()
    alma.stop()
    settings = alma.root / "system" / "alma.toml"
    settings.write_text("[memory\nenabled = true\n", encoding="utf-8")
    proc = alma.spawn()
    assert proc.wait(timeout=60) != 0
    message = alma.log().strip()
    assert message.endswith("ALMA no arrancó."), message
    assert "no es TOML válido en la línea 1, columna 8" in message, message
    assert _english_lines(message.replace(str(settings), "")) == [], message
