"""The socket's commands, one handler each: the method named after the command (``memory.add``
is :meth:`Api.memory_add`), whose parameters are the command's arguments in control.commands.
The server has already validated every argument against that table; a name that is not in
``Api.handlers`` is never looked up anywhere else.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent.backup.service import BackupService
from agent.loop.lifecycle import Agent
from agent.memory.export import export as export_chats
from agent.memory.gate import MemoryGate
from agent.voice.chat import ChatService
from control.commands import COMMANDS
from control.stream import StreamReply
from policies.layout import RootLayout
from sandbox.confine import spoken
from sandbox.runner import Recovered
from state.journal import Action

if TYPE_CHECKING:
    from agent.memory.service import MemoryService  # loads in the background (MemoryGate)

log = logging.getLogger("alma.agent")
VERSION = "0.1.0"
Handler = Callable[..., Any]


class Api:
    def __init__(
        self,
        layout: RootLayout,
        agent: Agent,
        memory: MemoryGate,
        chat: ChatService,
        backup: BackupService,
        *,
        socket_path: str,
        sandbox_detail: str,
        recovered: list[Recovered],
        watch: Callable[[], dict[str, Any]],
        ready: Callable[[], bool],
        reload: Callable[[], dict[str, Any]],
    ) -> None:
        self.layout = layout
        self.agent = agent
        self.memory = memory
        self.chat = chat
        self.backup = backup
        self.socket_path = socket_path
        self.sandbox_detail = sandbox_detail
        self.recovered = recovered
        self.watch = watch
        self.ready = ready
        self._reload = reload
        self.started = time.time()
        self._analysis = threading.Lock()
        # The command table is the schema: one method per command, named after it, taking the
        # command's arguments by their wire names. Built from the table, so a command without
        # its handler stops the daemon at start, not at the first request.
        self.handlers: dict[str, Handler] = {
            name: getattr(self, name.replace(".", "_"))
            for name in COMMANDS
            if name != "chat.cancel"  # the server answers it on the connection it stops
        }

    def dispatch(self, cmd: str, args: dict[str, Any]) -> Any:
        return self.handlers[cmd](**args)

    # -- suggestions, autonomy, actions ---------------------------------------------------------
    def suggestions_list(self, status: str | None, all: bool) -> list[dict[str, Any]]:
        return self.agent.store.list(status=status, all_=all)

    def suggestions_show(self, id: int, all: bool) -> dict[str, Any]:
        return self.agent.show(id, all_ops=all)

    def suggestions_accept(self, id: int) -> dict[str, Any]:
        return self.agent.accept(id)

    def suggestions_reject(self, id: int, reason: str | None) -> dict[str, Any]:
        return self.agent.reject(id, reason)

    def autonomy_off(self) -> dict[str, Any]:
        return self.agent.autonomy.off()

    def autonomy_on(self) -> dict[str, Any]:
        return self._catch_up(self.agent.autonomy.on)

    def autonomy_status(self) -> dict[str, Any]:
        return self.agent.autonomy.status()

    def autonomy_level(self, level: str) -> dict[str, Any]:
        return self._catch_up(lambda: self.agent.autonomy.set_level(level))

    def autonomy_allow(self, kind: str, folder: str | None) -> dict[str, Any]:
        return self.agent.allow(kind, folder)

    def feedback(self, id: int, verdict: str, reason: str | None, action: bool) -> dict[str, Any]:
        return self.agent.feedback(id, verdict == "util", reason, action=action)

    def stats(self) -> dict[str, Any]:
        return self.agent.stats()

    def report(self, date: str | None, refresh: bool) -> dict[str, Any]:
        return self.agent.report(date, refresh=refresh)

    def reminders(self) -> dict[str, Any]:
        return self.agent.reminders.listing(datetime.now())

    def undo(self, id: int | None) -> dict[str, Any]:
        return self.agent.undo(id)

    def history(self, limit: int) -> list[Action]:
        return self.agent.engine.journal.history(limit)

    def trash_list(self) -> list[dict[str, Any]]:
        return self.agent.engine.trash_list()

    def trash_empty(self, older_than_days: int) -> dict[str, Any]:
        return self.agent.engine.trash_empty(older_than_days)

    def trash_restore(self, id: int, path: str | None) -> dict[str, Any]:
        return self.agent.trash_restore(id, path)

    # -- memory: the service's methods take the commands' arguments as they are ----------------
    def memory_add(self, **args: Any) -> dict[str, Any]:
        return self._mem().add(**args)

    def memory_search(self, **args: Any) -> list[dict[str, Any]]:
        return self._mem().search(**args)

    def memory_list(self, **args: Any) -> list[dict[str, Any]]:
        return self._mem().list(**args)

    def memory_show(self, id: str) -> dict[str, Any]:
        return self._mem().show(id)

    def memory_forget(self, id: str) -> dict[str, Any]:
        return self._mem().forget(id)

    def memory_restore(self, id: str) -> dict[str, Any]:
        return self._mem().restore(id)

    def memory_export(
        self,
        format: str,
        valid: float | None,
        system: bool,
        include_secrets: bool,
        include: list[str],
        list_withheld: bool,
    ) -> dict[str, Any]:
        # The chat logs, not the memory store: an export works while the store loads or is off.
        result = export_chats(
            self.layout.root,
            format,
            valid=valid,
            system=self.chat.persona() if system else "",
            include_secrets=include_secrets,
            include=include,
            count=None if list_withheld else self.chat.runtime.count_loaded,
        )
        if list_withheld:  # the listing only: nothing to write
            result.update(train=[], valid=[], listing=True)
        return result

    def memory_examples(self) -> dict[str, int]:
        return self._mem().load_examples()

    def memory_stats(self) -> dict[str, Any]:
        return self._mem().stats()

    def context(self, **args: Any) -> dict[str, Any]:
        return self._mem().context(**args)

    # -- the model, the chat, backups -------------------------------------------------------
    def model_status(self) -> dict[str, Any]:
        return self.chat.runtime.status()

    def model_use(self, path: str, lora: str | None) -> dict[str, Any]:
        return self.chat.runtime.use(path, lora)

    def chat_start(self) -> dict[str, Any]:
        return self.chat.start()

    def chat_send(self, session: str, message: str) -> StreamReply:
        return self.chat.send(session, message)

    def backup_init(self, target: str, password_file: str | None) -> dict[str, Any]:
        return self.backup.init(target, password_file)

    def backup_now(self) -> dict[str, Any]:
        return self.backup.now()

    def backup_list(self, all: bool) -> list[dict[str, Any]]:
        return self.backup.list(every=all)

    def backup_check(self) -> dict[str, Any]:
        return self.backup.check()

    def backup_forget(self) -> dict[str, Any]:
        return self.backup.forget()

    def backup_restore(
        self, snapshot: str, paths: list[str], to: str, paths_hex: list[str], any_root: bool
    ) -> dict[str, Any]:
        return self.backup.restore(snapshot, paths, to, paths_hex, any_root)

    def _mem(self) -> MemoryService:
        return self.memory.get()

    def analyze(self, wait: bool) -> dict[str, Any]:
        if wait:
            with self._analysis:
                done = self.agent.analysis(trigger="person")
            pending = self.agent.store.count("pending")
            return {"proposed": done["proposed"], "skipped": done["skipped"], "pending": pending}
        # Checked now so a person at level off hears why at once, not never.
        if self.agent.autonomy.effective() == "off":
            self.agent.analyze(trigger="person")  # raises the refusal
        threading.Thread(target=self._analyze_quietly, daemon=True, name="analyze").start()
        return {"started": True}

    def _catch_up(self, change: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Change autonomy; if proposals on events resume (off or manual -> suggest or auto),
        analyse now, as at start: the events seen while paused proposed nothing, and the next
        rescan may be many minutes away."""
        quiet = ("off", "manual")
        before = self.agent.autonomy.effective()
        status = change()
        if before in quiet and self.agent.autonomy.effective() not in quiet:
            threading.Thread(target=self._analyze_quietly, daemon=True, name="analyze").start()
        return status

    def _analyze_quietly(self) -> None:
        with self._analysis:
            try:
                self.agent.analyze(trigger="person")
            except Exception:  # a background run has nobody to answer; the log has it
                log.exception("analysis failed")

    def reload(self) -> dict[str, Any]:
        done = self._reload()  # first: the policy it reports is the one just read
        return {"policy": self._policy(), **done}

    def _policy(self) -> dict[str, Any]:
        """The policy in force: its file, when it was loaded, and the error of the file as it
        is now if it is not valid (the last good policy then stays in force)."""
        holder = self.agent.policy
        return {
            "file": str(holder.path),
            "ok": holder.error is None,
            "loaded_at": holder.loaded_at,
            "error": holder.error,
        }

    def status(self) -> dict[str, Any]:
        memory, memories = self.memory.status()
        return {
            "running": True,
            # The folder watches are set up and the analysis after start has run.
            "ready": self.ready(),
            "pid": os.getpid(),
            "version": VERSION,
            "root": str(self.layout.root),
            "socket": self.socket_path,
            "autonomy": self.agent.autonomy.status(),
            "sandbox": str(self.agent.engine.confinement.backend),
            "sandbox_detail": spoken(self.sandbox_detail),
            "pending_suggestions": self.agent.store.count("pending"),
            "last_analysis": self.agent.store.setting("last_analysis"),
            "memories": memories,
            "memory": memory,
            "model": self.chat.runtime.status(),
            "policy": self._policy(),
            "audit_problem": self.agent.audit_problem,
            "recovered_at_start": self.recovered,
            "uptime_seconds": round(time.time() - self.started, 1),
            "watch": self.watch(),
        }
