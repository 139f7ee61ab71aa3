"""A LoRA adapter's fit, read from both GGUF headers before anything loads them, and the
runtime's use of it: chosen with its model, shown in status, dropped by a plain ``use``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import gguf
import numpy as np
import pytest

from agent.voice.llama import LlamaBackend
from agent.voice.model import Backend, ModelRuntime
from agent.voice.model_file import check_adapter, embedded_model_path, read_gguf_header
from policies.errors import BadArgumentError
from tests.support.lora import write_adapter
from tests.unit.test_model import FakeBackend, Loader

BASE = embedded_model_path()


def test_the_header_is_what_llama_cpps_own_reader_reads() -> None:
    header = read_gguf_header(BASE)
    reader = gguf.GGUFReader(str(BASE))
    assert {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors} == header.tensors
    assert header.text("general.architecture") == "llama"
    assert header.tensors["blk.0.attn_k.weight"] == (576, 192)


def test_an_adapter_for_the_models_attention_fits(tmp_path: Path) -> None:
    check_adapter(BASE, write_adapter(tmp_path / "a.gguf", BASE))


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (
            lambda path: write_adapter(path, BASE, arch="qwen2"),
            "it was made for the qwen2 architecture and the model is llama",
        ),
        (
            lambda path: write_adapter(
                path,
                BASE,
                targets=("blk.99.attn_q.weight",),
                shapes={"blk.99.attn_q.weight": (576, 576)},
            ),
            "the model has no tensor blk.99.attn_q.weight",
        ),
        (
            lambda path: write_adapter(path, BASE, shapes={"blk.0.attn_k.weight": (576, 576)}),
            "its matrices for blk.0.attn_k.weight are 576×2 and 2×576, and that tensor is 576×192",
        ),
    ],
)
def test_an_adapter_that_does_not_fit_is_refused_in_one_sentence(
    tmp_path: Path, make: Callable[[Path], Path], reason: str
) -> None:
    adapter = make(tmp_path / "a.gguf")
    with pytest.raises(BadArgumentError) as refused:
        check_adapter(BASE, adapter)
    assert str(refused.value) == (
        f"The adapter {adapter} does not fit {BASE}: {reason}; the model in use stays."
    )


def _raw_adapter(path: Path, tensors: dict[str, tuple[int, ...]]) -> Path:
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    for name, shape in tensors.items():
        writer.add_tensor(name, np.zeros(shape, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_half_pair_or_a_stray_tensor_is_refused_and_a_norm_is_skipped(tmp_path: Path) -> None:
    pair = {"blk.0.attn_q.weight.lora_a": (2, 576), "blk.0.attn_q.weight.lora_b": (576, 2)}
    half = _raw_adapter(tmp_path / "half.gguf", {"blk.0.attn_q.weight.lora_a": (2, 576)})
    with pytest.raises(BadArgumentError, match=r"it lacks blk\.0\.attn_q\.weight\.lora_b;"):
        check_adapter(BASE, half)
    stray = _raw_adapter(tmp_path / "stray.gguf", {**pair, "blk.0.attn_q.weight": (576, 576)})
    with pytest.raises(BadArgumentError, match=r"its tensor blk\.0\.attn_q\.weight is no LoRA"):
        check_adapter(BASE, stray)
    # llama.cpp skips a norm's vector in an adapter (it does not apply it), and so does the check.
    check_adapter(
        BASE, _raw_adapter(tmp_path / "norm.gguf", {**pair, "output_norm.weight": (576,)})
    )
    with pytest.raises(BadArgumentError, match="holds no LoRA matrices"):
        check_adapter(BASE, _raw_adapter(tmp_path / "empty.gguf", {}))


def test_a_model_or_a_non_lora_adapter_is_no_adapter(tmp_path: Path) -> None:
    with pytest.raises(BadArgumentError, match="is not a LoRA adapter in GGUF"):
        check_adapter(BASE, BASE)
    other = write_adapter(tmp_path / "cv.gguf", BASE, kind="control_vector")
    with pytest.raises(BadArgumentError, match="is not a LoRA adapter in GGUF"):
        check_adapter(BASE, other)


@pytest.mark.parametrize("keep", [30, 100, 400])  # within the header
def test_a_cut_header_is_one_sentence(tmp_path: Path, keep: int) -> None:
    adapter = write_adapter(tmp_path / "a.gguf", BASE)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(adapter.read_bytes()[:keep])
    with pytest.raises(BadArgumentError, match="damaged or truncated GGUF header"):
        check_adapter(BASE, cut)


def test_a_huge_count_costs_nothing(tmp_path: Path) -> None:
    forged = tmp_path / "forged.gguf"
    forged.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (1 << 62).to_bytes(8, "little") * 2)
    with pytest.raises(BadArgumentError, match="damaged or truncated"):
        read_gguf_header(forged)


@pytest.fixture
def runtime(loader: Loader) -> Iterator[ModelRuntime]:
    rt = ModelRuntime(str(BASE), loader)
    yield rt
    rt.close()


@pytest.fixture
def loader() -> Loader:
    return Loader()


def test_use_with_an_adapter_shows_it_and_a_plain_use_drops_it(
    runtime: ModelRuntime, loader: Loader, tmp_path: Path
) -> None:
    adapter = write_adapter(tmp_path / "a.gguf", BASE)
    remembered: list[tuple[str, str | None]] = []
    runtime._on_use = lambda path, lora: remembered.append((path, lora))
    status = runtime.use(str(BASE), str(adapter))
    assert status["lora"] == str(adapter) and status["lora_in_use"] is True
    assert loader.adapters == [str(adapter)]
    status = runtime.use(str(BASE))
    assert "lora" not in status and loader.adapters[-1] is None
    assert remembered == [(str(BASE), str(adapter)), (str(BASE), None)]


def test_a_misfit_keeps_the_model_and_its_adapter(
    runtime: ModelRuntime, loader: Loader, tmp_path: Path
) -> None:
    adapter = write_adapter(tmp_path / "a.gguf", BASE)
    runtime.use(str(BASE), str(adapter))
    before = runtime.status()
    wrong = write_adapter(tmp_path / "w.gguf", BASE, arch="qwen2")
    with pytest.raises(BadArgumentError, match="does not fit"):
        runtime.use(str(BASE), str(wrong))
    with pytest.raises(BadArgumentError, match="not to a server"):
        runtime.use("http://127.0.0.1:9", str(adapter))
    assert runtime.status() == before and len(loader.loaded) == 1


def test_a_process_that_did_not_apply_the_adapter_is_not_shown_using_it(
    loader: Loader, tmp_path: Path
) -> None:
    adapter = write_adapter(tmp_path / "a.gguf", BASE)

    def forgetful(path: str, lora: str | None) -> Backend:
        backend = loader(path, lora)
        assert isinstance(backend, FakeBackend)
        backend.lora = None
        return backend

    rt = ModelRuntime(str(BASE), forgetful, lora=str(adapter))
    try:
        rt.complete([], max_tokens=1, timeout_s=30)
        status = rt.status()
        assert status["lora"] == str(adapter) and status["lora_in_use"] is False
    finally:
        rt.close()


@pytest.mark.slow
def test_the_model_process_says_which_adapter_llama_cpp_applied(tmp_path: Path) -> None:
    """What the worker runs (llama.cpp in this test's process): a fitting adapter is applied
    and named; one llama.cpp refuses (its shapes, past the daemon's check) is one sentence at
    load time, never a model that fails at its first answer."""
    good = write_adapter(tmp_path / "a.gguf", BASE)
    backend = LlamaBackend.load(str(BASE), context_tokens=256, threads=1, lora=str(good))
    try:
        assert backend.lora == str(good)
    finally:
        backend.close()
    wrong = write_adapter(tmp_path / "w.gguf", BASE, shapes={"blk.0.attn_q.weight": (576, 192)})
    with pytest.raises(BadArgumentError, match=r"llama\.cpp could not apply the adapter"):
        LlamaBackend.load(str(BASE), context_tokens=256, threads=1, lora=str(wrong))
