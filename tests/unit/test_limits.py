"""One table of request limits (policies.limits): the socket's command table and the memory
service's checks accept and refuse the same values.

Two tables would drift apart (a list limit, the tags, the context budget), and a value could
pass one edge and fail at the other.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agent.memory import requests as R
from control.commands import validate
from policies import limits as L
from policies.errors import BadArgumentError

# (command, its args besides the one tried, wire arg, request model, its fields, field, make)
CASES: list[tuple[str, dict[str, Any], str, type[BaseModel], dict[str, Any], str, Any, int, int]] = [
    ("memory.list", {}, "limit", R.ListRequest, {}, "limit", int, 1, L.LIST_MAX),
    ("memory.search", {"query": "q"}, "limit", R.SearchRequest, {"query": "q"}, "limit", int, 1, L.SEARCH_MAX),
    ("memory.search", {"query": "q"}, "tags", R.SearchRequest, {"query": "q"}, "tags", list, 0, L.MAX_TAGS),
    ("memory.add", {"content": "c"}, "tags", R.AddRequest, {"content": "c"}, "tags", list, 0, L.MAX_TAGS),
    ("memory.add", {}, "content", R.AddRequest, {}, "content", str, 1, L.CONTENT_CHARS),
    ("memory.add", {"content": "c"}, "project", R.AddRequest, {"content": "c"}, "project", str, 0, L.PROJECT_CHARS),
    ("memory.search", {}, "query", R.SearchRequest, {}, "query", str, 1, L.QUERY_CHARS),
    ("memory.list", {}, "tag", R.ListRequest, {}, "tag", str, 0, L.TAG_CHARS),
    ("context", {"prompt": "p"}, "budget", R.ContextRequest, {"prompt": "p"}, "budget_tokens", int, L.CONTEXT_BUDGET_MIN, L.CONTEXT_BUDGET_MAX),
    ("context", {}, "prompt", R.ContextRequest, {}, "prompt", str, 1, L.CONTENT_CHARS),
    ("memory.add", {"content": "c"}, "theme", R.AddRequest, {"content": "c"}, "theme", str, 1, L.THEME_CHARS),
    ("memory.add", {"content": "c"}, "related_to", R.AddRequest, {"content": "c"}, "related_to", str, 1, L.RELATED_CHARS),
    ("memory.search", {"query": "q"}, "theme", R.SearchRequest, {"query": "q"}, "theme", str, 1, L.THEME_CHARS),
    ("memory.search", {"query": "q"}, "related_to", R.SearchRequest, {"query": "q"}, "related_to", str, 1, L.RELATED_CHARS),
]  # fmt: skip


def _value(make: Any, n: int) -> Any:
    if make is int:
        return n
    if make is list:
        return [f"t{i}" for i in range(n)]
    return "ñ" * n


def _accepts_wire(cmd: str, args: dict[str, Any]) -> bool:
    try:
        validate(cmd, args)
    except BadArgumentError:
        return False
    return True


def _accepts_service(model: type[BaseModel], values: dict[str, Any]) -> bool:
    try:
        R.parse(model, **values)
    except BadArgumentError:
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]} {c[2]}" for c in CASES])
def test_the_socket_and_the_memory_service_agree_on_every_limit(case: tuple[Any, ...]) -> None:
    cmd, wire_base, wire_arg, model, base, field, make, low, high = case
    for n, ok in ((low, True), (high, True), (high + 1, False), (low - 1, False)):
        if n < 0:
            continue
        value = _value(make, n)
        wire = _accepts_wire(cmd, {**wire_base, wire_arg: value})
        service = _accepts_service(model, {**base, field: value})
        assert wire == service == ok, f"{cmd} {wire_arg}={n}: socket {wire}, service {service}"
