"""The wire format and the command table: pure functions, no sockets."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control import commands, protocol
from control.commands import COMMANDS, MAX_ID, validate
from policies import limits as L
from policies.errors import (
    ERROR_CLASSES,
    AlmaError,
    BadArgumentError,
    BadRequestError,
    ErrorCode,
    UnknownCommandError,
    VersionMismatchError,
)

# --------------------------------------------------------------------------- socket path


def test_socket_path_under_xdg_runtime_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    path = protocol.socket_path_for(Path("/home/ana/ALMA"))
    assert path.parent == tmp_path / "alma"
    assert re.fullmatch(r"[0-9a-f]{16}\.sock", path.name)


def test_socket_name_is_the_sha256_of_the_absolute_root() -> None:
    import hashlib

    expected = hashlib.sha256("/home/ana/ALMA ñ".encode()).hexdigest()[:16] + ".sock"
    assert protocol.socket_path_for(Path("/home/ana/ALMA ñ")).name == expected


@pytest.mark.parametrize("value", [None, "", "relative/dir", "/does/not/exist"])
def test_socket_path_falls_back_to_tmp_by_uid(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    else:
        monkeypatch.setenv("XDG_RUNTIME_DIR", value)
    assert protocol.socket_path_for(Path("/r")).parent == Path(f"/tmp/alma-{os.getuid()}")


def test_socket_path_is_one_per_root_and_short(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    a = protocol.socket_path_for(Path("ALMA"))
    assert a == protocol.socket_path_for(tmp_path / "ALMA")  # relative and absolute agree
    assert a != protocol.socket_path_for(tmp_path / "OTRA")
    deep = protocol.socket_path_for(Path("/x" * 300))
    assert len(os.fsencode(deep)) <= protocol.MAX_SOCKET_PATH_BYTES


# --------------------------------------------------------------------------- requests


def _req(**fields: object) -> bytes:
    message: dict[str, object] = {"v": 1, "id": 5, "cmd": "status", "args": {}}
    message.update(fields)
    return json.dumps(message).encode()


def test_request_round_trip() -> None:
    line = protocol.encode_request(9, "memory.add", {"content": "Decidí usar SQLite ñ"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    request = protocol.parse_request(line.rstrip(b"\n"))
    assert (request.id, request.cmd, request.args) == (
        9,
        "memory.add",
        {"content": "Decidí usar SQLite ñ"},
    )
    assert "Decidí".encode() in line  # UTF-8 on the wire, not \u escapes


def test_args_default_to_empty() -> None:
    assert protocol.parse_request(b'{"v":1,"id":1,"cmd":"status"}').args == {}


@pytest.mark.parametrize(
    ("line", "answer_id"),
    [
        (b"", None),
        (b"   ", None),
        (b"\xff\xfe{}", None),
        (b'{"v":1,"id":1,"cmd":"st\xc3"}', None),
        (b"not json", None),
        (b"[1,2,3]", None),
        (b'"status"', None),
        (b"[" * 50_000, None),
        (b'{"a":' * 20_000, None),
        (b'{"v":1,"id":' + b"9" * 5000 + b',"cmd":"status"}', None),
        (b'{"v":1,"id":1,"cmd":"status","args":{"x":NaN}}', None),
        (b'{"v":1,"id":1,"cmd":"status","args":{"x":Infinity}}', None),
        (b'{"v":1,"id":1,"cmd":"status","args":{"x":1e999}}', None),
        (b'{"v":1,"id":1,"id":2,"cmd":"status"}', None),
        (_req(id=-1), None),
        (_req(id=True), None),
        (_req(id=1.0), None),
        (_req(id=MAX_ID + 1), None),
        (_req(id="1"), None),
        (b'{"id":5,"cmd":"status"}', 5),
        (_req(v="1"), 5),
        (_req(v=True), 5),
        (_req(cmd=None), 5),
        (_req(cmd=7), 5),
        (_req(cmd=""), 5),
        (_req(args=[]), 5),
        (_req(args="x"), 5),
        (_req(extra=1), 5),
        (_req(lang=5), 5),
        (_req(lang=""), 5),
        (_req(lang=["es"]), 5),
        (_req(lang="x" * 36), 5),
        (_req(lang="../../etc"), 5),
        (_req(lang="es\n"), 5),
    ],
)
def test_bad_requests_are_refused_with_one_sentence(line: bytes, answer_id: int | None) -> None:
    with pytest.raises(protocol.WireError) as info:
        protocol.parse_request(line)
    assert info.value.request_id == answer_id
    assert info.value.error.code == ErrorCode.BAD_REQUEST
    assert info.value.error.message.endswith(".") and "\n" not in info.value.error.message
    assert len(info.value.error.message) < 300  # never echoes a megabyte back


@pytest.mark.parametrize(
    ("sent", "read"),
    [("es", "es"), ("es_ES.UTF-8", "es"), ("es-MX", "es"), ("en", "en"), ("fr", "en"), ("C", "en")],
)
def test_the_language_of_the_request_is_read_and_kept(sent: str, read: str) -> None:
    line = protocol.encode_request(3, "status", {}, sent)
    assert protocol.parse_request(line.rstrip(b"\n")).lang == read


def test_a_request_without_language_leaves_it_to_the_daemon() -> None:
    assert protocol.parse_request(_req()).lang is None
    assert b"lang" not in protocol.encode_request(3, "status", {})


def test_envelope_errors_are_in_the_language_the_request_asks_for() -> None:
    with pytest.raises(protocol.WireError) as info:
        protocol.parse_request(_req(lang="es", cmd=""))
    assert info.value.error.message == 'La petición necesita "cmd", el nombre de una orden.'
    with pytest.raises(protocol.WireError) as info:
        protocol.parse_request(_req(lang="en", cmd=""))
    assert info.value.error.message == 'The request needs "cmd", a command name.'


@pytest.mark.parametrize("version", [0, 2, -1, 10**30])
def test_other_version_says_restart_or_update(version: int) -> None:
    with pytest.raises(protocol.WireError) as info:
        protocol.parse_request(_req(v=version, cmd="nonsense", args=[]))
    assert info.value.error.code == ErrorCode.VERSION_MISMATCH
    assert info.value.request_id == 5
    assert "restart alma-agentd" in info.value.error.message
    assert "update alma-ctl" in info.value.error.message


# --------------------------------------------------------------------------- responses


def test_result_round_trip() -> None:
    line = protocol.encode_result(3, {"title": "Organizar fotos", "n": [1, 2]})
    assert protocol.parse_response(line.rstrip(b"\n"), 3) == {
        "title": "Organizar fotos",
        "n": [1, 2],
    }


def test_result_with_dates_and_paths() -> None:
    from datetime import UTC, datetime

    when = datetime(2026, 11, 22, 10, tzinfo=UTC)
    line = protocol.encode_result(1, {"at": when, "path": Path("user/x")})
    assert protocol.parse_response(line, 1) == {"at": when.isoformat(), "path": "user/x"}


def test_result_that_is_not_json_raises() -> None:
    with pytest.raises(TypeError):
        protocol.encode_result(1, object())
    with pytest.raises(ValueError):
        protocol.encode_result(1, float("nan"))


@pytest.mark.parametrize("code", list(ErrorCode))
def test_error_codes_become_their_classes(code: ErrorCode) -> None:
    line = protocol.encode_error(4, code, "Something precise happened.")
    with pytest.raises(AlmaError) as info:
        protocol.parse_response(line, 4)
    assert type(info.value) is ERROR_CLASSES[code]
    assert info.value.message == "Something precise happened."


def test_unknown_error_code_is_a_plain_error() -> None:
    with pytest.raises(AlmaError) as info:
        protocol.parse_response(protocol.encode_error(1, 999, "New kind of error."), 1)
    assert type(info.value) is AlmaError


def test_response_checks() -> None:
    with pytest.raises(BadRequestError):
        protocol.parse_response(protocol.encode_result(2, None), 1)  # someone else's answer
    with pytest.raises(BadRequestError):
        protocol.parse_response(b"garbage", 1)
    with pytest.raises(VersionMismatchError, match="restart alma-agentd"):
        protocol.parse_response(b'{"v":2,"id":1,"ok":true,"result":null}', 1)
    with pytest.raises(VersionMismatchError, match="the daemon's own words"):
        protocol.parse_response(
            b'{"v":2,"id":1,"ok":false,"error":{"code":13,"message":"the daemon\'s own words"}}', 1
        )
    with pytest.raises(BadRequestError):
        protocol.parse_response(b'{"v":1,"id":1,"ok":false,"error":{"code":true,"message":"x"}}', 1)


# --------------------------------------------------------------------------- the command table


def test_table_is_exactly_the_documented_commands() -> None:
    assert set(COMMANDS) == {
        "status", "reload", "analyze",
        "suggestions.list", "suggestions.show", "suggestions.accept", "suggestions.reject",
        "autonomy.off", "autonomy.on", "autonomy.status", "autonomy.level", "autonomy.allow",
        "undo", "history",
        "memory.add", "memory.search", "memory.list", "memory.show", "memory.forget",
        "memory.restore", "memory.edit", "memory.export", "memory.examples", "memory.stats",
        "context", "trash.list", "trash.empty", "trash.restore", "feedback", "stats", "report", "report.days", "reminders",
        "model.status", "model.use", "chat.start", "chat.send", "chat.cancel",
        "backup.init", "backup.now", "backup.list", "backup.check", "backup.forget",
        "backup.restore",
    }  # fmt: skip
    streamed = {name for name, command in COMMANDS.items() if command.streamed}
    assert streamed == {"chat.send"}
    not_in_ctl = {name for name, command in COMMANDS.items() if not command.cli}
    assert not_in_ctl == {"chat.start", "chat.send", "chat.cancel"}


def test_duplicates_are_refused_when_building_the_table() -> None:
    with pytest.raises(ValueError, match="duplicate command"):
        commands._build((commands.Command("a", "x"), commands.Command("a", "y")))
    arg = commands.Arg("x", "int")
    with pytest.raises(ValueError, match="duplicate argument"):
        commands.Command("a", "x", (arg, arg))


def test_defaults_are_filled_and_fresh() -> None:
    first = validate("memory.add", {"content": "hola"})
    assert first == {
        "content": "hola",
        "tags": [],
        "project": "",
        "importance": None,
        "memory_type": None,
        "theme": None,
        "related_to": None,
    }
    assert isinstance(first["tags"], list)
    first["tags"].append("mutated")
    assert validate("memory.add", {"content": "hola"})["tags"] == []
    assert validate("history", {}) == {"limit": 20}
    assert validate("context", {"prompt": "p"}) == {"prompt": "p", "budget": 1500}
    assert validate("suggestions.list", {}) == {"status": None, "all": False}
    assert validate("undo", {}) == {"id": None}
    assert validate("undo", {"id": None}) == {"id": None}


def test_unknown_command() -> None:
    for name in ("nope", "__class__", "eval", "STATUS", "status ", "x" * 10_000):
        with pytest.raises(UnknownCommandError) as info:
            validate(name, {})
        assert len(info.value.message) < 200


@pytest.mark.parametrize(
    ("cmd", "args", "named"),
    [
        ("status", {"x": 1}, "x"),
        ("suggestions.show", {}, "id"),
        ("suggestions.show", {"id": 0}, "id"),
        ("suggestions.show", {"id": True}, "id"),
        ("suggestions.show", {"id": "3"}, "id"),
        ("suggestions.show", {"id": 3.0}, "id"),
        ("suggestions.show", {"id": MAX_ID + 1}, "id"),
        ("suggestions.show", {"id": None}, "id"),
        ("suggestions.list", {"status": "done"}, "status"),
        ("suggestions.list", {"all": 1}, "all"),
        ("analyze", {"wait": "yes"}, "wait"),
        ("autonomy.level", {"level": "max"}, "level"),
        ("autonomy.allow", {"kind": "  "}, "kind"),
        ("history", {"limit": 0}, "limit"),
        ("history", {"limit": 1001}, "limit"),
        ("memory.add", {"content": ""}, "content"),
        ("memory.add", {"content": "x", "tags": "a"}, "tags"),
        ("memory.add", {"content": "x", "tags": [1]}, "tags"),
        ("memory.add", {"content": "x", "tags": ["a"] * 101}, "tags"),
        ("memory.add", {"content": "x", "importance": 6}, "importance"),
        ("memory.add", {"content": "x", "project": None}, "project"),
        ("memory.search", {"query": "q", "limit": 101}, "limit"),
        ("memory.search", {"query": "q", "min_importance": 0}, "min_importance"),
        ("memory.show", {"id": "a\x00b"}, "id"),
        ("memory.show", {"id": "x" * 201}, "id"),
        ("memory.export", {"format": "csv"}, "format"),
        ("context", {"prompt": "p", "budget": L.CONTEXT_BUDGET_MIN - 1}, "budget"),
        ("trash.empty", {}, "older_than_days"),
        ("trash.empty", {"older_than_days": -1}, "older_than_days"),
    ],
)
def test_bad_arguments_name_the_argument(cmd: str, args: dict[str, object], named: str) -> None:
    with pytest.raises(BadArgumentError) as info:
        validate(cmd, args)
    spec = COMMANDS[cmd].by_name.get(named)
    # As the person types it (``--older-than``, ``ID``), never the wire name (``older_than_days``);
    # an argument the table does not know is quoted as it was sent.
    assert (repr(named) if spec is None else spec.spelling) in info.value.message
    assert f"`alma-ctl {cmd.replace('.', ' ')}`" in info.value.message
    if "_" in named:
        assert named not in info.value.message
    assert info.value.message.endswith(".")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_arg_names = sorted({arg.name for c in COMMANDS.values() for arg in c.args})


@settings(max_examples=150, deadline=None)
@given(
    cmd=st.sampled_from(sorted(COMMANDS)) | st.text(max_size=12),
    args=st.dictionaries(st.sampled_from(_arg_names) | st.text(max_size=6), _json, max_size=5),
)
def test_validate_only_ever_accepts_what_the_table_says(cmd: str, args: dict[str, object]) -> None:
    try:
        checked = validate(cmd, args)
    except (BadArgumentError, UnknownCommandError):
        return
    command = COMMANDS[cmd]
    assert set(checked) == set(command.by_name)
    for name, value in checked.items():
        spec = command.by_name[name]
        if value is None:
            assert spec.nullable or (spec.default is None and name not in args)
        elif spec.type == "int":
            assert type(value) is int
        elif spec.type == "bool":
            assert type(value) is bool
        elif spec.type == "str":
            assert type(value) is str
        else:
            assert isinstance(value, list) and all(type(v) is str for v in value)
    assert validate(cmd, checked) == checked  # what the server dispatches re-validates


def test_docs_list_every_command_and_argument() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(" `"): line for line in doc.splitlines() if line.startswith("| `")
    }
    for command in COMMANDS.values():
        assert command.name in rows, f"docs/protocol.md lacks {command.name}"
        for arg in command.args:
            assert f"`{arg.name}`" in rows[command.name], f"docs lack {command.name} {arg.name}"
