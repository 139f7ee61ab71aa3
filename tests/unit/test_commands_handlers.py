"""The command table is the schema: the daemon's dispatch is a map from each command's name to
the one method that handles it, and that method takes exactly the command's arguments."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from agent.api import Api
from agent.memory.service import MemoryService
from control.commands import COMMANDS, validate
from policies.layout import RootLayout

# The server answers chat.cancel itself, on the connection whose answer it stops.
HANDLED = sorted(set(COMMANDS) - {"chat.cancel"})
# Handlers that hand their arguments on whole to the memory service's method of the same name.
FORWARDED = {
    "memory.add": MemoryService.add,
    "memory.search": MemoryService.search,
    "memory.list": MemoryService.list,
    "context": MemoryService.context,
}


def _parameters(function: Any) -> dict[str, inspect.Parameter]:
    params = dict(inspect.signature(function).parameters)
    params.pop("self", None)
    return params


def test_every_command_has_a_method_that_takes_its_arguments() -> None:
    for name in HANDLED:
        wire = set(COMMANDS[name].by_name)
        params = _parameters(getattr(Api, name.replace(".", "_")))
        if name in FORWARDED:
            assert [p.kind for p in params.values()] == [inspect.Parameter.VAR_KEYWORD], name
            target = _parameters(FORWARDED[name])
            assert wire <= set(target), f"{name}: the service lacks {wire - set(target)}"
            needed = {n for n, p in target.items() if p.default is inspect.Parameter.empty}
            assert needed <= wire, f"{name}: the service needs {needed - wire}"
        else:
            assert set(params) == wire, f"{name}: takes {sorted(params)}, the table {sorted(wire)}"


class _Backup:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def restore(self, *args: Any) -> dict[str, Any]:
        self.calls.append(("restore", args))
        return {"id": 1}


def test_dispatch_is_the_map_built_from_the_table(tmp_path: Path) -> None:
    backup = _Backup()
    api = Api(
        RootLayout(tmp_path),
        None,  # type: ignore[arg-type]  # the backup command touches no agent
        None,  # type: ignore[arg-type]  # nor the memory
        None,  # type: ignore[arg-type]  # nor the chat
        backup,  # type: ignore[arg-type]  # a recording stand-in for BackupService
        socket_path="s",
        sandbox_detail="",
        recovered=[],
        watch=dict,
        ready=lambda: True,
        reload=dict,
    )
    assert sorted(api.handlers) == HANDLED
    args = validate("backup.restore", {"snapshot": "ab12", "paths": ["user/a"], "to": "/tmp/x"})
    assert api.dispatch("backup.restore", args) == {"id": 1}
    assert backup.calls == [("restore", ("ab12", ["user/a"], "/tmp/x", [], False))]
