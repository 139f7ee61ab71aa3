"""The real ControlServer in a thread on a temp socket dir, driven by the real client and raw bytes.

The dispatcher is an honest fake: it records every call and answers from a table, so a test can
prove what reached it (and, above all, what never did).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from control import protocol
from control.client import Client, DaemonUnreachable
from control.commands import COMMANDS, validate
from control.server import ControlServer, prepare_socket_dir
from policies import limits as L
from policies.errors import (
    AlmaError,
    BadArgumentError,
    ErrorCode,
    NotFoundError,
    UnavailableError,
    UnknownCommandError,
)

NOBODY = 65534


class FakeDispatcher:
    """Records calls; answers ``results[cmd]`` (called with args if callable) or raises ``raises[cmd]``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, object]]] = []
        self.results: dict[str, object] = {"status": {"running": True, "pid": os.getpid()}}
        self.raises: dict[str, BaseException] = {}
        self._lock = threading.Lock()

    def __call__(self, cmd: str, args: dict[str, object]) -> object:
        with self._lock:
            self.calls.append((cmd, dict(args)))
        if cmd in self.raises:
            raise self.raises[cmd]
        result = self.results.get(cmd, {"cmd": cmd, "args": args})
        return result(args) if callable(result) else result


@pytest.fixture
def base() -> Iterator[Path]:
    # Short (AF_UNIX paths are limited to 108 bytes) and traversable by another uid, so that
    # the only thing keeping uid 65534 out is the socket directory's own mode.
    path = Path(tempfile.mkdtemp(prefix="almat-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def fake() -> FakeDispatcher:
    return FakeDispatcher()


@pytest.fixture
def make_server(base: Path, fake: FakeDispatcher) -> Iterator[Callable[..., ControlServer]]:
    servers: list[ControlServer] = []

    def make(**kwargs: object) -> ControlServer:
        server = ControlServer(base / "alma" / "s.sock", fake, **kwargs)  # type: ignore[arg-type]  # the fake dispatcher is structurally what the server calls
        server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def server(make_server: Callable[..., ControlServer]) -> ControlServer:
    return make_server()


def raw_exchange(path: Path, payload: bytes, timeout: float = 5.0) -> list[dict[str, Any]]:
    """Send raw bytes, half-close, and return every answer line the server sent."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(os.fspath(path))
        conn.sendall(payload)
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


# --------------------------------------------------------------------------- requests and answers


def test_client_round_trip_dispatches_checked_args(
    server: ControlServer, fake: FakeDispatcher
) -> None:
    client = Client(server.socket_path, timeout=5)
    assert client.call("status") == {"running": True, "pid": os.getpid()}
    result = client.call("memory.add", content="Decidí usar SQLite ñ", tags=["db"])
    assert result == {
        "cmd": "memory.add",
        "args": {
            "content": "Decidí usar SQLite ñ",
            "tags": ["db"],
            "project": "",
            "importance": None,
            "memory_type": None,
            "theme": None,
            "related_to": None,
        },
    }
    assert [c for c, _ in fake.calls] == ["status", "memory.add"]


def test_alma_errors_travel_as_code_and_sentence(
    server: ControlServer, fake: FakeDispatcher
) -> None:
    fake.raises["suggestions.show"] = NotFoundError(
        "No suggestion 9; list them with `alma-ctl suggestions list --all`."
    )
    with pytest.raises(NotFoundError, match="No suggestion 9; list them"):
        Client(server.socket_path, 5).call("suggestions.show", id=9)


def test_answers_are_in_the_language_the_client_sends(
    server: ControlServer, fake: FakeDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    from policies.i18n import _, current_language

    languages: list[str] = []

    def show(args: dict[str, object]) -> object:
        languages.append(current_language())
        raise NotFoundError(_("The daemon hit an internal error; its log has the details."))

    fake.results["suggestions.show"] = show
    client = Client(server.socket_path, 5)
    with pytest.raises(NotFoundError, match=r"^The daemon hit an internal error"):
        client.call("suggestions.show", id=9)
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    monkeypatch.setattr("policies.i18n._process_language", None)  # the client reads its locale
    with pytest.raises(NotFoundError, match=r"^El daemon tuvo un error interno"):
        client.call("suggestions.show", id=9)
    with pytest.raises(BadArgumentError, match=r"^ID de `alma-ctl suggestions show` debe ser"):
        _raw_call(
            server, {"v": 1, "id": 1, "cmd": "suggestions.show", "lang": "es", "args": {"id": 0}}
        )
    assert languages == ["en", "es"]


def _raw_call(server: ControlServer, message: dict[str, object]) -> object:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(str(server.socket_path))
        conn.sendall(json.dumps(message).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n") and (chunk := conn.recv(65536)):
            data += chunk
    return protocol.parse_response(data.rstrip(b"\n"), int(str(message["id"])))


def test_other_exceptions_are_internal_and_never_leak(
    server: ControlServer, fake: FakeDispatcher, caplog: pytest.LogCaptureFixture
) -> None:
    fake.raises["history"] = RuntimeError("secret path /home/ana/private")
    fake.results["trash.list"] = [object()]  # a handler bug: not JSON
    with caplog.at_level(logging.ERROR, logger="alma.control"):
        for cmd in ("history", "trash.list"):
            with pytest.raises(AlmaError) as info:
                Client(server.socket_path, 5).call(cmd)
            assert info.value.code == ErrorCode.INTERNAL
            assert "secret" not in info.value.message and "log" in info.value.message
    assert "secret path" in caplog.text and "Traceback" in caplog.text
    assert Client(server.socket_path, 5).call("status") is not None


def test_client_checks_args_before_sending(server: ControlServer, fake: FakeDispatcher) -> None:
    with pytest.raises(BadArgumentError):
        Client(server.socket_path, 5).call("history", limit=0)
    with pytest.raises(UnknownCommandError):
        Client(server.socket_path, 5).call("rm")
    assert fake.calls == []


def test_server_refuses_invalid_requests_before_dispatch(
    server: ControlServer, fake: FakeDispatcher
) -> None:
    lines = [
        b'{"v":1,"id":1,"cmd":"os.system","args":{"command":"touch /tmp/x"}}',
        b'{"v":1,"id":2,"cmd":"suggestions.accept","args":{"id":"1; rm -rf /"}}',
        b'{"v":1,"id":3,"cmd":"suggestions.accept","args":{}}',
        b'{"v":2,"id":4,"cmd":"status","args":{}}',
        b'{"v":1,"id":5,"cmd":"status","args":{"__class__":1}}',
        b"",
        b'{"v":1,"id":6,"cmd":"status"}\r',
    ]
    answers = raw_exchange(server.socket_path, b"\n".join(lines) + b"\n")
    codes = [(a["id"], a["error"]["code"] if not a["ok"] else 0) for a in answers]
    assert codes == [
        (1, ErrorCode.UNKNOWN_COMMAND),
        (2, ErrorCode.BAD_ARGUMENT),
        (3, ErrorCode.BAD_ARGUMENT),
        (4, ErrorCode.VERSION_MISMATCH),
        (5, ErrorCode.BAD_ARGUMENT),
        (None, ErrorCode.BAD_REQUEST),
        (6, 0),
    ]
    assert fake.calls == [("status", {})]


def test_oversized_request_and_answer(
    make_server: Callable[..., ControlServer], fake: FakeDispatcher
) -> None:
    server = make_server(max_request_bytes=1000, max_response_bytes=2000)
    big = b'{"v":1,"id":1,"cmd":"status","args":{"x":"' + b"a" * 2000 + b'"}}\n'
    answers = raw_exchange(server.socket_path, big + b'{"v":1,"id":2,"cmd":"status"}\n')
    assert len(answers) == 1 and answers[0]["error"]["code"] == ErrorCode.TOO_LARGE
    no_newline = b"x" * 5000  # never ends: refused as soon as it passes the limit
    assert raw_exchange(server.socket_path, no_newline)[0]["error"]["code"] == ErrorCode.TOO_LARGE
    fake.results["history"] = ["x" * 3000]
    with pytest.raises(AlmaError, match="too large") as info:
        Client(server.socket_path, 5).call("history")
    assert info.value.code == ErrorCode.TOO_LARGE
    assert [c for c, _ in fake.calls] == ["history"]


def test_full_size_request_is_accepted(server: ControlServer, fake: FakeDispatcher) -> None:
    # The framing reads a line of the full request size whole and answers it by the command
    # table (a memory's content has its own, smaller limit: policies.limits).
    content = "ñ" * ((protocol.MAX_REQUEST_BYTES - 200) // 2)
    line = protocol.encode_request(1, "memory.add", {"content": content})
    assert len(line) > protocol.MAX_REQUEST_BYTES - 300
    (answer,) = raw_exchange(server.socket_path, line)
    error = answer["error"]
    assert isinstance(error, dict) and error["code"] == ErrorCode.BAD_ARGUMENT, answer
    assert fake.calls == []
    at_limit = "ñ" * L.CONTENT_CHARS
    Client(server.socket_path, 10).call("memory.add", content=at_limit)
    assert fake.calls[0][1]["content"] == at_limit


@contextlib.contextmanager
def held_connections(path: Path, count: int, sending: bytes = b"") -> Iterator[None]:
    """``count`` connections kept open (each having sent ``sending``) for the block."""
    held = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for conn in held:
            conn.connect(os.fspath(path))
            conn.sendall(sending)
        yield
    finally:
        for conn in held:
            conn.close()


def one_more_connection(path: Path) -> dict[str, Any]:
    """The first answer a new connection gets without sending anything."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(os.fspath(path))
        answer: dict[str, Any] = json.loads(conn.recv(65536))
    return answer


def test_connection_cap(make_server: Callable[..., ControlServer]) -> None:
    """Connections each receiving a request are not idle: none of them makes room."""
    server = make_server(max_connections=2, max_per_peer=4)
    with held_connections(server.socket_path, 2, sending=b'{"v":1,'):
        answer = one_more_connection(server.socket_path)
    assert answer["error"]["code"] == ErrorCode.UNAVAILABLE
    deadline = time.monotonic() + 5
    while True:  # the slots come back once the held connections are closed
        try:
            assert Client(server.socket_path, 5).call("status")
            break
        except UnavailableError:
            assert time.monotonic() < deadline
            time.sleep(0.02)


def test_the_longest_idle_connection_makes_room_for_a_request(
    make_server: Callable[..., ControlServer],
) -> None:
    """At the cap, a newcomer is let in by closing the connection idle longest, never one
    receiving a request: connections that send nothing cannot lock a request out."""
    server = make_server(max_connections=3, first_request_timeout=60.0)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as oldest:
        oldest.settimeout(10)
        oldest.connect(os.fspath(server.socket_path))
        time.sleep(0.2)
        with (
            held_connections(server.socket_path, 1),
            held_connections(server.socket_path, 1, sending=b'{"v":1,'),
        ):
            deadline = time.monotonic() + 10
            while len(server._conns) < 3:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            other = _status_from_another_process(server.socket_path)
            assert other.returncode == 0 and "running" in other.stdout, other.stderr
            assert oldest.recv(10) == b""  # closed to make room, without a word


def test_a_connection_that_never_asks_is_closed_soon(
    make_server: Callable[..., ControlServer],
) -> None:
    server = make_server(first_request_timeout=0.2, idle_timeout=60.0)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(os.fspath(server.socket_path))
        started = time.monotonic()
        assert conn.recv(10) == b""
        assert time.monotonic() - started < 3


def test_idle_connection_is_closed(make_server: Callable[..., ControlServer]) -> None:
    server = make_server(idle_timeout=0.2)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5)
        conn.connect(os.fspath(server.socket_path))
        started = time.monotonic()
        assert conn.recv(10) == b""
        assert time.monotonic() - started < 3


def test_close_lets_a_dispatch_in_flight_answer(
    make_server: Callable[..., ControlServer], fake: FakeDispatcher
) -> None:
    server = make_server()
    entered, release = threading.Event(), threading.Event()

    def slow(args: dict[str, object]) -> object:
        entered.set()
        release.wait(5)
        return {"id": 7, "status": "done"}

    fake.results["suggestions.accept"] = slow
    answers: list[object] = []
    caller = threading.Thread(
        target=lambda: answers.append(
            Client(server.socket_path, 10).call("suggestions.accept", id=3)
        )
    )
    caller.start()
    idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # an idle one must not hold close up
    idle.connect(os.fspath(server.socket_path))
    assert entered.wait(5)
    closer = threading.Thread(target=server.close)
    closer.start()
    time.sleep(0.1)
    release.set()
    closer.join(10)
    caller.join(10)
    idle.close()
    assert answers == [{"id": 7, "status": "done"}]
    assert not closer.is_alive() and not server.socket_path.exists()


# --------------------------------------------------------------------------- the socket's files


def test_dir_is_0700_and_socket_0600(server: ControlServer, base: Path) -> None:
    dir_info = os.lstat(base / "alma")
    sock_info = os.lstat(server.socket_path)
    assert stat.S_IMODE(dir_info.st_mode) == 0o700 and dir_info.st_uid == os.getuid()
    assert stat.S_ISSOCK(sock_info.st_mode) and stat.S_IMODE(sock_info.st_mode) == 0o600


def test_dir_created_0700_whatever_the_umask(base: Path, fake: FakeDispatcher) -> None:
    old = os.umask(0o277)
    try:
        with ControlServer(base / "alma" / "s.sock", fake):
            assert stat.S_IMODE(os.lstat(base / "alma").st_mode) == 0o700
    finally:
        os.umask(old)


def _refuses(base: Path, fake: FakeDispatcher, match: str) -> None:
    with pytest.raises(UnavailableError, match=match) as info:
        ControlServer(base / "alma" / "s.sock", fake).start()
    assert "\n" not in info.value.message
    assert not (base / "alma" / "s.sock").exists()


@pytest.mark.parametrize("mode", [0o755, 0o711, 0o770, 0o500, 0o1700])
def test_refuses_dir_of_wrong_mode_and_leaves_it(
    base: Path, fake: FakeDispatcher, mode: int
) -> None:
    (base / "alma").mkdir()
    (base / "alma").chmod(mode)
    _refuses(base, fake, "chmod 700")
    assert stat.S_IMODE(os.lstat(base / "alma").st_mode) == mode  # never fixed silently


def test_refuses_dir_of_another_owner(base: Path, fake: FakeDispatcher) -> None:
    (base / "alma").mkdir(mode=0o700)
    os.chown(base / "alma", NOBODY, NOBODY)
    _refuses(base, fake, f"belongs to uid {NOBODY}")
    assert os.lstat(base / "alma").st_uid == NOBODY


def test_refuses_planted_symlink(base: Path, fake: FakeDispatcher) -> None:
    target = base / "elsewhere"
    target.mkdir(mode=0o700)
    (base / "alma").symlink_to(target)
    _refuses(base, fake, "symlink")
    assert list(target.iterdir()) == []


def test_refuses_a_file_in_place_of_the_socket(base: Path, fake: FakeDispatcher) -> None:
    (base / "alma").mkdir(mode=0o700)
    (base / "alma" / "s.sock").write_text("not a socket")
    with pytest.raises(UnavailableError, match="not a socket"):
        ControlServer(base / "alma" / "s.sock", fake).start()
    assert (base / "alma" / "s.sock").read_text() == "not a socket"


def test_refuses_when_another_daemon_listens(server: ControlServer, fake: FakeDispatcher) -> None:
    with pytest.raises(UnavailableError, match="Another alma-agentd"):
        ControlServer(server.socket_path, fake).start()
    assert Client(server.socket_path, 5).call("status")  # the first one is untouched


def test_replaces_a_stale_socket(base: Path, fake: FakeDispatcher) -> None:
    (base / "alma").mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(os.fspath(base / "alma" / "s.sock"))
    stale.close()  # a crashed daemon leaves the file behind, nobody listening
    with ControlServer(base / "alma" / "s.sock", fake) as server:
        assert Client(server.socket_path, 5).call("status")


def test_refuses_too_long_a_path(fake: FakeDispatcher) -> None:
    with pytest.raises(UnavailableError, match="XDG_RUNTIME_DIR"):
        ControlServer(Path("/tmp/" + "x" * 120 + "/s.sock"), fake).start()


def test_close_removes_only_its_own_socket(base: Path, fake: FakeDispatcher) -> None:
    server = ControlServer(base / "alma" / "s.sock", fake)
    server.start()
    server.close()
    assert not server.socket_path.exists()
    with pytest.raises(DaemonUnreachable):
        Client(server.socket_path, 1).call("status")
    first = ControlServer(base / "alma" / "s.sock", fake)
    first.start()
    first.socket_path.unlink()  # someone else's socket now takes the name
    second = ControlServer(base / "alma" / "s.sock", fake)
    second.start()
    first.close()
    assert second.socket_path.exists()
    assert Client(second.socket_path, 5).call("status")
    second.close()


# --------------------------------------------------------------------------- other uids


def _as_nobody(work: Callable[[], bytes]) -> bytes:
    """Run ``work`` in a forked child that dropped to uid/gid 65534; return what it reported."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        os.close(read_end)
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            report = work()
        except BaseException as exc:
            report = f"child error {type(exc).__name__}: {exc}".encode()
        os.write(write_end, report)
        os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return b"".join(chunks)


def _connect_and_ask(path: Path) -> Callable[[], bytes]:
    def work() -> bytes:
        assert os.getuid() == NOBODY
        try:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(5)
            conn.connect(os.fspath(path))
        except PermissionError:
            return b"EACCES"
        conn.sendall(b'{"v":1,"id":1,"cmd":"autonomy.on","args":{}}\n')
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
        return data

    return work


@pytest.mark.root
def test_another_uid_cannot_reach_the_socket(server: ControlServer, fake: FakeDispatcher) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to switch to another uid")
    assert _as_nobody(_connect_and_ask(server.socket_path)) == b"EACCES"
    assert fake.calls == []


@pytest.mark.root
def test_peer_uid_is_checked_even_if_the_files_are_open(
    server: ControlServer, fake: FakeDispatcher, caplog: pytest.LogCaptureFixture
) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to switch to another uid")
    # Open the directory and the socket to everyone, as a mistake or an attacker with a bug
    # might: SO_PEERCRED must still turn uid 65534 away, and nothing may be dispatched.
    server.socket_path.parent.chmod(0o755)
    server.socket_path.chmod(0o666)
    try:
        with caplog.at_level(logging.WARNING, logger="alma.control"):
            report = _as_nobody(_connect_and_ask(server.socket_path))
    finally:
        server.socket_path.parent.chmod(0o700)
        server.socket_path.chmod(0o600)
    answer = json.loads(report)
    assert answer["ok"] is False and answer["error"]["code"] == ErrorCode.REFUSED
    assert "Only the user who runs alma-agentd" in answer["error"]["message"]
    assert fake.calls == []
    assert f"uid {NOBODY}" in caplog.text
    assert Client(server.socket_path, 5).call("autonomy.on")  # while the owner still gets in
    assert fake.calls == [("autonomy.on", {})]


# --------------------------------------------------------------------------- fuzzing


_JUNK: list[object] = [
    None, True, False, 0, -1, 1, 2**63, 10**40, 1.5, -0.0, "", " ", "x" * 300, "\x00", "ñ",
    [], [1], ["a", None], {}, {"a": 1}, "../../etc/passwd", "$(reboot)", "__import__('os')",
]  # fmt: skip
_BAD_CMDS = ["", "eval", "exec", "__class__", "__init__", "os.system", "STATUS", "status ",
             "suggestions", "suggestions.", ".list", "memory.add.x", "ñ", "\x00status"]  # fmt: skip


def _fuzz_line(rng: random.Random) -> bytes:
    kind = rng.randrange(10)
    envelope: dict[str, object] = {"v": 1, "id": rng.randrange(1, 10**6)}
    if kind == 0:  # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120))).replace(b"\n", b"")
    if kind == 1:  # invalid UTF-8 inside an otherwise fine request
        good = b'{"v":1,"id":1,"cmd":"status","args":{}}'
        cut = rng.randrange(len(good))
        return (
            good[:cut] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88"]) + good[cut:]
        )
    if kind == 2:  # deep nesting
        depth = rng.choice([100, 1000, 10_000, 60_000])
        opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
        return (
            b'{"v":1,"id":1,"cmd":"status","args":{"x":'
            + opener * depth
            + b"1"
            + closer * depth
            + b"}}"
        )
    if kind == 3:  # huge and odd numbers
        number = rng.choice(
            [b"9" * 5000, b"1e999", b"-1e999", b"NaN", b"Infinity", b"1" * 30, b"0.0"]
        )
        field = rng.choice([b'"id"', b'"v"'])
        rest = b'"cmd":"history","args":{"limit":' + number + b"}"
        return (
            b"{" + field + b":" + number + b"," + rest + b"}"
            if rng.random() < 0.5
            else b'{"v":1,"id":1,' + rest + b"}"
        )
    if kind == 4:  # unknown commands
        envelope.update(cmd=rng.choice(_BAD_CMDS), args={})
    elif kind == 5:  # wrong versions
        envelope.update(v=rng.choice([0, 2, -1, "1", 1.0, None, True, [1]]), cmd="status")
    elif kind == 6:  # wrong envelope types and fields
        envelope.update(
            rng.choice(
                [{"cmd": 1}, {"args": []}, {"id": "1"}, {"id": None}, {"x": 1}, {"args": None}]
            )
        )
        envelope.setdefault("cmd", "status")
    else:  # real commands with mutated arguments (some of them happen to be valid)
        command = COMMANDS[rng.choice(sorted(COMMANDS))]
        names = [a.name for a in command.args] + ["bogus", "__dict__"]
        args = {rng.choice(names): rng.choice(_JUNK) for _ in range(rng.randrange(0, 4))}
        envelope.update(cmd=command.name, args=args)
    return json.dumps(envelope).encode()


def _predicted_ok(line: bytes) -> bool:
    """Whether ``line`` reaches the dispatcher: valid, and not chat.cancel (the server answers
    that one itself: it is about the connection's own stream)."""
    try:
        request = protocol.parse_request(line)
        validate(request.cmd, request.args)
    except (protocol.WireError, AlmaError):
        return False
    return request.cmd != "chat.cancel"


def _lockstep(conn: socket.socket, buffer: bytearray, line: bytes) -> dict[str, object]:
    conn.sendall(line + b"\n")
    while b"\n" not in buffer:
        chunk = conn.recv(65536)
        assert chunk, "the server closed a connection it should have kept"
        buffer += chunk
    answer, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    decoded = json.loads(answer)
    assert isinstance(decoded, dict)
    return decoded


def test_survives_ten_thousand_hostile_messages(
    server: ControlServer, fake: FakeDispatcher
) -> None:
    rng = random.Random(20261122)
    fake.results = {}  # every valid call echoes; nothing is special
    expected_dispatches = 0
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(10)
    conn.connect(os.fspath(server.socket_path))
    buffer = bytearray()
    started = time.monotonic()
    for _ in range(9_900):
        line = _fuzz_line(rng)
        expected_dispatches += _predicted_ok(line)
        answer = _lockstep(conn, buffer, line)
        assert answer["v"] == 1 and answer["ok"] in (True, False)
        if answer["ok"] is False:
            error = answer["error"]
            assert isinstance(error, dict)
            assert error["code"] in set(ErrorCode) - {ErrorCode.INTERNAL}
            assert isinstance(error["message"], str) and len(error["message"]) < 400
    conn.close()
    # Connection-level abuse: oversized lines, partial lines, no newline, then hang up.
    for i in range(100):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
            raw.settimeout(10)
            raw.connect(os.fspath(server.socket_path))
            if i % 4 == 0:
                raw.sendall(os.urandom(protocol.MAX_REQUEST_BYTES + 10).replace(b"\n", b"."))
                assert (
                    json.loads(raw.recv(65536).split(b"\n")[0])["error"]["code"]
                    == ErrorCode.TOO_LARGE
                )
            elif i % 4 == 1:
                raw.sendall(b'{"v":1,"id":1,"cmd":"autonomy.off","args":{}')  # no newline
            elif i % 4 == 2:
                raw.sendall(os.urandom(rng.randrange(1, 5000)).replace(b"\n", b""))
            # i % 4 == 3: connect and hang up at once
    assert time.monotonic() - started < 60
    assert len(fake.calls) == expected_dispatches
    for cmd, args in fake.calls:  # nothing invalid was ever dispatched
        assert validate(cmd, args) == args
    # The count matches only the complete lines: no partial line or oversized one was dispatched.
    assert Client(server.socket_path, 5).call("status") == {
        "cmd": "status",
        "args": {},
    }


def _trickle(path: Path, stop: threading.Event, answers: list[bytes]) -> None:
    """A client sending one byte of a request at a time, never a newline."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(os.fspath(path))
        try:
            while not stop.is_set():
                conn.sendall(b"{")
                if stop.wait(0.05):
                    break
        except OSError:
            pass
        try:
            conn.settimeout(5)
            answers.append(conn.recv(65536))
        except OSError:
            answers.append(b"")


def test_a_request_trickled_byte_by_byte_is_cut_at_its_deadline(
    make_server: Callable[..., ControlServer],
) -> None:
    """The limit is per request, not per ``recv``: a connection trickling a byte more often
    than the idle limit would otherwise keep its slot for ever, and with all slots taken no one
    else would get in."""
    server = make_server(max_connections=2, idle_timeout=60.0, request_timeout=2.0)
    stop = threading.Event()
    answers: list[bytes] = []
    tricklers = [
        threading.Thread(target=_trickle, args=(server.socket_path, stop, answers))
        for _ in range(2)
    ]
    for t in tricklers:
        t.start()
    try:
        deadline = time.monotonic() + 30  # bounds the waits only; the server cuts at 2 s
        while len(server._conns) < 2:  # both tricklers hold a slot before anyone else comes
            assert time.monotonic() < deadline, "the tricklers never connected"
            time.sleep(0.01)
        while True:
            try:
                assert Client(server.socket_path, 5).call("status")
                break
            except UnavailableError:
                assert time.monotonic() < deadline, "the trickling clients kept every slot"
                time.sleep(0.05)
    finally:
        stop.set()
        for t in tricklers:
            t.join(30)
    assert answers, "the tricklers were never answered"
    for raw in answers:
        if raw:
            err = json.loads(raw.splitlines()[0])["error"]
            assert err["code"] == ErrorCode.BAD_REQUEST
            assert "did not arrive whole within 2 seconds" in err["message"]


def test_quiet_between_requests_is_not_a_slow_request(
    make_server: Callable[..., ControlServer],
) -> None:
    server = make_server(idle_timeout=5.0, request_timeout=0.3)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(os.fspath(server.socket_path))
        time.sleep(0.6)  # longer than a request may take to arrive, shorter than idle
        conn.sendall(b'{"v":1,"id":1,"cmd":"status","args":{}}\n')
        assert json.loads(conn.recv(65536).splitlines()[0])["ok"] is True


def test_a_busy_daemon_is_reported_busy_not_gone(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon refuses a connection over its limit by answering UNAVAILABLE and closing
    without reading; the client's request then fails to send. The client reads the answer,
    and never takes that for a dead daemon (DaemonUnreachable: "not running", exit 3)."""
    (base / "alma").mkdir(mode=0o700)
    path = base / "alma" / "s.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(path))
    listener.listen(4)
    busy = protocol.encode_error(None, ErrorCode.UNAVAILABLE, "Too many connections; try again.")

    def refuse_one() -> None:
        conn, _ = listener.accept()
        conn.sendall(busy)
        conn.close()  # unread input: the client's send fails (EPIPE/ECONNRESET)

    # The subject is the client's reading of a refusal, not its checks: a request larger than
    # the socket buffers hold (over a memory's content limit) makes the send meet the close.
    monkeypatch.setattr("control.client.commands.validate", lambda cmd, args: args)
    try:
        refuser = threading.Thread(target=refuse_one, daemon=True)
        refuser.start()
        big = "ñ" * 300_000
        with pytest.raises(UnavailableError) as caught:
            Client(path, 10).call("memory.add", content=big)
        refuser.join(10)
    finally:
        listener.close()
    assert not isinstance(caught.value, DaemonUnreachable), caught.value
    assert "Too many connections" in caught.value.message


@pytest.mark.parametrize(
    "payload",
    [
        b'{"v":1,"id":1,"cmd":"memory.add","args":{"content":"hola \\ud800"}}\n',
        b'{"v":1,"id":1,"cmd":"\\udcff","args":{}}\n',
        b'{"v":1,"id":1,"cmd":"status","args":{"\\ud83d":1}}\n',
    ],
    ids=["in a value", "in the command", "in a key"],
)
def test_lone_surrogates_are_a_bad_request_and_the_connection_goes_on(
    server: ControlServer, payload: bytes
) -> None:
    """A lone surrogate is a BAD_REQUEST, not INTERNAL (an echo that fails to encode) nor a
    closed connection."""
    answers = raw_exchange(server.socket_path, payload + b'{"v":1,"id":2,"cmd":"status"}\n')
    assert len(answers) == 2, answers
    error = answers[0]["error"]
    assert isinstance(error, dict) and error["code"] == ErrorCode.BAD_REQUEST
    assert "surrogate" in str(error["message"])
    assert answers[1]["ok"] is True


def test_surrogate_pairs_are_text() -> None:
    assert protocol.loads_strict(b'["\\ud83d\\ude00 \\u00f1"]') == ["\U0001f600 ñ"]


def test_a_runtime_folder_of_another_user_is_named_as_such(base: Path) -> None:
    """Another user's 0700 socket folder cannot even be opened: the daemon says whose it is,
    not "a symlink or not a directory". Run as uid 65534 against root's folder."""
    (base / "alma").mkdir(mode=0o700)
    os.chown(base / "alma", 0, 0)

    def work() -> bytes:
        try:
            prepare_socket_dir(base / "alma", NOBODY)
        except UnavailableError as exc:
            return exc.message.encode()
        return b"accepted"

    said = _as_nobody(work).decode()
    assert f"belongs to uid 0, not {NOBODY}" in said, said


# --------------------------------------------------------------------------- who gets a slot


def _status_from_another_process(path: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from control.client import Client; "
        "print(Client(sys.argv[1], 10).call('status'))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, os.fspath(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])),
    )


def test_one_program_gets_its_share_of_connections_and_no_more(
    make_server: Callable[..., ControlServer],
) -> None:
    """Connections count against a cap per peer as well as the whole one: a program
    reconnecting in a loop would otherwise hold every slot and lock the owner's alma-ctl out."""
    server = make_server(max_per_peer=2)
    with held_connections(server.socket_path, 2):
        answer = one_more_connection(server.socket_path)
        other = _status_from_another_process(server.socket_path)
    assert answer["error"]["code"] == ErrorCode.UNAVAILABLE
    assert "This program already has 2 connections open" in answer["error"]["message"]
    assert other.returncode == 0 and "running" in other.stdout, other.stderr


def test_clients_that_only_send_take_no_slot_to_answer(
    make_server: Callable[..., ControlServer],
) -> None:
    """Connections still sending their request wait without taking one of the slots that
    answer requests: a fresh client with a whole line is answered at once."""
    server = make_server(max_busy=1, max_per_peer=20, request_timeout=30.0)
    with held_connections(server.socket_path, 10, sending=b'{"v":1,'):
        started = time.monotonic()
        assert Client(server.socket_path, 10).call("status")
        assert time.monotonic() - started < 5


def test_a_request_with_no_slot_free_in_time_is_told_busy(
    make_server: Callable[..., ControlServer], fake: FakeDispatcher
) -> None:
    server = make_server(max_busy=1, request_timeout=0.5)
    entered, release = threading.Event(), threading.Event()

    def slow(args: dict[str, object]) -> object:
        entered.set()
        release.wait(30)
        return {"slow": True}

    fake.results["memory.stats"] = slow
    caller = threading.Thread(target=lambda: Client(server.socket_path, 30).call("memory.stats"))
    caller.start()
    try:
        assert entered.wait(10)
        with pytest.raises(UnavailableError, match="answering too many requests"):
            Client(server.socket_path, 10).call("status")
    finally:
        release.set()
        caller.join(30)
    assert Client(server.socket_path, 10).call("status")


def test_refusals_in_a_loop_are_counted_not_logged_one_by_one(
    make_server: Callable[..., ControlServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = make_server(max_per_peer=1)
    with (
        caplog.at_level(logging.WARNING, logger="alma.control"),
        held_connections(server.socket_path, 1),
    ):
        for _ in range(50):
            answer = one_more_connection(server.socket_path)
            assert answer["error"]["code"] == ErrorCode.UNAVAILABLE
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 1 and "refused 1 connection(s)" in refusals[0], refusals
