"""``alma-agentd``: the composition root. It creates the real parts and wires them together.

Order matters: policy and settings (refuse to start on a bad file), the one-daemon-per-root
lock, the sandbox, recovery of an interrupted action (before anything else can act), then the
stores, the loop, the socket, the watchers and the schedule. SIGTERM/SIGINT: stop accepting,
let the action in flight finish (or roll back), exit 0. The policy is read again (one path,
:class:`Reload`) on SIGHUP, on ``alma-ctl reload`` and when system/autonomy.conf is written.
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from actions.planners import PlanResult
from actions.scan import HashCache
from actions.tree import Tree
from agent.api import VERSION, Api, DaemonStatus, Later
from agent.backup import restore as backup_restore
from agent.backup.service import BackupService
from agent.day.notify import make_notifier
from agent.detectors.files import detect_files
from agent.detectors.logs import detect_logs
from agent.logconf import setup_logging
from agent.loop.autonomy import Autonomy
from agent.loop.lifecycle import Agent, Detect
from agent.memory import merge_actions as memory_actions
from agent.memory.export import ChatExport
from agent.memory.loader import MemoryLoader
from agent.memory.rules import is_question
from agent.policy import PolicyHolder
from agent.schedule import start_schedule
from agent.settings import Reload, Settings, load_settings
from agent.voice.chat import ChatLimits, ChatService
from agent.voice.choice import model_runtime
from agent.voice.model import Complete
from agent.voice.process import ProcessOptions
from agent.watch import Debouncer, Watcher
from agent.web import PanelKeeper
from control.protocol import socket_path_for
from control.server import ControlServer
from policies.errors import AlmaError, ConfigError, UnavailableError
from policies.i18n import (
    _,
    follow_root_language,
    guess_language,
    locale_names,
    process_language,
    remembered_language,
    set_fallback_language,
    set_language,
)
from policies.layout import RootLayout, resolve_root
from policies.modes import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    ensure_private_dir,
    keep_private,
    private_file,
)
from sandbox.confine import Backend, Confinement, choose
from sandbox.engine import Engine
from state.chatlog import persons_words
from state.journal import Journal
from state.suggestions import SuggestionStore

if TYPE_CHECKING:
    from agent.memory.service import MemoryService  # imported when the store loads: heavy

log = logging.getLogger("alma.daemon")


class Refusal(Exception):
    """The daemon cannot start; the message says why and what to do."""


def _lock_root(layout: RootLayout) -> int:
    try:
        if ensure_private_dir(layout.data):
            log.warning("%s was readable by other users; it is private (0700) now", layout.data)
    except PermissionError as exc:
        raise Refusal(str(exc)) from None
    fd = os.open(layout.lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise Refusal(
            _(
                (
                    "Another alma-agentd (pid {pid}) is already running on {root}; stop it first "
                    "(systemctl --user stop alma) or use another --root."
                ),
                pid=pid,
                root=layout.root,
            )
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def confinement_for(holder: PolicyHolder) -> Confinement:
    policy = holder()
    try:
        return choose(policy.sandbox.backend, allow_unconfined=policy.sandbox.allow_unconfined)
    except UnavailableError as exc:
        # Start anyway (suggestions, memory, undo of nothing): the engine refuses every action.
        log.error("NO SANDBOX: %s Actions are refused until one works.", exc)
        return Confinement(Backend.NONE, f"UNAVAILABLE: {exc} Actions are refused.")


def _model_options(settings: Settings, confinement: Confinement, workdir: str) -> ProcessOptions:
    return ProcessOptions(
        n_ctx=settings.model.context_tokens,
        threads=settings.model.threads or max(1, (os.cpu_count() or 2) - 1),
        memory_mb=settings.model.memory_mb,
        nice=settings.model.nice,
        stall_s=settings.model.timeout_seconds,
        confinement=confinement,  # the plans' sandbox, with no writable folder at all
        workdir=workdir,
    )


def _load_memory(
    layout: RootLayout,
    settings: Settings,
    gate: MemoryLoader,
    policy: PolicyHolder,
    journal: Journal,
    complete: Complete,
) -> None:
    if not settings.memory.enabled:
        gate.fail(_("memory is disabled in system/alma.toml ([memory] enabled = false)"))
        return
    try:
        from agent.memory.model_enricher import (
            ModelEnricher,  # with the store: it imports the memory models
        )
        from agent.memory.service import MemoryService  # heavy: Chroma and the model

        model = ModelEnricher(complete) if settings.model.enrich_memories else None
        service = MemoryService(
            layout,
            model=model,
            chroma_url=settings.memory.chroma_url,
            embedder=settings.memory.embedder,
            cap=settings.memory.cap,
            settle_seconds=float(policy().monitor.settle_seconds),
        )
        service.start_ingestion()
        _store_requested_examples(service)
        recovered = memory_actions.recover(journal, service)
        if recovered:
            log.warning("memory merges interrupted by a stop were taken back: %s", recovered)
        gate.set(service)
        log.info("memory store ready")
    except Exception as exc:  # the daemon keeps serving files and suggestions without memory
        log.exception("memory store failed to load")
        gate.fail(f"{exc}; see the daemon log")


def _store_requested_examples(service: MemoryService) -> None:
    try:
        added = service.load_requested_examples()
    except Exception:  # the memories the person made matter more than the examples
        log.exception("the example memories were not stored; the next start tries again")
        return
    if added is not None:
        log.info("example memories stored, as init asked: %d", added)


def make_detect(layout: RootLayout, holder: PolicyHolder, more: Detect | None = None) -> Detect:
    """The files of the zones and the logs, and ``more`` (the backups'), for the analysis'
    observe step (the memory store's findings are the agent's: Agent._findings);
    bench/bench_agent.py runs this same one."""
    hashes: HashCache = {}  # kept across rescans: duplicates are not re-read every time

    def detect(now: float) -> list[PlanResult]:
        policy = holder()
        found = detect_files(layout.root, policy, now, hash_cache=hashes)
        found += detect_logs(layout.root, policy, now)
        if more is not None:
            found += more(now)
        return found

    return detect


def speak_the_persons_language(layout: RootLayout, setting: str | None) -> bool:
    """The daemon's language: its setting, else what the locale names, else the language of
    the person's own words (a locale of C or POSIX names none). Returns whether it is decided:
    while the person has written too little to tell, ALMA speaks English and asks again when
    their words arrive (:func:`follow_the_persons_words`)."""
    set_language(setting)
    if setting is None and locale_names() is None:
        return follow_the_persons_words(layout)
    _write_language(layout)
    return True


def follow_the_persons_words(layout: RootLayout) -> bool:
    """Where neither a setting nor the locale names the language: the person's chat logs tell
    it, else what an earlier start decided from them (the logs may have aged out). A language
    so decided is written down, so a restart and the clients (alma-ctl, the chat) speak it too;
    nothing is written while there is nothing to tell, so the first words decide, once."""
    with Tree(layout.root) as tree:
        decided = guess_language(persons_words(tree))
    if decided is None:
        decided = remembered_language(layout.language_file)
    if decided is None:
        return False
    set_fallback_language(decided)
    _write_language(layout)
    return True


def _write_language(layout: RootLayout) -> None:
    path = layout.language_file
    try:
        private_file(path)
        path.write_text(process_language() + "\n", encoding="ascii")
    except OSError as exc:  # the clients fall back to their locale: English
        log.warning("could not write %s: %s", path, exc)


class Daemon:
    def __init__(self, layout: RootLayout) -> None:
        self.layout = layout
        self.stop = threading.Event()
        self.reload = threading.Event()
        self.language_decided = False

    def run(self) -> int:
        layout = self.layout
        keep_private()  # what the daemon and its libraries create is private unless asked
        # Before anything is said: a root's language decided at an earlier start, for a
        # locale that names none (a refusal of a broken policy is said in it too).
        follow_root_language(str(layout.language_file))
        if not layout.policy_file.is_file():
            raise Refusal(
                _(
                    "{policy_file} does not exist; run `alma-ctl --root {root} init` first.",
                    policy_file=layout.policy_file,
                    root=layout.root,
                )
            )
        try:
            holder = PolicyHolder(layout)
            settings = load_settings(layout.settings_file)
        except ConfigError as exc:
            raise Refusal(_("{exc} ALMA did not start.", exc=exc)) from None
        setup_logging(settings.log_level)
        set_language(settings.language)
        lock = _lock_root(layout)
        try:
            self.language_decided = speak_the_persons_language(layout, settings.language)
            return self._serve(holder, settings)
        finally:
            os.close(lock)

    def _serve(self, holder: PolicyHolder, settings: Settings) -> int:
        layout = self.layout
        for d in (layout.journal_dir, layout.trash):
            d.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        confinement = confinement_for(holder)
        journal = Journal(layout.journal_file)
        engine = Engine(layout, journal, confinement, holder)
        recovered = engine.recover()  # before the socket opens: nothing acts meanwhile
        if recovered:
            log.warning("recovered interrupted actions: %s", recovered)
        store = SuggestionStore(layout.db_file)
        autonomy = Autonomy(store, holder)
        notify = make_notifier(settings.notify)

        memory = MemoryLoader(layout.principles_file)
        backup = BackupService(
            layout,
            holder,
            store,
            engine,
            memory,
            lambda a: agent.audit(a, None),
            autonomy=autonomy,
        )
        backup.recover()
        detect = make_detect(layout, holder, backup.findings)
        runtime = model_runtime(
            settings.model.url or settings.model.path,
            _model_options(settings, confinement, os.fspath(layout.data)),
            store,
        )
        agent = Agent(
            layout,
            holder,
            store,
            engine,
            autonomy,
            detect,
            notify=notify,
            memory=memory,
            complete=runtime.complete,
            model_timeout_s=settings.model.timeout_seconds,
            backup=backup_restore.BackupFamily(engine),
        )
        agent.reconcile()
        chat = ChatService(
            layout,
            runtime,
            context=memory.chat_context,
            pending=lambda: store.list(status="pending"),
            asks=is_question,
            limits=ChatLimits(
                max_tokens=settings.model.max_tokens,
                timeout_s=settings.model.timeout_seconds,
                context_budget=settings.memory.context_budget,
            ),
        )
        threading.Thread(
            target=_load_memory,
            args=(layout, settings, memory, holder, journal, runtime.complete),
            daemon=True,
            name="memory",
        ).start()
        socket_path = socket_path_for(layout.root)
        analysed = threading.Event()  # the analysis after start has run: `status` says ready

        def on_events() -> None:
            if analysed.is_set():
                agent.analyze(trigger="event")
                return
            # The analysis after start, which `ready` waits for, does not wait for the model
            # (loading it and its answer take a minute on a busy machine): what needs it is
            # proposed by the analysis right after.
            try:
                done = agent.analysis(trigger="event", model=False)
            finally:
                analysed.set()
            if done.get("deferred"):
                agent.analyze(trigger="event")

        debounce = Debouncer(
            on_events,
            settings.schedule.debounce_seconds,
            lambda: float(holder().monitor.settle_seconds),
        )
        zones = [layout.root / z for z in holder().zones.writable]

        def on_change(names_in_logs: list[str]) -> None:
            if names_in_logs and not self.language_decided:
                self.language_decided = follow_the_persons_words(layout)
            debounce.poke()
            memory.logs_changed(names_in_logs)

        watcher = Watcher([*zones, layout.logs], on_change, names_of=layout.logs)
        reload = Reload(layout, holder, settings)
        policy_name = layout.policy_file.name

        def on_system_change(names: list[str]) -> None:
            if policy_name in names:  # written in place, or renamed over it by an editor
                reload("the file changed")

        system_watcher = Watcher([layout.system], on_system_change, names_of=layout.system)
        status = DaemonStatus(
            layout,
            socket_path=str(socket_path),
            sandbox=str(confinement.backend),
            sandbox_detail=confinement.detail,
            recovered=recovered,
            autonomy=autonomy,
            policy=holder,
            store=store,
            memory=memory,
            model=runtime,
            audit_problem=lambda: agent.audit_problem,
            watch=lambda: watcher.status(settings.schedule.rescan_minutes),
            ready=lambda: watcher.ready and analysed.is_set(),
        )
        # The services the command table names (control.commands: answered_by).
        api = Api(
            {
                "daemon": status,
                "reload": reload,
                "loop": agent,
                "suggestions": store,
                "autonomy": autonomy,
                "reminders": agent.reminders,
                "reports": agent.reports,
                "journal": journal,
                "engine": engine,
                "memory": Later(
                    None, memory.get
                ),  # checked by tests/unit/test_commands_handlers.py
                "exporter": ChatExport(
                    layout.root,
                    chat.persona,
                    runtime.count_loaded,
                    lambda *args, **kw: memory.get().vault(*args, **kw),
                ),
                "model": runtime,
                "chat": chat,
                "backup": backup,
            }
        )
        server = ControlServer(socket_path, api.dispatch, logger=logging.getLogger("alma.control"))
        server.start()
        # The panel is a client of the socket: started once the socket answers.
        panel = (
            PanelKeeper(str(layout.root), settings.web.port).start()
            if settings.web.enabled
            else None
        )
        watcher.start()  # seconds for tens of thousands of folders; `status` answers meanwhile
        system_watcher.start()

        def rescan() -> None:
            watcher.refresh()
            agent.remind_due()
            agent.analyze(trigger="schedule")
            memory.rescan_logs()

        def daily() -> None:
            agent.analyze(trigger="schedule")
            agent.reports.scheduled()

        def backup_due() -> None:
            if backup.tick():  # failed: the analysis proposes the `backup` suggestion
                agent.analyze(trigger="schedule")

        scheduler = start_schedule(settings.schedule, rescan=rescan, daily=daily, backup=backup_due)
        signal.signal(signal.SIGTERM, lambda *_: self.stop.set())
        signal.signal(signal.SIGINT, lambda *_: self.stop.set())
        signal.signal(signal.SIGHUP, lambda *_: self.reload.set())
        log.info(
            "alma-agentd %s ready on %s (socket %s, sandbox %s, autonomy %s)",
            VERSION,
            layout.root,
            socket_path,
            confinement.backend,
            autonomy.effective(),
        )
        # A first analysis, as after any change: what happened while ALMA was not running.
        threading.Thread(target=debounce.poke, daemon=True).start()
        try:
            while not self.stop.wait(0.5):
                if self.reload.is_set():
                    self.reload.clear()
                    reload("SIGHUP")
        finally:
            log.info("stopping: finishing the action in flight, if any")
            if panel is not None:
                panel.close()
            server.close(timeout=30.0)
            debounce.close()
            watcher.stop()
            system_watcher.stop()
            scheduler.shutdown(wait=False)
            agent.close()  # the op in flight finishes (or rolls back) first; no analysis after
            runtime.close()
            memory.close()
            store.close()
            journal.close()
            log.info("stopped")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="alma-agentd", description="The ALMA daemon.")
    parser.add_argument("--root", help="the ALMA root (default: $ALMA_ROOT, else ~/ALMA)")
    parser.add_argument("--version", action="version", version=f"alma-agentd {VERSION}")
    args = parser.parse_args(argv)
    layout = RootLayout(resolve_root(args.root))
    try:
        return Daemon(layout).run()
    except Refusal as exc:
        print(f"alma-agentd: {exc}", file=sys.stderr)
        return 1
    except AlmaError as exc:
        print(f"alma-agentd: {exc}", file=sys.stderr)
        return 1


def entry() -> None:
    """The console script: :func:`main`, then an exit without the interpreter's teardown.

    Everything durable is closed when main returns (the op in flight finished or rolled back,
    every store closed, its files synced). The teardown only walked the whole heap in its last
    collections (the memory store's, the embedder's) and ran native libraries' destructors
    with their threads still running (a C++ ``std::terminate``: SIGABRT instead of exit 0)."""
    code = main()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
