"""Streamed answers on the real ControlServer: events, then one final answer; cancel by a
``chat.cancel`` line or by hanging up; other requests and connections keep being answered.

The producer is an honest fake of the model's worker: a thread that emits tokens until it is
cancelled or has sent its count, then finishes with ``stopped``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control import protocol
from control.client import Client
from control.server import ControlServer
from control.stream import StreamReply
from policies.errors import ErrorCode, UnavailableError
from tests.support.daemon import wait_for


class Producer:
    """Dispatches chat.send as a stream of ``count`` tokens, one every ``pause`` seconds."""

    def __init__(self, count: int = 10_000, pause: float = 0.01) -> None:
        self.count = count
        self.pause = pause
        self.finished: list[str] = []
        self.busy = threading.Lock()
        self.calls: list[str] = []

    def __call__(self, cmd: str, args: dict[str, object]) -> object:
        self.calls.append(cmd)
        if cmd != "chat.send":
            return {"cmd": cmd}
        if not self.busy.acquire(blocking=False):
            raise UnavailableError("ALMA is already answering a message; wait for it or cancel it.")
        reply = StreamReply()
        threading.Thread(target=self._run, args=(reply,), daemon=True).start()
        return reply

    def _run(self, reply: StreamReply) -> None:
        sent = 0
        try:
            reply.emit({"type": "status", "text": "pensando"})
            while sent < self.count and not reply.cancelled.wait(self.pause):
                reply.emit({"type": "token", "text": "ñ"})
                sent += 1
            stopped = "cancelled" if reply.cancelled.is_set() else "done"
            self.finished.append(stopped)
        finally:
            self.busy.release()
        reply.finish({"text": "ñ" * sent, "stopped": stopped, "tokens": sent})


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="almas-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def serve(base: Path, producer: Producer) -> ControlServer:
    """Not started: ``with serve(...)`` starts it and closes it."""
    return ControlServer(base / "alma" / "s.sock", producer)


def send_line(conn: socket.socket, request_id: int, cmd: str, **args: object) -> None:
    conn.sendall(protocol.encode_request(request_id, cmd, args))


def read_lines(conn: socket.socket) -> Iterator[dict[str, Any]]:
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        yield json.loads(line)


def connect(server: ControlServer) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(30)
    conn.connect(os.fspath(server.socket_path))
    return conn


def test_events_then_one_final_answer(base: Path) -> None:
    producer = Producer(count=5)
    with serve(base, producer) as server, connect(server) as conn:
        send_line(conn, 7, "chat.send", session="s1", message="hola")
        lines = read_lines(conn)
        got = [next(lines) for _ in range(7)]
    assert got[0] == {"v": 1, "id": 7, "stream": {"type": "status", "text": "pensando"}}
    assert [line["stream"] for line in got[1:6]] == [{"type": "token", "text": "ñ"}] * 5
    assert got[6] == {
        "v": 1,
        "id": 7,
        "ok": True,
        "result": {"text": "ñññññ", "stopped": "done", "tokens": 5},
    }


def test_cancel_line_stops_the_generation_and_is_answered_after_it(base: Path) -> None:
    producer = Producer()
    with serve(base, producer) as server, connect(server) as conn:
        send_line(conn, 1, "chat.send", session="s1", message="hola")
        lines = read_lines(conn)
        assert next(lines)["stream"] == {"type": "status", "text": "pensando"}
        assert next(lines)["stream"] == {"type": "token", "text": "ñ"}
        send_line(conn, 2, "chat.cancel")
        rest = list(_until_id(lines, 2))
    final, cancel = rest[-2], rest[-1]
    assert final["id"] == 1 and final["result"]["stopped"] == "cancelled"
    assert cancel == {"v": 1, "id": 2, "ok": True, "result": {"cancelled": True}}
    assert producer.finished == ["cancelled"]
    assert "chat.cancel" not in producer.calls  # the connection's business, not the dispatcher's


def test_requests_sent_while_streaming_are_answered_after_it_in_order(base: Path) -> None:
    producer = Producer(count=30)
    with serve(base, producer) as server, connect(server) as conn:
        send_line(conn, 1, "chat.send", session="s1", message="hola")
        send_line(conn, 2, "status")
        lines = list(_until_id(read_lines(conn), 2))
    finals = [line["id"] for line in lines if "stream" not in line]
    assert finals == [1, 2]
    assert lines[-2]["result"]["stopped"] == "done"


def test_a_cancel_without_a_stream_cancels_nothing(base: Path) -> None:
    with serve(base, Producer()) as server:
        client = Client(server.socket_path, 10)
        assert client.call("chat.cancel") == {"cancelled": False}


def test_hanging_up_stops_the_generation(base: Path) -> None:
    producer = Producer()
    with serve(base, producer) as server:
        conn = connect(server)
        send_line(conn, 1, "chat.send", session="s1", message="hola")
        lines = read_lines(conn)
        next(lines)
        next(lines)
        conn.close()
        wait_for(lambda: producer.finished, timeout=30, what="the generation to stop")
    assert producer.finished == ["cancelled"]


def test_a_second_generation_is_told_busy_and_other_commands_answer(base: Path) -> None:
    producer = Producer()
    with serve(base, producer) as server, connect(server) as conn:
        send_line(conn, 1, "chat.send", session="s1", message="hola")
        lines = read_lines(conn)
        next(lines)
        client = Client(server.socket_path, 10)
        with pytest.raises(UnavailableError, match="already answering"):
            list(client.stream("chat.send", session="s2", message="otra"))
        assert client.call("status") == {"cmd": "status"}
        send_line(conn, 2, "chat.cancel")
        list(_until_id(lines, 2))


def test_client_stream_yields_events_and_keeps_the_result(base: Path) -> None:
    with serve(base, Producer(count=3)) as server:
        stream = Client(server.socket_path, 10).stream("chat.send", session="s", message="¿qué?")
        events = list(stream)
    assert [e["type"] for e in events] == ["status", "token", "token", "token"]
    assert stream.result == {"text": "ñññ", "stopped": "done", "tokens": 3}


def test_client_stream_cancel(base: Path) -> None:
    producer = Producer()
    with serve(base, producer) as server:
        stream = Client(server.socket_path, 10).stream("chat.send", session="s", message="hola")
        seen = 0
        for event in stream:
            if event["type"] == "token":
                seen += 1
                if seen == 3:
                    stream.cancel()
    assert isinstance(stream.result, dict) and stream.result["stopped"] == "cancelled"
    assert producer.finished == ["cancelled"]


def test_server_close_cancels_a_stream(base: Path) -> None:
    producer = Producer()
    server = serve(base, producer)
    server.start()
    conn = connect(server)
    send_line(conn, 1, "chat.send", session="s1", message="hola")
    next(read_lines(conn))
    server.close(timeout=30)
    conn.close()
    assert producer.finished == ["cancelled"]


def _until_id(lines: Iterator[dict[str, Any]], last_id: int) -> Iterator[dict[str, Any]]:
    for line in lines:
        yield line
        if line.get("id") == last_id and "stream" not in line:
            return


def test_client_stream_shows_the_daemons_refusal_not_a_broken_pipe(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon at its connection cap answers with a sentence and hangs up at once, maybe
    before the request is sent: the person reads that sentence, not "Broken pipe"."""
    path = base / "s.sock"
    sentence = "The daemon is serving too many connections; try again in a moment."
    refused = threading.Event()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(os.fspath(path))
        listener.listen()

        def refuse() -> None:
            conn, _addr = listener.accept()
            conn.sendall(protocol.encode_error(None, ErrorCode.UNAVAILABLE, sentence))
            conn.close()
            refused.set()

        server = threading.Thread(target=refuse)
        server.start()
        client = Client(path, 5)
        connect = client._connect

        def connect_then_wait_for_the_hang_up() -> object:
            conn = connect()
            assert refused.wait(5)
            return conn

        monkeypatch.setattr(client, "_connect", connect_then_wait_for_the_hang_up)
        with pytest.raises(UnavailableError, match="too many connections"):
            list(client.stream("chat.send", session="s", message="hola"))
        server.join(5)


def test_a_client_writing_without_pause_while_an_answer_streams_is_cut_off(base: Path) -> None:
    """Requests sent during a stream wait for it to end. All of what is kept is bounded, not
    only the unfinished line (whole lines written without pause would pile up): past the
    bound the connection is closed and its generation cancelled."""
    producer = Producer()
    burst = protocol.encode_request(2, "status", {}) * 5_000
    with serve(base, producer) as server, connect(server) as conn:
        send_line(conn, 1, "chat.send", session="s1", message="hola")
        assert next(read_lines(conn))["stream"]["type"] == "status"
        sent = 0
        with pytest.raises(OSError):  # the daemon hangs up: EPIPE or ECONNRESET
            while sent < 64 * protocol.MAX_REQUEST_BYTES:
                conn.sendall(burst)
                sent += len(burst)
        # 2 MiB kept, then the goodbye drains at most 4 MiB unread; the socket buffers the rest.
        assert sent <= 8 * protocol.MAX_REQUEST_BYTES
        wait_for(lambda: producer.finished == ["cancelled"], timeout=10, what="the cancel")
        assert Client(server.socket_path, 5).call("status") == {"cmd": "status"}
