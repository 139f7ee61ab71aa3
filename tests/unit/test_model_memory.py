"""The model process's memory does not grow with every answer: what llama.cpp allocates for one
answer is freed at its end, not left for Python's cycle collector (bench/bench_model_growth.py
measures the process over a long run)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.voice.llama import LlamaBackend

internals = pytest.importorskip("llama_cpp._internals")


def test_each_answer_frees_the_sampler_chain_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []  # held here: only an explicit free can release their native chains

    class Recorded(internals.LlamaSampler):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(internals, "LlamaSampler", Recorded)
    backend = LlamaBackend.load("embedded", context_tokens=512, threads=1)
    try:
        for word in ("Hola", "Gracias", "Adiós"):
            pieces = list(backend.stream([{"role": "user", "content": word}], max_tokens=2))
            assert pieces, "the model gave nothing"
            assert made and made[-1].sampler is None, "the answer's sampler chain is still held"
        # An answer the person stops half-way frees its chain too.
        stream = backend.stream([{"role": "user", "content": "Cuéntame algo"}], max_tokens=8)
        next(iter(stream))
        stream.close()
    finally:
        backend.close()
    assert len(made) >= 4
    assert [s for s in made if s.sampler is not None] == []
