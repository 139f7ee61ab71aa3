"""Which model answers across restarts: ``alma-ctl model use`` persists its choice, and a model
given up stays given up, both in the state DB's run-time settings."""

from __future__ import annotations

from typing import Any, Protocol

from agent.voice import backends
from agent.voice.model import Backend, ModelRuntime
from agent.voice.process import ProcessOptions, fingerprint

#: The state DB's run-time setting that `alma-ctl model use` writes.
MODEL_IN_USE = "model_in_use"
#: The model given up after failing in a row, with what it was run with and why.
MODEL_UNUSABLE = "model_unusable"


class RunSettings(Protocol):
    """The run-time settings the choice is kept in (state.suggestions.SuggestionStore)."""

    def setting(self, key: str, default: Any = None) -> Any: ...

    def set_setting(self, key: str, value: Any) -> None: ...


def model_runtime(configured: str, options: ProcessOptions, kept: RunSettings) -> ModelRuntime:
    """The one model, ``configured`` by system/alma.toml. ``alma-ctl model use`` persists its
    choice together with what alma.toml said then; a later edit of alma.toml wins over it (the
    person's newest word counts), an unchanged alma.toml keeps the choice across restarts. A
    model given up stays so across restarts (no crash loop under systemd) until ``model use``,
    or until the file, its settings, the model library or the processor change."""
    path, lora = configured, None
    chosen = kept.setting(MODEL_IN_USE)
    if isinstance(chosen, dict) and chosen.get("configured") == configured:
        path = str(chosen.get("path") or configured)
        lora = str(chosen["lora"]) if chosen.get("lora") else None  # with its model, or none

    def remember(new_path: str, new_lora: str | None) -> None:
        kept.set_setting(
            MODEL_IN_USE, {"path": new_path, "lora": new_lora, "configured": configured}
        )

    def load(model_path: str, adapter: str | None) -> Backend:
        return backends.load(model_path, options, adapter)

    def give_up(model_path: str, reason: str | None) -> None:
        mark = {"fingerprint": fingerprint(model_path, options), "reason": reason}
        kept.set_setting(MODEL_UNUSABLE, mark if reason else None)

    unusable = None
    mark = kept.setting(MODEL_UNUSABLE)
    if isinstance(mark, dict) and mark.get("fingerprint") == fingerprint(path, options):
        unusable = str(mark.get("reason") or "")
    return ModelRuntime(
        path, load, lora=lora, on_use=remember, unusable=unusable, on_unusable=give_up
    )
