"""The model runtime with an honest fake backend (the model is an edge): lazy loading in the
worker, one chat generation at a time, background work behind the chat and bounded by its
timeout, ``use`` keeping the old model on failure, and the bounds of one generation."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent.voice.backends import loopback_url
from agent.voice.llama import LlamaBackend
from agent.voice.model import (
    CHAT_SAMPLING,
    Backend,
    Chunk,
    Failure,
    Message,
    ModelFailed,
    ModelRuntime,
    Sampling,
    generate,
)
from agent.voice.model_file import check_gguf
from policies.errors import BadArgumentError, UnavailableError
from tests.support.daemon import wait_for


class FakeBackend:
    kind = "llama-cpp"
    failure: Failure | None = None  # typed as Backend's, so a FakeBackend is one
    n_ctx = 2048
    threads: int | None = 1

    def __init__(
        self, path: str, words: int = 5, pause: float = 0.0, text: str | None = None
    ) -> None:
        self.path = path
        self.pieces = [w + " " for w in text.split()] if text else None  # else "w0 w1 ..."
        self.words = len(self.pieces) if self.pieces else words
        self.pause = pause
        self.gate = threading.Event()
        self.gate.set()
        self.calls: list[dict[str, Any]] = []
        self.closed = False
        self.lora: str | None = None  # the adapter applied, as a model process says

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        self.calls.append(
            {"messages": list(messages), "max_tokens": max_tokens, "sampling": sampling}
        )
        for i in range(min(self.words, max_tokens)):
            self.gate.wait()
            time.sleep(self.pause)
            yield self.pieces[i] if self.pieces else f"w{i} ", None
        yield "", "length" if self.words >= max_tokens else "stop"

    def close(self) -> None:
        self.closed = True


class Loader:
    def __init__(self, **backend_args: Any) -> None:
        self.loaded: list[str] = []
        self.adapters: list[str | None] = []
        self.backend_args = backend_args
        self.refuse: set[str] = set()

    def __call__(self, path: str, lora: str | None = None) -> Backend:
        if path in self.refuse:
            raise BadArgumentError(f"{path} could not be loaded as a model.")
        self.loaded.append(path)
        self.adapters.append(lora)
        backend = FakeBackend(path, **self.backend_args)
        backend.lora = lora
        return backend


@pytest.fixture
def loader() -> Loader:
    return Loader()


@pytest.fixture
def runtime(loader: Loader) -> Iterator[ModelRuntime]:
    rt = ModelRuntime("embedded", loader)
    yield rt
    rt.close()


def test_nothing_loads_until_a_job_needs_it(runtime: ModelRuntime, loader: Loader) -> None:
    assert runtime.status()["loaded"] is False and loader.loaded == []
    assert runtime.complete([{"role": "user", "content": "x"}], max_tokens=10, timeout_s=30) == (
        "w0 w1 w2 w3 w4 "
    )
    assert loader.loaded == ["embedded"] and runtime.status()["loaded"] is True


def test_tokens_are_counted_by_a_loaded_model_and_none_is_loaded_to_count(
    runtime: ModelRuntime, loader: Loader
) -> None:
    assert runtime.count_loaded("uno dos tres") is None and loader.loaded == []
    runtime.complete([{"role": "user", "content": "x"}], max_tokens=1, timeout_s=30)
    assert runtime.count_loaded("uno dos tres") == 3


def test_a_switch_does_not_load_the_model_it_replaces(
    runtime: ModelRuntime, loader: Loader
) -> None:
    runtime.use("http://127.0.0.1:9")  # a URL: no GGUF check before the (fake) loader
    assert loader.loaded == ["http://127.0.0.1:9"]


def test_complete_gives_none_when_cut_or_without_a_model(loader: Loader) -> None:
    rt = ModelRuntime("embedded", Loader(words=50))
    try:
        # Cut at max_tokens: not a whole answer, so a caller falls back on its own result.
        assert rt.complete([{"role": "user", "content": "x"}], max_tokens=3, timeout_s=30) is None
    finally:
        rt.close()
    none = ModelRuntime("", loader)
    try:
        assert none.complete([], max_tokens=3, timeout_s=1) is None
    finally:
        none.close()
    assert loader.loaded == []


def test_one_chat_job_at_a_time_and_background_waits_behind_it() -> None:
    loader = Loader(words=2)
    rt = ModelRuntime("embedded", loader)
    release = threading.Event()
    order: list[str] = []
    try:
        rt.submit_chat(lambda backend: (release.wait(30), order.append("chat")))
        with pytest.raises(UnavailableError, match="already answering"):
            rt.submit_chat(lambda backend: None)
        assert rt.status()["busy"] is True
        # Background work gives up at its timeout rather than wait for the chat.
        assert rt.complete([], max_tokens=3, timeout_s=0.2) is None
        background = threading.Thread(
            target=lambda: order.append(str(rt.complete([], max_tokens=10, timeout_s=30)))
        )
        background.start()
        release.set()
        background.join(30)
        assert order == ["chat", "w0 w1 "]
        wait_for(lambda: not rt.status()["busy"], timeout=30, what="the chat job to end")
        rt.submit_chat(lambda backend: None)  # free again
    finally:
        release.set()
        rt.close()


def test_a_message_sent_once_the_answer_is_given_waits_its_turn_not_refused() -> None:
    # The person reads the end of an answer (or of a cancel) and types the next message at
    # once, while the worker still tidies up after the answer (a killed process, say).
    rt = ModelRuntime("embedded", Loader(words=2))
    tidying = threading.Event()
    order: list[str] = []

    def answer(backend: Backend | None) -> None:
        order.append("first")
        rt.chat_answered()  # what the reply's final line does
        tidying.wait(30)

    try:
        rt.submit_chat(answer)
        wait_for(lambda: order == ["first"], timeout=30, what="the first answer")
        rt.submit_chat(lambda backend: order.append("next"))  # queued, not "already answering"
        with pytest.raises(UnavailableError, match="already answering"):
            rt.submit_chat(lambda backend: None)  # one waiting at most
        assert rt.status()["busy"] is True
        tidying.set()
        wait_for(lambda: order == ["first", "next"], timeout=30, what="the next message")
        wait_for(lambda: not rt.status()["busy"], timeout=30, what="the chat to be free")
    finally:
        tidying.set()
        rt.close()


def test_use_keeps_the_old_model_when_the_new_one_fails(
    runtime: ModelRuntime, loader: Loader, tmp_path: Path
) -> None:
    runtime.complete([], max_tokens=1, timeout_s=30)
    before = runtime.status()
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + bytes(40))
    loader.refuse.add(str(bad))
    with pytest.raises(BadArgumentError, match="could not be loaded"):
        runtime.use(str(bad))
    with pytest.raises(BadArgumentError, match="There is no file"):
        runtime.use(str(tmp_path / "nada.gguf"))
    assert runtime.status() == before
    good = tmp_path / "good.gguf"
    good.write_bytes(b"GGUF" + bytes(40))
    remembered: list[tuple[str, str | None]] = []
    runtime._on_use = lambda path, lora: remembered.append((path, lora))  # the daemon persists
    status = runtime.use(str(good))
    assert status["path"] == str(good) and status["loaded"] is True
    assert remembered == [(str(good), None)]


def test_a_failed_load_is_reported_and_not_retried_each_time(loader: Loader) -> None:
    loader.refuse.add("embedded")
    rt = ModelRuntime("embedded", loader)
    try:
        assert rt.complete([], max_tokens=1, timeout_s=30) is None
        assert "could not be loaded" in rt.status()["error"]
        assert "alma-ctl model use PATH" in rt.unavailable_sentence()
    finally:
        rt.close()


def test_generate_stops_on_cancel_max_tokens_and_deadline() -> None:
    backend = FakeBackend("m.gguf", words=1000)
    seen: list[str] = []
    cancel_after = 3

    result = generate(
        backend,
        [],
        max_tokens=1000,
        deadline=time.monotonic() + 60,
        cancelled=lambda: len(seen) >= cancel_after,
        on_text=seen.append,
    )
    assert result.stopped == "cancelled" and result.tokens == 3 and result.text == "w0 w1 w2 "
    assert result.model == "m"
    capped = generate(backend, [], max_tokens=4, deadline=time.monotonic() + 60, cancelled=bool)
    assert capped.stopped == "max_tokens" and capped.tokens == 4
    slow = FakeBackend("m.gguf", words=1000, pause=0.01)
    late = generate(slow, [], max_tokens=1000, deadline=time.monotonic() + 0.1, cancelled=bool)
    assert late.stopped == "timeout" and 0 < late.tokens < 1000


def test_check_gguf_sentences(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hola")
    (tmp_path / "short.gguf").write_bytes(b"GGUF\x03")
    with pytest.raises(BadArgumentError, match="is not a GGUF model"):
        check_gguf(tmp_path / "a.txt")
    with pytest.raises(BadArgumentError, match="truncated"):
        check_gguf(tmp_path / "short.gguf")
    with pytest.raises(BadArgumentError, match="is a folder"):
        check_gguf(tmp_path)
    with pytest.raises(BadArgumentError, match="There is no file"):
        check_gguf(tmp_path / "no.gguf")


@pytest.mark.parametrize(
    "url",
    [
        "http://192.168.1.10:8080",
        "http://example.com:8080",
        "http://10.0.0.1",
        "http://0.0.0.0:8080",
        "ftp://127.0.0.1",
        "https://127.0.0.1.nip.io",
    ],
)
def test_only_loopback_servers(url: str) -> None:
    with pytest.raises(BadArgumentError) as refused:
        loopback_url(url)
    assert "\n" not in refused.value.message


def test_loopback_urls_accepted() -> None:
    assert loopback_url("http://127.0.0.1:8080") == ("127.0.0.1", 8080, "")
    assert loopback_url("http://localhost:11434/v1") == ("localhost", 11434, "")
    assert loopback_url("http://[::1]:5000/") == ("::1", 5000, "")


class FakeLlama:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.calls.append(kwargs)
        yield {"choices": [{"delta": {"role": "assistant"}, "finish_reason": None}]}
        yield {"choices": [{"delta": {"content": "{}"}, "finish_reason": None}]}
        yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}

    def n_ctx(self) -> int:
        return 2048


def test_a_schema_asks_llama_for_grammar_bound_json_at_temperature_zero() -> None:
    fake = FakeLlama()
    backend = LlamaBackend(fake, "m.gguf", 1)
    schema = {"type": "object"}
    assert list(backend.stream([], max_tokens=9, json_schema=schema)) == [
        ("", None),
        ("{}", None),
        ("", "stop"),
    ]
    call = fake.calls[0]
    assert call["response_format"] == {"type": "json_object", "schema": schema}
    assert call["temperature"] == 0.0 and call["max_tokens"] == 9 and call["stream"] is True


class DyingBackend(FakeBackend):
    """A backend whose process dies in the middle of an answer, then cannot even be closed."""

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        yield "w0 ", None
        self.failure = Failure("the model process crashed (SIGKILL) while answering")
        raise ModelFailed(self.failure)

    def close(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("also_failing", ["", "on_unusable"])
def test_a_teardown_that_raises_never_leaves_the_chat_busy(also_failing: str) -> None:
    loaded: list[FakeBackend] = []

    def load(path: str, lora: str | None = None) -> Backend:
        loaded.append(DyingBackend(path))
        return loaded[-1]

    def persist(_path: str, _reason: str | None) -> None:
        if also_failing:
            raise OSError("database is locked")

    failed: list[BaseException] = []
    answered = threading.Event()

    def answer(backend: Backend | None) -> None:
        try:
            assert backend is not None
            generate(backend, [], max_tokens=9, deadline=float("inf"), cancelled=lambda: False)
        except ModelFailed as exc:
            failed.append(exc)

    rt = ModelRuntime("embedded", load, on_unusable=persist)
    try:
        for _round in range(3):
            answered.clear()
            rt.submit_chat(lambda backend: answered.set() if backend else None)
            assert answered.wait(30)
            wait_for(lambda: not rt.status()["busy"], timeout=30, what="the chat to be free")
            rt.submit_chat(answer)
            wait_for(lambda: not rt.status()["busy"], timeout=30, what="the chat to be free")
            assert "SIGKILL" in str(failed.pop())
        assert len(loaded) == 3 and rt.status()["state"] != "unusable"
    finally:
        rt.close()
