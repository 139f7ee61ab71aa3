"""policies.invalid: a rejected value, from any edge, reads as its key, what is wrong and the fix."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from policies.invalid import Problem, first_problem


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    settle_seconds: int = Field(0, ge=0)


class _Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    monitor: _Inner = Field(default_factory=_Inner)
    name: str = ""

    @field_validator("name")
    @classmethod
    def _short(cls, value: str) -> str:
        if len(value) > 3:
            raise ValueError("name it in three letters at most")
        return value


def _problem(data: dict[str, object]) -> Problem:
    with pytest.raises(ValidationError) as caught:
        _Outer.model_validate(data)
    return first_problem(caught.value)


def test_the_key_path_what_is_wrong_and_the_fix() -> None:
    p = _problem({"monitor": {"settle_seconds": -1}})
    assert p.loc == ("monitor", "settle_seconds") and p.key == "monitor.settle_seconds"
    assert p.fix == "use a larger number" and p.more == 0


def test_an_unknown_key_says_so_and_our_sentences_lose_pydantics_prefix() -> None:
    p = _problem({"monitr": {}, "name": "abcdef"})
    assert (p.key, p.msg, p.fix) == ("name", "name it in three letters at most", "")
    assert p.more == 1
    p = _problem({"monitr": {}})
    assert (p.key, p.msg) == ("monitr", "unknown key")
    assert p.fix == "remove it or fix its spelling"
