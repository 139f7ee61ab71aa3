"""``system/autonomy.conf``: the typed policy model, and the one loader of configuration files.

A configuration file (the policy, ``alma.toml``) is read once (its text, through
:func:`actions.safe_read.read_config`), parsed with tomllib and validated by pydantic
(:func:`load_config`); the policy is the file, environment variables never change it. Every
error names the file, the key, the line where it can, and the fix.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from policies import limits as L
from policies.errors import ConfigError
from policies.i18n import N_, _, ngettext
from policies.invalid import Problem, first_problem
from policies.layout import DATA_DIR, HARD_READ_ONLY
from policies.states import LEVELS
from policies.zones import split_zone

if TYPE_CHECKING:
    from policies.states import Level as Level
else:
    Level = Literal[LEVELS]  # the field accepts exactly the leaf's words

M = TypeVar("M")

#: Suggestion kinds the contract names; more may be added, auto.kinds must name known ones.
KNOWN_KINDS = (
    "organize",
    "duplicates",
    "temp_cleanup",
    "repeated_failure",
    "long_hours",
    "pending_task",
    "memory_merge",
    "routine",
    "backup",
)
SandboxBackendName = Literal["auto", "landlock", "bwrap", "firejail"]


def _overlaps(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Zones(_Section):
    writable: list[str] = Field(default_factory=lambda: ["user"])
    read_only: list[str] = Field(default_factory=lambda: ["system", "logs", "docs"])

    @field_validator("writable")
    @classmethod
    def _writable_ok(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError(_('at least one writable zone is needed, like writable = ["user"]'))
        for zone in value:
            parts = split_zone(zone)
            for hard in HARD_READ_ONLY:
                if _overlaps(parts, (hard,)):
                    raise ValueError(
                        _(
                            "writable zone {zone} overlaps {hard}/, which is read-only whatever "
                            "this file says; name a folder such as 'user' instead",
                            zone=repr(zone),
                            hard=hard,
                        )
                    )
        # Normalised here, once: "user/" and "user" are one zone for the gate, the executor
        # and the confinement alike.
        return ["/".join(split_zone(zone)) for zone in value]

    @field_validator("read_only")
    @classmethod
    def _read_only_ok(cls, value: list[str]) -> list[str]:
        return ["/".join(split_zone(zone)) for zone in value]

    def writable_parts(self) -> list[tuple[str, ...]]:
        return [split_zone(z) for z in self.writable]

    def read_only_parts(self) -> list[tuple[str, ...]]:
        return [split_zone(z) for z in (*self.read_only, *HARD_READ_ONLY)]


class Thresholds(_Section):
    approval_files: int = Field(20, ge=0)
    max_files: int = Field(2000, ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.approval_files > self.max_files:
            raise ValueError(
                _(
                    "approval_files ({approval}) is larger than max_files ({limit}); "
                    "make approval_files smaller or equal",
                    approval=self.approval_files,
                    limit=self.max_files,
                )
            )
        return self


class Auto(_Section):
    kinds: list[str] = Field(default_factory=lambda: ["temp_cleanup"])

    @field_validator("kinds")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        for kind in value:
            if kind not in KNOWN_KINDS:
                raise ValueError(
                    _(
                        "unknown kind {kind}; use some of {kinds}",
                        kind=repr(kind),
                        kinds=", ".join(KNOWN_KINDS),
                    )
                )
        return value


class Monitor(_Section):
    #: Up to a week: beyond it the timers that wait for files to settle cannot be armed.
    settle_seconds: int = Field(120, ge=0, le=7 * 86400)
    messy_folder_files: int = Field(15, ge=2, le=100_000)
    temp_age_days: int = Field(7, ge=0, le=36500)
    organize_by: Literal["type", "month"] = "type"
    #: Notice a growing trend of negative words in the person's own chat turns (low_mood).
    low_mood: bool = True
    #: New suggestions that wait for a person, at most, a day (0: no limit): the noise budget.
    new_per_day: int = Field(5, ge=0, le=10_000)


class SandboxSettings(_Section):
    backend: SandboxBackendName = "auto"
    allow_unconfined: bool = False


class Trash(_Section):
    retention_days: int = Field(30, ge=0)


#: What a backup takes by default: the whole root but ALMA's trash and caches (agent/backup/service.py).
BACKUP_FOLDERS = ("logs", "user", "docs", "system", ".alma")


class Backup(_Section):
    #: The restic repository (an absolute folder, e.g. on the portable disk); "" means the one
    #: `alma-ctl backup init` set.
    target: str = ""
    schedule: Literal["daily", "off"] = "daily"
    include: list[str] = Field(default_factory=lambda: list(BACKUP_FOLDERS))
    keep_daily: int = Field(7, ge=0, le=3650)
    keep_weekly: int = Field(4, ge=0, le=520)
    keep_monthly: int = Field(12, ge=0, le=1200)
    #: After this many days without a successful backup, a `backup` suggestion says so.
    warn_after_days: int = Field(7, ge=1, le=3650)

    @field_validator("target")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if len(value) > L.PATH_CHARS:  # it is quoted in every backup's sentence
            raise ValueError(
                _(
                    "target is {n} characters long, more than any folder's full path "
                    "({limit}); name the backup folder, like '/media/ana/DISCO/alma-backup'",
                    n=len(value),
                    limit=L.PATH_CHARS,
                )
            )
        if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in value.split("/")):
            raise ValueError(
                _(
                    "a folder name in target is longer than 255 bytes, which no file system "
                    "allows; name the backup folder, like '/media/ana/DISCO/alma-backup'"
                )
            )
        if value and not value.startswith(("/", "~")):
            raise ValueError(
                _(
                    "target {target} must be the full path of a folder, like "
                    "'/media/ana/DISCO/alma-backup'",
                    target=repr(value),
                )
            )
        return value

    @field_validator("include")
    @classmethod
    def _folders(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError(_('name at least one folder, like include = ["user"]'))
        folders = ["/".join(split_zone(folder)) for folder in value]
        for folder in folders:
            # .alma is taken whole, through its consistent copy (the databases through
            # SQLite's backup API, without the trash and the locks); a part of it named alone
            # would be read live: a journal with its -wal and lock file, the trash.
            if folder.startswith(DATA_DIR + "/"):
                raise ValueError(
                    _(
                        "{folder} is inside {data}, which is backed up whole and consistently "
                        'or not at all; name "{data}" itself, or a folder of your own',
                        folder=repr(folder),
                        data=DATA_DIR,
                    )
                )
        if len(set(folders)) != len(folders):
            raise ValueError(_("a folder is named twice; name each once"))
        return folders

    @model_validator(mode="after")
    def _keeps_something(self) -> Backup:
        if not (self.keep_daily or self.keep_weekly or self.keep_monthly):
            raise ValueError(
                _(
                    "keep_daily, keep_weekly and keep_monthly are all 0, so `backup forget` "
                    "would remove every snapshot; keep at least one"
                )
            )
        return self


class Policy(BaseSettings):
    """The whole policy. Construct with :func:`load_policy`, or directly in tests."""

    model_config = SettingsConfigDict(extra="forbid", strict=True, frozen=True)

    level: Level = "suggest"
    zones: Zones = Field(default_factory=Zones)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    auto: Auto = Field(default_factory=Auto)
    monitor: Monitor = Field(default_factory=Monitor)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    trash: Trash = Field(default_factory=Trash)
    backup: Backup = Field(default_factory=Backup)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Only what was passed: the file's text, read and checked once by load_policy (never
        # the environment, never a second read of the file).
        return (init_settings,)


def _line_of(text: str, loc: tuple[str | int, ...]) -> int | None:
    """The line where the key at ``loc`` is written (1-based), found by a plain scan."""
    keys = [str(k) for k in loc if isinstance(k, str)]
    if not keys:
        return None
    table: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            table = [p.strip() for p in line.strip("[]").split(".")]
            if table == keys:
                return number
            continue
        if "=" in line:
            key = line.split("=", 1)[0].strip().strip('"')
            if [*table, key] == keys[: len(table) + 1] and len(keys) >= len(table) + 1:
                return number
    return None


def _describe(path: Path, text: str, problem: Problem, *, env: bool) -> str:
    if env:  # alma.toml: an ALMA_ variable wins over the file and may be the one wrong
        return _(
            "{path} (or an ALMA_ variable), key {key}: {msg}; fix it or remove it to use the "
            "default.",
            path=path,
            key=problem.key,
            msg=problem.msg,
        )
    key = problem.key or "(top level)"
    line = _line_of(text, problem.loc)
    if line:
        where = _("{path}, line {line}, key {key}", path=path, line=line, key=key)
    else:
        where = _("{path}, key {key}", path=path, key=key)
    sentence = f"{where}: {problem.msg}" + (f"; {problem.fix}" if problem.fix else "")
    if problem.more:
        sentence += ngettext(
            " (and {n} more problem in the same file)",
            " (and {n} more problems in the same file)",
            problem.more,
        )
    return sentence + "."


#: tomllib's words for what is wrong (its messages start with these), as a person reads them
#: in their language: tomllib's own text is English whatever the person reads.
_TOML_PROBLEMS = (
    ("Invalid value", N_('a value that is not valid (text needs quotes: "...")')),
    ("Expected '=' after a key", N_("an '=' is missing after the key")),
    ("Invalid statement", N_("a line that is neither `key = value` nor a [table]")),
    ("Cannot overwrite a value", N_("a key given a value twice")),
    ("Cannot declare", N_("a table or a key declared twice")),
    ("Cannot redefine namespace", N_("a table or a key declared twice")),
    ("Cannot mutate immutable namespace", N_("a table or a key declared twice")),
    ("Duplicate inline table key", N_("a key given a value twice")),
    ("Unterminated string", N_("a text whose closing quote is missing")),
    ("Unclosed array", N_("a list whose closing ] is missing")),
    ("Unclosed inline table", N_("an inline table whose closing brace is missing")),
    ("Expected ']' at the end of a table", N_("a [table] whose closing ] is missing")),
    ("Expected ']]' at the end of an array", N_("a [[table]] whose closing ]] is missing")),
    ("Invalid initial character for a key", N_("a key that starts with a character keys cannot")),
    ("Illegal character", N_("a character a text cannot hold (a control character)")),
    ("Invalid date or datetime", N_("a date that is not valid")),
    ("Unescaped '\\'", N_("a \\ that is not doubled (write \\\\, or use 'single quotes')")),
)
_TOML_WHERE = re.compile(r" \(at (?:line (\d+), column (\d+)|end of document)\)$")


def _toml_error(path: Path, error: str) -> str:
    """tomllib's error as one sentence in the person's language: where, and what is wrong."""
    where = _TOML_WHERE.search(error)
    said = error[: where.start()] if where else error
    problem = next(
        (_(text) for start, text in _TOML_PROBLEMS if said.startswith(start)),
        _("something that is not valid TOML"),
    )
    if where is None or where.group(1) is None:
        return _(
            "{path}: not valid TOML at its end: {problem}; fix the syntax there.",
            path=path,
            problem=problem,
        )
    return _(
        "{path}: not valid TOML at line {line}, column {column}: {problem}; fix the syntax there.",
        path=path,
        line=where.group(1),
        column=where.group(2),
        problem=problem,
    )


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """The one reading of a TOML configuration file (the policy, ``alma.toml``): anything
    wrong in it is a :class:`ConfigError` naming the file and the fix, never an exception.

    A leading UTF-8 byte order mark is dropped: Notepad writes one, and tomllib calls it a
    syntax error at line 1, column 1, which nobody can see in the file."""
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_toml_error(path, str(exc))) from None
    except RecursionError:
        raise ConfigError(
            _(
                "{path}: tables or lists nested too deeply to be a configuration; "
                "fix the file (the commented default of `alma-ctl init` shows its shape).",
                path=path,
            )
        ) from None


def load_config(
    path: Path, text: str, build: Callable[[dict[str, Any]], M], *, env: bool = False
) -> M:
    """The one loading of a configuration file (the policy, ``alma.toml``) from its text, read
    once by :func:`actions.safe_read.read_config`: parsed, built by ``build``, and anything
    wrong a :class:`ConfigError` naming the file, the key, the line where it can, and the fix.
    ``env``: ``build`` also reads ``ALMA_*`` variables, which may be the value that is wrong."""
    data = parse_toml(path, text)
    try:
        return build(data)
    except ValidationError as exc:
        raise ConfigError(_describe(path, text, first_problem(exc), env=env)) from None


def load_policy(path: Path, text: str | None) -> Policy:
    """The policy from the text of its file (None: there is no file)."""
    if text is None:
        raise ConfigError(
            _(
                "{path} does not exist; run `alma-ctl init` to create a commented default.",
                path=path,
            )
        )
    return load_config(path, text, lambda data: Policy(**data))


def policy_from_dict(data: dict[str, Any]) -> Policy:
    """Build a policy from plain data (tests, defaults), validated like the file."""
    try:
        return Policy(**data)
    except ValidationError as exc:
        raise ConfigError(_describe(Path("<policy>"), "", first_problem(exc), env=False)) from None
