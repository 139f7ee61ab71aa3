"""One table of request limits (policies.limits), checked in one place: the socket's command
table (control.commands). The memory service checks its own callers (the chat, the loop) through
that same table, so a value one edge accepts the other never refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.memory.service import MemoryService
from control.commands import validate
from policies import limits as L
from policies.errors import BadArgumentError
from policies.layout import RootLayout

# (command, its other args, the argument tried, how to make a value, lowest, highest)
CASES: list[tuple[str, dict[str, Any], str, Any, int, int]] = [
    ("memory.list", {}, "limit", int, 1, L.LIST_MAX),
    ("memory.search", {"query": "q"}, "limit", int, 1, L.SEARCH_MAX),
    ("memory.search", {"query": "q"}, "tags", list, 0, L.MAX_TAGS),
    ("memory.add", {"content": "c"}, "tags", list, 0, L.MAX_TAGS),
    ("memory.add", {}, "content", str, 1, L.CONTENT_CHARS),
    ("memory.add", {"content": "c"}, "project", str, 0, L.PROJECT_CHARS),
    ("memory.search", {}, "query", str, 1, L.QUERY_CHARS),
    ("memory.list", {}, "tag", str, 0, L.TAG_CHARS),
    ("context", {"prompt": "p"}, "budget", int, L.CONTEXT_BUDGET_MIN, L.CONTEXT_BUDGET_MAX),
    ("context", {}, "prompt", str, 1, L.CONTENT_CHARS),
    ("memory.add", {"content": "c"}, "theme", str, 1, L.THEME_CHARS),
    ("memory.add", {"content": "c"}, "related_to", str, 1, L.RELATED_CHARS),
    ("memory.search", {"query": "q"}, "theme", str, 1, L.THEME_CHARS),
    ("memory.search", {"query": "q"}, "related_to", str, 1, L.RELATED_CHARS),
]  # fmt: skip


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory, embedder_loaded: None) -> Iterator[MemoryService]:
    root = Path(tmp_path_factory.mktemp("limits"))
    for sub in ("system", "logs", "user", ".alma"):
        (root / sub).mkdir()
    service = MemoryService(RootLayout(root))
    yield service
    service.close()


def _value(make: Any, n: int) -> Any:
    if make is int:
        return n
    if make is list:
        return [f"t{i}" for i in range(n)]
    return "ñ" * n


def _accepts(call: Any, args: dict[str, Any]) -> bool:
    try:
        call(args)
    except BadArgumentError:
        return False
    return True


#: The text arguments whose longest accepted value is embedded by the real service: these cases
#: run with the slow tier, every other limit with the everyday one.
_EMBEDS_THE_LONGEST = {("memory.add", "content"), ("memory.search", "query"), ("context", "prompt")}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.slow) if (c[0], c[2]) in _EMBEDS_THE_LONGEST else c
        for c in CASES
    ],
    ids=[f"{c[0]} {c[2]}" for c in CASES],
)
def test_the_socket_and_the_memory_service_agree_on_every_limit(
    svc: MemoryService, case: tuple[Any, ...]
) -> None:
    cmd, base, arg, make, low, high = case
    method = {
        "memory.add": svc.add,
        "memory.search": svc.search,
        "memory.list": svc.list,
        "context": svc.context,
    }[cmd]
    for n, ok in ((low, True), (high, True), (high + 1, False), (low - 1, False)):
        if n < 0:
            continue
        args = {**base, arg: _value(make, n)}
        wire = _accepts(lambda a: validate(cmd, a), args)
        service = _accepts(lambda a: method(**a), args)  # called at once
        assert wire == service == ok, f"{cmd} {arg}={n}: socket {wire}, service {service}"
