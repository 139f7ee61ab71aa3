"""The socket's commands, one handler each. The server has already validated every argument
against control.commands; a name that is not in HANDLERS is never looked up anywhere else.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agent.backup.service import BackupService
from agent.loop.lifecycle import Agent
from agent.memory.gate import Memory, MemoryGate
from agent.voice.chat import ChatService
from policies.layout import RootLayout

log = logging.getLogger("alma.agent")
VERSION = "0.1.0"
Handler = Callable[[dict[str, Any]], Any]


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
        recovered: list[dict[str, Any]],
        watch: Callable[[], dict[str, Any]],
        ready: Callable[[], bool],
    ) -> None:
        self.layout = layout
        self.agent = agent
        self.memory = memory
        self.chat = chat
        self.socket_path = socket_path
        self.sandbox_detail = sandbox_detail
        self.recovered = recovered
        self.watch = watch
        self.ready = ready
        self.started = time.time()
        self._analysis = threading.Lock()
        self.handlers: dict[str, Handler] = {
            "status": lambda a: self.status(),
            "analyze": self.analyze,
            "suggestions.list": lambda a: agent.store.list(status=a.get("status"), all_=a["all"]),
            "suggestions.show": lambda a: agent.show(a["id"], all_ops=a["all"]),
            "suggestions.accept": lambda a: agent.accept(a["id"]),
            "suggestions.reject": lambda a: agent.reject(a["id"], a.get("reason")),
            "autonomy.off": lambda a: agent.autonomy.off(),
            "autonomy.on": lambda a: self._catch_up(agent.autonomy.on),
            "autonomy.status": lambda a: agent.autonomy.status(),
            "autonomy.level": lambda a: self._catch_up(
                lambda: agent.autonomy.set_level(a["level"])
            ),
            "autonomy.allow": lambda a: agent.allow(a["kind"], a.get("folder")),
            "feedback": lambda a: agent.feedback(
                a["id"], a["verdict"] == "util", a.get("reason"), action=a["action"]
            ),
            "stats": lambda a: agent.stats(),
            "report": lambda a: agent.report(a.get("date"), refresh=a["refresh"]),
            "reminders": lambda a: agent.reminders.listing(datetime.now()),
            "undo": lambda a: agent.undo(a.get("id")),
            "history": lambda a: agent.engine.journal.history(a["limit"]),
            "trash.list": lambda a: agent.engine.trash_list(),
            "trash.empty": lambda a: agent.engine.trash_empty(a["older_than_days"]),
            "trash.restore": lambda a: agent.trash_restore(a["id"], a.get("path")),
            "memory.add": lambda a: self._mem().add(
                a["content"],
                tags=a["tags"],
                project=a["project"],
                importance=a.get("importance"),
                memory_type=a.get("memory_type"),
                theme=a.get("theme"),
                related_to=a.get("related_to"),
            ),
            "memory.search": lambda a: self._mem().search(
                a["query"],
                limit=a["limit"],
                tags=a["tags"],
                project=a.get("project"),
                memory_type=a.get("memory_type"),
                min_importance=a.get("min_importance"),
                theme=a.get("theme"),
                related_to=a.get("related_to"),
            ),
            "memory.list": lambda a: self._mem().list(
                limit=a["limit"],
                tag=a.get("tag"),
                project=a.get("project"),
                memory_type=a.get("memory_type"),
                archived=a["archived"],
            ),
            "memory.show": lambda a: self._mem().show(a["id"]),
            "memory.forget": lambda a: self._mem().forget(a["id"]),
            "memory.restore": lambda a: self._mem().restore(a["id"]),
            "memory.export": lambda a: self._mem().export(a["format"]),
            "memory.examples": lambda a: self._mem().load_examples(),
            "memory.stats": lambda a: self._mem().stats(),
            "context": lambda a: self._mem().context(a["prompt"], budget_tokens=a["budget"]),
            "model.status": lambda a: chat.runtime.status(),
            "model.use": lambda a: chat.runtime.use(a["path"]),
            "chat.start": lambda a: chat.start(),
            "chat.send": lambda a: chat.send(a["session"], a["message"]),
            "backup.init": lambda a: backup.init(a["target"], a.get("password_file")),
            "backup.now": lambda a: backup.now(),
            "backup.list": lambda a: backup.list(),
            "backup.check": lambda a: backup.check(),
            "backup.forget": lambda a: backup.forget(),
            "backup.restore": lambda a: backup.restore(a["snapshot"], a["paths"], a["to"]),
        }

    def dispatch(self, cmd: str, args: dict[str, Any]) -> Any:
        return self.handlers[cmd](args)

    def _mem(self) -> Memory:
        return self.memory.get()

    def analyze(self, args: dict[str, Any]) -> dict[str, Any]:
        if args["wait"]:
            with self._analysis:
                done = self.agent.analysis(trigger="person")
            return {**done, "pending": self.agent.store.count("pending")}
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

    def status(self) -> dict[str, Any]:
        policy = self.agent.policy
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
            "sandbox_detail": self.sandbox_detail,
            "pending_suggestions": self.agent.store.count("pending"),
            "last_analysis": self.agent.store.setting("last_analysis"),
            "memories": memories,
            "memory": memory,
            "model": self.chat.runtime.status(),
            "policy": {"file": str(policy.path), "ok": policy.error is None, "error": policy.error},
            "audit_problem": self.agent.audit_problem,
            "recovered_at_start": self.recovered,
            "uptime_seconds": round(time.time() - self.started, 1),
            "watch": self.watch(),
        }
