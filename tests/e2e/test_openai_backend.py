"""The OpenAI-compatible backend against a real local server: llama-cpp-python's own
``python -m llama_cpp.server`` serving the embedded GGUF on 127.0.0.1 and a free port.

Directly (tokens counted by the server's tokenizer, streaming, a cancel that ends the
generation and leaves the server answering) and through the real daemon (``[model] url``:
``chat.send`` streams the server's tokens, a cancel stops it, the turn is logged).
"""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from agent.voice.backends import OpenAIBackend
from agent.voice.model import generate
from agent.voice.model_file import embedded_model_path
from control.client import Client
from policies.errors import AlmaError
from tests.support.daemon import DaemonRoot, wait_for
from tests.support.foreign_server import NOBODY, foreign_server, usable

PIN = "Mi PIN del banco es 4321"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/v1/models")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    # A file, not a pipe: llama.cpp writes a lot while loading, and a full pipe would stop it.
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w+b")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(embedded_model_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_threads",
            "1",
            "--n_ctx",
            "2048",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(
            lambda: answers(port) or proc.poll() is not None,
            timeout=300,
            what="llama_cpp.server to answer",
        )
        assert proc.poll() is None, log.seek(0) or log.read().decode(errors="replace")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_tokens_stream_and_a_cancel_ends_the_generation(server: str) -> None:
    backend = OpenAIBackend.load(server, context_tokens=2048)
    assert backend.count_tokens("Hola, ¿qué tal estás hoy?") < 15  # the server's tokenizer
    pieces: list[str] = []
    result = generate(
        backend,
        [{"role": "user", "content": "Escribe una historia muy larga sobre el mar."}],
        max_tokens=2000,
        deadline=time.monotonic() + 1200,
        cancelled=lambda: len(pieces) >= 3,
        on_text=pieces.append,
    )
    assert result.stopped == "cancelled" and result.tokens == 3 and result.text == "".join(pieces)
    assert result.model == server
    # The server dropped that generation: the next one is answered, whole.
    short = generate(
        backend,
        [{"role": "user", "content": "Hola"}],
        max_tokens=8,
        deadline=time.monotonic() + 1200,
        cancelled=bool,
    )
    assert short.stopped in ("done", "max_tokens") and short.tokens > 0


def test_the_daemon_chats_through_the_server(server: str) -> None:
    alma = DaemonRoot().init()
    try:
        alma.set_settings("model", "url", server)
        alma.set_settings("model", "max_tokens", 16)
        alma.set_settings("model", "timeout_seconds", 1200)
        alma.start()
        client = Client(alma.socket, 1200)
        started = client.call("chat.start")
        assert isinstance(started, dict)
        assert started["model"]["backend"] == "openai" and started["model"]["path"] == server
        stream = client.stream("chat.send", session=started["session"], message="Hola #prueba")
        tokens = [e["text"] for e in stream if e["type"] == "token"]
        assert isinstance(stream.result, dict)
        assert tokens and "".join(tokens) == stream.result["text"]
        assert stream.result["model"] == server
        day = datetime.now().strftime("%Y-%m-%d")
        log = (alma.root / "logs" / f"{day}.md").read_text(encoding="utf-8")
        assert "· usuario\nHola #prueba\n" in log and f"<!-- model: {server}" in log
        status = alma.ok("model", "status")
        assert status["loaded"] is True and status["backend"] == "openai"
    finally:
        alma.close()


def test_a_server_off_the_loopback_is_refused_at_start() -> None:
    alma = DaemonRoot().init()
    try:
        alma.set_settings("model", "url", "http://192.168.1.20:8080")
        proc = alma.spawn()
        assert proc.wait(120) != 0
        assert "loopback" in alma.log()
    finally:
        alma.close()


@pytest.mark.skipif(bool(usable()), reason=usable() or "usable")
def test_a_server_another_user_runs_on_the_port_gets_no_memory() -> None:
    alma = DaemonRoot().init()
    try:
        with foreign_server("Tu PIN es 4321, dime más.") as server:
            alma.set_settings("model", "url", server.url)
            alma.start()
            client = Client(alma.socket, 120)
            session = client.call("chat.start")["session"]
            with pytest.raises(AlmaError, match=f"another user \\(uid {NOBODY}\\)"):
                list(client.stream("chat.send", session=session, message=PIN))
            assert alma.ok("status")["running"] is True
            assert server.heard() == []
            status = alma.ctl("model", "status", json_out=False)
            assert status.rc == 0 and "another user" in status.stdout
    finally:
        alma.close()
