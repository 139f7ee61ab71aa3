"""The daemon's one model: loaded lazily in its own worker thread, used by one job at a time.

A person's machine cannot hold two models, so everything that wants one (the chat, the memory
enricher, the daily analysis, proposals) goes through :class:`ModelRuntime`. Its worker thread
is the only thread that touches the backend, which serialises loading, switching and
generating without a lock around a model call; the socket's threads only read a snapshot of
its status, so ``status`` and every other command keep answering while it works.

Chat jobs go before background ones. A second chat job while one is queued or running is
refused (``UNAVAILABLE``); a background :meth:`ModelRuntime.complete` waits up to its timeout
and then gives up (``None``): its caller always has a deterministic result to fall back on.

A GGUF model runs in a process of its own (agent.voice.process). When that process crashes or
hangs, its backend reports a :class:`Failure`; the runtime drops it and starts a new one after
a pause, and gives the model up (everything takes its no-model path) when it fails twice in a
row with nothing answered in between, until ``model use`` is asked again.

One module, longer than most, because the runtime is one state machine (its jobs, its worker
thread, the failures it counts and the status it shows); the backends (agent.voice.backends)
and the model's process (agent.voice.process, agent.voice.worker) live apart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent.voice.model_file import check_adapter, check_gguf, resolve_model_path
from policies.errors import AlmaError, BadArgumentError, ErrorCode, UnavailableError
from policies.i18n import N_, _, current_language, language
from policies.results import AnswerEnd, JSONObject, ModelStatus

log = logging.getLogger("alma.model")

Message = dict[str, str]
#: A piece of text and, on the last piece, why the backend stopped ("stop", "length").
Chunk = tuple[str, str | None]

NO_MODEL = N_(
    "No model is set up to answer; point ALMA at a GGUF file with `alma-ctl model use PATH` "
    '(or set [model] path = "embedded" in system/alma.toml for the small built-in one).'
)
_STOPPING = N_("ALMA is stopping; try again when it is back.")
#: A model process that did not start at all, as the cause in the runtime's sentences.
COULD_NOT_START = N_("the model process could not start ({reason})")


#: Consecutive failures (crashes, hangs, out of memory) after which a model is given up.
GIVE_UP_AFTER = 2
#: The pause before a failed model process is started again, doubled after each failure.
RESTART_PAUSE_S = 1.0


@dataclass(frozen=True)
class Failure:
    """Why a backend can no longer answer. ``counts``: a crash, a hang or the memory limit,
    which count towards giving the model up; a process stopped because an answer was cancelled
    while it could not be interrupted does not."""

    reason: str
    counts: bool = True


@dataclass(frozen=True)
class Sampling:
    """How an answer is drawn, read by every backend (the one place for it): a low temperature
    and a repeat penalty keep a small model from wandering and looping; the stops end an
    answer that starts writing the next turn itself."""

    temperature: float = 0.3
    top_p: float = 0.9
    top_k: int = 40
    #: llama.cpp's penalty on tokens of the last 64; servers take frequency_penalty instead.
    repeat_penalty: float = 1.15
    frequency_penalty: float = 0.3
    #: Most telling first: an OpenAI-compatible server takes the first four.
    stop: tuple[str, ...] = ("<|im_start|>", "\nusuario:", "\nUser:", "\nUsuario:", "<|im_end|>")


CHAT_SAMPLING = Sampling()


class Backend(Protocol):
    """What the runtime needs of a loaded model (llama-cpp here, or a loopback server)."""

    kind: str  # "llama-cpp" | "openai"
    path: str  # the file, or the server's URL, for status
    n_ctx: int
    threads: int | None
    #: Set once the backend can no longer answer (its process died or hung).
    failure: Failure | None

    def count_tokens(self, text: str) -> int: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: JSONObject | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]: ...

    def close(self) -> None: ...


#: Loads a model: its path, and the LoRA adapter to apply to it (None: the model as it is).
Loader = Callable[[str, str | None], Backend]


class ModelFailed(AlmaError):
    """A model process died or hung; the sentence says which and that ALMA restarts it."""

    code = ErrorCode.UNAVAILABLE

    def __init__(self, failure: Failure) -> None:
        super().__init__(restarting_sentence(failure.reason))
        self.failure = failure


def restarting_sentence(reason: str) -> str:
    return _(
        "{reason}; ALMA starts it again for the next message.",
        reason=reason[:1].upper() + reason[1:],
    )


class Complete(Protocol):
    """:meth:`ModelRuntime.complete`, for whatever does background work with the model."""

    def __call__(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: JSONObject | None = None,
        timeout_s: float,
    ) -> str | None: ...


@dataclass(frozen=True)
class Generation:
    text: str
    stopped: AnswerEnd
    tokens: int
    ms: int
    first_token_ms: int | None
    model: str


class _Job:
    __slots__ = ("abandoned", "done", "error", "fn", "needs_model", "result")

    def __init__(self, fn: Callable[[Backend | None], Any], *, needs_model: bool = True) -> None:
        self.fn = fn
        #: False for a switch of model: the one it replaces is not loaded just to be dropped.
        self.needs_model = needs_model
        self.done = threading.Event()
        self.abandoned = False
        self.result: Any = None
        self.error: BaseException | None = None


class ModelRuntime:
    """``path`` is "embedded", a GGUF path, an ``http://127.0.0.1:P`` server URL, or "" (none).

    ``lora`` is the LoRA adapter (a GGUF file) applied to a GGUF model, or None.

    ``loader`` turns a path and an adapter into a :class:`Backend` (raising
    :class:`BadArgumentError` with one sentence when it cannot); tests pass a fake, the daemon
    :func:`agent.voice.backends.load`.
    """

    def __init__(
        self,
        path: str,
        loader: Loader,
        *,
        lora: str | None = None,
        on_use: Callable[[str, str | None], None] | None = None,
        unusable: str | None = None,
        on_unusable: Callable[[str, str | None], None] | None = None,
    ):
        self._path = path
        self._lora = lora
        self._loader = loader
        self._on_use = on_use
        self._on_unusable = on_unusable
        self._backend: Backend | None = None
        self._load_error: str | None = None
        #: Why the model was given up (persisted by ``on_unusable``); None while it may run.
        self._unusable = unusable
        self._failures = 0
        self._last_failure: str | None = None
        self._restart_at: float | None = None
        self._tokens_per_second: float | None = None
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._chat: deque[_Job] = deque()
        self._background: deque[_Job] = deque()
        self._chat_busy = False
        self._closing = False
        self._thread = threading.Thread(target=self._work, name="alma-model", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ what callers use

    def status(self) -> ModelStatus:
        """A snapshot; never waits for the worker."""
        with self._lock:
            backend = self._backend
            out: ModelStatus = {
                "path": backend.path if backend else self._display_path(),
                "backend": backend.kind if backend else self._kind_of(self._path),
                "loaded": backend is not None,
                "n_ctx": backend.n_ctx if backend else None,
                "threads": backend.threads if backend else None,
                "tokens_per_second": self._tokens_per_second,
                "busy": self._chat_busy,
                "state": self._state(),
                "crashes": self._failures,
                "embedded": self._path == "embedded",  # the small built-in model (ctl says so)
            }
            if self._lora:
                out["lora"] = self._lora
                # What the model process says it applied, not what was asked of it.
                out["lora_in_use"] = getattr(backend, "lora", None) == self._lora
            pid = getattr(backend, "pid", None)
            if pid is not None:
                out["pid"] = pid
            confined = getattr(backend, "confined", None)  # a model process's, not a server's
            if confined is not None:
                out["confined"] = confined
            if self._last_failure:
                out["last_failure"] = self._last_failure
            if self._unusable:
                out["unusable"] = self._unusable
                out["error"] = self._given_up()
            elif self._load_error and backend is None:
                out["error"] = self._load_error
            return out

    def _given_up(self) -> str:
        return _(
            "The model was given up after it failed {n} times in a row ({reason}); ALMA works "
            "without it. `alma-ctl model use PATH` tries it, or another, again.",
            n=GIVE_UP_AFTER,
            reason=self._unusable,
        )

    def _state(self) -> str:
        if not self._path:
            return "none"
        if self._unusable:
            return "unusable"
        if self._backend is not None:
            return "ready"
        if self._load_error:
            return "failed"
        return "restarting" if self._restart_at is not None else "not loaded"

    @property
    def configured(self) -> bool:
        return bool(self._path)

    def use(self, path: str, lora: str | None = None, timeout_s: float = 600.0) -> ModelStatus:
        """Load ``path`` (with the LoRA adapter ``lora`` applied, if given) and answer with it
        from now on; on any failure the old model stays. ``use`` of a model without ``lora``
        drops the adapter.

        Checked before it is loaded (a missing path, a file that is not a GGUF, an adapter
        that does not fit the model, each told at once in one sentence); loading waits for
        the job in flight."""
        path = path.strip()
        lora = (lora or "").strip() or None
        if not path:
            raise BadArgumentError(
                _('Give the path of a .gguf model file, "embedded", or a server\'s URL.')
            )
        server = path.startswith(("http://", "https://"))
        if lora is not None and server:
            raise BadArgumentError(
                _(
                    "A LoRA adapter is applied to a GGUF model file, not to a server; start "
                    "the server with it (llama-server --lora FILE), or give a .gguf model; the "
                    "model in use stays."
                )
            )
        if not server and path != "embedded":
            check_gguf(resolve_model_path(path))
        if lora is not None:
            lora = str(resolve_model_path(lora))
            check_adapter(resolve_model_path(path), Path(lora))

        lang = current_language()

        def load(_backend: Backend | None) -> ModelStatus:
            with language(lang):  # its refusal is for the person who asked
                try:
                    if lora is not None:
                        log.info("loading %s with the LoRA adapter %s", path, lora)
                    new = self._loader(path, lora)  # raises one sentence; the old one stays
                except ModelFailed as exc:
                    raise BadArgumentError(
                        _(
                            "{path} cannot be used: {reason}; the model in use stays.",
                            path=path,
                            reason=exc.failure.reason,
                        )
                    ) from None
            with self._lock:
                old, self._backend = self._backend, new
                self._path = path
                self._lora = lora
                self._load_error = None
                self._tokens_per_second = None
                self._failures = 0
                self._last_failure = None
                self._restart_at = None
                self._unusable = None
            if old is not None:
                try:
                    old.close()
                except Exception:
                    log.exception("closing the model it replaces failed")
            log.info("model in use: %s (%s)", new.path, new.kind)
            if self._on_use is not None:
                self._on_use(path, lora)
            if self._on_unusable is not None:  # whatever was given up before, this one answers
                self._on_unusable(path, None)
            return self.status()

        job = _Job(load, needs_model=False)
        # _run returns whatever the job returned (Any); this job's is the status dict.
        return self._run(job, chat=True, timeout_s=timeout_s)  # type: ignore[no-any-return]

    def submit_chat(self, fn: Callable[[Backend | None], None]) -> None:
        """Run ``fn(backend)`` in the worker, before any background job; ``backend`` is None
        when no model could be loaded. Raises UNAVAILABLE when a chat job is already queued
        or running (one generation at a time)."""
        with self._lock:
            if self._closing:
                raise UnavailableError(_(_STOPPING))
            if self._chat_busy:
                raise UnavailableError(
                    _(
                        "ALMA is already answering another message; wait for it to finish, or "
                        "stop it (Ctrl-C in the chat), then send yours again."
                    )
                )
            self._chat_busy = True
            self._chat.append(_Job(fn))
            self._wake.notify()

    def chat_answered(self) -> None:
        """The running chat job has given its final answer, or ended: the chat is busy only
        with what is queued. Called by the reply's final line, before the worker tidies up (a
        failed process dropped, say), so the next message waits its turn behind that rather
        than be told ALMA is busy by a reply the person has already read."""
        with self._lock:
            self._chat_busy = bool(self._chat)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: JSONObject | None = None,
        timeout_s: float,
    ) -> str | None:
        """The model's whole answer for background work, or None when there is no model, it
        is busy past ``timeout_s``, or it fails. Callers validate the text and fall back to
        their deterministic result."""
        if not self._path:
            return None
        deadline = time.monotonic() + timeout_s

        def job(backend: Backend | None) -> str | None:
            if backend is None:
                return None
            result = generate(
                backend,
                messages,
                max_tokens=max_tokens,
                json_schema=json_schema,
                deadline=deadline,
                cancelled=lambda: False,
            )
            return result.text if result.stopped == "done" else None

        try:
            value = self._run(_Job(job), chat=False, timeout_s=timeout_s)
        except Exception:
            log.exception("background completion failed")
            return None
        return value if isinstance(value, str) else None

    def count_loaded(self, text: str, timeout_s: float = 60.0) -> int | None:
        """The loaded model's count of ``text``'s tokens; None when no model is loaded (none
        is loaded for it), it is busy past ``timeout_s``, or it fails."""
        with self._lock:
            if self._backend is None:
                return None

        def job(_none: Backend | None) -> int | None:
            backend = self._backend  # the worker's own thread: the one that swaps it
            return backend.count_tokens(text) if backend is not None else None

        try:
            value = self._run(_Job(job, needs_model=False), chat=False, timeout_s=timeout_s)
        except Exception:
            log.exception("counting tokens failed")
            return None
        return value if isinstance(value, int) else None

    def record_speed(self, generation: Generation) -> None:
        if generation.tokens >= 2 and generation.ms > 0:
            with self._lock:
                self._tokens_per_second = round(generation.tokens * 1000 / generation.ms, 1)

    def close(self, timeout: float = 30.0) -> None:
        with self._lock:
            self._closing = True
            self._wake.notify()
        self._thread.join(timeout)
        with self._lock:
            backend, self._backend = self._backend, None
        if backend is not None:
            try:
                backend.close()
            except Exception:
                log.exception("closing the model process failed")

    # ------------------------------------------------------------------ the worker

    def _run(self, job: _Job, *, chat: bool, timeout_s: float) -> Any:
        with self._lock:
            if self._closing:
                raise UnavailableError(_(_STOPPING))
            (self._chat if chat else self._background).append(job)
            self._wake.notify()
        if not job.done.wait(timeout_s):
            job.abandoned = True  # the worker skips it if it has not started yet
            if chat:
                raise UnavailableError(
                    _(
                        "The model did not finish within {seconds} seconds; try again.",
                        seconds=f"{timeout_s:g}",
                    )
                )
            return None
        if job.error is not None:
            raise job.error
        return job.result

    def _work(self) -> None:
        """The worker's loop. Nothing a job, a load or a teardown raises ends it: a step that
        fails is logged and the loop goes on, so a dead model never leaves the chat waiting."""
        while True:
            with self._lock:
                while not (self._chat or self._background or self._closing):
                    if self._restart_at is not None and not self._unusable:
                        left = self._restart_at - time.monotonic()
                        if left <= 0:
                            break
                        self._wake.wait(left)
                    else:
                        self._wake.wait()
                if self._closing:
                    for waiting in (*self._chat, *self._background):
                        waiting.error = UnavailableError(_(_STOPPING))
                        waiting.done.set()
                    return
                is_chat = bool(self._chat)
                queue = self._chat if is_chat else self._background
                job = queue.popleft() if queue else None
            if job is None:  # a failed model's pause is over: start it again, unasked
                try:
                    self._ensure_loaded()
                except Exception:
                    log.exception("model restart failed")
                continue
            self._do(job, chat=is_chat)

    def _do(self, job: _Job, *, chat: bool) -> None:
        """Run one job; whatever happens, its caller is told and a chat job frees the chat
        (:meth:`chat_answered`, which its reply's final line has called already when it got
        that far)."""
        try:
            if not job.abandoned:
                job.result = job.fn(self._ensure_loaded() if job.needs_model else None)
        except AlmaError as exc:
            job.error = exc
        except Exception as exc:  # a job may fail; the worker may not
            log.exception("model job failed")
            job.error = exc
        finally:
            try:
                self._after_job()
            except Exception:
                log.exception("dropping the failed model process failed")
            finally:
                if chat:
                    self.chat_answered()
                job.done.set()

    def _after_job(self) -> None:
        """Drop a backend whose process failed during the job; a job that ran on a healthy
        one clears the count of failures in a row."""
        with self._lock:
            backend = self._backend
            if backend is None:
                return
            failure = backend.failure
            if failure is None:
                self._failures = 0
                return
        self._drop(backend, failure)

    def _drop(self, backend: Backend, failure: Failure) -> None:
        """Forget a failed backend, end its process, and schedule its restart (or give it up).
        Ending a dead process can fail in many ways (its pipes are gone); none of them is the
        runtime's concern."""
        with self._lock:
            if self._backend is backend:
                self._backend = None
        try:
            backend.close()
        except Exception:
            log.exception("closing the failed model process failed")
        self._failed(failure)

    def _failed(self, failure: Failure) -> None:
        with self._lock:
            self._last_failure = failure.reason
            if failure.counts:
                self._failures += 1
            if self._failures >= GIVE_UP_AFTER:
                self._unusable = failure.reason
                self._restart_at = None
                path = self._path
            else:
                pause = RESTART_PAUSE_S * 2 ** max(0, self._failures - 1)
                self._restart_at = time.monotonic() + pause
                path = ""
        if path:
            log.error("model given up after %d failures in a row: %s", GIVE_UP_AFTER, path)
            if self._on_unusable is not None:
                try:
                    self._on_unusable(path, failure.reason)
                except Exception:  # remembered for this run at least: self._unusable is set
                    log.exception("could not persist that the model was given up")
        else:
            log.warning("model process failed (%s); restarting it", failure.reason)

    def _ensure_loaded(self) -> Backend | None:
        """The backend, loading the configured model on first use (after a failure, once its
        pause is over); None if there is none or it was given up. A process that died since
        the last job (between two answers) is replaced here, before the job is given it."""
        with self._lock:
            backend = self._backend
        if backend is not None and (failure := backend.failure) is not None:
            self._drop(backend, failure)
        with self._lock:
            if self._backend is not None or not self._path or self._load_error or self._unusable:
                return self._backend
            path, lora = self._path, self._lora
            wait = self._restart_at - time.monotonic() if self._restart_at is not None else 0.0
        if wait > 0:
            time.sleep(wait)
        started = time.monotonic()
        try:
            backend = self._loader(path, lora)
        except ModelFailed as exc:
            self._failed(exc.failure)
            return None
        except AlmaError as exc:
            log.error("model not loaded: %s", exc.message)
            with self._lock:
                self._load_error = exc.message
                self._restart_at = None
            return None
        except Exception as exc:  # a loader's defect: the job still gets its sentence
            log.exception("model not loaded")
            self._failed(Failure(_(COULD_NOT_START, reason=type(exc).__name__)))
            return None
        log.info("model loaded in %.2f s: %s (%s)", time.monotonic() - started, path, backend.kind)
        with self._lock:
            self._backend = backend
            self._restart_at = None
        return backend

    def loading_needed(self) -> bool:
        with self._lock:
            return (
                self._backend is None
                and bool(self._path)
                and not self._load_error
                and not self._unusable
            )

    def unavailable_sentence(self) -> str:
        with self._lock:
            if self._unusable:
                return self._given_up()
            if self._last_failure and self._backend is None:
                return restarting_sentence(self._last_failure)
            if self._load_error:
                return _(
                    "The model could not be loaded: {reason} Choose another with "
                    "`alma-ctl model use PATH`.",
                    reason=self._load_error,
                )
        return _(NO_MODEL)

    def _display_path(self) -> str | None:
        if self._path == "embedded":
            try:
                return str(resolve_model_path("embedded"))
            except AlmaError:
                return "embedded"
        return self._path or None

    @staticmethod
    def _kind_of(path: str) -> str | None:
        if not path:
            return None
        return "openai" if path.startswith(("http://", "https://")) else "llama-cpp"


