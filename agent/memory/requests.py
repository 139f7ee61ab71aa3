"""Validation of what callers hand the memory service (the socket's arguments, at the edge)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from policies.errors import BadArgumentError

M = TypeVar("M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("tags", mode="before", check_fields=False)
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class AddRequest(_Strict):
    content: str = Field(min_length=1, max_length=20_000)
    tags: list[str] = Field(default_factory=list, max_length=30)
    project: str = Field(default="", max_length=80)
    importance: int | None = Field(default=None, ge=1, le=5)
    memory_type: str | None = Field(default=None, min_length=1, max_length=40)
    source: str = Field(default="alma-ctl", max_length=200)


class SearchRequest(_Strict):
    query: str = Field(min_length=1, max_length=4_000)
    limit: int = Field(default=5, ge=1, le=100)
    tags: list[str] = Field(default_factory=list, max_length=10)
    project: str | None = Field(default=None, max_length=80)
    memory_type: str | None = Field(default=None, max_length=40)
    min_importance: int | None = Field(default=None, ge=1, le=5)


class ListRequest(_Strict):
    limit: int = Field(default=20, ge=1, le=10_000)
    tag: str | None = Field(default=None, max_length=60)
    project: str | None = Field(default=None, max_length=80)
    memory_type: str | None = Field(default=None, max_length=40)
    archived: bool = False


class ContextRequest(_Strict):
    prompt: str = Field(min_length=1, max_length=20_000)
    budget_tokens: int = Field(default=1500, ge=50, le=200_000)


def parse(model: type[M], **values: Any) -> M:
    """The model, or a BadArgumentError naming the first bad argument and what to do."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        raise BadArgumentError(
            f"Argument {where}: {err['msg'].lower()}; fix it and retry."
        ) from None
