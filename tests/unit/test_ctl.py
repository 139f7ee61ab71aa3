"""alma-ctl's ``main([...])`` against the real server in a thread (honest fake dispatcher)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from control import ctl, views
from control.protocol import socket_path_for
from control.server import ControlServer
from policies.defaults import DEFAULT_PERSONA_MD, DEFAULT_POLICY_TOML
from policies.errors import ERROR_CLASSES, ErrorCode, NotFoundError, RefusedError
from policies.layout import ROOT_FOLDERS, RootLayout
from policies.results import Action
from policies.text import printable
from tests.unit.test_control_server import FakeDispatcher

SUGGESTION = {
    "id": 3, "kind": "organize", "status": "pending", "title": "Organizar user/proyectoY por tipo",
    "reason": "31 ficheros sueltos de 6 tipos", "target": "user/proyectoY", "files": 31,
    "needs_approval": True, "created_at": "2026-11-22T10:00:00+00:00", "evidence": ["31 ficheros"],
}  # fmt: skip
PLAN = [
    {"op": "mkdir", "path": "user/proyectoY/images"},
    {"op": "move", "src": "user/proyectoY/a.jpg", "dst": "user/proyectoY/images/a.jpg"},
    {"op": "trash", "path": "user/proyectoY/a.tmp"},
]
ACTION: Action = {
    "id": 7, "suggestion_id": 3, "kind": "organize", "status": "done", "ops": 32, "auto": False,
    "started_at": "2026-11-22T10:01:00+00:00", "finished_at": "2026-11-22T10:01:02+00:00",
    "undone_by": None,
}  # fmt: skip
MEMORY = {
    "id": "5f0c2a", "content": "Decidí usar SQLite para la base de memorias", "tags": ["db"],
    "project": "alma", "importance": 4, "memory_type": "architecture", "score": 0.83,
}  # fmt: skip

# Contract §2: 2 usage (and bad arguments), 4 refused, 5 conflict, 6 no such id, else 1.
EXPECTED_EXIT = {code: 1 for code in ErrorCode} | {
    ErrorCode.BAD_ARGUMENT: 2,
    ErrorCode.REFUSED: 4,
    ErrorCode.CONFLICT: 5,
    ErrorCode.NOT_FOUND: 6,
}


@pytest.fixture
def root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # A short runtime dir of our own: the socket path must stay under 108 bytes.
    base = Path(tempfile.mkdtemp(prefix="almac-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    monkeypatch.delenv("ALMA_ROOT", raising=False)
    yield base / "ALMA"
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def fake() -> FakeDispatcher:
    fake = FakeDispatcher()
    fake.results.update(
        {
            "suggestions.list": [SUGGESTION],
            "suggestions.show": {**SUGGESTION, "plan": PLAN},
            "suggestions.accept": ACTION,
            "suggestions.reject": {**SUGGESTION, "status": "rejected"},
            "undo": {**ACTION, "id": 8, "kind": "undo"},
            "history": [ACTION],
            "memory.add": MEMORY,
            "memory.search": [MEMORY],
            "memory.export": EXPORT,
            "context": {"text": "Principios:\n- Propón, nunca impongas.", "tokens": 12},
        }
    )
    return fake


EXPORT = {
    "format": "chatml",
    "split": False,
    "train": [{"messages": [{"role": "user", "content": "¿Qué base?"}]}],
    "valid": [],
    "summary": {
        "examples": 1,
        "train": 1,
        "valid": 0,
        "tokens": 4,
        "tokens_estimated": True,
        "dropped": {"secret": 2},
        "system": False,
    },
    "withheld": [
        {
            "id": "a1",
            "day": "2026-11-20",
            "why": "secret",
            "kinds": ["password"],
            "preview": "mi PIN es [password]",
        }
    ],
}


@pytest.fixture
def daemon(root: Path, fake: FakeDispatcher) -> Iterator[ControlServer]:
    with ControlServer(socket_path_for(root), fake) as server:
        yield server


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = ctl.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- talking to the daemon


@pytest.mark.usefixtures("daemon")
@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["analyze", "--wait"],
        ["suggestions", "list", "--all"],
        ["suggestions", "show", "3"],
        ["suggestions", "accept", "3"],
        ["suggestions", "reject", "3", "--reason", "no ahora"],
        ["autonomy", "off"],
        ["autonomy", "level", "manual"],
        ["autonomy", "allow", "temp_cleanup"],
        ["undo"],
        ["undo", "7"],
        ["history", "--limit", "5"],
        ["memory", "search", "sqlite", "--tag", "db"],
        ["memory", "export"],
        ["context", "¿qué decidí?"],
        ["trash", "empty", "--older-than", "30"],
    ],
)
def test_json_is_exactly_one_document(
    capsys: pytest.CaptureFixture[str], root: Path, argv: list[str]
) -> None:
    code, out, err = run(capsys, "--root", str(root), "--json", *argv)
    assert (code, err) == (0, "")
    json.loads(out)  # raises if there is anything but one document


def test_arguments_reach_the_daemon_as_the_table_says(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher, daemon: ControlServer
) -> None:
    argv = ["memory", "add", "Decidí usar SQLite", "--tag", "db", "--tag", "arquitectura"]
    argv += ["--importance", "4", "--type", "architecture", "--project", "alma"]
    argv += ["--theme", "tecnologia", "--related-to", "SQLite"]
    assert run(capsys, "--root", str(root), *argv)[0] == 0
    run(capsys, "--root", str(root), "suggestions", "list", "--status", "failed")
    run(capsys, "--root", str(root), "undo")
    assert fake.calls == [
        (
            "memory.add",
            {
                "content": "Decidí usar SQLite",
                "tags": ["db", "arquitectura"],
                "project": "alma",
                "importance": 4,
                "memory_type": "architecture",
                "theme": "tecnologia",
                "related_to": "SQLite",
            },
        ),
        ("suggestions.list", {"status": "failed", "all": False}),
        ("undo", {"id": None}),
    ]


def test_model_use_names_a_file_from_where_the_person_typed_it(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    fake: FakeDispatcher,
    daemon: ControlServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A relative PATH sent as typed would be looked for in the daemon's own working folder
    # (systemd's is /): no file there, or a model found there by that name used instead.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "casa"))
    given = ["modelos/mistral.gguf", "~/m.gguf", "/abs/m.gguf", "embedded", "http://127.0.0.1:8080"]
    for path in given:
        assert run(capsys, "--root", str(root), "model", "use", path)[0] == 0
    assert [args["path"] for _cmd, args in fake.calls] == [
        str(tmp_path / "modelos/mistral.gguf"),
        str(tmp_path / "casa/m.gguf"),
        "/abs/m.gguf",
        "embedded",
        "http://127.0.0.1:8080",
    ]


def test_model_use_names_its_adapter_from_where_the_person_typed_it(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    fake: FakeDispatcher,
    daemon: ControlServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "casa"))
    for lora in ("codi.gguf", "~/lora/codi.gguf"):
        argv = ("--root", str(root), "model", "use", "embedded", "--lora", lora)
        assert run(capsys, *argv)[0] == 0
    assert run(capsys, "--root", str(root), "model", "use", "embedded")[0] == 0
    assert [args.get("lora") for _cmd, args in fake.calls] == [
        str(tmp_path / "codi.gguf"),
        str(tmp_path / "casa/lora/codi.gguf"),
        None,
    ]


@pytest.mark.parametrize("path", ["", "   "])
def test_model_use_without_a_path_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    fake: FakeDispatcher,
    daemon: ControlServer,
    path: str,
) -> None:
    """An empty PATH is refused as empty, never taken for the working folder."""
    code, _out, err = run(capsys, "--root", str(root), "model", "use", path)
    assert code == 2 and "PATH of `alma-ctl model use` must be a non-empty text" in err
    assert os.getcwd() not in err and fake.calls == []


def test_global_options_after_the_command(
    capsys: pytest.CaptureFixture[str], root: Path, daemon: ControlServer
) -> None:
    code, out, _ = run(capsys, "suggestions", "show", "3", "--json", "--root", str(root))
    assert code == 0 and json.loads(out)["plan"] == PLAN


def test_root_from_the_environment(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    daemon: ControlServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALMA_ROOT", str(root))
    assert run(capsys, "status")[0] == 0


# --------------------------------------------------------------------------- human output


@pytest.mark.usefixtures("daemon")
def test_human_output(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    r = ["--root", str(root)]
    _, out, _ = run(capsys, *r, "suggestions", "list")
    assert re.split(r"\s{2,}", out.splitlines()[0]) == [
        "ID",
        "STATUS",
        "KIND",
        "FILES",
        "NEEDS APPROVAL",
        "TITLE",
    ]
    assert "Organizar user/proyectoY por tipo" in out
    _, out, _ = run(capsys, *r, "suggestions", "show", "3")
    assert "Plan (3 ops):" in out
    assert "2. move     user/proyectoY/a.jpg -> user/proyectoY/images/a.jpg" in out
    assert "31 ficheros" in out
    _, out, _ = run(capsys, *r, "suggestions", "accept", "3")
    assert out.startswith("Action 7: folder tidying done, 32 ops, from suggestion 3.")
    _, out, _ = run(capsys, *r, "suggestions", "reject", "3")
    assert out == "Rejected suggestion 3.\n"
    _, out, _ = run(capsys, *r, "history")
    assert out.splitlines()[1].split()[:5] == ["7", "3", "folder", "tidying", "done"]
    _, out, _ = run(capsys, *r, "memory", "search", "sqlite")
    assert out.startswith("[0.83] 5f0c2a  Decidí usar SQLite") and "#db" in out
    _, out, _ = run(capsys, *r, "context", "p")
    assert out == "Principios:\n- Propón, nunca impongas.\n"
    _, out, _ = run(capsys, *r, "memory", "forget", "5f0c2a")
    assert "memory restore 5f0c2a" in out


def test_empty_lists_say_so(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher, daemon: ControlServer
) -> None:
    fake.results["suggestions.list"] = []
    assert run(capsys, "--root", str(root), "suggestions", "list")[1] == "No suggestions.\n"


def test_spanish_text_prints_as_utf8_whatever_the_locale(root: Path, daemon: ControlServer) -> None:
    # A child with a Latin-1 stdout: the text must still come out as UTF-8, not crash.
    code = (
        "import sys; from control import ctl; "
        f"sys.exit(ctl.main(['--root', {str(root)!r}, 'memory', 'search', 'x']))"
    )
    env = {**os.environ, "PYTHONIOENCODING": "latin-1", "LC_ALL": "C"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert "Decidí".encode() in done.stdout


# --------------------------------------------------------------------------- errors and exit codes


@pytest.mark.parametrize("code", list(ErrorCode))
def test_exit_code_for_each_error_code(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    fake: FakeDispatcher,
    daemon: ControlServer,
    code: ErrorCode,
) -> None:
    fake.raises["suggestions.accept"] = ERROR_CLASSES[code]("Do this precise thing to fix it.")
    exit_code, out, err = run(capsys, "--root", str(root), "suggestions", "accept", "3")
    assert exit_code == EXPECTED_EXIT[code]
    assert (out, err) == ("", "Do this precise thing to fix it.\n")


def test_errors_with_json_keep_stdout_one_document(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher, daemon: ControlServer
) -> None:
    fake.raises["suggestions.show"] = NotFoundError("No suggestion 99.")
    code, out, err = run(capsys, "--json", "--root", str(root), "suggestions", "show", "99")
    assert code == 6 and err == "No suggestion 99.\n"
    assert json.loads(out) == {"ok": False, "error": {"code": 40, "message": "No suggestion 99."}}
    fake.raises["autonomy.level"] = RefusedError("Raising autonomy is done by editing the file.")
    assert run(capsys, "--root", str(root), "autonomy", "level", "auto")[0] == 4


def test_the_start_hint_names_a_command_that_runs(
    capsys: pytest.CaptureFixture[str], root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """alma-agentd lives beside this interpreter (a venv's bin/): named by its absolute path
    while that folder is not on PATH, by its name once it is."""
    beside = Path(sys.executable).absolute().parent / "alma-agentd"
    assert os.access(beside, os.X_OK), "the test runs in the project's venv"
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin")
    code, _, err = run(capsys, "--root", str(root), "history")
    assert code == 3 and f"`{beside} --root {root}`" in err, err
    monkeypatch.setenv("PATH", f"{beside.parent}{os.pathsep}/usr/bin")
    code, _, err = run(capsys, "--root", str(root), "history")
    assert code == 3 and f"`alma-agentd --root {root}`" in err, err


def test_daemon_unreachable(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, out, err = run(capsys, "--root", str(root), "history")
    assert code == 3 and out == ""
    assert "not reachable" in err and f"alma-agentd --root {root}" in err
    assert len(err.splitlines()) == 1
    # A root never initialised: the next step is `init`, not starting a daemon.
    code, out, _ = run(capsys, "--root", str(root), "--json", "status")
    assert code == 3
    assert json.loads(out) == {
        "running": False,
        "root": str(root),
        "socket": str(socket_path_for(root)),
        "initialized": False,
    }
    code, out, _ = run(capsys, "--root", str(root), "status")
    assert code == 3 and f"alma-ctl --root {root} init" in out and "not running" not in out
    assert run(capsys, "--root", str(root), "init")[0] == 0
    code, out, _ = run(capsys, "--root", str(root), "--json", "status")
    assert code == 3
    assert json.loads(out) == {
        "running": False,
        "root": str(root),
        "socket": str(socket_path_for(root)),
    }
    code, out, _ = run(capsys, "--root", str(root), "status")
    assert code == 3 and "not running" in out


@pytest.mark.usefixtures("daemon")
@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["suggestions"],
        ["suggestions", "show"],
        ["suggestions", "show", "tres"],
        ["autonomy", "level", "max"],
        ["memory", "add"],
        ["trash", "empty"],
        ["history", "--limit", "many"],
        ["suggestions", "list", "--status", "done"],
    ],
)
def test_usage_errors_exit_2_and_send_nothing(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher, argv: list[str]
) -> None:
    code, out, err = run(capsys, "--root", str(root), *argv)
    assert code == 2 and out == "" and "usage:" in err
    assert fake.calls == []


@pytest.mark.usefixtures("daemon")
@pytest.mark.parametrize(
    "argv",
    [["frobnicate"], ["suggestions", "show"], ["history", "--limit", "many"], ["--json"]],
)
def test_usage_errors_with_json_keep_stdout_one_document(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher, argv: list[str]
) -> None:
    # Contract §2: with --json, stdout is one JSON document, a usage error's too, so a
    # script's json.loads reads the error instead of failing on an empty output.
    code, out, err = run(capsys, "--root", str(root), "--json", *argv)
    assert code == 2 and "usage:" in err and fake.calls == []
    error = json.loads(out)["error"]
    assert error["code"] == ErrorCode.BAD_ARGUMENT and "error:" not in error["message"]
    assert error["message"] and error["message"] in err


def test_local_failures_with_json_keep_stdout_one_document(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, root: Path
) -> None:
    # An OSError of init and alma-ctl's own bug are JSON documents too, not only stderr.
    code, out, err = run(capsys, "--json", "--root", "/proc/no-such-alma-root", "init")
    assert code == 1 and err
    assert json.loads(out) == {"ok": False, "error": {"code": 1, "message": err.strip()}}

    def broken(ns: object) -> object:
        raise KeyError("oops")

    monkeypatch.setattr(ctl, "_run", broken)
    monkeypatch.delenv("ALMA_DEBUG", raising=False)
    code, out, err = run(capsys, "--json", "--root", str(root), "history")
    assert code == 1
    assert json.loads(out) == {"ok": False, "error": {"code": 1, "message": err.strip()}}


@pytest.mark.usefixtures("daemon")
@pytest.mark.parametrize(
    ("argv", "named"),
    [
        # Named as the person typed them, not by their wire names (limit, id, content...).
        (["history", "--limit", "0"], "--limit"),
        (["suggestions", "show", "0"], "ID"),
        (["memory", "add", " "], "TEXT"),
        (["memory", "add", "x", "--importance", "9"], "--importance"),
        (["context", "p", "--budget", "5"], "--budget"),
    ],
)
def test_out_of_range_arguments_exit_2_with_a_sentence(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    fake: FakeDispatcher,
    argv: list[str],
    named: str,
) -> None:
    code, _, err = run(capsys, "--root", str(root), *argv)
    assert code == 2 and named in err and len(err.splitlines()) == 1
    assert fake.calls == []


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "suggestions" in out and "Exit codes" in out


@pytest.fixture
def spanish(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    monkeypatch.setattr("policies.i18n._process_language", None)  # read the locale again


@pytest.mark.usefixtures("daemon", "spanish")
def test_a_spanish_locale_gets_one_language_on_the_screen(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher
) -> None:
    r = ["--root", str(root)]
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "Códigos de salida" in out and "opciones:" in out
    assert "Exit codes" not in out and "show this help" not in out
    code, out, err = run(capsys, *r, "trash", "empty", "--older-than", "-1")
    assert code == 2 and out == ""
    assert (
        err == "--older-than de `alma-ctl trash empty` debe ser un número entero de 0 a 100000.\n"
    )
    code, _, err = run(capsys, *r, "trash", "empty")
    assert code == 2 and "faltan estos argumentos: --older-than" in err
    fake.results["status"] = {
        "running": True,
        "autonomy": {
            "configured": "auto",
            "effective": "suggest",
            "paused": False,
            "lowered_to": "suggest",
            "auto_kinds": ["temp_cleanup"],
            "auto_stopped_kinds": [],
        },
        "pending_suggestions": 2,
        "uptime_seconds": 3.5,
        "policy": {
            "file": "/r/system/autonomy.conf",
            "ok": True,
            "loaded_at": "2026-11-22T10:00:00+00:00",
            "error": None,
        },
    }
    code, out, _ = run(capsys, *r, "status")
    assert code == 0
    assert out.splitlines() == [
        "en marcha: sí",
        "sugerencias pendientes: 2",
        "segundos en marcha: 3.5",
        "Autonomía: suggest, rebajada desde el nivel auto de la política; "
        "`alma-ctl autonomy level auto` quita la rebaja.",
        "Se hace por su cuenta cuando se permite: limpieza de temporales (temp_cleanup).",
        "Política: /r/system/autonomy.conf, válida, cargada 2026-11-22T10:00:00+00:00.",
    ]
    fake.results["suggestions.list"] = [
        {**SUGGESTION, "status": "executed", "undone": True},
        {**SUGGESTION, "id": 4, "status": "executed", "undone": False},
    ]
    _, out, _ = run(capsys, *r, "suggestions", "list", "--all")
    assert re.split(r"\s{2,}", out.splitlines()[0])[:5] == [
        "ID",
        "ESTADO",
        "TIPO",
        "ARCHIVOS",
        "PIDE APROBACIÓN",
    ]
    assert out.splitlines()[1].split()[:2] == ["3", "deshecha"]
    assert out.splitlines()[2].split()[:2] == ["4", "ejecutada"]
    _, out, _ = run(capsys, *r, "suggestions", "show", "3")
    assert "Plan (3 ops):" in out and "Pruebas:" in out
    assert "2. mover    user/proyectoY/a.jpg -> user/proyectoY/images/a.jpg" in out
    _, out, _ = run(capsys, *r, "suggestions", "accept", "3")
    assert out.startswith("Acción 7: ordenar carpetas hecha, 32 ops, de la sugerencia 3.")
    _, out, _ = run(capsys, *r, "history")
    assert out.splitlines()[0].split()[:4] == ["ID", "SUGERENCIA", "TIPO", "ESTADO"]
    # The daemon side answers in the language of the request (the wire: test_control_server).
    from policies.i18n import current_language

    fake.results["autonomy.status"] = lambda args: {
        "configured": "suggest", "effective": current_language(), "paused": False
    }  # fmt: skip
    _, out, _ = run(capsys, *r, "autonomy", "status")
    assert out == "Autonomía: es, como dice la política.\n"


@pytest.mark.usefixtures("daemon")
def test_status_fields_are_named_for_people(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher
) -> None:
    fake.results["status"] = {"pending_suggestions": 2, "sandbox_detail": "x"}
    _, out, _ = run(capsys, "--root", str(root), "status")
    assert out == "pending suggestions: 2\nsandbox detail: x\n"


def test_a_bug_is_one_sentence_not_a_traceback(
    capsys: pytest.CaptureFixture[str], root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(ns: object) -> object:
        raise KeyError("oops")

    monkeypatch.setattr(ctl, "_run", broken)
    monkeypatch.delenv("ALMA_DEBUG", raising=False)
    code, _, err = run(capsys, "--root", str(root), "history")
    assert code == 1 and "Traceback" not in err and len(err.splitlines()) == 1


# --------------------------------------------------------------------------- init


def test_init_creates_the_layout_without_a_daemon(
    capsys: pytest.CaptureFixture[str], root: Path
) -> None:
    code, out, err = run(capsys, "--root", str(root), "--json", "init")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["root"] == str(root) and report["kept"] == []
    for folder in ROOT_FOLDERS:
        assert (root / folder).is_dir()
    assert (root / ".alma").stat().st_mode & 0o777 == 0o700
    assert (root / "system" / "autonomy.conf").read_text() == DEFAULT_POLICY_TOML
    assert "system/autonomy.conf" in report["created"]
    assert (root / "system" / "persona.md").read_text(encoding="utf-8") == DEFAULT_PERSONA_MD
    assert "system/persona.md" in report["created"]


def test_init_is_idempotent_and_never_overwrites(
    capsys: pytest.CaptureFixture[str], root: Path
) -> None:
    assert run(capsys, "--root", str(root), "init")[0] == 0
    policy = root / "system" / "autonomy.conf"
    policy.write_text('level = "manual"\n')
    (root / "system" / "persona.md").write_text("Mi ALMA habla en verso.\n")
    (root / "docs").rmdir()
    code, out, _ = run(capsys, "--root", str(root), "--json", "init")
    report = json.loads(out)
    assert code == 0 and report["created"] == ["docs/"]
    assert "system/autonomy.conf" in report["kept"]
    assert policy.read_text() == 'level = "manual"\n'
    assert (root / "system" / "persona.md").read_text() == "Mi ALMA habla en verso.\n"


def test_init_refuses_a_file_as_root(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    root.write_text("not a folder")
    code, _, err = run(capsys, "--root", str(root), "init")
    assert code == 1 and "not a folder" in err
    assert root.read_text() == "not a folder"


def test_init_with_examples_asks_a_running_daemon(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher, daemon: ControlServer
) -> None:
    fake.results["memory.examples"] = {"added": 5}
    code, out, _ = run(capsys, "--root", str(root), "--json", "init", "--with-examples")
    assert code == 0 and json.loads(out)["examples"] == {"added": 5}
    assert fake.calls == [("memory.examples", {})]


def test_init_with_examples_without_a_daemon_asks_the_next_one(
    capsys: pytest.CaptureFixture[str], root: Path
) -> None:
    # No daemon answers: init leaves the request the daemon honours when its memory loads.
    code, out, _ = run(capsys, "--root", str(root), "--json", "init", "--with-examples")
    assert code == 0 and json.loads(out)["examples"] == {"requested": True}
    request = RootLayout(root).examples_request_file
    assert request.is_file() and stat.S_IMODE(request.stat().st_mode) == 0o600
    code, out, _ = run(capsys, "--root", str(root), "init", "--with-examples")
    assert code == 0 and "stores the example memories when it starts" in out
    assert request.is_file()


# --------------------------------------------------------------------------- memory export


@pytest.mark.usefixtures("daemon")
def test_memory_export(capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path) -> None:
    code, out, err = run(capsys, "--root", str(root), "memory", "export", "--format", "alpaca")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"messages": [{"role": "user", "content": "¿Qué base?"}]}
    ]
    assert "Wrote 1 example to -" in err and "2 holding a secret" in err
    target = tmp_path / "out.jsonl"
    code, out, _ = run(
        capsys, "--root", str(root), "--json", "memory", "export", "--output", str(target)
    )
    assert code == 0 and json.loads(out)["output"] == str(target)
    assert json.loads(out)["summary"]["examples"] == 1
    assert json.loads(target.read_text(encoding="utf-8"))["messages"][0]["content"] == "¿Qué base?"
    assert target.stat().st_mode & 0o777 == 0o600
    target.write_text("keep me")
    code, _, err = run(capsys, "--root", str(root), "memory", "export", "--output", str(target))
    assert code == 1 and "already exists" in err
    assert target.read_text() == "keep me"


def test_a_split_export_is_a_folder_and_never_overwrites(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, fake: FakeDispatcher
) -> None:
    fake.results["memory.export"] = {**EXPORT, "split": True, "valid": EXPORT["train"]}
    folder = tmp_path / "data"
    with ControlServer(socket_path_for(root), fake):
        code, out, _ = run(capsys, "--root", str(root), "memory", "export", "--output", str(folder))
        assert code == 0 and "1 to train, 0 to validate" in out
        assert (folder / "train.jsonl").read_text() == (folder / "valid.jsonl").read_text()
        (folder / "train.jsonl").unlink()
        code, _, err = run(capsys, "--root", str(root), "memory", "export", "--output", str(folder))
    assert code == 1 and "valid.jsonl already exists" in err
    assert not (folder / "train.jsonl").exists()  # nothing half-done


def test_the_withheld_listing_is_masked(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher
) -> None:
    fake.results["memory.export"] = {**EXPORT, "train": [], "listing": True}
    with ControlServer(socket_path_for(root), fake):
        code, out, _ = run(capsys, "--root", str(root), "memory", "export", "--list-withheld")
    assert code == 0
    assert "a1  2026-11-20  [password]  mi PIN es [password]" in out and "--include ID" in out


# --------------------------------------------------------------------------- staying light


def test_alma_ctl_imports_nothing_heavy() -> None:
    heavy = [
        "pydantic",
        "numpy",
        "chromadb",
        "apscheduler",
        "agent",
        "state",
    ]
    code = (
        "import sys, control.ctl, control.client, control.protocol, control.rootinit\n"
        "import control.views, control.chat_commands\n"
        "from control import cli\n"
        "cli.parser().format_help()\n"
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_undo_and_an_auto_action_say_what_they_are() -> None:
    undo: Action = {**ACTION, "id": 8, "undoes": 7}
    assert views._action(undo) == "Action 8: folder tidying done, 32 ops, undoing action 7."
    auto: Action = {
        **ACTION, "id": 9, "kind": "temp_cleanup", "ops": 2, "auto": True, "suggestion_id": None
    }  # fmt: skip
    assert (
        views._action(auto)
        == "Action 9: temporary files cleanup done, 2 ops, done by ALMA on its own."
    )


HOSTILE = "Nota \x1b[2J\x1b]0;pwned\x07 con\r retorno \u202eoculto\u202c y ñ 😀"


@pytest.mark.parametrize(
    ("wire", "argv", "result"),
    [
        ("memory.search", ["memory", "search", "nota"], [{**MEMORY, "content": HOSTILE}]),
        ("memory.list", ["memory", "list"], [{**MEMORY, "content": HOSTILE}]),
        (
            "suggestions.show",
            ["suggestions", "show", "1"],
            {**SUGGESTION, "title": HOSTILE, "evidence": [HOSTILE], "plan": PLAN},
        ),
        ("suggestions.list", ["suggestions", "list"], [{**SUGGESTION, "title": HOSTILE}]),
        ("context", ["context", "nota"], {"context": HOSTILE, "tokens": 3}),
    ],
)
def test_terminal_escapes_from_logs_and_memories_are_shown_never_obeyed(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    fake: FakeDispatcher,
    daemon: ControlServer,
    wire: str,
    argv: list[str],
    result: object,
) -> None:
    """``show`` and ``list`` print ESC, BEL, CR and bidi overrides escaped, never raw."""
    fake.results[wire] = result
    code, out, _err = run(capsys, "--root", str(root), *argv)
    assert code == 0
    assert not any(c in out for c in "\x1b\x07\r\u202e\u202c"), repr(out)
    assert "\\x1b" in out or "\\u202e" in out  # shown, so the person sees something was there
    assert "ñ 😀" in out or "ñ" in out


def test_error_sentences_are_printable_too(
    capsys: pytest.CaptureFixture[str], root: Path, fake: FakeDispatcher, daemon: ControlServer
) -> None:
    fake.raises["suggestions.show"] = NotFoundError("No suggestion \x1b[31m99\x1b[0m.")
    code, _out, err = run(capsys, "--root", str(root), "suggestions", "show", "99")
    assert code == 6 and "\x1b" not in err and "\\x1b[31m99" in err


def test_printable_keeps_text_and_is_idempotent() -> None:
    text = "Línea uno\n\tcon tabulador, ñ, ¿qué? 😀"
    assert printable(text) == text
    once = printable(HOSTILE)
    assert printable(once) == once


def test_init_narrows_a_loose_alma_folder(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    """A pre-existing ``.alma/`` of mode 0755 becomes 0700: other users could read the
    memories, the journal and the trash."""
    (root / ".alma").mkdir(parents=True, mode=0o755)
    os.chmod(root / ".alma", 0o755)
    assert run(capsys, "--root", str(root), "init")[0] == 0
    assert stat.S_IMODE(os.lstat(root / ".alma").st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(root / "user").st_mode) & 0o777 == 0o755 & ~_umask()


def test_init_refuses_a_linked_alma_folder(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path
) -> None:
    root.mkdir(parents=True)
    (root / ".alma").symlink_to(tmp_path)
    code, _out, err = run(capsys, "--root", str(root), "init")
    assert code == 1 and "symlink" in err and len(err.splitlines()) == 1


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_every_view_reads_its_commands_typed_record() -> None:
    """A view takes its command's record from policies.results, so the type checker holds the
    keys it reads to the keys the daemon writes (a renamed key is an error, not a "?")."""
    import inspect

    from policies import results

    records = {name for name, value in vars(results).items() if isinstance(value, type)}
    for wire, view in {**views._ONE, **views._MANY}.items():
        first = next(iter(inspect.signature(view).parameters.values()))
        named = set(re.findall(r"\w+", str(first.annotation))) - {"list"}
        assert named and named <= records, (wire, first.annotation)
