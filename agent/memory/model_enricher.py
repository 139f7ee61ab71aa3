"""The daemon's model (agent.voice.model) as the memory Enricher.

The daemon stands on deterministic code; a model only improves a memory's metadata, in the
background. Its output is constrained to a JSON schema, bounded in tokens, and still treated
as untrusted text: anything that is not a JSON object gives ``{}`` (the rules' metadata stays),
and agent.memory.enrich validates and clamps what remains.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from agent.voice.model import Complete
from policies.results import JSONObject
from state.memory.models import KNOWN_TYPES

log = logging.getLogger("alma.llm")

SCHEMA: JSONObject = {
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


class ModelEnricher:
    """Callable text -> metadata dict, asking the daemon's one model (agent.voice.model) through
    ``complete``; ``{}`` when the model is busy, absent, or answers something unusable."""

    def __init__(self, complete: Complete, *, max_tokens: int = 160, timeout_s: float = 60.0):
        self.complete = complete
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s

    def __call__(self, text: str) -> Mapping[str, Any]:
        content = self.complete(
            [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": text[:MAX_INPUT_CHARS]},
            ],
            max_tokens=self.max_tokens,
            json_schema=SCHEMA,
            timeout_s=self.timeout_s,
        )
        if content is None:
            return {}
        try:
            data = json.loads(content)
        except ValueError:
            # Cut at max_tokens, or not JSON at all: the rules' metadata stays.
            return {}
        return data if isinstance(data, dict) else {}