def generate(
    backend: Backend,
    messages: Sequence[Message],
    *,
    max_tokens: int,
    deadline: float,
    cancelled: Callable[[], bool],
    json_schema: JSONObject | None = None,
    on_text: Callable[[str], None] | None = None,
    sampling: Sampling = CHAT_SAMPLING,
) -> Generation:
    """Run one generation to its end, a cancel, ``max_tokens`` or the ``deadline`` (monotonic),
    whichever comes first; each is checked between tokens."""
    started = time.monotonic()
    first: int | None = None
    pieces: list[str] = []
    tokens = 0
    stopped: AnswerEnd = "done"
    chunks = backend.stream(
        messages, max_tokens=max_tokens, json_schema=json_schema, sampling=sampling
    )
    try:
        for text, finish in chunks:
            if text:
                tokens += 1
                pieces.append(text)
                if first is None:
                    first = int((time.monotonic() - started) * 1000)
                if on_text is not None:
                    on_text(text)
            if finish == "length":
                stopped = "max_tokens"
            if finish is not None:
                break
            if cancelled():
                stopped = "cancelled"
                break
            if time.monotonic() >= deadline:
                stopped = "timeout"
                break
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # ends the backend's generation (and an HTTP stream) now
    ms = int((time.monotonic() - started) * 1000)
    return Generation("".join(pieces), stopped, tokens, ms, first, model_name(backend))


def model_name(backend: Backend) -> str:
    """The name written in the chat log: the file's stem, or the server's URL."""
    if backend.kind == "openai":
        return backend.path
    return Path(backend.path).stem


__all__ = [
    "CHAT_SAMPLING",
    "NO_MODEL",
    "Backend",
    "Complete",
    "Generation",
    "ModelRuntime",
    "Sampling",
    "generate",
]
