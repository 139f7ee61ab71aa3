"""The daemon's side of the model process (agent.voice.worker): start it, talk to it, and
turn whatever it does into one sentence.

:class:`ProcessBackend` is a :class:`~agent.voice.model.Backend` like any other, so the runtime, the
chat and the background jobs use it unchanged. Every wait on the process is bounded: a process
that says nothing for ``stall_s`` is killed (a hang), one that dies (any signal, an exit, the
memory limit) ends the generation in progress with :class:`~agent.voice.model.ModelFailed`, and the backend then
reports its :attr:`~ProcessBackend.failure` for the runtime to restart it or give it up; one that
died between two requests reports it too, before the next is sent.

The process runs native code on text from anywhere, so it starts isolated and confined: ``python
-I`` with the project's folder named on its command line (nothing from the working folder,
PYTHONPATH or the user's site), in a working folder of ALMA's own, behind the sandbox's own
confinement (sandbox.confine) with no writable folder at all: it reads the model, writes
nowhere, reaches no network and gains no privilege.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from agent.voice.model import (
    CHAT_SAMPLING,
    COULD_NOT_START,
    Chunk,
    Failure,
    Message,
    ModelFailed,
    Sampling,
)
from agent.voice.model_file import resolve_model_path
from agent.voice.worker import EXIT_LOAD, EXIT_OOM, cpu_flags
from policies.errors import AlmaError, BadArgumentError
from policies.i18n import N_, _, current_language
from policies.results import JSONObject
from sandbox.confine import Backend as Sandbox
from sandbox.confine import Confinement, isolated_start
from sandbox.landlock import ENV_REPORT

log = logging.getLogger("alma.model")

#: How long a cancelled generation may take to stop at its next piece before it is killed.
CANCEL_GRACE_S = 10.0
#: How long an asked exit may take before the process is killed.
EXIT_GRACE_S = 3.0
_STDERR_LINES = 40
_STDERR_LINE = 4096
_UNCONFINED = N_(
    "NOT CONFINED: the model process runs with your rights (no sandbox works here, see "
    "`alma-ctl status`)"
)


@dataclass(frozen=True)
class ProcessOptions:
    n_ctx: int
    threads: int
    #: Address-space limit of the process; 0: :func:`memory_limit_mb` chooses it.
    memory_mb: int = 0
    nice: int = 10
    #: Longest wait for any word from the process while it answers before it is a hang.
    stall_s: float = 120.0
    #: Longest wait for a model to load and give its first word (a large file on a slow disk).
    load_s: float = 600.0
    #: The sandbox the process runs in, with no writable folder; None: unconfined.
    confinement: Confinement | None = None
    #: Its working folder: ALMA's own, never the one the daemon was started from.
    workdir: str = "/"


#: Why a process is gone, as the cause in the runtime's sentences (agent.voice.model).
_DIED = N_("the model process crashed ({cause}) while {doing}")
_HUNG = N_("the model process gave nothing for {seconds} seconds while {doing}")
_LOADING = N_("loading the model")
_ANSWERING = N_("answering")
_WAITING = N_("waiting for a message")


class ProcessBackend:
    """One model process. Used by one thread at a time (the runtime's worker)."""

    def __init__(self, path: str, options: ProcessOptions, lora: str | None = None) -> None:
        self.path = path
        self.kind = "llama-cpp"
        #: The LoRA adapter the process applied to the model, as it said once loaded.
        self.lora: str | None = None
        self.options = options
        self.n_ctx = options.n_ctx
        self.threads: int | None = options.threads
        self._failure: Failure | None = None
        self.memory_mb = memory_limit_mb(path, options)
        self._confined: str | None = None
        self._buffer = b""
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        confinement = options.confinement
        if confinement is not None and confinement.backend is Sandbox.NONE:
            confinement = None
        argv = isolated_start(
            "agent.voice.worker",
            [
                f"--path={path}",
                f"--n-ctx={options.n_ctx}",
                f"--threads={options.threads}",
                f"--memory-mb={self.memory_mb}",
                f"--nice={options.nice}",
                *([f"--lora={lora}"] if lora is not None else []),
                f"--lang={current_language()}",
            ],
        )
        if confinement is None:  # the sandbox's launcher checks this parent itself
            argv.append(f"--parent={os.getpid()}")
        env = {k: v for k, v in os.environ.items() if k != ENV_REPORT}  # only the launcher's
        try:
            command = confinement.wrap(argv, []) if confinement is not None else argv
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                close_fds=True,
                cwd=options.workdir,
                env=env,
                start_new_session=True,  # a Ctrl-C meant for the daemon's terminal is not its
            )
        except (OSError, ValueError, AlmaError) as exc:  # no process (out of processes, memory)
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            reason = _(COULD_NOT_START, reason=why)
            raise ModelFailed(Failure(reason)) from None
        assert self.process.stdout is not None and self.process.stderr is not None
        self._out = self.process.stdout.fileno()
        _first_for_the_oom_killer(self.process.pid)
        threading.Thread(target=self._drain_stderr, name="alma-model-stderr", daemon=True).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def confined(self) -> str:
        """What confines the process, as the sandbox's launcher reported it from inside."""
        return self._confined or _(_UNCONFINED)

    # ------------------------------------------------------------------ starting

    @classmethod
    def start(cls, path: str, options: ProcessOptions, lora: str | None = None) -> ProcessBackend:
        """A started process whose model (with the LoRA adapter ``lora`` applied) loaded and
        generated a first word, else one sentence: :class:`BadArgumentError` for a model that
        cannot load (its own words), :class:`ModelFailed` for one that crashed or hung doing
        so."""
        backend = cls(path, options, lora)
        try:
            loaded = False
            while True:
                message = backend._receive(_LOADING, limit=options.load_s)
                if "error" in message:
                    backend.close()
                    raise BadArgumentError(str(message["error"]))
                if "loaded" in message:
                    loaded = True
                if "ready" in message:
                    info = message["ready"]
                    backend.lora = str(info["lora"]) if info.get("lora") else None
                    backend.path = str(info.get("path") or path)
                    backend.n_ctx = int(info.get("n_ctx") or options.n_ctx)
                    threads = info.get("threads")
                    backend.threads = int(threads) if threads is not None else None
                    backend.kind = str(info.get("kind") or backend.kind)
                    if info.get("confined"):
                        backend._confined = str(info["confined"])
                    log.info("model process %s confined: %s", backend.pid, backend.confined)
                    return backend
        except ModelFailed as exc:
            if not loaded:
                raise
            reason = _("it loaded but could not generate: {why}", why=exc.failure.reason)
            raise ModelFailed(Failure(reason, exc.failure.counts)) from None

    # ------------------------------------------------------------------ Backend

    def count_tokens(self, text: str) -> int:
        self._send({"op": "count", "text": text})
        message = self._receive(_ANSWERING)
        if "error" in message:
            raise AlmaError(str(message["error"]))
        return int(message["tokens"])

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: JSONObject | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        self._send(
            {
                "op": "generate",
                "messages": list(messages),
                "max_tokens": max_tokens,
                "json_schema": json_schema,
                "sampling": dataclasses.asdict(sampling),
                "lang": current_language(),
            }
        )
        return self._pieces()

    def _pieces(self) -> Iterator[Chunk]:
        ended = False
        try:
            while True:
                message = self._receive(_ANSWERING)
                if "error" in message:
                    ended = True
                    raise AlmaError(str(message["error"]))
                if message.get("end"):
                    ended = True
                    return
                yield str(message.get("text") or ""), message.get("finish")
        finally:
            if not ended and self._failure is None:
                self._cancel()

    def _cancel(self) -> None:
        """Stop the generation in flight and wait for its end, so the next request starts
        clean; a process that cannot stop in time is killed (not counted as a crash)."""
        try:
            self._send({"op": "cancel"})
            deadline = time.monotonic() + CANCEL_GRACE_S
            while not self._receive(_ANSWERING, until=deadline).get("end"):
                pass
        except ModelFailed:
            pass  # failure is set: the runtime replaces the process

    @property
    def failure(self) -> Failure | None:
        """Why the process can no longer answer. Read between two requests, it also notices
        a process that died while nobody talked to it: its exit, its main thread ended, or
        its output's end (a process killed with many threads takes a moment to be reapable,
        and a request written meanwhile would be lost with it)."""
        if self._failure is None and not self._alive():
            try:
                code = self.process.wait(EXIT_GRACE_S)
            except subprocess.TimeoutExpired:  # its output closed but it lives on: end it
                self._kill()
                code = self.process.wait()
            cause = exit_cause(code, self.memory_mb)
            log.error("model process %s ended while idle (%s)", self.pid, cause)
            self._failure = Failure(_(_DIED, cause=cause, doing=_(_WAITING)))
        return self._failure

    @failure.setter
    def failure(self, value: Failure | None) -> None:
        self._failure = value

    def _alive(self) -> bool:
        if self.process.poll() is not None or _exiting(self.pid):
            return False
        if not readable(self._out, 0):
            return True
        data = os.read(self._out, 1 << 16)
        self._buffer += data  # idle, it writes nothing; whatever it did is read in turn
        return bool(data)

    def close(self) -> None:
        """End the process, whatever state it is in; never raises (a dead process's pipes
        refuse the last bytes, which is what a closed process is anyway)."""
        try:
            if self._failure is None and self.process.poll() is None:
                self._send({"op": "exit"})
                self.process.wait(EXIT_GRACE_S)
        except (ModelFailed, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            try:
                self._kill()
            except OSError:
                log.exception("model process %s: could not be ended", self.pid)
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()

    # ------------------------------------------------------------------ the channel

    def _send(self, message: JSONObject) -> None:
        if self._failure is not None:
            raise ModelFailed(self._failure)
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            stdin.flush()
        except OSError:
            self._died(_ANSWERING)

    def _receive(
        self, doing: str, *, limit: float | None = None, until: float | None = None
    ) -> JSONObject:
        """The next message; a death, or a silence past ``limit`` seconds (a hang) or past
        ``until`` (a cancel that did not stop in time), is :class:`ModelFailed`. What a process
        wrote before it ended is read first (its last words may be why it ended)."""
        if self._failure is not None:
            raise ModelFailed(self._failure)
        limit = limit if limit is not None else self.options.stall_s
        deadline = until if until is not None else time.monotonic() + limit
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill()
                reason = _(_HUNG, seconds=f"{limit:g}", doing=_(doing))
                self.failure = Failure(reason, counts=until is None)
                log.error("model process %s said nothing for %g s: killed", self.pid, limit)
                raise ModelFailed(self.failure)
            if not readable(self._out, left):
                continue
            data = os.read(self._out, 1 << 16)
            if not data:
                self._died(doing)
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self._kill()
            self.failure = Failure(_(_DIED, cause=_("a garbled answer"), doing=_(doing)))
            raise ModelFailed(self.failure)
        return message

    def _died(self, doing: str) -> None:
        try:
            code = self.process.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:  # its output closed but it lives on: end it
            self._kill()
            code = self.process.wait()
        cause = exit_cause(code, self.memory_mb)
        log.error(
            "model process %s ended (%s); its last words:\n%s",
            self.pid,
            cause,
            "\n".join(self._stderr) or "(none)",
        )
        if code == EXIT_LOAD:
            self.failure = Failure(_("the model process could not load the model"))
        else:
            self.failure = Failure(_(_DIED, cause=cause, doing=_(doing)))
        raise ModelFailed(self.failure)

    def _kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        # A bounded read: native code may print without end and never a newline.
        for raw in iter(lambda: stderr.readline(_STDERR_LINE), b""):
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._stderr.append(line)
                log.debug("model process: %s", line)
        stderr.close()


def readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` has bytes (or its end) within ``timeout`` seconds. poll, not select: a
    daemon that has opened many files holds descriptors past select's 1024, which it refuses."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(math.ceil(max(timeout, 0.0) * 1000)))


def _exiting(pid: int) -> bool:
    """Whether the process's main thread has ended (a zombie), its other threads still on
    their way out: it reads no more requests, though it cannot be reaped yet."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return False  # no /proc: its exit and its output's end still tell


def _first_for_the_oom_killer(pid: int) -> None:
    """The process is the one the kernel kills first when memory runs out (written from
    here: the confined process may write nowhere, /proc included)."""
    try:
        with open(f"/proc/{pid}/oom_score_adj", "w", encoding="ascii") as adj:
            adj.write("1000")
    except OSError:
        pass  # no /proc, or it ended already: its memory limit still holds


def memory_limit_mb(path: str, options: ProcessOptions) -> int:
    """The process's address-space limit: the setting, else room for the weights twice (a
    repacked copy), the context's cache and the library, at most the machine's memory."""
    if options.memory_mb:
        return options.memory_mb
    try:
        weights = os.stat(path).st_size >> 20
    except OSError:
        weights = 0
    wanted = 2 * weights + 2048 + options.n_ctx // 2
    try:
        machine = (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20
    except (ValueError, OSError):
        return wanted
    return min(wanted, machine)


def exit_cause(code: int, memory_mb: int) -> str:
    """A process's end as a person reads it: the signal's name, or what an exit code means."""
    if code == EXIT_OOM:
        return _("out of memory: the model needs more than its limit of {mb} MB", mb=memory_mb)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code == signal.SIGKILL:
            return _("{name}: killed, maybe by the kernel for lack of memory", name=name)
        if -code == signal.SIGILL:
            return _(
                "{name}: this processor lacks an instruction the model library uses", name=name
            )
        return name
    return _("exit code {code}", code=code)


def fingerprint(path: str, options: ProcessOptions) -> str:
    """What makes two runs of a model "the same": the file, the settings, the library and the
    processor. A model given up as unusable is tried again when any of them changes (a root
    on a portable disk may meet another computer)."""
    try:
        library = version("llama_cpp_python")
    except PackageNotFoundError:  # an install without metadata: still a fingerprint
        library = "?"
    try:
        stat = resolve_model_path(path).stat() if not path.startswith("http") else None
    except (OSError, AlmaError):
        stat = None
    parts = [
        path,
        str(stat.st_size if stat else ""),
        str(stat.st_mtime_ns if stat else ""),
        str(options.n_ctx),
        str(options.threads),
        str(options.memory_mb),
        library,
        " ".join(sorted(cpu_flags())),
    ]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


__all__ = ["ProcessBackend", "ProcessOptions", "exit_cause", "fingerprint"]
