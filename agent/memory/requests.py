"""Validation of what callers hand the memory service (the socket's arguments, at the edge).

The numbers are :mod:`policies.limits`, the same the socket's command table checks."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from policies import limits as L
from policies.errors import BadArgumentError
from policies.i18n import _
from policies.invalid import first_problem

M = TypeVar("M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("tags", mode="before", check_fields=False)
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class AddRequest(_Strict):
    content: str = Field(min_length=1, max_length=L.CONTENT_CHARS)
    tags: list[str] = Field(default_factory=list, max_length=L.MAX_TAGS)
    project: str = Field(default="", max_length=L.PROJECT_CHARS)
    importance: int | None = Field(default=None, ge=1, le=5)
    memory_type: str | None = Field(default=None, min_length=1, max_length=L.TYPE_CHARS)
    source: str = Field(default="alma-ctl", max_length=L.SHORT_TEXT)
    theme: str | None = Field(default=None, min_length=1, max_length=L.THEME_CHARS)
    related_to: str | None = Field(default=None, min_length=1, max_length=L.RELATED_CHARS)


class SearchRequest(_Strict):
    query: str = Field(min_length=1, max_length=L.QUERY_CHARS)
    limit: int = Field(default=5, ge=1, le=L.SEARCH_MAX)
    tags: list[str] = Field(default_factory=list, max_length=L.MAX_TAGS)
    project: str | None = Field(default=None, max_length=L.PROJECT_CHARS)
    memory_type: str | None = Field(default=None, max_length=L.TYPE_CHARS)
    min_importance: int | None = Field(default=None, ge=1, le=5)
    theme: str | None = Field(default=None, min_length=1, max_length=L.THEME_CHARS)
    related_to: str | None = Field(default=None, min_length=1, max_length=L.RELATED_CHARS)


class ListRequest(_Strict):
    limit: int = Field(default=20, ge=1, le=L.LIST_MAX)
    tag: str | None = Field(default=None, max_length=L.TAG_CHARS)
    project: str | None = Field(default=None, max_length=L.PROJECT_CHARS)
    memory_type: str | None = Field(default=None, max_length=L.TYPE_CHARS)
    archived: bool = False


class ContextRequest(_Strict):
    prompt: str = Field(min_length=1, max_length=L.CONTENT_CHARS)
    budget_tokens: int = Field(
        default=L.CONTEXT_BUDGET_DEFAULT, ge=L.CONTEXT_BUDGET_MIN, le=L.CONTEXT_BUDGET_MAX
    )


def parse(model: type[M], **values: Any) -> M:
    """The model, or a BadArgumentError naming the first bad argument and what to do."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problem = first_problem(exc)
        lower = problem.msg[:1].lower() + problem.msg[1:]
        raise BadArgumentError(
            _(
                "Argument {where}: {lower}; fix it and retry.",
                where=problem.key or "arguments",
                lower=lower,
            )
        ) from None
