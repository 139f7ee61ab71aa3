"""The socket's one layer: each command of the table (control.commands) is answered by the
service method its ``answered_by`` names, called with the command's arguments by their wire
names. The server has already validated every argument against that table; a name that is not
in :attr:`Api.handlers` is never looked up anywhere else.

The composition root (agent.daemon) names the services; :class:`DaemonStatus` answers
``status``, the one command whose work is gathering what the others own.
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from control.commands import COMMANDS
from policies.layout import RootLayout
from policies.results import JSONObject, Status, WatchStatus
from sandbox.confine import spoken

if TYPE_CHECKING:
    from agent.loop.autonomy import Autonomy
    from agent.memory.loader import MemoryLoader
    from agent.policy import PolicyHolder
    from agent.voice.model import ModelRuntime
    from state.suggestions import SuggestionStore

VERSION = "0.1.0"

#: A service by its name in ``answered_by``: the object itself, or (:class:`Later`) how to
#: reach it once it is there (the memory store loads in the background).
Services = Mapping[str, object]


class Later:
    """A service reached when a command needs it (``get`` raises the sentence that says why it
    is not there yet), checked at start against its ``kind`` without being reached (None: a
    kind too heavy to import at start, checked by the unit tests)."""

    def __init__(self, kind: type | None, get: Callable[[], object]) -> None:
        self.kind = kind
        self.get = get


class Api:
    def __init__(self, services: Services) -> None:
        # Built from the table: a command without its service method, or one whose method does
        # not take the command's arguments, stops the daemon at start, not at the first request.
        self.handlers: dict[str, tuple[object, str]] = {}
        for name, command in COMMANDS.items():
            if command.answered_by is None:
                continue  # the server answers it on its connection
            owner, method = command.answered_by.split(".", 1)
            if owner not in services:
                raise TypeError(
                    f"{name}: answered by {command.answered_by}, but no {owner} service"
                )
            service = services[owner]
            kind = service.kind if isinstance(service, Later) else type(service)
            if kind is not None:
                takes(getattr(kind, method), tuple(command.by_name), name)
            self.handlers[name] = (service, method)

    def dispatch(self, cmd: str, args: JSONObject) -> Any:
        service, method = self.handlers[cmd]
        if isinstance(service, Later):
            service = service.get()
        return getattr(service, method)(**args)


def takes(method: Callable[..., object], names: tuple[str, ...], command: str) -> None:
    """Raise TypeError unless ``method`` (unbound) can be called with ``names``."""
    try:
        inspect.signature(method).bind(None, **dict.fromkeys(names))
    except TypeError as exc:
        raise TypeError(f"{command}: {method.__qualname__} does not take {names}: {exc}") from None


class DaemonStatus:
    """``status``: the daemon, its root and socket, and what each part says of itself."""

    def __init__(
        self,
        layout: RootLayout,
        *,
        socket_path: str,
        sandbox: str,
        sandbox_detail: str,
        recovered: Sequence[Mapping[str, object]],
        autonomy: Autonomy,
        policy: PolicyHolder,
        store: SuggestionStore,
        memory: MemoryLoader,
        model: ModelRuntime,
        audit_problem: Callable[[], str | None],
        watch: Callable[[], WatchStatus],
        ready: Callable[[], bool],
    ) -> None:
        self.layout = layout
        self.socket_path = socket_path
        self.sandbox = sandbox
        self.sandbox_detail = sandbox_detail
        self.recovered = recovered
        self.autonomy = autonomy
        self.policy = policy
        self.store = store
        self.memory = memory
        self.model = model
        self.audit_problem = audit_problem
        self.watch = watch
        self.ready = ready
        self.started = time.time()

    def status(self) -> Status:
        memory, memories = self.memory.status()
        return {
            "running": True,
            # The folder watches are set up and the analysis after start has run.
            "ready": self.ready(),
            "pid": os.getpid(),
            "version": VERSION,
            "root": str(self.layout.root),
            "socket": self.socket_path,
            "autonomy": self.autonomy.status(),
            "sandbox": self.sandbox,
            "sandbox_detail": spoken(self.sandbox_detail),
            "pending_suggestions": self.store.count("pending"),
            "last_analysis": self.store.setting("last_analysis"),
            "memories": memories,
            "memory": memory,
            "model": self.model.status(),
            "policy": self.policy.state(),
            "audit_problem": self.audit_problem(),
            "recovered_at_start": [dict(r) for r in self.recovered],
            "uptime_seconds": round(time.time() - self.started, 1),
            "watch": self.watch(),
        }
