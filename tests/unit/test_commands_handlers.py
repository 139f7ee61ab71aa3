"""The command table is the schema: each command names the service method that answers it
(``answered_by``), and that method takes exactly the command's arguments, by their wire names.
The daemon's dispatch is the map built from the table and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from agent.api import Api, DaemonStatus, Later, takes
from agent.backup.service import BackupService
from agent.day.reminders import Reminders
from agent.day.report_service import DailyReports
from agent.loop.autonomy import Autonomy
from agent.loop.lifecycle import Agent
from agent.memory.export import ChatExport
from agent.memory.service import MemoryService
from agent.settings import Reload
from agent.voice.chat import ChatService
from agent.voice.model import ModelRuntime
from control.commands import COMMANDS, validate
from sandbox.engine import Engine
from state.journal import Journal
from state.suggestions import SuggestionStore

#: The services the composition root (agent.daemon) names, by their kinds.
SERVICES: dict[str, type] = {
    "daemon": DaemonStatus,
    "reload": Reload,
    "loop": Agent,
    "suggestions": SuggestionStore,
    "autonomy": Autonomy,
    "reminders": Reminders,
    "reports": DailyReports,
    "journal": Journal,
    "engine": Engine,
    "memory": MemoryService,
    "exporter": ChatExport,
    "model": ModelRuntime,
    "chat": ChatService,
    "backup": BackupService,
}


def test_every_command_names_a_method_that_takes_its_arguments() -> None:
    answered = {name: c.answered_by for name, c in COMMANDS.items()}
    # The server answers chat.cancel itself, on the connection whose answer it stops.
    assert [name for name, by in answered.items() if by is None] == ["chat.cancel"]
    for name, by in answered.items():
        if by is None:
            continue
        owner, method = by.split(".", 1)
        assert owner in SERVICES, f"{name}: no service {owner}"
        takes(getattr(SERVICES[owner], method), tuple(COMMANDS[name].by_name), name)


def test_a_method_that_does_not_take_the_arguments_stops_the_daemon_at_start() -> None:
    class Backups(BackupService):
        # A signature the table's arguments do not fit, on purpose: what the start refuses.
        def restore(self, snapshot: str, paths: list[str]) -> Any:  # type: ignore[override]
            return {}

    services: dict[str, object] = {name: Later(None, dict) for name in SERVICES}
    services["backup"] = Later(Backups, dict)
    with pytest.raises(TypeError, match=r"^backup\.restore: "):
        Api(services)
    del services["backup"]
    with pytest.raises(TypeError, match=r"^backup\.init: answered by backup\.init, but no "):
        Api(services)


class _Backup(BackupService):
    def __init__(self) -> None:  # a recording stand-in: no repository

        self.calls: list[tuple[str, dict[str, Any]]] = []

    def restore(
        self, snapshot: str, paths: list[str], to: str, paths_hex: list[str], any_root: bool
    ) -> Any:
        self.calls.append(
            ("restore", dict(snapshot=snapshot, paths=paths, to=to, paths_hex=paths_hex))
        )
        return {"id": 1}


def test_dispatch_is_the_map_built_from_the_table() -> None:
    backup = _Backup()
    reached: list[str] = []

    def later() -> object:
        reached.append("memory")
        raise LookupError("the memory store is still loading")

    services: dict[str, object] = {name: Later(None, dict) for name in SERVICES}
    services["backup"] = backup
    services["memory"] = Later(MemoryService, later)
    api = Api(services)
    assert sorted(api.handlers) == sorted(set(COMMANDS) - {"chat.cancel"})
    args = validate("backup.restore", {"snapshot": "ab12", "paths": ["user/a"], "to": "/tmp/x"})
    assert api.dispatch("backup.restore", args) == {"id": 1}
    assert backup.calls == [
        ("restore", {"snapshot": "ab12", "paths": ["user/a"], "to": "/tmp/x", "paths_hex": []})
    ]
    assert reached == []  # a service reached later is reached by its command only
    with pytest.raises(LookupError):
        api.dispatch("memory.stats", {})
    assert reached == ["memory"]
