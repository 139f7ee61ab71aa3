"""A LoRA adapter in use end to end: the real alma-agentd, the real model process with the
embedded model (SmolLM2-135M, llama), and adapters written by the test with llama.cpp's own
GGUF writer (tests.support.lora). One that fits loads with ``model use … --lora``, the chat
answers through it, ``model status`` shows it (the process says it applied it) and it stays
across a restart; one that does not fit is refused in one sentence and the old model answers;
``model use`` of the plain model drops it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.voice.model_file import embedded_model_path
from control.client import Client
from tests.support.daemon import DaemonRoot
from tests.support.lora import write_adapter
from tests.support.wire import obj

pytestmark = pytest.mark.slow

BASE = str(embedded_model_path())


@pytest.fixture
def alma(alma: DaemonRoot) -> DaemonRoot:
    """Short answers with all the time they need: a loaded machine makes the model slow."""
    alma.set_settings("model", "max_tokens", 16)
    alma.set_settings("model", "timeout_seconds", 1200)
    alma.set_settings("model", "threads", 1)
    return alma


def answer(alma: DaemonRoot, message: str = "Hola") -> dict[str, Any]:
    client = Client(alma.socket, 1200.0)
    session = obj(client.call("chat.start"))["session"]
    stream = client.stream("chat.send", session=session, message=message)
    tokens = [e["text"] for e in stream if e["type"] == "token"]
    result = obj(stream.result)
    assert result["stopped"] in ("done", "max_tokens") and result["tokens"] > 0, result
    assert "".join(tokens) == result["text"]
    return result


def adapter_of(alma: DaemonRoot, pid: int) -> str | None:
    """The ``--lora`` the running model process was started with."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    given = [a.removeprefix("--lora=") for a in args if a.startswith("--lora=")]
    return given[0] if given else None


def test_an_adapter_that_fits_answers_is_shown_persists_and_a_plain_use_drops_it(
    alma: DaemonRoot, tmp_path: Path
) -> None:
    adapter = write_adapter(tmp_path / "codi-lora.gguf", Path(BASE))
    alma.start()
    status = alma.ok("model", "use", BASE, "--lora", str(adapter))
    assert status["loaded"] is True and status["path"] == BASE
    assert status["lora"] == str(adapter) and status["lora_in_use"] is True
    assert adapter_of(alma, status["pid"]) == str(adapter)
    answer(alma)
    shown = alma.ctl("model", "status", json_out=False).ok().stdout
    assert str(adapter) in shown and "LoRA adapter" in shown and "adapter in use" in shown

    alma.restart()  # the choice persists with its model; loaded again on first use
    assert alma.ok("model", "status")["lora"] == str(adapter)
    answer(alma)
    status = alma.ok("model", "status")
    assert status["lora_in_use"] is True and adapter_of(alma, status["pid"]) == str(adapter)

    status = alma.ok("model", "use", BASE)
    assert "lora" not in status and "lora_in_use" not in status
    assert adapter_of(alma, status["pid"]) is None
    answer(alma)
    alma.restart()
    assert "lora" not in alma.ok("model", "status")


def test_an_adapter_that_does_not_fit_is_refused_and_the_old_model_answers(
    alma: DaemonRoot, tmp_path: Path
) -> None:
    good = write_adapter(tmp_path / "good.gguf", Path(BASE))
    misfits = {
        write_adapter(tmp_path / "qwen.gguf", Path(BASE), arch="qwen2"): (
            "it was made for the qwen2 architecture and the model is llama"
        ),
        write_adapter(
            tmp_path / "missing.gguf",
            Path(BASE),
            targets=("blk.40.attn_q.weight",),
            shapes={"blk.40.attn_q.weight": (576, 576)},
        ): "the model has no tensor blk.40.attn_q.weight",
        write_adapter(
            tmp_path / "shape.gguf", Path(BASE), shapes={"blk.0.attn_v.weight": (576, 576)}
        ): "its matrices for blk.0.attn_v.weight are 576×2 and 2×576, and that tensor is 576×192",
        Path(BASE): "is not a LoRA adapter in GGUF",
    }
    alma.start()
    alma.ok("model", "use", BASE, "--lora", str(good))
    answer(alma)
    before = alma.ok("model", "status")
    for adapter, reason in misfits.items():
        refused = alma.ctl("model", "use", BASE, "--lora", str(adapter))
        assert refused.rc == 2, refused
        sentence = refused.stderr.strip()
        assert reason in sentence and "\n" not in sentence, sentence
        assert sentence.endswith("the model in use stays."), sentence
    refused = alma.ctl("model", "use", "http://127.0.0.1:9", "--lora", str(good))
    assert refused.rc == 2 and "not to a server" in refused.stderr
    after = alma.ok("model", "status")
    assert {k: after[k] for k in ("path", "lora", "lora_in_use", "pid", "loaded")} == {
        k: before[k] for k in ("path", "lora", "lora_in_use", "pid", "loaded")
    }
    answer(alma, "¿Sigues ahí?")
    alma.restart()
    assert alma.ok("model", "status")["lora"] == str(good)
